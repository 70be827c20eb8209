package finegrain_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// tetrisConfig is the paper's knobs with fairness f and SRPT weight m, no remote
// penalty.
func tetrisConfig(f, m float64) finegrain.TetrisConfig {
	return finegrain.TetrisConfig{Fairness: f, SRPTWeight: m}
}

// tetrisNode builds a request-based scheduler with one node "n" of capacity, a filler
// task already running there, and jobs submitted in order, each with its tasks'
// request and count.
func tetrisNode(t *testing.T, capacity, filler resource.Tuple, jobs []tetrisJob, opts ...finegrain.Option) *finegrain.Scheduler {
	t.Helper()
	s, err := finegrain.New(schema, append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithUnresolvableAccepted(true)}, opts...)...)
	require.NoError(t, err)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: capacity}))
	if !filler.IsZero() {
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "filler"}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "filler-0", Job: "filler", Request: filler}))
		_, err := s.Place("filler-0", 0)
		require.NoError(t, err)
	}
	for i, j := range jobs {
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: j.id, Submitted: time.Duration(i+1) * time.Millisecond}))
		for k := 0; k < j.n; k++ {
			require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("%s-%d", j.id, k), Job: j.id, Request: j.request}))
		}
	}
	return s
}

type tetrisJob struct {
	id      string
	request resource.Tuple
	n       int
}

// started lists the tasks a heartbeat of node "n" starts, in order.
func started(t *testing.T, s *finegrain.Scheduler) []string {
	t.Helper()
	d, err := s.Heartbeat("n", time.Second)
	require.NoError(t, err)
	var out []string
	for _, a := range d.Assignments {
		out = append(out, a.Task)
	}
	return out
}

// Tetris' task choice on one node with room for one of the candidates.
//
//   - Alignment: the node's free resources are memory-heavy (2 cores, 6 GiB free of 8
//     and 8); the cpu-heavy task is first in the fairness order, the memory-heavy one
//     aligns with the free shape (0.24 against 0.08) and starts; delay scheduling
//     starts the cpu-heavy one, which leaves no cpu for the other.
//   - SRPT: two tasks of almost the same shape, one node with room for one; the long
//     job (5 tasks) is first in the order and its task aligns slightly better, so it
//     wins on alignment alone (m = 0), and the short job's (1 task) wins with the
//     paper's ε (m = 1).
//   - Fairness knob: with f = 0.6 only ⌈0.4·2⌉ = 1 job, the first in the order,
//     competes: the cpu-heavy task starts although the other aligns better.
func TestTetrisChoice(t *testing.T) {
	cpuHeavy := tetrisJob{"a-cpu", schema.MustTuple(2000, 1*gib), 1}
	memHeavy := tetrisJob{"b-mem", schema.MustTuple(500, 5*gib), 1}
	long := tetrisJob{"a-long", schema.MustTuple(3000, 3*gib), 5}
	short := tetrisJob{"b-short", schema.MustTuple(2900, 3*gib), 1}
	for _, tc := range []struct {
		name     string
		capacity resource.Tuple
		filler   resource.Tuple
		jobs     []tetrisJob
		opts     []finegrain.Option
		want     []string
	}{
		{"alignment: tetris takes the shape that fits the free shape", schema.MustTuple(8000, 8*gib), schema.MustTuple(6000, 2*gib),
			[]tetrisJob{cpuHeavy, memHeavy}, []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(0, 0)))}, []string{"b-mem-0"}},
		{"alignment: with the SRPT term too", schema.MustTuple(8000, 8*gib), schema.MustTuple(6000, 2*gib),
			[]tetrisJob{cpuHeavy, memHeavy}, []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig()))}, []string{"b-mem-0"}},
		{"alignment: delay scheduling takes the fairness order", schema.MustTuple(8000, 8*gib), schema.MustTuple(6000, 2*gib),
			[]tetrisJob{cpuHeavy, memHeavy}, nil, []string{"a-cpu-0"}},
		{"SRPT off: the better-aligned long job", schema.MustTuple(4000, 4*gib), resource.Tuple{},
			[]tetrisJob{long, short}, []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(0, 0)))}, []string{"a-long-0"}},
		{"SRPT on: the near-tie goes to the short job", schema.MustTuple(4000, 4*gib), resource.Tuple{},
			[]tetrisJob{long, short}, []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(0, 1)))}, []string{"b-short-0"}},
		{"knob f = 0.6: only the most deprived job competes", schema.MustTuple(8000, 8*gib), schema.MustTuple(6000, 2*gib),
			[]tetrisJob{cpuHeavy, memHeavy}, []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(0.6, 0)))}, []string{"a-cpu-0"}},
		{"knob f = 0.4: both compete", schema.MustTuple(8000, 8*gib), schema.MustTuple(6000, 2*gib),
			[]tetrisJob{cpuHeavy, memHeavy}, []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(0.4, 0)))}, []string{"b-mem-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tetrisNode(t, tc.capacity, tc.filler, tc.jobs, tc.opts...)
			assert.Equal(t, tc.want, started(t, s))
		})
	}
}

