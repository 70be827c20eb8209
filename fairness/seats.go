package fairness

// seatDegree is the degree of a queue's active set: a node holds seatDegree-1 to
// 2*seatDegree-1 seats (the root fewer), as google/btree's degree 16 did before it, so
// that a set of a thousand jobs is three levels deep and a seat re-keyed by a little
// often keeps to its leaf (seatTree.Rekey).
const seatDegree = 16

// seatTree is a queue's active set: its eligible children's seats, ordered by lessNode
// (the policy's key, then submission, ID and creation order), its nodes from the
// Tree's free list, whose arrays have room to spare (bfree.double): a set is re-keyed
// at every start and finish of a task of a job in it.
//
// A seat is found by its node's key as the set holds it (tnode.key): change the key
// only while the node is out of the set, or through Rekey. No two seats are alike
// (lessNode is a total order over distinct nodes).
type seatTree struct {
	btree[seat, seatOrder]
}

// seatOrder is the order of seats (lessNode), inlined into the search of a node.
type seatOrder struct{}

// search returns the index of the first seat not less than x, and whether it is x's:
// no two seats are alike.
func (seatOrder) search(items []seat, x seat, _ bool) (int, bool) {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if lessNode(items[m].n, x.n) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(items) && items[lo].n == x.n
}

// Rekey gives node x, which the set holds under x.key, the key to, and moves its seat
// to its place under it: within its leaf, without a removal and an insertion, when the
// place is there (a small change of a share most often leaves a job among the same
// neighbours, or next to them), else by both on one descent and another. Either way the
// set holds afterwards what Delete, a change of x.key and Insert would leave.
func (t *seatTree) Rekey(x *tnode, to OrderKey) {
	_, moved, _, _ := t.deleteOrMove(seatOf(x), func(leaf []seat, i int, lo, hi seat) bool {
		// The seat's place in the leaf under to, if it is inside the leaf's range
		// (after lo and before hi, each none for none).
		s := leaf[i]
		old := x.key
		x.key = to
		if (lo.n != nil && !lessNode(lo.n, x)) || (hi.n != nil && !lessNode(x, hi.n)) {
			x.key = old
			return false
		}
		j := i
		for j+1 < len(leaf) && lessNode(leaf[j+1].n, x) {
			j++
		}
		if j > i { // to the right, past the seats now before it
			copy(leaf[i:j], leaf[i+1:j+1])
			leaf[j] = s
			return true
		}
		for j > 0 && lessNode(x, leaf[j-1].n) {
			j--
		}
		copy(leaf[j+1:i+1], leaf[j:i]) // to the left, before the seats now after it
		leaf[j] = s
		return true
	})
	if !moved {
		x.key = to
		t.Insert(seatOf(x))
	}
}
