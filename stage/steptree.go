package stage

import (
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
)

// The step tree is a Timeline's step function: a B+-tree whose leaves hold the steps in
// time order (the time each begins and its free amount) and whose inner nodes hold, for
// each child, the time its first step begins and the per-dimension minimum of the free
// amounts below it. Adding an amount to a run of steps is lazy: a child the run covers
// whole takes the amount in its add field (and its entry in the parent's minimum) instead
// of passing it on to every step below, so a reservation costs O(log n) per stage
// boundary, whatever the number of steps it spans. A query adds up the adds on its way
// down. Adding amounts and removing steps push the adds one level down on their way
// (push), so that adds do not pile up above the nodes they change (and the partial sums
// stay as small as the amounts); inserting a step copies an amount within its leaf's
// frame and a split half takes its node's add, so inserting needs no push.
//
// Frames: nd.val[i] is the minimum of entry i (a step's free amount in a leaf, a child's
// subtree minimum in an inner node) before the adds of nd and of nd's ancestors; the
// amount it stands for is nd.val[i] + nd.add + the ancestors' adds. An inner node's
// val[i] includes child i's own add: val[i] = kids[i].add + min over kids[i].val.

// fanout is the most entries a node of the step tree holds and minFill the fewest a node
// other than the root keeps: one that falls below borrows from or merges with a sibling.
// A split leaves halves of fanout/2, well above minFill, so a reservation and its release
// do not split and merge the same node in turn.
const (
	fanout  = 16
	minFill = fanout / 4
)

// node is a node of the step tree; see above. Its entries are the elements of at, val
// and, in an inner node, kids: slices of the same length, at most fanout, that grow as
// the node fills, so that a timeline of a few steps holds small arrays.
type node struct {
	leaf  bool
	width uint8            // how many slots of an amount may be non-zero (width)
	add   resource.Tuple   // pending addition to every amount below
	at    []time.Duration  // when entry i (a step, or a child's first step) begins
	val   []resource.Tuple // entry i's free amount (leaf) or subtree minimum (inner)
	kids  []*node          // children of an inner node
}

// find returns the index of the entry in effect at t: the last i whose at[i] ≤ t, or 0
// when t is before them all.
func (nd *node) find(t time.Duration) int {
	// Count the entries after the first that begin at or before t, without branches
	// (the comparisons of a random time mispredict) and without a chain of dependent
	// loads: times are not negative, so at[k] − t − 1 does not overflow, and its sign
	// says at[k] ≤ t.
	at, c := nd.at, 0
	for k := 1; k < len(at); k++ {
		c += int(uint64(at[k]-t-1) >> 63)
	}
	return c
}

// end returns when entry i ends, given that nd's last entry ends at hi.
func (nd *node) end(i int, hi time.Duration) time.Duration {
	if i+1 < len(nd.at) {
		return nd.at[i+1]
	}
	return hi
}

// summary is what nd's parent holds for it: nd.add plus the minimum of nd's entries.
func (nd *node) summary() resource.Tuple {
	m := nd.val[0]
	lowerRun(&m, nd.val[1:], nd.width)
	if !isZero(&nd.add) {
		sum(&m, &m, &nd.add)
	}
	return m
}

// clone is a deep copy of the subtree below nd, laid out in four allocations — its
// nodes, times, amounts and children each in one array, in the order a query walks
// them down — so that a copy read by queries (a node's view) touches few cache lines.
// Each node's arrays are exactly as long as nd's: an entry added later moves them out
// of the slab, as an entry added to a full node's would.
func (nd *node) clone() *node {
	var nodes, entries, kids int
	nd.size(&nodes, &entries, &kids)
	s := slab{nodes: make([]node, nodes), at: make([]time.Duration, entries), val: make([]resource.Tuple, entries)}
	if kids > 0 {
		s.kids = make([]*node, kids)
	}
	return s.copy(nd)
}

// size counts the nodes, entries and children of the subtree below nd.
func (nd *node) size(nodes, entries, kids *int) {
	*nodes++
	*entries += len(nd.at)
	if !nd.leaf {
		*kids += len(nd.kids)
		for _, k := range nd.kids {
			k.size(nodes, entries, kids)
		}
	}
}