// The pass fills the node while it has room, and a job whose task is refused does not
// end the heartbeat: the other jobs still get the node.
func TestTetrisFillsNode(t *testing.T) {
	s := tetrisNode(t, schema.MustTuple(8000, 8*gib), resource.Tuple{}, []tetrisJob{
		{"a", schema.MustTuple(1000, 1*gib), 3},
		{"b", schema.MustTuple(2000, 1*gib), 2},
		{"c", schema.MustTuple(9000, 1*gib), 1}, // fits no node: looked past
	}, finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())))
	got := started(t, s)
	slices.Sort(got)
	assert.Equal(t, []string{"a-0", "a-1", "a-2", "b-0", "b-1"}, got)
	free, err := s.NodeFree("n", time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(1000, 3*gib), free)
}

// The plugin list: Tetris replaces DelayScheduling (and the pre-release list), and the
// later of PullTetris and PullPreReleaseList wins.
func TestWithTetrisReplacesPass(t *testing.T) {
	s, err := finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())))
	require.NoError(t, err)
	assert.Contains(t, s.Plugins()["Pass"], "Tetris")
	assert.NotContains(t, s.Plugins()["Pass"], "DelayScheduling")
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	s, err = finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())), finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer)))
	require.NoError(t, err)
	assert.NotContains(t, s.Plugins()["Pass"], "Tetris", "the pre-release list came later")
	s, err = finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer)), finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())))
	require.NoError(t, err)
	assert.Contains(t, s.Plugins()["Pass"], "Tetris", "Tetris came later")
	assert.NotContains(t, s.Plugins()["Pass"], "PreReleaseList")
}

// Knobs out of range are refused with ErrInvalid, and New builds nothing.
func TestWithTetrisRefusesBadKnobs(t *testing.T) {
	def := plugins.DefaultTetrisConfig()
	for name, mod := range map[string]func(*finegrain.TetrisConfig){
		"fairness negative":  func(c *finegrain.TetrisConfig) { c.Fairness = -0.1 },
		"fairness 1":         func(c *finegrain.TetrisConfig) { c.Fairness = 1 },
		"fairness NaN":       func(c *finegrain.TetrisConfig) { c.Fairness = math.NaN() },
		"SRPT negative":      func(c *finegrain.TetrisConfig) { c.SRPTWeight = -1 },
		"SRPT infinite":      func(c *finegrain.TetrisConfig) { c.SRPTWeight = math.Inf(1) },
		"SRPT NaN":           func(c *finegrain.TetrisConfig) { c.SRPTWeight = math.NaN() },
		"remote penalty 1":   func(c *finegrain.TetrisConfig) { c.RemotePenalty = 1 },
		"remote penalty < 0": func(c *finegrain.TetrisConfig) { c.RemotePenalty = -0.5 },
		"remote penalty NaN": func(c *finegrain.TetrisConfig) { c.RemotePenalty = math.NaN() },
		"everything negative": func(c *finegrain.TetrisConfig) {
			*c = finegrain.TetrisConfig{Fairness: -1, SRPTWeight: -1, RemotePenalty: -1}
		},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := def
			mod(&cfg)
			s, err := finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullTetris(cfg)))
			require.Error(t, err)
			assert.Nil(t, s)
			assert.True(t, errors.Is(err, finegrain.ErrInvalid), "%v", err)
			_, err = plugins.NewTetris(cfg, nil)
			assert.True(t, errors.Is(err, finegrain.ErrInvalid), "%v", err)
		})
	}
	for _, f := range []float64{0, 0.25, 0.999} {
		_, err := finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(f, 0))))
		assert.NoError(t, err, "f = %v", f)
	}
}

