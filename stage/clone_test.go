package stage_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/stage"
)

// TestCloneIndependent: a clone answers as its original did when it was taken, while
// the original goes on changing; and the same changes made to both afterwards keep
// them equal (the clone is a timeline in its own right: reservations, suspensions and
// handles included). Random scenarios of reservations (many, so that the step tree
// grows inner nodes, or few, so that it is one small leaf), releases, suspensions,
// resumptions and trims.
func TestCloneIndependent(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("a clone keeps the state it was taken in and changes like its original", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		orig, err := stage.NewTimeline(schema, capacity)
		if err != nil {
			return err.Error()
		}
		var handles []stage.Handle
		step := func(tl *stage.Timeline, r *rand.Rand, hs *[]stage.Handle) {
			switch op := r.Intn(10); {
			case op < 6:
				if h, err := tl.Reserve(time.Duration(r.Intn(horizon))*time.Second/2, randProfile(r), randAllow(r)); err == nil {
					*hs = append(*hs, h)
				}
			case op < 8 && len(*hs) > 0:
				i := r.Intn(len(*hs))
				_ = tl.Release((*hs)[i])
				*hs = append((*hs)[:i], (*hs)[i+1:]...)
			case op < 9 && len(*hs) > 0:
				h := (*hs)[r.Intn(len(*hs))]
				if tl.Suspend(h) != nil {
					_ = tl.Resume(h)
				}
			default:
				tl.Trim(tl.Origin() + time.Duration(r.Intn(2))*time.Second)
			}
		}
		// Many steps, so that the tree grows inner nodes, or a few, so that it is one
		// small leaf, which Clone lays out in one block (smallTimeline).
		steps := 60 + r.Intn(200)
		if r.Intn(3) == 0 {
			steps = r.Intn(5)
		}
		for i := 0; i < steps; i++ {
			step(orig, r, &handles)
		}
		clone := orig.Clone()
		taken := orig.AppendSegments(nil, 0, stage.Forever)
		if got := clone.AppendSegments(nil, 0, stage.Forever); fmt.Sprint(got) != fmt.Sprint(taken) {
			return fmt.Sprintf("clone %v, original %v", got, taken)
		}
		if clone.Version() != orig.Version() || clone.Reservations() != orig.Reservations() || clone.Len() != orig.Len() || clone.Origin() != orig.Origin() {
			return "clone's version, reservations, length or origin differ"
		}
		// The original changes; the clone does not.
		mark := r.Int63()
		r1 := rand.New(rand.NewSource(mark))
		h1 := append([]stage.Handle(nil), handles...)
		for i := 0; i < 40; i++ {
			step(orig, r1, &h1)
		}
		if got := clone.AppendSegments(nil, 0, stage.Forever); fmt.Sprint(got) != fmt.Sprint(taken) {
			return fmt.Sprintf("the clone changed with its original: %v, was %v", got, taken)
		}
		// The same changes made to the clone bring it where the original went.
		r2 := rand.New(rand.NewSource(mark))
		h2 := append([]stage.Handle(nil), handles...)
		for i := 0; i < 40; i++ {
			step(clone, r2, &h2)
		}
		want, got := orig.AppendSegments(nil, 0, stage.Forever), clone.AppendSegments(nil, 0, stage.Forever)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("after the same changes: clone %v, original %v", got, want)
		}
		for from := time.Duration(0); from < horizon*time.Second; from += 3 * time.Second {
			to := from + 5*time.Second
			if orig.MinFree(from, to) != clone.MinFree(from, to) {
				return fmt.Sprintf("MinFree over [%v, %v): clone %v, original %v", from, to, clone.MinFree(from, to), orig.MinFree(from, to))
			}
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// BenchmarkClone copies a timeline of 1,000 segments.
func BenchmarkClone(b *testing.B) {
	tl, err := stage.NewTimeline(schema, tup(1<<40, 1<<40))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		if _, err := tl.Reserve(time.Duration(2*i)*time.Second, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)}), tup(0, 0)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = tl.Clone()
	}
}
