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
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// memoWorld is a pull scheduler wired as the reference scheduler wires it (delay
// scheduling with WaitForRoom, gangs, the gates and filters), for comparing the
// heartbeats of two copies fed the same events.
type memoWorld struct {
	state *cluster.State
	fw    *framework.Framework
	delay *DelayScheduling
}

func newMemoWorld(t *testing.T, schema *resource.Schema, nodes []cluster.NodeSpec) *memoWorld {
	t.Helper()
	w := newWiring(t, schema, nodes, nil, match.LeastAllocated{})
	d, err := fairness.NewDelay(fairness.WithWaits(2*time.Second, 4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ds := NewDelayScheduling(d, WaitForRoom(true))
	fw, err := framework.New(w.state, append(w.plugins, w.classes, ds))
	if err != nil {
		t.Fatal(err)
	}
	return &memoWorld{state: w.state, fw: fw, delay: ds}
}

// decision renders what a heartbeat decided: the tasks started, where, when and at
// which locality, and why it stopped.
func renderDecision(d framework.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stop=%v", d.Stop)
	for _, a := range d.Assignments {
		fmt.Fprintf(&b, " %s@%s/%v/%v", a.Task, a.Node, a.Start, a.Locality)
	}
	return b.String()
}

// The remembered Cycle.Open answers of localRoom change no decision: two schedulers
// fed the same random events — submissions (gangs among them, whose members roll
// back when they cannot gather), heartbeats, finishes and failures — decide the same,
// one with the memo and one asking the gates afresh every time (the walk as it was
// before the memo). The memo is also asked about often enough to matter.
func TestDelayOpenMemoChangesNothing(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	hits := 0
	props.Property("memo = no memo", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		schema := resource.MustSchema(resource.CPU, resource.Memory)
		var nodes []cluster.NodeSpec
		for i := range 4 + r.Intn(9) {
			nodes = append(nodes, cluster.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", i%3),
				Capacity: schema.MustTuple(int64(2000+1000*r.Intn(4)), int64(4+4*r.Intn(3))<<30)})
		}
		memo, plain := newMemoWorld(t, schema, nodes), newMemoWorld(t, schema, nodes)
		plain.delay.noMemo = true
		worlds := []*memoWorld{memo, plain}
		each := func(f func(w *memoWorld) error) string {
			var errs []string
			for _, w := range worlds {
				e := f(w)
				errs = append(errs, fmt.Sprint(e))
			}
			if errs[0] != errs[1] {
				return fmt.Sprintf("memo: %s, plain: %s", errs[0], errs[1])
			}
			return ""
		}
		var now time.Duration
		var running []string
		jobs, tasks := 0, 0
		for step := 0; step < 120; step++ {
			switch k := r.Intn(10); {
			case k < 2 || jobs == 0: // a job and its tasks
				jobs++
				job := cluster.JobSpec{ID: fmt.Sprintf("j%d", jobs), Submitted: now}
				n := 1 + r.Intn(6)
				if r.Intn(4) == 0 {
					job.MinMember = min(n, 2+r.Intn(2))
				}
				var specs []cluster.TaskSpec
				for range n {
					tasks++
					ts := cluster.TaskSpec{ID: fmt.Sprintf("t%d", tasks), Job: job.ID, Submitted: now,
						Request: schema.MustTuple(int64(250+250*r.Intn(8)), int64(1+r.Intn(4))<<30), Duration: time.Duration(1+r.Intn(8)) * time.Second}
					for range r.Intn(3) {
						ts.Inputs = append(ts.Inputs, nodes[r.Intn(len(nodes))].ID)
					}
					specs = append(specs, ts)
				}
				if msg := each(func(w *memoWorld) error {
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
					got = append(got, fmt.Sprint(renderDecision(d), err))
					if w == memo {
						for _, a := range d.Assignments {
							running = append(running, a.Task)
						}
					}
				}
				if got[0] != got[1] {
					return fmt.Sprintf("step %d, heartbeat of %s at %v:\n memo:  %s\n plain: %s", step, node, now, got[0], got[1])
				}
			default: // a running task finishes or fails
				if len(running) == 0 {
					continue
				}
				i := r.Intn(len(running))
				id := running[i]
				running = slices.Delete(running, i, i+1)
				fail := r.Intn(4) == 0
				if msg := each(func(w *memoWorld) error {
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
		hits += memo.delay.memoHits
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	if hits == 0 {
		t.Error("the memo was never used: the property compares nothing")
	}
}

// openProbe is a Pass plugin that asks DelayScheduling's memo about node m, fills m
// with a reservation that does not join the Decision (as a gang member's waiting
// reservation does not), and asks again.
type openProbe struct {
	ds      *DelayScheduling
	m       *cluster.NodeInfo
	fill    *cluster.TaskInfo
	hold    cluster.Reservation
	answers []bool
}

func (*openProbe) Name() string { return "OpenProbe" }

func (p *openProbe) Pass(c *framework.Cycle, _ *cluster.NodeInfo) error {
	p.answers = append(p.answers, p.ds.open(c, p.m))
	p.hold.Start = c.Now()
	if err := c.State().Reserve(p.fill, p.m, p.hold); err != nil {
		return err
	}
	p.answers = append(p.answers, p.ds.open(c, p.m))
	return nil
}

// A node whose timeline changed during the heartbeat is asked about afresh: the memo
// does not answer from before the change.
func TestDelayOpenMemoSeesTimelineChanges(t *testing.T) {
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	capacity := schema.MustTuple(4000, 8<<30)
	st, err := cluster.New(schema)
	must(err)
	conf, err := predict.NewConformityLog(5)
	must(err)
	adj, err := policy.NewAdjuster(schema, conf)
	must(err)
	for _, id := range []string{"a", "m"} {
		must(st.AddNode(cluster.NodeSpec{ID: id, Rack: "r", Capacity: capacity}))
		must(adj.AddServer(id, capacity))
	}
	must(st.AddJob(cluster.JobSpec{ID: "j"}))
	must(st.Submit(cluster.TaskSpec{ID: "fill", Job: "j", Request: capacity, Duration: time.Hour}))
	hold, err := stage.Constant(schema, capacity, time.Hour)
	must(err)
	m, _ := st.Node("m")
	fill, _ := st.Task("fill")
	probe := &openProbe{ds: NewDelayScheduling(nil), m: m, fill: fill, hold: cluster.Reservation{Hold: hold}}
	pred, err := NewPrediction(schema, nil, true)
	must(err)
	idle, err := NewIdleGate(adj)
	must(err)
	fw, err := framework.New(st, []framework.Plugin{pred, idle, probe})
	must(err)
	a, _ := st.Node("a")
	_, err = fw.Heartbeat(a, time.Second)
	must(err)
	if want := []bool{true, false}; !slices.Equal(probe.answers, want) {
		t.Fatalf("open before and after filling m: %v, want %v", probe.answers, want)
	}
}
