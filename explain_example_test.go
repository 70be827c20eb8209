package finegrain_test

import (
	"errors"
	"fmt"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
)

// whyCluster is three nodes of 4 cores and 8 GiB, with 7 GiB taken on n1, all 4 cores
// on n2 and 6.5 GiB on n3, and a task "report" asking 1 core and 2 GiB.
func whyCluster(opts ...finegrain.Option) *finegrain.Scheduler {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}, opts...)...)
	_ = sched.SubmitJob(finegrain.Job{ID: "batch"})
	for i, fill := range []resource.Tuple{s.MustTuple(1000, 7<<30), s.MustTuple(4000, 1<<30), s.MustTuple(1000, 13<<29)} {
		node := fmt.Sprintf("n%d", i+1)
		_ = sched.AddNode(finegrain.Node{ID: node, Capacity: s.MustTuple(4000, 8<<30)})
		_ = sched.Submit(finegrain.Task{ID: "fill-" + node, Job: "batch", Request: fill, Inputs: []string{node}})
		_, _ = sched.Heartbeat(node, 0)
	}
	_ = sched.SubmitJob(finegrain.Job{ID: "etl"})
	_ = sched.Submit(finegrain.Task{ID: "report", Job: "etl", Request: s.MustTuple(1000, 2<<30)})
	return sched
}

// Push mode: a placement that finds no node says why, node by node, as kube-scheduler
// does; the counts and the closest node are data too.
func ExamplePlacementError() {
	sched := whyCluster()
	_, err := sched.Place("report", 0)
	var pe *finegrain.PlacementError
	if errors.As(err, &pe) {
		for _, c := range pe.Refusals.Counts {
			fmt.Printf("%d node(s): %v, %s\n", c.N, c.Reason, c.Dim)
		}
		dim := sched.Schema().Dim(pe.Result.Dim)
		fmt.Println("closest:", pe.Refusals.Closest, "short of", dim.Name, "by", dim.FormatAmount(pe.Result.Shortfall()))
	}
	fmt.Println(err)
	// Output:
	// 2 node(s): no room, memory
	// 1 node(s): no room, cpu
	// closest: n3 short of memory by 512Mi
	// finegrain: task "report": 0/3 nodes can take it: 2 short of memory, 1 short of cpu; closest: node "n3", stage 0 needs memory=2Gi over [0s, forever) but 1536Mi is free (compression allowance 0, short by 512Mi): no node fits the task
}

// Pull mode: a heartbeat says why it started nothing — every job was passed over, and
// how many times for which reason — and Explain asks, for one task, why no node takes
// it now.
func ExampleScheduler_Explain() {
	sched := whyCluster(finegrain.WithoutPlugin("DemandClasses")) // walk every job
	d, _ := sched.Heartbeat("n1", 0)
	fmt.Println(d.Stop, "-", d.Refusals)
	why, _ := sched.Explain("report", 0)
	fmt.Println(why.Explain())
	// Output:
	// every job passed over - 1 short of memory
	// 0/3 nodes can take it: 2 short of memory, 1 short of cpu; closest: node "n3", stage 0 needs memory=2Gi over [0s, forever) but 1536Mi is free (compression allowance 0, short by 512Mi)
}

// Host mode: a host scheduler asks Filter node by node and tallies the answers the
// same way; its PostFilter step, when nothing can be made to fit, says why too.
func ExampleTally_Add() {
	sched := whyCluster()
	var tally finegrain.Tally
	for _, node := range []string{"n1", "n2", "n3"} {
		st, r, _ := sched.Filter("report", node, 0)
		tally.Add(node, sched.Schema().MustTuple(4000, 8<<30), st, r)
	}
	fmt.Println(tally.Sorted().Explain())
	_, err := sched.PostFilter("report", 0, nil)
	fmt.Println(err)
	// Output:
	// 0/3 nodes can take it: 2 short of memory, 1 short of cpu; closest: node "n3", stage 0 needs memory=2Gi over [0s, forever) but 1536Mi is free (compression allowance 0, short by 512Mi)
	// finegrain: task "report": 0/3 nodes can take it: 2 short of memory, 1 short of cpu; closest: node "n3", stage 0 needs memory=2Gi over [0s, forever) but 1536Mi is free (compression allowance 0, short by 512Mi): no node fits the task
}
