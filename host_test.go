package finegrain_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/stage"
)

// Host mode, as the Kubernetes adapter drives it: the host chooses the node, the
// scheduler holds the task there (Reserve), then the host binds it (Commit) or gives
// it up (Unreserve). Two tasks whose stages do not overlap share a node their
// requests would not fit.
func TestHostReserveCommitUnreserve(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	early := stage.MustProfile(schema,
		stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(1000, 6*gib)},
		stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(1000, 1*gib)})
	late := stage.MustProfile(schema,
		stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(1000, 1*gib)},
		stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(1000, 6*gib)})
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "early", Job: "j", Request: schema.MustTuple(1000, 6*gib), Profile: early},
		finegrain.Task{ID: "late", Job: "j", Request: schema.MustTuple(1000, 6*gib), Profile: late},
	))

	as, err := s.Reserve("early", "n", 0)
	require.NoError(t, err)
	assert.Equal(t, "n", as.Node)
	assert.True(t, as.Predicted, "a declared profile is a stage-by-stage plan")
	st, _ := s.TaskState("early")
	assert.Equal(t, finegrain.Reserved, st)
	held, ok := s.Held("early")
	require.True(t, ok)
	assert.Equal(t, "n", held.Node)
	free, err := s.NodeFree("n", 0)
	require.NoError(t, err)
	assert.Equal(t, int64(2*gib), free[1], "a reservation holds its first stage on the timeline")

	_, err = s.Reserve("late", "n", time.Second)
	require.NoError(t, err, "late's big stage comes after early's")
	require.NoError(t, s.Unreserve("late", 2*time.Second))
	st, _ = s.TaskState("late")
	assert.Equal(t, finegrain.Pending, st)
	_, ok = s.Held("late")
	assert.False(t, ok)
	segs, err := s.FreeSegments("n", 2*time.Second, 3*time.Minute)
	require.NoError(t, err)
	for _, sg := range segs {
		if sg.Start < time.Minute {
			assert.Equal(t, int64(2*gib), sg.Free[1], "only early's first stage is held before 1m")
		} else if sg.Start < 2*time.Minute {
			assert.Equal(t, int64(7*gib), sg.Free[1], "Unreserve took late's reservation off the timeline")
		}
	}

	a, err := s.Commit("early", 3*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "early", a.Task)
	assert.Equal(t, 3*time.Second, a.Start, "a commit moves the held reservation to the real start")
	segs, err = s.FreeSegments("n", 0, 3*time.Minute)
	require.NoError(t, err)
	for _, sg := range segs {
		switch {
		case sg.Start >= 3*time.Second && sg.Start < 63*time.Second:
			assert.Equal(t, int64(2*gib), sg.Free[1], "early's first stage from 3s to 63s: %v", sg)
		case sg.Start >= 63*time.Second && sg.Start < 123*time.Second:
			assert.Equal(t, int64(7*gib), sg.Free[1], "early's second stage from 63s: %v", sg)
		}
	}
	st, _ = s.TaskState("early")
	assert.Equal(t, finegrain.Running, st)
	_, ok = s.Held("early")
	assert.False(t, ok, "a committed task is no longer held")
}

func TestHostReserveRefusals(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "big", Job: "j", Request: schema.MustTuple(1000, 6*gib)},
		finegrain.Task{ID: "big2", Job: "j", Request: schema.MustTuple(1000, 6*gib)},
	))
	_, err := s.Reserve("big", "n", 0)
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"no room on the node", func() error { _, err := s.Reserve("big2", "n", 0); return err }, finegrain.ErrNotPlaced},
		{"unknown node", func() error { _, err := s.Reserve("big2", "nope", 0); return err }, finegrain.ErrUnknownNode},
		{"unknown task", func() error { _, err := s.Reserve("nope", "n", 0); return err }, finegrain.ErrUnknownTask},
		{"task not pending", func() error { _, err := s.Reserve("big", "n", 0); return err }, finegrain.ErrState},
		{"commit of a pending task", func() error { _, err := s.Commit("big2", 0); return err }, finegrain.ErrState},
		{"unreserve of a pending task", func() error { return s.Unreserve("big2", 0) }, finegrain.ErrState},
		{"negative time", func() error { _, err := s.Reserve("big2", "n", -time.Second); return err }, finegrain.ErrInvalid},
		{"post-filter without a PostFilter plugin", func() error { _, err := s.PostFilter("big2", 0, nil); return err }, finegrain.ErrNotPlaced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			free, err := s.NodeFree("n", 0)
			require.NoError(t, err)
			assert.ErrorIs(t, tc.call(), tc.want)
			after, err := s.NodeFree("n", 0)
			require.NoError(t, err)
			assert.Equal(t, free, after, "a refused call changes nothing")
			st, _ := s.TaskState("big")
			assert.Equal(t, finegrain.Reserved, st)
			st, _ = s.TaskState("big2")
			assert.Equal(t, finegrain.Pending, st)
		})
	}
	_, err = s.PostFilter("big2", 0, nil)
	var pe *finegrain.PlacementError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []finegrain.Count{{Reason: finegrain.NoRoom, Dim: "memory", N: 1}}, pe.Refusals.Counts, "the node that has not room enough free")
	assert.Equal(t, "n", pe.Refusals.Closest)
	assert.Regexp(t, `^finegrain: task "big2": 0/1 nodes can take it: 1 short of memory; closest: node "n", stage 0 needs memory=.*: no node fits the task$`, err.Error())
	// A held task that is cancelled is no longer held.
	require.NoError(t, s.Cancel("big", time.Second))
	_, ok := s.Held("big")
	assert.False(t, ok)
	_, err = s.Commit("big", time.Second)
	assert.ErrorIs(t, err, finegrain.ErrState)
}

