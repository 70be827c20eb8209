package plugins_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// exampleCluster is the setup of the examples below: a state over schema s with the
// nodes given, each registered with a policy.Adjuster (the node modes) and its
// policy.Compression (the compression allowed, eq. 6/7), and a framework.Framework
// running Prediction (a task's declared profile, else its request) and StageMatch,
// then the plugins given.
func exampleCluster(s *resource.Schema, nodes []cluster.NodeSpec, more ...framework.Plugin) (*cluster.State, *framework.Framework, *policy.Adjuster) {
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
	match, _ := plugins.NewStageMatch(adj, comp, nil)
	fw, err := framework.New(state, append([]framework.Plugin{pred, match}, more...))
	if err != nil {
		panic(err)
	}
	return state, fw, adj
}

// StageMatch matches a task's stage profile against the node's timeline stage by
// stage, with the matcher of the node's mode (policy.Adjuster). A task that asks 3.4
// cores in its second stage fits beside one that holds 3 cores for its first 10 s
// only; its first stage, 1.1 cores where 1 is free, fits in FineGrained mode by
// compressing cpu (eq. 6/7). The coarse match compares the peak with the least free.
func ExampleNewStageMatch() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	state, fw, adj := exampleCluster(s, []cluster.NodeSpec{{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)}})
	profile := func(cpu0, cpu1 int64) stage.Profile { // two stages of 10 s, 2 GiB each
		return stage.MustProfile(s,
			stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(cpu0, 2<<30)},
			stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(cpu1, 2<<30)})
	}
	_ = state.AddJob(cluster.JobSpec{ID: "j"})
	_ = state.Submit(
		cluster.TaskSpec{ID: "etl", Job: "j", Profile: profile(3000, 500)},
		cluster.TaskSpec{ID: "ml", Job: "j", Profile: profile(1100, 3400)},
	)
	etl, _ := state.Task("etl")
	_, _ = fw.Place(etl, 0) // etl runs on n1 from 0 s
	ml, _ := state.Task("ml")
	n1, _ := state.Node("n1")
	for _, mode := range []policy.NodeMode{policy.ModeFineGrained, policy.ModeFineGrainedNoCompression, policy.ModeCoarseGrained} {
		_ = adj.SetMode("n1", mode)
		st, r := fw.Filter(ml, n1, 0) // a probe: nothing is placed
		fmt.Printf("%v: %v: %v\n", mode, st.Code, r)
	}
	// (The coarse verdict names the peak stage and the window of the least free.)
	// Output:
	// FineGrained: Success: fits by compressing cpu by 2.44%
	// FineGrainedNoCompression: Unschedulable: stage 0 needs cpu=1100m over [0s, 10s) but 1 is free (compression allowance 0, short by 100m)
	// CoarseGrained: Unschedulable: stage 1 needs cpu=3400m over [0s, 10s) but 1 is free (compression allowance 0, short by 2400m)
}

// NewClockScheduling offers a node to the jobs in fairness order with locality waits
// by the clock: a job may launch on a node holding its input at once, on another node
// of the same rack W1 after its arrival (or its last launch), on any node W2 after
// that.
func ExampleNewClockScheduling() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	clock, _ := fairness.NewLocalityClock(3*time.Second, 3*time.Second) // W1, W2
	capacity := s.MustTuple(4000, 8<<30)
	state, fw, _ := exampleCluster(s, []cluster.NodeSpec{
		{ID: "n1", Rack: "r1", Capacity: capacity},
		{ID: "n2", Rack: "r1", Capacity: capacity},
		{ID: "n3", Rack: "r2", Capacity: capacity},
	}, plugins.NewClockScheduling(clock))
	// Job logs arrives at 0 s with its input on n1, which reports no room meanwhile.
	// A node takes one task. After a rack-local launch, any node is allowed W2 later.
	_ = state.AddJob(cluster.JobSpec{ID: "logs"})
	for _, id := range []string{"m1", "m2"} {
		_ = state.Submit(cluster.TaskSpec{ID: id, Job: "logs", Request: s.MustTuple(3000, 1<<30), Inputs: []string{"n1"}})
	}
	for _, hb := range []struct {
		node string
		at   time.Duration
	}{{"n3", 1 * time.Second}, {"n2", 4 * time.Second}, {"n3", 5 * time.Second}, {"n3", 7 * time.Second}} {
		n, _ := state.Node(hb.node)
		d, _ := fw.Heartbeat(n, hb.at)
		for _, a := range d.Assignments {
			fmt.Printf("%v %s: %s starts, %v\n", hb.at, hb.node, a.Task, a.Locality)
		}
		if len(d.Assignments) == 0 {
			fmt.Printf("%v %s: nothing starts (%v)\n", hb.at, hb.node, d.Refusals)
		}
	}
	// Output:
	// 1s n3: nothing starts (1 locality wait)
	// 4s n2: m1 starts, rack-local
	// 5s n3: nothing starts (1 locality wait)
	// 7s n3: m2 starts, off-switch
}

