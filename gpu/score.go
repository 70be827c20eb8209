package gpu

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/finegrain/finegrain/resource"
)

// Node is what a scorer sees of a node: its capacity and free amount over the
// caller's resource schema (the GPU excluded), and its devices.
type Node struct {
	Capacity, Free resource.Tuple
	Devices        *Devices
}

// Shape is what a task asks of a node: its request over the caller's schema (the GPU
// excluded) and its GPU demand.
type Shape struct {
	Request resource.Tuple
	GPU     Demand
}

// DeviceScorer ranks the nodes a task fits for push placement, and chooses the devices that
// go with the score. Score rates placing task t on node n, higher better, in [0, 1],
// and returns the allocation the rating assumes; ok is false when t's GPU demand does
// not fit n's devices. The caller has checked t's request against n.Free.
// Implementations must not change n.Devices (they may be called concurrently).
type DeviceScorer interface {
	Score(n Node, t Shape) (score float64, a Allocation, ok bool)
}

// DeviceBestFit prefers the node left with the least free resources: 1 minus the mean,
// over the dimensions of Dims that the node has (zero Dims: all) and the GPU, of the free
// share after placement, (free − request)/capacity (the GPU's is 0 on a node without
// devices, which a task without GPU demand thus prefers). The devices are chosen by
// Devices.BestFit. (The ATC'23 study's simulator normalises by the largest node of
// the cluster and weighs CPU and GPU only; here each node's own capacity, and every
// dimension of Dims.)
type DeviceBestFit struct{ Dims resource.Mask }

// Score implements Scorer.
func (s DeviceBestFit) Score(n Node, t Shape) (float64, Allocation, bool) {
	a, ok := n.Devices.BestFit(t.GPU)
	if !ok {
		return 0, Allocation{}, false
	}
	sum, k := 0.0, 0
	for d := range n.Capacity {
		if use(s.Dims, n.Capacity, d) {
			sum += clamp01(float64(n.Free[d]-t.Request[d]) / float64(n.Capacity[d]))
			k++
		}
	}
	// The GPU term counts on every node (0 on one without devices), so that the
	// scores of nodes with and without GPUs compare.
	if c := n.Devices.Capacity(); c > 0 {
		sum += clamp01(float64(n.Devices.FreeTotal()-t.GPU.Total()) / float64(c))
	}
	return 1 - sum/float64(k+1), a, true
}

// DotProduct prefers the node whose free resources are least aligned with the task's
// demand: 1 minus the mean, over the dimensions of Dims the node has (zero: all) and
// the GPU (0 on a node without devices), of (request/capacity) × (free/capacity). Tetris (Grandl et al., SIGCOMM
// 2014) defines the alignment score and places on the largest; the ATC'23 GPU-sharing
// study runs it as a packing heuristic, on the smallest, and so does this scorer. For
// a share of one device the GPU term is read on each device that holds it, and the
// device with the best score is chosen; whole devices are chosen by Devices.BestFit.
type DotProduct struct{ Dims resource.Mask }

// Score implements Scorer.
func (s DotProduct) Score(n Node, t Shape) (float64, Allocation, bool) {
	if !n.Devices.Fits(t.GPU) {
		return 0, Allocation{}, false
	}
	base, k := 0.0, 0
	for d := range n.Capacity {
		if use(s.Dims, n.Capacity, d) {
			c := float64(n.Capacity[d])
			base += clamp01(float64(t.Request[d])/c) * clamp01(float64(n.Free[d])/c)
			k++
		}
	}
	// The GPU term counts on every node (0 on one without devices), so that the
	// scores of nodes with and without GPUs compare.
	score := func(gpu float64) float64 { return 1 - (base+gpu)/float64(k+1) }
	if !t.GPU.Shared() {
		a, _ := n.Devices.BestFit(t.GPU)
		gpu := 0.0
		if c := n.Devices.Capacity(); c > 0 {
			gpu = float64(t.GPU.Total()) / float64(c) * float64(n.Devices.FreeTotal()) / float64(c)
		}
		return score(gpu), a, true
	}
	best, dev := -1.0, -1
	for i, f := range n.Devices.free {
		if f < t.GPU.Milli {
			continue
		}
		if x := score(float64(t.GPU.Milli) / Milli * float64(f) / Milli); x > best {
			best, dev = x, i
		}
	}
	return best, Allocation{Devices: []int{dev}, Milli: t.GPU.Milli}, true
}