// slab is the arrays a clone is laid out in, the parts not yet used.
type slab struct {
	nodes []node
	at    []time.Duration
	val   []resource.Tuple
	kids  []*node
}

// copy copies the subtree below nd into the slab, nd first.
func (s *slab) copy(nd *node) *node {
	c := &s.nodes[0]
	s.nodes = s.nodes[1:]
	n := len(nd.at)
	c.leaf, c.width, c.add = nd.leaf, nd.width, nd.add
	c.at, s.at = s.at[:n:n], s.at[n:]
	c.val, s.val = s.val[:n:n], s.val[n:]
	copy(c.at, nd.at)
	copy(c.val, nd.val)
	if !nd.leaf {
		c.kids, s.kids = s.kids[:n:n], s.kids[n:]
		for i, k := range nd.kids {
			c.kids[i] = s.copy(k)
		}
	}
	return c
}

// push hands nd's pending add down to its entries (and an inner node's children), so
// that nd's entries stand for their amounts without it. The summary nd's parent holds
// is unchanged.
func (nd *node) push() {
	if isZero(&nd.add) {
		return
	}
	a := nd.add
	nd.add = resource.Tuple{}
	for i := range nd.val {
		sum(&nd.val[i], &nd.val[i], &a)
		if !nd.leaf {
			k := nd.kids[i]
			sum(&k.add, &k.add, &a)
		}
	}
}

// lower sets m to the per-dimension minimum of m and v, written out for the eight
// slots of a Tuple (one tuple: runs of them go through lowerRun).
func lower(m, v *resource.Tuple) {
	m[0], m[1], m[2], m[3] = min(m[0], v[0]), min(m[1], v[1]), min(m[2], v[2]), min(m[3], v[3])
	m[4], m[5], m[6], m[7] = min(m[4], v[4]), min(m[5], v[5]), min(m[6], v[6]), min(m[7], v[7])
}

// width returns how many leading slots of a Tuple may be non-zero in a timeline of
// schema's amounts — 2, 4, 6 or 8 — so that the range queries, which spend most of their
// time taking minima (lowerRun), leave the slots that are zero in every amount: a
// schema's capacity and demands are zero beyond its dimensions, and so are the free
// amounts and the adds the tree makes of them (0 ± 0 is 0, saturating or not).
func width(schema *resource.Schema) uint8 {
	switch n := schema.Len(); {
	case n <= 2:
		return 2
	case n <= 4:
		return 4
	case n <= 6:
		return 6 // resource.Standard
	}
	return resource.MaxDims
}

// lowerRun sets m to the per-dimension minimum of m and vals over the first w slots
// (width; the others are zero in every amount, m's included), keeping the minimum in
// registers while it scans.
func lowerRun(m *resource.Tuple, vals []resource.Tuple, w uint8) {
	switch w {
	case 2:
		m0, m1 := m[0], m[1]
		for i := range vals {
			v := &vals[i]
			m0, m1 = min(m0, v[0]), min(m1, v[1])
		}
		m[0], m[1] = m0, m1
		return
	case 4:
		m0, m1, m2, m3 := m[0], m[1], m[2], m[3]
		for i := range vals {
			v := &vals[i]
			m0, m1, m2, m3 = min(m0, v[0]), min(m1, v[1]), min(m2, v[2]), min(m3, v[3])
		}
		m[0], m[1], m[2], m[3] = m0, m1, m2, m3
		return
	case 6:
		m0, m1, m2, m3, m4, m5 := m[0], m[1], m[2], m[3], m[4], m[5]
		for i := range vals {
			v := &vals[i]
			m0, m1, m2, m3 = min(m0, v[0]), min(m1, v[1]), min(m2, v[2]), min(m3, v[3])
			m4, m5 = min(m4, v[4]), min(m5, v[5])
		}
		m[0], m[1], m[2], m[3], m[4], m[5] = m0, m1, m2, m3, m4, m5
		return
	}
	m0, m1, m2, m3, m4, m5, m6, m7 := m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]
	for i := range vals {
		v := &vals[i]
		m0, m1, m2, m3 = min(m0, v[0]), min(m1, v[1]), min(m2, v[2]), min(m3, v[3])
		m4, m5, m6, m7 = min(m4, v[4]), min(m5, v[5]), min(m6, v[6]), min(m7, v[7])
	}
	m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7] = m0, m1, m2, m3, m4, m5, m6, m7
}

