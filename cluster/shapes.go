package cluster

import "github.com/finegrain/finegrain/resource"

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
		sh.rebuild()
	}
}

func (sh *shapes) remove(c resource.Tuple) {
	sh.count[c]--
	if sh.count[c] == 0 {
		delete(sh.count, c)
		sh.rebuild()
	}
}

// rebuild recomputes the frontier: O(shapes²), run only when a shape appears or goes.
func (sh *shapes) rebuild() {
	sh.frontier = sh.frontier[:0]
	for c := range sh.count {
		maximal := true
		for o := range sh.count {
			if o != c && o.Covers(c) {
				maximal = false
				break
			}
		}
		if maximal {
			sh.frontier = append(sh.frontier, c)
		}
	}
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
