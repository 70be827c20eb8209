package finegrain_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
)

// A task says whether it is batch work or latency-sensitive, and a latency-sensitive
// task may carry its service-level objective: the longest run time, from its start,
// that still meets it (docs/methods.md §11). Placement is as for any task; the class
// and the SLO are for the methods that protect latency-sensitive tasks.
func ExampleTaskClass() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false))
	_ = sched.AddNode(finegrain.Node{ID: "node-1", Capacity: s.MustTuple(8000, 32<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "search"})
	_ = sched.SubmitJob(finegrain.Job{ID: "etl"})

	class, _ := finegrain.ParseTaskClass("LS") // as in a trace's qos column
	err := sched.Submit(
		finegrain.Task{ID: "query-0", Job: "search", Request: s.MustTuple(2000, 4<<30),
			Class: class, SLO: 200 * time.Millisecond},
		finegrain.Task{ID: "extract-0", Job: "etl", Request: s.MustTuple(4000, 8<<30)}, // batch: the zero class
	)
	fmt.Println("submitted:", err)
	a, err := sched.Place("query-0", 0)
	fmt.Println(a.Task, "on", a.Node, err)

	// Only a latency-sensitive task may have an SLO: the whole batch is refused.
	err = sched.Submit(
		finegrain.Task{ID: "query-1", Job: "search", Request: s.MustTuple(2000, 4<<30), Class: finegrain.LatencySensitive},
		finegrain.Task{ID: "extract-1", Job: "etl", Request: s.MustTuple(4000, 8<<30), SLO: time.Hour},
	)
	fmt.Println(err)
	fmt.Println(sched.Count(finegrain.Pending), "pending")
	// Output:
	// submitted: <nil>
	// query-0 on node-1 <nil>
	// cluster: task "extract-1": SLO 1h0m0s on a batch task (only a latency-sensitive task may have one): invalid argument
	// 1 pending
}
