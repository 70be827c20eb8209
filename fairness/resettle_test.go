package fairness

import (
	"fmt"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"
)

// TestResettleProperties: in a random tree of nested queues (random policies, weights
// and max shares) and jobs, a random subset of the walk's jobs, resettled after random
// changes to one of them (tasks started, released, added, withdrawn, allocated), is
// the walk's order afresh restricted to the subset: the changed job and its queues'
// blocks in their new places, the jobs the walk no longer visits dropped.
func TestResettleProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("Resettle = the walk afresh, restricted", prop.ForAll(func(s *script) string {
		tree, err := NewTree(twoDims, twoDims.MustTuple(20, 20), WithPolicy(policies[s.next(len(policies))]))
		if err != nil {
			return err.Error()
		}
		queues := []string{""}
		for i := range s.next(6) {
			id := fmt.Sprintf("q%d", i)
			if tree.AddQueue(queues[s.next(len(queues))], id, s.options(true)...) == nil {
				queues = append(queues, id)
			}
		}
		var jobs []string
		for i := range 2 + s.next(12) {
			id := fmt.Sprintf("j%d", i)
			opts := append(s.options(false), Slot(3*i+s.next(3)))
			if tree.AddJob(queues[s.next(len(queues))], id, opts...) != nil {
				continue
			}
			jobs = append(jobs, id)
			if n := s.next(4); n > 0 {
				_ = tree.AddPending(id, n, s.tuple(5).Scale(float64(n)))
			}
			for range s.next(3) {
				_ = tree.Allocate(id, s.tuple(4))
			}
		}
		if len(jobs) == 0 {
			return ""
		}
		for round := 0; !s.done(); round++ {
			var order []int
			tree.WalkSlots(func(i int) bool {
				if s.next(4) > 0 { // a job the pass keeps
					order = append(order, i)
				}
				return true
			})
			if len(order) == 0 {
				if tree.AddPending(jobs[s.next(len(jobs))], 1, s.tuple(5)) != nil {
					return ""
				}
				continue
			}
			at := s.next(len(order))
			changed := tree.slotted(order[at])
			if changed == nil {
				return fmt.Sprintf("round %d: slot %d has no job", round, order[at])
			}
			for range 1 + s.next(3) {
				switch s.next(5) {
				case 0, 1:
					_ = tree.Start(changed.ID, s.tuple(3), s.tuple(4))
				case 2:
					_ = tree.Release(changed.ID, s.tuple(3))
				case 3:
					_ = tree.AddPending(changed.ID, 1+s.next(2), s.tuple(5))
				default:
					_ = tree.Allocate(changed.ID, s.tuple(4))
				}
			}
			kept := map[int]bool{}
			for _, i := range order {
				kept[i] = true
			}
			var want []int
			tree.WalkSlots(func(i int) bool {
				if kept[i] {
					want = append(want, i)
				}
				return true
			})
			got := Resettle(tree, slices.Clone(order), at, func(i int) int { return i })
			if !slices.Equal(got, want) {
				return fmt.Sprintf("round %d: %s (slot %d) changed: %v resettled to %v, walk %v", round, changed.ID, order[at], order, got, want)
			}
		}
		return ""
	}, scripts(200)))
	props.TestingRun(t)
}

// The table by slot follows jobs added, given another slot and removed after the first
// Resettle built it.
func TestResettleSlotTable(t *testing.T) {
	tree, err := NewTree(twoDims, twoDims.MustTuple(20, 20))
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tree.AddJob("", "a", Slot(0)))
	must(tree.AddJob("", "b", Slot(1)))
	must(tree.AddPending("a", 1, twoDims.MustTuple(1, 1)))
	must(tree.AddPending("b", 2, twoDims.MustTuple(2, 2)))
	id := func(i int) int { return i }
	if got := Resettle(tree, []int{0, 1}, 0, id); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("nothing changed: %v", got)
	}
	must(tree.AddJob("", "c", Slot(5)))
	must(tree.AddPending("c", 1, twoDims.MustTuple(1, 1)))
	must(tree.UpdateJob("b", Slot(7)))
	must(tree.RemovePending("a", 1, twoDims.MustTuple(1, 1)))
	must(tree.RemoveJob("a"))
	if tree.slotted(0) != nil || tree.slotted(1) != nil || tree.slotted(5) != tree.jobs["c"] || tree.slotted(7) != tree.jobs["b"] {
		t.Fatalf("table by slot %v", tree.bySlot)
	}
	must(tree.Start("b", twoDims.MustTuple(1, 1), twoDims.MustTuple(9, 9)))
	if got := Resettle(tree, []int{7, 5}, 0, id); !slices.Equal(got, []int{5, 7}) {
		t.Fatalf("b, now richer, goes after c: %v", got)
	}
}
