package plugins

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The pass's windowed minimum (segments taken once, then a binary search) is the
// timeline's MinFree for every window from now, empty and unbounded ones included.
func TestTetrisMinFreeIsMinFree(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	props.Property("minFree = Timeline.MinFree", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(seed))
		schema := resource.MustSchema(resource.CPU, resource.Memory)
		tl, err := stage.NewTimeline(schema, schema.MustTuple(16000, 64<<30))
		if err != nil {
			return false
		}
		sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
		for i := r.Intn(12); i > 0; i-- {
			var stages []stage.Stage
			for k := 1 + r.Intn(4); k > 0; k-- {
				stages = append(stages, stage.Stage{Duration: sec(1 + r.Intn(30)), Demand: schema.MustTuple(int64(r.Intn(3000)), int64(r.Intn(8))<<30)})
			}
			if r.Intn(4) == 0 {
				stages = append(stages, stage.Stage{Duration: stage.Forever, Demand: schema.MustTuple(0, 1<<30)})
			}
			_, _ = tl.Reserve(sec(r.Intn(60)), stage.MustProfile(schema, stages...), resource.Tuple{}) // a refusal changes nothing
		}
		now := sec(r.Intn(80))
		var p Tetris
		p.window(tl, now)
		for _, d := range []time.Duration{0, 1, sec(1 + r.Intn(100)), sec(r.Intn(10)) + 500*time.Millisecond, stage.Forever} {
			want := tl.MinFree(now, stage.AddSat(now, d))
			if got := p.minFree(now, d); got != want {
				t.Logf("now %v d %v: got %v, want %v", now, d, got, want)
				return false
			}
		}
		return true
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// A candidate's alignment, its factors taken apart (the task's when it is picked, the
// node's window once per choice), is match.Alignment's score over the timeline's
// MinFree to the last bit, on nodes with dimensions of no capacity, for windows from
// none to unbounded, ending where a segment of the timeline starts among them — those
// where the least free amount changes, those where it does not (which the window
// leaves out of its rows), and past the last change (the last row, without a search).
func TestTetrisAlignIsAlignment(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	props.Property("align = Alignment.Score(MinFree)", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(seed))
		schema := resource.MustSchema(resource.CPU, resource.Memory, resource.DiskIO)
		capacity := schema.MustTuple(int64(1000*(1+r.Intn(16))), int64(r.Intn(64))<<30, int64(r.Intn(2)*100))
		tl, err := stage.NewTimeline(schema, capacity)
		if err != nil {
			return false
		}
		sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
		demand := func() resource.Tuple {
			return schema.MustTuple(int64(r.Intn(20000)), int64(r.Intn(80))<<29, int64(r.Intn(150)))
		}
		for i := r.Intn(12); i > 0; i-- {
			var stages []stage.Stage
			for k := 1 + r.Intn(4); k > 0; k-- {
				stages = append(stages, stage.Stage{Duration: sec(1 + r.Intn(30)), Demand: demand().Min(capacity)})
			}
			_, _ = tl.Reserve(sec(r.Intn(60)), stage.MustProfile(schema, stages...), resource.Tuple{}) // a refusal changes nothing
		}
		now := sec(r.Intn(80))
		var p Tetris
		p.setNode(1, capacity)
		p.window(tl, now)
		ds := []time.Duration{0, 1, sec(1 + r.Intn(100)), sec(r.Intn(10)) + 500*time.Millisecond, stage.Forever}
		for _, sg := range p.segs { // windows ending where a segment starts, and just after
			ds = append(ds, sg.Start-now, sg.Start-now+1)
		}
		for _, d := range ds {
			pk := tetrisPick{peak: demand(), dur: d}
			p.factors(&pk, now)
			want := match.Alignment{}.Score(capacity, tl.MinFree(now, stage.AddSat(now, d)), pk.peak)
			if got := p.align(&pk); math.Float64bits(got) != math.Float64bits(want) {
				t.Logf("now %v d %v peak %v: got %v, want %v", now, d, pk.peak, got, want)
				return false
			}
		}
		return true
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// align is candidate pk's alignment with the node's least free amount over the
// candidate's window from now, as choose works it out: match.Alignment's score, with
// each factor taken once (the task's when it is picked, the node's with the window)
// and the same sum in the same order.
func (t *Tetris) align(pk *tetrisPick) float64 {
	last, from := t.lastRow()
	return alignRow(&pk.norm, t.rowWith(pk.end, last, from))
}
