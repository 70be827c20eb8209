package finegrain_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// Pull mode with a scheduler wired from the blocks: Fair ordering instead of DRF, and
// an estimator that learns from every observation at weight 0.5 and buckets input
// sizes by powers of two.
func Example() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	buckets, _ := predict.LogBuckets(2)
	est, _ := predict.NewSimilarTask(s, predict.WithBaseWeight(0.5), predict.WithSizeBuckets(buckets))
	sched, err := finegrain.New(s,
		finegrain.WithOrdering(fairness.Fair{}),
		finegrain.WithEstimator(est),
		finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
	)
	if err != nil {
		panic(err)
	}
	_ = sched.AddNode(finegrain.Node{ID: "node-1", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "wordcount"})

	// Tasks ask for 2 cores and 4 GiB each; only two such requests fit the node.
	key := predict.Key{Logic: "wordcount/map", InputSize: 128 << 20}
	for i := 0; i < 4; i++ {
		_ = sched.Submit(finegrain.Task{ID: fmt.Sprintf("map-%d", i), Job: "wordcount", Key: key, Request: s.MustTuple(2000, 4<<30)})
	}
	d, _ := sched.Heartbeat("node-1", 0)
	fmt.Println("unpredictable, by request:", len(d.Assignments), "started;", d.Stop)

	// A finished task reports what its node agent sampled every 5 s: 1 core and 1 GiB
	// for 20 s. The estimator divides the series into stages (here, one).
	var used predict.Series
	for at := time.Duration(0); at < 20*time.Second; at += 5 * time.Second {
		used.Samples = append(used.Samples, predict.Sample{At: at, Usage: s.MustTuple(1000, 1<<30)})
	}
	used.End = 20 * time.Second
	_ = sched.Finished("map-0", 20*time.Second, &predict.Observation{Series: used})

	// Now tasks of that key are predictable and matched by their learned profile: the
	// two cores and 4 GiB map-0 held now take two tasks.
	d, _ = sched.Heartbeat("node-1", 20*time.Second)
	for _, a := range d.Assignments {
		fmt.Println(a.Task, "predicted:", a.Predicted, a.Profile)
	}
	// Output:
	// unpredictable, by request: 2 started; node busy
	// map-2 predicted: true [20s {cpu=1,memory=1Gi}]
	// map-3 predicted: true [20s {cpu=1,memory=1Gi}]
}

// Push mode: a task is pending; the scheduler picks the node.
func ExampleScheduler_Place() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false))
	_ = sched.AddNode(finegrain.Node{ID: "small", Capacity: s.MustTuple(2000, 4<<30)})
	_ = sched.AddNode(finegrain.Node{ID: "large", Capacity: s.MustTuple(16000, 64<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "web"})
	_ = sched.Submit(
		finegrain.Task{ID: "api", Job: "web", Request: s.MustTuple(1000, 2<<30)},
		finegrain.Task{ID: "db", Job: "web", Request: s.MustTuple(1000, 63<<30)},
	)
	a, err := sched.Place("api", 0)
	fmt.Println(a.Node, err)
	// The large node has room for db, but not while api runs there.
	_, err = sched.Place("db", 0)
	fmt.Println(err)
	// No node could ever hold 128 GiB: Submit refuses it.
	err = sched.Submit(finegrain.Task{ID: "cache", Job: "web", Request: s.MustTuple(1000, 128<<30)})
	fmt.Println(err)
	// Output:
	// large <nil>
	// finegrain: task "db": 0/2 nodes can take it: 1 short of memory, 1 too small for its memory; closest: node "large", stage 0 needs memory=63Gi over [0s, forever) but 62Gi is free (compression allowance 0, short by 1Gi): no node fits the task
	// finegrain: task "cache": it needs memory=128Gi (the largest node has memory=64Gi): no node could ever hold the task
}

// A long-running scheduler forgets finished work: here it remembers the last two
// finished tasks, and completed jobs for a minute of cluster time.
func ExampleWithRetention() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithRetention(finegrain.Retention{Tasks: 2, Jobs: 100, Age: time.Minute}))
	_ = sched.AddNode(finegrain.Node{ID: "node-1", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "etl"})
	for i := 1; i <= 3; i++ {
		_ = sched.Submit(finegrain.Task{ID: fmt.Sprintf("step-%d", i), Job: "etl", Request: s.MustTuple(1000, 1<<30)})
	}
	_, _ = sched.Heartbeat("node-1", 0)
	for i := 1; i <= 3; i++ {
		_ = sched.Finished(fmt.Sprintf("step-%d", i), time.Duration(i)*time.Second, nil)
	}
	for i := 1; i <= 3; i++ {
		st, known := sched.TaskState(fmt.Sprintf("step-%d", i))
		fmt.Printf("step-%d known=%v %v\n", i, known, st)
	}
	_, _, finished, _ := sched.Counts()
	fmt.Println("finished:", finished)

	// Two minutes later the completed job is forgotten: it must be submitted again.
	_, _ = sched.Heartbeat("node-1", 2*time.Minute)
	err := sched.Submit(finegrain.Task{ID: "step-4", Job: "etl", Request: s.MustTuple(1000, 1<<30)})
	fmt.Println(errors.Is(err, finegrain.ErrUnknownJob))
	// Output:
	// step-1 known=false TaskState(0)
	// step-2 known=true finished
	// step-3 known=true finished
	// finished: 3
	// true
}

// Locality waits by the clock (the default, PullLocalityClock): a job whose input is on
// node-a, in rack r1, may launch only node-local for W1 after it arrived and rack-local
// for W2 more, whatever it is offered meanwhile; node-b, in another rack, gets its task
// once W1 + W2 have passed.
func ExamplePullLocalityClock() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, err := finegrain.New(s,
		finegrain.WithPullStrategy(finegrain.PullLocalityClock(2*time.Second, 3*time.Second)),
		finegrain.WithLocalityWaitForRoom(false), // wait even though node-a has room
	)
	if err != nil {
		panic(err)
	}
	_ = sched.AddNode(finegrain.Node{ID: "node-a", Rack: "r1", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.AddNode(finegrain.Node{ID: "node-b", Rack: "r2", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "sort", Submitted: 0})
	_ = sched.Submit(finegrain.Task{ID: "sort-0", Job: "sort", Request: s.MustTuple(1000, 1<<30), Inputs: []string{"node-a"}})
	for _, at := range []time.Duration{time.Second, 3 * time.Second, 5 * time.Second} {
		d, _ := sched.Heartbeat("node-b", at)
		for _, a := range d.Assignments {
			fmt.Printf("%v: %s on %s, %v\n", at, a.Task, a.Node, a.Locality)
		}
		if len(d.Assignments) == 0 {
			fmt.Printf("%v: node-b passed over (the job waits for locality)\n", at)
		}
	}
	// Output:
	// 1s: node-b passed over (the job waits for locality)
	// 3s: node-b passed over (the job waits for locality)
	// 5s: sort-0 on node-b, off-switch
}