// isZero reports whether t is zero in every slot, without a call to compare memory.
func isZero(t *resource.Tuple) bool {
	return t[0]|t[1]|t[2]|t[3]|t[4]|t[5]|t[6]|t[7] == 0
}

// below reports whether v is below floor on some dimension.
func below(v, floor *resource.Tuple) bool {
	return v[0] < floor[0] || v[1] < floor[1] || v[2] < floor[2] || v[3] < floor[3] ||
		v[4] < floor[4] || v[5] < floor[5] || v[6] < floor[6] || v[7] < floor[7]
}

// diff sets *dst to a − b, saturating as resource.Tuple.Sub does, the way sum adds.
func diff(dst, a, b *resource.Tuple) {
	s0, s1, s2, s3 := a[0]-b[0], a[1]-b[1], a[2]-b[2], a[3]-b[3]
	s4, s5, s6, s7 := a[4]-b[4], a[5]-b[5], a[6]-b[6], a[7]-b[7]
	over := (a[0]^b[0])&(a[0]^s0) | (a[1]^b[1])&(a[1]^s1) | (a[2]^b[2])&(a[2]^s2) | (a[3]^b[3])&(a[3]^s3) |
		(a[4]^b[4])&(a[4]^s4) | (a[5]^b[5])&(a[5]^s5) | (a[6]^b[6])&(a[6]^s6) | (a[7]^b[7])&(a[7]^s7)
	if over < 0 {
		*dst = a.Sub(*b)
		return
	}
	dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6], dst[7] = s0, s1, s2, s3, s4, s5, s6, s7
}

// sum sets *dst to a + b, saturating as resource.Tuple.Add does. It adds without
// checking, written out for the eight slots, and redoes the sum with Add in the rare
// case that some slot overflowed.
func sum(dst, a, b *resource.Tuple) {
	s0, s1, s2, s3 := a[0]+b[0], a[1]+b[1], a[2]+b[2], a[3]+b[3]
	s4, s5, s6, s7 := a[4]+b[4], a[5]+b[5], a[6]+b[6], a[7]+b[7]
	over := (a[0]^s0)&(b[0]^s0) | (a[1]^s1)&(b[1]^s1) | (a[2]^s2)&(b[2]^s2) | (a[3]^s3)&(b[3]^s3) |
		(a[4]^s4)&(b[4]^s4) | (a[5]^s5)&(b[5]^s5) | (a[6]^s6)&(b[6]^s6) | (a[7]^s7)&(b[7]^s7)
	if over < 0 {
		*dst = a.Add(*b)
		return
	}
	dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6], dst[7] = s0, s1, s2, s3, s4, s5, s6, s7
}

// newNode returns an empty node, recycled (with its arrays) when one is spare.
func (tl *Timeline) newNode(leaf bool) *node {
	if n := len(tl.spare); n > 0 {
		nd := tl.spare[n-1]
		tl.spare = tl.spare[:n-1]
		nd.leaf = leaf
		return nd
	}
	return &node{leaf: leaf, width: width(tl.schema)}
}

// maxSpare is the most emptied nodes a timeline keeps for reuse: enough that reserving
// and releasing allocate nothing in a steady state, few enough that a timeline that
// shrinks does not hold on to the memory of its busiest time.
const maxSpare = 8

// freeNode keeps an emptied node for reuse, or leaves it to the garbage collector.
func (tl *Timeline) freeNode(nd *node) {
	if len(tl.spare) < maxSpare {
		clear(nd.kids)
		nd.add, nd.at, nd.val, nd.kids = resource.Tuple{}, nd.at[:0], nd.val[:0], nd.kids[:0]
		tl.spare = append(tl.spare, nd)
	}
}

