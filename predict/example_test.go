package predict_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Learn a demand profile from two similar tasks (same logic, same input size) and
// predict the third: hand each finished task's usage samples to the estimator, which
// divides them into stages (Segment shows the division), and ask for the key.
func Example() {
	schema := resource.Standard()
	est, err := predict.NewSimilarTask(schema, predict.WithBaseWeight(0.5))
	if err != nil {
		panic(err)
	}
	key := predict.Key{Logic: "md5:9e107d9d372bb6826bd81d3542a419d6/map", InputSize: 128 << 20}

	// Two map tasks sampled every 10 s: a CPU-bound read, then a memory-heavy spill.
	// Usage is (millicores, MiB).
	runs := [][][2]int64{
		{{1900, 512}, {2000, 512}, {1950, 512}, {2000, 512}, {400, 2048}, {400, 2048}},
		{{2000, 512}, {2000, 512}, {1800, 512}, {2000, 512}, {2000, 512}, {500, 1536}, {450, 1536}, {500, 1536}},
	}
	for _, run := range runs {
		samples := make([]predict.Sample, len(run))
		for i, u := range run {
			samples[i] = predict.Sample{At: time.Duration(i) * 10 * time.Second, Usage: schema.MustTuple(u[0], u[1]<<20)}
		}
		profile, err := predict.Segment(schema, samples)
		if err != nil {
			panic(err)
		}
		fmt.Println("observed: ", profile)
		if err := est.Observe(key, predict.Observation{Series: predict.Series{Samples: samples}}); err != nil {
			panic(err)
		}
	}

	// CPU and durations are the iterative update's halfway points (w = 0.5); memory
	// never falls below what a recent run used in the stage (the envelope).
	third, ok := est.Estimate(key)
	fmt.Println("predicted:", third, ok)
	_, ok = est.Estimate(predict.Key{Logic: key.Logic, InputSize: 64 << 20})
	fmt.Println("other input size predictable:", ok)
	// Output:
	// observed:  [40s {cpu=2,memory=512Mi}, 20s {cpu=400m,memory=2Gi}]
	// observed:  [50s {cpu=2,memory=512Mi}, 30s {cpu=500m,memory=1536Mi}]
	// predicted: [45s {cpu=2,memory=512Mi}, 25s {cpu=450m,memory=2Gi}] true
	// other input size predictable: false
}

// A compressed observation counts for less (the eq. 8 Reading): the task below got 20%
// less CPU than it needed, so its lower usage moves the estimate with weight
// 0.5 × (1 − 0.2) = 0.4 instead of 0.5.
func ExampleSimilarTask_Observe() {
	schema := resource.Standard()
	est, _ := predict.NewSimilarTask(schema, predict.WithBaseWeight(0.5))
	key := predict.Key{Logic: "etl/reduce", InputSize: 1 << 30}
	first, _ := predict.Segment(schema, []predict.Sample{{At: 0, Usage: schema.MustTuple(2000)}}, predict.WithLastDuration(time.Minute))
	squeezed, _ := predict.Segment(schema, []predict.Sample{{At: 0, Usage: schema.MustTuple(1600)}}, predict.WithLastDuration(75*time.Second))
	_ = est.Observe(key, predict.Observation{Profile: first})
	_ = est.Observe(key, predict.Observation{Profile: squeezed, Compression: []resource.Vector{{0.2}}})
	p, _ := est.Estimate(key)
	fmt.Println(p)
	// Output: [1m6s {cpu=1840m}]
}

// Nearest-size scaling answers for an input size never seen, from the nearest one seen.
func ExampleWithNearestSize() {
	schema := resource.Standard()
	est, _ := predict.NewSimilarTask(schema, predict.WithNearestSize(4))
	seen, _ := predict.Segment(schema, []predict.Sample{{Usage: schema.MustTuple(1000)}}, predict.WithLastDuration(time.Minute))
	_ = est.Observe(predict.Key{Logic: "scan", InputSize: 100}, predict.Observation{Profile: seen})
	p, ok := est.Estimate(predict.Key{Logic: "scan", InputSize: 250})
	fmt.Println(p, ok)
	// Output: [2m30s {cpu=1}] true
}

