package finegrain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// A job's first pending task that no node can hold does not keep the job's other
// tasks off the nodes, with either locality strategy.
func TestUnfitHeadTaskDoesNotBlockItsJob(t *testing.T) {
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	for name, opts := range map[string][]finegrain.Option{
		"delay scheduling": {finegrain.WithPrediction(false)},
		"pre-release list": {finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer))},
	} {
		t.Run(name, func(t *testing.T) {
			s := newScheduler(t, append(opts, finegrain.WithSkipDetails(4), finegrain.WithUnresolvableAccepted(true))...)
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			require.NoError(t, s.Submit(
				finegrain.Task{ID: "huge", Job: "j", Request: schema.MustTuple(1000, 64*gib)},
				finegrain.Task{ID: "small", Job: "j", Request: schema.MustTuple(1000, gib)},
			))
			d, err := s.Heartbeat("n", 0)
			require.NoError(t, err)
			require.Len(t, d.Assignments, 1)
			assert.Equal(t, "small", d.Assignments[0].Task)
			require.NotEmpty(t, d.Skips)
			assert.Equal(t, finegrain.Skip{Job: "j", Task: "huge", Reason: finegrain.OverCapacity, Plugin: "StageMatch", Result: d.Skips[0].Result}, d.Skips[0],
				"the node is smaller than the task")
			st, _ := s.TaskState("huge")
			assert.Equal(t, finegrain.Pending, st)
		})
	}
}

// A job whose only node-local task fits no node waits for locality as if it had
// passed the node up: its wait grows, and once it has waited W1 + W2 it takes its
// off-switch task.
func TestDelayWaitGrowsPastUnfitLocalTask(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithSkipDetails(4), finegrain.WithUnresolvableAccepted(true))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		// No inputs: node-local everywhere, and too big for every node.
		finegrain.Task{ID: "huge", Job: "j", Request: schema.MustTuple(1000, 64*gib)},
		// Its input is on a node the cluster does not hold: off-switch everywhere.
		finegrain.Task{ID: "remote", Job: "j", Request: schema.MustTuple(1000, gib), Inputs: []string{"gone"}},
	))
	var placedAt time.Duration = -1
	for now := time.Duration(0); now <= time.Minute && placedAt < 0; now += time.Second {
		d, err := s.Heartbeat("n", now)
		require.NoError(t, err)
		if len(d.Assignments) > 0 {
			assert.Equal(t, "remote", d.Assignments[0].Task)
			placedAt = now
			continue
		}
		assert.Contains(t, d.Skips, finegrain.Skip{Job: "j", Reason: finegrain.LocalityWait}, "at %v", now)
	}
	// Defaults W1 = 5 s and W2 = 20 s: off-switch after 25 s of waiting.
	assert.Equal(t, 25*time.Second, placedAt)
}

// Declared tasks of one class may differ beyond their first stage: one that fits no
// node does not keep another of the same class, which fits, from being placed — in its
// own job or in another job, with either locality strategy.
func TestUnfitDeclaredTaskDoesNotBlockItsClass(t *testing.T) {
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	first := stage.Stage{Duration: time.Second, Demand: schema.MustTuple(1000, gib)}
	huge := stage.MustProfile(schema, first, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(1000, 64*gib)})
	fine := stage.MustProfile(schema, first, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(1000, 2*gib)})
	key := predict.Key{Logic: "etl", InputSize: 1}
	for name, opts := range map[string][]finegrain.Option{
		"delay scheduling": nil,
		"pre-release list": {finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer))},
	} {
		for _, jobs := range [][2]string{{"a", "a"}, {"a", "b"}} {
			t.Run(name+"/jobs "+jobs[0]+jobs[1], func(t *testing.T) {
				s := newScheduler(t, append(opts, finegrain.WithUnresolvableAccepted(true))...)
				require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
				require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a"}))
				require.NoError(t, s.SubmitJob(finegrain.Job{ID: "b", Submitted: 1}))
				require.NoError(t, s.Submit(
					// IDs in task order: the one that fits no node comes first.
					finegrain.Task{ID: "1-huge", Job: jobs[0], Key: key, Request: schema.MustTuple(1000, gib), Profile: huge},
					finegrain.Task{ID: "2-fine", Job: jobs[1], Key: key, Request: schema.MustTuple(1000, gib), Profile: fine},
				))
				d, err := s.Heartbeat("n", 0)
				require.NoError(t, err)
				require.Len(t, d.Assignments, 1)
				assert.Equal(t, "2-fine", d.Assignments[0].Task)
			})
		}
	}
}
