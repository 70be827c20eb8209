package speculate_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

var std = resource.Standard()

const sec = time.Second

// params are the gopter parameters every property uses: 1000 cases, fixed seed.
func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

// tracker returns an empty progress tracker.
func tracker(t testing.TB) *predict.ProgressTracker {
	t.Helper()
	tr, err := predict.NewProgressTracker()
	require.NoError(t, err)
	return tr
}

// finished records a task that ran on node from start to end.
func finished(t testing.TB, tr *predict.ProgressTracker, id, node string, start, end time.Duration) {
	t.Helper()
	require.NoError(t, tr.Start(id, node, start))
	require.NoError(t, tr.Finish(id, end))
}

// running records a task started on node at start that reported progress at at.
func running(t testing.TB, tr *predict.ProgressTracker, id, node string, start time.Duration, progress float64, at time.Duration) {
	t.Helper()
	require.NoError(t, tr.Start(id, node, start))
	require.NoError(t, tr.Update(id, progress, at))
}

// staticEstimator is a RuntimeEstimator over fixed values, to feed the speculators
// what a custom (possibly broken) model could report.
type staticEstimator struct {
	tasks    []predict.TaskProgress
	nodes    map[string]predict.RateStats
	finished predict.RateStats
}

func (s *staticEstimator) Task(id string, _ time.Duration) (predict.TaskProgress, bool) {
	for _, t := range s.tasks {
		if t.Task == id {
			return t, true
		}
	}
	return predict.TaskProgress{}, false
}

func (s *staticEstimator) Running(_ time.Duration, dst []predict.TaskProgress) []predict.TaskProgress {
	return append(dst, s.tasks...)
}

func (s *staticEstimator) NodeRate(node string) (predict.RateStats, bool) {
	r, ok := s.nodes[node]
	return r, ok
}

func (s *staticEstimator) Finished() predict.RateStats { return s.finished }

// knownError reports whether err wraps one of the sentinels this package (or
// resource) documents.
func knownError(err error) bool {
	for _, s := range []error{
		speculate.ErrInvalidOption, speculate.ErrInvalidValue, speculate.ErrBadProgress, speculate.ErrBadTime,
		speculate.ErrEmptyID, speculate.ErrDuplicate, speculate.ErrUnknownNode, speculate.ErrUnknownJob,
		speculate.ErrOverCapacity, speculate.ErrInconsistent, speculate.ErrCannotMeet,
		resource.ErrNegative, resource.ErrOutsideSchema, resource.ErrSchemaMismatch,
	} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