// Packing packs GPU tasks onto devices already in use: a task that fits on shared
// devices alone scores in [0.5, 1], less the more those devices have free; one that
// must also take fully free devices of a node already in use scores in [1/3, 0.5],
// less the more it takes; one on a node whose devices are all free scores in
// [0, 1/3], less the more devices the node has. Devices are taken least free first. A
// task without GPU demand scores 0 everywhere. (The ATC'23 study's GPU packing
// baseline, on a 0–1 scale; its simulator lets an empty node of more than 16 devices
// score above the tier, which here stays in it.)
type Packing struct{}

// Score implements Scorer.
func (Packing) Score(n Node, t Shape) (float64, Allocation, bool) {
	d := n.Devices
	if !d.Fits(t.GPU) {
		return 0, Allocation{}, false
	}
	if t.GPU.Count == 0 {
		return 0, Allocation{}, true
	}
	order := make([]int, 0, t.GPU.Count)
	var buf [MaxDevices]int
	idx := buf[:d.Len()]
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(d.free[a], d.free[b]) })
	for _, i := range idx {
		if len(order) == t.GPU.Count {
			break
		}
		if d.free[i] >= t.GPU.Milli {
			order = append(order, i)
		}
	}
	a := Allocation{Devices: order, Milli: t.GPU.Milli}
	full := d.FullyFree()
	if full == d.Len() {
		return math.Max(float64(100/3-full), 0) / 100, a, true
	}
	fresh := 0
	for _, i := range order {
		if d.free[i] == Milli {
			fresh++
		}
	}
	if fresh > 0 {
		return math.Max(float64(50-fresh), 100.0/3) / 100, a, true
	}
	var ratio int64
	for _, i := range order {
		ratio += d.free[i] * 100 / Milli
	}
	return math.Max(float64(100-ratio/10), 50) / 100, a, true
}

// checkRequest refuses a request with a negative amount in any slot, naming the slot.
// (There is no schema at hand to name the dimension, or to refuse amounts past it.)
func checkRequest(r resource.Tuple) error {
	for k, v := range r {
		if v < 0 {
			return fmt.Errorf("request %v: amount %d in slot %d: %w: %w", r, v, k, resource.ErrNegative, ErrInvalid)
		}
	}
	return nil
}

// WeightedShape is a task shape and how often it arrives (any positive scale: FGD
// normalises the weights).
type WeightedShape struct {
	Shape
	Weight float64
}

// TypicalShapes counts the distinct shapes of tasks, reading their requests on the
// dimensions of dims only (zero: all), and returns the most frequent ones that
// together make up at least coverage (in (0, 1]) of the tasks, with their counts as
// weights, most frequent first (ties in order of first appearance). The ATC'23
// study's simulator keeps the shapes that make up 60% of the tasks by default. It
// fails (ErrInvalid) on a coverage outside (0, 1], no tasks, an invalid GPU demand, or
// a request with a negative amount in any slot (also wrapping resource.ErrNegative);
// the error names the task.
func TypicalShapes(tasks []Shape, dims resource.Mask, coverage float64) ([]WeightedShape, error) {
	if !(coverage > 0 && coverage <= 1) {
		return nil, fmt.Errorf("gpu: typical shapes: coverage %v: want (0, 1]: %w", coverage, ErrInvalid)
	}
	type entry struct {
		WeightedShape
		first int
	}
	type key struct {
		request resource.Tuple
		count   int
		milli   int64
		models  string // quoted, so that no two lists read alike
	}
	index := map[key]int{}
	var out []entry
	for i, t := range tasks {
		if err := t.GPU.Validate(); err != nil {
			return nil, fmt.Errorf("gpu: typical shapes: task %d: %w", i, err)
		}
		if err := checkRequest(t.Request); err != nil {
			return nil, fmt.Errorf("gpu: typical shapes: task %d: %w", i, err)
		}
		if dims != 0 {
			t.Request = t.Request.Only(dims)
		}
		k := key{request: t.Request, count: t.GPU.Count, milli: t.GPU.Milli}
		if len(t.GPU.Models) > 0 {
			k.models = fmt.Sprintf("%q", t.GPU.Models)
		}
		if i, ok := index[k]; ok {
			out[i].Weight++
			continue
		}
		index[k] = len(out)
		out = append(out, entry{WeightedShape{t, 1}, i})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("gpu: typical shapes: no tasks: %w", ErrInvalid)
	}
	slices.SortStableFunc(out, func(a, b entry) int { return cmp.Compare(b.Weight, a.Weight) })
	need, got := coverage*float64(len(tasks)), 0.0
	var shapes []WeightedShape
	for _, e := range out {
		shapes = append(shapes, e.WeightedShape)
		if got += e.Weight; got >= need-1e-9 {
			break
		}
	}
	return shapes, nil
}

