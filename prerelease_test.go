package finegrain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// The thesis' Table 4.1 example through the Scheduler with the pre-release list: one
// queue, Job1–3 with data on Slot1–3 (one task fits a node; each node its own rack),
// priority Job1 > Job2 > Job3. Slot1 and Slot2 hold earlier tasks with 10 s and 5 s
// left; Slot3 is free at 0, Slot2 at 5 s, Slot1 at 10 s. Direct FIFO placement would
// give Slot3 to Job1 (off-switch); the pre-release list promises Slot1 to Job1 and
// Slot2 to Job2, so Slot3→Job3, Slot2→Job2, Slot1→Job1, all node-local.
func TestPreReleaseListTable41(t *testing.T) {
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	run := func(opts ...finegrain.Option) string {
		s := newScheduler(t, append([]finegrain.Option{finegrain.WithOrdering(fairness.FIFO{})}, opts...)...)
		for i := 1; i <= 3; i++ {
			require.NoError(t, s.AddNode(finegrain.Node{ID: fmt.Sprintf("slot%d", i), Rack: fmt.Sprintf("rack%d", i), Capacity: schema.MustTuple(1000, gib)}))
		}
		one := func(d time.Duration) stage.Profile {
			return stage.MustProfile(schema, stage.Stage{Duration: d, Demand: schema.MustTuple(1000, gib)})
		}
		// The earlier tasks, placed by push onto slot1 then slot2.
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "old", Priority: 9}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "old1", Job: "old", Profile: one(10 * time.Second)}, finegrain.Task{ID: "old2", Job: "old", Profile: one(5 * time.Second)}))
		for _, id := range []string{"old1", "old2"} {
			_, err := s.Place(id, 0)
			require.NoError(t, err)
		}
		for k := 1; k <= 3; k++ {
			job := fmt.Sprintf("job%d", k)
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: job, Priority: 3 - k, Submitted: time.Duration(k)}))
			require.NoError(t, s.Submit(finegrain.Task{ID: "task-of-" + job, Job: job, Profile: one(60 * time.Second), Inputs: []string{fmt.Sprintf("slot%d", k)}}))
		}
		var got []string
		for _, step := range []struct {
			node string
			at   time.Duration
			done string
		}{{"slot3", 0, ""}, {"slot2", 5 * time.Second, "old2"}, {"slot1", 10 * time.Second, "old1"}} {
			if step.done != "" {
				require.NoError(t, s.Finished(step.done, step.at, nil))
			}
			d, err := s.Heartbeat(step.node, step.at)
			require.NoError(t, err)
			for _, a := range d.Assignments {
				got = append(got, fmt.Sprintf("%s→%s(%v)", a.Node, a.Job, a.Locality))
			}
		}
		return fmt.Sprint(got)
	}
	assert.Equal(t, "[slot3→job3(node-local) slot2→job2(node-local) slot1→job1(node-local)]", run(finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer))))
	assert.Equal(t, "[slot3→job1(off-switch) slot2→job2(node-local) slot1→job3(off-switch)]", run(finegrain.WithPullStrategy(finegrain.PullFairnessOrder())), "direct FIFO: 1/3")
}

// Progress reports feed the runtime model speculation reads.
func TestProgressAndRuntime(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib)}))
	_, err := s.Place("t", 0)
	require.NoError(t, err)
	require.NoError(t, s.Progress("t", 0.25, 10*time.Second))
	p, ok := s.Runtime().Task("t", 10*time.Second)
	require.True(t, ok)
	assert.Equal(t, 30*time.Second, p.TimeLeft, "eq. 3.4: (1 − 0.25)/(0.25/10 s)")
	assert.ErrorIs(t, s.Progress("t", 1.5, 11*time.Second), predict.ErrBadProgress)
	assert.ErrorIs(t, s.Progress("t", 0.1, 11*time.Second), predict.ErrBadProgress, "progress may not go down")
	assert.ErrorIs(t, s.Progress("nope", 0.5, 11*time.Second), finegrain.ErrUnknownTask)
	require.NoError(t, s.Finished("t", 40*time.Second, nil))
	_, ok = s.Runtime().Task("t", 40*time.Second)
	assert.False(t, ok)
	r, ok := s.Runtime().NodeRate("n0")
	require.True(t, ok)
	assert.InDelta(t, 1.0/40, r.Mean, 1e-12)
	assert.ErrorIs(t, s.Progress("t", 1, 41*time.Second), finegrain.ErrState)
	_, err = finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullPreReleaseList(nil)))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
}