// NewTetris chooses, among the jobs' next tasks, the one whose demand best matches
// what the node has free (alignment), less a term for the job's remaining work. A
// node with most of its memory taken takes the cpu-heavy tasks, where the fairness
// order would start a memory-heavy one first and leave the cores idle.
func ExampleNewTetris() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	heartbeat := func(pass framework.Plugin) {
		state, fw, _ := exampleCluster(s, []cluster.NodeSpec{{ID: "n1", Capacity: s.MustTuple(8000, 16<<30)}}, pass)
		_ = state.AddJob(cluster.JobSpec{ID: "svc"})
		_ = state.AddJob(cluster.JobSpec{ID: "mem", Submitted: 0}) // first in fairness order
		_ = state.AddJob(cluster.JobSpec{ID: "cpu", Submitted: time.Second})
		_ = state.Submit(cluster.TaskSpec{ID: "cache", Job: "svc", Request: s.MustTuple(1000, 12<<30)})
		cache, _ := state.Task("cache")
		_, _ = fw.Place(cache, 0) // n1 has 7 cores and 4 GiB free
		for i := range 2 {
			_ = state.Submit(
				cluster.TaskSpec{ID: fmt.Sprint("mem-", i), Job: "mem", Request: s.MustTuple(1000, 4<<30)},
				cluster.TaskSpec{ID: fmt.Sprint("cpu-", i), Job: "cpu", Request: s.MustTuple(3000, 1<<30)},
			)
		}
		n1, _ := state.Node("n1")
		d, _ := fw.Heartbeat(n1, time.Second)
		fmt.Print(pass.Name(), ":")
		for _, a := range d.Assignments {
			fmt.Print(" ", a.Task)
		}
		fmt.Println()
	}
	heartbeat(plugins.NewDelayScheduling(nil)) // the fairness order
	tetris, _ := plugins.NewTetris(plugins.DefaultTetrisConfig(), nil)
	heartbeat(tetris)
	// Output:
	// DelayScheduling: mem-0
	// Tetris: cpu-0 cpu-1
}

// NewLoadAwareScheduling judges a node by its measured usage plus an estimate of the
// tasks placed since (85% of their cpu request), under usage thresholds (65% of the
// cpu), as Koordinator's plugin does, rather than by the sum of requests.
func ExampleNewLoadAwareScheduling() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	load, _ := plugins.NewLoadAwareScheduling(s, plugins.DefaultLoadAwareSchedulingArgs(s))
	state, fw, _ := exampleCluster(s, []cluster.NodeSpec{
		{ID: "busy", Capacity: s.MustTuple(8000, 32<<30)},
		{ID: "calm", Capacity: s.MustTuple(8000, 16<<30)},
	}, load) // registered last, its demand step replaces Prediction's
	// The node agents report the usage of the last 10 s: busy's cores are half used.
	_ = load.Report("busy", 10*time.Second, s.MustTuple(4000, 4<<30), 10*time.Second)
	_ = load.Report("calm", 10*time.Second, s.MustTuple(1000, 4<<30), 10*time.Second)

	_ = state.AddJob(cluster.JobSpec{ID: "web"})
	_ = state.Submit(cluster.TaskSpec{ID: "api", Job: "web", Request: s.MustTuple(2000, 2<<30)})
	api, _ := state.Task("api")
	cpu, _ := s.Index("cpu")
	fmt.Println("cpu estimate:", s.Dim(cpu).FormatAmount(load.Estimate(api.Spec().Request)[cpu]))
	for n := range state.Nodes() {
		score, st := fw.Score(api, n, 10*time.Second)
		fmt.Printf("%s: %v, score %.1f\n", n.ID(), st, score)
	}
	a, _ := fw.Place(api, 10*time.Second)
	fmt.Println("api →", a.Node)
	// Output:
	// cpu estimate: 1700m
	// busy: Unschedulable: no room (LoadAwareScheduling), score 0.0
	// calm: Success, score 66.2
	// api → calm
}

