package fairness

// This file holds the package's one B-tree, behind its three ordered indexes: a node's
// or rack's located items (located.go), a queue's active set of seats (seats.go) and a
// job's pending entries (pending.go). It has google/btree's algorithms — an insert
// splits every full node on its way down, a removal gives every short node it enters
// an item more on its way down, so that neither ever goes back up — and what the
// indexes need besides: an insert tells the item's predecessor and refuses an item
// alike to one held, a removal tells the item's neighbours, and can instead move the
// item within its leaf (a seat re-keyed), a cursor walks in order without a callback,
// and emptied nodes and arrays are kept for reuse.
//
// The tree is generic in its items (I) and their order (O). Go compiles a generic
// function once for each GC shape of its type arguments, not once for each type, and
// calls a method of a type parameter through the instantiation's dictionary, which
// the compiler does not inline: a comparison made that way would cost a call. So the
// order is not a comparison but a search of one node's items (order.search), called
// once for each node a descent passes, in whose loop each index writes its comparisons
// out to be inlined. Each index's items have a GC shape of their own (located: a
// uint64 and a pointer; seat: a pointer and an int; an entry: a pointer), so each gets
// code of its own for the rest, item copies and equality included.

// order is what a B-tree needs of its items' order: a search of one node's items, which
// are in order. Its type is an empty struct: the tree calls the method of its zero
// value.
type order[I any] interface {
	// search returns the index of the first of items not less than x and whether it
	// matches x. With exact, the item matches when it is x itself (==), and the index
	// is x's when items hold x. Without, for Insert and seek, it matches when it is
	// alike to x (neither less than the other), for a tree that holds no two items
	// alike; an order whose trees may hold alike items reports no match.
	search(items []I, x I, exact bool) (i int, match bool)
}

const (
	// maxBDepth bounds the depth of a tree, for a cursor's path: every internal node
	// but the root has at least degree children, so with a degree of 16 at least,
	// 2·16^14 leaves would be needed for a tree deeper.
	maxBDepth = 16
	// bfreeNodes is how many emptied nodes a bfree keeps for reuse.
	bfreeNodes = 32
	// bfreeArrays is how many item arrays of each capacity a bfree keeps for reuse.
	bfreeArrays = 8
)

// bnode is a node of a B-tree: items in order and, but in a leaf, one child more,
// children[i] holding the items between items[i-1] and items[i]. Every node but the
// root holds degree-1 to 2*degree-1 items, in an array from bfree.alloc, and every
// leaf is at the same depth.
type bnode[I comparable, O order[I]] struct {
	items    []I
	children []*bnode[I, O]
}

// btree is a B-tree of items ordered by O. Its nodes come from and go back to free,
// which sets the degree and is shared by the trees of one index.
//
// The items are distinct (==). Two may be alike in O's order where O.search does not
// match them (a node's or rack's tree holds a parked entry and may get a pending one
// alike to it): Insert puts x before the items alike to it, and Delete goes down
// where x would go now, looking for x by == in each node it passes, so that it misses
// an x that comes after an alike item held in an internal node above it (ltree.Delete,
// the one tree that holds alike items, looks for such an x among them). The zero I
// is no item: a tree never holds it, and Insert and Delete return it for a predecessor
// or successor that is not there.
type btree[I comparable, O order[I]] struct {
	root *bnode[I, O]
	n    int
	free *bfree[I, O]
}

// bfree keeps emptied nodes, and the item arrays nodes outgrew or left, for the trees
// of one index, and sets their degree and the size of their arrays. It keeps at most
// bfreeNodes nodes and bfreeArrays arrays of each capacity, cleared.
//
// A node's array is sized to its items (a quarter more), so that the degree sets the
// depth and the work of a search, not the room a node wastes, and a node grows into a
// new array, which is then often one another node left, not new garbage: for trees
// that hold an item per task. Or, with double, an array has room for twice the items
// it is made for (a full node's at most), as append would give, and any kept array
// large enough is taken, so that a node seldom moves to another array and the arrays
// kept fit the nodes that ask: for trees whose items are few beside how often they
// move (an item per job, re-keyed at every start).
type bfree[I comparable, O order[I]] struct {
	// degree is the trees' degree, 16 at least (maxBDepth): a node holds degree-1 to
	// 2*degree-1 items, the root fewer.
	degree int
	double bool // arrays of room for twice their items
	nodes  []*bnode[I, O]
	arrays [][][]I // empty, cleared arrays by capacity; made by the first release
}

// maxItems is the number of items of a full node.
func (f *bfree[I, O]) maxItems() int { return 2*f.degree - 1 }

