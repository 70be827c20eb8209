package match

import (
	"math"
	"testing"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Once Resume has taken amounts past the int64 range (stage.Timeline: "they saturate
// and are no longer exact"), the step tree's minima and its steps can disagree: here
// MinFree over [10 s, 20 s) is −3 while every step there has about 996 cpu. The stage
// minimum then says stage 0 is short of its floor, WalkBelow finds no step that is, and
// byStage must not stop there with a fit: stage 1 demands 5000 cpu of a 1000-cpu server.
func TestFineGrainedSaturatedTreeDoesNotFitSilently(t *testing.T) {
	schema := resource.MustSchema(resource.CPU)
	tl, err := stage.NewTimeline(schema, schema.MustTuple(1000))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 64; i++ { // 128 steps: a root over several leaves
		p := stage.MustProfile(schema, stage.Stage{Duration: time.Second / 2, Demand: schema.MustTuple(int64(1 + i%2))})
		if _, err := tl.Reserve(time.Duration(i)*time.Second, p, resource.Tuple{}); err != nil {
			t.Fatal(err)
		}
	}
	all := schema.MustTuple(math.MaxInt64)
	huge := stage.MustProfile(schema, stage.Stage{Duration: 64 * time.Second, Demand: schema.MustTuple(math.MaxInt64 - 2)})
	r1, err := tl.Reserve(0, huge, all)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Suspend(r1); err != nil {
		t.Fatal(err)
	}
	r2, err := tl.Reserve(0, huge, all)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.Resume(r1); err != nil { // 1000 − 2 × (MaxInt64 − 2): saturates
		t.Fatal(err)
	}
	if err := tl.Release(r2); err != nil {
		t.Fatal(err)
	}
	task := stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(1)},
		stage.Stage{Duration: 200 * time.Second, Demand: schema.MustTuple(5000)})
	for _, a := range []Allowance{nil, Fixed{}} {
		s := Server{ID: "s", Timeline: tl, Allowance: a}
		got, want := FineGrained{}.Match(s, 10*time.Second, task), refFineGrained(s, 10*time.Second, task)
		if got != want {
			t.Errorf("allowance %v:\n got  %v\n want %v", a, got, want)
		}
	}
}
