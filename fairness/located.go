package fairness

// located is one item of a node's or rack's index: the entry, after its job's sequence
// number, so that the search for a job's first task (a pivot) compares within the
// index's own memory and reads no entry.
type located[T any] struct {
	job uint64 // the job's sequence number: a job's tasks are contiguous
	e   *PendingEntry[T]
}

// locatedLess orders located items by job, then by the task order of their entries.
func locatedLess[T any](a, b located[T]) bool {
	if a.job != b.job {
		return a.job < b.job
	}
	return taskOrder(a.e, b.e) < 0
}

// locatedDegree is the degree of the node and rack trees: a node holds
// locatedDegree-1 to 2*locatedDegree-1 items (the root fewer), in an array sized to
// them (lfree.room: a quarter more, rounded up to the allocator's size class), so that
// the degree sets the depth and the work of a search, not the room a node wastes: at 32
// a node of 16-byte items takes at most a kilobyte, a search reads about six items of
// each, and three levels hold up to a quarter of a million items.
const locatedDegree = 32

const (
	maxLocated = 2*locatedDegree - 1 // items of a full node
	minLocated = locatedDegree - 1   // items of a node but the root, at least
	// maxLocatedDepth bounds the depth of a tree: every internal node but the root has
	// at least locatedDegree children, so 2·32^14 leaves would be needed for more.
	maxLocatedDepth = 16
	// locatedFreeCap is how many emptied nodes an lfree keeps for reuse.
	locatedFreeCap = 32
)

// lnode is a node of a located tree: items in order and, but in a leaf, one child more,
// children[i] holding the items between items[i-1] and items[i].
type lnode[T any] struct {
	items    []located[T]
	children []*lnode[T]
}

// ltree is a B-tree of located items, the index of a node or rack: google/btree's
// algorithms (split on the way down to insert, grow a child on the way down to remove),
// specialised to the 16-byte items with their comparisons inlined, and with what the
// pending index needs besides: an insert tells the item's predecessor, a removal its
// neighbours, and a cursor walks a job's items without a callback. Its nodes come from
// and go back to lfree, shared by the trees of one index.
//
// The items are distinct (the job's tree refuses an entry alike to one of its own).
type ltree[T any] struct {
	root *lnode[T]
	n    int
	free *lfree[T]
}

// lfree keeps emptied nodes, and the item arrays nodes outgrew or left, for reuse: a
// node's array is sized to its items (room), so that a node grows into a new array,
// which is then often one another node left, not new garbage. It keeps at most
// pooledPerCap arrays of each capacity: at most about a megabyte, cleared.
type lfree[T any] struct {
	nodes  []*lnode[T]
	arrays [maxPooledCap + 1][][]located[T] // empty, cleared arrays by capacity
}

const (
	// maxPooledCap is the largest capacity of array lfree keeps (a node holds at most
	// maxLocated items, in an array up to a quarter larger, rounded up).
	maxPooledCap = 2 * maxLocated
	// pooledPerCap is how many arrays of each capacity lfree keeps.
	pooledPerCap = 8
)

// alloc returns an empty array of room for need items at least: a kept one of room for
// at most a quarter more, or a new one of room for a quarter more, rounded up to the
// size class the allocator gives it.
func (f *lfree[T]) alloc(need int) []located[T] {
	want := need + need/4 + 1
	for c := need; c <= want && c <= maxPooledCap; c++ {
		if k := len(f.arrays[c]); k > 0 {
			a := f.arrays[c][k-1]
			f.arrays[c][k-1] = nil
			f.arrays[c] = f.arrays[c][:k-1]
			return a
		}
	}
	return append([]located[T](nil), make([]located[T], want)...)[:0]
}

// release keeps array a, which no node uses any longer, for alloc (cleared: it holds no
// entry).
func (f *lfree[T]) release(a []located[T]) {
	c := cap(a)
	if c == 0 || c > maxPooledCap || len(f.arrays[c]) >= pooledPerCap {
		return
	}
	clear(a[:c])
	f.arrays[c] = append(f.arrays[c], a[:0])
}