// minItems is the number of items of a node but the root, at least.
func (f *bfree[I, O]) minItems() int { return f.degree - 1 }

// alloc returns an empty array of room for need items at least: a kept one of room for
// at most a quarter more, or a new one of room for a quarter more, rounded up to the
// size class the allocator gives it; with double, any kept one, or a new one of room
// for twice need (a full node at most), rounded up.
func (f *bfree[I, O]) alloc(need int) []I {
	want, most := need+need/4+1, need+need/4+1
	if f.double {
		want, most = min(2*need, f.maxItems()), 2*f.maxItems()
	}
	for c := need; c <= most && c < len(f.arrays); c++ {
		if k := len(f.arrays[c]); k > 0 {
			a := f.arrays[c][k-1]
			f.arrays[c][k-1] = nil
			f.arrays[c] = f.arrays[c][:k-1]
			return a
		}
	}
	return append([]I(nil), make([]I, want)...)[:0]
}

// release keeps array a, which no node uses any longer, for alloc, cleared (it holds
// no item), unless it is larger than a node ever needs (twice a full node's items) or
// enough of its capacity are kept.
func (f *bfree[I, O]) release(a []I) {
	c := cap(a)
	if c == 0 || c > 2*f.maxItems() {
		return
	}
	if f.arrays == nil {
		f.arrays = make([][][]I, 2*f.maxItems()+1)
	}
	if len(f.arrays[c]) >= bfreeArrays {
		return
	}
	clear(a[:c])
	f.arrays[c] = append(f.arrays[c], a[:0])
}

// room returns items with room for k more: itself, or its items moved to an array from
// alloc (the old one released).
func (f *bfree[I, O]) room(items []I, k int) []I {
	if cap(items)-len(items) >= k {
		return items
	}
	out := append(f.alloc(len(items)+k), items...)
	f.release(items)
	return out
}

// insertAt inserts x at index i of items.
func (f *bfree[I, O]) insertAt(items []I, i int, x I) []I {
	var zero I
	items = append(f.room(items, 1), zero)
	copy(items[i+1:], items[i:])
	items[i] = x
	return items
}

// removeAt removes the item at index i of items, clearing the slot it frees.
func removeAt[I any](items []I, i int) []I {
	copy(items[i:], items[i+1:])
	var zero I
	items[len(items)-1] = zero
	return items[:len(items)-1]
}

func (f *bfree[I, O]) get() *bnode[I, O] {
	if k := len(f.nodes); k > 0 {
		n := f.nodes[k-1]
		f.nodes[k-1] = nil
		f.nodes = f.nodes[:k-1]
		return n
	}
	return new(bnode[I, O])
}

func (f *bfree[I, O]) put(n *bnode[I, O]) {
	f.release(n.items)
	n.items = nil
	clear(n.children)
	n.children = n.children[:0]
	if len(f.nodes) < bfreeNodes {
		f.nodes = append(f.nodes, n)
	}
}

// Len is the number of items in the tree.
func (t *btree[I, O]) Len() int { return t.n }

// Min returns the first item; ok is false when the tree is empty.
func (t *btree[I, O]) Min() (x I, ok bool) {
	n := t.root
	if n == nil {
		return x, false
	}
	for len(n.children) > 0 {
		n = n.children[0]
	}
	return n.items[0], true
}

// Insert adds x and returns its predecessor (the zero I for none) and true, or,
// holding the same items, returns the zero I and false when O.search matches an item
// alike to x.
func (t *btree[I, O]) Insert(x I) (pred I, ok bool) {
	var o O
	full := t.free.maxItems()
	if t.root == nil {
		t.root = t.free.get()
		t.root.items = append(t.free.room(t.root.items, 1), x)
		t.n++
		return pred, true
	}
	if len(t.root.items) >= full {
		mid, second := t.split(t.root, full/2)
		old := t.root
		t.root = t.free.get()
		t.root.items = append(t.free.room(t.root.items, 1), mid)
		t.root.children = append(t.root.children, old, second)
	}
	for n := t.root; ; {
		i, alike := o.search(n.items, x, false)
		if alike {
			var none I
			return none, false
		}
		if len(n.children) == 0 {
			n.items = t.free.insertAt(n.items, i, x)
			if i > 0 {
				pred = n.items[i-1]
			}
			t.n++
			return pred, true
		}
		if len(n.children[i].items) >= full {
			mid, second := t.split(n.children[i], full/2)
			n.items = t.free.insertAt(n.items, i, mid)
			n.children = append(n.children, nil)
			copy(n.children[i+2:], n.children[i+1:])
			n.children[i+1] = second
			continue // look again: x may go after mid, or be alike to it
		}
		if i > 0 {
			pred = n.items[i-1]
		}
		n = n.children[i]
	}
}

