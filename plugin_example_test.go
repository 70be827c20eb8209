package finegrain_test

import (
	"fmt"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/resource"
)

// offRack is a Filter plugin that keeps one job's tasks off one rack.
type offRack struct{ job, rack string }

func (offRack) Name() string { return "OffRack" }

func (f offRack) Filter(_ *framework.Cycle, a *framework.Attempt) framework.Status {
	if a.Task.Job() == f.job && a.Node.Rack() == f.rack {
		return framework.Refuse(framework.PluginRefused)
	}
	return framework.Status{}
}

// A custom plugin added with one option: a Filter that keeps the "batch" job off rack
// r1, in pull and push mode alike, run before the built-in matching.
func ExampleWithPluginBefore() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s,
		finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithPluginBefore("StageMatch", offRack{job: "batch", rack: "r1"}),
	)
	fmt.Println("filters:", sched.Plugins()["Filter"])
	_ = sched.AddNode(finegrain.Node{ID: "big", Rack: "r1", Capacity: s.MustTuple(16000, 64<<30)})
	_ = sched.AddNode(finegrain.Node{ID: "small", Rack: "r2", Capacity: s.MustTuple(4000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "batch"})
	_ = sched.SubmitJob(finegrain.Job{ID: "web"})
	_ = sched.Submit(
		finegrain.Task{ID: "b1", Job: "batch", Request: s.MustTuple(1000, 1<<30)},
		finegrain.Task{ID: "b2", Job: "batch", Request: s.MustTuple(1000, 1<<30)},
		finegrain.Task{ID: "w1", Job: "web", Request: s.MustTuple(1000, 1<<30)},
	)

	// Push: the roomiest node is on r1, so b1 goes to the small one.
	a, _ := sched.Place("b1", 0)
	fmt.Println("b1 →", a.Node)

	// Pull: big (r1) reports room; only web's task starts there.
	d, _ := sched.Heartbeat("big", 0)
	for _, a := range d.Assignments {
		fmt.Println(a.Task, "→", a.Node)
	}
	fmt.Println("passed over:", d.Skipped)

	// A host scheduler's Filter call: does b2 fit big, and why not?
	st, _, _ := sched.Filter("b2", "big", 0)
	fmt.Println("b2 on big:", st)
	// Output:
	// filters: [ModeGate GPUFit OffRack StageMatch QoS]
	// b1 → small
	// w1 → big
	// passed over: 1
	// b2 on big: Unschedulable: refused by a plugin (OffRack)
}
