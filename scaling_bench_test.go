package finegrain_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/finegrain/finegrain"
)

// BenchmarkScaling is the cost of one placement as the cluster grows: at 1,000, 10,000
// and 100,000 nodes with 100,000 pending tasks, and at 10,000, 100,000 and 1,000,000
// pending tasks on 10,000 nodes (1,000 jobs, 4-stage learned profiles, one input
// replica a task on a random node, DRF, fine-grained matching):
//
//   - push: Place of a pending task (timed) on a cluster already holding about one
//     task per node; the task then goes back to pending (untimed).
//   - pull: a heartbeat of a node with room for about 30 tasks (timed), without delay
//     scheduling; the tasks it starts go back to pending (untimed). The ns/task metric
//     is the heartbeats' time divided by the tasks they started.
//   - pull-delay: the same with delay scheduling (the default). Heartbeats come 1 ms
//     apart, so a job without a task local to the node waits (W1 = 5 s) and the
//     heartbeat starts only node-local tasks: where few jobs have one (many nodes, few
//     tasks), it starts few or none, and its cost is that of visiting the waiting jobs.
//
// The setup of the largest cases takes tens of seconds and a few GiB; run it alone:
//
//	go test -run XXX -bench Scaling -benchtime 200x .
func BenchmarkScaling(b *testing.B) {
	type size struct{ nodes, perJob int }
	sizes := []size{
		{1000, 100}, {10000, 100}, {100000, 100}, // 100,000 pending
		{10000, 10}, {10000, 1000}, // 10,000 and 1,000,000 pending on 10,000 nodes
	}
	for _, sz := range sizes {
		name := fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, 1000*sz.perJob)
		for _, pull := range []struct {
			name string
			opts []finegrain.Option
		}{
			{"pull", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}},
			{"pull-delay", nil},
		} {
			b.Run(pull.name+"/"+name, func(b *testing.B) {
				s, _ := benchCluster(b, sz.nodes, 1000, sz.perJob, 4, pull.opts...)
				benchHeartbeats(b, s, sz.nodes)
			})
		}
		b.Run("push/"+name, func(b *testing.B) {
			s, ids := benchCluster(b, sz.nodes, 1000, sz.perJob, 4)
			benchPlacements(b, s, ids, min(sz.nodes, len(ids)/2), false)
		})
	}
}

// benchHeartbeats times b.N heartbeats of benchCluster's first nodes (n000000,
// n000001, … up to nodes) in turn, 1 ms apart, returning the tasks each starts to
// pending (untimed), and reports the heartbeat's cost per task started, the tasks a
// heartbeat starts, and the median and 95th percentile of a heartbeat's cost (p50-ns,
// p95-ns; timed around each heartbeat): the mean hides heartbeats that cost far more
// than most, such as those of a node left with room that fits no pending task, where
// every job is visited.
func benchHeartbeats(b *testing.B, s *finegrain.Scheduler, nodes int) {
	benchHeartbeatsAfter(b, s, nodes, nil)
}

// benchHeartbeatsAfter is benchHeartbeats with before (nil: none) called untimed ahead
// of each heartbeat, with the node's ID: a node's report, say.
func benchHeartbeatsAfter(b *testing.B, s *finegrain.Scheduler, nodes int, before func(node string) error) {
	took := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	started := 0
	for i := 0; i < b.N; i++ {
		now := time.Duration(i) * time.Millisecond
		node := fmt.Sprintf("n%06d", i%nodes)
		if before != nil {
			b.StopTimer()
			if err := before(node); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		t0 := time.Now()
		d, err := s.Heartbeat(node, now)
		took = append(took, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		started += len(d.Assignments)
		for _, a := range d.Assignments {
			if err := s.Failed(a.Task, now); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	if started > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(started), "ns/task")
	}
	b.ReportMetric(float64(started)/float64(b.N), "tasks/heartbeat")
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*95/100].Nanoseconds()), "p95-ns")
}
