package finegrain_test

import (
	"errors"
	"fmt"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// GPU sharing: a node with two V100s takes a task that needs 0.6 of one, then another;
// a third finds 0.4 free on each device and is refused, although 0.8 is free in sum. A
// task restricted to T4s goes to the T4 node.
func ExampleWithGPUScorer() {
	s := resource.Standard()
	capacity := s.MustTuple(32000, 64<<30, 0, 0, 0, 0)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false), finegrain.WithGPUScorer(gpu.Packing{}))
	_ = sched.AddNode(finegrain.Node{ID: "v100", Capacity: capacity, GPU: gpu.Spec{Model: "V100M32", Count: 2}})
	_ = sched.AddNode(finegrain.Node{ID: "t4", Capacity: capacity, GPU: gpu.Spec{Model: "T4", Count: 1}})
	_ = sched.SubmitJob(finegrain.Job{ID: "j"})
	request := s.MustTuple(4000, 8<<30, 0, 0, 0, 0)
	onV100 := gpu.Demand{Count: 1, Milli: 600, Models: []string{"V100M32"}}
	_ = sched.Submit(
		finegrain.Task{ID: "a", Job: "j", Request: request, GPU: onV100},
		finegrain.Task{ID: "b", Job: "j", Request: request, GPU: onV100},
		finegrain.Task{ID: "c", Job: "j", Request: request, GPU: onV100},
		finegrain.Task{ID: "d", Job: "j", Request: request, GPU: gpu.Demand{Count: 1, Milli: 1000, Models: []string{"T4"}}},
	)
	for _, id := range []string{"a", "b", "c", "d"} {
		a, err := sched.Place(id, 0)
		var perr *finegrain.PlacementError
		if errors.As(err, &perr) {
			fmt.Printf("%s: refused: %v\n", id, perr.Reason)
			continue
		}
		fmt.Printf("%s: node %s, devices %v, %d thousandths each\n", id, a.Node, a.Devices.Devices, a.Devices.Milli)
	}
	// Output:
	// a: node v100, devices [0], 600 thousandths each
	// b: node v100, devices [1], 600 thousandths each
	// c: refused: no GPU device fits
	// d: node t4, devices [0], 1000 thousandths each
}
