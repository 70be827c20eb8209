package finegrain_test

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// twins drives two schedulers through the same random events and reports the first
// place where they differ: the replays that check a fast path or a cache against the
// plain computation (TestQuickCheckChangesNoDecision, TestClassRefsChangeNoDecision)
// share its cluster, its heartbeats, its completions and its cancellations, and add
// events of their own.
type twins struct {
	ss      [2]*finegrain.Scheduler
	r       *rand.Rand
	schema  *resource.Schema
	nodes   []string
	running []string
	now     time.Duration
}

const twinGiB = int64(1) << 30

// newTwins gives schedulers ss three nodes of random sizes in two racks, and four jobs.
func newTwins(r *rand.Rand, schema *resource.Schema, ss [2]*finegrain.Scheduler) (*twins, string) {
	w := &twins{ss: ss, r: r, schema: schema}
	for i := 0; i < 3; i++ {
		n := finegrain.Node{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", i%2),
			Capacity: schema.MustTuple(int64(2000+r.Intn(4)*1000), int64(2+r.Intn(6))*twinGiB, 100, 100, 100*twinGiB, 0)}
		if msg := w.both(func(s *finegrain.Scheduler) error { return s.AddNode(n) }); msg != "" {
			return nil, msg
		}
		w.nodes = append(w.nodes, n.ID)
	}
	for j := 0; j < 4; j++ {
		job := finegrain.Job{ID: fmt.Sprintf("j%d", j), Submitted: time.Duration(j)}
		if msg := w.both(func(s *finegrain.Scheduler) error { return s.SubmitJob(job) }); msg != "" {
			return nil, msg
		}
	}
	return w, ""
}

// both calls f on each scheduler and reports whether one failed and the other not.
func (w *twins) both(f func(s *finegrain.Scheduler) error) string {
	e0, e1 := f(w.ss[0]), f(w.ss[1])
	if (e0 == nil) != (e1 == nil) {
		return fmt.Sprintf("errors differ: %v / %v", e0, e1)
	}
	return ""
}

// tick moves the clock on by up to 3 s.
func (w *twins) tick() { w.now += time.Duration(w.r.Intn(3000)) * time.Millisecond }

// task is a new task of step for a random job, asking for a random request.
func (w *twins) task(step int) finegrain.Task {
	r := w.r
	return finegrain.Task{ID: fmt.Sprintf("t%d", step), Job: fmt.Sprintf("j%d", r.Intn(4)), Submitted: w.now,
		Request: w.schema.MustTuple(int64(500+r.Intn(3)*500), int64(1+r.Intn(3))*twinGiB/2, 0, 0, 0, 0)}
}

// submit gives task t (from task) a declared duration a third of the time and an
// input half the time, then submits it to both.
func (w *twins) submit(t finegrain.Task) string {
	r := w.r
	if r.Intn(3) == 0 {
		t.Duration = time.Duration(1+r.Intn(20)) * time.Second
	}
	if r.Intn(2) == 0 {
		t.Inputs = []string{w.nodes[r.Intn(len(w.nodes))]}
	}
	return w.both(func(s *finegrain.Scheduler) error { return s.Submit(t) })
}

// heartbeat beats a random node on both and compares what starts; what starts runs.
func (w *twins) heartbeat(step int, names [2]string) string {
	node := w.nodes[w.r.Intn(len(w.nodes))]
	d0, err0 := w.ss[0].Heartbeat(node, w.now)
	d1, err1 := w.ss[1].Heartbeat(node, w.now)
	if err0 != nil || err1 != nil {
		return fmt.Sprintf("heartbeat: %v / %v", err0, err1)
	}
	if len(d0.Assignments) != len(d1.Assignments) || !sameStop(d0.Stop, d1.Stop) {
		return fmt.Sprintf("step %d: %d tasks (%v) %s, %d (%v) %s", step, len(d0.Assignments), d0.Stop, names[0], len(d1.Assignments), d1.Stop, names[1])
	}
	for i, a := range d0.Assignments {
		b := d1.Assignments[i]
		if a.Task != b.Task || a.Node != b.Node || a.Start != b.Start || a.Locality != b.Locality {
			return fmt.Sprintf("step %d: assignment %d differs: %+v / %+v", step, i, a, b)
		}
		w.running = append(w.running, a.Task)
	}
	return ""
}

