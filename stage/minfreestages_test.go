package stage_test

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// perStage is f over the window of each stage of p started at start, clipped to the
// origin, for the stages whose window is not empty: what MinFreeStages should report,
// as "stage amount" lines.
func perStage(tl *stage.Timeline, start time.Duration, p stage.Profile, f func(from, to time.Duration) resource.Tuple) []string {
	var out []string
	for i := 0; i < p.Len(); i++ {
		from, to := max(stage.AddSat(start, p.Offset(i)), tl.Origin()), stage.AddSat(start, p.Offset(i+1))
		if from < to {
			out = append(out, fmt.Sprint(i, f(from, to)))
		}
	}
	return out
}

// walkMin is the least free amount over [from, to) found by Walk, step by step (the
// values WalkShort and WalkBelow report, summed from the root down).
func walkMin(tl *stage.Timeline) func(from, to time.Duration) resource.Tuple {
	return func(from, to time.Duration) resource.Tuple {
		m := resource.Tuple{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}
		tl.Walk(from, to, func(s stage.Segment) bool { m = m.Min(s.Free); return true })
		for k := schema.Len(); k < resource.MaxDims; k++ {
			m[k] = 0
		}
		return m
	}
}

// minFreeStages is what MinFreeStages reports, as perStage's lines, when fn stops it
// after the report of index stop (never, when stop < 0); a report after that is
// recorded as "called after stop".
func minFreeStages(tl *stage.Timeline, start time.Duration, p stage.Profile, stop int) []string {
	var got []string
	calls := 0
	tl.MinFreeStages(start, p, func(i int, m resource.Tuple) bool {
		calls++
		if calls > stop+1 && stop >= 0 {
			got = append(got, "called after stop")
		}
		got = append(got, fmt.Sprint(i, m))
		return len(got)-1 != stop
	})
	return got
}

