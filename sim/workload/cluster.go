package workload

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
)

// NodeSpec describes one node of a simulated cluster.
type NodeSpec struct {
	// ID identifies the node; unique within the cluster.
	ID string
	// Rack names the rack the node sits in.
	Rack string
	// Capacity is what the node offers, in Schema().
	Capacity resource.Tuple
	// Speed is the node's task-processing rate relative to a normal node (1): a stage
	// that lasts d on a normal node lasts d/Speed here. The PRRL thesis' slow and fast
	// nodes have 0.8 and 1.2.
	Speed float64
	// Slots caps the tasks the node runs at once, as Hadoop 1 slots do (the thesis'
	// model); 0 means no slot limit (only Capacity counts, as in YARN).
	Slots int
	// GPU is the node's GPU devices (finegrain.Node.GPU); zero for none.
	GPU gpu.Spec
}

// Cluster describes the machines a workload runs on: nodes in racks, and the bandwidth
// one transfer of input data gets between two nodes (docs/methods.md §10: transfer time =
// block size / bandwidth). A Cluster is plain data; Validate it after building one by
// hand.
type Cluster struct {
	// Name describes the cluster, e.g. "fgm-23".
	Name string
	// Nodes lists the nodes; replica placements and localities refer to them by index.
	Nodes []NodeSpec
	// IntraRackBandwidth is the bytes/s a transfer between two nodes of the same rack
	// gets.
	IntraRackBandwidth int64
	// CrossRackBandwidth is the bytes/s a transfer between two racks gets.
	CrossRackBandwidth int64
}

// Validate checks the cluster: at least one node; node IDs non-empty and unique; racks
// non-empty; capacities valid in Schema(); GPU specs valid; speeds positive and finite; slots not
// negative; both bandwidths positive. A nil cluster fails too.
func (c *Cluster) Validate() error {
	if c == nil {
		return fieldErr("cluster", "nil", ErrInvalidValue)
	}
	if len(c.Nodes) == 0 {
		return fieldErr("Nodes", 0, ErrEmpty)
	}
	if c.IntraRackBandwidth <= 0 {
		return fieldErr("IntraRackBandwidth", c.IntraRackBandwidth, ErrInvalidValue)
	}
	if c.CrossRackBandwidth <= 0 {
		return fieldErr("CrossRackBandwidth", c.CrossRackBandwidth, ErrInvalidValue)
	}
	seen := make(map[string]int, len(c.Nodes))
	for i := range c.Nodes {
		n := &c.Nodes[i]
		f := func(name string) string { return fmt.Sprintf("Nodes[%d](%s).%s", i, n.ID, name) }
		switch {
		case n.ID == "":
			return fieldErr(f("ID"), n.ID, ErrEmpty)
		case n.Rack == "":
			return fieldErr(f("Rack"), n.Rack, ErrEmpty)
		case !field.Finite(n.Speed) || n.Speed <= 0:
			return fieldErr(f("Speed"), n.Speed, ErrInvalidValue)
		case n.Slots < 0:
			return fieldErr(f("Slots"), n.Slots, ErrInvalidValue)
		}
		if err := schema.Validate(n.Capacity); err != nil {
			return fieldErr(f("Capacity"), schema.Format(n.Capacity), err)
		}
		if err := n.GPU.Validate(); err != nil {
			return fieldErr(f("GPU"), n.GPU, fmt.Errorf("%w: %w", ErrInvalidValue, err))
		}
		if k, dup := seen[n.ID]; dup {
			return fieldErr(f("ID"), fmt.Sprintf("%s (also Nodes[%d])", n.ID, k), ErrDuplicateID)
		}
		seen[n.ID] = i
	}
	return nil
}

// Racks returns the distinct racks in order of first appearance.
func (c *Cluster) Racks() []string {
	var rs []string
	seen := map[string]bool{}
	for i := range c.Nodes {
		if r := c.Nodes[i].Rack; !seen[r] {
			seen[r] = true
			rs = append(rs, r)
		}
	}
	return rs
}