// observation is a random one-stage observation.
func (w *twins) observation() predict.Observation {
	r := w.r
	return predict.Observation{Profile: stage.MustProfile(w.schema,
		stage.Stage{Duration: time.Duration(1+r.Intn(10)) * time.Second, Demand: w.schema.MustTuple(int64(r.Intn(2000)), int64(r.Intn(3))*twinGiB/2, 0, 0, 0, 0)})}
}

// pick takes a random task out of the running ones, for the caller to end.
func (w *twins) pick() string {
	i := w.r.Intn(len(w.running))
	id := w.running[i]
	w.running = append(w.running[:i], w.running[i+1:]...)
	return id
}

// finish finishes task id on both, with observation obs (nil: none).
func (w *twins) finish(id string, obs *predict.Observation) string {
	return w.both(func(s *finegrain.Scheduler) error { return s.Finished(id, w.now, obs) })
}

// fail fails task id on both.
func (w *twins) fail(id string) string {
	return w.both(func(s *finegrain.Scheduler) error { return s.Failed(id, w.now) })
}

// cancel cancels a random task of the first step+1 on both, whatever its state.
func (w *twins) cancel(step int) {
	id := fmt.Sprintf("t%d", w.r.Intn(step+1))
	_ = w.both(func(s *finegrain.Scheduler) error { return s.Cancel(id, w.now) })
	for i, x := range w.running {
		if x == id {
			w.running = append(w.running[:i], w.running[i+1:]...)
			break
		}
	}
}

// replay runs steps random events on both schedulers — tasks submitted (a third with a
// similarity key, a third with a declared profile), heartbeats compared (names say
// which is which), tasks finished (half with an observation) or failed, tasks
// cancelled — and says where they first disagree ("" when they never do).
func (w *twins) replay(steps int, names [2]string) string {
	for step := 0; step < steps; step++ {
		w.tick()
		switch op := w.r.Intn(10); {
		case op < 4:
			task := w.task(step)
			switch w.r.Intn(3) {
			case 0:
				task.Key = predict.Key{Logic: fmt.Sprintf("app%d", w.r.Intn(2)), InputSize: 1}
			case 1:
				task.Profile = stage.MustProfile(w.schema,
					stage.Stage{Duration: time.Duration(1+w.r.Intn(9)) * time.Second, Demand: w.schema.MustTuple(int64(w.r.Intn(2000)), int64(1+w.r.Intn(4))*twinGiB/2, 0, 0, 0, 0)},
					stage.Stage{Duration: time.Duration(1+w.r.Intn(9)) * time.Second, Demand: w.schema.MustTuple(int64(w.r.Intn(2000)), int64(1+w.r.Intn(4))*twinGiB/2, 0, 0, 0, 0)})
			}
			if msg := w.submit(task); msg != "" {
				return msg
			}
		case op < 7:
			if msg := w.heartbeat(step, names); msg != "" {
				return msg
			}
		case op < 9 && len(w.running) > 0:
			id := w.pick()
			var obs *predict.Observation
			if w.r.Intn(2) == 0 {
				o := w.observation()
				obs = &o
			}
			if w.r.Intn(4) == 0 {
				if msg := w.fail(id); msg != "" {
					return msg
				}
				continue
			}
			if msg := w.finish(id, obs); msg != "" {
				return msg
			}
		default:
			w.cancel(step)
		}
	}
	return ""
}

// sameStop reports whether two heartbeats stopped for the same reason: a heartbeat
// that finds at once that no pending task can start (NoClassFits) stops where one that
// walks the jobs passes them all over (AllSkipped).
func sameStop(a, b finegrain.Reason) bool {
	quick := func(r finegrain.Reason) bool { return r == finegrain.NoClassFits || r == finegrain.AllSkipped }
	return a == b || (quick(a) && quick(b))
}
