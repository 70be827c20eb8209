package finegrain_test

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// BenchmarkScaleUpRound is one scale-up round (Scheduler.ScaleUp, docs/methods.md §11)
// on 1,000 nodes of 10.5 cores and 16 GiB running 10,000 tasks of 1 core and 1 GiB, ten
// a node, two of them latency-sensitive with a 30 s objective, one of which slows down
// past it; the batch tasks are measured at 30–80% of their request. No node has the
// room its straggler needs, nor room for a straggler moved there: the round reclaims
// from batch tasks and grows the stragglers in place. The cluster is built afresh
// (untimed) for each op, and the building's garbage collected (untimed) so that the
// round does not pay for it. Rounds are an embedder's periodic call, not part of a
// heartbeat:
//
//   - periodic: the round a scheduler runs every few seconds — the one timed follows
//     an earlier round on the same cluster, made and undone in reverse (UndoScale,
//     untimed), so that it decides the same changes with the room the earlier one
//     kept for its lists;
//   - first: the first round a scheduler runs;
//   - periodic-parallel: periodic, with the round's read-only steps on GOMAXPROCS
//     goroutines (ScaleUpConfig.Parallelism); the others run on one, the default.
func BenchmarkScaleUpRound(b *testing.B) {
	for _, c := range []struct {
		name        string
		periodic    bool
		parallelism int
	}{{"periodic", true, 0}, {"first", false, 0}, {"periodic-parallel", true, runtime.GOMAXPROCS(0)}} {
		periodic := c.periodic
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			actions := 0
			for range b.N {
				b.StopTimer()
				s := scaleUpCluster(b, finegrain.WithScaleUp(finegrain.ScaleUpConfig{Parallelism: c.parallelism}))
				want := -1
				if periodic {
					earlier, err := s.ScaleUp(4 * time.Second)
					if err != nil {
						b.Fatal(err)
					}
					for i := len(earlier.Actions) - 1; i >= 0; i-- {
						if err := s.UndoScale(earlier.Actions[i], 4*time.Second); err != nil {
							b.Fatal(err)
						}
					}
					want = len(earlier.Actions)
				}
				runtime.GC()
				b.StartTimer()
				round, err := s.ScaleUp(4 * time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if want >= 0 && len(round.Actions) != want {
					b.Fatalf("the round after an undone one made %d changes, the undone one %d", len(round.Actions), want)
				}
				actions += len(round.Actions)
			}
			b.ReportMetric(float64(actions)/float64(b.N), "actions/op")
		})
	}
}

// scaleUpCluster is BenchmarkScaleUpRound's cluster, on a scheduler with opts.
func scaleUpCluster(b testing.TB, opts ...finegrain.Option) *finegrain.Scheduler {
	const nodes, perNode = 1000, 10
	r := rand.New(rand.NewSource(1))
	s, err := finegrain.New(schema, append([]finegrain.Option{finegrain.WithPrediction(false)}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	for i := range nodes {
		if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%04d", i), Capacity: schema.MustTuple(10500, 16*gib)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.SubmitJob(finegrain.Job{ID: "j"}); err != nil {
		b.Fatal(err)
	}
	var ls, batch []string
	for i := range nodes * perNode {
		t := finegrain.Task{ID: fmt.Sprintf("t%05d", i), Job: "j", Request: schema.MustTuple(1000, gib)}
		if (i/nodes)%5 == 0 { // two on each node
			t.Class, t.SLO = finegrain.LatencySensitive, 30*time.Second
		}
		if err := s.Submit(t); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Reserve(t.ID, fmt.Sprintf("n%04d", i%nodes), 0); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Commit(t.ID, 0); err != nil {
			b.Fatal(err)
		}
		if t.Class == finegrain.LatencySensitive {
			ls = append(ls, t.ID)
		} else {
			batch = append(batch, t.ID)
		}
	}
	for k := 1; k <= 4; k++ {
		for i, id := range ls {
			v := 0.05 // on time
			if i%2 == 0 && k > 2 {
				v = 0.02 // slowing down: due past its objective
			}
			p := 0.05*float64(min(k, 2)) + v*float64(max(k-2, 0))
			if err := s.Progress(id, p, time.Duration(k)*time.Second); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, id := range batch {
		f := int64(30 + r.Intn(51))
		used := stage.MustProfile(schema, stage.Stage{Duration: 4 * time.Second, Demand: schema.MustTuple(1000*f/100, gib*f/100)})
		if err := s.ReportRunning(id, 4*time.Second, predict.Observation{Profile: used}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}
