package finegrain_test

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// benchProfile is a learned 4-stage (or 8-stage) profile of about 1 core and 1 GiB.
func benchProfile(stages int, r *rand.Rand) stage.Profile {
	st := make([]stage.Stage, stages)
	for i := range st {
		st[i] = stage.Stage{
			Duration: time.Duration(5+r.Intn(20)) * time.Second,
			Demand:   schema.MustTuple(int64(500+r.Intn(1000)), int64(256+r.Intn(1024))<<20),
		}
	}
	return stage.MustProfile(schema, st...)
}

// benchCluster builds a scheduler with the given nodes, jobs and pending tasks per job.
// Each job's tasks share a similarity key with a learned profile, so matching is
// fine-grained. The benchmarks hand placed tasks back with Failed to keep the load
// steady; that is no failure to raise the task's demand for, so escalation is off
// (WithFailureEscalation; opts may turn it on).
func benchCluster(b *testing.B, nodes, jobs, perJob, stages int, opts ...finegrain.Option) (*finegrain.Scheduler, []string) {
	r := rand.New(rand.NewSource(1))
	s, err := finegrain.New(schema, append([]finegrain.Option{finegrain.WithFailureEscalation(false)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < nodes; i++ {
		if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%06d", i), Rack: fmt.Sprintf("r%d", i%20), Capacity: schema.MustTuple(32000, 64*gib)}); err != nil {
			b.Fatal(err)
		}
	}
	var ids []string
	for j := 0; j < jobs; j++ {
		jid := fmt.Sprintf("j%04d", j)
		if err := s.SubmitJob(finegrain.Job{ID: jid, Submitted: time.Duration(j)}); err != nil {
			b.Fatal(err)
		}
		key := predict.Key{Logic: jid, InputSize: 128 << 20}
		if err := s.Estimator().Observe(key, predict.Observation{Profile: benchProfile(stages, r)}); err != nil {
			b.Fatal(err)
		}
		batch := make([]finegrain.Task, perJob)
		for i := range batch {
			id := fmt.Sprintf("%s-t%d", jid, i)
			batch[i] = finegrain.Task{ID: id, Job: jid, Key: key, Request: schema.MustTuple(2000, 2*gib),
				Inputs: []string{fmt.Sprintf("n%06d", r.Intn(nodes))}}
			ids = append(ids, id)
		}
		if err := s.Submit(batch...); err != nil {
			b.Fatal(err)
		}
	}
	return s, ids
}

// BenchmarkHeartbeat is one pull decision (Alg. 1) with 1,000 jobs and 100,000 pending
// tasks: a node with room for about 30 tasks asks for work; the tasks it gets are then
// returned to pending (untimed) so that every heartbeat sees the same load. With
// locality waits, most jobs wait for locality on any one node and are passed over: by
// the clock rule (the default, "clock") or by Alg. 2.1's offer counting
// (PullDelayScheduling, "delay"). By default each job waiting for node locality first
// looks at whether a node holding its input has room (WithLocalityWaitForRoom); the
// "-hadoop" cases pass them over without looking.
func BenchmarkHeartbeat(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts []finegrain.Option
	}{
		{"nodelay", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}},
		{"clock", nil},
		{"clock-hadoop", []finegrain.Option{finegrain.WithLocalityWaitForRoom(false)}},
		{"delay", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullDelayScheduling())}},
		{"delay-hadoop", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullDelayScheduling()), finegrain.WithLocalityWaitForRoom(false)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := benchCluster(b, 100, 1000, 100, 4, tc.opts...)
			benchHeartbeats(b, s, 100)
		})
	}
}

// BenchmarkPlace is push placement of 8-stage fine-grained profiles on clusters of 1,000
// to 100,000 nodes already holding about one task per node: each op places one task and
// returns it to pending (both timed).
func BenchmarkPlace(b *testing.B) {
	for _, nodes := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			s, ids := benchCluster(b, nodes, 100, 100+nodes/50, 8)
			benchPlacements(b, s, ids, len(ids)/2, true)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "placements/s")
		})
	}
}

