package fairness_test

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

// A node offers resources: walk the jobs in DRF order, let delay scheduling decide which
// job takes the offer at what locality, start that job's best task.
func Example() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	tree, _ := fairness.NewTree(s, s.MustTuple(8000, 32<<30)) // DRF at every level
	pending := fairness.NewPending()
	delay, _ := fairness.NewDelay() // W1 = 5 s, W2 = 20 s

	request := s.MustTuple(1000, 2<<30)
	_ = tree.AddQueue("", "etl")
	_ = tree.AddQueue("", "adhoc")
	_ = tree.AddJob("etl", "nightly")
	_ = tree.AddJob("adhoc", "query")
	for i, job := range []string{"nightly", "query"} {
		_ = tree.AddPending(job, 1, request)
		_ = pending.Add(fairness.PendingTask{ID: job + "-0", Job: job,
			Locations: []fairness.Location{{Node: fmt.Sprint("node-", i), Rack: "rack-a"}}})
	}
	_ = tree.Allocate("nightly", request) // nightly already runs one task

	offer := func(now time.Duration, node, rack string) {
		_ = delay.Heartbeat(now)
		var job, task string
		var level fairness.Level
		tree.Walk(func(j string) bool {
			best, _ := pending.Best(j, node, rack)
			l, ok, _ := delay.Offer(j, best)
			if !ok {
				fmt.Printf("%v %s: %s waits for locality\n", now, node, j)
				return true
			}
			job = j
			task, level, _ = pending.First(j, node, rack, l)
			return false
		})
		if job == "" {
			fmt.Printf("%v %s: nothing to start\n", now, node)
			return
		}
		_ = pending.Remove(task)
		_ = tree.Start(job, request, request)
		fmt.Printf("%v %s: start %s (%v)\n", now, node, task, level)
	}
	offer(0, "node-0", "rack-a")             // query goes first (it runs nothing) but its data is on node-1
	offer(6*time.Second, "node-2", "rack-a") // query has waited 6 s ≥ W1: rack-local is fine now
	// Output:
	// 0s node-0: query waits for locality
	// 0s node-0: start nightly-0 (node-local)
	// 6s node-2: start query-0 (rack-local)
}

// The DRF paper's example: A's tasks need ⟨1 CPU, 4 GB⟩, B's ⟨3 CPU, 1 GB⟩, on a
// ⟨9 CPU, 18 GB⟩ cluster.
func ExampleProgressiveFilling() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	got, _ := fairness.ProgressiveFilling(s, s.MustTuple(9, 18), []fairness.User{
		{Task: s.MustTuple(1, 4), Weight: 1},
		{Task: s.MustTuple(3, 1), Weight: 1},
	})
	fmt.Println("A:", got[0], "tasks, B:", got[1], "tasks")
	// Output: A: 3 tasks, B: 2 tasks
}

// Fair shares of 40 slots: a pool that needs 1, a pool with a min share of 10, and a
// pool of weight 2.
func ExampleWaterFill() {
	shares, _ := fairness.WaterFill(40, []fairness.Claim{
		{Weight: 1, Demand: 1},
		{Weight: 1, Min: 10, Demand: 50},
		{Weight: 2, Demand: math.Inf(1)},
	})
	fmt.Printf("%.0f\n", shares)
	// Output: [1 13 26]
}

func ExampleJain() {
	even, _ := fairness.Jain([]float64{0.3, 0.3, 0.3})
	skewed, _ := fairness.Jain([]float64{0.6, 0.2, 0.1})
	fmt.Printf("%.3f %.3f\n", even, skewed)
	// Output: 1.000 0.659
}

// Sorting a flat list under the thesis's fair rule: p2 is furthest below its min share.
func ExampleSort() {
	s := resource.MustSchema(resource.CPU)
	pools := []fairness.Entry{
		{ID: "p1", Share: fairness.Share{Weight: 1, Min: 10}, Running: 2, Pending: 1},
		{ID: "p2", Share: fairness.Share{Weight: 1, Min: 4}, Running: 1, Pending: 10},
		{ID: "p3", Share: fairness.Share{Weight: 2}, Running: 3, Pending: 5},
	}
	_ = fairness.Sort(s, fairness.Fair{}, resource.Tuple{}, pools)
	for _, p := range pools {
		fmt.Print(p.ID, " ")
	}
	fmt.Println()
	// Output: p2 p1 p3
}

