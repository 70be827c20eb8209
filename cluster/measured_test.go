package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// TestProgressSamplesKeepTheLatestFour: a running task's progress reports are kept,
// the latest four in time order; a report at the time of the latest replaces it, and
// Started clears them.
func TestProgressSamplesKeepTheLatestFour(t *testing.T) {
	s, tk, _, _ := resizeCluster(t)
	sample := func(sec int, p float64) predict.ProgressSample {
		return predict.ProgressSample{At: time.Duration(sec) * time.Second, Progress: p}
	}
	assert.Empty(t, tk.ProgressSamples(nil))
	for i, p := range []float64{0.1, 0.2, 0.3, 0.4, 0.42} {
		require.NoError(t, s.ReportProgress(tk, p, time.Duration(i+1)*time.Second))
	}
	assert.Equal(t, []predict.ProgressSample{sample(2, 0.2), sample(3, 0.3), sample(4, 0.4), sample(5, 0.42)}, tk.ProgressSamples(nil))
	require.NoError(t, s.ReportProgress(tk, 0.45, 5*time.Second))
	assert.Equal(t, []predict.ProgressSample{sample(2, 0.2), sample(3, 0.3), sample(4, 0.4), sample(5, 0.45)}, tk.ProgressSamples(nil))
	require.Error(t, s.ReportProgress(tk, 2, 6*time.Second), "progress beyond 1")
	assert.Len(t, tk.ProgressSamples(nil), 4, "a refused report is not kept")

	v, err := predict.DetectStraggler(tk.ProgressSamples(nil), tk.Start(), 8*time.Second)
	require.NoError(t, err)
	assert.True(t, v.Straggler, "slowing down, and due past its objective: %+v", v)

	require.NoError(t, s.Started(tk, 6*time.Second))
	assert.Empty(t, tk.ProgressSamples(nil), "a restart clears them")
}

// TestObserveUsed keeps the peak of the usage reported, per dimension, and refuses
// what it cannot take without changing anything.
func TestObserveUsed(t *testing.T) {
	s, tk, _, _ := resizeCluster(t)
	_, ok := tk.UsedPeak()
	assert.False(t, ok)
	require.NoError(t, s.ObserveUsed(tk, tup(1, 2, 0, 0, 0, 0)))
	require.NoError(t, s.ObserveUsed(tk, tup(2, 1, 0, 0, 0, 0)))
	peak, ok := tk.UsedPeak()
	assert.True(t, ok)
	assert.Equal(t, tup(2, 2, 0, 0, 0, 0), peak)

	var negative resource.Tuple
	negative[0] = -1
	require.ErrorIs(t, s.ObserveUsed(tk, negative), resource.ErrNegative)
	require.NoError(t, s.Submit(cluster.TaskSpec{ID: "p", Job: "j", Request: tup(1, 1, 0, 0, 0, 0)}))
	p, _ := s.Task("p")
	require.ErrorIs(t, s.ObserveUsed(p, tup(1, 1, 0, 0, 0, 0)), cluster.ErrState)
	peak, _ = tk.UsedPeak()
	assert.Equal(t, tup(2, 2, 0, 0, 0, 0), peak, "refusals change nothing")

	require.NoError(t, s.Evict(tk))
	_, ok = tk.UsedPeak()
	assert.False(t, ok, "a task pending again has no measurements")
}

// TestHeldAt reads a task's reservation at a time, and a held resize's new one.
func TestHeldAt(t *testing.T) {
	s, tk, _, _ := resizeCluster(t)
	assert.Equal(t, tup(2, 2, 0, 0, 0, 0), tk.HeldAt(time.Second))
	require.NoError(t, s.Resize(tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 5, 1)}))
	assert.Equal(t, tup(5, 1, 0, 0, 0, 0), tk.HeldAt(time.Second))
	assert.Equal(t, resource.Tuple{}, tk.HeldAt(0), "the new reservation begins at the clock")
	require.NoError(t, s.RevertChange(tk))
	assert.Equal(t, tup(2, 2, 0, 0, 0, 0), tk.HeldAt(0))
}