// NewPreemption makes room for a task that fits nowhere by evicting running tasks of
// lower priority (with Priority; Guarantees reclaims for queues below their min
// share). The evicted task is pending again; the embedder stops it.
func ExampleNewPreemption() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	preemption, _ := plugins.NewPreemption(plugins.PreemptionConfig{Priority: true})
	state, fw, _ := exampleCluster(s, []cluster.NodeSpec{{ID: "n1", Capacity: s.MustTuple(4000, 8<<30)}}, preemption)
	_ = state.AddJob(cluster.JobSpec{ID: "batch", Priority: 0})
	_ = state.AddJob(cluster.JobSpec{ID: "web", Priority: 10})
	_ = state.Submit(
		cluster.TaskSpec{ID: "backfill", Job: "batch", Request: s.MustTuple(3000, 4<<30)},
		cluster.TaskSpec{ID: "frontend", Job: "web", Request: s.MustTuple(2000, 2<<30)},
	)
	backfill, _ := state.Task("backfill")
	_, _ = fw.Place(backfill, 0)

	// frontend fits nowhere beside backfill: Preemption, a PostFilter plugin, evicts it.
	frontend, _ := state.Task("frontend")
	a, _ := fw.Place(frontend, time.Second)
	fmt.Println(a.Task, "→", a.Node)
	for _, e := range a.Evicted {
		fmt.Println("evicted:", e)
	}
	fmt.Println("backfill is", backfill.State())
	// Output:
	// frontend → n1
	// evicted: task "backfill" of job "batch" on node "n1": preempted for task "frontend"
	// backfill is pending
}

// NewGang runs a gang job (JobSpec.MinMember) all or nothing: a member that fits is
// reserved and waits until enough of its gang are reserved, and then they all start
// together; members not all reserved within the timeout are rolled back.
func ExampleNewGang() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	gang, _ := plugins.NewGang(time.Minute)
	capacity := s.MustTuple(4000, 8<<30) // room for one worker a node
	state, fw, _ := exampleCluster(s, []cluster.NodeSpec{{ID: "n1", Capacity: capacity}, {ID: "n2", Capacity: capacity}},
		gang, plugins.NewDelayScheduling(nil))
	_ = state.AddJob(cluster.JobSpec{ID: "train", MinMember: 2})
	_ = state.Submit(
		cluster.TaskSpec{ID: "worker-0", Job: "train", Request: s.MustTuple(3000, 4<<30)},
		cluster.TaskSpec{ID: "worker-1", Job: "train", Request: s.MustTuple(3000, 4<<30)},
	)
	w0, _ := state.Task("worker-0")
	// The heartbeat that completes the gang starts every member, each on its node.
	for i, id := range []string{"n1", "n2"} {
		n, _ := state.Node(id)
		d, _ := fw.Heartbeat(n, time.Duration(i)*time.Second)
		fmt.Printf("heartbeat of %s: %d started; worker-0 %v\n", id, len(d.Assignments), w0.State())
		for _, a := range d.Assignments {
			fmt.Println(" ", a.Task, "→", a.Node)
		}
	}
	// Output:
	// heartbeat of n1: 0 started; worker-0 reserved
	// heartbeat of n2: 2 started; worker-0 running
	//   worker-0 → n1
	//   worker-1 → n2
}