// A Capacity queue grows into idle capacity up to its maximum.
func ExampleTree_Admit() {
	s := resource.MustSchema(resource.CPU)
	tree, _ := fairness.NewTree(s, s.MustTuple(100), fairness.WithPolicy(fairness.Capacity{}))
	_ = tree.AddQueue("", "prod", fairness.MinShare(0.6), fairness.MaxShare(0.8))
	_ = tree.AddJob("prod", "web")
	_ = tree.Allocate("web", s.MustTuple(75))
	fmt.Println(tree.Admit("web", s.MustTuple(5)))
	fmt.Println(tree.Admit("web", s.MustTuple(10)))
	// Output:
	// <nil>
	// fairness: queue "prod" share after allocation (max 0.8) = 0.85: over max share
}

// A queue capped at nine tenths of the cluster, to leave room for others, whose job
// has one task larger than the cap: with FirstTaskOverMax it starts when the queue has
// nothing else running, and the queue is held to its cap again while it runs.
func ExampleFirstTaskOverMax() {
	s := resource.MustSchema(resource.CPU)
	tree, _ := fairness.NewTree(s, s.MustTuple(100))
	_ = tree.AddQueue("", "batch", fairness.MaxShare(0.9), fairness.FirstTaskOverMax(true))
	_ = tree.AddJob("batch", "train")
	fmt.Println(tree.Admit("train", s.MustTuple(95)))
	_ = tree.Allocate("train", s.MustTuple(95))
	fmt.Println(tree.Admit("train", s.MustTuple(1)))
	// Output:
	// <nil>
	// fairness: queue "batch" share after allocation (max 0.9) = 0.96: over max share
}

// Weighted hierarchical DRF: the tree re-orders itself as tasks start and finish.
func ExampleTree_Next() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	tree, _ := fairness.NewTree(s, s.MustTuple(10, 10))
	_ = tree.AddQueue("", "gold", fairness.Weight(3))
	_ = tree.AddQueue("", "bronze")
	_ = tree.AddJob("gold", "g")
	_ = tree.AddJob("bronze", "b")
	task := s.MustTuple(1, 1)
	_ = tree.AddPending("g", 10, task.Scale(10))
	_ = tree.AddPending("b", 10, task.Scale(10))
	for range 8 {
		job, _ := tree.Next()
		_ = tree.Start(job, task, task)
		fmt.Print(job, " ")
	}
	fmt.Println()
	// Output: b g g g g b g g
}

func ExampleDelay() {
	d, _ := fairness.NewDelay(fairness.WithWaits(5*time.Second, 20*time.Second))
	for _, now := range []time.Duration{0, 3 * time.Second, 6 * time.Second, 30 * time.Second} {
		_ = d.Heartbeat(now)
		l, ok, _ := d.Offer("job", fairness.OffSwitch) // the job has no task near this node
		fmt.Println(now, d.State("job").Wait, l, ok)
	}
	// Output:
	// 0s 0s node-local false
	// 3s 3s node-local false
	// 6s 6s node-local false
	// 30s 0s off-switch true
}

// The clock rule: what a job may launch at depends on the time since its last launch
// alone. Its owner keeps each job's ClockState and replaces it on every launch.
func ExampleLocalityClock() {
	clock, _ := fairness.NewLocalityClock(5*time.Second, 20*time.Second)
	job := fairness.Arrived(0) // never launched: counts from its arrival
	for _, now := range []time.Duration{2 * time.Second, 5 * time.Second, 25 * time.Second} {
		fmt.Printf("at %v: %v\n", now, clock.Allowed(job, now))
	}
	job, _ = fairness.Launch(fairness.RackLocal, 30*time.Second) // it took a rack-local task
	fmt.Printf("at 31s: %v\n", clock.Allowed(job, 31*time.Second))
	fmt.Printf("at 50s: %v\n", clock.Allowed(job, 50*time.Second))
	// Output:
	// at 2s: node-local
	// at 5s: rack-local
	// at 25s: off-switch
	// at 31s: rack-local
	// at 50s: off-switch
}
