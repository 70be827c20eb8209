package framework_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// A Framework over a cluster.State with three stock plugins: Prediction works out each
// task's demand (its declared profile, else its request), StageMatch checks that it
// fits a node, and DelayScheduling offers a node that reports room to the jobs in
// fairness order (here with no locality waits). One pull heartbeat starts what fits on
// n1; one push placement finds a node for the task left over.
func ExampleNew() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	state, _ := cluster.New(s)
	// StageMatch reads each node's mode from a policy.Adjuster and the compression it
	// may allow from a policy.Compression: every node is registered with both.
	conf, _ := predict.NewConformityLog(5)
	adj, _ := policy.NewAdjuster(s, conf)
	comp, _ := policy.NewCompression(s, adj)
	for _, id := range []string{"n1", "n2"} {
		capacity := s.MustTuple(4000, 8<<30) // 4 cores, 8 GiB
		_ = state.AddNode(cluster.NodeSpec{ID: id, Capacity: capacity})
		_ = adj.AddServer(id, capacity)
	}
	pred, _ := plugins.NewPrediction(s, nil, false) // no estimator
	stageMatch, _ := plugins.NewStageMatch(adj, comp, nil)
	fw, err := framework.New(state, []framework.Plugin{pred, stageMatch, plugins.NewDelayScheduling(nil)})
	if err != nil {
		panic(err)
	}

	// Three tasks of 2 cores and 3 GiB: two fit a node.
	_ = state.AddJob(cluster.JobSpec{ID: "etl"})
	for i := range 3 {
		_ = state.Submit(cluster.TaskSpec{ID: fmt.Sprintf("map-%d", i), Job: "etl", Request: s.MustTuple(2000, 3<<30)})
	}

	// Pull: n1 reports room at 0 s; the heartbeat says what starts there.
	n1, _ := state.Node("n1")
	d, _ := fw.Heartbeat(n1, 0)
	for _, a := range d.Assignments {
		fmt.Println("pull:", a.Task, "→", a.Node)
	}
	// map-2 no longer fits n1: its job is passed over, and the Decision counts why.
	fmt.Println("heartbeat ended:", d.Stop, "-", d.Refusals)

	// Push: the task left over is placed at 1 s on the node that takes it.
	t, _ := state.Task("map-2")
	a, _ := fw.Place(t, time.Second)
	fmt.Printf("push: %s → %s from %v, %v\n", a.Task, a.Node, a.Start, t.State())
	// Output:
	// pull: map-0 → n1
	// pull: map-1 → n1
	// heartbeat ended: every job passed over - 1 short of cpu
	// push: map-2 → n2 from 1s, running
}

// exampleCluster is ExampleNew's setup, for the examples that follow: a state with
// the nodes given, each registered with the policy.Adjuster StageMatch reads modes
// from, and a Framework running Prediction and StageMatch, then the plugins given.
func exampleCluster(s *resource.Schema, nodes []cluster.NodeSpec, more ...framework.Plugin) (*cluster.State, *framework.Framework) {
	state, _ := cluster.New(s)
	conf, _ := predict.NewConformityLog(5)
	adj, _ := policy.NewAdjuster(s, conf)
	comp, _ := policy.NewCompression(s, adj)
	for _, n := range nodes {
		if err := state.AddNode(n); err != nil {
			panic(err)
		}
		_ = adj.AddServer(n.ID, n.Capacity)
	}
	pred, _ := plugins.NewPrediction(s, nil, false)
	stageMatch, _ := plugins.NewStageMatch(adj, comp, nil)
	fw, err := framework.New(state, append([]framework.Plugin{pred, stageMatch}, more...))
	if err != nil {
		panic(err)
	}
	return state, fw
}

// packing is a Score plugin that packs: of the nodes that pass the filters, it prefers
// the one with the least memory left free once the task is there.
type packing struct{ mem int } // the memory dimension's slot in the schema

func (packing) Name() string { return "Packing" }

func (p packing) Score(_ *framework.Cycle, a *framework.Attempt) float64 {
	left := a.Node.Timeline().FreeAt(a.Start)[p.mem] - a.Demand.Hold.Peak()[p.mem]
	return -float64(left) / (1 << 30) // GiB left free, negated: less is better
}