// room returns s emptied, or a new empty slice when s cannot hold a full node.
func room[T any](s []T) []T {
	if cap(s) < fanout {
		return make([]T, 0, fanout)
	}
	return s[:0]
}

// locate returns the step in effect at t (≥ the origin): when it begins and ends and its
// free amount.
func (tl *Timeline) locate(t time.Duration) (start, end time.Duration, free resource.Tuple) {
	nd, hi := tl.root, Forever
	var acc resource.Tuple
	for {
		if !isZero(&nd.add) {
			sum(&acc, &acc, &nd.add)
		}
		i := nd.find(t)
		hi = nd.end(i, hi)
		if nd.leaf {
			sum(&free, &nd.val[i], &acc)
			return nd.at[i], hi, free
		}
		nd = nd.kids[i]
	}
}

// redundant reports whether the step beginning at t (> the origin) holds the same amount
// as the one before it; false when no step begins at t. Most steps share a leaf with
// their predecessor, whose frame is then the same: one descent, no sums.
func (tl *Timeline) redundant(t time.Duration) bool {
	nd := tl.root
	for !nd.leaf {
		nd = nd.kids[nd.find(t)]
	}
	i := nd.find(t)
	if nd.at[i] != t {
		return false
	}
	if i > 0 {
		return nd.val[i] == nd.val[i-1]
	}
	_, _, cur := tl.locate(t)
	_, _, prev := tl.locate(t - 1)
	return cur == prev
}

// walkNode calls fn for nd's steps overlapping [from, to), clipped to it, in time order;
// nd's last entry ends at hi and *above is the sum of the adds above nd. It returns false
// when fn stopped the walk.
func walkNode(nd *node, hi, from, to time.Duration, above *resource.Tuple, fn func(Segment) bool) bool {
	var acc resource.Tuple
	sum(&acc, above, &nd.add)
	i := nd.find(from)
	if !nd.leaf {
		for ; i < len(nd.at) && nd.at[i] < to; i++ {
			if !walkNode(nd.kids[i], nd.end(i, hi), from, to, &acc, fn) {
				return false
			}
		}
		return true
	}
	var seg Segment
	zero := isZero(&acc)
	for ; i < len(nd.at) && nd.at[i] < to; i++ {
		seg.Start, seg.End = max(nd.at[i], from), min(nd.end(i, hi), to)
		if zero {
			seg.Free = nd.val[i]
		} else {
			sum(&seg.Free, &nd.val[i], &acc)
		}
		if !fn(seg) {
			return false
		}
	}
	return true
}

// walkBelow is walkNode for the steps below floor on some dimension only: it skips every
// entry whose amount, or child whose minimum, is not.
func walkBelow(nd *node, hi, from, to time.Duration, above, floor *resource.Tuple, fn func(Segment) bool) bool {
	var acc resource.Tuple
	sum(&acc, above, &nd.add)
	zero := isZero(&acc)
	var seg Segment
	for i := nd.find(from); i < len(nd.at) && nd.at[i] < to; i++ {
		if zero {
			if !below(&nd.val[i], floor) {
				continue
			}
			seg.Free = nd.val[i]
		} else if sum(&seg.Free, &nd.val[i], &acc); !below(&seg.Free, floor) {
			continue
		}
		end := nd.end(i, hi)
		if nd.leaf {
			seg.Start, seg.End = max(nd.at[i], from), min(end, to)
			if !fn(seg) {
				return false
			}
		} else if !walkBelow(nd.kids[i], end, from, to, &acc, floor, fn) {
			return false
		}
	}
	return true
}

// shortWalk is the state of Timeline.WalkShort: profile p started at start, over the
// window [from, to) (from the origin on); stage j, ending at jEnd and short below
// floor (its demand less the slack), is the first that has not ended before the
// current step.
type shortWalk struct {
	p               *Profile
	start, from, to time.Duration
	slack           *resource.Tuple
	fn              func(int, Segment) bool
	j               int
	jEnd            time.Duration
	floor           resource.Tuple
}