// How many jobs compete: ⌈(1−f)·J⌉, at least one.
func TestCompeting(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		j    int
		want int
	}{{0, 0, 0}, {0, 7, 7}, {0.25, 4, 3}, {0.25, 1, 1}, {0.25, 10, 8}, {0.5, 3, 2}, {0.99, 100, 1}, {0.999, 3, 1}} {
		assert.Equal(t, tc.want, plugins.Competing(tc.f, tc.j), "f %v J %d", tc.f, tc.j)
	}
}

// TestTetrisProperty: on a random node holding a random filler, with random jobs (all
// tasks of a job alike) in FIFO order and a random knob f, one heartbeat under Tetris
//   - starts only tasks that fit: the node's free amount stays ≥ 0 everywhere;
//   - honours the knob: each start's job is among the first ⌈(1−f)·J⌉ of the J jobs,
//     in FIFO order, with a pending task that fits what is free before it;
//   - is work-conserving: it ends only when no pending task fits.
func TestTetrisProperty(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	// The seed is fresh on every run; gopter prints it when the property fails.
	props := gopter.NewProperties(params)
	props.Property("Tetris starts fitting tasks of the competing jobs until none fits", prop.ForAll(tetrisCase,
		gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// tetrisCase runs one case of TestTetrisProperty; "" when it holds.
func tetrisCase(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	f := []float64{0, 0.25, 0.5, 0.75, 0.9}[r.Intn(5)]
	capacity := schema.MustTuple(int64(2000+r.Intn(14000)), int64(2+r.Intn(30))*gib)
	cfg := finegrain.TetrisConfig{Fairness: f, SRPTWeight: float64(r.Intn(3)), RemotePenalty: 0.1}
	s, err := finegrain.New(schema, finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.FIFO{}), finegrain.WithPullStrategy(finegrain.PullTetris(cfg)))
	if err != nil {
		return err.Error()
	}
	if err := s.AddNode(finegrain.Node{ID: "n", Capacity: capacity}); err != nil {
		return err.Error()
	}
	free := capacity
	// A filler of zero demand is refused (ErrNoDemand): it leaves the node empty.
	if filler := schema.MustTuple(capacity[0]*int64(r.Intn(80))/100, capacity[1]*int64(r.Intn(80))/100); r.Intn(2) == 0 && !filler.IsZero() {
		if err := s.SubmitJob(finegrain.Job{ID: "filler"}); err != nil {
			return "filler job: " + err.Error()
		}
		if err := s.Submit(finegrain.Task{ID: "filler", Job: "filler", Request: filler}); err != nil {
			return "filler: " + err.Error()
		}
		if _, err := s.Place("filler", 0); err != nil {
			return "filler: " + err.Error()
		}
		free = free.Sub(filler)
	}
	type job struct {
		id      string
		request resource.Tuple
		pending int
	}
	jobs := make([]*job, 1+r.Intn(8))
	index := map[string]*job{}
	for i := range jobs {
		j := &job{id: fmt.Sprintf("j%d", i), pending: 1 + r.Intn(4),
			request: schema.MustTuple(int64(200+r.Intn(6000)), int64(1+r.Intn(8))*gib/2)}
		jobs[i], index[j.id] = j, j
		_ = s.SubmitJob(finegrain.Job{ID: j.id, Submitted: time.Duration(i+1) * time.Millisecond})
		for k := 0; k < j.pending; k++ {
			_ = s.Submit(finegrain.Task{ID: fmt.Sprintf("%s-%d", j.id, k), Job: j.id, Request: j.request})
		}
	}
	d, err := s.Heartbeat("n", time.Second)
	if err != nil {
		return err.Error()
	}
	// eligible is the jobs, in FIFO order, with a pending task that fits free.
	eligible := func() []string {
		var out []string
		for _, j := range jobs {
			if j.pending > 0 && free.Covers(j.request) {
				out = append(out, j.id)
			}
		}
		return out
	}
	for _, a := range d.Assignments {
		e := eligible()
		k := competing(f, len(e))
		if !slices.Contains(e[:k], a.Job) {
			return fmt.Sprintf("f %v: %s started, competing %v of eligible %v", f, a.Task, e[:k], e)
		}
		j := index[a.Job]
		j.pending--
		free = free.Sub(j.request)
		if !free.Covers(resource.Tuple{}) {
			return fmt.Sprintf("%s over-commits the node: free %v", a.Task, free)
		}
	}
	got, err := s.NodeFree("n", time.Second)
	if err != nil || got != free {
		return fmt.Sprintf("node free %v, want %v (%v)", got, free, err)
	}
	if e := eligible(); len(e) > 0 && d.Stop == finegrain.NoReason {
		return fmt.Sprintf("heartbeat ended with %v eligible, stop %v", e, d.Stop)
	}
	return ""
}

// competing is ⌈(1−f)·j⌉ for f in hundredths, at least 1: the property's own count,
// independent of plugins.Competing.
func competing(f float64, j int) int {
	p := 100 - int(f*100+0.5)
	return max((p*j+99)/100, 1)
}

// BenchmarkTetrisHeartbeat is BenchmarkHeartbeat's load (1,000 jobs, 100,000 pending
// tasks with learned profiles) under the Tetris pass: each heartbeat scores the
// competing jobs' tasks once per start.
func BenchmarkTetrisHeartbeat(b *testing.B) {
	s, _ := benchCluster(b, 100, 1000, 100, 4, finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())))
	benchHeartbeats(b, s, 100)
}

