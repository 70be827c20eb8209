package fairness

import "slices"

// located is one item of a node's or rack's index: the entry, after its job's sequence
// number, so that the search for a job's first task (a pivot) compares within the
// index's own memory and reads no entry.
type located[T any] struct {
	job uint64 // the job's sequence number: a job's tasks are contiguous
	e   *PendingEntry[T]
}

// locatedDegree is the degree of the node and rack trees: a node holds
// locatedDegree-1 to 2*locatedDegree-1 items (the root fewer), in an array sized to
// them (bfree.room: a quarter more, rounded up to the allocator's size class), so that
// the degree sets the depth and the work of a search, not the room a node wastes: at 32
// a node of 16-byte items takes at most a kilobyte, a search reads about six items of
// each, and three levels hold up to a quarter of a million items.
const locatedDegree = 32

// ltree is the tree of a node's or rack's located items, in locatedOrder. It may hold
// alike items: an entry parked (Park) stays, and an entry alike to it may come.
type ltree[T any] struct {
	btree[located[T], locatedOrder[T]]
}

// Delete takes x out of the tree and tells its neighbours in order, as btree.Delete.
// The descent looks for x only on the way to where an item alike to x would go first,
// so it misses an x that an alike item higher in the tree comes before (a parked entry
// and one inserted alike to it, the only alike items a node's or rack's tree holds).
// Then Delete takes the alike items out in order — the first of them is always on the
// descent's way — and puts back all but x, each before the ones put back after it, so
// that they keep their order: O(k log n) for k alike items, where a tree without them
// pays nothing.
func (t *ltree[T]) Delete(x located[T]) (held bool, pred, succ located[T]) {
	if held, pred, succ = t.btree.Delete(x); held || x.e == nil {
		return held, pred, succ
	}
	var run []located[T] // the items alike to x, in order
	var c lcursor[T]
	c.seekItem(t, x)
	for y, ok := c.item(); ok && y.job == x.job && taskOrder(y.e, x.e) == 0; y, ok = c.item() {
		run = append(run, y)
		c.next()
	}
	at := slices.Index(run, x)
	if at < 0 {
		return false, pred, succ
	}
	for i, y := range run {
		ok, p, s := t.btree.Delete(y)
		if !ok { // not reached: the first alike item is on the descent's way
			for k := i - 1; k >= 0; k-- {
				t.btree.Insert(run[k])
			}
			return false, located[T]{}, located[T]{}
		}
		if i == 0 && at == 0 {
			pred = p
		}
		if i == len(run)-1 && at == len(run)-1 {
			succ = s
		}
	}
	if at > 0 {
		pred = run[at-1]
	}
	if at < len(run)-1 {
		succ = run[at+1]
	}
	for i := len(run) - 1; i >= 0; i-- {
		if i != at {
			t.btree.Insert(run[i])
		}
	}
	return true, pred, succ
}

// locatedOrder is the order of located items: by job, then by the task order of their
// entries. A search goes past the items of earlier jobs without reading an entry.
type locatedOrder[T any] struct{}

// search finds x's place past the items of earlier jobs, found without reading an
// entry, then among the items of x's job. With exact it looks for x among them by
// address before it compares their entries (reads them), so that a removal from a leaf
// whose items of the job hold x reads no entry. Without, it looks at the last of them
// first (tasks tend to come in order: x goes after them, for the reading of one entry),
// and reports no match: a node's or rack's tree may hold alike items. An x without an
// entry is before the items of its job (lcursor.seek).
func (locatedOrder[T]) search(items []located[T], x located[T], exact bool) (int, bool) {
	lo, hi := seekJob(items, x.job), len(items)
	switch {
	case x.e == nil:
		return lo, false
	case exact:
		for hi = lo; hi < len(items) && items[hi].job == x.job; hi++ {
			if items[hi].e == x.e {
				return hi, true
			}
		}
	default:
		if x.job < ^uint64(0) {
			hi = seekJob(items, x.job+1)
		}
		if lo == hi || taskOrder(items[hi-1].e, x.e) < 0 {
			return hi, false
		}
		hi--
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if taskOrder(items[m].e, x.e) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, false
}

// seekJob returns the index of the first of items of job seq or a later job.
func seekJob[T any](items []located[T], seq uint64) int {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if items[m].job < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// lcursor walks a node's or rack's tree in order from a job's items or one item.
type lcursor[T any] struct {
	bcursor[located[T], locatedOrder[T]]
}

// seek puts the cursor at the first item of job seq or a later job.
func (c *lcursor[T]) seek(t *ltree[T], seq uint64) {
	c.bcursor.seek(&t.btree, located[T]{job: seq})
}

// seekItem puts the cursor at the first item not less than x: at x itself when the
// tree holds it and no item alike to it before it.
func (c *lcursor[T]) seekItem(t *ltree[T], x located[T]) {
	c.bcursor.seek(&t.btree, x)
}
