package fairness

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// seeds are the seeds of the random sequences a property runs: gopter's own seed is
// fresh on every run and printed when a property fails, and each case is reproducible
// from the seed it shows.
func seeds() gopter.Gen { return gen.UInt64().WithShrinker(gopter.NoShrinker) }

func TestLocatedTreeProperties(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 40
	props := gopter.NewProperties(p)
	props.Property("a located tree holds what a sorted list holds, alike items included: Insert tells "+
		"the predecessor, Delete the neighbours, a cursor walks a job's items in order; its shape stays a B-tree",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 1))
			var tree ltree[struct{}]
			tree.free = &bfree[located[struct{}], locatedOrder[struct{}]]{degree: locatedDegree}
			var model []located[struct{}] // sorted
			jobs := 1 + rng.IntN(8)
			// Small trees, and trees of up to 8,000 items, enough for three levels of
			// 63-item nodes; the size grows to the target, then shrinks to a quarter of
			// it, so that nodes split, borrow and merge at every level.
			target := 1 + rng.IntN(200)
			if rng.IntN(2) == 0 {
				target = 1 + rng.IntN(8000)
			}
			ops := 4*target + rng.IntN(400)
			for op := range ops {
				if op == ops/2 {
					target /= 4 // shrink: nodes borrow and merge
				}
				grow := len(model) == 0 || (len(model) < target) == (rng.IntN(10) < 8)
				if grow {
					e := &PendingEntry[struct{}]{ID: fmt.Sprintf("t%05d", rng.IntN(100000)), Priority: rng.IntN(3),
						Submitted: time.Duration(rng.IntN(50))}
					x := located[struct{}]{job: uint64(1 + rng.IntN(jobs)), e: e}
					if len(model) > 0 && rng.IntN(4) == 0 { // alike to a held item
						y := model[rng.IntN(len(model))]
						x = located[struct{}]{job: y.job, e: &PendingEntry[struct{}]{ID: y.e.ID, Priority: y.e.Priority, Submitted: y.e.Submitted}}
					}
					i, found := slices.BinarySearchFunc(model, x, cmpLocated)
					if found && rng.IntN(4) == 0 {
						continue
					}
					// An item alike to held ones (a parked entry's and one inserted alike
					// to it) goes before them: i is the first of them.
					var want located[struct{}]
					if i > 0 {
						want = model[i-1]
					}
					if got, ok := tree.Insert(x); got != want || !ok {
						return fmt.Sprintf("Insert %v: predecessor %v %v, want %v", x, got, ok, want)
					}
					model = slices.Insert(model, i, x)
				} else {
					x := model[rng.IntN(len(model))]
					if rng.IntN(8) == 0 { // an item the tree does not hold
						x.e = &PendingEntry[struct{}]{ID: x.e.ID, Priority: x.e.Priority, Submitted: x.e.Submitted + 1}
					}
					// x's index, among items alike to it perhaps not the first; else where
					// it would go, before them.
					i, found := slices.Index(model, x), true
					if i < 0 {
						i, _ = slices.BinarySearchFunc(model, x, cmpLocated)
						found = false
					}
					var pred, succ located[struct{}]
					if i > 0 {
						pred = model[i-1]
					}
					if j := i; j < len(model) {
						if found {
							j++
						}
						if j < len(model) {
							succ = model[j]
						}
					}
					if ok, p, s := tree.Delete(x); ok != found || p != pred || s != succ {
						return fmt.Sprintf("Delete %v: %v, neighbours %v %v; want %v, %v %v", x, ok, p, s, found, pred, succ)
					}
					if found {
						model = slices.Delete(model, i, i+1)
					}
				}
				if op%97 == 0 || op == ops-1 {
					items, err := tree.check(cmpLocated, true)
					if err != nil {
						return err.Error()
					}
					if !slices.Equal(items, model) {
						return fmt.Sprintf("after %d operations the tree holds %d items, want %d", op, len(items), len(model))
					}
					for job := uint64(0); job <= uint64(jobs)+1; job++ {
						var c lcursor[struct{}]
						c.seek(&tree, job)
						i, _ := slices.BinarySearchFunc(model, job, func(x located[struct{}], job uint64) int {
							return cmpUint(x.job, job)
						})
						for x, ok := c.item(); ok; x, ok = c.item() {
							if i >= len(model) || model[i] != x {
								return fmt.Sprintf("cursor from job %d: item %v at %d", job, x, i)
							}
							c.next()
							i++
						}
						if i != len(model) {
							return fmt.Sprintf("cursor from job %d stopped at %d of %d", job, i, len(model))
						}
					}
				}
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpLocated(a, b located[struct{}]) int {
	if c := cmpUint(a.job, b.job); c != 0 {
		return c
	}
	return taskOrder(a.e, b.e)
}

// TestLocatedCursorEmpty: a cursor on an empty tree, or past the last job, is at the
// end.
func TestLocatedCursorEmpty(t *testing.T) {
	var tree ltree[int]
	var c lcursor[int]
	c.seek(&tree, 1)
	if _, ok := c.item(); ok {
		t.Fatal("an empty tree has an item")
	}
	tree.free = &bfree[located[int], locatedOrder[int]]{degree: locatedDegree}
	tree.Insert(located[int]{job: 1, e: &PendingEntry[int]{ID: "a"}})
	c.seek(&tree, 2)
	if _, ok := c.item(); ok {
		t.Fatal("an item past the last job")
	}
	if ok, _, _ := tree.Delete(located[int]{job: 1, e: &PendingEntry[int]{ID: "a"}}); ok {
		t.Fatal("removed an item the tree does not hold")
	}
}

func TestFirstsProperties(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 200
	props := gopter.NewProperties(p)
	props.Property("a firsts table answers as a map; it stays between a quarter and three quarters full",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 2))
			var f firsts[struct{}]
			model := map[uint64]*PendingEntry[struct{}]{}
			keys := uint64(1 + rng.IntN(2000))
			// Keys far apart too: a sequence number is a uint64.
			key := func() uint64 {
				k := uint64(rng.IntN(int(keys)))
				if rng.IntN(4) == 0 {
					k = k<<40 | k
				}
				return k
			}
			for op := range 200 + rng.IntN(6000) {
				k := key()
				switch {
				case rng.IntN(3) == 0:
					f.del(k)
					delete(model, k)
				case rng.IntN(4) == 0 && op > 1000: // drain, so that the table shrinks
					for k := range model {
						f.del(k)
						delete(model, k)
						if rng.IntN(2) == 0 {
							break
						}
					}
				default:
					e := &PendingEntry[struct{}]{}
					f.set(k, e)
					model[k] = e
				}
				if got := f.get(k); got != model[k] {
					return fmt.Sprintf("get %d after an operation on it: %p, want %p", k, got, model[k])
				}
				if f.n != len(model) {
					return fmt.Sprintf("%d slots in use, want %d", f.n, len(model))
				}
				if len(f.slots) > 0 && (4*f.n > 3*len(f.slots) || len(f.slots) > minFirsts && 4*f.n < len(f.slots)) {
					return fmt.Sprintf("%d of %d slots in use", f.n, len(f.slots))
				}
				if f.n == 0 && f.slots != nil {
					return "an empty table keeps its slots"
				}
			}
			for k, e := range model {
				if f.get(k) != e {
					return fmt.Sprintf("get %d: %p, want %p", k, f.get(k), e)
				}
			}
			used := 0
			for _, s := range f.slots {
				if s.e != nil {
					used++
					if model[s.job] != s.e {
						return fmt.Sprintf("a slot of %d not in the map", s.job)
					}
				}
			}
			if used != len(model) {
				return fmt.Sprintf("%d slots used, want %d", used, len(model))
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}