// A job seen for the first time is predicted from its family: other runs of the same
// application, on inputs of a similar size. The family learns every run, per
// power-of-two class of input size, and a class not seen yet borrows its neighbour's
// estimate, durations scaled by the size ratio.
func ExampleWithFamily() {
	schema := resource.Standard()
	est, _ := predict.NewSimilarTask(schema) // family learning is on by default
	run, _ := predict.Segment(schema, []predict.Sample{{Usage: schema.MustTuple(1000, 512<<20)}}, predict.WithLastDuration(time.Minute))
	_ = est.Observe(predict.Key{Logic: "wordcount --in=/logs/a/map", InputSize: 100 << 20, Family: "wordcount/map"}, predict.Observation{Profile: run})

	for _, k := range []predict.Key{
		{Logic: "wordcount --in=/logs/b/map", InputSize: 120 << 20, Family: "wordcount/map"}, // same class [64, 128) MiB
		{Logic: "wordcount --in=/logs/c/map", InputSize: 200 << 20, Family: "wordcount/map"}, // next class up
		{Logic: "wordcount --in=/logs/d/map", InputSize: 900 << 20, Family: "wordcount/map"}, // too far
		{Logic: "sort --in=/logs/a/map", InputSize: 100 << 20, Family: "sort/map"},           // another application
	} {
		p, ok := est.Estimate(k)
		fmt.Println(k.Logic, p, ok)
	}
	// Output:
	// wordcount --in=/logs/b/map [1m0s {cpu=1,memory=512Mi}] true
	// wordcount --in=/logs/c/map [2m0s {cpu=1,memory=512Mi}] true
	// wordcount --in=/logs/d/map [] false
	// sort --in=/logs/a/map [] false
}

// Siblings started together need not wait for one of them to finish: what a running
// one has used so far predicts them — its stages so far, then its peak with no end
// (a scheduler holds that until the task finishes, as it holds a request). The first
// task to finish replaces it.
func ExampleSimilarTask_ObserveRunning() {
	schema := resource.Standard()
	est, _ := predict.NewSimilarTask(schema)
	key := predict.Key{Logic: "etl/j42/t3", InputSize: 0}
	// One sibling sampled every 10 s so far: a start-up, then steady work.
	sofar := predict.Series{End: 40 * time.Second}
	for i, cpu := range []int64{300, 1500, 1500, 1500} {
		sofar.Samples = append(sofar.Samples, predict.Sample{At: time.Duration(i) * 10 * time.Second, Usage: schema.MustTuple(cpu, 1<<30)})
	}
	_ = est.ObserveRunning(key, predict.Observation{Series: sofar})
	p, ok := est.Estimate(key)
	seen, _ := stage.NewProfile(schema, p.Stages()[:p.Len()-1]...)
	open := p.Stage(p.Len() - 1)
	fmt.Println("running: ", seen, "then for ever", schema.Format(open.Demand), ok, open.Duration == stage.Forever, est.Observations(key))

	done, _ := predict.Segment(schema, []predict.Sample{{Usage: schema.MustTuple(1500, 1<<30)}}, predict.WithLastDuration(5*time.Minute))
	_ = est.Observe(key, predict.Observation{Profile: done})
	p, ok = est.Estimate(key)
	fmt.Println("finished:", p, ok, est.Observations(key))
	// Output:
	// running:  [10s {cpu=300m,memory=1Gi}, 30s {cpu=1500m,memory=1Gi}] then for ever cpu=1500m,memory=1Gi true true 0
	// finished: [5m0s {cpu=1500m,memory=1Gi}] true 1
}