// stageStart returns when stage i begins.
func (w *shortWalk) stageStart(i int) time.Duration { return AddSat(w.start, w.p.offsets[i]) }

// setStage makes stage j the current one.
func (w *shortWalk) setStage(j int) {
	w.j, w.jEnd = j, AddSat(w.start, w.p.offsets[j+1])
	d, s := &w.p.stages[j].Demand, w.slack
	for k := range w.floor {
		w.floor[k] = d[k] - s[k] // demand and slack are not negative: no overflow
	}
}

// short reports whether v is below stage i's demand less the slack on some dimension.
func (w *shortWalk) short(v *resource.Tuple, i int) bool {
	d, s := &w.p.stages[i].Demand, w.slack
	return v[0] < d[0]-s[0] || v[1] < d[1]-s[1] || v[2] < d[2]-s[2] || v[3] < d[3]-s[3] ||
		v[4] < d[4]-s[4] || v[5] < d[5]-s[5] || v[6] < d[6]-s[6] || v[7] < d[7]-s[7]
}

// shortAny reports whether v is short of some stage overlapping [lo, up), where lo is
// within the current stage.
func (w *shortWalk) shortAny(v *resource.Tuple, up time.Duration) bool {
	if below(v, &w.floor) {
		return true
	}
	for j := w.j + 1; up > w.jEnd && j < len(w.p.stages) && w.stageStart(j) < up; j++ {
		if w.short(v, j) {
			return true
		}
	}
	return false
}

// node visits nd's entries overlapping the window (nd's last entry ending at hi; *above
// the sum of the adds above nd): a child only when its minimum is short of some stage
// it overlaps, a step once for each stage it overlaps and is short of. It returns false
// when fn stopped the walk.
func (w *shortWalk) node(nd *node, hi time.Duration, above *resource.Tuple) bool {
	var acc resource.Tuple
	sum(&acc, above, &nd.add)
	zero := isZero(&acc)
	for i := nd.find(w.from); i < len(nd.at) && nd.at[i] < w.to; i++ {
		end := nd.end(i, hi)
		lo, up := max(nd.at[i], w.from), min(end, w.to) // the entry within the window
		if w.jEnd <= lo {
			j := w.j + 1
			for AddSat(w.start, w.p.offsets[j+1]) <= lo {
				j++
			}
			w.setStage(j)
		}
		v := &nd.val[i]
		var sv resource.Tuple
		if !zero {
			sum(&sv, v, &acc)
			v = &sv
		}
		if !nd.leaf {
			if w.shortAny(v, up) && !w.node(nd.kids[i], end, &acc) {
				return false
			}
			continue
		}
		if up <= w.jEnd {
			// Within the current stage, the common case.
			if below(v, &w.floor) && !w.fn(w.j, Segment{Start: lo, End: up, Free: *v}) {
				return false
			}
			continue
		}
		for j := w.j; j < len(w.p.stages); j++ {
			from := w.stageStart(j)
			if from >= up {
				break
			}
			if w.short(v, j) && !w.fn(j, Segment{Start: max(lo, from), End: min(up, AddSat(w.start, w.p.offsets[j+1])), Free: *v}) {
				return false
			}
		}
	}
	return true
}

// minNode sets *m to the per-dimension minimum of nd's steps overlapping [from, to),
// which some do, in the frame of nd's parent (with nd.add); nd's last entry ends at hi.
// A child inside the window counts by its summary, so only the children holding the
// window's ends are descended into.
func minNode(nd *node, hi, from, to time.Duration, m *resource.Tuple) {
	i := nd.find(from)
	j := i + 1 // entries i to j-1 overlap the window
	for j < len(nd.at) && nd.at[j] < to {
		j++
	}
	if nd.leaf {
		*m = nd.val[i]
		lowerRun(m, nd.val[i+1:j], nd.width)
	} else {
		if end := nd.end(i, hi); nd.at[i] < from || end > to {
			minNode(nd.kids[i], end, from, to, m)
		} else {
			*m = nd.val[i]
		}
		if j-1 > i {
			lowerRun(m, nd.val[i+1:j-1], nd.width)
			if end := nd.end(j-1, hi); end > to {
				var sub resource.Tuple
				minNode(nd.kids[j-1], end, from, to, &sub)
				lower(m, &sub)
			} else {
				lower(m, &nd.val[j-1])
			}
		}
	}
	if !isZero(&nd.add) {
		sum(m, m, &nd.add)
	}
}

