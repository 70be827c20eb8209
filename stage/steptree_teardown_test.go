package stage

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// A timeline built up to hundreds of steps by short
// reservations under long ones (whose stages cover whole subtrees, so that siblings
// carry pending adds) and then torn down by releases in random order: every removal
// that leaves a node short of minFill borrows from or merges with a sibling, whose add
// must be pushed first. TestStepTreeProperties misses a rebalance that forgets to push
// the left sibling's add (remove: left.push()); this checks the amounts, the tree and
// the merged steps after every release.
func TestStepTreeTearDown(t *testing.T) {
	for seed := int64(0); seed < 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		tl, m := freshTree()
		var hs []treeHeld
		for range 300 {
			d := time.Duration(1+r.Intn(3)) * time.Second
			if r.Intn(2) == 0 {
				d = time.Duration(20+r.Intn(200)) * time.Second
			}
			p := MustProfile(treeSchema, Stage{Duration: d, Demand: treeSchema.MustTuple(int64(1+r.Intn(5)), int64(r.Intn(5)), 0)})
			start := r.Intn(treeHorizon - 250)
			if h, err := tl.Reserve(time.Duration(start)*time.Second, p, treeSchema.MustTuple(0, 0, 0)); err == nil {
				m.apply(start, p, -1)
				hs = append(hs, treeHeld{h, start, p})
			}
		}
		for len(hs) > 0 {
			j := r.Intn(len(hs))
			if err := tl.Release(hs[j].h); err != nil {
				t.Fatal(err)
			}
			m.apply(hs[j].start, hs[j].p, +1)
			what := fmt.Sprintf("seed %d, release of %d (%d left)", seed, hs[j].h, len(hs)-1)
			hs = append(hs[:j], hs[j+1:]...)
			if err := tl.checkTree(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for s := 0; s < treeHorizon; s++ {
				if got := tl.FreeAt(time.Duration(s) * time.Second); got != m[s] {
					t.Fatalf("%s: free at %ds %v, model %v", what, s, got, m[s])
				}
			}
			var prev *Segment
			tl.Walk(0, Forever, func(s Segment) bool {
				if prev != nil && prev.Free == s.Free {
					t.Fatalf("%s: steps at %v and %v hold the same amount %v", what, prev.Start, s.Start, s.Free)
				}
				prev = &s
				return true
			})
		}
		if tl.Len() != 1 || tl.FreeAt(0) != treeCapacity {
			t.Fatalf("seed %d: all released, %d steps, free %v", seed, tl.Len(), tl.FreeAt(0))
		}
	}
}