// BenchmarkPlaceFirstFit is BenchmarkPlace at 10,000 nodes with WithCandidates(1):
// the first node that passes the filters, roomiest first, is taken without scoring
// others — what placement costs apart from choosing among nodes.
func BenchmarkPlaceFirstFit(b *testing.B) {
	s, ids := benchCluster(b, 10000, 100, 100+10000/50, 8, finegrain.WithCandidates(1))
	benchPlacements(b, s, ids, len(ids)/2, true)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "placements/s")
}

// BenchmarkPlaceRequest is push placement of tasks without a learned profile, placed by
// their request (1 core and 2 GiB until they finish), with 10,000 pending on clusters
// of 1,000 and 5,000 nodes already holding 10,000 such tasks. Each op places one task
// (timed); the tasks are handed back with Failed in batches of placeBatch, untimed, so
// that stopping the timer costs little against the placements and the cluster changes
// by at most a batch of tasks between hand-backs.
func BenchmarkPlaceRequest(b *testing.B) {
	for _, nodes := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			s, err := finegrain.New(schema, finegrain.WithFailureEscalation(false))
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewSource(1))
			for i := 0; i < nodes; i++ {
				if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%06d", i), Rack: fmt.Sprintf("r%d", i%20), Capacity: schema.MustTuple(32000, 64*gib)}); err != nil {
					b.Fatal(err)
				}
			}
			var ids []string
			for j := 0; j < 100; j++ {
				jid := fmt.Sprintf("j%04d", j)
				if err := s.SubmitJob(finegrain.Job{ID: jid, Submitted: time.Duration(j)}); err != nil {
					b.Fatal(err)
				}
				batch := make([]finegrain.Task, 200)
				for i := range batch {
					batch[i] = finegrain.Task{ID: fmt.Sprintf("%s-t%d", jid, i), Job: jid, Request: schema.MustTuple(1000, 2*gib),
						Inputs: []string{fmt.Sprintf("n%06d", r.Intn(nodes))}}
					ids = append(ids, batch[i].ID)
				}
				if err := s.Submit(batch...); err != nil {
					b.Fatal(err)
				}
			}
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			fill := len(ids) / 2
			for _, id := range ids[:fill] {
				if _, err := s.Place(id, 0); err != nil {
					b.Fatal(err)
				}
			}
			rest := ids[fill:]
			placed := make([]string, 0, placeBatch)
			handBack := func() {
				for _, id := range placed {
					if err := s.Failed(id, 0); err != nil {
						b.Fatal(err)
					}
				}
				placed = placed[:0]
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := rest[i%len(rest)]
				a, err := s.Place(id, 0)
				if err != nil {
					b.Fatal(err)
				}
				if a.Result.Code != match.Fit {
					b.Fatalf("placed with result %v, want a plain fit by the request", a.Result.Code)
				}
				if placed = append(placed, id); len(placed) == placeBatch || i == b.N-1 {
					b.StopTimer()
					handBack()
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "placements/s")
		})
	}
}

// placeBatch is how many placements BenchmarkPlaceRequest times between hand-backs.
const placeBatch = 100

// BenchmarkMemory reports the heap a node and a pending task cost.
func BenchmarkMemory(b *testing.B) {
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := 0; i < b.N; i++ {
		before := heap()
		s, err := finegrain.New(schema)
		if err != nil {
			b.Fatal(err)
		}
		const nodes, tasks = 10000, 100000
		for i := 0; i < nodes; i++ {
			if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%06d", i), Rack: "r", Capacity: schema.MustTuple(32000, 64*gib)}); err != nil {
				b.Fatal(err)
			}
		}
		mid := heap()
		if err := s.SubmitJob(finegrain.Job{ID: "j"}); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < tasks; i++ {
			if err := s.Submit(finegrain.Task{ID: fmt.Sprintf("t%07d", i), Job: "j", Request: schema.MustTuple(1000, gib), Inputs: []string{"n000001"}}); err != nil {
				b.Fatal(err)
			}
		}
		after := heap()
		b.ReportMetric(float64(mid-before)/nodes, "B/node")
		b.ReportMetric(float64(after-mid)/tasks, "B/pending-task")
		runtime.KeepAlive(s)
	}
}

