package fairness

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"
)

// The plain way to answer Best, First and Ascend: search the node's and rack's trees
// for the job's items, as the index did before it kept each job's first entry per node
// and rack, and without the last node or rack remembered. The fast path must answer
// exactly as these do.

// slowFirstAt is the job's first entry in the tree of a node or rack, or nil.
func slowFirstAt[T any](pl *place[T], seq uint64) *PendingEntry[T] {
	if pl == nil {
		return nil
	}
	var c lcursor[T]
	c.seek(&pl.items, seq)
	if x, ok := c.item(); ok && x.job == seq {
		return x.e
	}
	return nil
}

// slowAscendTree calls fn with the job's items in the tree of a node or rack, but those
// on node skip, until fn returns false, and reports whether fn asked for more.
func slowAscendTree[T any](pl *place[T], seq uint64, skip string, l Level, fn func(*PendingEntry[T], Level) bool) bool {
	if pl == nil {
		return true
	}
	var c lcursor[T]
	c.seek(&pl.items, seq)
	for x, ok := c.item(); ok && x.job == seq; x, ok = c.item() {
		c.next()
		if !x.e.onNode(skip) && !fn(x.e, l) {
			return false
		}
	}
	return true
}

func (p *PendingIndex[T]) slowAscend(job, node, rack string, worst Level, fn func(*PendingEntry[T], Level) bool) {
	j := p.jobs[job]
	if j == nil {
		return
	}
	more := slowAscendTree(p.byNode.m[node], j.seq, "", NodeLocal, fn)
	if more && j.anyAnywhere() {
		j.anywhere.Ascend(func(x *PendingEntry[T]) bool {
			more = fn(x, NodeLocal)
			return more
		})
	}
	if !more || worst < RackLocal {
		return
	}
	if rack != "" {
		more = slowAscendTree(p.byRack.m[rack], j.seq, node, RackLocal, fn)
	}
	if !more || worst < OffSwitch {
		return
	}
	j.all.Ascend(func(x *PendingEntry[T]) bool {
		if len(x.Nodes) == 0 || x.onNode(node) || x.inRack(rack) {
			return true
		}
		return fn(x, OffSwitch)
	})
}

func (p *PendingIndex[T]) slowBest(job, node, rack string) (Level, bool) {
	j := p.jobs[job]
	switch {
	case j == nil:
		return 0, false
	case j.anyAnywhere() || slowFirstAt(p.byNode.m[node], j.seq) != nil:
		return NodeLocal, true
	case rack != "" && slowFirstAt(p.byRack.m[rack], j.seq) != nil:
		return RackLocal, true
	}
	return OffSwitch, true
}

// checkFirsts verifies every node's and rack's table of first entries against its tree:
// an entry for each job with items there, the job's first, and no other.
func (p *PendingIndex[T]) checkFirsts() error {
	for _, ps := range []*places[T]{&p.byNode, &p.byRack} {
		for key, pl := range ps.m {
			if pl.items.Len() == 0 {
				return fmt.Errorf("%s: an empty index kept", key)
			}
			jobs := 0
			var c lcursor[T]
			c.seek(&pl.items, 0)
			prev := uint64(0)
			for x, ok := c.item(); ok; x, ok = c.item() {
				c.next()
				if x.job == prev {
					continue
				}
				prev = x.job
				jobs++
				if f := pl.first.get(x.job); f != x.e {
					return fmt.Errorf("%s: job %d's first is %v, kept %v", key, x.job, x.e.ID, f)
				}
			}
			if pl.first.n != jobs {
				return fmt.Errorf("%s: %d jobs' firsts kept, %d jobs", key, pl.first.n, jobs)
			}
		}
	}
	return nil
}

type visit struct {
	id string
	l  Level
}

