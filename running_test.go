package finegrain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// sofar is a running task's series: one sample every 10 s of the given (millicores,
// GiB), ending at the next sample's time.
func sofar(usage ...[2]int64) predict.Observation {
	var sr predict.Series
	for i, u := range usage {
		sr.Samples = append(sr.Samples, predict.Sample{At: time.Duration(i) * 10 * time.Second, Usage: schema.MustTuple(u[0], u[1]*gib)})
	}
	sr.End = time.Duration(len(usage)) * 10 * time.Second
	return predict.Observation{Series: sr}
}

// Siblings started together: the first runs on its request while nothing is known of
// its key; once it reports what it uses, the others are placed on that — what it used
// so far, then its peak with no end — holding at least the request's memory in the
// open stage, so that more of them fit than their requests allow.
func TestReportRunningPredictsSiblings(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "j/t1/map"}
	req := schema.MustTuple(4000, 2*gib)
	for i := 0; i < 6; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("t%d", i), Job: "j", Key: key, Request: req}))
	}
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 2, "two requests of 4 cores fill the node")
	assert.False(t, d.Assignments[0].Predicted)

	// t0 uses half a core, then a core, and 1 GiB, well below its request.
	require.NoError(t, s.ReportRunning("t0", 20*time.Second, sofar([2]int64{500, 1}, [2]int64{1000, 1})))
	require.NoError(t, s.Finished("t1", 20*time.Second, nil)) // room for more
	d, err = s.Heartbeat("n", 20*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 4, "4 cores free: four tasks at one core each")
	for _, a := range d.Assignments {
		assert.True(t, a.Predicted)
		assert.Equal(t, stage.Forever, a.Profile.Duration(), "held until the task finishes")
		open := a.Profile.Stage(a.Profile.Len() - 1).Demand
		assert.Equal(t, int64(1000), open[0], "the cpu it used")
		assert.Equal(t, int64(2*gib), open[1], "the memory requested: what it will reach is unknown")
	}
}

func TestReportRunningRejects(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "k"}
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "run", Job: "j", Key: key, Request: schema.MustTuple(4000, 2*gib)},
		finegrain.Task{ID: "nokey", Job: "j", Request: schema.MustTuple(1000, 1*gib)},
	))
	_, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.NoError(t, s.Submit(finegrain.Task{ID: "waiting", Job: "j", Key: key, Request: schema.MustTuple(8000, 2*gib)}))
	other := resource.MustSchema(resource.CPU)
	tests := []struct {
		name string
		id   string
		obs  predict.Observation
		want error
	}{
		{"unknown task", "nope", sofar([2]int64{1, 1}), finegrain.ErrUnknownTask},
		{"pending task", "waiting", sofar([2]int64{1, 1}), finegrain.ErrState},
		{"more than the node", "run", sofar([2]int64{1, 32}), finegrain.ErrImplausible},
		{"another schema", "run", predict.Observation{Profile: stage.MustProfile(other, stage.Stage{Duration: time.Second})}, resource.ErrSchemaMismatch},
		{"the estimator refuses", "run", predict.Observation{}, stage.ErrEmptyProfile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, s.ReportRunning(tt.id, time.Second, tt.obs), tt.want)
			_, ok := s.Estimator().Estimate(key)
			assert.False(t, ok, "a refused report teaches nothing")
		})
	}
	require.NoError(t, s.ReportRunning("nokey", time.Second, sofar([2]int64{1, 1})), "a task without a key: nothing to learn")
}

// Without learning from running tasks (predict.WithoutRunning) a report is accepted and
// teaches nothing.
func TestReportRunningWithoutRunning(t *testing.T) {
	est, err := predict.NewSimilarTask(schema, predict.WithoutRunning())
	require.NoError(t, err)
	s := newScheduler(t, finegrain.WithEstimator(est))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "k"}
	require.NoError(t, s.Submit(finegrain.Task{ID: "a", Job: "j", Key: key, Request: schema.MustTuple(1000, gib)}))
	_, err = s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.NoError(t, s.ReportRunning("a", 20*time.Second, sofar([2]int64{500, 1}, [2]int64{500, 1})))
	_, ok := est.Estimate(key)
	assert.False(t, ok)
}

// A job's tasks start together and none has finished: the first ones run on their
// requests, and once one reports what it uses so far, its pending siblings are placed
// on that — with no end known, and at least the request's memory — instead of on
// their requests.
func ExampleScheduler_ReportRunning() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	_ = sched.AddNode(finegrain.Node{ID: "node-1", Capacity: s.MustTuple(8000, 16<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "etl"})
	key := predict.Key{Logic: "etl/stage-3"}
	for i := 0; i < 6; i++ {
		_ = sched.Submit(finegrain.Task{ID: fmt.Sprintf("i%d", i), Job: "etl", Key: key, Request: s.MustTuple(4000, 2<<30)})
	}
	d, _ := sched.Heartbeat("node-1", 0)
	fmt.Println("by request:", len(d.Assignments), "started")

	// i0's node agent has sampled it twice: a core and 1 GiB.
	sofar := predict.Series{End: 20 * time.Second, Samples: []predict.Sample{
		{At: 0, Usage: s.MustTuple(1000, 1<<30)}, {At: 10 * time.Second, Usage: s.MustTuple(1000, 1<<30)},
	}}
	if err := sched.ReportRunning("i0", 20*time.Second, predict.Observation{Series: sofar}); err != nil {
		panic(err)
	}
	_ = sched.Finished("i1", 20*time.Second, nil)
	d, _ = sched.Heartbeat("node-1", 20*time.Second)
	a := d.Assignments[0]
	fmt.Println("on i0's report:", len(d.Assignments), "started, predicted", a.Predicted, "holding", s.Format(a.Profile.Peak()))
	// Output:
	// by request: 2 started
	// on i0's report: 4 started, predicted true holding cpu=1,memory=2Gi
}
