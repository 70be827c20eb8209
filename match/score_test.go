package match_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

func TestScorers(t *testing.T) {
	// cpu: capacity 1000, free 600, demand 100 → utilisation after 0.5
	// mem: capacity 1000, free 300, demand 200 → utilisation after 0.9 (dominant: 0.2)
	// net: capacity 0 → ignored
	capacity, free, demand := tup(1000, 1000, 0), tup(600, 300, 0), tup(100, 200, 0)
	cpuOnly := resource.Mask(1)
	for _, tc := range []struct {
		name string
		s    match.Scorer
		want float64
	}{
		{"least allocated", match.LeastAllocated{}, (0.5 + 0.1) / 2},
		{"least allocated, cpu only", match.LeastAllocated{Dims: cpuOnly}, 0.5},
		{"most allocated", match.MostAllocated{}, (0.5 + 0.9) / 2},
		{"most allocated, cpu only", match.MostAllocated{Dims: cpuOnly}, 0.5},
		{"best fit on the dominant dimension", match.BestFit{}, 0.9},
		{"best fit, cpu only", match.BestFit{Dims: cpuOnly}, 0.5},
		{"balanced", match.BalancedAllocation{}, 1 - 2*0.2},
		{"balanced, one dimension", match.BalancedAllocation{Dims: cpuOnly}, 1},
		{"alignment", match.Alignment{}, (0.1*0.6 + 0.2*0.3) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, tc.s.Score(capacity, free, demand), 1e-12)
			assert.Zero(t, tc.s.Score(resource.Tuple{}, free, demand), "no capacity: nothing to score")
		})
	}
	// Shares are clamped: a compressed (negative) free amount counts as full use.
	assert.Equal(t, 0.0, match.LeastAllocated{}.Score(tup(1000, 0, 0), resource.Tuple{-100}, tup(50, 0, 0)))
	assert.Equal(t, 1.0, match.MostAllocated{}.Score(tup(1000, 0, 0), resource.Tuple{-100}, tup(50, 0, 0)))
}