// Capacity returns the sum of the nodes' capacities.
func (c *Cluster) Capacity() resource.Tuple {
	var t resource.Tuple
	for i := range c.Nodes {
		t = t.Add(c.Nodes[i].Capacity)
	}
	return t
}

// GPUCapacity is the cluster's GPU devices, in thousandths of a device.
func (c *Cluster) GPUCapacity() int64 {
	var n int64
	for i := range c.Nodes {
		n += int64(c.Nodes[i].GPU.Count) * gpu.Milli
	}
	return n
}

// Holds reports whether some node of the cluster, empty, holds task t: its capacity
// covers t's request, and it has the devices for t's GPU demand (enough of them, of a
// model the demand allows).
func (c *Cluster) Holds(t *Task) bool {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.Capacity.Covers(t.Request) && n.GPU.Count >= t.GPU.Count && (t.GPU.IsZero() || t.GPU.Allows(n.GPU.Model)) {
			return true
		}
	}
	return false
}

// Locality returns the locality of running on node (an index into Nodes) a task whose
// input has replicas on the given nodes, and false when there are none (the task reads
// no input: it runs as well anywhere). Indices out of range count as nodes of no rack.
func (c *Cluster) Locality(node int, replicas []int) (fairness.Level, bool) {
	if len(replicas) == 0 {
		return fairness.NodeLocal, false
	}
	rack := c.rack(node)
	best := fairness.OffSwitch
	for _, r := range replicas {
		if r == node {
			return fairness.NodeLocal, true
		}
		if rack != "" && c.rack(r) == rack {
			best = fairness.RackLocal
		}
	}
	return best, true
}

func (c *Cluster) rack(i int) string {
	if i < 0 || i >= len(c.Nodes) {
		return ""
	}
	return c.Nodes[i].Rack
}

// TransferTime returns how long moving bytes of input takes at locality l
// (docs/methods.md §10): 0 node-local, bytes / IntraRackBandwidth
// rack-local, bytes / CrossRackBandwidth off-switch. A non-positive bandwidth or byte
// count gives 0.
func (c *Cluster) TransferTime(bytes int64, l fairness.Level) time.Duration {
	var bw int64
	switch l {
	case fairness.RackLocal:
		bw = c.IntraRackBandwidth
	case fairness.OffSwitch:
		bw = c.CrossRackBandwidth
	}
	if bw <= 0 || bytes <= 0 {
		return 0
	}
	d := float64(bytes) / float64(bw) * float64(time.Second)
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(d))
}

// ClusterOption configures FGMCluster and ThesisCluster. An invalid value, a nil
// ClusterOption, or more than a million nodes in all (racks × nodes per rack) makes the
// constructor return an error wrapping ErrInvalidOption.
type ClusterOption func(*clusterConfig) error

// maxClusterNodes bounds the nodes FGMCluster and ThesisCluster build.
const maxClusterNodes = 1_000_000

type clusterConfig struct {
	racks, perRack, slots int
	intra, cross          int64
	capacity              resource.Tuple
}

// WithRacks sets the number of racks (FGMCluster: 1, ThesisCluster: 3). Must be
// positive.
func WithRacks(n int) ClusterOption {
	return func(c *clusterConfig) error {
		if n <= 0 {
			return optErr("racks", n)
		}
		c.racks = n
		return nil
	}
}

// WithNodesPerRack sets the nodes in each rack (FGMCluster: 23, ThesisCluster: 30, a
// third slow, a third fast, the rest normal). Must be positive.
func WithNodesPerRack(n int) ClusterOption {
	return func(c *clusterConfig) error {
		if n <= 0 {
			return optErr("nodes per rack", n)
		}
		c.perRack = n
		return nil
	}
}