// A plugin of your own implements Name and the extension points it wants: here a
// Score plugin. Push placement walks the nodes roomiest first and, on equal scores,
// takes the first; with Packing it takes the node the task fills best.
func ExampleScorePlugin() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	mem, _ := s.Index("memory")
	state, fw := exampleCluster(s, []cluster.NodeSpec{
		{ID: "big", Capacity: s.MustTuple(8000, 32<<30)},
		{ID: "small", Capacity: s.MustTuple(8000, 4<<30)},
	}, packing{mem})
	fmt.Println("Score plugins:", fw.Plugins()["Score"])

	_ = state.AddJob(cluster.JobSpec{ID: "web"})
	_ = state.Submit(cluster.TaskSpec{ID: "api", Job: "web", Request: s.MustTuple(1000, 3<<30)})
	t, _ := state.Task("api")
	// The Score probe says what Place weighs, node by node, without placing anything.
	for n := range state.Nodes() {
		score, st := fw.Score(t, n, 0)
		fmt.Printf("%s: %v, score %v\n", n.ID(), st, score)
	}
	a, _ := fw.Place(t, 0)
	fmt.Println("api →", a.Node)
	// Output:
	// Score plugins: [Packing]
	// big: Success, score -29
	// small: Success, score -1
	// api → small
}

// gpuOnly is a JobFilter plugin (pull mode): the jobs of queue "gpu" may use the
// nodes of rack "gpu" only, and no other job may use them.
type gpuOnly struct{}

func (gpuOnly) Name() string { return "GPUOnly" }

// FilterPass runs before each pass over the jobs; a Closed status ends the heartbeat.
func (gpuOnly) FilterPass(*framework.Cycle, *cluster.NodeInfo) framework.Status {
	return framework.Status{}
}

// FilterJob passes job j over, for this heartbeat, when it may not use node n.
func (gpuOnly) FilterJob(_ *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) framework.Status {
	if (j.Spec().Queue == "gpu") != (n.Rack() == "gpu") {
		return framework.Refuse(framework.PluginRefused)
	}
	return framework.Status{}
}

// Refused is told of each task refused on the node, for what the plugin may learn.
func (gpuOnly) Refused(*framework.Cycle, *framework.Attempt, framework.Status) {}

// A JobFilter plugin passes jobs over in pull mode before any task of theirs is tried;
// the Decision lists the jobs passed over, and why.
func ExampleJobFilterPlugin() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	state, fw := exampleCluster(s, []cluster.NodeSpec{
		{ID: "g1", Rack: "gpu", Capacity: s.MustTuple(8000, 32<<30)},
		{ID: "c1", Rack: "cpu", Capacity: s.MustTuple(8000, 32<<30)},
	}, gpuOnly{}, plugins.NewDelayScheduling(nil))
	_ = state.AddQueue("", "gpu")
	_ = state.AddJob(cluster.JobSpec{ID: "train", Queue: "gpu"})
	_ = state.AddJob(cluster.JobSpec{ID: "report"})
	_ = state.Submit(
		cluster.TaskSpec{ID: "t1", Job: "train", Request: s.MustTuple(4000, 16<<30)},
		cluster.TaskSpec{ID: "r1", Job: "report", Request: s.MustTuple(1000, 1<<30)},
	)
	for _, id := range []string{"c1", "g1"} {
		n, _ := state.Node(id)
		d, _ := fw.Heartbeat(n, 0)
		for _, a := range d.Assignments {
			fmt.Println(id, "started", a.Task)
		}
		for _, sk := range d.Skips {
			fmt.Println(id, "passed over", sk)
		}
	}
	// Output:
	// c1 started r1
	// c1 passed over job "train": refused by a plugin (GPUOnly)
	// g1 started t1
}

// A push placement that finds no node returns a *PlacementError: every node's refusal
// counted by reason and dimension, and the node that came closest with what it lacked.
func ExamplePlacementError() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	state, fw := exampleCluster(s, []cluster.NodeSpec{
		{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)},
		{ID: "n2", Capacity: s.MustTuple(4000, 8<<30)},
		{ID: "n3", Capacity: s.MustTuple(2500, 16<<30)},
	})
	_ = state.AddJob(cluster.JobSpec{ID: "etl"})
	_ = state.Submit(cluster.TaskSpec{ID: "join", Job: "etl", Request: s.MustTuple(3000, 12<<30)})
	t, _ := state.Task("join")

	_, err := fw.Place(t, 0)
	var pe *framework.PlacementError
	if errors.As(err, &pe) {
		fmt.Printf("most nodes: %v (%s)\n", pe.Reason, pe.Dim)
		for _, c := range pe.Refusals.Counts {
			fmt.Println(c)
		}
		dim := s.Dim(pe.Result.Dim)
		fmt.Println("closest:", pe.Refusals.Closest, "short of", dim.Name, "by", dim.FormatAmount(pe.Result.Shortfall()))
	}
	fmt.Println(errors.Is(err, framework.ErrNotPlaced))
	fmt.Println(err)
	// Output:
	// most nodes: smaller than the task (memory)
	// 2 too small for its memory
	// 1 short of cpu
	// closest: n3 short of cpu by 500m
	// true
	// finegrain: task "join": 0/3 nodes can take it: 2 too small for its memory, 1 short of cpu; closest: node "n3", stage 0 needs cpu=3 over [0s, forever) but 2500m is free (compression allowance 0, short by 500m): no node fits the task
}