// Tetris on a node whose free resources are memory-heavy: the memory-heavy task
// aligns with them and starts, although the cpu-heavy job is first in the fairness
// order (delay scheduling would start the cpu-heavy one, leaving no cpu for the
// other).
func ExamplePullTetris() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	sched, _ := finegrain.New(s, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())))
	_ = sched.AddNode(finegrain.Node{ID: "n", Capacity: s.MustTuple(8000, 8<<30)})
	_ = sched.SubmitJob(finegrain.Job{ID: "busy"})
	_ = sched.Submit(finegrain.Task{ID: "busy-0", Job: "busy", Request: s.MustTuple(6000, 2<<30)})
	_, _ = sched.Place("busy-0", 0) // free now: 2 cores, 6 GiB
	_ = sched.SubmitJob(finegrain.Job{ID: "cpu", Submitted: 1})
	_ = sched.SubmitJob(finegrain.Job{ID: "mem", Submitted: 2})
	_ = sched.Submit(
		finegrain.Task{ID: "cpu-0", Job: "cpu", Request: s.MustTuple(2000, 1<<30)},
		finegrain.Task{ID: "mem-0", Job: "mem", Request: s.MustTuple(500, 5<<30)},
	)
	d, _ := sched.Heartbeat("n", time.Second)
	for _, a := range d.Assignments {
		fmt.Println(a.Task, "→", a.Node)
	}
	// Output:
	// mem-0 → n
}

// A declared profile's remaining work is its stages' demand over time, task by task:
// a job of one declared 10-minute task is not mistaken for a short one (review
// finding: it counted its first stage's memory for one second). The node has room for
// one of two tasks of the same shape; the undeclared one declares 10 s, and with the
// SRPT term it starts although the long declared job is first in the order.
func TestTetrisDeclaredRemainingWork(t *testing.T) {
	s, err := finegrain.New(schema, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullTetris(tetrisConfig(0, 1))))
	require.NoError(t, err)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	demand := schema.MustTuple(3000, 3*gib)
	long := stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Minute, Demand: demand})
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a-long", Submitted: time.Millisecond}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "b-short", Submitted: 2 * time.Millisecond}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "a-long-0", Job: "a-long", Request: demand, Profile: long},
		finegrain.Task{ID: "b-short-0", Job: "b-short", Request: demand, Duration: 10 * time.Second},
	))
	assert.Equal(t, []string{"b-short-0"}, started(t, s))
}
