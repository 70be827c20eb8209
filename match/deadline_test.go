package match_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// deadlineScenario: R1 runs from 0 demanding cpu 2000 for 2 s, then 1000 for 2 s. The
// candidate demands 2400 cpu for 1 s from 0: 400 squeezed (10% of 4000), every task
// on cpu compressed by 400/4400 over [0, 1).
func deadlineScenario(t *testing.T) (match.Server, match.Running, match.Work, match.Result) {
	tl := timeline(t, tup(4000, 8000, 1000))
	r1 := match.Running{Work: match.Work{ID: "R1", Profile: prof(st(2, 2000, 1000, 0), st(2, 1000, 1000, 0))}}
	reserve(t, tl, 0, r1.Profile, resource.Tuple{})
	server := match.Server{ID: "n1", Timeline: tl, Allowance: tenPercent(t)}
	cand := match.Work{ID: "new", Profile: prof(st(1, 2400, 0, 0))}
	r := match.FineGrained{}.Match(server, 0, cand.Profile)
	require.Equal(t, match.FitCompressed, r.Code)
	return server, r1, cand, r
}

func TestDeadlineCheck(t *testing.T) {
	rc := 400.0 / 4400
	r1Finish := 2/(1-rc) + 2 // eq. 15: stage 0 compressed, stage 1 not
	candFinish := 1 / (1 - rc)
	for _, tc := range []struct {
		name         string
		r1, cand     float64 // deadlines in seconds, 0 for none
		want         match.Code
		task         string
		finish       float64
		compressedAt int
	}{
		{name: "no deadlines", want: match.FitCompressed},
		{name: "both met", r1: 4.5, cand: 1.2, want: match.FitCompressed},
		{name: "running task late", r1: 4.1, want: match.DeadlineMissed, task: "R1", finish: r1Finish},
		{name: "new task late", r1: 4.5, cand: 1.05, want: match.DeadlineMissed, task: "new", finish: candFinish},
		{name: "running checked first", r1: 4.1, cand: 1.05, want: match.DeadlineMissed, task: "R1", finish: r1Finish},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, r1, cand, r := deadlineScenario(t)
			r1.Deadline, cand.Deadline = sec(tc.r1), sec(tc.cand)
			dc := match.DeadlineCheck{Running: func(id string) []match.Running {
				assert.Equal(t, "n1", id)
				return []match.Running{r1}
			}}
			got := dc.CheckQoS(server, 0, cand, r)
			assert.Equal(t, tc.want, got.Code, "%v", got)
			if tc.want == match.DeadlineMissed {
				assert.Equal(t, tc.task, got.Task)
				assert.InDelta(t, tc.finish, got.Finish.Seconds(), 1e-6)
				assert.Equal(t, 0, got.Stage, "the first compressed stage")
				assert.Positive(t, got.Late())
				assert.ErrorIs(t, got.Err(), match.ErrDeadline)
				assert.Contains(t, got.String(), tc.task)
			} else {
				assert.Equal(t, r, got, "a passing check returns the result untouched")
			}
		})
	}
}

func TestDeadlineCheckOnlyUnderCompression(t *testing.T) {
	server, r1, _, _ := deadlineScenario(t)
	r1.Deadline = 1 // hopeless, but only checked when the new task compresses
	called := false
	dc := match.DeadlineCheck{Running: func(string) []match.Running { called = true; return []match.Running{r1} }}
	small := match.Work{ID: "small", Profile: prof(st(1, 1000, 0, 0))}
	r := match.FineGrained{}.Match(server, 0, small.Profile)
	require.Equal(t, match.Fit, r.Code)
	assert.Equal(t, r, dc.CheckQoS(server, 0, small, r))
	assert.False(t, called, "no compression: the check does not run")
	noRoom := match.Result{Code: match.NoRoom}
	assert.Equal(t, noRoom, dc.CheckQoS(server, 0, small, noRoom))
	// A nil Running means no running tasks.
	_, _, cand, r := deadlineScenario(t)
	assert.Equal(t, r, match.DeadlineCheck{}.CheckQoS(server, 0, cand, r))
}

// A running task that does not demand the compressed dimension is not slowed.
func TestDeadlineCheckOtherDimension(t *testing.T) {
	server, _, cand, r := deadlineScenario(t)
	memOnly := match.Running{Work: match.Work{ID: "mem", Profile: prof(st(2, 0, 1000, 0)), Deadline: sec(2)}}
	reserve(t, server.Timeline, 0, memOnly.Profile, resource.Tuple{})
	dc := match.DeadlineCheck{Running: func(string) []match.Running { return []match.Running{memOnly} }}
	assert.Equal(t, match.FitCompressed, dc.CheckQoS(server, 0, cand, r).Code)
}