// WithSlots sets every node's slot count (FGMCluster: 0, no slot limit;
// ThesisCluster: 4). Must not be negative.
func WithSlots(n int) ClusterOption {
	return func(c *clusterConfig) error {
		if n < 0 {
			return optErr("slots", n)
		}
		c.slots = n
		return nil
	}
}

// WithBandwidth sets the intra- and cross-rack bandwidth in bytes/s. Both must be
// positive.
func WithBandwidth(intra, cross int64) ClusterOption {
	return func(c *clusterConfig) error {
		if intra <= 0 {
			return optErr("intra-rack bandwidth", intra)
		}
		if cross <= 0 {
			return optErr("cross-rack bandwidth", cross)
		}
		c.intra, c.cross = intra, cross
		return nil
	}
}

// WithNodeCapacity sets every node's capacity, a valid tuple of Schema().
func WithNodeCapacity(t resource.Tuple) ClusterOption {
	return func(c *clusterConfig) error {
		if err := schema.Validate(t); err != nil {
			return fieldErr("node capacity", schema.Format(t), fmt.Errorf("%w: %w", ErrInvalidOption, err))
		}
		c.capacity = t
		return nil
	}
}

func (c *clusterConfig) apply(opts []ClusterOption) error {
	for i, o := range opts {
		if o == nil {
			return optErr(fmt.Sprintf("cluster options[%d]", i), "nil")
		}
		if err := o(c); err != nil {
			return err
		}
	}
	// racks > max/perRack is racks × perRack > max (both positive), without the
	// product, which could overflow.
	if c.racks > maxClusterNodes/c.perRack {
		return optErr("nodes", fmt.Sprintf("%d racks × %d nodes, more than %d in all", c.racks, c.perRack, maxClusterNodes))
	}
	return nil
}

// FGMCapacity is a node of the FGM evaluation cluster (FGM Table 1): 2 × Xeon
// E5-2670 (8 cores each) = 16 cores, 8 × 4 GB = 32 GiB, 2 SAS 10k disks ≈ 2 × 150 MiB/s,
// 2 × 1 Gb/s Ethernet = 250 MB/s.
func FGMCapacity() resource.Tuple {
	return schema.MustTuple(16000, 32*GiB, 300*MiB, 250_000_000)
}

// FGMCluster returns the FGM evaluation cluster (docs/methods.md §7): 23 compute nodes of
// FGMCapacity (the 24th server ran YARN's manager) in one rack, all of speed 1, no
// slot limit; one transfer gets 1 Gb/s (125 MB/s). Nodes are "node01".."node23" in
// "rack1".
func FGMCluster(opts ...ClusterOption) (Cluster, error) {
	cfg := clusterConfig{racks: 1, perRack: 23, intra: 125_000_000, cross: 125_000_000, capacity: FGMCapacity()}
	if err := cfg.apply(opts); err != nil {
		return Cluster{}, err
	}
	c := Cluster{Name: fmt.Sprintf("fgm-%d", cfg.racks*cfg.perRack), IntraRackBandwidth: cfg.intra, CrossRackBandwidth: cfg.cross}
	w := max(2, len(fmt.Sprint(cfg.racks*cfg.perRack)))
	for r := 0; r < cfg.racks; r++ {
		for k := 0; k < cfg.perRack; k++ {
			c.Nodes = append(c.Nodes, NodeSpec{
				ID: fmt.Sprintf("node%0*d", w, len(c.Nodes)+1), Rack: fmt.Sprintf("rack%d", r+1),
				Capacity: cfg.capacity, Speed: 1, Slots: cfg.slots,
			})
		}
	}
	return c, nil
}

// ThesisCapacity is a node of the PRRL thesis' simulated cluster: the thesis gives only
// 4 slots; we give it 4 cores (one per slot), 8 GiB, 200 MiB/s of disk and 1 Gb/s of
// network.
func ThesisCapacity() resource.Tuple {
	return schema.MustTuple(4000, 8*GiB, 200*MiB, 125_000_000)
}

// ThesisCluster returns the PRRL thesis' simulated cluster (docs/methods.md §10, thesis
// §4.3.1): 3 racks, each of 10 slow (speed 0.8), 10 normal and 10 fast (1.2) nodes, 4
// slots per node, 20 MB/s within a rack and 5 MB/s across racks (MB read as MiB, so a
// 128 MiB block moves in 6.4 s and 25.6 s, the thesis' figures). Nodes are
// "rack1-node01".."rack3-node30", slow ones first in each rack.
func ThesisCluster(opts ...ClusterOption) (Cluster, error) {
	cfg := clusterConfig{racks: 3, perRack: 30, slots: 4, intra: 20 * MiB, cross: 5 * MiB, capacity: ThesisCapacity()}
	if err := cfg.apply(opts); err != nil {
		return Cluster{}, err
	}
	c := Cluster{Name: fmt.Sprintf("thesis-%dx%d", cfg.racks, cfg.perRack), IntraRackBandwidth: cfg.intra, CrossRackBandwidth: cfg.cross}
	w := max(2, len(fmt.Sprint(cfg.perRack)))
	third := cfg.perRack / 3
	for r := 0; r < cfg.racks; r++ {
		for k := 0; k < cfg.perRack; k++ {
			speed := 1.0
			switch {
			case k < third:
				speed = 0.8
			case k >= cfg.perRack-third:
				speed = 1.2
			}
			c.Nodes = append(c.Nodes, NodeSpec{
				ID: fmt.Sprintf("rack%d-node%0*d", r+1, w, k+1), Rack: fmt.Sprintf("rack%d", r+1),
				Capacity: cfg.capacity, Speed: speed, Slots: cfg.slots,
			})
		}
	}
	return c, nil
}

// DefaultReplication is HDFS's and the thesis' replica count.
const DefaultReplication = 3

// PlaceReplicas places replicas copies of every block on the cluster's nodes, as the
// PRRL thesis' simulator does for load balance (docs/methods.md §10, thesis §4.3.1),
// block by block in order:
//
//  1. the first replica on the least-loaded node;
//  2. the second on the least-loaded other node of the first one's rack;
//  3. the third on the least-loaded node of another rack;
//  4. any further ones on the least-loaded nodes not yet holding the block.
//
// Reading: "load" is the bytes of replicas a node already holds (the thesis does not
// define it); ties go to the lower node index, so the placement is deterministic. When
// the first replica's rack has no other node the second goes to another rack; when
// there is one rack only the third goes to any other node of it.
//
// The result holds, for each block, the indices into c.Nodes of its replicas, first
// replica first. It fails on a nil or invalid cluster, replicas outside [1, number of nodes],
// or a negative block size.
func PlaceReplicas(c *Cluster, blocks []int64, replicas int) ([][]int, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if replicas < 1 || replicas > len(c.Nodes) {
		return nil, fieldErr("replicas", fmt.Sprintf("%d for %d nodes", replicas, len(c.Nodes)), ErrInvalidValue)
	}
	for i, b := range blocks {
		if b < 0 {
			return nil, fieldErr(fmt.Sprintf("blocks[%d]", i), b, ErrInvalidValue)
		}
	}
	rackOf, racks := rackIndexes(c)
	t := newLoadTree(rackOf, racks)
	all := make([]int, len(blocks)*replicas)
	out := make([][]int, len(blocks))
	for b, size := range blocks {
		rs := all[b*replicas : (b+1)*replicas : (b+1)*replicas]
		for k := range rs {
			i := -1
			switch k {
			case 1:
				i = t.leastIn(rackOf[rs[0]])
			case 2:
				i = t.leastOutside(rackOf[rs[0]])
			}
			if i < 0 {
				i = t.least()
			}
			rs[k] = i
			t.set(i, 0, true) // chosen: not again for this block
		}
		for _, i := range rs {
			t.set(i, size, false)
		}
		out[b] = rs
	}
	return out, nil
}

// rackIndexes numbers the cluster's racks in the order their first nodes come, and
// returns each node's rack number and the number of racks.
func rackIndexes(c *Cluster) (rackOf []int, racks int) {
	rackOf = make([]int, len(c.Nodes))
	index := map[string]int{}
	for i := range c.Nodes {
		k, ok := index[c.Nodes[i].Rack]
		if !ok {
			k = len(index)
			index[c.Nodes[i].Rack] = k
		}
		rackOf[i] = k
	}
	return rackOf, len(index)
}

// loadTree answers PlaceReplicas' questions — the least-loaded node, of a rack or
// outside it, among those not chosen for the block at hand, ties to the lower index —
// in O(log n): a segment tree over the nodes ordered by rack, then index, so that
// each rack is a range, holding the least (load, index) below each of its entries.
type loadTree struct {
	size  int       // leaves: a power of two ≥ the number of nodes
	pos   []int     // node index → leaf
	racks [][2]int  // rack → its range of leaves [from, to)
	key   []loadKey // the tree, 1-based; leaves from size
}

// loadKey is a node's load and index; off: chosen for the block (or no node), never
// the least.
type loadKey struct {
	load int64
	idx  int
	off  bool
}

func (a loadKey) less(b loadKey) bool {
	if a.off != b.off {
		return b.off
	}
	if a.load != b.load {
		return a.load < b.load
	}
	return a.idx < b.idx
}

func newLoadTree(rackOf []int, racks int) *loadTree {
	n := len(rackOf)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rackOf[a], rackOf[b]) })
	t := &loadTree{size: 1, pos: make([]int, n), racks: make([][2]int, racks)}
	for t.size < n {
		t.size *= 2
	}
	t.key = make([]loadKey, 2*t.size)
	for i := range t.key {
		t.key[i] = loadKey{off: true}
	}
	for leaf, i := range order {
		t.pos[i] = leaf
		t.key[t.size+leaf] = loadKey{idx: i}
		r := rackOf[i]
		if leaf == 0 || rackOf[order[leaf-1]] != r {
			t.racks[r][0] = leaf
		}
		t.racks[r][1] = leaf + 1
	}
	for q := t.size - 1; q > 0; q-- {
		t.key[q] = lesser(t.key[2*q], t.key[2*q+1])
	}
	return t
}

// lesser is the lesser of two keys.
func lesser(a, b loadKey) loadKey {
	if b.less(a) {
		return b
	}
	return a
}

// set adds size to node i's load, marks it chosen for the block at hand or not, and
// recomputes the entries above it.
func (t *loadTree) set(i int, size int64, chosen bool) {
	q := t.size + t.pos[i]
	t.key[q].load += size
	t.key[q].off = chosen
	for q /= 2; q > 0; q /= 2 {
		t.key[q] = lesser(t.key[2*q], t.key[2*q+1])
	}
}

// rangeMin is the least key over leaves [from, to).
func (t *loadTree) rangeMin(from, to int) loadKey {
	m := loadKey{off: true}
	for lo, hi := from+t.size, to+t.size; lo < hi; lo, hi = lo/2, hi/2 {
		if lo&1 == 1 {
			m = lesser(m, t.key[lo])
			lo++
		}
		if hi&1 == 1 {
			hi--
			m = lesser(m, t.key[hi])
		}
	}
	return m
}

func found(k loadKey) int {
	if k.off {
		return -1
	}
	return k.idx
}

// least is the least-loaded node not chosen, or −1.
func (t *loadTree) least() int { return found(t.key[1]) }

// leastIn is the least-loaded node of rack r not chosen, or −1.
func (t *loadTree) leastIn(r int) int { return found(t.rangeMin(t.racks[r][0], t.racks[r][1])) }

// leastOutside is the least-loaded node of another rack than r not chosen, or −1.
func (t *loadTree) leastOutside(r int) int {
	return found(lesser(t.rangeMin(0, t.racks[r][0]), t.rangeMin(t.racks[r][1], t.size)))
}
