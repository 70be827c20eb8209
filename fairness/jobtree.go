package fairness

// taskLess is taskOrder(a, b) < 0 written out, so that it inlines into the job trees'
// searches; the job tree's property checks the tree's order against taskOrder.
func taskLess[T any](a, b *PendingEntry[T]) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Submitted != b.Submitted {
		return a.Submitted < b.Submitted
	}
	return a.ID < b.ID
}

// jobDegree is the degree of a job's trees: a node holds jobDegree-1 to 2*jobDegree-1
// entries (the root fewer), as google/btree's degree 16 did before them, in an array
// sized to them (bfree): a job's trees hold an item per task, like the node and rack
// trees.
const jobDegree = 16

// jtree is a job's tree of pending entries in task order (taskOrder), its nodes from
// the index's jfree. No two of its entries are alike (Insert refuses the second).
type jtree[T any] struct {
	btree[*PendingEntry[T], entryOrder[T]]
}

// jobTree returns an empty job tree.
func (p *PendingIndex[T]) jobTree() *jtree[T] {
	t := new(jtree[T])
	t.free = &p.jfree
	return t
}

// entryOrder is task order (taskLess), inlined into the search of a node.
type entryOrder[T any] struct{}

// search returns the index of the first entry not before x and whether it is alike to
// x (one comparison more, so that Insert refuses an alike entry on its way down), or,
// with exact, whether it is x itself (an alike entry that is not x is not it).
func (entryOrder[T]) search(items []*PendingEntry[T], x *PendingEntry[T], exact bool) (int, bool) {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if taskLess(items[m], x) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if exact {
		return lo, lo < len(items) && items[lo] == x
	}
	return lo, lo < len(items) && !taskLess(x, items[lo])
}