// stageMins is the state of Timeline.MinFreeStages: profile p started at start, over
// the window [from, to) (from the origin on); m is the least free amount seen so far of
// stage j, which ends at jEnd (seen: m holds one).
type stageMins struct {
	p               *Profile
	start, from, to time.Duration
	fn              func(int, resource.Tuple) bool
	j               int
	jEnd            time.Duration
	m               resource.Tuple
	seen            bool
}

// fold counts amount v, free over a part of the window that begins at lo, towards the
// minimum of the stage in effect at lo; when that is a later stage than the current
// one, the current one's minimum is final and reported first. It returns false when fn
// stopped the walk.
func (w *stageMins) fold(lo time.Duration, v *resource.Tuple) bool {
	if w.j < 0 || w.jEnd <= lo {
		if w.seen && !w.fn(w.j, w.m) {
			return false
		}
		w.j, w.jEnd = w.stageAt(lo)
		w.m, w.seen = *v, true
		return true
	}
	lower(&w.m, v)
	return true
}

// stageAt returns the stage in effect at lo, the current one or a later one, and when
// it ends.
func (w *stageMins) stageAt(lo time.Duration) (int, time.Duration) {
	j, end := w.j, w.jEnd
	if j < 0 {
		j, end = 0, AddSat(w.start, w.p.offsets[1])
	}
	for end <= lo {
		j++
		end = AddSat(w.start, w.p.offsets[j+1])
	}
	return j, end
}

// node folds nd's entries overlapping the window (nd's last entry ending at hi; *above
// the sum of the adds above nd): an entry within one stage by its amount (a child's by
// its subtree minimum), a child across a stage boundary or an end of the window by a
// descent, and a step across stage boundaries into every stage it overlaps. It returns
// false when fn stopped the walk.
func (w *stageMins) node(nd *node, hi time.Duration, above *resource.Tuple) bool {
	var acc resource.Tuple
	sum(&acc, above, &nd.add)
	zero := isZero(&acc)
	n := len(nd.at)
	for i := nd.find(w.from); i < n && nd.at[i] < w.to; {
		end := nd.end(i, hi)
		lo, up := max(nd.at[i], w.from), min(end, w.to) // the entry within the window
		_, stageEnd := w.stageAt(lo)
		if !nd.leaf && (up > stageEnd || lo > nd.at[i] || up < end) { // not all within one stage
			if !w.node(nd.kids[i], end, &acc) {
				return false
			}
			i++
			continue
		}
		// Entries i to k-1 lie within the stage in effect at lo (or, a step, begin there).
		k := i + 1
		if up <= stageEnd {
			for k < n && nd.end(k, hi) <= stageEnd {
				k++
			}
		}
		m := nd.val[i]
		lowerRun(&m, nd.val[i+1:k], nd.width)
		if !zero {
			sum(&m, &m, &acc)
		}
		if !w.fold(lo, &m) {
			return false
		}
		for up > w.jEnd { // a step across stage boundaries: the next stage begins within it
			if !w.fold(w.jEnd, &m) {
				return false
			}
		}
		i = k
	}
	return true
}

// splitStages makes a step begin at every stage boundary of p started at start, as
// split does, one boundary after the other: a boundary in the leaf of the one before,
// the usual case, needs no descent from the root, and one that leaf has room for no
// change above it.
func (tl *Timeline) splitStages(start time.Duration, p *Profile) {
	var leaf *node
	var hi time.Duration // leaf's steps are [leaf.at[0], hi)
	for i := 0; i <= p.Len(); i++ {
		t := AddSat(start, p.offsets[i])
		if t <= tl.origin || t == Forever {
			continue
		}
		if leaf == nil || t >= hi {
			leaf, hi = tl.root, Forever
			for !leaf.leaf {
				j := leaf.find(t)
				hi = leaf.end(j, hi)
				leaf = leaf.kids[j]
			}
		}
		j := leaf.find(t)
		switch {
		case leaf.at[j] == t:
		case len(leaf.at) < fanout:
			// A copy of an amount the leaf holds, in its frame: no minimum changes.
			tl.insertAt(leaf, j+1, t, leaf.val[j], nil)
			tl.len++
		default:
			tl.split(t) // the leaf splits, and perhaps nodes above it
			leaf = nil
		}
	}
}

// split makes a step begin exactly at t (origin < t < Forever), copying the amount in
// effect there.
func (tl *Timeline) split(t time.Duration) {
	if t <= tl.origin || t == Forever {
		return
	}
	sib := tl.insert(tl.root, t)
	if sib == nil {
		return
	}
	old := tl.root
	r := tl.newNode(false)
	r.at = append(r.at, old.at[0], sib.at[0])
	r.val = append(r.val, old.summary(), sib.summary())
	r.kids = append(r.kids, old, sib)
	tl.root = r
}

// insert adds a step at t below nd, unless one begins there, and returns nd's new right
// sibling when nd had to split.
func (tl *Timeline) insert(nd *node, t time.Duration) *node {
	i := nd.find(t)
	if nd.leaf {
		if nd.at[i] == t {
			return nil
		}
		tl.len++
		return tl.insertAt(nd, i+1, t, nd.val[i], nil)
	}
	kid := nd.kids[i]
	sib := tl.insert(kid, t)
	if sib == nil {
		// The new step copies an amount the child holds: its minimum is unchanged.
		return nil
	}
	nd.val[i] = kid.summary()
	return tl.insertAt(nd, i+1, sib.at[0], sib.summary(), sib)
}

// insertAt puts an entry at index i of nd, in nd's frame, splitting nd in halves when it
// is full; it returns the new right half, or nil. The half takes nd's add: no pending
// addition needs pushing first.
func (tl *Timeline) insertAt(nd *node, i int, at time.Duration, v resource.Tuple, kid *node) *node {
	if len(nd.at) < fanout {
		nd.at = slices.Insert(nd.at, i, at)
		nd.val = slices.Insert(nd.val, i, v)
		if !nd.leaf {
			nd.kids = slices.Insert(nd.kids, i, kid)
		}
		return nil
	}
	const half = fanout / 2
	sib := tl.newNode(nd.leaf)
	sib.add = nd.add
	sib.at = append(room(sib.at), nd.at[half:]...)
	sib.val = append(room(sib.val), nd.val[half:]...)
	nd.at, nd.val = nd.at[:half], nd.val[:half]
	if !nd.leaf {
		sib.kids = append(room(sib.kids), nd.kids[half:]...)
		clear(nd.kids[half:])
		nd.kids = nd.kids[:half]
	}
	if i <= half {
		tl.insertAt(nd, i, at, v, kid)
	} else {
		tl.insertAt(sib, i-half, at, v, kid)
	}
	return sib
}

// removeStep deletes the step beginning at t, which exists and is not the first.
func (tl *Timeline) removeStep(t time.Duration) {
	tl.remove(tl.root, t)
	tl.len--
	for !tl.root.leaf && len(tl.root.at) == 1 {
		old := tl.root
		tl.root = old.kids[0] // old's add is zero: remove pushed it
		tl.freeNode(old)
	}
}

