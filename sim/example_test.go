package sim_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// One node of one core; a job of two tasks that each use the whole core (for 10 s and
// 20 s) but declared half of it. A request-based scheduler runs both at once; the cpu
// is shared, rc = 0.5, and both slow down by (1 + p)/(1 − rc) = 2.1 (eq. 5) until the
// first ends. (sim.NoVariation keeps each stage's usage at its demand, for the
// arithmetic; by default usage moves within a stage, sim.DefaultVariation.)
func Example() {
	schema := workload.Schema()
	core := schema.MustTuple(1000, 8<<30, 100<<20, 100<<20)
	cl := workload.Cluster{Name: "one", IntraRackBandwidth: 1 << 27, CrossRackBandwidth: 1 << 24,
		Nodes: []workload.NodeSpec{{ID: "n0", Rack: "r0", Capacity: core, Speed: 1}}}
	task := func(id string, d time.Duration) workload.Task {
		return workload.Task{ID: id, Kind: workload.Map,
			True:    stage.MustProfile(schema, stage.Stage{Duration: d, Demand: schema.MustTuple(1000, 1<<30, 0, 0)}),
			Request: schema.MustTuple(500, 1<<30, 0, 0)}
	}
	w := workload.Workload{Name: "two", Jobs: []workload.Job{{ID: "j", Queue: "q", App: "demo", Logic: "demo",
		Tasks: []workload.Task{task("a", 10*time.Second), task("b", 20*time.Second)}}}}

	r, err := sim.Run(&w, &cl, sim.DRF(), sim.WithTaskRecords(), sim.WithVariation(sim.NoVariation))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range r.Tasks {
		fmt.Printf("%s: %.1f s, compressed %.1f s\n", t.ID, t.Finish.Seconds(), t.Compressed.Seconds())
	}
	fmt.Printf("job completion %.1f s\n", r.Jobs[0].Completion().Seconds())
	// Output:
	// a: 21.0 s, compressed 21.0 s
	// b: 31.0 s, compressed 21.0 s
	// job completion 31.0 s
}

// The comparison of docs/methods.md §7 on a small paper-like workload: the four
// request-based baselines and FGM, the same jobs on the same cluster.
func ExampleRun() {
	w, err := workload.FGM(rand.New(rand.NewPCG(1, 2)), workload.WithScale(0.5))
	if err != nil {
		fmt.Println(err)
		return
	}
	cl, err := workload.FGMCluster()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range sim.Policies() {
		r, err := sim.Run(&w, &cl, p)
		if err != nil {
			fmt.Println(err)
			return
		}
		s := r.Summary
		fmt.Printf("%-8s %d/%d jobs, makespan %v, mean job completion %v\n", p.Name, s.JobsFinished, s.Jobs,
			s.Makespan.Round(time.Second), s.JobCompletion.Mean.Round(time.Second))
	}
	// Output:
	// FIFO     240/240 jobs, makespan 6m8s, mean job completion 45s
	// Capacity 240/240 jobs, makespan 6m16s, mean job completion 58s
	// Fair     240/240 jobs, makespan 6m29s, mean job completion 19s
	// DRF      240/240 jobs, makespan 6m24s, mean job completion 19s
	// FGM      240/240 jobs, makespan 5m36s, mean job completion 17s
}
