package finegrain_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
)

// A high-priority task that fits nowhere evicts the fewest, lowest-priority tasks
// that make room; the evicted task is pending again, and the assignment says what to
// stop.
func ExampleWithPreemption() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	_ = sched.AddNode(finegrain.Node{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "batch", Priority: 0})
	_ = sched.SubmitJob(finegrain.Job{ID: "serving", Priority: 100})
	_ = sched.Submit(
		finegrain.Task{ID: "b1", Job: "batch", Request: s.MustTuple(1000, 4<<30)},
		finegrain.Task{ID: "b2", Job: "batch", Request: s.MustTuple(1000, 4<<30)},
		finegrain.Task{ID: "web", Job: "serving", Request: s.MustTuple(1000, 4<<30)},
	)
	_, _ = sched.Place("b1", 0)
	_, _ = sched.Place("b2", time.Second) // b2 has run less: it is the one to go

	a, err := sched.Place("web", 2*time.Second)
	fmt.Println(a.Task, "on", a.Node, err)
	for _, e := range a.Evicted {
		fmt.Println("stop", e.Task, "on", e.Node+":", e.Reason)
	}
	st, _ := sched.TaskState("b2")
	fmt.Println("b2 is", st)
	// Output:
	// web on n1 <nil>
	// stop b2 on n1: preempted
	// b2 is pending
}

// A gang job (MinMember) runs all-or-nothing: its members wait, reserved, until all
// of them can run together.
func ExampleJob_minMember() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false))
	_ = sched.AddNode(finegrain.Node{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.AddNode(finegrain.Node{ID: "n2", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "mpi", MinMember: 3})
	_ = sched.Submit(
		finegrain.Task{ID: "rank0", Job: "mpi", Request: s.MustTuple(2000, 4<<30)},
		finegrain.Task{ID: "rank1", Job: "mpi", Request: s.MustTuple(2000, 4<<30)},
		finegrain.Task{ID: "rank2", Job: "mpi", Request: s.MustTuple(2000, 4<<30)},
	)
	d, _ := sched.Heartbeat("n1", 0)
	fmt.Println("n1 starts", len(d.Assignments), "tasks;", sched.Count(finegrain.Reserved), "wait reserved")
	d, _ = sched.Heartbeat("n2", time.Second)
	for _, a := range d.Assignments {
		fmt.Println("start", a.Task, "on", a.Node)
	}
	// Output:
	// n1 starts 0 tasks; 2 wait reserved
	// start rank0 on n1
	// start rank1 on n1
	// start rank2 on n2
}

// With reservations, a large task that has waited gets the earliest start at which it
// fits, and smaller tasks placed after it may not take that room.
func ExampleWithBooking() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithBooking(10*time.Second))
	_ = sched.AddNode(finegrain.Node{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "j"})
	_ = sched.Submit(
		finegrain.Task{ID: "t1-small", Job: "j", Request: s.MustTuple(1000, 4<<30), Duration: time.Minute},
		finegrain.Task{ID: "t2-large", Job: "j", Request: s.MustTuple(1000, 8<<30), Duration: time.Minute},
	)
	d, _ := sched.Heartbeat("n1", 0) // the small task starts; the large one waits
	fmt.Println(d.Assignments[0].Task, "starts at", d.Assignments[0].Start)
	d, _ = sched.Heartbeat("n1", 10*time.Second) // it has waited 10 s: it is booked
	a := d.Assignments[0]
	st, _ := sched.TaskState(a.Task)
	fmt.Println(a.Task, "is", st, "from", a.Start)
	// Output:
	// t1-small starts at 0s
	// t2-large is booked from 1m0s
}