// Explain counts, placing nothing, why no node takes a pending task now: what a failed
// Place would say. A host scheduler that asks the Filter probe node by node tallies
// the answers the same way, with Tally.Add.
func ExampleFramework_Explain() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	state, fw := exampleCluster(s, []cluster.NodeSpec{
		{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)},
		{ID: "n2", Capacity: s.MustTuple(4000, 8<<30)},
	})
	_ = state.AddJob(cluster.JobSpec{ID: "svc"})
	_ = state.AddJob(cluster.JobSpec{ID: "etl"})
	_ = state.Submit(
		cluster.TaskSpec{ID: "cache", Job: "svc", Request: s.MustTuple(1000, 6<<30)},
		cluster.TaskSpec{ID: "encode", Job: "svc", Request: s.MustTuple(3500, 1<<30)},
		cluster.TaskSpec{ID: "sort", Job: "etl", Request: s.MustTuple(1000, 4<<30)},
	)
	for _, id := range []string{"cache", "encode"} { // cache lands on n1, encode on n2
		t, _ := state.Task(id)
		_, _ = fw.Place(t, 0)
	}
	sort, _ := state.Task("sort")
	why := fw.Explain(sort, 0)
	fmt.Println(why.Explain())

	var tally framework.Tally
	for n := range state.Nodes() {
		st, r := fw.Filter(sort, n, 0)
		tally.Add(n.ID(), n.Capacity(), st, r)
	}
	fmt.Println(tally.Sorted().Explain())
	// Output:
	// 0/2 nodes can take it: 1 short of cpu, 1 short of memory; closest: node "n2", stage 0 needs cpu=1 over [0s, forever) but 500m is free (compression allowance 0, short by 500m)
	// 0/2 nodes can take it: 1 short of cpu, 1 short of memory; closest: node "n2", stage 0 needs cpu=1 over [0s, forever) but 500m is free (compression allowance 0, short by 500m)
}

// pairs is a Permit plugin: a task waits, reserved, until a second task of its job is
// reserved too; then both start together (a gang of two; plugins.Gang is the full
// version).
type pairs struct{}

func (pairs) Name() string { return "Pairs" }

func (pairs) Permit(c *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration) {
	for _, w := range c.Waiting() {
		if w.Job() == a.Task.Job() {
			_ = c.Allow(w.ID()) // the waiting partner starts now
			return framework.Status{}, 0
		}
	}
	return framework.Status{Code: framework.Wait}, time.Minute // wait at most a minute
}

// A Permit plugin may keep a reserved task waiting until a later cycle allows it
// (Cycle.Allow) or rejects it; a wait that times out is rejected. A task allowed in a
// push cycle is handed over by TakePermitted (in a pull cycle, by the Decision).
func ExamplePermitPlugin() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	state, fw := exampleCluster(s, []cluster.NodeSpec{{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)}}, pairs{})
	_ = state.AddJob(cluster.JobSpec{ID: "mpi"})
	_ = state.Submit(
		cluster.TaskSpec{ID: "rank-0", Job: "mpi", Request: s.MustTuple(1000, 1<<30)},
		cluster.TaskSpec{ID: "rank-1", Job: "mpi", Request: s.MustTuple(1000, 1<<30)},
	)
	r0, _ := state.Task("rank-0")
	r1, _ := state.Task("rank-1")

	_, err := fw.Place(r0, 0)
	fmt.Println(r0.State(), "-", err)

	a, _ := fw.Place(r1, time.Second)
	fmt.Println(a.Task, "→", a.Node, r1.State())
	for _, a := range fw.TakePermitted() {
		fmt.Println(a.Task, "→", a.Node, "from", a.Start, r0.State())
	}
	// Output:
	// reserved - finegrain: task "rank-0": reserved, waiting for a permit (Pairs): not placed yet
	// rank-1 → n1 running
	// rank-0 → n1 from 1s running
}