func TestDeadlineCheckErrors(t *testing.T) {
	server, r1, cand, r := deadlineScenario(t)
	other := stage.MustProfile(resource.Standard(), stage.Stage{Duration: time.Second, Demand: resource.Tuple{1}})
	for _, tc := range []struct {
		name    string
		cand    match.Work
		running []match.Running
		want    error
	}{
		{"negative deadline", match.Work{ID: "x", Profile: cand.Profile, Deadline: -1}, nil, match.ErrBadTask},
		{"running negative deadline", cand, []match.Running{{Work: match.Work{ID: "r", Profile: r1.Profile, Deadline: -5}}}, match.ErrBadTask},
		{"running schema mismatch", cand, []match.Running{{Work: match.Work{ID: "r", Profile: other, Deadline: 5}}}, resource.ErrSchemaMismatch},
		{"running empty profile", cand, []match.Running{{Work: match.Work{ID: "r", Deadline: 5}}}, stage.ErrEmptyProfile},
		{"candidate schema mismatch", match.Work{ID: "x", Profile: other}, nil, resource.ErrSchemaMismatch},
		{"candidate empty profile", match.Work{ID: "x"}, nil, stage.ErrEmptyProfile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc := match.DeadlineCheck{Running: func(string) []match.Running { return tc.running }}
			got := dc.CheckQoS(server, 0, tc.cand, r)
			assert.Equal(t, match.Invalid, got.Code)
			assert.ErrorIs(t, got.Err(), tc.want)
		})
	}
}

func TestTheoreticalDuration(t *testing.T) {
	p := prof(st(2, 1, 0, 0), st(2, 1, 0, 0), st(1, 1, 0, 0))
	d, err := match.TheoreticalDuration(p, []float64{0.5, 0, 0.2})
	require.NoError(t, err)
	assert.Equal(t, sec(4+2+1.25), d, "eq. 15: 2/(1−0.5) + 2 + 1/(1−0.2)")
	for _, tc := range []struct {
		name   string
		p      stage.Profile
		ratios []float64
		want   error
	}{
		{"empty profile", stage.Profile{}, nil, stage.ErrEmptyProfile},
		{"too few ratios", p, []float64{0, 0}, resource.ErrInvalidRatio},
		{"ratio 1", p, []float64{0, 1, 0}, resource.ErrInvalidRatio},
		{"negative", p, []float64{-0.1, 0, 0}, resource.ErrInvalidRatio},
		{"NaN", p, []float64{0, 0, math.NaN()}, resource.ErrInvalidRatio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := match.TheoreticalDuration(tc.p, tc.ratios)
			assert.ErrorIs(t, err, tc.want)
			var fe *match.FieldError
			if tc.want == resource.ErrInvalidRatio {
				assert.ErrorAs(t, err, &fe)
			}
		})
	}
	_, err = match.ResultDuration(p, match.Result{Code: match.NoRoom})
	assert.ErrorIs(t, err, match.ErrNoRoom)
	fit := match.FineGrained{}.Match(match.Server{Timeline: timeline(t, tup(10, 10, 10))}, 0, prof(st(1, 1, 1, 1)))
	_, err = match.ResultDuration(p, fit)
	assert.ErrorIs(t, err, match.ErrBadTask)
	_, err = match.ResultDuration(stage.Profile{}, match.Result{})
	assert.ErrorIs(t, err, stage.ErrEmptyProfile, "as TheoreticalDuration refuses it")
}

// Profiles of more than StageRatios stages fold the tail into the last slot.
func TestStageRatioFold(t *testing.T) {
	tl := timeline(t, tup(4000, 8000, 1000))
	reserve(t, tl, 18, prof(st(1, 3900, 0, 0)), resource.Tuple{})
	stages := make([]stage.Stage, 20)
	for i := range stages {
		stages[i] = st(1, 200, 0, 0)
	}
	r := match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: tenPercent(t)}, 0, prof(stages...))
	require.Equal(t, match.FitCompressed, r.Code)
	assert.Equal(t, 20, r.Stages())
	want := 100.0 / 4100
	assert.Zero(t, r.StageRatio(3))
	for i := match.StageRatios - 1; i < 20; i++ {
		assert.InDelta(t, want, r.StageRatio(i), 1e-12, "stage %d", i)
	}
}
