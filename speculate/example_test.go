package speculate_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// A heterogeneous cluster: tasks take 50 s on node "fast", 100 s on "medium" and 200 s
// on "slow". At 100 s, task X on the slow node is 20% done (400 s left) and Y on the
// fast node 30% done after 10 s (23 s left). The medium node asks for work. LATE backs X
// up there at once; PRRL sees that Y's fast slot frees soon and a backup of X would
// finish there sooner (73 s < 100 s), so it keeps X for that slot. When the fast node
// asks, both back X up.
func Example() {
	tr, _ := predict.NewProgressTracker()
	for i, node := range []string{"fast", "fast", "fast", "medium", "slow"} {
		d := map[string]time.Duration{"fast": 50 * time.Second, "medium": 100 * time.Second, "slow": 200 * time.Second}[node]
		id := fmt.Sprintf("done%d", i)
		_ = tr.Start(id, node, 0)
		_ = tr.Finish(id, d)
	}
	_ = tr.Start("X", "slow", 0)
	_ = tr.Update("X", 0.2, 100*time.Second)
	_ = tr.Start("Y", "fast", 90*time.Second)
	_ = tr.Update("Y", 0.3, 100*time.Second)

	show := func(d speculate.Decision) string {
		if d.Action == speculate.Backup {
			return "back up " + d.Task
		}
		return "nothing: " + d.Reason.String()
	}
	late, _ := speculate.NewLATE()
	prrl, _ := speculate.NewPRRL()
	job := speculate.Job{Tasks: tr}
	for _, node := range []string{"medium", "fast"} {
		req := speculate.Request{Node: node, Now: 100 * time.Second}
		l, _ := late.Speculate(job, req)
		p, _ := prrl.Speculate(job, req)
		fmt.Printf("%s asks: LATE: %s; PRRL: %s (N=%d, M=%d)\n", node, show(l), show(p), p.SlowTasks, p.Resources)
	}
	// Output:
	// medium asks: LATE: back up X; PRRL: nothing: faster resources will free up (N=1, M=2)
	// fast asks: LATE: back up X; PRRL: back up X (N=1, M=1)
}

// The thesis' Table 4.1 example at its first step: Slot3 frees and asks for work. Job1's
// data is on Slot1, which frees in 10 s; Job2's on Slot2, free in 5 s; Job3's on Slot3.
// Job1 and Job2 are promised their local slots, and Slot3 runs Job3's local task.
func ExampleFairPlacer_Place() {
	racks := map[string]string{"slot1": "rack1", "slot2": "rack2", "slot3": "rack3"}
	job := func(id string, prio int, home string) speculate.PoolJob {
		return speculate.PoolJob{
			ID: id, Priority: prio,
			Pending:  []speculate.PendingTask{{ID: id + "-task", Locations: []speculate.Location{{Node: home, Rack: racks[home]}}}},
			TaskTime: speculate.NodeTimes{Default: time.Minute},
		}
	}
	state := speculate.FairState{
		Racks: racks,
		Busy: []speculate.BusySlot{
			{Task: "a", Node: "slot1", TimeLeft: 10 * time.Second},
			{Task: "b", Node: "slot2", TimeLeft: 5 * time.Second},
		},
		Pools: []speculate.Pool{{ID: "default", Order: speculate.FIFOJobs, Jobs: []speculate.PoolJob{
			job("job1", 3, "slot1"), job("job2", 2, "slot2"), job("job3", 1, "slot3"),
		}}},
	}
	placer, _ := speculate.NewFairPlacer()
	p, _ := placer.Place(state, "slot3")
	for _, pa := range p.PreAssigned {
		fmt.Printf("promise %s to %s (done at %v)\n", pa.Slot.Node, pa.Job, pa.Finish)
	}
	fmt.Printf("slot3 runs %s of %s, %s\n", p.Task, p.Job, p.Locality)
	// Output:
	// promise slot1 to job1 (done at 1m10s)
	// promise slot2 to job2 (done at 1m5s)
	// slot3 runs job3-task of job3, node-local
}

// A latency-sensitive task on a full node needs 1.5 more cores. The cluster has no CPU
// free; the planner reclaims spare CPU from an over-allocated batch task, preempts a
// low-priority one only for the rest, and expands the straggler in place.
func ExamplePlanner_Plan() {
	schema := resource.Standard()
	cpuMem := func(milli, gib int64) resource.Tuple { return schema.MustTuple(milli, gib<<30) }
	planner, _ := speculate.NewPlanner(schema)
	plan, _ := planner.Plan(speculate.PlanInput{
		Nodes: []speculate.Node{
			{ID: "n1", Capacity: cpuMem(8000, 16), Allocated: cpuMem(8000, 12)},
			{ID: "n2", Capacity: cpuMem(8000, 16), Allocated: cpuMem(8000, 4)},
		},
		Stragglers: []speculate.Straggler{{Task: "web-7", Node: "n1", Allocated: cpuMem(2000, 2), Extra: cpuMem(1500, 0)}},
		Batch: []speculate.BatchTask{
			{Task: "etl-1", Node: "n1", Allocated: cpuMem(3000, 6), Reclaimable: cpuMem(800, 2)},
			{Task: "etl-2", Node: "n1", Allocated: cpuMem(3000, 4), Preemptible: cpuMem(2000, 0), Priority: 0},
		},
	})
	for _, s := range plan.Steps {
		fmt.Printf("%-8s %-6s on %s: %s\n", s.Kind, s.Task, s.Node, schema.Format(s.Amount))
	}
	fmt.Println("R_IDLE", schema.Format(plan.Idle), "R_NE", schema.Format(plan.Need), "R_M", schema.Format(plan.Available))
	// Output:
	// reclaim  etl-1  on n1: cpu=800m
	// preempt  etl-2  on n1: cpu=700m
	// expand   web-7  on n1: cpu=1500m
	// R_IDLE memory=16Gi R_NE cpu=1500m R_M cpu=1500m,memory=16Gi
}

// From monitoring to a plan: predict.DetectStraggler flags a latency-sensitive task
// whose speed is falling and whose predicted run time exceeds its objective; ScaleUp
// sizes the CPU it needs to finish in time.
func ExampleScaleUp() {
	samples := []predict.ProgressSample{
		{At: 0, Progress: 0}, {At: 10 * time.Second, Progress: 0.2},
		{At: 20 * time.Second, Progress: 0.3}, {At: 30 * time.Second, Progress: 0.35},
	}
	slo := 60 * time.Second
	v, _ := predict.DetectStraggler(samples, 0, slo)
	schema := resource.Standard()
	extra, _ := speculate.ScaleUp(schema, v, 30*time.Second, 0, slo, schema.MustTuple(1000, 1<<30))
	fmt.Printf("straggler %v, predicted run time %v, needs %s more\n", v.Straggler, v.Runtime, schema.Format(extra))
	// Output: straggler true, predicted run time 2m40s, needs cpu=3334m more
}