// room returns items with room for k more: itself, or its items moved to an array from
// alloc (the old one released).
func (f *lfree[T]) room(items []located[T], k int) []located[T] {
	if cap(items)-len(items) >= k {
		return items
	}
	out := append(f.alloc(len(items)+k), items...)
	f.release(items)
	return out
}

// insertAt inserts x at index i of items.
func (f *lfree[T]) insertAt(items []located[T], i int, x located[T]) []located[T] {
	items = append(f.room(items, 1), located[T]{})
	copy(items[i+1:], items[i:])
	items[i] = x
	return items
}

func (f *lfree[T]) get() *lnode[T] {
	if k := len(f.nodes); k > 0 {
		n := f.nodes[k-1]
		f.nodes[k-1] = nil
		f.nodes = f.nodes[:k-1]
		return n
	}
	return new(lnode[T])
}

func (f *lfree[T]) put(n *lnode[T]) {
	f.release(n.items)
	n.items, n.children = nil, nil
	if len(f.nodes) < locatedFreeCap {
		f.nodes = append(f.nodes, n)
	}
}

// Len is the number of items in the tree.
func (t *ltree[T]) Len() int { return t.n }

// find returns the index of the first item not less than x: past the items of earlier
// jobs, found without reading an entry, then among the items of x's job, where the
// last is looked at first (tasks tend to come in order: x goes after them, for the
// reading of one entry).
func (n *lnode[T]) find(x located[T]) int {
	lo, hi := n.seek(x.job), len(n.items)
	if x.job < ^uint64(0) {
		hi = n.seek(x.job + 1)
	}
	if lo == hi || taskOrder(n.items[hi-1].e, x.e) < 0 {
		return hi
	}
	for hi--; lo < hi; {
		m := int(uint(lo+hi) >> 1)
		if taskOrder(n.items[m].e, x.e) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// locate finds an item to remove: the index of x, and true, or of the first item not
// less than x. It looks for x among the items of x's job by address before it compares
// their entries (reads them), so that a removal from a leaf whose items of the job hold
// x reads no entry.
func (n *lnode[T]) locate(x located[T]) (int, bool) {
	lo := n.seek(x.job)
	hi := lo
	for ; hi < len(n.items) && n.items[hi].job == x.job; hi++ {
		if n.items[hi].e == x.e {
			return hi, true
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if taskOrder(n.items[m].e, x.e) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}

// seek returns the index of the first item of job seq or a later job.
func (n *lnode[T]) seek(seq uint64) int {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.items[m].job < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insert adds x, which the tree does not hold, and returns its predecessor (e nil when
// it has none).
func (t *ltree[T]) insert(x located[T]) (pred located[T]) {
	t.n++
	if t.root == nil {
		t.root = t.free.get()
		t.root.items = append(t.free.room(t.root.items, 1), x)
		return pred
	}
	if len(t.root.items) >= maxLocated {
		mid, second := t.split(t.root, maxLocated/2)
		old := t.root
		t.root = t.free.get()
		t.root.items = append(t.free.room(t.root.items, 1), mid)
		t.root.children = append(t.root.children, old, second)
	}
	for n := t.root; ; {
		i := n.find(x)
		if len(n.children) == 0 {
			n.items = t.free.insertAt(n.items, i, x)
			if i > 0 {
				pred = n.items[i-1]
			}
			return pred
		}
		if len(n.children[i].items) >= maxLocated {
			mid, second := t.split(n.children[i], maxLocated/2)
			n.items = t.free.insertAt(n.items, i, mid)
			n.children = append(n.children, nil)
			copy(n.children[i+2:], n.children[i+1:])
			n.children[i+1] = second
			if locatedLess(mid, x) {
				i++
			}
		}
		if i > 0 {
			pred = n.items[i-1]
		}
		n = n.children[i]
	}
}

// split moves the items of n after index i, and their children, to a new node, and
// returns item i, which it takes out of n, and the new node. Both halves get arrays of
// their size (a full node's would keep half its room empty until it fills again).
func (t *ltree[T]) split(n *lnode[T], i int) (located[T], *lnode[T]) {
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

// remove takes x out of the tree, reports whether it held it, and returns the items
// before and after x (e nil for none).
func (t *ltree[T]) remove(x located[T]) (ok bool, pred, succ located[T]) {
	if t.root == nil {
		return false, pred, succ
	}
	ok, pred, succ = t.removeFrom(t.root, x)
	if len(t.root.items) == 0 {
		old := t.root
		t.root = nil
		if len(old.children) > 0 {
			t.root = old.children[0]
		}
		t.free.put(old)
	}
	if ok {
		t.n--
	}
	return ok, pred, succ
}

// removeFrom takes x out of the subtree of n, reports whether it held it, and returns
// the items of the subtree before and after x (e nil for none). On the way down every
// child it enters gets more than minLocated items first (grow), so that a removal from
// a leaf never leaves it short.
func (t *ltree[T]) removeFrom(n *lnode[T], x located[T]) (ok bool, pred, succ located[T]) {
	for {
		i, found := n.locate(x)
		if len(n.children) == 0 {
			if i > 0 {
				pred = n.items[i-1]
			}
			if !found {
				if i < len(n.items) {
					succ = n.items[i]
				}
				return false, pred, succ
			}
			if i+1 < len(n.items) {
				succ = n.items[i+1]
			}
			n.items = removeAt(n.items, i)
			return true, pred, succ
		}
		if len(n.children[i].items) <= minLocated {
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
			pred = t.removeMax(n.children[i])
			n.items[i] = pred
			return true, pred, succ
		}
		if i > 0 {
			pred = n.items[i-1]
		}
		if i < len(n.items) {
			succ = n.items[i]
		}
		n = n.children[i]
	}
}

// removeMax takes the greatest item out of the subtree of n, which has more than
// minLocated items, and returns it.
func (t *ltree[T]) removeMax(n *lnode[T]) located[T] {
	for {
		if len(n.children) == 0 {
			x := n.items[len(n.items)-1]
			n.items = removeAt(n.items, len(n.items)-1)
			return x
		}
		i := len(n.items)
		if len(n.children[i].items) <= minLocated {
			t.grow(n, i)
			continue
		}
		n = n.children[i]
	}
}

// grow gives child i of n more than minLocated items: an item from a sibling that can
// spare one, through n, or else the items of a sibling, merged with the item of n
// between them.
func (t *ltree[T]) grow(n *lnode[T], i int) {
	child := n.children[i]
	switch {
	case i > 0 && len(n.children[i-1].items) > minLocated:
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
	case i < len(n.items) && len(n.children[i+1].items) > minLocated:
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

// removeAt removes the item at index i of items, clearing the slot it frees.
func removeAt[T any](items []located[T], i int) []located[T] {
	copy(items[i:], items[i+1:])
	items[len(items)-1] = located[T]{}
	return items[:len(items)-1]
}

// lcursor walks a located tree in order from a position seek found, without a
// callback: a stack of the nodes on the path, each with the index of its next item.
type lcursor[T any] struct {
	path  [maxLocatedDepth]lframe[T]
	depth int
}

type lframe[T any] struct {
	n *lnode[T]
	i int
}

// seek puts the cursor at the first item of job seq or a later job.
func (c *lcursor[T]) seek(t *ltree[T], seq uint64) {
	c.depth = 0
	for n := t.root; n != nil; {
		i := n.seek(seq)
		c.path[c.depth] = lframe[T]{n, i}
		c.depth++
		if len(n.children) == 0 {
			break
		}
		n = n.children[i]
	}
}

// item returns the item at the cursor; ok is false past the last.
func (c *lcursor[T]) item() (x located[T], ok bool) {
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
func (c *lcursor[T]) next() {
	f := &c.path[c.depth-1]
	f.i++
	if len(f.n.children) == 0 {
		return
	}
	for n := f.n.children[f.i]; ; n = n.children[0] {
		c.path[c.depth] = lframe[T]{n, 0}
		c.depth++
		if len(n.children) == 0 {
			return
		}
	}
}

// seekItem puts the cursor at the first item not less than x: at x itself when the
// tree holds it.
func (c *lcursor[T]) seekItem(t *ltree[T], x located[T]) {
	c.depth = 0
	for n := t.root; n != nil; {
		i := n.find(x)
		c.path[c.depth] = lframe[T]{n, i}
		c.depth++
		if len(n.children) == 0 || (i < len(n.items) && n.items[i].e == x.e) {
			break
		}
		n = n.children[i]
	}
}
