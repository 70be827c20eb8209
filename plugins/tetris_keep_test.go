package plugins

import (
	"bytes"
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
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// tetrisWorld is a pull scheduler wired as the reference scheduler wires it with
// PullTetris (prediction from a learning estimator, the gates and filters, gangs and
// queue admission), for comparing the heartbeats of two copies fed the same events.
type tetrisWorld struct {
	state  *cluster.State
	fw     *framework.Framework
	est    *predict.SimilarTask
	tetris *Tetris
}

// tetrisSetup is what both copies of a world share: the cluster, the ordering, the
// knobs and how the JobFilter plugins are set.
type tetrisSetup struct {
	schema  *resource.Schema
	nodes   []cluster.NodeSpec
	policy  fairness.Policy
	cfg     TetrisConfig
	filters int  // 0: DemandClasses; 1: none; 2: DemandClasses and another (the order is walked each time)
	keys    int  // the estimator's key cap
	meddle  bool // a Reserve plugin changes other jobs and the queues during a heartbeat (meddler)
}

func newTetrisWorld(t *testing.T, s tetrisSetup) *tetrisWorld {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	est, err := predict.NewSimilarTask(s.schema, predict.WithMaxKeys(s.keys), predict.WithMinObservations(1))
	must(err)
	w := newWiring(t, s.schema, s.nodes, est, match.Alignment{}, cluster.WithOrdering(s.policy))
	tetris, err := NewTetris(s.cfg, w.pred)
	must(err)
	list := w.plugins
	if s.meddle {
		list = append(list, &meddler{request: s.schema.MustTuple(500, 1<<30, 0)})
	}
	switch s.filters {
	case 0:
		list = append(list, w.classes)
	case 2:
		list = append(list, w.classes, passAll{})
	}
	fw, err := framework.New(w.state, append(list, tetris), framework.WithSkipDetails(framework.MaxSkips))
	must(err)
	return &tetrisWorld{state: w.state, fw: fw, est: est, tetris: tetris}
}

// passAll is a JobFilter plugin the pass does not know: it lets every job through.
type passAll struct{}

func (passAll) Name() string { return "PassAll" }

func (passAll) FilterPass(*framework.Cycle, *cluster.NodeInfo) framework.Status {
	return framework.Status{}
}

func (passAll) FilterJob(*framework.Cycle, *cluster.JobInfo, *cluster.NodeInfo) framework.Status {
	return framework.Status{}
}

func (passAll) Refused(*framework.Cycle, *framework.Attempt, framework.Status) {}

// meddler is a Reserve plugin that changes the fairness tree beyond the job whose task
// it sees reserved, as no built-in plugin does: every third reservation submits a task
// to the first job, every seventh adds a queue. The pass must then walk afresh.
type meddler struct {
	request resource.Tuple
	n       int
}

func (*meddler) Name() string { return "Meddler" }

func (m *meddler) Reserve(c *framework.Cycle, a *framework.Attempt) framework.Status {
	m.n++
	st := c.State()
	if m.n%3 == 0 {
		_ = st.Submit(cluster.TaskSpec{ID: fmt.Sprintf("m%d", m.n), Job: "j1", Request: m.request, Duration: time.Second})
	}
	if m.n%7 == 0 {
		_ = st.AddQueue("", fmt.Sprintf("mq%d", m.n))
	}
	return framework.Status{}
}

func (*meddler) Unreserve(*framework.Cycle, *framework.Attempt) {}

// renderTetris renders all a heartbeat decided: the tasks started (where, when, at
// which locality, on what plan), why it stopped, and every skip in order.
func renderTetris(d framework.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stop=%v skipped=%d refusals=%v", d.Stop, d.Skipped, d.Refusals.Counts)
	for _, a := range d.Assignments {
		fmt.Fprintf(&b, "\n  %s@%s/%v/%v predicted=%v %v", a.Task, a.Node, a.Start, a.Locality, a.Predicted, a.Result)
	}
	for _, s := range d.Skips {
		fmt.Fprintf(&b, "\n  skip %v", s)
	}
	return b.String()
}

// TestTetrisKeptOrderChangesNothing: the pass that keeps the jobs in the fairness
// order from choice to choice (the default) decides as the one that walks the order
// for every choice and scores plainly (walkEach, the pass as it was). Two copies of a
// world are fed the same random events — jobs in random nested queues (some with a
// max share), gangs among them, with tasks of a few demands, predicted (keys the
// estimator learns, under a small key cap), declared or by request; heartbeats of
// random nodes; tasks finishing (with observations), failing or cancelled; time
// moving — under random knobs, orderings and JobFilter plugins, and at times with a
// plugin that changes other jobs and the queues in mid-heartbeat. Every heartbeat must
// decide the same, to the skips and their order, and leave the estimators alike (the
// same keys used in the same order). The kept list must also serve more choices than
// walks do (a heartbeat's first choice walks), so that the property compares
// something.
func TestTetrisKeptOrderChangesNothing(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	kept, walked := 0, 0
	props.Property("kept order = walk every choice", prop.ForAll(func(seed int64) string {
		msg, k, w := tetrisTwins(t, seed, 150)
		kept, walked = kept+k, walked+w
		return msg
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	if kept < walked {
		t.Errorf("the kept order served %d choices, walks %d: the property compares little", kept, walked)
	}
}

// tetrisTwins runs one case of TestTetrisKeptOrderChangesNothing; "" when the two
// copies agree. It also counts the choices the kept copy made from its kept list and
// by walking.
func tetrisTwins(t *testing.T, seed int64, steps int) (msg string, kept, walked int) {
	r := rand.New(rand.NewSource(seed))
	schema := resource.MustSchema(resource.CPU, resource.Memory, resource.DiskIO)
	setup := tetrisSetup{schema: schema, policy: []fairness.Policy{fairness.DRF{}, fairness.FIFO{}, fairness.Fair{}, fairness.Capacity{}}[r.Intn(4)],
		cfg:     TetrisConfig{Fairness: []float64{0, 0.25, 0.5, 0.9}[r.Intn(4)], SRPTWeight: float64(r.Intn(3)), RemotePenalty: 0.1 * float64(r.Intn(3))},
		filters: []int{0, 0, 0, 1, 2}[r.Intn(5)], keys: 2 + r.Intn(6), meddle: r.Intn(4) == 0}
	for i := range 2 + r.Intn(5) {
		setup.nodes = append(setup.nodes, cluster.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", i%2),
			Capacity: schema.MustTuple(int64(4000+2000*r.Intn(4)), int64(4+4*r.Intn(4))<<30, 100)})
	}
	worlds := [2]*tetrisWorld{newTetrisWorld(t, setup), newTetrisWorld(t, setup)}
	worlds[1].tetris.walkEach = true
	each := func(f func(w *tetrisWorld) error) string {
		e0, e1 := fmt.Sprint(f(worlds[0])), fmt.Sprint(f(worlds[1]))
		if e0 != e1 {
			return fmt.Sprintf("kept: %s, walked: %s", e0, e1)
		}
		return ""
	}
	queues := []string{""}
	for i := range r.Intn(5) {
		id, parent := fmt.Sprintf("q%d", i), queues[r.Intn(len(queues))]
		var opts []fairness.Option
		if r.Intn(3) == 0 {
			opts = append(opts, fairness.MaxShare([]float64{0.2, 0.5, 0.8}[r.Intn(3)]))
		}
		if r.Intn(3) == 0 {
			opts = append(opts, fairness.Weight(float64(1+r.Intn(3))))
		}
		if msg := each(func(w *tetrisWorld) error { return w.state.AddQueue(parent, id, opts...) }); msg != "" {
			return msg, 0, 0
		}
		queues = append(queues, id)
	}
	demand := func() resource.Tuple {
		return schema.MustTuple(int64(250+250*r.Intn(8)), int64(1+r.Intn(6))<<29, int64(r.Intn(20)))
	}
	shapes := []resource.Tuple{demand(), demand(), demand()} // tasks share demands: classes of several jobs
	var now time.Duration
	var running []string
	jobs, tasks := 0, 0
	for step := range steps {
		switch k := r.Intn(12); {
		case k < 3 || jobs == 0: // a job and its tasks
			jobs++
			job := cluster.JobSpec{ID: fmt.Sprintf("j%d", jobs), Queue: queues[r.Intn(len(queues))], Submitted: now, Priority: r.Intn(2)}
			n := 1 + r.Intn(12)
			if r.Intn(6) == 0 {
				job.MinMember = min(n, 2+r.Intn(2))
			}
			var specs []cluster.TaskSpec
			for range n {
				tasks++
				ts := cluster.TaskSpec{ID: fmt.Sprintf("t%d", tasks), Job: job.ID, Submitted: now, Request: shapes[r.Intn(len(shapes))]}
				switch r.Intn(4) {
				case 0:
					ts.Key = predict.Key{Logic: fmt.Sprintf("app%d", r.Intn(8)), InputSize: 1}
				case 1:
					ts.Profile = stage.MustProfile(schema,
						stage.Stage{Duration: time.Duration(1+r.Intn(9)) * time.Second, Demand: demand()},
						stage.Stage{Duration: time.Duration(1+r.Intn(9)) * time.Second, Demand: demand()})
				case 2:
					ts.Duration = time.Duration(1+r.Intn(20)) * time.Second
				}
				if r.Intn(2) == 0 {
					ts.Inputs = []string{setup.nodes[r.Intn(len(setup.nodes))].ID}
				}
				specs = append(specs, ts)
			}
			if msg := each(func(w *tetrisWorld) error {
				if err := w.state.AddJob(job); err != nil {
					return err
				}
				return w.state.Submit(specs...)
			}); msg != "" {
				return msg, 0, 0
			}
		case k < 8: // a heartbeat
			now += time.Duration(r.Intn(2000)) * time.Millisecond
			node := setup.nodes[r.Intn(len(setup.nodes))].ID
			var got [2]string
			var cks [2]bytes.Buffer
			for i, w := range worlds {
				n, _ := w.state.Node(node)
				w.state.Advance(now)
				walks, updates := w.tetris.walks, w.tetris.updates
				d, err := w.fw.Heartbeat(n, now)
				got[i] = fmt.Sprint(renderTetris(d), err)
				if i == 0 {
					walked += w.tetris.walks - walks
					kept += w.tetris.updates - updates
					for _, a := range d.Assignments {
						running = append(running, a.Task)
					}
				}
				if err := w.est.Checkpoint(&cks[i]); err != nil {
					return err.Error(), 0, 0
				}
			}
			if got[0] != got[1] {
				return fmt.Sprintf("step %d, heartbeat of %s at %v:\n kept:   %s\n walked: %s", step, node, now, got[0], got[1]), 0, 0
			}
			if !bytes.Equal(cks[0].Bytes(), cks[1].Bytes()) {
				return fmt.Sprintf("step %d, heartbeat of %s at %v: the estimators differ", step, node, now), 0, 0
			}
		default: // a running task finishes (with an observation), fails or is cancelled
			if len(running) == 0 {
				continue
			}
			i := r.Intn(len(running))
			id := running[i]
			running = slices.Delete(running, i, i+1)
			way := r.Intn(6)
			obs := predict.Observation{Profile: stage.MustProfile(schema, stage.Stage{Duration: time.Duration(1+r.Intn(10)) * time.Second, Demand: demand()})}
			if msg := each(func(w *tetrisWorld) error {
				t, ok := w.state.Task(id)
				if !ok || t.State() != cluster.Running {
					return nil
				}
				switch way {
				case 0:
					return w.state.Fail(t)
				case 1:
					return w.state.Cancel(t, max(now, t.Start()))
				}
				if key := t.Key(); key.Logic != "" {
					if err := w.est.Observe(key, obs); err != nil {
						return err
					}
				}
				return w.state.Finish(t, max(now, t.Start()))
			}); msg != "" {
				return msg, 0, 0
			}
		}
	}
	return "", kept, walked
}
