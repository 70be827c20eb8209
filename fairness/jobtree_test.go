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

func TestJobTreeProperties(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 40
	props := gopter.NewProperties(p)
	props.Property("a job tree holds what a sorted list holds: Insert refuses an entry alike to one "+
		"held, Delete takes only the entry itself, DeleteMin and Min the first, Ascend walks in "+
		"order and stops when told; its shape stays a B-tree",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 3))
			var tree jtree[struct{}]
			tree.free = &bfree[*PendingEntry[struct{}], entryOrder[struct{}]]{degree: jobDegree}
			var model []*PendingEntry[struct{}] // sorted
			entry := func() *PendingEntry[struct{}] {
				return &PendingEntry[struct{}]{ID: fmt.Sprintf("t%04d", rng.IntN(5000)), Priority: rng.IntN(3),
					Submitted: time.Duration(rng.IntN(20))}
			}
			// Small trees, and trees of up to 3,000 entries, enough for three levels of
			// 31-entry nodes; the size grows to the target, then shrinks to a quarter of
			// it, so that nodes split, borrow and merge at every level.
			target := 1 + rng.IntN(60)
			if rng.IntN(2) == 0 {
				target = 1 + rng.IntN(3000)
			}
			ops := 4*target + rng.IntN(200)
			for op := range ops {
				if op == ops/2 {
					target /= 4
				}
				grow := len(model) == 0 || (len(model) < target) == (rng.IntN(10) < 8)
				switch {
				case grow:
					x := entry()
					if len(model) > 0 && rng.IntN(8) == 0 { // alike to one held
						y := *model[rng.IntN(len(model))]
						x = &y
					}
					i, alike := slices.BinarySearchFunc(model, x, taskOrder[struct{}])
					var pred *PendingEntry[struct{}]
					if i > 0 && !alike {
						pred = model[i-1]
					}
					if got, ok := tree.Insert(x); ok == alike || got != pred {
						return fmt.Sprintf("Insert %+v: %v, predecessor %p; alike %v, want %p", *x, ok, got, alike, pred)
					}
					if !alike {
						model = slices.Insert(model, i, x)
					}
				case rng.IntN(4) == 0:
					want := model[0]
					if got, ok := tree.DeleteMin(); got != want || !ok {
						return fmt.Sprintf("DeleteMin %+v, want %+v", *got, *want)
					}
					model = model[1:]
				default:
					x := model[rng.IntN(len(model))]
					held := rng.IntN(8) != 0
					if !held { // alike, or not in the tree at all
						y := *x
						x = &y
						if rng.IntN(2) == 0 {
							x = entry()
						}
					}
					if got, _, _ := tree.Delete(x); got != held {
						return fmt.Sprintf("Delete %+v: %v, want %v", *x, got, held)
					}
					if held {
						i, _ := slices.BinarySearchFunc(model, x, taskOrder[struct{}])
						model = slices.Delete(model, i, i+1)
					}
				}
				if tree.Len() != len(model) {
					return fmt.Sprintf("Len %d, want %d", tree.Len(), len(model))
				}
				if m, ok := tree.Min(); (len(model) == 0) == ok || (m != nil && m != model[0]) {
					return fmt.Sprintf("Min %v, want the first of %d", m, len(model))
				}
				if op%53 == 0 || op == ops-1 {
					items, err := tree.check(taskOrder[struct{}], false)
					if err != nil {
						return err.Error()
					}
					if !slices.Equal(items, model) {
						return fmt.Sprintf("after %d operations %d entries, want %d", op, len(items), len(model))
					}
					stop := rng.IntN(len(model) + 1)
					var walked []*PendingEntry[struct{}]
					tree.Ascend(func(x *PendingEntry[struct{}]) bool {
						if len(walked) == stop {
							return false
						}
						walked = append(walked, x)
						return true
					})
					if !slices.Equal(walked, model[:stop]) {
						return fmt.Sprintf("Ascend stopped at %d walked %d", stop, len(walked))
					}
				}
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}
