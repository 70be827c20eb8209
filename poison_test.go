package finegrain_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The estimator never makes a task unschedulable that its request alone would place:
// whatever it has learned (here: observations of any size, poisoned ones included,
// fed to it directly), a task whose request fits some empty node is placed when the
// nodes heartbeat.
func TestPropertyEstimateNeverStarves(t *testing.T) {
	params := gopter.DefaultTestParameters() // a fresh seed, which gopter prints on failure
	params.MinSuccessfulTests = 200
	props := gopter.NewProperties(params)
	props.Property("a task whose request fits an empty node is placed", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		s, err := finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
		if err != nil {
			return err.Error()
		}
		nodes := 1 + r.IntN(4)
		var biggest int
		caps := make([][2]int64, nodes)
		for i := range caps {
			caps[i] = [2]int64{int64(1+r.IntN(16)) * 1000, int64(1+r.IntN(64)) * gib}
			if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Capacity: schema.MustTuple(caps[i][0], caps[i][1])}); err != nil {
				return err.Error()
			}
			if caps[i][0]+caps[i][1] > caps[biggest][0]+caps[biggest][1] {
				biggest = i
			}
		}
		// A request that fits node `biggest`.
		req := schema.MustTuple(1+r.Int64N(caps[biggest][0]), 1+r.Int64N(caps[biggest][1]))
		key := predict.Key{Logic: "poisoned", InputSize: 1}
		for k := 1 + r.IntN(3); k > 0; k-- {
			// Anything from a sliver to 1,000× the largest node, on either dimension.
			cpu := 1 + r.Int64N(1000*16*1000)
			mem := 1 + r.Int64N(1000*64*gib)
			p := stage.MustProfile(schema, stage.Stage{Duration: time.Duration(1+r.IntN(60)) * time.Second, Demand: schema.MustTuple(cpu, mem)})
			if err := s.Estimator().Observe(key, predict.Observation{Profile: p}); err != nil {
				return err.Error()
			}
		}
		if err := s.SubmitJob(finegrain.Job{ID: "j"}); err != nil {
			return err.Error()
		}
		if err := s.Submit(finegrain.Task{ID: "t", Job: "j", Key: key, Request: req}); err != nil {
			return err.Error()
		}
		for i := range caps {
			d, err := s.Heartbeat(fmt.Sprintf("n%d", i), 0)
			if err != nil {
				return err.Error()
			}
			if len(d.Assignments) == 1 {
				return ""
			}
		}
		return fmt.Sprintf("request %v on nodes %v: not placed", req, caps)
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// runningTask returns a scheduler with one node of 4 cores and 16 GiB running one
// task, "t", of key "wc", and that key.
func runningTask(t *testing.T) (*finegrain.Scheduler, predict.Key) {
	t.Helper()
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "wc", InputSize: 1}
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Key: key, Request: schema.MustTuple(1000, gib)}))
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	return s, key
}

// An observation beyond the capacity of the node the task ran on is refused
// (ErrImplausible) and teaches the estimator nothing; the task can still finish.
func TestImplausibleObservationRefused(t *testing.T) {
	s, key := runningTask(t)
	tib := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(1000, 1024*gib)})
	err := s.Finished("t", time.Second, &predict.Observation{Profile: tib})
	assert.ErrorIs(t, err, finegrain.ErrImplausible)
	assert.ErrorContains(t, err, `node "n"`)
	_, learned := s.Estimator().Estimate(key)
	assert.False(t, learned, "nothing learned")
	require.NoError(t, s.Finished("t", time.Second, nil))
}

// Observations and usage reports in amounts of another schema are refused as such
// (resource.ErrSchemaMismatch, ErrOutsideSchema), not as beyond the node's capacity,
// and change nothing.
func TestForeignSchemaObservationsRefused(t *testing.T) {
	s, key := runningTask(t)
	other := resource.MustSchema(resource.CPU, resource.Memory, resource.DiskIO)
	foreign := stage.MustProfile(other, stage.Stage{Duration: time.Second, Demand: other.MustTuple(1000, gib, 1)})
	err := s.Finished("t", time.Second, &predict.Observation{Profile: foreign})
	assert.ErrorIs(t, err, resource.ErrSchemaMismatch)
	assert.NotErrorIs(t, err, finegrain.ErrImplausible)
	st, _ := s.TaskState("t")
	assert.Equal(t, finegrain.Running, st, "the refused finish changed nothing")
	_, learned := s.Estimator().Estimate(key)
	assert.False(t, learned, "nothing learned")

	_, err = s.ReportUsage("n", time.Second, []predict.Interval{{Duration: time.Second, Actual: resource.Tuple{1000, gib, 7}}})
	assert.ErrorIs(t, err, resource.ErrOutsideSchema)
	assert.ErrorContains(t, err, "window[0]")
	_, err = s.ReportUsage("n", time.Second, []predict.Interval{{Duration: time.Second, Actual: resource.Tuple{-1, gib}}})
	assert.ErrorIs(t, err, resource.ErrNegative)
	require.NoError(t, s.Finished("t", time.Second, nil))
}

// A usage series, as a node agent samples it, is learned as the estimator divides it;
// one with a sample beyond the node's capacity, or a bad one, is refused and changes
// nothing, and the task can still finish.
func TestFinishedWithSeries(t *testing.T) {
	series := func(mem ...int64) *predict.Observation {
		sr := predict.Series{End: time.Duration(len(mem)) * 3 * time.Second}
		for i, m := range mem {
			sr.Samples = append(sr.Samples, predict.Sample{At: time.Duration(i) * 3 * time.Second, Usage: schema.MustTuple(900, m)})
		}
		return &predict.Observation{Series: sr}
	}
	t.Run("implausible", func(t *testing.T) {
		s, key := runningTask(t)
		err := s.Finished("t", time.Minute, series(gib, 64*gib))
		assert.ErrorIs(t, err, finegrain.ErrImplausible)
		st, _ := s.TaskState("t")
		assert.Equal(t, finegrain.Running, st)
		_, learned := s.Estimator().Estimate(key)
		assert.False(t, learned)
		require.NoError(t, s.Finished("t", time.Minute, nil))
	})
	t.Run("out of order", func(t *testing.T) {
		s, key := runningTask(t)
		obs := series(gib, 2*gib)
		obs.Series.Samples[1].At = 0
		err := s.Finished("t", time.Minute, obs)
		assert.ErrorIs(t, err, predict.ErrUnsorted)
		_, learned := s.Estimator().Estimate(key)
		assert.False(t, learned)
	})
	t.Run("learned", func(t *testing.T) {
		s, key := runningTask(t)
		require.NoError(t, s.Finished("t", time.Minute, series(gib, gib, gib, 4*gib, 4*gib, 4*gib, 4*gib)))
		p, ok := s.Estimator().Estimate(key)
		require.True(t, ok)
		assert.Equal(t, []stage.Stage{
			{Duration: 9 * time.Second, Demand: schema.MustTuple(900, gib)},
			{Duration: 12 * time.Second, Demand: schema.MustTuple(900, 4*gib)},
		}, p.Stages(), "two stages, not seven")
	})
}