// FGD is Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC
// 2023): it places a task where it grows the node's expected GPU fragmentation
// (Frag) least, and on the device of the node that does so (for a share of one
// device). The score is the logistic function of the fragmentation removed, in
// thousandths of a GPU divided by 1000, as the study's simulator scores it: 0.5 for no
// change, below for growth.
type FGD struct {
	shapes []WeightedShape
	dims   resource.Mask
}

// NewFGD returns the FGD scorer for a workload of the given shapes, whose requests it
// reads on the dimensions of dims (zero: all). It fails on no shapes, a weight that is
// not a positive finite number, an invalid demand, or a request with a negative amount
// in any slot (also wrapping resource.ErrNegative).
func NewFGD(shapes []WeightedShape, dims resource.Mask) (*FGD, error) {
	if len(shapes) == 0 {
		return nil, fmt.Errorf("gpu: FGD: no shapes: %w", ErrInvalid)
	}
	top := 0.0
	for i, s := range shapes {
		if !(s.Weight > 0) || math.IsInf(s.Weight, 1) {
			return nil, fmt.Errorf("gpu: FGD: shape %d weight %v: want a positive finite number: %w", i, s.Weight, ErrInvalid)
		}
		if err := s.GPU.Validate(); err != nil {
			return nil, fmt.Errorf("gpu: FGD: shape %d: %w", i, err)
		}
		if err := checkRequest(s.Request); err != nil {
			return nil, fmt.Errorf("gpu: FGD: shape %d: %w", i, err)
		}
		top = max(top, s.Weight)
	}
	// Scaled by the largest first, so that no sum overflows.
	total := 0.0
	for _, s := range shapes {
		total += s.Weight / top
	}
	f := &FGD{shapes: make([]WeightedShape, len(shapes)), dims: dims}
	for i, s := range shapes {
		s.Weight = s.Weight / top / total
		s.GPU.Models = slices.Clone(s.GPU.Models)
		f.shapes[i] = s
	}
	return f, nil
}

// Shapes returns the scorer's shapes, weights normalised to sum to 1.
func (f *FGD) Shapes() []WeightedShape { return slices.Clone(f.shapes) }

// Frag is node n's expected GPU fragmentation, in thousandths of a GPU: the sum over
// the shapes, weighted by their frequency, of the free GPU share the shape cannot use
// there. For a shape the node can host — its request fits n.Free on the scorer's
// dimensions, its models allow the node's, and enough devices have its share free —
// that is the free share of the devices with less than its share free; for any other
// shape, the node's whole free GPU share; a shape without GPU demand can use none of
// it. (The study's simulator checks CPU alone for "can host"; here every dimension of
// the scorer's.)
func (f *FGD) Frag(n Node) float64 {
	d := n.Devices
	total := d.FreeTotal()
	if total == 0 {
		return 0
	}
	sum := 0.0
	for i := range f.shapes {
		s := &f.shapes[i]
		c := f.census(s, d, n.Free)
		sum += s.Weight * float64(c.frag(c.roomBefore, s.GPU.Count, total))
	}
	return sum
}

