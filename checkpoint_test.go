package finegrain_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
)

// learnedPlacement submits a task of key to s, which holds one node of 8 cores and
// 16 GiB, and returns its first assignment: on its learned profile, or on its request
// of 4 cores and 8 GiB when s knows nothing of key.
func learnedPlacement(t *testing.T, s *finegrain.Scheduler, id string, key predict.Key, now time.Duration) finegrain.Assignment {
	t.Helper()
	require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "etl", Key: key, Request: schema.MustTuple(4000, 8*gib)}))
	d, err := s.Heartbeat("n", now)
	require.NoError(t, err)
	for _, a := range d.Assignments {
		if a.Task == id {
			return a
		}
	}
	t.Fatalf("%s not placed: %+v", id, d)
	return finegrain.Assignment{}
}

// checkpointScheduler is a scheduler of one node of 8 cores and 16 GiB, with a job
// "etl".
func checkpointScheduler(t *testing.T, opts ...finegrain.Option) *finegrain.Scheduler {
	t.Helper()
	s := newScheduler(t, append([]finegrain.Option{finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}, opts...)...)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "etl"}))
	return s
}

// What one scheduler learned, saved and restored into the scheduler that replaces it:
// a task of the learned key is placed there on its learned profile, as it was before
// the restart; without the restore, on its request.
func TestSaveRestoreEstimates(t *testing.T) {
	key := predict.Key{Logic: "etl/map", InputSize: 1 << 30}
	before := checkpointScheduler(t)
	first := learnedPlacement(t, before, "t0", key, 0)
	require.False(t, first.Predicted, "nothing is known of the key yet")
	require.NoError(t, before.Started("t0", 0))
	// t0 used 1 core and 2 GiB for 30 s.
	require.NoError(t, before.Finished("t0", 30*time.Second, &predict.Observation{Series: predict.Series{
		Samples: []predict.Sample{{At: 0, Usage: schema.MustTuple(1000, 2*gib)}, {At: 15 * time.Second, Usage: schema.MustTuple(1000, 2*gib)}},
		End:     30 * time.Second,
	}}))
	learned := learnedPlacement(t, before, "t1", key, 30*time.Second)
	require.True(t, learned.Predicted)

	var saved bytes.Buffer
	require.NoError(t, before.SaveEstimates(&saved))

	after := checkpointScheduler(t)
	require.NoError(t, after.RestoreEstimates(bytes.NewReader(saved.Bytes())))
	again := learnedPlacement(t, after, "t1", key, 0)
	assert.True(t, again.Predicted, "placed on the learned profile after the restart")
	assert.Equal(t, learned.Profile.Stages(), again.Profile.Stages())

	forgetful := checkpointScheduler(t)
	assert.False(t, learnedPlacement(t, forgetful, "t1", key, 0).Predicted, "without the restore, by request")

	// A checkpoint the estimator refuses changes nothing: the next task of the key is
	// still placed on the learned profile.
	err := after.RestoreEstimates(strings.NewReader(saved.String()[:saved.Len()/2]))
	assert.ErrorIs(t, err, predict.ErrCheckpoint)
	assert.Contains(t, err.Error(), "finegrain: restore estimates: predict: checkpoint: invalid checkpoint: truncated")
	still := learnedPlacement(t, after, "t2", key, time.Second)
	assert.True(t, still.Predicted)
	assert.Equal(t, learned.Profile.Stages(), still.Profile.Stages())
}

// With prediction off the estimator still learns from finished tasks, and what it
// learned is saved and restored like any other: a scheduler that turns prediction on
// after the restart predicts from it.
func TestSaveRestoreEstimatesPredictionOff(t *testing.T) {
	key := predict.Key{Logic: "etl/map", InputSize: 1 << 30}
	off := checkpointScheduler(t, finegrain.WithPrediction(false))
	require.False(t, learnedPlacement(t, off, "t0", key, 0).Predicted)
	require.NoError(t, off.Started("t0", 0))
	require.NoError(t, off.Finished("t0", 30*time.Second, &predict.Observation{Series: predict.Series{
		Samples: []predict.Sample{{At: 0, Usage: schema.MustTuple(1000, 2*gib)}}, End: 30 * time.Second,
	}}))
	assert.False(t, learnedPlacement(t, off, "t1", key, 30*time.Second).Predicted, "prediction off: by request")
	var saved bytes.Buffer
	require.NoError(t, off.SaveEstimates(&saved))

	on := checkpointScheduler(t)
	require.NoError(t, on.RestoreEstimates(&saved))
	a := learnedPlacement(t, on, "t1", key, 0)
	assert.True(t, a.Predicted)
	want, ok := off.Estimator().Estimate(key)
	require.True(t, ok)
	assert.Equal(t, want.Stages(), a.Profile.Stages())
}

// An estimator that cannot be checkpointed (one of the embedder's own, not a
// predict.Checkpointer) makes both calls fail with ErrInvalid, naming its type, and
// neither reads nor writes.
func TestSaveRestoreEstimatesRefused(t *testing.T) {
	est, err := predict.NewSimilarTask(schema)
	require.NoError(t, err)
	s := checkpointScheduler(t, finegrain.WithEstimator(wrappedEstimator{est}))
	var out bytes.Buffer
	err = s.SaveEstimates(&out)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	assert.Contains(t, err.Error(), fmt.Sprintf("finegrain: save estimates: the estimator, a %T, cannot be checkpointed", wrappedEstimator{}))
	assert.Zero(t, out.Len(), "nothing written")

	in := strings.NewReader("{}")
	err = s.RestoreEstimates(in)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	assert.Contains(t, err.Error(), "finegrain: restore estimates: the estimator")
	assert.Equal(t, 2, in.Len(), "nothing read")
}
