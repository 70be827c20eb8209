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

// has reports whether the set holds node k's seat, as seatOf(k) makes it now.
func (t *seatTree) has(k *tnode) bool {
	found := false
	t.Ascend(func(s seat) bool {
		found = s == seatOf(k)
		return !found
	})
	return found
}

// cmpSeats is cmpNodes for seats.
func cmpSeats(a, b seat) int { return cmpNodes(a.n, b.n) }

// cmpNodes is the model's order: compareEntries, then creation order.
func cmpNodes(a, b *tnode) int {
	if c := compareEntries(a.key, &a.Entry, b.key, &b.Entry); c != 0 {
		return c
	}
	return cmpUint(a.seq, b.seq)
}

// randomNode is a job node with a key, submission time and ID drawn from few values, so
// that ties at every level of the order are common.
func randomNode(rng *rand.Rand, seq uint64) *tnode {
	n := &tnode{seq: seq, slot: int(seq)}
	n.Kind = KindJob
	for i := range n.key {
		n.key[i] = float64(rng.IntN(3)) / 2
	}
	if rng.IntN(4) == 0 {
		n.key[0] = -n.key[0] // −0 and +0 are the same key
	}
	n.Submitted = time.Duration(rng.IntN(3))
	n.ID = fmt.Sprintf("j%d", rng.IntN(4))
	return n
}

func TestLessNodeIsCompareEntries(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("lessNode orders nodes as compareEntries then creation order do",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 2))
			for range 200 {
				a, b := randomNode(rng, uint64(rng.IntN(3))), randomNode(rng, uint64(rng.IntN(3)))
				if got, want := lessNode(a, b), cmpNodes(a, b) < 0; got != want {
					return fmt.Sprintf("lessNode(%v %+v, %v %+v) = %v, want %v", a.key, a.Entry, b.key, b.Entry, got, want)
				}
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}

func TestSeatTreeProperties(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 40
	props := gopter.NewProperties(p)
	props.Property("a seat tree holds what a sorted list holds: Min is its first, Ascend walks it "+
		"in order and stops when told, a node re-keyed while out goes to its new place, Rekey moves a "+
		"node to its place under its new key; its shape "+
		"stays a B-tree",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 1))
			var tree seatTree
			tree.free = &bfree[seat, seatOrder]{degree: seatDegree}
			var model []*tnode // sorted
			var out []*tnode   // not in the set
			// Small sets, and sets of up to 3,000 seats, enough for three levels of
			// 31-seat nodes; the size grows to the target, then shrinks to a quarter of
			// it, so that nodes split, borrow and merge at every level.
			target := 1 + rng.IntN(60)
			if rng.IntN(2) == 0 {
				target = 1 + rng.IntN(3000)
			}
			var seq uint64
			ops := 4*target + rng.IntN(200)
			for op := range ops {
				if op == ops/2 {
					target /= 4
				}
				switch grow := len(model) == 0 || (len(model) < target) == (rng.IntN(10) < 8); {
				case rng.IntN(3) == 0 && len(model) > 0:
					// Re-keyed in the set: a small change most of the time, so that a
					// seat often keeps its place or moves within its leaf.
					n := model[rng.IntN(len(model))]
					to := n.key
					if rng.IntN(4) == 0 {
						to = randomNode(rng, 0).key
					} else {
						to[rng.IntN(len(to))] += float64(rng.IntN(3)-1) / 2
					}
					i, _ := slices.BinarySearchFunc(model, n, cmpNodes)
					model = slices.Delete(model, i, i+1)
					tree.Rekey(n, to)
					if n.key != to {
						return fmt.Sprintf("Rekey left key %v, want %v", n.key, to)
					}
					i, _ = slices.BinarySearchFunc(model, n, cmpNodes)
					model = slices.Insert(model, i, n)
				case rng.IntN(50) == 0:
					tree.Clear()
					out = append(out, model...)
					model = model[:0]
				case grow:
					var n *tnode
					if len(out) > 0 && rng.IntN(2) == 0 {
						k := rng.IntN(len(out))
						n = out[k]
						out = slices.Delete(out, k, k+1)
						n.key = randomNode(rng, 0).key // re-keyed while out of the set
					} else {
						seq++
						n = randomNode(rng, seq)
					}
					i, _ := slices.BinarySearchFunc(model, n, cmpNodes)
					tree.Insert(seatOf(n))
					model = slices.Insert(model, i, n)
				default:
					var n *tnode
					found := rng.IntN(8) != 0 || len(out) == 0
					if found {
						n = model[rng.IntN(len(model))]
					} else {
						n = out[rng.IntN(len(out))] // a node the set does not hold
					}
					if ok, _, _ := tree.Delete(seatOf(n)); ok != found {
						return fmt.Sprintf("delete %v: %v, want %v", n.key, ok, found)
					}
					if found {
						i, _ := slices.BinarySearchFunc(model, n, cmpNodes)
						model = slices.Delete(model, i, i+1)
						out = append(out, n)
					}
				}
				if tree.Len() != len(model) {
					return fmt.Sprintf("Len %d, want %d", tree.Len(), len(model))
				}
				if s, ok := tree.Min(); ok != (len(model) > 0) || (ok && s.n != model[0]) {
					return fmt.Sprintf("Min %v %v, want the first of %d", s, ok, len(model))
				}
				if op%53 == 0 || op == ops-1 {
					items, err := tree.check(cmpSeats, false)
					if err != nil {
						return err.Error()
					}
					if len(items) != len(model) {
						return fmt.Sprintf("after %d operations %d seats, want %d", op, len(items), len(model))
					}
					for i, s := range items {
						if s != seatOf(model[i]) {
							return fmt.Sprintf("seat %d is %v, want %v", i, s, seatOf(model[i]))
						}
					}
					stop := rng.IntN(len(model) + 1)
					var walked []*tnode
					all := tree.Ascend(func(s seat) bool {
						if len(walked) == stop {
							return false
						}
						walked = append(walked, s.n)
						return true
					})
					if all != (stop == len(model)) || !slices.Equal(walked, model[:stop]) {
						return fmt.Sprintf("Ascend stopped at %d walked %d (all %v), want %d", stop, len(walked), all, len(model))
					}
				}
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}