// mask is the dimensions the scorer reads: dims, or all of them when zero.
func (f *FGD) mask() resource.Mask {
	if f.dims == 0 {
		return ^resource.Mask(0)
	}
	return f.dims
}

// census counts shape s's view of devices d with free resources free (roomBefore);
// Score sets roomAfter.
func (f *FGD) census(s *WeightedShape, d *Devices, free resource.Tuple) census {
	c := census{usable: s.GPU.Count > 0 && s.GPU.Allows(d.model)}
	if c.usable {
		c.roomBefore = free.CoversOn(s.Request, f.mask())
		for _, x := range d.free {
			c.count(x, s.GPU.Milli, 1)
		}
	}
	return c
}

// Score implements Scorer. It counts, once per shape, the devices that hold the
// shape's share and the free share of those that do not; each candidate placement
// then changes the counts of the devices it uses only, so that trying a share on each
// distinct device costs O(shapes), not O(shapes × devices).
func (f *FGD) Score(n Node, t Shape) (float64, Allocation, bool) {
	d := n.Devices
	if !d.Fits(t.GPU) {
		return 0, Allocation{}, false
	}
	var buf [256]census // most workloads have fewer distinct shapes
	cs := buf[:0]
	if len(f.shapes) > len(buf) {
		cs = make([]census, 0, len(f.shapes))
	}
	total := d.FreeTotal()
	if total == 0 {
		return sigmoid(0), Allocation{}, true // no free GPU: nothing to fragment, before or after
	}
	after := n.Free.Sub(t.Request)
	before := 0.0
	for i := range f.shapes {
		s := &f.shapes[i]
		c := f.census(s, d, n.Free)
		c.roomAfter = c.usable && after.CoversOn(s.Request, f.mask())
		before += s.Weight * float64(c.frag(c.roomBefore, s.GPU.Count, total))
		cs = append(cs, c)
	}
	// gain is σ(−Δ/1000) for placing the task with its devices changed from free
	// share from to to (one pair a device; none for a task without GPU demand).
	gain := func(from, to int64, devices int) float64 {
		left := total - int64(devices)*(from-to)
		fragAfter := 0.0
		for i := range f.shapes {
			s, c := &f.shapes[i], cs[i]
			if c.usable && devices > 0 {
				c.count(from, s.GPU.Milli, -devices)
				c.count(to, s.GPU.Milli, devices)
			}
			if left > 0 {
				fragAfter += s.Weight * float64(c.frag(c.roomAfter, s.GPU.Count, left))
			}
		}
		return sigmoid((before - fragAfter) / Milli)
	}
	if !t.GPU.Shared() {
		a, _ := d.BestFit(t.GPU) // whole devices: fully free ones, each taken whole
		return gain(Milli, 0, t.GPU.Count), a, true
	}
	best, dev := -1.0, -1
	for i, x := range d.free {
		if x < t.GPU.Milli || slices.Contains(d.free[:i], x) {
			continue // too small, or a device like an earlier one
		}
		if s := gain(x, x-t.GPU.Milli, 1); s > best {
			best, dev = s, i
		}
	}
	return best, Allocation{Devices: []int{dev}, Milli: t.GPU.Milli}, true
}

// census is what one shape sees of a node's devices (FGD.Score): whether they can
// serve it at all, whether its request fits the free resources before and after the
// placement scored, how many devices hold its share, and the free share of the rest.
type census struct {
	short                         int64
	fits                          int32
	usable, roomBefore, roomAfter bool
}

// count adds n devices of free share x (n < 0 takes them away) for a shape of share
// milli.
func (c *census) count(x, milli int64, n int) {
	if x >= milli {
		c.fits += int32(n)
	} else {
		c.short += int64(n) * x
	}
}

// frag is the free GPU share, of total, the shape (count devices) cannot use, with room
// telling whether its request fits.
func (c *census) frag(room bool, count int, total int64) int64 {
	if !c.usable || !room || int(c.fits) < count {
		return total
	}
	return c.short
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func use(dims resource.Mask, capacity resource.Tuple, k int) bool {
	return capacity[k] > 0 && (dims == 0 || dims.Has(k))
}

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }
