package cluster

import (
	"slices"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// shapes counts the nodes of each capacity and keeps the maximal ones (no other
// capacity covers them), so that "can some node hold this at all?" costs one pass
// over a handful of distinct node shapes, not over the nodes.
type shapes struct {
	count    map[resource.Tuple]int
	frontier []resource.Tuple // the maximal capacities
}

func (sh *shapes) add(c resource.Tuple) {
	if sh.count == nil {
		sh.count = map[resource.Tuple]int{}
	}
	sh.count[c]++
	if sh.count[c] == 1 {
		sh.insert(c)
	}
}

func (sh *shapes) remove(c resource.Tuple) {
	sh.count[c]--
	if sh.count[c] > 0 {
		return
	}
	delete(sh.count, c)
	if !slices.Contains(sh.frontier, c) {
		return // a covered shape: the frontier stays
	}
	// Shapes c covered may be maximal now: insert them all again, O(shapes ×
	// frontier), only when a maximal shape goes.
	sh.frontier = sh.frontier[:0]
	for o := range sh.count {
		sh.insert(o)
	}
}

// insert adds shape c to the frontier unless a frontier shape covers it, and drops the
// frontier shapes c covers: O(frontier).
func (sh *shapes) insert(c resource.Tuple) {
	for _, f := range sh.frontier {
		if f.Covers(c) {
			return
		}
	}
	sh.frontier = slices.DeleteFunc(sh.frontier, func(f resource.Tuple) bool { return c.Covers(f) })
	sh.frontier = append(sh.frontier, c)
}

// holds reports whether some node's capacity covers t.
func (sh *shapes) holds(t resource.Tuple) bool {
	for _, c := range sh.frontier {
		if c.Covers(t) {
			return true
		}
	}
	return false
}

// Holds reports whether some node's whole capacity covers t: false means no node
// could ever hold t at once, even empty.
func (s *State) Holds(t resource.Tuple) bool { return s.shapes.holds(t) }

// CouldHold reports whether some one node, empty, holds the non-compressible part of
// peak together with GPU demand d (HoldsTask): false means no node could ever run a
// task of that peak — a wait or an eviction cannot help, only a larger node. A
// compressible demand beyond a node's capacity is not counted: the task may run
// there compressed.
func (s *State) CouldHold(peak resource.Tuple, d gpu.Demand) bool {
	return s.HoldsTask(peak.Only(s.schema.NonCompressible()), d)
}

// Largest is, dimension by dimension, the largest capacity of any node (zero with no
// nodes): no one node need have all of it.
func (s *State) Largest() resource.Tuple {
	var l resource.Tuple
	for _, c := range s.shapes.frontier {
		l = l.Max(c)
	}
	return l
}

// CountSmaller counts the nodes whose capacity of dimension dim is below need: they
// could not hold that much of it even empty. It looks at the distinct node shapes.
func (s *State) CountSmaller(dim int, need int64) int {
	n := 0
	if dim < 0 || dim >= resource.MaxDims {
		return 0
	}
	for c, k := range s.shapes.count {
		if c[dim] < need {
			n += k
		}
	}
	return n
}

// Offers reports whether some node would have t free once the scheduler's own tasks
// there were gone: its capacity less the external load last reported there
// (SetExternalLoad) covers t. It looks at every node.
func (s *State) Offers(t resource.Tuple) bool {
	for _, n := range s.nodes {
		if n.spec.Capacity.Sub(n.load).Covers(t) {
			return true
		}
	}
	return false
}

// gpuShape is the capacity and GPUs of a node with GPUs.
type gpuShape struct {
	capacity resource.Tuple
	spec     gpu.Spec
}

// HoldsGPU reports whether some node has the devices for GPU demand d when empty:
// enough of them, of a model d allows. False means no node could ever hold d. The zero
// demand is always held.
func (s *State) HoldsGPU(d gpu.Demand) bool { return s.HoldsTask(resource.Tuple{}, d) }

// HoldsTask reports whether some one node, empty, holds both t (its capacity covers
// it) and GPU demand d (HoldsGPU): false means no node could ever run a task of that
// peak and demand. It looks at the distinct shapes of the nodes with GPUs, or, for the
// zero demand, is Holds.
func (s *State) HoldsTask(t resource.Tuple, d gpu.Demand) bool {
	if d.IsZero() {
		return s.Holds(t)
	}
	for k := range s.gpuShapes {
		if k.spec.Count >= d.Count && d.Allows(k.spec.Model) && k.capacity.Covers(t) {
			return true
		}
	}
	return false
}
