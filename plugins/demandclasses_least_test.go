package plugins

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
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
	state   *cluster.State
	fw      *framework.Framework
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
	return &leastWorld{state: w.state, fw: fw, classes: w.classes}
}

// renderFull renders a heartbeat's whole Decision: the tasks started, where, when and
// at which locality, why it stopped, and every skip counted, tallied and detailed.
func renderFull(d framework.Decision) string {
	var b strings.Builder
	b.WriteString(renderDecision(d))
	fmt.Fprintf(&b, " skipped=%d %v", d.Skipped, d.Refusals.Sorted())
	for _, sk := range d.Skips {
		fmt.Fprintf(&b, " [%v]", sk)
	}
	return b.String()
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
		var nodes []cluster.NodeSpec
		for i := range 3 + r.Intn(6) {
			nodes = append(nodes, cluster.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", i%2),
				Capacity: schema.MustTuple(int64(2000+1000*r.Intn(4)), int64(4+4*r.Intn(3))<<30)})
		}
		least, plain := newLeastWorld(t, schema, nodes), newLeastWorld(t, schema, nodes)
		plain.classes.noLeast = true
		worlds := []*leastWorld{least, plain}
		each := func(f func(w *leastWorld) error) string {
			var errs []string
			for _, w := range worlds {
				errs = append(errs, fmt.Sprint(f(w)))
			}
			if errs[0] != errs[1] {
				return fmt.Sprintf("least: %s, plain: %s", errs[0], errs[1])
			}
			return ""
		}
		request := func() resource.Tuple {
			return schema.MustTuple(int64(250+250*r.Intn(12)), int64(1+r.Intn(6))<<30)
		}
		var now time.Duration
		var running []string
		jobs, tasks := 0, 0
		for step := 0; step < 150; step++ {
			switch k := r.Intn(10); {
			case k < 3 || jobs == 0: // a job and its tasks, of one or two requests
				jobs++
				job := cluster.JobSpec{ID: fmt.Sprintf("j%d", jobs), Submitted: now}
				reqs := []resource.Tuple{request(), request()}
				var specs []cluster.TaskSpec
				for range 1 + r.Intn(6) {
					tasks++
					ts := cluster.TaskSpec{ID: fmt.Sprintf("t%d", tasks), Job: job.ID, Submitted: now,
						Request: reqs[r.Intn(len(reqs))], Duration: time.Duration(1+r.Intn(8)) * time.Second}
					for range r.Intn(3) {
						ts.Inputs = append(ts.Inputs, nodes[r.Intn(len(nodes))].ID)
					}
					specs = append(specs, ts)
				}
				if msg := each(func(w *leastWorld) error {
					if err := w.state.AddJob(job); err != nil {
						return err
					}
					return w.state.Submit(specs...)
				}); msg != "" {
					return msg
				}
			case k < 7: // a heartbeat
				now += time.Duration(r.Intn(1500)) * time.Millisecond
				node := nodes[r.Intn(len(nodes))].ID
				var got []string
				for _, w := range worlds {
					n, _ := w.state.Node(node)
					w.state.Advance(now)
					d, err := w.fw.Heartbeat(n, now)
					got = append(got, fmt.Sprint(renderFull(d), err))
					if w == least {
						for _, a := range d.Assignments {
							running = append(running, a.Task)
						}
					}
				}
				if got[0] != got[1] {
					return fmt.Sprintf("step %d, heartbeat of %s at %v:\n least: %s\n plain: %s", step, node, now, got[0], got[1])
				}
			default: // a running task finishes or fails
				if len(running) == 0 {
					continue
				}
				i := r.Intn(len(running))
				id := running[i]
				running = slices.Delete(running, i, i+1)
				fail := r.Intn(4) == 0
				if msg := each(func(w *leastWorld) error {
					t, ok := w.state.Task(id)
					if !ok || t.State() != cluster.Running {
						return nil
					}
					if fail {
						return w.state.Fail(t)
					}
					return w.state.Finish(t, max(now, t.Start()))
				}); msg != "" {
					return msg
				}
			}
		}
		hits += least.classes.leastHits
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	if hits == 0 {
		t.Error("the least need never refused a job: the property compares nothing")
	}
}
