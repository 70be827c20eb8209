package speculate_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

var (
	sinkD  speculate.Decision
	sinkP  speculate.Placement
	sinkPl speculate.Plan
)

// benchJob returns a job with n running tasks on n/10 nodes whose speeds differ up to
// tenfold, three finished tasks per node, and about one task in ten straggling, and a
// request from the fastest node.
func benchJob(b *testing.B, n int) (*predict.ProgressTracker, *staticEstimator, speculate.Request) {
	r := rand.New(rand.NewPCG(1, 2))
	tr := tracker(b)
	nodes := max(n/10, 2)
	speed := make([]float64, nodes)
	for i := range speed {
		speed[i] = 30 + 270*r.Float64()
		for k := 0; k < 3; k++ {
			finished(b, tr, fmt.Sprintf("f%d-%d", i, k), fmt.Sprintf("n%04d", i), 0, time.Duration(speed[i]*float64(time.Second)))
		}
	}
	now := 1000 * time.Second
	for i := 0; i < n; i++ {
		node := r.IntN(nodes)
		elapsed := 60 + 200*r.Float64()
		f := 0.8 + 0.4*r.Float64()
		if r.IntN(10) == 0 {
			f = 0.1
		}
		progress := min(elapsed/speed[node]*f, 0.99)
		running(b, tr, fmt.Sprintf("t%06d", i), fmt.Sprintf("n%04d", node), now-time.Duration(elapsed*float64(time.Second)), progress, now)
	}
	est := &staticEstimator{tasks: tr.Running(now, nil), finished: tr.Finished(), nodes: map[string]predict.RateStats{}}
	for _, ns := range tr.Nodes(nil) {
		est.nodes[ns.Node] = ns.RateStats
	}
	fastest := 0
	for i := range speed {
		if speed[i] < speed[fastest] {
			fastest = i
		}
	}
	return tr, est, speculate.Request{Node: fmt.Sprintf("n%04d", fastest), Now: now}
}

// One speculation decision on a job with 10,000 running tasks, through the default
// progress model (ProgressTracker: its Running view sorts the tasks) and through a
// precomputed one (the speculator's own O(n) pass).
func BenchmarkSpeculate10k(b *testing.B) {
	tr, est, req := benchJob(b, 10_000)
	late := newLATE(b, speculate.WithSpeculativeCap(1))
	prrl := newPRRL(b, speculate.WithSpeculativeCap(1))
	for _, c := range []struct {
		name string
		s    speculate.Speculator
		est  predict.RuntimeEstimator
	}{
		{"LATE/tracker", late, tr}, {"PRRL/tracker", prrl, tr},
		{"LATE/static", late, est}, {"PRRL/static", prrl, est},
	} {
		b.Run(c.name, func(b *testing.B) {
			job := speculate.Job{Tasks: c.est}
			d, err := c.s.Speculate(job, req)
			if err != nil || d.Action != speculate.Backup {
				b.Fatalf("%+v %v", d, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sinkD, _ = c.s.Speculate(job, req)
			}
		})
	}
}

// PRRL's decision cost against the number of running tasks: linear.
func BenchmarkPRRLScaling(b *testing.B) {
	prrl := newPRRL(b, speculate.WithSpeculativeCap(1))
	for _, n := range []int{1_000, 10_000, 100_000} {
		_, est, req := benchJob(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			job := speculate.Job{Tasks: est}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sinkD, _ = prrl.Speculate(job, req)
			}
		})
	}
}

// benchCluster is a 1,000-node cluster, CPU full on every node, with 4 batch tasks per
// node (half over-allocated, half preemptible), 100 stragglers and new demand, so that a
// plan reclaims, preempts and expands.
func benchCluster(nodes int) speculate.PlanInput {
	r := rand.New(rand.NewPCG(3, 4))
	var in speculate.PlanInput
	for n := 0; n < nodes; n++ {
		id := fmt.Sprintf("n%04d", n)
		node := speculate.Node{ID: id, Capacity: cm(32000, 128)}
		for k := 0; k < 4; k++ {
			b := speculate.BatchTask{Task: fmt.Sprintf("%s-b%d", id, k), Node: id, Allocated: cm(7000, 24), Priority: r.IntN(3)}
			if k%2 == 0 {
				b.Reclaimable = cm(int64(r.IntN(2000)), int64(r.IntN(8)))
			} else {
				b.Preemptible = cm(int64(r.IntN(4000)), 0)
			}
			in.Batch = append(in.Batch, b)
			node.Allocated = node.Allocated.Add(b.Allocated)
		}
		s := speculate.Straggler{Task: id + "-ls", Node: id, Allocated: cm(4000, 8)}
		if n%(nodes/100) == 0 {
			s.Extra = cm(int64(1000+r.IntN(6000)), int64(r.IntN(4)))
		}
		in.Stragglers = append(in.Stragglers, s)
		node.Allocated = node.Allocated.Add(s.Allocated)
		in.Nodes = append(in.Nodes, node)
	}
	in.NewDemand = cm(200_000, 64)
	return in
}

// Planning on a 1,000-node cluster.
func BenchmarkPlan1000Nodes(b *testing.B) {
	in := benchCluster(1000)
	planner := newPlanner(b)
	plan, err := planner.Plan(in)
	if err != nil || plan.Reclaimed.IsZero() || plan.Preempted.IsZero() {
		b.Fatalf("%v %v", err, plan.Preempted)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkPl, _ = planner.Plan(in)
	}
}

// One Alg. 4.2 decision: 10 pools of 10 jobs, each with 20 waiting tasks, and 1,000 busy
// slots on 250 nodes in 10 racks.
func BenchmarkPlace(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	state := speculate.FairState{Racks: map[string]string{}}
	for n := 0; n < 250; n++ {
		state.Racks[fmt.Sprintf("n%03d", n)] = fmt.Sprintf("r%d", n%10)
	}
	node := func() string { return fmt.Sprintf("n%03d", r.IntN(250)) }
	for p := 0; p < 10; p++ {
		pool := speculate.Pool{ID: fmt.Sprintf("p%d", p), MinShare: 10, Weight: 1}
		for j := 0; j < 10; j++ {
			job := speculate.PoolJob{ID: fmt.Sprintf("p%dj%d", p, j), Running: r.IntN(20), Submitted: time.Duration(r.IntN(100)) * time.Second,
				TaskTime: speculate.NodeTimes{Default: time.Duration(30+r.IntN(90)) * time.Second}}
			for k := 0; k < 20; k++ {
				t := speculate.PendingTask{ID: fmt.Sprintf("%s-t%d", job.ID, k)}
				for l := 0; l < 3; l++ {
					n := node()
					t.Locations = append(t.Locations, speculate.Location{Node: n, Rack: state.Racks[n]})
				}
				job.Pending = append(job.Pending, t)
			}
			pool.Jobs = append(pool.Jobs, job)
		}
		state.Pools = append(state.Pools, pool)
	}
	for s := 0; s < 1000; s++ {
		state.Busy = append(state.Busy, speculate.BusySlot{Task: fmt.Sprintf("b%d", s), Node: node(), TimeLeft: time.Duration(r.IntN(120)) * time.Second})
	}
	placer := newPlacer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, _ = placer.Place(state, "n000")
	}
}