// MinFreeStages on a deep tree (up to ~2,000 steps), on a grid of a nanosecond, a
// millisecond or a quarter second, with stages from a nanosecond to Forever, up to 300
// of them, from any start (before the origin, at it, near Forever), and amounts from
// tiny to the whole int64 range (compressed down to capacity − MaxInt64): per stage it
// equals MinFree and the least amount Walk reports. (The quarter-second grid of
// TestMinFreeStagesIsMinFreePerStage misses, e.g., an off-by-one nanosecond in the run
// of entries node gathers within a stage: nd.end(k, hi) <= stageEnd+1.)
func TestMinFreeStagesDeepAndHuge(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 200
	props := gopter.NewProperties(params)
	props.Property("MinFreeStages = MinFree = Walk per stage", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		huge := r.Intn(2) == 0
		capa := tup(1<<40, 1<<40)
		if huge {
			capa = tup([]int64{math.MaxInt64, 1 << 62, 1<<51 + 3}[r.Intn(3)], math.MaxInt64)
		}
		tl, _ := stage.NewTimeline(schema, capa)
		var hs []stage.Handle
		grid := []time.Duration{1, time.Millisecond, time.Second / 4}[r.Intn(3)]
		for i, n := 0, r.Intn(3000); i < n; i++ {
			st := make([]stage.Stage, 1+r.Intn(4))
			for k := range st {
				var d resource.Tuple
				if huge {
					d = tup([]int64{r.Int63n(capa[0]/4 + 1), r.Int63(), math.MaxInt64}[r.Intn(3)], r.Int63n(1<<62))
				} else {
					d = tup(int64(r.Intn(1000)), int64(r.Intn(1000)))
				}
				st[k] = stage.Stage{Duration: time.Duration(1+r.Intn(8)) * grid, Demand: d}
			}
			allow := resource.Tuple{}
			if r.Intn(3) == 0 {
				allow = tup(math.MaxInt64, 0)
			}
			// No Suspend/Reserve/Resume here: amounts taken past the int64 range saturate,
			// and then the tree's minima need not match its steps (see the match test
			// TestFineGrainedSaturatedTreeDoesNotFitSilently).
			switch x := r.Intn(30); {
			case x < 5 && len(hs) > 0:
				_ = tl.Release(hs[r.Intn(len(hs))])
			default:
				if h, err := tl.Reserve(time.Duration(r.Intn(2000))*grid, stage.MustProfile(schema, st...), allow); err == nil {
					hs = append(hs, h)
				}
			}
		}
		if r.Intn(4) == 0 {
			tl.Trim(time.Duration(r.Intn(500)) * grid)
		}
		for q := 0; q < 30; q++ {
			st := make([]stage.Stage, 1+r.Intn([]int{3, 20, 300}[r.Intn(3)]))
			unit := []time.Duration{1, grid / 3, grid, 10 * grid, 300 * grid}[r.Intn(5)]
			unit = max(unit, 1)
			for k := range st {
				st[k] = stage.Stage{Duration: time.Duration(1+r.Intn(8)) * unit, Demand: tup(1, 1)}
				switch r.Intn(40) {
				case 0:
					st[k].Duration = stage.Forever
				case 1:
					st[k].Duration = stage.Forever / 3
				}
			}
			p := stage.MustProfile(schema, st...)
			start := time.Duration(r.Intn(2500)) * grid
			switch r.Intn(12) {
			case 0:
				start = tl.Origin()
			case 1:
				start = stage.Forever - time.Duration(r.Intn(5))
			case 2:
				start = max(tl.Origin()-time.Duration(r.Intn(5)), 0)
			}
			want := perStage(tl, start, p, tl.MinFree)
			stop := -1
			if r.Intn(4) == 0 && len(want) > 0 {
				stop = r.Intn(len(want))
			}
			got := minFreeStages(tl, start, p, stop)
			walked := perStage(tl, start, p, walkMin(tl))
			if stop >= 0 {
				want = want[:stop+1]
				walked = walked[:stop+1]
			}
			if !slices.Equal(got, want) {
				return fmt.Sprintf("vs MinFree: %v from %v (origin %v, %d steps):\n got  %v\n want %v", p, start, tl.Origin(), tl.Len(), got, want)
			}
			if !slices.Equal(got, walked) {
				return fmt.Sprintf("vs Walk: %v from %v (origin %v, %d steps):\n got  %v\n walk %v", p, start, tl.Origin(), tl.Len(), got, walked)
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

// MinFreeStages reports, stage by stage, what MinFree says of each stage's window, on
// timelines deep enough for inner nodes (hundreds of steps), from starts before and after
// the origin, with stages short and long against the steps.
func TestMinFreeStagesIsMinFreePerStage(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("MinFreeStages equals MinFree over each stage's window", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		big := tup(1<<40, 1<<40)
		tl, _ := stage.NewTimeline(schema, big)
		for i, n := 0, r.Intn(400); i < n; i++ {
			st := make([]stage.Stage, 1+r.Intn(4))
			for k := range st {
				st[k] = stage.Stage{Duration: time.Duration(1+r.Intn(8)) * time.Second / 4, Demand: tup(int64(r.Intn(1000)), int64(r.Intn(1000)))}
			}
			_, _ = tl.Reserve(time.Duration(r.Intn(400))*time.Second/4, stage.MustProfile(schema, st...), resource.Tuple{})
		}
		if r.Intn(4) == 0 {
			tl.Trim(time.Duration(r.Intn(100)) * time.Second / 4)
		}
		for q := 0; q < 20; q++ {
			st := make([]stage.Stage, 1+r.Intn(10))
			unit := []time.Duration{time.Second / 8, time.Second, 10 * time.Second}[r.Intn(3)]
			for k := range st {
				st[k] = stage.Stage{Duration: time.Duration(1+r.Intn(8)) * unit, Demand: tup(1, 1)}
			}
			if r.Intn(10) == 0 {
				st[len(st)-1].Duration = stage.Forever
			}
			p := stage.MustProfile(schema, st...)
			start := time.Duration(r.Intn(500)) * time.Second / 4
			want := perStage(tl, start, p, tl.MinFree)
			stop := -1
			if r.Intn(4) == 0 && len(want) > 0 {
				stop = r.Intn(len(want))
			}
			got := minFreeStages(tl, start, p, stop)
			if stop >= 0 {
				want = want[:stop+1]
			}
			if !slices.Equal(got, want) {
				return fmt.Sprintf("%v from %v (origin %v):\n got  %v\n want %v", p, start, tl.Origin(), got, want)
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}
