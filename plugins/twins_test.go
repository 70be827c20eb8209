package plugins

import (
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/resource"
)

// twin is one of two schedulers built alike and fed the same events (twinEvents).
type twin struct {
	state *cluster.State
	fw    *framework.Framework
}

// twinScript is what twinEvents feeds two twins: how many steps, the chance in ten of a
// step submitting a job, the job submitted (newJob's: the nth job, at now, its tasks
// numbered from *tasks on), how a heartbeat's Decision is compared (render), and the
// twins' names in a report.
type twinScript struct {
	steps, jobOdds int
	newJob         func(r *rand.Rand, n int, now time.Duration, tasks *int) (cluster.JobSpec, []cluster.TaskSpec)
	render         func(framework.Decision) string
	names          [2]string
}

// twinEvents feeds twins a and b the same random events drawn from r — a job and its
// tasks, a heartbeat of a random node, a running task finishing or failing — and
// returns where they first differ, an event's error or a heartbeat's Decision as
// s.render gives it, or "" when they never do.
func twinEvents(r *rand.Rand, a, b twin, nodes []cluster.NodeSpec, s twinScript) string {
	worlds := [2]twin{a, b}
	each := func(f func(w twin) error) string {
		var errs [2]string
		for i, w := range worlds {
			errs[i] = fmt.Sprint(f(w))
		}
		if errs[0] != errs[1] {
			return fmt.Sprintf("%s: %s, %s: %s", s.names[0], errs[0], s.names[1], errs[1])
		}
		return ""
	}
	var now time.Duration
	var running []string
	jobs, tasks := 0, 0
	for step := 0; step < s.steps; step++ {
		switch k := r.Intn(10); {
		case k < s.jobOdds || jobs == 0:
			jobs++
			job, specs := s.newJob(r, jobs, now, &tasks)
			if msg := each(func(w twin) error {
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
			var got [2]string
			for i, w := range worlds {
				n, _ := w.state.Node(node)
				w.state.Advance(now)
				d, err := w.fw.Heartbeat(n, now)
				got[i] = fmt.Sprint(s.render(d), err)
				if i == 0 {
					for _, a := range d.Assignments {
						running = append(running, a.Task)
					}
				}
			}
			if got[0] != got[1] {
				return fmt.Sprintf("step %d, heartbeat of %s at %v:\n %s: %s\n %s: %s", step, node, now, s.names[0], got[0], s.names[1], got[1])
			}
		default: // a running task finishes or fails
			if len(running) == 0 {
				continue
			}
			i := r.Intn(len(running))
			id := running[i]
			running = slices.Delete(running, i, i+1)
			fail := r.Intn(4) == 0
			if msg := each(func(w twin) error {
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
	return ""
}

// twinNodes is count nodes in racks racks, of 2–5 cores and 4, 8 or 12 GiB.
func twinNodes(r *rand.Rand, schema *resource.Schema, count, racks int) []cluster.NodeSpec {
	var nodes []cluster.NodeSpec
	for i := range count {
		nodes = append(nodes, cluster.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", i%racks),
			Capacity: schema.MustTuple(int64(2000+1000*r.Intn(4)), int64(4+4*r.Intn(3))<<30)})
	}
	return nodes
}

// twinTasks is count tasks of job, numbered from *tasks on, each asking for request()
// for 1–8 s, with up to two inputs on nodes.
func twinTasks(r *rand.Rand, job cluster.JobSpec, count int, tasks *int, nodes []cluster.NodeSpec, request func() resource.Tuple) []cluster.TaskSpec {
	var specs []cluster.TaskSpec
	for range count {
		*tasks++
		ts := cluster.TaskSpec{ID: fmt.Sprintf("t%d", *tasks), Job: job.ID, Submitted: job.Submitted,
			Request: request(), Duration: time.Duration(1+r.Intn(8)) * time.Second}
		for range r.Intn(3) {
			ts.Inputs = append(ts.Inputs, nodes[r.Intn(len(nodes))].ID)
		}
		specs = append(specs, ts)
	}
	return specs
}