func ExampleSegment() {
	schema := resource.Standard()
	var samples []predict.Sample
	for i, cpu := range []int64{100, 120, 100, 900, 880, 900, 900, 300} {
		samples = append(samples, predict.Sample{At: time.Duration(i) * 5 * time.Minute, Usage: schema.MustTuple(cpu)})
	}
	p, _ := predict.Segment(schema, samples)
	fmt.Println(p)
	p, _ = predict.Segment(schema, samples, predict.WithMinStage(10*time.Minute))
	fmt.Println(p)
	// Output:
	// [15m0s {cpu=120m}, 20m0s {cpu=900m}, 5m0s {cpu=300m}]
	// [15m0s {cpu=120m}, 25m0s {cpu=900m}]
}

func ExampleConformity() {
	schema := resource.Standard()
	capacity := schema.MustTuple(4000)
	window := []predict.Interval{
		{Duration: time.Minute, Actual: schema.MustTuple(3600), Predicted: schema.MustTuple(3000), Idle: schema.MustTuple(400)},
		{Duration: time.Minute, Actual: schema.MustTuple(3000), Predicted: schema.MustTuple(3000), Idle: schema.MustTuple(1000)},
	}
	f, _ := predict.Conformity(schema, capacity, resource.Uniform(schema.All(), 0.2), window)
	fmt.Printf("cpu F = %.0f millicores², rms error %.0f millicores\n", f[0], math.Sqrt(f[0]))

	log, _ := predict.NewConformityLog(3)
	_ = log.Record("node-1", f)
	_ = log.Record("node-1", resource.Vector{20000})
	mean, _ := log.Mean("node-1")
	fmt.Printf("mean of the last values = %.0f\n", mean[0])
	// Output:
	// cpu F = 180000 millicores², rms error 424 millicores
	// mean of the last values = 100000
}

func ExampleProgressTracker() {
	tr, _ := predict.NewProgressTracker()
	_ = tr.Start("map-1", "node-a", 0)
	_ = tr.Start("map-2", "node-b", 0)
	_ = tr.Start("map-3", "node-b", 0)
	_ = tr.Finish("map-1", 100*time.Second)
	_ = tr.Update("map-2", 0.8, 90*time.Second)
	_ = tr.Update("map-3", 0.2, 90*time.Second)
	for _, t := range tr.Running(100*time.Second, nil) {
		fmt.Printf("%s on %s: progress %.1f, rate %.4f/s, time left %v, slow %v\n", t.Task, t.Node, t.Progress, t.Rate, t.TimeLeft, t.Slow)
	}
	a, _ := tr.NodeRate("node-a")
	fmt.Printf("node-a rate %.3f/s from %d task(s)\n", a.Mean, a.N)
	// Output:
	// map-2 on node-b: progress 0.8, rate 0.0080/s, time left 25s, slow true
	// map-3 on node-b: progress 0.2, rate 0.0020/s, time left 6m40s, slow true
	// node-a rate 0.010/s from 1 task(s)
}

func ExampleDetectStraggler() {
	samples := []predict.ProgressSample{
		{At: 10 * time.Second, Progress: 0.10},
		{At: 20 * time.Second, Progress: 0.30},
		{At: 30 * time.Second, Progress: 0.40},
		{At: 40 * time.Second, Progress: 0.45},
	}
	v, _ := predict.DetectStraggler(samples, 0, 2*time.Minute)
	fmt.Printf("v1 %.3f/s, v2 %.3f/s, finish %v, straggler %v\n", v.V1, v.V2, v.Finish, v.Straggler)
	// Output: v1 0.020/s, v2 0.005/s, finish 2m30s, straggler true
}

func ExampleDetectRedundant() {
	schema := resource.Standard()
	usage := []resource.Tuple{schema.MustTuple(800, 2<<30), schema.MustTuple(1000, 3<<30)}
	r, _ := predict.DetectRedundant(schema, usage, schema.MustTuple(4000, 4<<30), resource.Uniform(schema.All(), 0.8))
	fmt.Println("redundant:", r.IsRedundant(), "reclaim:", schema.Format(r.Reclaimable))
	// Output: redundant: true reclaim: cpu=2750m,memory=256Mi
}

