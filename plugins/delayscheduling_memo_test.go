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
	twin
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
	return &memoWorld{twin: twin{state: w.state, fw: fw}, delay: ds}
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
		nodes := twinNodes(r, schema, 4+r.Intn(9), 3)
		memo, plain := newMemoWorld(t, schema, nodes), newMemoWorld(t, schema, nodes)
		plain.delay.noMemo = true
		if msg := twinEvents(r, memo.twin, plain.twin, nodes, twinScript{
			steps: 120, jobOdds: 2, render: renderDecision, names: [2]string{"memo", "plain"},
			newJob: func(r *rand.Rand, n int, now time.Duration, tasks *int) (cluster.JobSpec, []cluster.TaskSpec) {
				job := cluster.JobSpec{ID: fmt.Sprintf("j%d", n), Submitted: now}
				count := 1 + r.Intn(6)
				if r.Intn(4) == 0 { // a gang
					job.MinMember = min(count, 2+r.Intn(2))
				}
				specs := twinTasks(r, job, count, tasks, nodes, func() resource.Tuple {
					return schema.MustTuple(int64(250+250*r.Intn(8)), int64(1+r.Intn(4))<<30)
				})
				return job, specs
			},
		}); msg != "" {
			return msg
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
