package plugins

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// randomProfile is a profile of 1 to 4 stages of at most 4 s, 2 cores and 4 GiB.
func randomProfile(r *rand.Rand, schema *resource.Schema) stage.Profile {
	st := make([]stage.Stage, 1+r.Intn(4))
	for i := range st {
		st[i] = stage.Stage{
			Duration: time.Duration(1+r.Intn(4000)) * time.Millisecond,
			Demand:   schema.MustTuple(int64(r.Intn(2000)), int64(r.Intn(4<<10))<<20),
		}
	}
	return stage.MustProfile(schema, st...)
}

// An observation that changes a key's estimate changes the next demand of its tasks:
// the cached hold is never served for an estimate it was not built from.
func TestPredictionCacheFollowsTheEstimate(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	est, err := predict.NewSimilarTask(schema, predict.WithBaseWeight(1))
	require.NoError(t, err)
	st, err := cluster.New(schema)
	require.NoError(t, err)
	require.NoError(t, st.AddJob(cluster.JobSpec{ID: "j"}))
	key := predict.Key{Logic: "k", InputSize: 1}
	require.NoError(t, st.Submit(cluster.TaskSpec{ID: "t", Job: "j", Key: key, Request: schema.MustTuple(1, 1)}))
	task, _ := st.Task("t")
	p, err := NewPrediction(schema, est, true)
	require.NoError(t, err)

	first := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(500, 1<<30)})
	require.NoError(t, est.Observe(key, predict.Observation{Profile: first}))
	d := p.Demand(nil, task)
	assert.Equal(t, first, d.Plan)
	assert.Equal(t, schema.MustTuple(0, 1<<30), d.Hold.Stage(1).Demand)
	again := p.Demand(nil, task)
	assert.True(t, again.Hold.Same(d.Hold), "the same estimate's hold is served from the cache")

	// Weight 1: the estimate becomes the observation.
	second := stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: schema.MustTuple(700, 3<<30)})
	require.NoError(t, est.Observe(key, predict.Observation{Profile: second}))
	d = p.Demand(nil, task)
	assert.Equal(t, second.Stage(0), d.Plan.Stage(0))
	assert.Equal(t, second.Stage(0), d.Hold.Stage(0), "the hold follows the new estimate")
	assert.Equal(t, schema.MustTuple(0, 3<<30), d.Hold.Stage(1).Demand)

	// A key forgotten and learned again gets its new estimate's hold.
	require.True(t, est.Forget(key))
	require.NoError(t, est.Observe(key, predict.Observation{Profile: first}))
	d = p.Demand(nil, task)
	assert.Equal(t, first.Stage(0), d.Hold.Stage(0))
}