// A host call refused for its arguments leaves the clock where it was (clock.go): a
// Commit or Unreserve of a Reserved task the host does not hold (a gang member a
// Permit plugin keeps waiting) starts no task booked to start by its time, and an
// event before that time is still on time. A Reserve the filters refuse acts at its
// time, as Place does: the booked task starts.
func TestHostRefusalsLeaveTheClock(t *testing.T) {
	// b is booked on n to start at 10 s, when a ends; g1 waits on m for its gang.
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithFutureStart(true), finegrain.WithUnresolvableAccepted(true))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 2*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "a", Job: "j", Request: schema.MustTuple(1000, 2*gib), Duration: 10 * time.Second},
		finegrain.Task{ID: "b", Job: "j", Request: schema.MustTuple(1000, 2*gib), Duration: 10 * time.Second},
		finegrain.Task{ID: "big", Job: "j", Request: schema.MustTuple(1000, 3*gib)},
	))
	_, err := s.Place("a", 0)
	require.NoError(t, err)
	as, err := s.Place("b", 0)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, as.Start)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "m", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "g", MinMember: 2}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "g1", Job: "g", Request: schema.MustTuple(1000, gib)},
		finegrain.Task{ID: "g2", Job: "g", Request: schema.MustTuple(1000, gib)},
	))
	_, err = s.Place("g1", 0)
	require.Error(t, err)
	st, _ := s.TaskState("g1")
	require.Equal(t, finegrain.Reserved, st, "g1 waits for its gang, not held for the host")

	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"a Commit of a task not held", func() error { _, err := s.Commit("g1", time.Hour); return err }, finegrain.ErrState},
		{"an Unreserve of a task not held", func() error { return s.Unreserve("g1", time.Hour) }, finegrain.ErrState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.call(), tc.want)
			st, _ := s.TaskState("b")
			assert.Equal(t, finegrain.Booked, st, "b is still booked: the clock did not reach 10 s")
			st, _ = s.TaskState("g1")
			assert.Equal(t, finegrain.Reserved, st)
		})
	}
	_, err = s.Heartbeat("n", time.Second)
	assert.NoError(t, err, "an event at 1 s is still on time")
	_, err = s.Reserve("big", "n", time.Hour)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced)
	st, _ = s.TaskState("b")
	assert.Equal(t, finegrain.Running, st, "a Reserve the filters refuse acts at its time")
}

// PostFilter with priority preemption: the host found no node; the scheduler evicts a
// lower-priority task and holds the preemptor where it made room.
func TestHostPostFilterPreempts(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low"}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "high", Priority: 100}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "victim", Job: "low", Request: schema.MustTuple(1000, 6*gib)},
		finegrain.Task{ID: "urgent", Job: "high", Request: schema.MustTuple(1000, 6*gib)},
	))
	_, err := s.Reserve("victim", "n", 0)
	require.NoError(t, err)
	_, err = s.Commit("victim", 0)
	require.NoError(t, err)
	_, err = s.Reserve("urgent", "n", time.Second)
	require.ErrorIs(t, err, finegrain.ErrNotPlaced)

	_, err = s.PostFilter("urgent", time.Second, func(string) bool { return false })
	require.ErrorIs(t, err, finegrain.ErrNotPlaced, "no node allowed: nothing evicted")
	st, _ := s.TaskState("victim")
	require.Equal(t, finegrain.Running, st)
	as, err := s.PostFilter("urgent", time.Second, func(node string) bool { return node == "n" })
	require.NoError(t, err)
	assert.Equal(t, "n", as.Node)
	require.Len(t, as.Evicted, 1)
	assert.Equal(t, "victim", as.Evicted[0].Task)
	assert.Equal(t, finegrain.Preempted, as.Evicted[0].Reason)
	st, _ = s.TaskState("victim")
	assert.Equal(t, finegrain.Pending, st)
	st, _ = s.TaskState("urgent")
	assert.Equal(t, finegrain.Reserved, st, "the preemptor is held, not started: the host binds it")
	held, ok := s.Held("urgent")
	require.True(t, ok)
	assert.Equal(t, "n", held.Node)
	_, err = s.Commit("urgent", 2*time.Second)
	require.NoError(t, err)
}

// Held only reads: concurrent calls on a held task whose node has left (a stale hold)
// race with nothing (run with -race).
func TestHostHeldIsReadOnly(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib)}))
	_, err := s.Reserve("t", "n", 0)
	require.NoError(t, err)
	_, err = s.RemoveNode("n", time.Second)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, ok := s.Held("t")
				assert.False(t, ok)
			}
		}()
	}
	wg.Wait()
	st, _ := s.TaskState("t")
	assert.Equal(t, finegrain.Pending, st, "the node's removal returned the held task to pending")
}
