package finegrain_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// QoS-vector scheduling on capacity queues (docs/methods.md §12): the queue with the
// most free capacity (its capacity less its use) takes the node; in it, the jobs whose
// class (largest preference weight) is the node's largest QoS feature, network here,
// or if it has none the next largest, cpu; of those, the best finalvalue among the jobs
// whose hard QoS (memory and disk) the node meets. A job that does not fit ages, and
// when none of the sub-queue fits, the node gets nothing.
//
// Each task uses 1/8 of the cluster. Heartbeat 1: alice's free capacity 0.5 against
// bob's 0.4: alice, network: stream. 2: alice 0.375, bob 0.4: bob, network: report
// (backup's 40 GiB does not fit: its priority rises to 1). 3: alice 0.375, bob 0.275:
// alice, which has no network job left: cpu, render. 4: alice 0.25, bob 0.275: bob,
// network holds only backup, which does not fit: nothing (priority 2). 5: it fits.
func ExamplePullQoSVector() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s,
		finegrain.WithPrediction(false),
		finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPullStrategy(finegrain.PullQoSVector()),
		finegrain.WithMaxPerHeartbeat(1), // one task per heartbeat, as in the paper
		finegrain.WithSkipDetails(4),
	)
	_ = sched.AddNode(finegrain.Node{ID: "n1", Capacity: s.MustTuple(16000, 64<<30)})
	_ = sched.AddQueue("", "alice", fairness.MinShare(0.5)) // the users' capacities
	_ = sched.AddQueue("", "bob", fairness.MinShare(0.4))

	network := match.Weights{0.1, 0.1, 0.6, 0.1, 0.1} // class: network
	cpu := match.Weights{0.6, 0.1, 0.1, 0.1, 0.1}     // class: cpu
	for i, j := range []struct {
		id, queue string
		demand    finegrain.QoSVectorDemand
	}{
		{"stream", "alice", finegrain.QoSVectorDemand{Req: match.QoSVector{2, 2, 8, 2, 2}, Weights: network, Need: match.Hard{Memory: 4 << 30, Disk: 10 << 30}}},
		{"backup", "bob", finegrain.QoSVectorDemand{Req: match.QoSVector{2, 2, 4, 2, 2}, Weights: network, Need: match.Hard{Memory: 40 << 30, Disk: 10 << 30}}},
		{"render", "alice", finegrain.QoSVectorDemand{Req: match.QoSVector{9, 2, 2, 2, 2}, Weights: cpu, Need: match.Hard{Memory: 2 << 30, Disk: 1 << 30}}},
		{"report", "bob", finegrain.QoSVectorDemand{Req: match.QoSVector{2, 2, 2, 2, 2}, Weights: network, Need: match.Hard{Memory: 1 << 30, Disk: 1 << 30}}},
	} {
		_ = sched.SubmitJob(finegrain.Job{ID: j.id, Queue: j.queue, Submitted: time.Duration(i)})
		_ = sched.SetJobQoSVector(j.id, j.demand)
		_ = sched.Submit(finegrain.Task{ID: j.id + "-0", Job: j.id, Request: s.MustTuple(2000, 4<<30)})
	}

	// Each heartbeat reports the node's QoS supply and what memory and disk it has left.
	for k, left := range []int64{32, 28, 27, 25, 48} {
		_ = sched.SetNodeQoSVector("n1", finegrain.QoSVectorSupply{
			Res:       match.QoSVector{6, 4, 9, 5, 3}, // network first, then cpu
			Remaining: match.Hard{Memory: left << 30, Disk: 500 << 30},
		})
		d, _ := sched.Heartbeat("n1", time.Duration(k+1)*time.Second)
		for _, a := range d.Assignments {
			fmt.Printf("heartbeat %d (%d GiB left): %s\n", k+1, left, a.Task)
		}
		if len(d.Assignments) == 0 {
			fmt.Printf("heartbeat %d (%d GiB left): nothing, %v\n", k+1, left, d.Skips)
		}
	}
	p, _ := sched.QoSVectorPriority("backup")
	fmt.Println("backup's priority:", p)
	// Output:
	// heartbeat 1 (32 GiB left): stream-0
	// heartbeat 2 (28 GiB left): report-0
	// heartbeat 3 (27 GiB left): render-0
	// heartbeat 4 (25 GiB left): nothing, [job "backup": refused by a plugin (QoSVectorScheduling)]
	// heartbeat 5 (48 GiB left): backup-0
	// backup's priority: 2
}
