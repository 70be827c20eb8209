package main

import (
	"math"
	"testing"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/stage"
)

// The paper's figures: by request the work ends at 7 units, by stages at ≈ 4.05.
func TestFig1(t *testing.T) {
	a := stage.MustProfile(schema,
		stage.Stage{Duration: time.Second, Demand: schema.MustTuple(1000, 2*gb)},
		stage.Stage{Duration: 2 * time.Second, Demand: schema.MustTuple(500, 1*gb)})
	b := stage.MustProfile(schema,
		stage.Stage{Duration: time.Second, Demand: schema.MustTuple(2200, 2*gb)},
		stage.Stage{Duration: 3 * time.Second, Demand: schema.MustTuple(3000, 3*gb)})
	profiles := map[string]stage.Profile{"A1": a, "A2": a, "B1": b}
	_, byRequest := run(profiles, []finegrain.Option{finegrain.WithPrediction(false)}, false)
	_, byStages := run(profiles, nil, true)
	if math.Abs(byRequest-7) > 1e-6 || math.Abs(byStages-4.05) > 1e-6 {
		t.Fatalf("work ends at %.4f by request and %.4f by stages, want 7 and 4.05", byRequest, byStages)
	}
}
