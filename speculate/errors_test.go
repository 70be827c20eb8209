package speculate_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		name string
		opt  speculate.Option
		ok   bool
	}{
		{"cap 0", speculate.WithSpeculativeCap(0), false},
		{"cap negative", speculate.WithSpeculativeCap(-0.1), false},
		{"cap above 1", speculate.WithSpeculativeCap(1.01), false},
		{"cap NaN", speculate.WithSpeculativeCap(math.NaN()), false},
		{"cap 1", speculate.WithSpeculativeCap(1), true},
		{"cap tiny", speculate.WithSpeculativeCap(1e-9), true},
		{"slow task negative", speculate.WithSlowTaskThreshold(-1), false},
		{"slow task NaN", speculate.WithSlowTaskThreshold(math.NaN()), false},
		{"slow task Inf", speculate.WithSlowTaskThreshold(math.Inf(1)), false},
		{"slow task 0", speculate.WithSlowTaskThreshold(0), true},
		{"slow node negative", speculate.WithSlowNodeThreshold(-0.5), false},
		{"slow node NaN", speculate.WithSlowNodeThreshold(math.NaN()), false},
		{"slow node Inf", speculate.WithSlowNodeThreshold(math.Inf(1)), false},
		{"slow node 0", speculate.WithSlowNodeThreshold(0), true},
		{"min runtime negative", speculate.WithMinRuntime(-time.Nanosecond), false},
		{"min runtime 0", speculate.WithMinRuntime(0), true},
		{"nil option", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, errL := speculate.NewLATE(c.opt)
			p, errP := speculate.NewPRRL(c.opt)
			if c.ok {
				require.NoError(t, errL)
				require.NoError(t, errP)
				assert.NotNil(t, l)
				assert.NotNil(t, p)
				return
			}
			for _, err := range []error{errL, errP} {
				require.ErrorIs(t, err, speculate.ErrInvalidOption)
				var fe *speculate.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Contains(t, err.Error(), fe.Field)
			}
			assert.Nil(t, l)
			assert.Nil(t, p)
		})
	}
}

func TestPlacerOptionErrors(t *testing.T) {
	for _, o := range []speculate.PlacerOption{
		speculate.WithBlockSize(0), speculate.WithBlockSize(-1),
		speculate.WithRackBandwidth(0), speculate.WithRackBandwidth(-1), speculate.WithRackBandwidth(math.NaN()), speculate.WithRackBandwidth(math.Inf(1)),
		speculate.WithCrossRackBandwidth(0), speculate.WithCrossRackBandwidth(math.NaN()), speculate.WithCrossRackBandwidth(math.Inf(1)),
	} {
		p, err := speculate.NewFairPlacer(o)
		require.ErrorIs(t, err, speculate.ErrInvalidOption)
		assert.Nil(t, p)
	}
	p, err := speculate.NewFairPlacer(speculate.WithBlockSize(1), nil)
	require.ErrorIs(t, err, speculate.ErrInvalidOption, "a nil option is refused")
	assert.ErrorContains(t, err, "option 1")
	assert.Nil(t, p)
	pl, err := speculate.NewPlanner(std, nil, speculate.WithMoves(true))
	require.ErrorIs(t, err, speculate.ErrInvalidOption, "a nil option is refused")
	assert.Nil(t, pl)
}

// goodEstimator has one slow task worth backing up from node "req".
func goodEstimator() *staticEstimator {
	fin := predict.RateStats{N: 4, Mean: 0.01, Std: 0.001}
	return &staticEstimator{
		finished: fin,
		nodes:    map[string]predict.RateStats{"a": fin, "req": fin},
		tasks: []predict.TaskProgress{
			{Task: "t1", Node: "a", Progress: 0.1, Elapsed: 100 * sec, Rate: 0.001, TimeLeft: 900 * sec},
			{Task: "t2", Node: "a", Progress: 0.5, Elapsed: 50 * sec, Rate: 0.01, TimeLeft: 50 * sec},
		},
	}
}

