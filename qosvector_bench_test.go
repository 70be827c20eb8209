package finegrain_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
)

// BenchmarkQoSVectorHeartbeat is one pull decision under QoS-vector scheduling with
// BenchmarkHeartbeat's load (1,000 jobs in 10 capacity queues, 100,000 pending tasks,
// request-based), every job with a random demand: before each heartbeat the node
// reports its supply (untimed); the heartbeat chooses until the node's memory runs out
// or the chosen sub-queue has no job that fits; the tasks it started are then returned
// to pending (untimed). Each choice walks the jobs and evaluates one sub-queue.
func BenchmarkQoSVectorHeartbeat(b *testing.B) {
	const nodes, queues = 100, 10
	s, _ := benchCluster(b, nodes, 0, 0, 1, finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Capacity{}), finegrain.WithPullStrategy(finegrain.PullQoSVector()))
	r := rand.New(rand.NewSource(1))
	for q := 0; q < queues; q++ {
		if err := s.AddQueue("", fmt.Sprintf("q%d", q), fairness.MinShare(0.1)); err != nil {
			b.Fatal(err)
		}
	}
	vec := func() match.QoSVector {
		var v match.QoSVector
		for i := range v {
			v[i] = float64(1 + r.Intn(10))
		}
		return v
	}
	for j := 0; j < 1000; j++ {
		jid := fmt.Sprintf("j%04d", j)
		if err := s.SubmitJob(finegrain.Job{ID: jid, Queue: fmt.Sprintf("q%d", j%queues), Submitted: time.Duration(j)}); err != nil {
			b.Fatal(err)
		}
		var k match.Weights
		k[r.Intn(match.QoSLen)] = 0.6
		for f := range k {
			k[f] += 0.08
		}
		if err := s.SetJobQoSVector(jid, finegrain.QoSVectorDemand{Req: vec(), Weights: k, Need: match.Hard{Memory: 2 * gib, Disk: gib}}); err != nil {
			b.Fatal(err)
		}
		batch := make([]finegrain.Task, 100)
		for i := range batch {
			batch[i] = finegrain.Task{ID: fmt.Sprintf("%s-t%d", jid, i), Job: jid, Request: schema.MustTuple(2000, 2*gib)}
		}
		if err := s.Submit(batch...); err != nil {
			b.Fatal(err)
		}
	}
	supplies := make(map[string]finegrain.QoSVectorSupply, nodes)
	for i := 0; i < nodes; i++ {
		supplies[fmt.Sprintf("n%06d", i)] = finegrain.QoSVectorSupply{Res: vec(), Remaining: match.Hard{Memory: 64 * gib, Disk: 500 * gib}}
	}
	benchHeartbeatsAfter(b, s, nodes, func(node string) error { return s.SetNodeQoSVector(node, supplies[node]) })
}