// split moves the items of n after index i, and their children, to a new node, and
// returns item i, which it takes out of n, and the new node. Both halves get arrays
// from alloc for their items (the full node's would keep half its room empty until
// it fills again).
func (t *btree[I, O]) split(n *bnode[I, O], i int) (I, *bnode[I, O]) {
	mid := n.items[i]
	next := t.free.get()
	next.items = append(t.free.alloc(len(n.items)-i-1), n.items[i+1:]...)
	left := append(t.free.alloc(i), n.items[:i]...)
	t.free.release(n.items)
	n.items = left
	if len(n.children) > 0 {
		next.children = append(next.children, n.children[i+1:]...)
		clear(n.children[i+1:])
		n.children = n.children[:i+1]
	}
	return mid, next
}

// Delete takes x out of the tree, reports whether it held it, and returns the items
// before and after x, or where x would go (the zero I for none).
func (t *btree[I, O]) Delete(x I) (held bool, pred, succ I) {
	held, _, pred, succ = t.deleteOrMove(x, nil)
	return held, pred, succ
}

// deleteOrMove is Delete, but for move: when x is in a leaf, move is called with the
// leaf's items, x's index there, and the items of the tree around the leaf, lo and hi
// (the zero I for none); if it reports true, having moved x within the leaf, so that
// the items stay in order, x stays (moved true), and pred and succ are lo and hi. On
// the way down every child it enters gets more than minItems items first (grow), so
// that a removal from a leaf never leaves it short.
func (t *btree[I, O]) deleteOrMove(x I, move func(leaf []I, i int, lo, hi I) bool) (held, moved bool, pred, succ I) {
	var o O
	least := t.free.minItems()
	for n := t.root; n != nil; {
		i, found := o.search(n.items, x, true)
		if len(n.children) == 0 {
			if found && move != nil && move(n.items, i, pred, succ) {
				held, moved = true, true
				break
			}
			if i > 0 {
				pred = n.items[i-1]
			}
			if !found {
				if i < len(n.items) {
					succ = n.items[i]
				}
				break
			}
			if i+1 < len(n.items) {
				succ = n.items[i+1]
			}
			n.items = removeAt(n.items, i)
			held = true
			break
		}
		if len(n.children[i].items) <= least {
			t.grow(n, i)
			continue // items moved between n and its children: look again
		}
		if found {
			// x is between children i and i+1: its successor is the first item of
			// child i+1, and its predecessor, the greatest of child i, takes its place.
			r := n.children[i+1]
			for len(r.children) > 0 {
				r = r.children[0]
			}
			succ = r.items[0]
			pred = t.deleteMax(n.children[i])
			n.items[i] = pred
			held = true
			break
		}
		if i > 0 {
			pred = n.items[i-1]
		}
		if i < len(n.items) {
			succ = n.items[i]
		}
		n = n.children[i]
	}
	if held && !moved {
		t.n--
	}
	if t.root != nil {
		t.shrink()
	}
	return held, moved, pred, succ
}

// shrink gives way to the root's only child when a removal's descent (grow) left the
// root without items.
func (t *btree[I, O]) shrink() {
	if len(t.root.items) == 0 {
		old := t.root
		t.root = nil
		if len(old.children) > 0 {
			t.root = old.children[0]
		}
		t.free.put(old)
	}
}

// DeleteMin takes the first item out of the tree, without a search, and returns it;
// ok is false when the tree is empty.
func (t *btree[I, O]) DeleteMin() (x I, ok bool) {
	if t.root == nil {
		return x, false
	}
	least := t.free.minItems()
	n := t.root
	for len(n.children) > 0 {
		if len(n.children[0].items) <= least {
			t.grow(n, 0)
			continue
		}
		n = n.children[0]
	}
	x = n.items[0]
	n.items = removeAt(n.items, 0)
	t.shrink()
	t.n--
	return x, true
}

// deleteMax takes the greatest item out of the subtree of n, which has more than
// minItems items, and returns it.
func (t *btree[I, O]) deleteMax(n *bnode[I, O]) I {
	least := t.free.minItems()
	for {
		if len(n.children) == 0 {
			x := n.items[len(n.items)-1]
			n.items = removeAt(n.items, len(n.items)-1)
			return x
		}
		i := len(n.items)
		if len(n.children[i].items) <= least {
			t.grow(n, i)
			continue
		}
		n = n.children[i]
	}
}