func TestSpeculateErrors(t *testing.T) {
	cases := []struct {
		name   string
		est    func(*staticEstimator)
		job    func(*speculate.Job)
		req    func(*speculate.Request)
		err    error
		onlyPR bool // only PRRL reads it
	}{
		{name: "nil estimator", job: func(j *speculate.Job) { j.Tasks = nil }, err: speculate.ErrInvalidValue},
		{name: "negative unstarted", job: func(j *speculate.Job) { j.Unstarted = -1 }, err: speculate.ErrInvalidValue},
		{name: "empty backup key", job: func(j *speculate.Job) { j.Backups = map[string]bool{"": true} }, err: speculate.ErrEmptyID},
		{name: "empty node", req: func(r *speculate.Request) { r.Node = "" }, err: speculate.ErrEmptyID},
		{name: "negative now", req: func(r *speculate.Request) { r.Now = -sec }, err: speculate.ErrBadTime},
		{name: "busy empty task", req: func(r *speculate.Request) { r.Busy = []speculate.BusySlot{{Node: "a"}} }, err: speculate.ErrEmptyID},
		{name: "busy empty node", req: func(r *speculate.Request) { r.Busy = []speculate.BusySlot{{Task: "x"}} }, err: speculate.ErrEmptyID},
		{name: "busy negative time left", req: func(r *speculate.Request) { r.Busy = []speculate.BusySlot{{Task: "x", Node: "a", TimeLeft: -1}} }, err: speculate.ErrBadTime},
		{name: "progress above 1", est: func(e *staticEstimator) { e.tasks[0].Progress = 1.5 }, err: speculate.ErrBadProgress},
		{name: "progress negative", est: func(e *staticEstimator) { e.tasks[1].Progress = -0.1 }, err: speculate.ErrBadProgress},
		{name: "progress NaN", est: func(e *staticEstimator) { e.tasks[0].Progress = math.NaN() }, err: speculate.ErrBadProgress},
		{name: "rate negative", est: func(e *staticEstimator) { e.tasks[0].Rate = -1 }, err: speculate.ErrInvalidValue},
		{name: "rate NaN", est: func(e *staticEstimator) { e.tasks[0].Rate = math.NaN() }, err: speculate.ErrInvalidValue},
		{name: "rate Inf", est: func(e *staticEstimator) { e.tasks[0].Rate = math.Inf(1) }, err: speculate.ErrInvalidValue},
		{name: "time left negative", est: func(e *staticEstimator) { e.tasks[0].TimeLeft = -sec }, err: speculate.ErrBadTime},
		{name: "elapsed negative", est: func(e *staticEstimator) { e.tasks[0].Elapsed = -sec }, err: speculate.ErrBadTime},
		{name: "task empty ID", est: func(e *staticEstimator) { e.tasks[0].Task = "" }, err: speculate.ErrEmptyID},
		{name: "task empty node", est: func(e *staticEstimator) { e.tasks[0].Node = "" }, err: speculate.ErrEmptyID},
		{name: "duplicate task", est: func(e *staticEstimator) { e.tasks[1].Task = "t1" }, err: speculate.ErrDuplicate},
		{name: "unsorted tasks", est: func(e *staticEstimator) { e.tasks[0], e.tasks[1] = e.tasks[1], e.tasks[0] }, err: speculate.ErrInvalidValue},
		{name: "finished NaN mean", est: func(e *staticEstimator) { e.finished.Mean = math.NaN() }, err: speculate.ErrInvalidValue},
		{name: "finished negative std", est: func(e *staticEstimator) { e.finished.Std = -1 }, err: speculate.ErrInvalidValue},
		{name: "finished negative count", est: func(e *staticEstimator) { e.finished.N = -1 }, err: speculate.ErrInvalidValue},
		{name: "requesting node NaN rate", est: func(e *staticEstimator) { e.nodes["req"] = predict.RateStats{N: 1, Mean: math.NaN()} }, err: speculate.ErrInvalidValue},
		{name: "busy node Inf rate", est: func(e *staticEstimator) { e.nodes["a"] = predict.RateStats{N: 1, Mean: math.Inf(1)} }, err: speculate.ErrInvalidValue, onlyPR: true},
		{name: "other busy node negative rate", est: func(e *staticEstimator) { e.nodes["b"] = predict.RateStats{N: 1, Mean: -1} },
			req: func(r *speculate.Request) { r.Busy = []speculate.BusySlot{{Task: "x", Node: "b"}} }, err: speculate.ErrInvalidValue, onlyPR: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			est := goodEstimator()
			if c.est != nil {
				c.est(est)
			}
			job := speculate.Job{Tasks: est}
			if c.job != nil {
				c.job(&job)
			}
			req := speculate.Request{Node: "req", Now: 100 * sec}
			if c.req != nil {
				c.req(&req)
			}
			specs := []speculate.Speculator{newPRRL(t, speculate.WithSpeculativeCap(1))}
			if !c.onlyPR {
				specs = append(specs, newLATE(t, speculate.WithSpeculativeCap(1)))
			}
			for _, s := range specs {
				d, err := s.Speculate(job, req)
				require.ErrorIs(t, err, c.err, "%T", s)
				assert.Equal(t, speculate.Decision{}, d)
				var fe *speculate.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Contains(t, err.Error(), fe.Field)
			}
			_, err := newPRRL(t).Lists(job, req)
			require.ErrorIs(t, err, c.err)
		})
	}
	// the valid baseline decides a backup with both
	for _, s := range []speculate.Speculator{newLATE(t, speculate.WithSpeculativeCap(1)), newPRRL(t, speculate.WithSpeculativeCap(1))} {
		d, err := s.Speculate(speculate.Job{Tasks: goodEstimator()}, speculate.Request{Node: "req", Now: 100 * sec})
		require.NoError(t, err)
		assert.Equal(t, "t1", d.Task)
	}
}