// Cached and uncached demands agree on any sequence of observations, forgets and
// submissions: the demand of every task equals the demand built afresh from the
// estimate of a twin estimator asked by key, which is told and asked the same. With a
// cap of a few keys, a cached demand that skipped a use of its key, or read an evicted
// entry, would make the twins evict different keys, and their answers part.
func TestPredictionCacheProperty(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	props := gopter.NewProperties(params)
	props.Property("the cached demand is the demand built afresh", prop.ForAll(func(seed int64, holdTail bool, maxKeys int) string {
		r := rand.New(rand.NewSource(seed))
		opts := []predict.EstimatorOption{predict.WithMaxKeys(maxKeys), predict.WithMinObservations(1 + r.Intn(2))}
		if r.Intn(2) == 0 {
			opts = append(opts, predict.WithNearestSize(4))
		}
		est, err := predict.NewSimilarTask(schema, opts...)
		if err != nil {
			return err.Error()
		}
		twin, err := predict.NewSimilarTask(schema, opts...)
		if err != nil {
			return err.Error()
		}
		st, err := cluster.New(schema)
		if err != nil {
			return err.Error()
		}
		if err := st.AddNode(cluster.NodeSpec{ID: "n", Capacity: schema.MustTuple(8000, 16<<30)}); err != nil {
			return err.Error()
		}
		if err := st.AddJob(cluster.JobSpec{ID: "j"}); err != nil {
			return err.Error()
		}
		p, err := NewPrediction(schema, est, holdTail)
		if err != nil {
			return err.Error()
		}
		afresh, err := NewPrediction(schema, twin, holdTail)
		if err != nil {
			return err.Error()
		}
		key := func() predict.Key {
			logic := fmt.Sprint("k", r.Intn(5))
			if r.Intn(10) == 0 {
				logic = "" // predicts nothing: the request
			}
			return predict.Key{Logic: logic, InputSize: int64(r.Intn(3))}
		}
		var tasks []*cluster.TaskInfo
		for step := range 80 {
			switch r.Intn(4) {
			case 0:
				k, obs := key(), predict.Observation{Profile: randomProfile(r, schema)}
				if k.Logic == "" {
					continue
				}
				if est.Observe(k, obs) != nil || twin.Observe(k, obs) != nil {
					return "observation rejected"
				}
			case 1:
				if k := key(); est.Forget(k) != twin.Forget(k) {
					return fmt.Sprintf("step %d: the twins remembered %v differently", step, k)
				}
			case 2:
				id := fmt.Sprint("t", step)
				if err := st.Submit(cluster.TaskSpec{ID: id, Job: "j", Key: key(), Request: schema.MustTuple(1000, 1<<30)}); err != nil {
					return err.Error()
				}
				t, _ := st.Task(id)
				tasks = append(tasks, t)
			default:
				if len(tasks) == 0 {
					continue
				}
				t := tasks[r.Intn(len(tasks))]
				var c *framework.Cycle // no cycle: the node check is skipped both ways
				got := p.Demand(c, t)
				want := framework.TaskDemand{Plan: t.RequestProfile(schema), Hold: t.RequestProfile(schema)}
				if prof, ok := afresh.Estimate(nil, t.Key()); ok {
					want = afresh.predicted(prof)
				}
				if !reflect.DeepEqual(got, want) {
					return fmt.Sprintf("step %d: task %s (key %v) demands %v / %v, built afresh %v / %v", step, t.ID(), t.Key(), got.Plan, got.Hold, want.Plan, want.Hold)
				}
			}
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker), gen.Bool(), gen.IntRange(1, 6)))
	props.TestingRun(t)
}

// Demands are asked concurrently (probes) while the estimator learns: what the cache
// keeps of a key, its reference into the estimator included, is guarded (run with
// -race), and every demand is the task's estimate held as the hold rule says.
func TestPredictionConcurrentDemands(t *testing.T) {
	schema, est, st, p := predictionFixture(t, predict.WithMaxKeys(3))
	var tasks []*cluster.TaskInfo
	for i := range 8 {
		id := fmt.Sprint("t", i)
		require.NoError(t, st.Submit(cluster.TaskSpec{ID: id, Job: "j", Key: predict.Key{Logic: fmt.Sprint("k", i%4), InputSize: 1}, Request: schema.MustTuple(1000, 1<<30)}))
		task, _ := st.Task(id)
		tasks = append(tasks, task)
	}
	done := make(chan string)
	for g := range 4 {
		go func() {
			r := rand.New(rand.NewSource(int64(g)))
			for range 300 {
				task := tasks[r.Intn(len(tasks))]
				if g == 0 {
					_ = est.Observe(task.Key(), predict.Observation{Profile: randomProfile(r, schema)})
					continue
				}
				d := p.Demand(nil, task)
				tail := d.Plan.Stage(d.Plan.Len() - 1).Demand
				if d.Predicted && tail[1] > 0 && d.Hold.Stage(d.Hold.Len()-1).Duration != stage.Forever {
					done <- fmt.Sprintf("task %s: a predicted hold %v does not hold its memory until the task ends", task.ID(), d.Hold)
					return
				}
			}
			done <- ""
		}()
	}
	for range 4 {
		assert.Empty(t, <-done)
	}
}

// predictionFixture is a state of CPU and memory with a job "j" and a hold-until-
// finished Prediction of a SimilarTask estimator built with opts.
func predictionFixture(t *testing.T, opts ...predict.EstimatorOption) (*resource.Schema, *predict.SimilarTask, *cluster.State, *Prediction) {
	t.Helper()
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	est, err := predict.NewSimilarTask(schema, opts...)
	require.NoError(t, err)
	st, err := cluster.New(schema)
	require.NoError(t, err)
	require.NoError(t, st.AddJob(cluster.JobSpec{ID: "j"}))
	p, err := NewPrediction(schema, est, true)
	require.NoError(t, err)
	return schema, est, st, p
}