// Stages follow the data. A key first seen as two stages starts to run as three (a new
// version of the job adds a phase); the estimate keeps its two stages, resampling each
// new series onto them, until a re-division — run periodically off the scheduling
// path, here by hand — divides the key's recent history again.
func ExampleSimilarTask_Redivide() {
	schema := resource.Standard()
	est, _ := predict.NewSimilarTask(schema)
	key := predict.Key{Logic: "etl/transform", InputSize: 1 << 30}
	series := func(phases ...[3]int64) predict.Series { // (seconds, millicores, MiB)
		var sr predict.Series
		at := time.Duration(0)
		for _, ph := range phases {
			for end := at + time.Duration(ph[0])*time.Second; at < end; at += 5 * time.Second {
				sr.Samples = append(sr.Samples, predict.Sample{At: at, Usage: schema.MustTuple(ph[1], ph[2]<<20)})
			}
		}
		sr.End = at
		return sr
	}
	_ = est.Observe(key, predict.Observation{Series: series([3]int64{60, 2000, 512}, [3]int64{60, 500, 2048})})
	for i := 0; i < predict.DefaultHistory; i++ {
		_ = est.Observe(key, predict.Observation{Series: series([3]int64{40, 2000, 512}, [3]int64{40, 4000, 1024}, [3]int64{40, 500, 2048})})
	}
	p, _ := est.Estimate(key)
	fmt.Println("before:", p.Len(), "stages")
	fmt.Println("re-divided keys:", est.Redivide())
	p, _ = est.Estimate(key)
	fmt.Println("after: ", p)
	// The division is in 32nds of the run (a bucket astride each change holds both
	// sides' peaks); later runs, divided as three stages too, are learned stage by
	// stage and move it towards the truth (40 s each; 2, 4 and 0.5 cores).
	for i := 0; i < 10; i++ {
		_ = est.Observe(key, predict.Observation{Series: series([3]int64{40, 2000, 512}, [3]int64{40, 4000, 1024}, [3]int64{40, 500, 2048})})
	}
	p, _ = est.Estimate(key)
	fmt.Println("later: ", p)
	// Output:
	// before: 2 stages
	// re-divided keys: 1
	// after:  [37.5s {cpu=2,memory=512Mi}, 45s {cpu=4,memory=2Gi}, 37.5s {cpu=500m,memory=2Gi}]
	// later:  [39.929381188s {cpu=2,memory=512Mi}, 40.141237625s {cpu=4,memory=1104072373}, 39.929381188s {cpu=500m,memory=2Gi}]
}

// Save what an estimator learned and restore it into another — the scheduler after a
// restart, or the replica taking over on failover — which then predicts as the first
// did. A checkpoint made for another schema is refused, and changes nothing.
func ExampleSimilarTask_Checkpoint() {
	schema := resource.Standard()
	est, _ := predict.NewSimilarTask(schema)
	key := predict.Key{Logic: "etl/map", InputSize: 1 << 30}
	for _, cpu := range []int64{2000, 1000} {
		seen, _ := predict.Segment(schema, []predict.Sample{{Usage: schema.MustTuple(cpu, 1<<30)}}, predict.WithLastDuration(time.Minute))
		_ = est.Observe(key, predict.Observation{Profile: seen})
	}

	var saved bytes.Buffer // a file, a ConfigMap, an object in a bucket
	if err := est.Checkpoint(&saved); err != nil {
		panic(err)
	}
	restarted, _ := predict.NewSimilarTask(schema)
	if err := restarted.Restore(bytes.NewReader(saved.Bytes())); err != nil {
		panic(err)
	}
	before, _ := est.Estimate(key)
	after, ok := restarted.Estimate(key)
	fmt.Println("before:", before)
	fmt.Println("after: ", after, ok)

	other, _ := predict.NewSimilarTask(resource.MustSchema(resource.CPU, resource.Memory))
	err := other.Restore(bytes.NewReader(saved.Bytes()))
	fmt.Println(errors.Is(err, predict.ErrCheckpoint), errors.Is(err, resource.ErrSchemaMismatch), other.Len())
	// Output:
	// before: [1m0s {cpu=1700m,memory=1Gi}]
	// after:  [1m0s {cpu=1700m,memory=1Gi}] true
	// true true 0
}
