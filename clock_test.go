package finegrain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/stage"
)

// One time model for every call that reports an event: times outside [0, MaxTime]
// are refused, an event within the clock skew behind the latest time is taken at the
// latest time, one further back is refused, and a refused call changes nothing.
func TestTimeModel(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithClockSkew(time.Second))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "m", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "j", Request: schema.MustTuple(1000, gib)}))
	}
	d, err := s.Heartbeat("n", 10*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 3)

	// Every event call refuses a negative time, one beyond MaxTime, and one further back
	// than the skew, and changes nothing.
	events := map[string]func(now time.Duration) error{
		"Heartbeat":  func(now time.Duration) error { _, err := s.Heartbeat("m", now); return err },
		"Started":    func(now time.Duration) error { return s.Started("a", now) },
		"Progress":   func(now time.Duration) error { return s.Progress("a", 0.5, now) },
		"Finished":   func(now time.Duration) error { return s.Finished("a", now, nil) },
		"Failed":     func(now time.Duration) error { return s.Failed("b", now) },
		"Cancel":     func(now time.Duration) error { return s.Cancel("c", now) },
		"RemoveNode": func(now time.Duration) error { _, err := s.RemoveNode("m", now); return err },
		"SetExternalLoad": func(now time.Duration) error {
			_, err := s.SetExternalLoad("n", now, schema.MustTuple(1, 1))
			return err
		},
		"ReportUsage": func(now time.Duration) error { _, err := s.ReportUsage("n", now, nil); return err },
	}
	for name, call := range events {
		for _, now := range []time.Duration{-1, finegrain.MaxTime + 1, 8 * time.Second} {
			err := call(now)
			assert.ErrorIs(t, err, finegrain.ErrInvalid, "%s at %v", name, now)
		}
	}
	p, r, f, c := s.Counts()
	assert.Equal(t, [4]int{0, 3, 0, 0}, [4]int{p, r, f, c}, "refused calls changed nothing")

	// Within the skew: taken at the latest time, 10 s.
	require.NoError(t, s.Finished("a", 9500*time.Millisecond, nil))
	require.NoError(t, s.Failed("b", 9*time.Second))
	d, err = s.Heartbeat("m", 9*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, 10*time.Second, d.Assignments[0].Start, "a late heartbeat happens at the latest time")

	// Queries accept any time in range and refuse others.
	_, err = s.NodeFree("n", 0)
	assert.NoError(t, err)
	_, err = s.NodeFree("n", -1)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	_, err = s.FreeSegments("n", 0, stage.Forever)
	assert.NoError(t, err)
	_, err = s.FreeSegments("n", 5, 4)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)

	// The skew option is bounded.
	_, err = finegrain.New(schema, finegrain.WithClockSkew(-time.Second))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	_, err = finegrain.New(schema, finegrain.WithClockSkew(time.Hour))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
}

// Near the end of the time range a reservation keeps its length: a task placed at
// MaxTime holds the node, and a second one that does not fit beside it is refused.
func TestReservationAtMaxTime(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithPrediction(false))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "a", Job: "j", Request: schema.MustTuple(1000, 6*gib), Duration: time.Hour},
		finegrain.Task{ID: "b", Job: "j", Request: schema.MustTuple(1000, 6*gib), Duration: time.Hour}))
	d, err := s.Heartbeat("n", finegrain.MaxTime)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1, "memory for one task only")
	free, err := s.NodeFree("n", finegrain.MaxTime)
	require.NoError(t, err)
	assert.Equal(t, int64(2*gib), free[1])
}