func TestHelperErrors(t *testing.T) {
	for _, r := range []float64{-1, math.NaN(), math.Inf(1)} {
		_, err := speculate.BackupFinish(r, 0)
		require.ErrorIs(t, err, speculate.ErrInvalidValue)
	}
	_, err := speculate.BackupFinish(1, -1)
	require.ErrorIs(t, err, speculate.ErrBadTime)

	_, err = speculate.SelectBackup(nil, nil)
	require.ErrorIs(t, err, speculate.ErrInvalidValue)
	_, err = speculate.SelectBackup([]speculate.SlowTask{{Task: "a", TimeLeft: -1}}, []speculate.Resource{{Node: "n"}})
	require.ErrorIs(t, err, speculate.ErrBadTime)
	_, err = speculate.SelectBackup(nil, []speculate.Resource{{Node: "n", Finish: -1}})
	require.ErrorIs(t, err, speculate.ErrBadTime)

	l := newLATE(t)
	_, err = l.SlowNode(nil, "n")
	require.ErrorIs(t, err, speculate.ErrInvalidValue)
	_, err = l.SlowNode(goodEstimator(), "")
	require.ErrorIs(t, err, speculate.ErrEmptyID)
	bad := goodEstimator()
	bad.finished.Std = math.NaN()
	_, err = l.SlowNode(bad, "a")
	require.ErrorIs(t, err, speculate.ErrInvalidValue)
	bad = goodEstimator()
	bad.nodes["a"] = predict.RateStats{N: 1, Mean: -2}
	_, err = l.SlowNode(bad, "a")
	require.ErrorIs(t, err, speculate.ErrInvalidValue)

	// every error names a field and wraps a documented sentinel
	var fe *speculate.FieldError
	require.True(t, errors.As(err, &fe))
	assert.True(t, knownError(err))
	assert.Equal(t, fe.Err, errors.Unwrap(fe))
}
