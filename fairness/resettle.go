package fairness

import (
	"slices"
	"sort"
)

// Resettle brings order up to date after a change to one job alone — a task of it
// started, say, which re-keys the job and every queue above it — as a walk would now
// visit the jobs: order holds the slots (Slot) of some of the jobs Walk visits, in the
// order Walk visited them before the change, each job with a slot of its own, and
// order[at] is the job that changed. The job, and the block of jobs of each queue
// above it, move to where Walk now visits them; the jobs Walk no longer visits — the
// job when it has no pending task left, every job of a queue that reached its max
// share or has no eligible child left — are dropped; the other jobs keep their order,
// as their keys did not change. It returns order shortened by the jobs dropped.
//
// A pass that chooses among the jobs again after each start (plugins.Tetris) keeps
// its list of them so instead of walking the tree again: O(m × d + d × log n) for n
// jobs in order, m of them under the changed job's queue at the root's level (none
// when the job is at the root), d the job's depth. The tree keeps a table of the jobs
// by slot from the first call on, as long as the largest slot.
func Resettle[E any](t *Tree, order []E, at int, slot func(E) int) []E {
	j := t.slotted(slot(order[at]))
	if j == nil || j.Kind != KindJob {
		return order
	}
	path := t.path[:0] // the job and its queues below the root
	for n := j; n.parent != nil; n = n.parent {
		path = append(path, n)
	}
	t.path = path
	drop := -1 // the topmost node of the path Walk no longer visits: all below it goes
	for i, n := range path {
		if !n.inParent {
			drop = i
		}
	}
	lo, hi := at, at+1 // the block of path[i]'s jobs in order
	for i, n := range path {
		plo, phi := 0, len(order) // the block of its parent's jobs
		if n.parent != t.root {
			plo, phi = lo, hi
			for plo > 0 && t.under(slot(order[plo-1]), n.parent) {
				plo--
			}
			for phi < len(order) && t.under(slot(order[phi]), n.parent) {
				phi++
			}
		}
		switch {
		case i == drop:
			order = slices.Delete(order, lo, hi)
			phi -= hi - lo
		case i > drop && lo < hi:
			settle(t, order[plo:phi], lo-plo, hi-plo, n, slot)
		}
		lo, hi = plo, phi
	}
	return order
}

// settle moves block[lo:hi], the jobs of node n, to where n now comes among its
// siblings: block holds the jobs of n's parent in Walk's order but for n's, whose key
// changed; the others are ordered by their siblings' keys, which did not, so a binary
// search finds the place.
func settle[E any](t *Tree, block []E, lo, hi int, n *tnode, slot func(E) int) {
	size := hi - lo
	// The first of the others (block without n's jobs) whose queue or job under n's
	// parent comes after n.
	p := sort.Search(len(block)-size, func(k int) bool {
		if k >= lo {
			k += size
		}
		return lessNode(n, t.childOf(slot(block[k]), n.parent))
	})
	if p <= lo {
		rotate(block[p:hi], lo-p)
	} else {
		rotate(block[lo:hi+p-lo], size)
	}
}

// rotate moves s[:k] to the end of s.
func rotate[E any](s []E, k int) {
	slices.Reverse(s[:k])
	slices.Reverse(s[k:])
	slices.Reverse(s)
}

// slotted is the job given slot i (Slot), nil for none. The table is built on the
// first call and kept up to date from then on (setSlot).
func (t *Tree) slotted(i int) *tnode {
	if t.bySlot == nil {
		t.bySlot = make([]*tnode, 0, len(t.jobs))
		for _, j := range t.jobs {
			t.setSlot(j, -1)
		}
	}
	if i < 0 || i >= len(t.bySlot) {
		return nil
	}
	return t.bySlot[i]
}

// setSlot records, once the table by slot is kept (slotted), that job j's slot is
// j.slot, no longer old (−1: none); a removed job is recorded with slot −1.
func (t *Tree) setSlot(j *tnode, old int) {
	if t.bySlot == nil {
		return
	}
	if old >= 0 && old < len(t.bySlot) && t.bySlot[old] == j {
		t.bySlot[old] = nil
	}
	if j.slot < 0 {
		return
	}
	for len(t.bySlot) <= j.slot {
		t.bySlot = append(t.bySlot, nil)
	}
	t.bySlot[j.slot] = j
}

// under reports whether the job given slot i is in queue q, at any depth.
func (t *Tree) under(i int, q *tnode) bool {
	n := t.slotted(i)
	for n != nil && n != q {
		n = n.parent
	}
	return n != nil
}

// childOf is the child of queue q that holds the job given slot i (the job itself when
// q is its queue); the job must be in q.
func (t *Tree) childOf(i int, q *tnode) *tnode {
	n := t.slotted(i)
	for n.parent != q {
		n = n.parent
	}
	return n
}