func TestWeighted(t *testing.T) {
	capacity, free, demand := tup(1000, 1000, 0), tup(600, 300, 0), tup(100, 200, 0)
	w, err := match.NewWeighted([]match.Scorer{match.LeastAllocated{}, match.MostAllocated{}}, []float64{3, 1})
	require.NoError(t, err)
	assert.InDelta(t, (3*0.3+1*0.7)/4, w.Score(capacity, free, demand), 1e-12)
	assert.Zero(t, match.Weighted{}.Score(capacity, free, demand), "the zero Weighted scores 0")

	for _, tc := range []struct {
		name    string
		scorers []match.Scorer
		weights []float64
		want    error
	}{
		{"no scorer", nil, nil, match.ErrBadWeight},
		{"lengths differ", []match.Scorer{match.BestFit{}}, []float64{1, 2}, match.ErrBadWeight},
		{"nil scorer", []match.Scorer{nil}, []float64{1}, match.ErrNilArgument},
		{"zero weight", []match.Scorer{match.BestFit{}}, []float64{0}, match.ErrBadWeight},
		{"negative weight", []match.Scorer{match.BestFit{}}, []float64{-1}, match.ErrBadWeight},
		{"NaN weight", []match.Scorer{match.BestFit{}}, []float64{math.NaN()}, match.ErrBadWeight},
		{"infinite weight", []match.Scorer{match.BestFit{}}, []float64{math.Inf(1)}, match.ErrBadWeight},
		{"weights that sum to infinity", []match.Scorer{match.BestFit{}, match.BestFit{}}, []float64{math.MaxFloat64, math.MaxFloat64}, match.ErrBadWeight},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := match.NewWeighted(tc.scorers, tc.weights)
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func TestChooseServer(t *testing.T) {
	mk := func(id string, cpuUsed int64) match.Server {
		tl := timeline(t, tup(4000, 8000, 1000))
		if cpuUsed > 0 {
			reserve(t, tl, 0, prof(st(10, cpuUsed, 0, 0)), resource.Tuple{})
		}
		return match.Server{ID: id, Timeline: tl}
	}
	task := match.Work{ID: "t", Profile: prof(st(2, 1000, 1000, 0))}
	tight, loose, full := mk("tight", 2500), mk("loose", 500), mk("full", 3500)
	servers := []match.Server{full, tight, loose}

	p := match.ChooseServer(servers, 0, task, match.FineGrained{}, nil, match.MostAllocated{})
	assert.Equal(t, 1, p.Index)
	assert.Equal(t, "tight", p.Server)
	assert.Equal(t, match.Fit, p.Result.Code)
	p = match.ChooseServer(servers, 0, task, match.FineGrained{}, nil, match.LeastAllocated{})
	assert.Equal(t, "loose", p.Server)
	assert.InDelta(t, match.LeastAllocated{}.Score(tup(4000, 8000, 1000), tup(3500, 8000, 1000), task.Profile.Peak()), p.Score, 1e-12)

	// Ties go to the smaller ID, whatever the order.
	p = match.ChooseServer([]match.Server{mk("z", 0), mk("y", 0), mk("x", 3500)}, 0, task, match.FineGrained{}, nil, match.Alignment{})
	assert.Equal(t, "y", p.Server)
	assert.Equal(t, 1, p.Index)

	// Nothing fits: the closest server's reason (the most free, whatever the order).
	big := match.Work{ID: "big", Profile: prof(st(1, 5000, 0, 0))}
	for _, order := range [][]match.Server{servers, {loose, tight, full}, {tight, full, loose}} {
		p = match.ChooseServer(order, 0, big, match.FineGrained{}, nil, match.LeastAllocated{})
		assert.Equal(t, -1, p.Index)
		assert.Equal(t, match.NoRoom, p.Result.Code)
		assert.Equal(t, "loose", p.Closest)
		assert.Equal(t, int64(3500), p.Result.Free, "the loose server has 3500 free")
		assert.Equal(t, int64(1500), p.Result.Shortfall())
	}
	// A fit after a closer refusal keeps the fit.
	p = match.ChooseServer([]match.Server{full, loose}, 0, task, match.FineGrained{}, nil, match.LeastAllocated{})
	assert.Equal(t, "loose", p.Server)
	assert.Empty(t, p.Closest)

	// No servers.
	p = match.ChooseServer(nil, 0, task, match.FineGrained{}, nil, match.LeastAllocated{})
	assert.Equal(t, -1, p.Index)
	assert.ErrorIs(t, p.Result.Err(), match.ErrNoServers)

	// A nil matcher or scorer is an Invalid result, not a panic.
	p = match.ChooseServer(servers, 0, task, nil, nil, match.LeastAllocated{})
	assert.Equal(t, -1, p.Index)
	assert.ErrorIs(t, p.Result.Err(), match.ErrNilArgument)
	assert.ErrorContains(t, p.Result.Err(), "matcher")
	p = match.ChooseServer(servers, 0, task, match.FineGrained{}, nil, nil)
	assert.Equal(t, -1, p.Index)
	assert.ErrorIs(t, p.Result.Err(), match.ErrNilArgument)
	assert.ErrorContains(t, p.Result.Err(), "scorer")

	// The QoS check removes a server: tight would need compression that makes R late.
	ten := tenPercent(t)
	for i := range servers {
		servers[i].Allowance = ten
	}
	late := match.Running{Work: match.Work{ID: "R", Profile: prof(st(10, 2500, 0, 0)), Deadline: sec(10)}}
	dc := match.DeadlineCheck{Running: func(id string) []match.Running {
		if id == "tight" {
			return []match.Running{late}
		}
		return nil
	}}
	wide := match.Work{ID: "w", Profile: prof(st(2, 1800, 0, 0))} // squeezes tight by 300
	p = match.ChooseServer(servers, 0, wide, match.FineGrained{}, nil, match.MostAllocated{})
	require.Equal(t, "tight", p.Server)
	require.Equal(t, match.FitCompressed, p.Result.Code)
	p = match.ChooseServer(servers, 0, wide, match.FineGrained{}, dc, match.MostAllocated{})
	assert.Equal(t, "loose", p.Server)

	// A NaN score ranks last.
	p = match.ChooseServer([]match.Server{mk("a", 0), mk("b", 0)}, 0, task, match.FineGrained{}, nil, nanScorer{new(int)})
	assert.Equal(t, "b", p.Server)
}

// ScoreServer and WindowFree answer a nil scorer or a server without a timeline as
// ChooseServer does, by placing nothing there: −∞, and nothing free. They once
// panicked.
func TestScoreServerNil(t *testing.T) {
	tl := timeline(t, tup(4000, 8000, 1000))
	p := prof(st(2, 1000, 1000, 0))
	seen := match.Result{Code: match.Fit, MinFree: tup(100, 200, 300), MinFreeKnown: true}
	for _, tc := range []struct {
		name string
		sc   match.Scorer
		s    match.Server
		p    stage.Profile
		r    match.Result
	}{
		{"nil scorer", nil, match.Server{ID: "a", Timeline: tl}, p, match.Result{}},
		{"nil scorer, window seen", nil, match.Server{ID: "a", Timeline: tl}, p, seen},
		{"nil timeline", match.LeastAllocated{}, match.Server{ID: "a"}, p, match.Result{}},
		{"nil timeline, window seen", match.LeastAllocated{}, match.Server{ID: "a"}, p, seen},
		{"nil timeline, zero profile", match.MostAllocated{}, match.Server{}, stage.Profile{}, match.Result{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, math.Inf(-1), match.ScoreServer(tc.sc, tc.s, 0, tc.p, tc.r))
		})
	}
	assert.Equal(t, resource.Tuple{}, match.WindowFree(nil, 0, p, match.Result{}), "a nil timeline has nothing free")
	assert.Equal(t, resource.Tuple{}, match.WindowFree(nil, 0, stage.Profile{}, match.Result{}))
	assert.Equal(t, seen.MinFree, match.WindowFree(nil, 0, p, seen), "the result's window, as ever")
	// Valid input scores as before.
	want := match.LeastAllocated{}.Score(tl.Capacity(), tl.MinFree(0, sec(2)), p.Peak())
	assert.Equal(t, want, match.ScoreServer(match.LeastAllocated{}, match.Server{ID: "a", Timeline: tl}, 0, p, match.Result{}))
}

// nanScorer scores NaN on its first call and 0 afterwards.
type nanScorer struct{ calls *int }

func (s nanScorer) Score(resource.Tuple, resource.Tuple, resource.Tuple) float64 {
	*s.calls++
	if *s.calls == 1 {
		return math.NaN()
	}
	return 0
}
