package finegrain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
)

// Backfilling on the stage timeline, by hand: a node of 8 GiB runs a 4 GiB task
// until 60 s. A task needing all 8 GiB waits; once it has waited 10 s it is booked
// from 60 s. Then a 4 GiB task of 30 s may start in front of it (it ends before 60
// s), but one of 2 minutes may not: it would delay the booking.
func TestReservationsBackfillKnownAnswer(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithBooking(10*time.Second))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a"}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "big", Submitted: 1}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j-long", Submitted: 2}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j-short", Submitted: 3}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "running", Job: "a", Request: schema.MustTuple(1000, 4*gib), Duration: time.Minute}))
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)

	require.NoError(t, s.Submit(finegrain.Task{ID: "large", Job: "big", Request: schema.MustTuple(1000, 8*gib), Duration: time.Minute}))
	d, err = s.Heartbeat("n", 5*time.Second)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments, "it has waited 5 s of the 10")

	d, err = s.Heartbeat("n", 10*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "large", d.Assignments[0].Task)
	assert.Equal(t, time.Minute, d.Assignments[0].Start, "booked where the running task ends")
	st, _ := s.TaskState("large")
	assert.Equal(t, finegrain.Booked, st)

	require.NoError(t, s.Submit(
		finegrain.Task{ID: "long", Job: "j-long", Request: schema.MustTuple(1000, 4*gib), Duration: 2 * time.Minute, Submitted: 11 * time.Second},
		finegrain.Task{ID: "short", Job: "j-short", Request: schema.MustTuple(1000, 4*gib), Duration: 30 * time.Second, Submitted: 11 * time.Second},
	))
	d, err = s.Heartbeat("n", 12*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "short", d.Assignments[0].Task, "backfilled: it ends before the booking starts")
	assert.Equal(t, 12*time.Second, d.Assignments[0].Start)
	st, _ = s.TaskState("long")
	assert.Equal(t, finegrain.Pending, st, "it would delay the booking")

	// At 60 s the running task finishes and the booking starts on time.
	require.NoError(t, s.Finished("short", 42*time.Second, nil))
	require.NoError(t, s.Finished("running", time.Minute, nil))
	st, _ = s.TaskState("large")
	assert.Equal(t, finegrain.Running, st)
}
