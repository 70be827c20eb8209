package finegrain_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
)

// TestQoSVectorProperty: on a random cluster (queues with capacities, jobs with random
// demands, nodes with random supplies and hard values, reported before some heartbeats
// and not others, a random cap on starts per heartbeat), every heartbeat under
// QoS-vector scheduling
//   - returns: the sub-queue fallback terminates, within the five ranks;
//   - never starts a task whose job's hard QoS the node fails (must_value ≤ 0) against
//     what the node has left, as the embedder counts it;
//   - starts what a direct reading of steps 1–7 starts, in the same order, and ages the
//     same priorities: the queue of most free capacity, the node's first class with a
//     job waiting there, the best finalvalue among the jobs whose hard QoS is met, and
//     nothing once that sub-queue has none.
func TestQoSVectorProperty(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 200
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	props.Property("QoS-vector heartbeats terminate, meet the hard QoS and follow steps 1–7", prop.ForAll(qosVectorCase,
		gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// qosModelJob is a job as the reference reading of steps 1–7 sees it.
type qosModelJob struct {
	id, queue string
	d         finegrain.QoSVectorDemand
	pending   int
	priority  int
}

// qosVectorCase runs one case of TestQoSVectorProperty; "" when it holds.
func qosVectorCase(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	nodes := 1 + r.Intn(4)
	capCPU := int64(64000)
	perCap := []int{0, 1, 2}[r.Intn(3)]
	opts := []finegrain.Option{finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Capacity{}), finegrain.WithPullStrategy(finegrain.PullQoSVector())}
	if perCap > 0 {
		opts = append(opts, finegrain.WithMaxPerHeartbeat(perCap))
	}
	s, err := finegrain.New(schema, opts...)
	if err != nil {
		return err.Error()
	}
	// Capacities whose differences are no multiple of one task's share (1/(64·nodes)),
	// so that two queues never tie on free capacity.
	mins := map[string]float64{"q0": 0.5, "q1": 0.3 + 1.0/1000, "q2": 0.2 + 1.0/3000}
	queues := []string{"q0", "q1", "q2"}[:1+r.Intn(3)]
	for _, q := range queues {
		if err := s.AddQueue("", q, fairness.MinShare(mins[q])); err != nil {
			return err.Error()
		}
	}
	if r.Intn(3) == 0 {
		queues = append(queues, "") // the root queue, whose use is the whole cluster's
	}
	vec := func() match.QoSVector {
		var v match.QoSVector
		for i := range v {
			if r.Intn(2) == 0 {
				v[i] = float64(1 + r.Intn(10))
			} else {
				v[i] = 1 + 9*r.Float64()
			}
		}
		return v
	}
	supplies := make([]finegrain.QoSVectorSupply, nodes)
	for i := range supplies {
		if err := s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Capacity: schema.MustTuple(capCPU, 1024*gib)}); err != nil {
			return err.Error()
		}
		supplies[i] = finegrain.QoSVectorSupply{Res: vec(), Remaining: match.Hard{Memory: int64(4+r.Intn(61)) * gib, Disk: int64(10+r.Intn(191)) * gib}}
	}
	var jobs []*qosModelJob
	for i := r.Intn(13); i >= 0; i-- {
		var k match.Weights
		sum := 0.0
		for f := range k {
			k[f] = r.Float64()
			sum += k[f]
		}
		for f := range k {
			k[f] /= sum
		}
		j := &qosModelJob{id: fmt.Sprintf("j%02d", len(jobs)), queue: queues[r.Intn(len(queues))], pending: 1 + r.Intn(3),
			d: finegrain.QoSVectorDemand{Req: vec(), Weights: k, Need: match.Hard{Memory: int64(1+r.Intn(16)) * gib, Disk: int64(1+r.Intn(50)) * gib}}}
		jobs = append(jobs, j)
		if err := s.SubmitJob(finegrain.Job{ID: j.id, Queue: j.queue, Submitted: time.Duration(len(jobs)) * time.Millisecond}); err != nil {
			return err.Error()
		}
		if err := s.SetJobQoSVector(j.id, j.d); err != nil {
			return err.Error()
		}
		for k := 0; k < j.pending; k++ {
			if err := s.Submit(finegrain.Task{ID: fmt.Sprintf("%s-%d", j.id, k), Job: j.id, Request: schema.MustTuple(1000, gib)}); err != nil {
				return err.Error()
			}
		}
	}
	running := map[string]int{} // by queue
	total := 0
	share := func(tasks int) float64 { return float64(tasks) * 1000 / float64(capCPU*int64(nodes)) }
	free := func(q string) float64 {
		if q == "" {
			return -share(total)
		}
		return mins[q] - share(running[q])
	}
	byID := map[string]*qosModelJob{}
	for _, j := range jobs {
		byID[j.id] = j
	}
	next := map[string]int{} // a job's next task to start, in task order
	reported := make([]bool, nodes)

	for beat := 1; beat <= 25; beat++ {
		ni := r.Intn(nodes)
		node := fmt.Sprintf("n%d", ni)
		if r.Intn(10) < 7 { // reported; otherwise the pass counts its own starts
			if err := s.SetNodeQoSVector(node, supplies[ni]); err != nil {
				return err.Error()
			}
			reported[ni] = true
		}
		// The reference reading, on the same remaining hard values; a node that never
		// reported takes nothing.
		var want []string
		rem := supplies[ni].Remaining
		for reported[ni] && (perCap == 0 || len(want) < perCap) {
			bestQ, any := "", false
			for _, q := range queues {
				if slices.ContainsFunc(jobs, func(j *qosModelJob) bool { return j.queue == q && j.pending > 0 }) && (!any || free(q) > free(bestQ)) {
					bestQ, any = q, true
				}
			}
			if !any {
				break
			}
			var sub []*qosModelJob
			for rank := 1; rank <= match.QoSLen && len(sub) == 0; rank++ {
				class, _ := supplies[ni].Res.Class(rank)
				for _, j := range jobs {
					if j.queue == bestQ && j.pending > 0 && j.d.Weights.Class() == class {
						sub = append(sub, j)
					}
				}
			}
			if len(sub) == 0 {
				return fmt.Sprintf("beat %d: the fallback found no sub-queue in queue %q with jobs waiting", beat, bestQ)
			}
			var pick *qosModelJob
			bestV := 0.0
			for _, j := range sub {
				_, met := match.MustValue(j.d.Need, rem)
				v := match.FinalValue(match.Value(j.d.Req, supplies[ni].Res, j.d.Weights), met, j.priority)
				if !met {
					j.priority++
					continue
				}
				if pick == nil || v > bestV {
					pick, bestV = j, v
				}
			}
			if pick == nil {
				break
			}
			want = append(want, fmt.Sprintf("%s-%d", pick.id, next[pick.id]))
			next[pick.id]++
			pick.pending--
			running[pick.queue]++
			total++
			rem.Memory -= pick.d.Need.Memory
			rem.Disk -= pick.d.Need.Disk
		}

		d, err := s.Heartbeat(node, time.Duration(beat)*time.Second)
		if err != nil {
			return fmt.Sprintf("beat %d: %v", beat, err)
		}
		var got []string
		for _, a := range d.Assignments {
			j := byID[a.Job]
			if _, met := match.MustValue(j.d.Need, supplies[ni].Remaining); !met {
				return fmt.Sprintf("beat %d: %s started on %s whose hard QoS it fails: need %+v, left %+v", beat, a.Task, node, j.d.Need, supplies[ni].Remaining)
			}
			supplies[ni].Remaining.Memory -= j.d.Need.Memory
			supplies[ni].Remaining.Disk -= j.d.Need.Disk
			got = append(got, a.Task)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("beat %d on %s: started %v, steps 1–7 start %v (stop %v)", beat, node, got, want, d.Stop)
		}
		for _, j := range jobs {
			if p, err := s.QoSVectorPriority(j.id); err != nil || p != j.priority {
				return fmt.Sprintf("beat %d: job %s's priority %d (%v), want %d", beat, j.id, p, err, j.priority)
			}
		}
	}
	return ""
}
