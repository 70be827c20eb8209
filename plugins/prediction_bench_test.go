package plugins

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// BenchmarkPredictionDemand is the demand step of an attempt (Cycle.Prepare) for tasks
// of 1,000 learned keys taken in turn, as a heartbeat's walk asks job after job: the
// estimator's answer and the cached hold built from it.
func BenchmarkPredictionDemand(b *testing.B) {
	schema := resource.Standard()
	est, err := predict.NewSimilarTask(schema)
	if err != nil {
		b.Fatal(err)
	}
	st, err := cluster.New(schema)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.AddJob(cluster.JobSpec{ID: "j"}); err != nil {
		b.Fatal(err)
	}
	p, err := NewPrediction(schema, est, true)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	const keys = 1000
	tasks := make([]*cluster.TaskInfo, keys)
	for i := range tasks {
		key := predict.Key{Logic: fmt.Sprintf("job-%04d/map", i), InputSize: 128 << 20}
		if err := est.Observe(key, predict.Observation{Profile: randomProfile(r, schema)}); err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprint("t", i)
		if err := st.Submit(cluster.TaskSpec{ID: id, Job: "j", Key: key, Request: schema.MustTuple(1000, 1<<30)}); err != nil {
			b.Fatal(err)
		}
		tasks[i], _ = st.Task(id)
		if !p.Demand(nil, tasks[i]).Predicted {
			b.Fatalf("task %s: no prediction", id)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if d := p.Demand(nil, tasks[i%keys]); d.Hold.Len() == 0 {
			b.Fatal("empty hold")
		}
	}
}