// grow gives child i of n more than minItems items: an item from a sibling that can
// spare one, through n, or else the items of a sibling, merged with the item of n
// between them.
func (t *btree[I, O]) grow(n *bnode[I, O], i int) {
	least := t.free.minItems()
	child := n.children[i]
	switch {
	case i > 0 && len(n.children[i-1].items) > least:
		left := n.children[i-1]
		child.items = t.free.insertAt(child.items, 0, n.items[i-1])
		n.items[i-1] = left.items[len(left.items)-1]
		left.items = removeAt(left.items, len(left.items)-1)
		if len(left.children) > 0 {
			last := left.children[len(left.children)-1]
			left.children[len(left.children)-1] = nil
			left.children = left.children[:len(left.children)-1]
			child.children = append(child.children, nil)
			copy(child.children[1:], child.children)
			child.children[0] = last
		}
	case i < len(n.items) && len(n.children[i+1].items) > least:
		right := n.children[i+1]
		child.items = append(t.free.room(child.items, 1), n.items[i])
		n.items[i] = right.items[0]
		right.items = removeAt(right.items, 0)
		if len(right.children) > 0 {
			child.children = append(child.children, right.children[0])
			copy(right.children, right.children[1:])
			right.children[len(right.children)-1] = nil
			right.children = right.children[:len(right.children)-1]
		}
	default:
		if i >= len(n.items) {
			i--
			child = n.children[i]
		}
		right := n.children[i+1]
		child.items = append(t.free.room(child.items, 1+len(right.items)), n.items[i])
		child.items = append(child.items, right.items...)
		child.children = append(child.children, right.children...)
		n.items = removeAt(n.items, i)
		copy(n.children[i+1:], n.children[i+2:])
		n.children[len(n.children)-1] = nil
		n.children = n.children[:len(n.children)-1]
		t.free.put(right)
	}
}

// Clear empties the tree, its nodes and arrays kept for reuse (as many as free keeps).
func (t *btree[I, O]) Clear() {
	if t.root != nil {
		t.clear(t.root)
	}
	t.root, t.n = nil, 0
}

func (t *btree[I, O]) clear(n *bnode[I, O]) {
	for _, c := range n.children {
		t.clear(c)
	}
	t.free.put(n)
}

// Ascend calls fn with the items in order until fn returns false, and reports whether
// it did not.
func (t *btree[I, O]) Ascend(fn func(I) bool) bool {
	if t.root == nil {
		return true
	}
	return t.root.ascend(fn)
}

func (n *bnode[I, O]) ascend(fn func(I) bool) bool {
	if len(n.children) == 0 {
		for _, x := range n.items {
			if !fn(x) {
				return false
			}
		}
		return true
	}
	for i, x := range n.items {
		if !n.children[i].ascend(fn) || !fn(x) {
			return false
		}
	}
	return n.children[len(n.items)].ascend(fn)
}

// bcursor walks a B-tree in order from the position seek found, without a callback: a
// stack of the nodes on the path, each with the index of its next item. A change to
// the tree invalidates it.
type bcursor[I comparable, O order[I]] struct {
	path  [maxBDepth]bframe[I, O]
	depth int
}

type bframe[I comparable, O order[I]] struct {
	n *bnode[I, O]
	i int
}

// seek puts the cursor at the first item not less than x, which is x itself when the
// tree holds x and no item alike to it before x.
func (c *bcursor[I, O]) seek(t *btree[I, O], x I) {
	var o O
	c.depth = 0
	for n := t.root; n != nil; {
		i, alike := o.search(n.items, x, false)
		c.path[c.depth] = bframe[I, O]{n, i}
		c.depth++
		if len(n.children) == 0 || alike || (i < len(n.items) && n.items[i] == x) {
			break
		}
		n = n.children[i]
	}
}

// item returns the item at the cursor; ok is false past the last.
func (c *bcursor[I, O]) item() (x I, ok bool) {
	for c.depth > 0 {
		f := &c.path[c.depth-1]
		if f.i < len(f.n.items) {
			return f.n.items[f.i], true
		}
		c.depth--
	}
	return x, false
}

// next moves the cursor past the item it is at (item returned it).
func (c *bcursor[I, O]) next() {
	f := &c.path[c.depth-1]
	f.i++
	if len(f.n.children) == 0 {
		return
	}
	for n := f.n.children[f.i]; ; n = n.children[0] {
		c.path[c.depth] = bframe[I, O]{n, 0}
		c.depth++
		if len(n.children) == 0 {
			return
		}
	}
}