// TestPendingIndexFastPath: Best, First and Ascend (stopped early or not), and
// BestByRef, FirstByRef and AscendByRef through references kept across the whole
// sequence (one per job, one shared by all, one filled by another index), answer as the
// plain search of the trees does, on random sequences of inserts and deletes (of
// entries with up to three replicas over a few nodes in a few racks, enough for a
// node's tree to split), and every node's and rack's table of first entries holds each
// job's first.
func TestPendingIndexFastPath(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 150
	props := gopter.NewProperties(p)
	nodes := []Location{{"n0", "r0"}, {"n1", "r0"}, {"n2", "r1"}, {"n3", "r1"}, {"n4", "r2"}, {"n5", ""}}
	asked := append(slices.Clone(nodes), Location{"n0", "r1"}, Location{"n9", "r1"}, Location{"n9", "r9"}, Location{"n2", ""})
	props.Property("the fast path answers as the plain tree search",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 3))
			idx := NewPendingIndex[int]()
			var held []*PendingEntry[int]
			jobs := 1 + rng.IntN(40)
			target := 1 + rng.IntN(60)
			if rng.IntN(3) == 0 {
				target = 1 + rng.IntN(1500)
			}
			ops := 3*target + rng.IntN(100)
			// Racks as an owner may share them: one list per single-replica rack.
			oneRack := map[string][]string{}
			// References kept for the whole sequence, as an owner keeps them beside
			// its jobs: one per job, one shared by every job, one another index filled.
			refs := map[string]*JobRef[int]{}
			var roaming JobRef[int]
			other := NewPendingIndex[int]()
			var foreign JobRef[int]
			for op := range ops {
				if op == ops*2/3 {
					target /= 3
				}
				if len(held) > 0 && (len(held) >= target) == (rng.IntN(10) < 8) {
					k := rng.IntN(len(held))
					if err := idx.Delete(held[k]); err != nil {
						return fmt.Sprintf("delete %s: %v", held[k].ID, err)
					}
					held = slices.Delete(held, k, k+1)
				} else {
					e := &PendingEntry[int]{ID: fmt.Sprint("t", op), Job: fmt.Sprint("j", rng.IntN(jobs)),
						Priority: rng.IntN(3), Submitted: time.Duration(rng.IntN(20))}
					for range rng.IntN(4) {
						at := nodes[rng.IntN(len(nodes))]
						e.Nodes = append(e.Nodes, at.Node)
						e.Racks = append(e.Racks, at.Rack)
					}
					if len(e.Nodes) == 1 {
						r := e.Racks[0]
						if oneRack[r] == nil {
							oneRack[r] = []string{r}
						}
						e.Racks = oneRack[r]
					}
					if err := idx.Insert(e); err != nil {
						return fmt.Sprintf("insert %s: %v", e.ID, err)
					}
					held = append(held, e)
				}
				if op%53 != 0 && op != ops-1 {
					continue
				}
				if err := idx.checkFirsts(); err != nil {
					return fmt.Sprintf("after %d operations: %v", op, err)
				}
				for range 3 {
					job := fmt.Sprint("j", rng.IntN(jobs+1)) // one more: an unknown job
					// The same node and rack asked twice in a row too: remembered.
					if refs[job] == nil {
						refs[job] = &JobRef[int]{}
						_ = other.Insert(&PendingEntry[int]{ID: "x", Job: job})
						other.FirstByRef(&foreign, job, "", "", OffSwitch)
					}
					for _, at := range append(asked, asked[rng.IntN(len(asked))]) {
						if bad := agree(idx, job, at, rng.IntN(5), refs[job], &roaming, &foreign); bad != "" {
							return fmt.Sprintf("after %d operations: %s", op, bad)
						}
					}
				}
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}

// agree compares the fast and the plain answers for job at a node and rack: Best;
// First and Ascend, whole and stopped after stop visits (none: not stopped), at each
// worst level; and BestByRef, FirstByRef and AscendByRef through each of refs.
func agree(idx *PendingIndex[int], job string, at Location, stop int, refs ...*JobRef[int]) string {
	l, ok := idx.Best(job, at.Node, at.Rack)
	if wl, wok := idx.slowBest(job, at.Node, at.Rack); l != wl || ok != wok {
		return fmt.Sprintf("%s on %v: best %v %v, plainly %v %v", job, at, l, ok, wl, wok)
	}
	for i, ref := range refs {
		if bl, bok := idx.BestByRef(ref, job, at.Node, at.Rack); bl != l || bok != ok {
			return fmt.Sprintf("%s on %v through ref %d: best %v %v, Best %v %v", job, at, i, bl, bok, l, ok)
		}
	}
	for worst := NodeLocal; worst <= OffSwitch; worst++ {
		collect := func(ascend func(string, string, string, Level, func(*PendingEntry[int], Level) bool)) []visit {
			var out []visit
			ascend(job, at.Node, at.Rack, worst, func(e *PendingEntry[int], l Level) bool {
				out = append(out, visit{e.ID, l})
				return stop == 0 || len(out) < stop
			})
			return out
		}
		want := collect(idx.slowAscend)
		if got := collect(idx.Ascend); !slices.Equal(got, want) {
			return fmt.Sprintf("%s on %v up to %v, stopped after %d: %v, plainly %v", job, at, worst, stop, got, want)
		}
		e, l, ok := idx.First(job, at.Node, at.Rack, worst)
		if ok != (len(want) > 0) || ok && (e.ID != want[0].id || l != want[0].l) {
			return fmt.Sprintf("%s on %v up to %v: first %v %v %v, plainly %v", job, at, worst, e, l, ok, want)
		}
		for i, ref := range refs {
			byRef := func(job, node, rack string, worst Level, fn func(*PendingEntry[int], Level) bool) {
				idx.AscendByRef(ref, job, node, rack, worst, fn)
			}
			if got := collect(byRef); !slices.Equal(got, want) {
				return fmt.Sprintf("%s on %v up to %v, stopped after %d, through ref %d: %v, plainly %v", job, at, worst, stop, i, got, want)
			}
			e, l, ok := idx.FirstByRef(ref, job, at.Node, at.Rack, worst)
			if ok != (len(want) > 0) || ok && (e.ID != want[0].id || l != want[0].l) {
				return fmt.Sprintf("%s on %v up to %v through ref %d: first %v %v %v, plainly %v", job, at, worst, i, e, l, ok, want)
			}
		}
	}
	return ""
}
