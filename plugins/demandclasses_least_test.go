package plugins

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// leastWorld is a pull scheduler wired as the simulator's YARN baselines are (requests,
// no prediction, Alg. 2.1's delay scheduling), for comparing the heartbeats of two
// copies fed the same events.
type leastWorld struct {
	twin
	classes *DemandClasses
}

func newLeastWorld(t *testing.T, schema *resource.Schema, nodes []cluster.NodeSpec) *leastWorld {
	t.Helper()
	w := newWiring(t, schema, nodes, nil, match.LeastAllocated{})
	d, err := fairness.NewDelay(fairness.WithWaits(2*time.Second, 4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fw, err := framework.New(w.state, append(w.plugins, w.classes, NewDelayScheduling(d)), framework.WithSkipDetails(4))
	if err != nil {
		t.Fatal(err)
	}
	return &leastWorld{twin: twin{state: w.state, fw: fw}, classes: w.classes}
}

// DemandClasses' refusals from a job's least need (leastOf) change no decision: two
// schedulers fed the same random events — submissions of jobs whose tasks ask for one
// or two requests, heartbeats, finishes and failures (a failed task's class is not
// fixed) — decide the same, skips and their tallies included, one refusing from the
// record and one looking at the classes every time. The record also refuses often
// enough to matter.
func TestDemandClassesLeastChangesNothing(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	hits := 0
	props.Property("least = classes", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		schema := resource.MustSchema(resource.CPU, resource.Memory)
		nodes := twinNodes(r, schema, 3+r.Intn(6), 2)
		least, plain := newLeastWorld(t, schema, nodes), newLeastWorld(t, schema, nodes)
		plain.classes.noLeast = true
		if msg := twinEvents(r, least.twin, plain.twin, nodes, twinScript{
			steps: 150, jobOdds: 3, render: renderTetris, names: [2]string{"least", "plain"},
			newJob: func(r *rand.Rand, n int, now time.Duration, tasks *int) (cluster.JobSpec, []cluster.TaskSpec) {
				// Its tasks ask for one or two requests.
				job := cluster.JobSpec{ID: fmt.Sprintf("j%d", n), Submitted: now}
				request := func() resource.Tuple {
					return schema.MustTuple(int64(250+250*r.Intn(12)), int64(1+r.Intn(6))<<30)
				}
				reqs := []resource.Tuple{request(), request()}
				specs := twinTasks(r, job, 1+r.Intn(6), tasks, nodes, func() resource.Tuple { return reqs[r.Intn(len(reqs))] })
				return job, specs
			},
		}); msg != "" {
			return msg
		}
		hits += least.classes.leastHits
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	if hits == 0 {
		t.Error("the least need never refused a job: the property compares nothing")
	}
}
