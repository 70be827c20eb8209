package finegrain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
)

// A host scheduler that sorts its own queue reads each queue's standing, and reads
// it again only when QueuesVersion moves: a reservation makes its queue richer, an
// unreservation poorer, and the version moves with each.
func TestQueueStatesForAHostSort(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.AddQueue("", "b", fairness.Weight(2)))
	require.NoError(t, s.AddQueue("", "a", fairness.MaxShare(0.25)))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "ja", Queue: "a"}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "jb", Queue: "b"}))
	one := schema.MustTuple(1000, gib)
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "a1", Job: "ja", Request: one},
		finegrain.Task{ID: "a2", Job: "ja", Request: one},
		finegrain.Task{ID: "b1", Job: "jb", Request: one},
	))

	v0 := s.QueuesVersion()
	qs, err := s.Queues("")
	require.NoError(t, err)
	require.Len(t, qs, 2)
	assert.Equal(t, []string{"a", "b"}, []string{qs[0].ID, qs[1].ID}, "in ID order")
	assert.Equal(t, 2, qs[0].Pending)
	assert.Zero(t, qs[0].Used)
	assert.InDelta(t, 0.5, qs[0].Wanted, 1e-9, "two tasks of a quarter of the CPU each")

	_, err = s.Reserve("a1", "n", 0)
	require.NoError(t, err)
	v1 := s.QueuesVersion()
	assert.Greater(t, v1, v0, "a reservation moves the version")
	a, err := s.Queue("a")
	require.NoError(t, err)
	assert.InDelta(t, 0.25, a.Used, 1e-9)
	assert.True(t, a.AtMax, "a holds its max share")
	b, err := s.Queue("b")
	require.NoError(t, err)
	assert.Negative(t, b.Key.Compare(a.Key), "b, holding nothing, goes first")
	assert.Equal(t, v1, s.QueuesVersion(), "reads move nothing")

	require.NoError(t, s.Unreserve("a1", time.Second))
	assert.Greater(t, s.QueuesVersion(), v1)
	a, err = s.Queue("a")
	require.NoError(t, err)
	assert.False(t, a.AtMax)
	assert.Zero(t, a.Used)

	_, err = s.Queue("")
	assert.Error(t, err, "the root has no standing")
	_, err = s.Queue("nope")
	assert.ErrorIs(t, err, finegrain.ErrUnknownQueue)
	_, err = s.Queues("nope")
	assert.ErrorIs(t, err, finegrain.ErrUnknownQueue)
}
