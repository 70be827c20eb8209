package cluster

import (
	"math"
	"slices"
	"time"
)

// This file keeps the free-capacity index: the nodes in a B-tree by the free amount
// of the schema's first non-compressible dimension (memory in the standard schema),
// roomiest first, so that a push placement visits nodes from the roomiest down and
// stops at the first with too little.
//
// A node's key is worked out when its timeline changes (reindex) but the B-tree is
// updated lazily, when it is next read (ByFree): a node whose key changed and changed
// back in between — a task placed and handed back, a reservation rolled back — costs
// no B-tree update at all, and one that changed several times costs one. The keys read
// are those an eager index would hold, so the order is the same.

// refreshEvery is how much time may pass before every node's index key is recomputed.
// Keys change exactly on reserve and release; between those, stages and reservations
// ending raise a node's free amount without an event, so a key may understate it for
// up to this long (the node is then visited later, or missed by a push placement's
// early stop). A refresh recomputes only the keys of the nodes whose free amount at
// the clock has changed since (keyEnd, the due heap): the others' would come out the
// same.
const refreshEvery = time.Second

// IndexDim is the dimension the free index orders nodes by.
func (s *State) IndexDim() int { return s.keyDim }

// reindex works out a node's index key after its timeline changed: its free amount of
// the index dimension at the clock, and until when it holds (the due heap). The B-tree
// follows when it is next read (flush).
func (s *State) reindex(n *NodeInfo) {
	free, until := n.tl.FreeUntil(s.clock)
	n.want = free[s.keyDim]
	s.due.set(n, until)
	if n.want != n.key && !n.stale {
		n.stale = true
		s.stale = append(s.stale, n)
	}
}

// flush brings the B-tree up to date with the keys reindex worked out.
func (s *State) flush() {
	for i, n := range s.stale {
		n.stale = false
		if n.want != n.key {
			s.byFree.Delete(n.item())
			n.key = n.want
			s.byFree.ReplaceOrInsert(n.item())
		}
		s.stale[i] = nil
	}
	s.stale = s.stale[:0]
}

// refresh recomputes, at the clock, the index keys of the nodes whose free amount at
// the clock may have changed since their keys were worked out: those whose segment
// then has ended (keyEnd ≤ clock). Every other node's key is its free amount at the
// clock already.
func (s *State) refresh() {
	for len(s.due) > 0 && s.due[0].keyEnd <= s.clock {
		s.reindex(s.due[0]) // its segment now ends after the clock: it moves down
	}
}

// unindex takes node n out of the free index.
func (s *State) unindex(n *NodeInfo) {
	s.due.remove(n)
	s.byFree.Delete(n.item())
	if n.stale {
		n.stale = false
		s.stale = slices.DeleteFunc(s.stale, func(m *NodeInfo) bool { return m == n })
	}
}

// freeItem is a node's entry in the free index, with its key and the first bytes of its
// ID inline: ordering the index reads no node (but to break a tie of both).
type freeItem struct {
	key   int64
	idKey uint64
	node  *NodeInfo
}

// item is node n's entry in the free index, as it is indexed (n.key).
func (n *NodeInfo) item() freeItem { return freeItem{key: n.key, idKey: n.idKey, node: n} }

// byFreeLess orders the free index: larger keys first, ties in ID order (compared by
// the IDs' first eight bytes first, which order them as the IDs do).
func byFreeLess(a, b freeItem) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	if a.idKey != b.idKey {
		return a.idKey < b.idKey
	}
	return a.node.spec.ID < b.node.spec.ID
}

// idPrefix is the first eight bytes of id as a big-endian number, zero-padded: a
// smaller prefix means a smaller ID, and equal prefixes say nothing.
func idPrefix(id string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(id) {
			k |= uint64(id[i])
		}
	}
	return k
}

// ByFree calls fn with the nodes whose indexed free amount of IndexDim is at least
// need, roomiest first (ties in ID order), until fn returns false. The indexed amount
// is the node's free amount at the clock, refreshed as Advance says. It brings the
// index up to date first, so it must not run concurrently with another call; fn must
// not change the state.
func (s *State) ByFree(need int64, fn func(n *NodeInfo) bool) {
	if len(s.stale) > 0 {
		s.flush()
	}
	s.byFree.Ascend(func(it freeItem) bool {
		if it.key < need {
			return false
		}
		return fn(it.node)
	})
}

// FirstBelow returns the roomiest node whose indexed free amount of IndexDim is below
// need — the first node that ByFree(need) does not visit — and false when every node
// has at least need. It brings the index up to date first, as ByFree does.
func (s *State) FirstBelow(need int64) (*NodeInfo, bool) {
	if len(s.stale) > 0 {
		s.flush()
	}
	if need == math.MinInt64 {
		return nil, false
	}
	var found *NodeInfo
	s.byFree.AscendGreaterOrEqual(freeItem{key: need - 1, node: &belowPivot}, func(it freeItem) bool {
		found = it.node
		return false
	})
	return found, found != nil
}

// belowPivot is FirstBelow's pivot node: its empty ID orders before every node's of
// the same key.
var belowPivot NodeInfo

// dueHeap is the nodes by when their index key may next change (NodeInfo.keyEnd),
// soonest first: a binary heap, each node knowing its place (NodeInfo.dueAt, its
// index + 1; 0 when it is not in the heap).
type dueHeap []*NodeInfo

// set records that node n's key holds until until, adding n to the heap if need be.
func (h *dueHeap) set(n *NodeInfo, until time.Duration) {
	if n.dueAt == 0 {
		n.keyEnd = until
		*h = append(*h, n)
		n.dueAt = len(*h)
		h.up(len(*h) - 1)
		return
	}
	old := n.keyEnd
	n.keyEnd = until
	switch i := n.dueAt - 1; {
	case until < old:
		h.up(i)
	case until > old:
		h.down(i)
	}
}

// remove takes node n out of the heap.
func (h *dueHeap) remove(n *NodeInfo) {
	if n.dueAt == 0 {
		return
	}
	i, last := n.dueAt-1, len(*h)-1
	h.swap(i, last)
	(*h)[last] = nil
	*h = (*h)[:last]
	n.dueAt = 0
	if i < last {
		h.down(i)
		h.up(i)
	}
}

func (h dueHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].dueAt, h[j].dueAt = i+1, j+1
}

func (h dueHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].keyEnd <= h[i].keyEnd {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h dueHeap) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(h) && h[l].keyEnd < h[m].keyEnd {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].keyEnd < h[m].keyEnd {
			m = r
		}
		if m == i {
			return
		}
		h.swap(i, m)
		i = m
	}
}