// remove deletes the step beginning at t below nd and leaves nd's entries and the
// children's summaries up to date; a child left with fewer than minFill entries borrows
// from or merges with a sibling.
func (tl *Timeline) remove(nd *node, t time.Duration) {
	nd.push()
	i := nd.find(t)
	if nd.leaf {
		nd.removeAt(i)
		return
	}
	kid := nd.kids[i]
	tl.remove(kid, t)
	nd.at[i] = kid.at[0]
	if len(kid.at) >= minFill {
		nd.val[i] = kid.summary()
		return
	}
	// Rebalance kid with its left sibling, or its right one when it is the first.
	l := max(i-1, 0)
	left, right := nd.kids[l], nd.kids[l+1]
	left.push()
	right.push()
	if len(left.at)+len(right.at) <= fanout {
		left.at = append(left.at, right.at...)
		left.val = append(left.val, right.val...)
		if !left.leaf {
			left.kids = append(left.kids, right.kids...)
		}
		nd.removeAt(l + 1)
		tl.freeNode(right)
		nd.val[l] = left.summary()
		return
	}
	// Share the entries evenly.
	if want := (len(left.at) + len(right.at)) / 2; len(left.at) < want {
		m := want - len(left.at)
		left.at = append(left.at, right.at[:m]...)
		left.val = append(left.val, right.val[:m]...)
		right.at = slices.Delete(right.at, 0, m)
		right.val = slices.Delete(right.val, 0, m)
		if !left.leaf {
			left.kids = append(left.kids, right.kids[:m]...)
			right.kids = slices.Delete(right.kids, 0, m)
		}
	} else {
		right.at = slices.Insert(right.at, 0, left.at[want:]...)
		right.val = slices.Insert(right.val, 0, left.val[want:]...)
		left.at = slices.Delete(left.at, want, len(left.at))
		left.val = slices.Delete(left.val, want, len(left.val))
		if !left.leaf {
			right.kids = slices.Insert(right.kids, 0, left.kids[want:]...)
			left.kids = slices.Delete(left.kids, want, len(left.kids))
		}
	}
	nd.at[l+1] = right.at[0]
	nd.val[l], nd.val[l+1] = left.summary(), right.summary()
}

// removeAt deletes entry i of nd.
func (nd *node) removeAt(i int) {
	nd.at = slices.Delete(nd.at, i, i+1)
	nd.val = slices.Delete(nd.val, i, i+1)
	if !nd.leaf {
		nd.kids = slices.Delete(nd.kids, i, i+1) // which clears the slot left behind
	}
}

// stageUpdate adds a profile's stage demands (negated when reserving) to the steps they
// cover, in one descent over the window: every node the window or a stage boundary cuts
// through is visited, and every child inside one stage takes the stage's amount lazily.
type stageUpdate struct {
	start, from, end time.Duration
	p                *Profile
	neg              bool
	j                int    // the stage at the current time
	kept             uint64 // bit i: the step at stage boundary i (< 64) differs from the one before
}

// node updates nd's entries (nd's last entry ending at hi). The window's ends and the
// stage boundaries are steps (split made them), so every leaf entry lies inside one
// stage or outside the window.
func (u *stageUpdate) node(nd *node, hi time.Duration) {
	nd.push()
	for i := nd.find(u.from); i < len(nd.at) && nd.at[i] < u.end; i++ {
		lo, end := max(nd.at[i], u.from), nd.end(i, hi)
		for AddSat(u.start, u.p.offsets[u.j+1]) <= lo {
			u.j++
		}
		if nd.leaf || (nd.at[i] >= u.from && end <= AddSat(u.start, u.p.offsets[u.j+1])) {
			d := &u.p.stages[u.j].Demand
			if u.neg {
				diff(&nd.val[i], &nd.val[i], d)
			} else {
				sum(&nd.val[i], &nd.val[i], d)
			}
			if !nd.leaf {
				k := nd.kids[i]
				if u.neg {
					diff(&k.add, &k.add, d)
				} else {
					sum(&k.add, &k.add, d)
				}
			} else if i > 0 && u.j < 64 && nd.at[i] == AddSat(u.start, u.p.offsets[u.j]) && nd.val[i] != nd.val[i-1] {
				// A boundary step that now differs from the one before (which is final:
				// updated already, or outside the window) stays: apply need not look.
				u.kept |= 1 << u.j
			}
			continue
		}
		u.node(nd.kids[i], end)
		nd.val[i] = nd.kids[i].summary()
	}
	// The step where the window ends, when it is in this leaf after an updated one.
	if n := len(u.p.stages); nd.leaf && n < 64 {
		if i := nd.find(u.end); i > 0 && nd.at[i] == u.end && nd.val[i] != nd.val[i-1] {
			u.kept |= 1 << n
		}
	}
}
