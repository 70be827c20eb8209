package finegrain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// degradedCluster is n1 (8 cores, 16 GiB) running batch tasks b1 (4 cores, 4 GiB) and b2
// (2 cores, 2 GiB) and latency-sensitive ls1 (2 cores, 2 GiB), beside an empty n2, where
// a predicted 10 s task took 30 s on n1 and n1's usage runs far above what was
// reserved: Alg. 3 stops n1 and asks to recycle it, its tasks 3 times as long as
// expected. It returns the scheduler and the change ReportUsage gave at 30 s.
func degradedCluster(t *testing.T) (*finegrain.Scheduler, policy.Change) {
	t.Helper()
	s, err := finegrain.New(schema, finegrain.WithAdjuster(policy.WithDegradation(policy.Degradation{Factor: 1.5, Window: 2, MinReports: 1})))
	require.NoError(t, err)
	for _, id := range []string{"n1", "n2"} {
		require.NoError(t, s.AddNode(finegrain.Node{ID: id, Capacity: schema.MustTuple(16000, 16*gib)}))
	}
	key := predict.Key{Logic: "etl/probe", InputSize: 1}
	require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(1000, gib)})}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "etl"}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "web"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "probe", Job: "etl", Key: key, Request: schema.MustTuple(1000, gib)},
		finegrain.Task{ID: "b1", Job: "etl", Request: schema.MustTuple(4000, 4*gib)},
		finegrain.Task{ID: "b2", Job: "etl", Request: schema.MustTuple(2000, 2*gib)},
		finegrain.Task{ID: "ls1", Job: "web", Request: schema.MustTuple(2000, 2*gib), Class: finegrain.LatencySensitive, SLO: time.Minute},
	))
	for _, id := range []string{"probe", "b1", "b2", "ls1"} {
		_, err := s.Reserve(id, "n1", 0)
		require.NoError(t, err)
		_, err = s.Commit(id, 0)
		require.NoError(t, err)
	}
	require.NoError(t, s.Finished("probe", 30*time.Second, nil))
	window := []predict.Interval{{Duration: 10 * time.Second, Actual: schema.MustTuple(16000, 16*gib), Predicted: schema.MustTuple(8000, 8*gib)}}
	c, err := s.ReportUsage("n1", 30*time.Second, window)
	require.NoError(t, err)
	return s, c
}

// TestRecycleKnownAnswer: n1's tasks took 3 times as long as expected, so 2/3 of what
// they hold — 8 cores, 8 GiB — must go: 5,333 millicores and 5.33 GiB. Batch tasks move
// first, the largest first: b1 (4 cores, 4 GiB), then b2 (2, 2), which covers it; ls1
// stays. Both go to n2, the only node not stopped. Nothing is evicted.
func TestRecycleKnownAnswer(t *testing.T) {
	s, c := degradedCluster(t)
	require.True(t, c.Recycle, "%v", c)
	assert.Equal(t, 3.0, c.Stretch)

	r, err := s.Recycle("n1", 31*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(5333, 5726623061), r.Goal)
	assert.Equal(t, schema.MustTuple(6000, 6*gib), r.Moved)
	assert.Equal(t, []finegrain.ScaleAction{
		{Kind: speculate.Move, Task: "b1", Node: "n2", From: "n1", Allocation: schema.MustTuple(4000, 4*gib)},
		{Kind: speculate.Move, Task: "b2", Node: "n2", From: "n1", Allocation: schema.MustTuple(2000, 2*gib)},
	}, r.Actions)
	assert.Empty(t, r.Stayed)
	for id, node := range map[string]string{"b1": "n2", "b2": "n2", "ls1": "n1"} {
		a, err := s.Allocation(id, 31*time.Second)
		require.NoError(t, err)
		assert.Equal(t, node, a.Node, id)
		st, _ := s.TaskState(id)
		assert.Equal(t, finegrain.Running, st, "%s is not killed", id)
	}
	free, err := s.NodeFree("n1", 31*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(14000, 14*gib), free)

	_, err = s.Recycle("n1", 32*time.Second)
	assert.ErrorIs(t, err, finegrain.ErrInvalid, "the signal is used up")
}

// TestRecycleRefusals: no signal, an unknown node, a time going backwards — refused,
// nothing moved.
func TestRecycleRefusals(t *testing.T) {
	s, _ := degradedCluster(t)
	_, err := s.Recycle("n2", 31*time.Second)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	_, err = s.Recycle("n9", 31*time.Second)
	assert.ErrorIs(t, err, finegrain.ErrUnknownNode)
	_, err = s.Recycle("n1", time.Second)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	a, err := s.Allocation("b1", 31*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "n1", a.Node)
	_, err = s.Recycle("n1", 31*time.Second)
	assert.NoError(t, err, "a refused call leaves the signal")
}