// BenchmarkPreemption is one push preemption decision on 1,000 nodes, each full with 20
// running low-priority tasks: a high-priority task that needs three of them evicted is
// placed (timed), then put back to pending and its victims placed again (untimed), so
// that every decision sees the same cluster. Handing the task back with Failed is no
// failure to raise its demand for, so escalation is off (WithFailureEscalation).
func BenchmarkPreemption(b *testing.B) {
	for _, nodes := range []int{100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			s, err := finegrain.New(schema, finegrain.WithPrediction(false), finegrain.WithFailureEscalation(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
			if err != nil {
				b.Fatal(err)
			}
			for _, j := range []finegrain.Job{{ID: "low"}, {ID: "high", Priority: 1}} {
				if err := s.SubmitJob(j); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < nodes; i++ {
				if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%06d", i), Capacity: schema.MustTuple(32000, 64*gib)}); err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < nodes*20; i++ {
				id := fmt.Sprintf("low%07d", i)
				if err := s.Submit(finegrain.Task{ID: id, Job: "low", Request: schema.MustTuple(1600, 64*gib/20)}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Place(id, 0); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Submit(finegrain.Task{ID: "high", Job: "high", Request: schema.MustTuple(4000, 9*gib)}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now := time.Duration(i+1) * time.Millisecond
				a, err := s.Place("high", now)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if len(a.Evicted) != 3 {
					b.Fatalf("%d victims, want 3", len(a.Evicted))
				}
				if err := s.Failed("high", now); err != nil {
					b.Fatal(err)
				}
				for _, e := range a.Evicted {
					if _, err := s.Place(e.Task, now); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
			}
		})
	}
}

// benchPlacements places fill of ids (shuffled) on s, untimed, then times b.N
// placements of the others in turn, each handed back to pending with Failed — timed
// with it when timeHandBack, untimed otherwise.
func benchPlacements(b *testing.B, s *finegrain.Scheduler, ids []string, fill int, timeHandBack bool) {
	r := rand.New(rand.NewSource(2))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids[:fill] {
		if _, err := s.Place(id, 0); err != nil {
			b.Fatal(err)
		}
	}
	rest := ids[fill:]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := rest[i%len(rest)]
		if _, err := s.Place(id, 0); err != nil {
			b.Fatal(err)
		}
		if !timeHandBack {
			b.StopTimer()
		}
		if err := s.Failed(id, 0); err != nil {
			b.Fatal(err)
		}
		if !timeHandBack {
			b.StartTimer()
		}
	}
}

// BenchmarkUsageReportCloud is a node agent's report in the cloud: the co-located
// applications' load (SetExternalLoad) then the usage window (ReportUsage), on a node
// running 16 tasks, with the hold netted of the tasks' slack (the default) or not.
func BenchmarkUsageReportCloud(b *testing.B) {
	for _, netting := range []bool{true, false} {
		b.Run(fmt.Sprintf("netting=%v", netting), func(b *testing.B) {
			s, ids := benchCluster(b, 1, 1, 16, 4, finegrain.WithExternalLoadNetting(netting), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
			for _, id := range ids {
				if _, err := s.Place(id, 0); err != nil {
					b.Fatal(err)
				}
			}
			window := make([]predict.Interval, 4)
			for i := range window {
				window[i] = predict.Interval{Duration: 3 * time.Second, Actual: schema.MustTuple(24000, 40*gib), Predicted: schema.MustTuple(30000, 40*gib)}
			}
			load := schema.MustTuple(8000, 4*gib)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now := time.Duration(i) * 12 * time.Second
				if _, err := s.SetExternalLoad("n000000", now, load); err != nil {
					b.Fatal(err)
				}
				if _, err := s.ReportUsage("n000000", now, window); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
