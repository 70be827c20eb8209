package sim

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// finishOf returns the finish time of task id in r (WithTaskRecords).
func finishOf(t *testing.T, r *Result, id string) TaskResult {
	t.Helper()
	for _, x := range r.Tasks {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("task %q not in the result", id)
	return TaskResult{}
}

// One node of one core, two tasks that each want the whole core for 10 s and 20 s and
// declared half of it: a request-based scheduler starts both at 0. The cpu is
// compressed, rc = 1 − 1000/2000 = 0.5, and both progress at (1 − 0.5)/(1 + p) (eq. 5):
// A's 10 s of work end at 10 × (1 + p)/0.5; B then has 10 s of work left, alone.
func TestCompressionKnownAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		penalty float64
		mode    Mode
	}{
		{"p=0.05 pull", 0.05, Pull},
		{"p=0 pull", 0, Pull},
		{"p=0.05 push", 0.05, Push},
		{"p=0.2 push", 0.2, Push},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := oneNode(tuple(1000, 8*gib, 100<<20, 100<<20))
			w := workload.Workload{Name: "two", Jobs: []workload.Job{handJob("j", "q", 0, tuple(500, gib, 0, 0),
				oneStage(10*time.Second, tuple(1000, gib, 0, 0)), oneStage(20*time.Second, tuple(1000, gib, 0, 0)))}}
			// The fluid model's known answer: every stage uses its demand throughout.
			r, err := Run(&w, &cl, DRF(), WithPenalty(tc.penalty), WithMode(tc.mode), WithTaskRecords(), WithVariation(NoVariation))
			require.NoError(t, err)
			slow := 1 / ((1 - 0.5) / (1 + tc.penalty)) // eq. 5's stretch factor
			wantA := time.Duration(10 * slow * float64(time.Second))
			wantB := wantA + 10*time.Second
			a, b := finishOf(t, r, "j/m0"), finishOf(t, r, "j/m1")
			assert.InDelta(t, float64(wantA), float64(a.Finish), 2, "A ends at 10 s × %.3f", slow)
			assert.InDelta(t, float64(wantB), float64(b.Finish), 4)
			assert.Equal(t, a.Finish, a.Compressed, "A ran compressed all along")
			assert.Equal(t, a.Finish, b.Compressed, "B ran compressed while A ran")
			assert.Equal(t, b.Finish, r.Jobs[0].Completion())
			assert.Equal(t, b.Finish, r.Summary.Makespan)
			assert.Equal(t, time.Duration(0), r.Jobs[0].Response())
			assert.Zero(t, r.Summary.OOMKills)
			assert.InDelta(t, 1.0, r.Summary.Used[workload.SlotCPU], 1e-6, "the core is busy until the end")
		})
	}
}

// Background load compresses tasks too: half the core taken by other applications and
// a task wanting all of it. Proportional: everyone gets 1000/1500 of its demand (rc =
// 1/3 for both, the applications' CPU work 1.5 times slower); ColocatedFirst: the
// applications get their half, the task the other half (rc = 1/2), and the
// applications lose nothing.
func TestBackgroundCompression(t *testing.T) {
	for _, tc := range []struct {
		yield                  Yield
		taskRC, bgCPU          float64
		shortfall, sq, slowdwn float64
	}{
		{yield: Proportional, taskRC: 1 - 1000.0/1500, bgCPU: 1 / 1.5 * 0.5, shortfall: 1.0 / 3, sq: 1, slowdwn: 0.5},
		{yield: ColocatedFirst, taskRC: 0.5, bgCPU: 0.5},
	} {
		t.Run(tc.yield.String(), func(t *testing.T) {
			cl := oneNode(tuple(1000, 8*gib, 100<<20, 100<<20))
			w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0),
				oneStage(10*time.Second, tuple(1000, gib, 0, 0)))}}
			bg := &SeriesLoad{CPU: []workload.Series{{Name: "half", Step: time.Hour, Values: []float64{0.5}}}, Memory: []float64{0.25}}
			r, err := Run(&w, &cl, FIFO(), WithBackground(bg), WithYield(tc.yield), WithTaskRecords(), WithVariation(NoVariation))
			require.NoError(t, err)
			want := time.Duration(10 * (1 + DefaultPenalty) / (1 - tc.taskRC) * float64(time.Second))
			assert.InDelta(t, float64(want), float64(r.Tasks[0].Finish), 2)
			assert.True(t, r.Cloud)
			assert.InDelta(t, 0.25, r.Summary.Background[workload.SlotMemory], 1e-6)
			assert.InDelta(t, tc.bgCPU, r.Summary.Background[workload.SlotCPU], 1e-3)
			loss := r.Summary.Colocated
			assert.InDelta(t, tc.shortfall, loss.Shortfall[workload.SlotCPU], 1e-3)
			assert.Zero(t, loss.Shortfall[workload.SlotMemory], "their memory is never taken")
			assert.InDelta(t, tc.sq, loss.Squeezed, 1e-9)
			assert.InDelta(t, tc.slowdwn, loss.Slowdown, 1e-3)
		})
	}
}

// A node of speed 2 runs a 10 s stage in 5 s.
func TestNodeSpeed(t *testing.T) {
	cl := oneNode(tuple(1000, 8*gib, 100<<20, 100<<20))
	cl.Nodes[0].Speed = 2
	w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 3*time.Second, tuple(1000, gib, 0, 0),
		oneStage(10*time.Second, tuple(1000, gib, 0, 0)))}}
	r, err := Run(&w, &cl, FIFO(), WithTaskRecords())
	require.NoError(t, err)
	assert.Equal(t, 8*time.Second, r.Tasks[0].Finish)
	assert.Equal(t, 5*time.Second, r.Jobs[0].Completion())
}

// Two tasks that declared 1 GiB but use 3 GiB on a 4 GiB node: the request-based
// scheduler starts both, the memory overruns, the most recently started is killed and
// pending again; every heartbeat re-places it and it is killed again, until the first
// one ends at 10 s and frees the memory. Nothing is lost: both finish, once.
func TestOverrunKillsAndReruns(t *testing.T) {
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "oom", Jobs: []workload.Job{handJob("j", "q", 0, tuple(100, gib, 0, 0),
		oneStage(10*time.Second, tuple(100, 3*gib, 0, 0)), oneStage(10*time.Second, tuple(100, 3*gib, 0, 0)))}}
	r, err := Run(&w, &cl, FIFO(), WithTaskRecords(), WithVariation(NoVariation))
	require.NoError(t, err)
	a, b := finishOf(t, r, "j/m0"), finishOf(t, r, "j/m1")
	assert.Equal(t, 10*time.Second, a.Finish)
	assert.Zero(t, a.Kills)
	assert.Equal(t, 10, b.Kills, "killed at 0 s and at every heartbeat 1..9 s")
	assert.Equal(t, 10*time.Second, b.Start)
	assert.Equal(t, 20*time.Second, b.Finish)
	assert.Equal(t, 10, r.Summary.OOMKills)
	assert.Equal(t, 12, r.Summary.Placements, "2 tasks + 10 reruns")
	assert.Equal(t, 2, r.Summary.JobCompletion.N+1, "one job")
}

// A task whose input sits on another node of the rack moves it first: size / intra-rack
// bandwidth, then its work.
func TestTransferBeforeWork(t *testing.T) {
	cl := workload.Cluster{Name: "two", IntraRackBandwidth: 100 << 20, CrossRackBandwidth: 10 << 20, Nodes: []workload.NodeSpec{
		{ID: "n0", Rack: "r", Capacity: tuple(1000, gib/2, 100<<20, 100<<20), Speed: 1}, // holds the block, too small
		{ID: "n1", Rack: "r", Capacity: tuple(1000, 8*gib, 100<<20, 100<<20), Speed: 1},
	}}
	job := handJob("j", "q", 0, tuple(1000, gib, 0, 0), oneStage(10*time.Second, tuple(1000, gib, 0, 0)))
	job.Tasks[0].Blocks = []int{0}
	w := workload.Workload{Name: "remote", Jobs: []workload.Job{job}, Blocks: []int64{200 << 20}}
	// Without delay scheduling: the reference scheduler's delay state resets the job's
	// wait whenever the node holding the block offers, even though the task does not fit
	// there, so the job would wait for that node for ever (reported to the lead).
	p := FIFO()
	p.Options = append(p.Options, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	r, err := Run(&w, &cl, p, WithReplication(1), WithTaskRecords())
	require.NoError(t, err)
	x := r.Tasks[0]
	assert.Equal(t, fairness.RackLocal, x.Locality)
	assert.False(t, x.NoInput)
	assert.Equal(t, 12*time.Second, x.Finish-x.Start, "2 s to move 200 MiB at 100 MiB/s, then 10 s")
	assert.Equal(t, [3]int{0, 1, 0}, r.Summary.Locality)
	assert.Zero(t, r.Summary.NoInput)
}

// A failing node's running task is lost and runs again elsewhere.
func TestNodeFailureReruns(t *testing.T) {
	cl := workload.Cluster{Name: "two", IntraRackBandwidth: 100 << 20, CrossRackBandwidth: 10 << 20, Nodes: []workload.NodeSpec{
		{ID: "n0", Rack: "r", Capacity: tuple(1000, 8*gib, 100<<20, 100<<20), Speed: 1},
		{ID: "n1", Rack: "r", Capacity: tuple(1000, 8*gib, 100<<20, 100<<20), Speed: 1},
	}}
	w := workload.Workload{Name: "fail", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0),
		oneStage(10*time.Second, tuple(1000, gib, 0, 0)))}}
	for _, mode := range []Mode{Pull, Push} {
		r, err := Run(&w, &cl, FIFO(), WithMode(mode), WithTaskRecords(),
			WithFailures(NodeFailure{Node: "n0", At: 4 * time.Second, Down: time.Minute}))
		require.NoError(t, err, mode)
		assert.Equal(t, 1, r.Summary.NodeKills, mode)
		assert.Equal(t, 2, r.Summary.Placements, mode)
		x := r.Tasks[0]
		assert.GreaterOrEqual(t, x.Start, 4*time.Second, mode)
		assert.Equal(t, 10*time.Second, x.Finish-x.Start, mode)
		assert.Equal(t, "n1", x.Node, mode)
	}
}

// FGM learns from finished tasks and gets usage reports; baselines get neither.
func TestFeedbackOnlyForFGM(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.1)
	fgm, err := Run(&w, &cl, FGM())
	require.NoError(t, err)
	drf, err := Run(&w, &cl, DRF())
	require.NoError(t, err)
	assert.Positive(t, fgm.Summary.PlacedPredicted)
	assert.Positive(t, fgm.Summary.Reports)
	assert.Zero(t, fgm.Summary.ObsRejected)
	assert.Zero(t, drf.Summary.PlacedPredicted)
	assert.Zero(t, drf.Summary.Reports)
	for _, r := range []*Result{fgm, drf} {
		assert.Equal(t, r.Summary.Jobs, r.Summary.JobsFinished)
		assert.Positive(t, r.Summary.Makespan)
	}
}

// The same inputs give byte-identical results, in both modes, with a background and a
// node failure in play.
func TestDeterminism(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		mode Mode
	}{{FGM(), Pull}, {DRF(), Pull}, {FGM(), Push}, {Capacity(), Push}} {
		run := func() []byte {
			w, cl := smallFGM(t, 3, 0.1, workload.WithOnline(time.Second))
			bg, err := RandomLoad(rand.New(rand.NewPCG(5, 6)), len(cl.Nodes))
			require.NoError(t, err)
			r, err := Run(&w, &cl, tc.p, WithMode(tc.mode), WithBackground(bg), WithTaskRecords(),
				WithFailures(NodeFailure{Node: "node03", At: 30 * time.Second, Down: time.Minute}))
			require.NoError(t, err)
			return csvOf(t, r)
		}
		a, b := run(), run()
		assert.True(t, bytes.Equal(a, b), "%s %v: two runs differ", tc.p.Name, tc.mode)
	}
}

// Conservation on a paper-like workload in the cloud environment, where FGM's packed
// memory meets background memory it cannot see: every task finishes exactly once;
// every placement is a finish or a counted kill.
func TestConservationCloud(t *testing.T) {
	w, cl := smallFGM(t, 2, 0.25)
	bg, err := RandomLoad(rand.New(rand.NewPCG(9, 9)), len(cl.Nodes), WithMemoryLevel(0.15, 0.3))
	require.NoError(t, err)
	for _, p := range []Policy{FGM(), FIFO()} {
		r, err := Run(&w, &cl, p, WithBackground(bg), WithTaskRecords(),
			WithFailures(NodeFailure{Node: "node05", At: time.Minute, Down: time.Minute}))
		require.NoError(t, err)
		checkConservation(t, &w, r)
	}
}

func checkConservation(t *testing.T, w *workload.Workload, r *Result) {
	t.Helper()
	s := r.Summary
	require.Equal(t, w.NumTasks(), s.Tasks)
	require.Equal(t, s.Jobs, s.JobsFinished)
	assert.Equal(t, s.Tasks+s.OOMKills+s.NodeKills, s.Placements, "%s: placements = tasks + reruns", r.Policy)
	kills := 0
	for _, x := range r.Tasks {
		kills += x.Kills
		assert.LessOrEqual(t, x.Submitted, x.Start, x.ID)
		assert.Less(t, x.Start, x.Finish, x.ID)
	}
	assert.Equal(t, s.OOMKills, kills)
	assert.Equal(t, s.Tasks, s.SmallTasks.N+s.LargeTasks.N)
	assert.Equal(t, s.Placements, s.Locality[0]+s.Locality[1]+s.Locality[2]+s.NoInput)
	for _, j := range r.Jobs {
		assert.True(t, j.Finished)
		assert.LessOrEqual(t, j.Submit, j.FirstStart)
		assert.LessOrEqual(t, j.FirstStart, j.Done)
	}
}

// Real PlanetLab series as the background: skipped when the data is absent.
func TestPlanetLabBackground(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "planetlab", "20110303")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("PlanetLab data not found at %s: %v", dir, err)
	}
	series, err := workload.LoadPlanetLabDir(dir)
	require.NoError(t, err)
	w, cl := smallFGM(t, 4, 0.1)
	bg := &SeriesLoad{CPU: series, CPUScale: 3, Memory: []float64{0.1}}
	r, err := Run(&w, &cl, FGM(), WithBackground(bg))
	require.NoError(t, err)
	assert.Equal(t, r.Summary.Jobs, r.Summary.JobsFinished)
	assert.Positive(t, r.Summary.Background[workload.SlotCPU])
}

// A run past the time limit returns what it has, with ErrTimeLimit.
func TestTimeLimit(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.1)
	r, err := Run(&w, &cl, DRF(), WithTimeLimit(5*time.Second))
	require.ErrorIs(t, err, ErrTimeLimit)
	require.NotNil(t, r)
	assert.Less(t, r.Summary.JobsFinished, r.Summary.Jobs)
	for _, j := range r.Jobs {
		if !j.Finished {
			assert.Zero(t, j.Done)
		}
	}
}

func TestErrors(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.01)
	bad := w
	bad.Jobs = nil
	badCl := cl
	badCl.Nodes = nil
	nilNew := FGM()
	nilNew.New = func(*resource.Schema) (Scheduler, error) { return nil, nil }
	failNew := FGM()
	failNew.New = func(*resource.Schema) (Scheduler, error) { return nil, errors.New("boom") }
	nilQueueOption := FGM()
	nilQueueOption.Queue = func(string, int) []fairness.Option { return []fairness.Option{fairness.Weight(2), nil} }
	negativeBG := funcBG(func(_ int, _ resource.Tuple, t time.Duration) (resource.Tuple, time.Duration) {
		return resource.Tuple{workload.SlotMemory: -1}, t + time.Second
	})
	for _, tc := range []struct {
		name string
		w    *workload.Workload
		cl   *workload.Cluster
		p    Policy
		opts []Option
		want error
	}{
		{"nil workload", nil, &cl, FGM(), nil, ErrInvalidInput},
		{"nil cluster", &w, nil, FGM(), nil, ErrInvalidInput},
		{"invalid workload", &bad, &cl, FGM(), nil, workload.ErrEmpty},
		{"invalid cluster", &w, &badCl, FGM(), nil, ErrInvalidInput},
		{"unnamed policy", &w, &cl, Policy{}, nil, ErrInvalidInput},
		{"nil scheduler", &w, &cl, nilNew, nil, ErrInvalidInput},
		{"failing constructor", &w, &cl, failNew, nil, nil},
		{"bad scheduler option", &w, &cl, Policy{Name: "x", Options: []finegrain.Option{finegrain.WithCompressionLimit(2)}}, nil, finegrain.ErrInvalid},
		{"mode", &w, &cl, FGM(), []Option{WithMode(7)}, ErrInvalidOption},
		{"heartbeat", &w, &cl, FGM(), []Option{WithHeartbeat(0)}, ErrInvalidOption},
		{"report every", &w, &cl, FGM(), []Option{WithReportEvery(-1)}, ErrInvalidOption},
		{"sample every", &w, &cl, FGM(), []Option{WithSampleEvery(0)}, ErrInvalidOption},
		{"penalty NaN", &w, &cl, FGM(), []Option{WithPenalty(nan())}, ErrInvalidOption},
		{"penalty negative", &w, &cl, FGM(), []Option{WithPenalty(-0.1)}, ErrInvalidOption},
		{"replication", &w, &cl, FGM(), []Option{WithReplication(0)}, ErrInvalidOption},
		{"time limit", &w, &cl, FGM(), []Option{WithTimeLimit(0)}, ErrInvalidOption},
		{"small task", &w, &cl, FGM(), []Option{WithSmallTask(-time.Second)}, ErrInvalidOption},
		{"push retries", &w, &cl, FGM(), []Option{WithPushRetries(0)}, ErrInvalidOption},
		{"nil option", &w, &cl, FGM(), []Option{nil}, ErrInvalidOption},
		{"nil option after a valid one", &w, &cl, FGM(), []Option{WithHeartbeat(time.Second), nil}, ErrInvalidOption},
		{"replication above nodes", &w, &cl, FGM(), []Option{WithReplication(len(cl.Nodes) + 1)}, ErrInvalidOption},
		{"nil queue option", &w, &cl, nilQueueOption, nil, fairness.ErrNilOption},
		{"bad background reserved", &w, &cl, FGM(), []Option{WithBackground(negativeBG), WithReservedBackground()}, ErrInvalidInput},
		{"nil series load", &w, &cl, FGM(), []Option{WithBackground((*SeriesLoad)(nil))}, ErrInvalidOption},
		{"bad series load", &w, &cl, FGM(), []Option{WithBackground(&SeriesLoad{})}, ErrInvalidInput},
		{"failure without node", &w, &cl, FGM(), []Option{WithFailures(NodeFailure{At: time.Second})}, ErrInvalidOption},
		{"failure negative time", &w, &cl, FGM(), []Option{WithFailures(NodeFailure{Node: "node01", At: -1})}, ErrInvalidOption},
		{"failure of unknown node", &w, &cl, FGM(), []Option{WithFailures(NodeFailure{Node: "nope"})}, ErrInvalidInput},
		{"failure while down", &w, &cl, FGM(), []Option{WithFailures(NodeFailure{Node: "node01", At: 1, Down: time.Minute}, NodeFailure{Node: "node01", At: 2})}, ErrInvalidInput},
		{"failure after a permanent one", &w, &cl, FGM(), []Option{WithFailures(NodeFailure{Node: "node01", At: 1}, NodeFailure{Node: "node01", At: time.Hour})}, ErrInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.w, tc.cl, tc.p, tc.opts...)
			require.Error(t, err)
			assert.Nil(t, s)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
		})
	}
	t.Run("second run", func(t *testing.T) {
		s, err := New(&w, &cl, FIFO())
		require.NoError(t, err)
		_, err = s.Run()
		require.NoError(t, err)
		_, err = s.Run()
		assert.ErrorIs(t, err, ErrInvalidInput)
	})
	t.Run("unknown policy", func(t *testing.T) {
		_, err := PolicyByName("LIFO")
		assert.ErrorIs(t, err, ErrUnknownPolicy)
		p, err := PolicyByName("drf")
		require.NoError(t, err)
		assert.Equal(t, "DRF", p.Name)
	})
}

func TestRandomLoad(t *testing.T) {
	r := func() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }
	l, err := RandomLoad(r(), 4, WithCPULevel(0.3, 0.3), WithCPUNoise(0, 0), WithMemoryLevel(0.1, 0.1))
	require.NoError(t, err)
	require.NoError(t, l.Validate())
	c := tuple(16000, 32*gib, 0, 0)
	d, next := l.Load(2, c, 0)
	assert.Equal(t, int64(4800), d[workload.SlotCPU])
	assert.InDelta(t, float64(32*gib)/10, float64(d[workload.SlotMemory]), 1)
	assert.Equal(t, time.Duration(1<<63-1), next, "a constant series never changes")
	l2, err := RandomLoad(r(), 4)
	require.NoError(t, err)
	l3, err := RandomLoad(r(), 4)
	require.NoError(t, err)
	assert.Equal(t, l2, l3, "same source state, same load")
	_, next = l2.Load(0, c, 90*time.Second)
	assert.Equal(t, 0, int(next%DefaultLoadStep), "changes fall on step boundaries")
	assert.Greater(t, next, 90*time.Second)
	for _, tc := range []struct {
		name string
		r    *rand.Rand
		n    int
		opts []LoadOption
	}{
		{"nil rand", nil, 1, nil},
		{"no nodes", r(), 0, nil},
		{"step", r(), 1, []LoadOption{WithLoadStep(0)}},
		{"period", r(), 1, []LoadOption{WithLoadPeriod(-1)}},
		{"period below step", r(), 1, []LoadOption{WithLoadStep(time.Hour), WithLoadPeriod(time.Minute)}},
		{"cpu level order", r(), 1, []LoadOption{WithCPULevel(0.5, 0.4)}},
		{"cpu level range", r(), 1, []LoadOption{WithCPULevel(0, 1.5)}},
		{"cpu noise", r(), 1, []LoadOption{WithCPUNoise(nan(), 0.5)}},
		{"cpu persistence", r(), 1, []LoadOption{WithCPUNoise(0.1, 1)}},
		{"memory level", r(), 1, []LoadOption{WithMemoryLevel(0, 1)}},
		{"nil option", r(), 1, []LoadOption{nil}},
		{"nil option after a valid one", r(), 1, []LoadOption{WithLoadStep(time.Second), nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RandomLoad(tc.r, tc.n, tc.opts...)
			assert.ErrorIs(t, err, ErrInvalidOption)
		})
	}
}

func TestSeriesLoadValidate(t *testing.T) {
	ok := workload.Series{Name: "s", Step: time.Minute, Values: []float64{0.1, 0.2}}
	for _, tc := range []struct {
		name string
		l    SeriesLoad
	}{
		{"no series", SeriesLoad{}},
		{"no step", SeriesLoad{CPU: []workload.Series{{Name: "s", Values: []float64{0.1}}}}},
		{"no values", SeriesLoad{CPU: []workload.Series{{Name: "s", Step: time.Second}}}},
		{"value above 1", SeriesLoad{CPU: []workload.Series{{Name: "s", Step: time.Second, Values: []float64{1.5}}}}},
		{"NaN value", SeriesLoad{CPU: []workload.Series{{Name: "s", Step: time.Second, Values: []float64{nan()}}}}},
		{"negative scale", SeriesLoad{CPU: []workload.Series{ok}, CPUScale: -1}},
		{"memory 1", SeriesLoad{CPU: []workload.Series{ok}, Memory: []float64{1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.l.Validate(), ErrInvalidInput)
		})
	}
	l := SeriesLoad{CPU: []workload.Series{ok}, CPUScale: 8}
	require.NoError(t, l.Validate())
	d, next := l.Load(0, tuple(1000, gib, 0, 0), 0)
	assert.Equal(t, int64(800), d[workload.SlotCPU])
	assert.Equal(t, time.Minute, next)
	d, next = l.Load(0, tuple(1000, gib, 0, 0), time.Minute)
	assert.Equal(t, int64(1000), d[workload.SlotCPU], "capped at the whole cpu")
	assert.Equal(t, 2*time.Minute, next)

	// Near the end of time the next step boundary does not fit a time.Duration: no
	// change (Forever) rather than a wrapped time before t; and a whole cpu of an
	// int64's largest capacity is that capacity, not a wrapped negative.
	huge := SeriesLoad{CPU: []workload.Series{{Name: "s", Step: 1 << 62, Values: []float64{0.1, 1, 1}}}}
	require.NoError(t, huge.Validate())
	for _, tc := range []struct {
		name     string
		t        time.Duration
		capacity int64
		cpu      int64
		next     time.Duration
	}{
		{"last boundary", 1, 1000, 100, 1 << 62},
		{"boundary past the end", 1<<62 + 1, 1000, 1000, stage.Forever},
		{"whole of the largest capacity", 1 << 62, math.MaxInt64, math.MaxInt64, stage.Forever},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, next := huge.Load(0, tuple(tc.capacity, gib, 0, 0), tc.t)
			assert.Equal(t, tc.cpu, d[workload.SlotCPU])
			assert.Equal(t, tc.next, next)
		})
	}
}

// funcBG is a Background given by a function.
type funcBG func(i int, capacity resource.Tuple, t time.Duration) (resource.Tuple, time.Duration)

func (f funcBG) Load(i int, capacity resource.Tuple, t time.Duration) (resource.Tuple, time.Duration) {
	return f(i, capacity, t)
}

// A background that breaks its contract stops the run with an error naming the node,
// the time and the value, rather than being clamped or ignored.
func TestBadBackground(t *testing.T) {
	cl := oneNode(tuple(1000, 8*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0),
		oneStage(10*time.Second, tuple(1000, gib, 0, 0)))}}
	// Each background is good (a tenth of the cpu, changing every second) until 3 s,
	// then returns what bad gives.
	after := func(bad func(t time.Duration) (resource.Tuple, time.Duration)) Background {
		return funcBG(func(_ int, c resource.Tuple, t time.Duration) (resource.Tuple, time.Duration) {
			if t >= 3*time.Second {
				return bad(t)
			}
			return resource.Tuple{workload.SlotCPU: c[workload.SlotCPU] / 10}, t + time.Second
		})
	}
	for _, tc := range []struct {
		name string
		bg   Background
		want []string
	}{
		{"negative demand", after(func(t time.Duration) (resource.Tuple, time.Duration) {
			return resource.Tuple{workload.SlotCPU: -5}, t + time.Second
		}), []string{`node "n0" at 3s`, "demand[0] (cpu)", "= -5"}},
		{"demand outside the schema", after(func(t time.Duration) (resource.Tuple, time.Duration) {
			return resource.Tuple{7: 1 << 40}, t + time.Second
		}), []string{`node "n0" at 3s`, "demand[7]", "= 1099511627776"}},
		{"next change at t", after(func(t time.Duration) (resource.Tuple, time.Duration) {
			return resource.Tuple{}, t
		}), []string{`node "n0" at 3s`, "next change", "= 3s"}},
		{"next change before t", after(func(t time.Duration) (resource.Tuple, time.Duration) {
			return resource.Tuple{}, t - time.Second
		}), []string{`node "n0" at 3s`, "next change", "= 2s"}},
		{"bad from the start", funcBG(func(_ int, _ resource.Tuple, t time.Duration) (resource.Tuple, time.Duration) {
			return resource.Tuple{workload.SlotMemory: -1}, stage.Forever
		}), []string{`node "n0" at 0s`, "demand[1] (memory)", "= -1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(&w, &cl, FIFO(), WithBackground(tc.bg))
			require.ErrorIs(t, err, ErrInvalidInput)
			assert.Nil(t, r)
			for _, s := range tc.want {
				assert.ErrorContains(t, err, s)
			}
		})
	}
	// The good part alone runs.
	r, err := Run(&w, &cl, FIFO(), WithBackground(after(func(time.Duration) (resource.Tuple, time.Duration) {
		return resource.Tuple{}, stage.Forever
	})))
	require.NoError(t, err)
	assert.Equal(t, 1, r.Summary.JobsFinished)
}

// Replication: the default is capped at a smaller cluster's nodes, as documented; an
// explicit value must fit the cluster.
func TestReplicationCap(t *testing.T) {
	cl := oneNode(tuple(1000, 8*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "one", Blocks: []int64{64 << 20}, Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0),
		oneStage(time.Second, tuple(1000, gib, 0, 0)))}}
	for _, tc := range []struct {
		name string
		opts []Option
		want error
	}{
		{"default capped", nil, nil},
		{"one replica", []Option{WithReplication(1)}, nil},
		{"two replicas on one node", []Option{WithReplication(2)}, ErrInvalidOption},
		{"a thousand on one node", []Option{WithReplication(1000)}, ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(&w, &cl, FIFO(), tc.opts...)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, "replication")
			assert.ErrorContains(t, err, "for 1 nodes")
		})
	}
}

// The CSV writers refuse a Result they cannot write, writing nothing.
func TestCSVErrors(t *testing.T) {
	var nilResult *Result
	wide := &Result{Policy: "p", Dims: make([]string, resource.MaxDims+1), Samples: []Sample{{}}}
	ok := &Result{Policy: "p", Dims: []string{"cpu"}}
	for _, tc := range []struct {
		name  string
		write func(w *bytes.Buffer) error
		field string
	}{
		{"jobs of nil", func(w *bytes.Buffer) error { return nilResult.WriteJobsCSV(w, true) }, "result"},
		{"tasks of nil", func(w *bytes.Buffer) error { return nilResult.WriteTasksCSV(w, true) }, "result"},
		{"evictions of nil", func(w *bytes.Buffer) error { return nilResult.WriteEvictionsCSV(w, true) }, "result"},
		{"samples of nil", func(w *bytes.Buffer) error { return nilResult.WriteSamplesCSV(w, true) }, "result"},
		{"queue samples of nil", func(w *bytes.Buffer) error { return nilResult.WriteQueueSamplesCSV(w, true) }, "result"},
		{"summary of nil", func(w *bytes.Buffer) error { return WriteSummaryCSV(w, true, nil) }, "results[0]"},
		{"summary of a nil after a good one", func(w *bytes.Buffer) error { return WriteSummaryCSV(w, true, ok, nil) }, "results[1]"},
		{"samples of 9 dims", func(w *bytes.Buffer) error { return wide.WriteSamplesCSV(w, true) }, "result.Dims"},
		{"summary of 9 dims", func(w *bytes.Buffer) error { return WriteSummaryCSV(w, false, ok, wide) }, "results[1].Dims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := tc.write(&b)
			require.ErrorIs(t, err, ErrInvalidInput)
			assert.ErrorContains(t, err, tc.field)
			assert.Zero(t, b.Len(), "nothing written")
		})
	}
}

func TestCSVHeaders(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.02)
	r, err := Run(&w, &cl, FGM(), WithTaskRecords(), WithDecisionTiming(), WithQueueSamples())
	require.NoError(t, err)
	require.NotNil(t, r.Timing)
	assert.Equal(t, r.Summary.Heartbeats, r.Timing.Calls)
	var b bytes.Buffer
	require.NoError(t, WriteSummaryCSV(&b, true, r, r))
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	require.Len(t, lines, 3)
	assert.Equal(t, len(SummaryHeader(r.Dims)), len(bytes.Split(lines[1], []byte(","))))
	b.Reset()
	require.NoError(t, r.WriteJobsCSV(&b, false))
	assert.Len(t, bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")), len(r.Jobs))
	b.Reset()
	require.NoError(t, r.WriteSamplesCSV(&b, true))
	assert.Len(t, bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")), len(r.Samples)+1)
	b.Reset()
	require.NoError(t, r.WriteQueueSamplesCSV(&b, true))
	lines = bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	require.NotEmpty(t, r.QueueSamples)
	assert.Len(t, lines, len(r.QueueSamples)+1)
	assert.Equal(t, "policy,t_s,queue,active,pending,running,share,oldest_pending_s", string(lines[0]))
	b.Reset()
	require.NoError(t, r.WriteTasksCSV(&b, true))
	assert.Len(t, bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")), len(r.Tasks)+1)
	assert.Equal(t, "pull", Pull.String())
	assert.Equal(t, "push", Push.String())
	assert.Equal(t, "Mode(9)", Mode(9).String())
}

func TestProgressCallback(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.02)
	var last Progress
	calls := 0
	_, err := Run(&w, &cl, FIFO(), WithProgress(func(p Progress) {
		calls++
		assert.GreaterOrEqual(t, p.Now, last.Now)
		assert.GreaterOrEqual(t, p.Finished, last.Finished)
		last = p
	}))
	require.NoError(t, err)
	assert.Greater(t, calls, 1)
	assert.Equal(t, last.Total, last.Finished)
	assert.Equal(t, last.JobsTotal, last.Jobs)
}

// An operator who leaves the background's memory out of what the scheduler is told
// avoids the kills that memory causes.
func TestReservedBackground(t *testing.T) {
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "three", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0),
		oneStage(10*time.Second, tuple(1000, gib, 0, 0)), oneStage(10*time.Second, tuple(1000, gib, 0, 0)),
		oneStage(10*time.Second, tuple(1000, gib, 0, 0)))}}
	bg := &SeriesLoad{CPU: []workload.Series{{Name: "idle", Step: time.Hour, Values: []float64{0}}}, Memory: []float64{0.5}}
	blind, err := Run(&w, &cl, FIFO(), WithBackground(bg))
	require.NoError(t, err)
	told, err := Run(&w, &cl, FIFO(), WithBackground(bg), WithReservedBackground())
	require.NoError(t, err)
	assert.Positive(t, blind.Summary.OOMKills, "3 GiB of tasks + 2 GiB of background on 4 GiB")
	assert.Zero(t, told.Summary.OOMKills, "the scheduler sees 2 GiB and runs two at a time")
	assert.Equal(t, 20*time.Second, told.Summary.Makespan)
	for _, s := range told.Samples {
		assert.LessOrEqual(t, s.Allocated[workload.SlotMemory], 0.5+1e-9)
	}
}

// A task no node can hold is refused by the scheduler, which fails the run; kept
// waiting (finegrain.WithUnresolvableAccepted), it stalls the run, which stops with
// ErrTimeLimit after a simulated day without progress rather than running to the time
// limit.
func TestStall(t *testing.T) {
	cl := oneNode(tuple(1000, 2*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "big", Jobs: []workload.Job{
		handJob("ok", "q", 0, tuple(1000, gib, 0, 0), oneStage(time.Second, tuple(1000, gib, 0, 0))),
		handJob("big", "q", time.Second, tuple(1000, 4*gib, 0, 0), oneStage(time.Second, tuple(1000, gib, 0, 0))),
	}}
	_, err := Run(&w, &cl, FIFO())
	require.ErrorIs(t, err, finegrain.ErrUnresolvable, "the scheduler refuses the task at once")
	require.ErrorIs(t, err, ErrScheduler)
	p := FIFO()
	p.Options = append(p.Options, finegrain.WithUnresolvableAccepted(true))
	r, err := Run(&w, &cl, p)
	require.ErrorIs(t, err, ErrTimeLimit)
	require.NotNil(t, r)
	assert.Equal(t, 1, r.Summary.JobsFinished)
	assert.True(t, r.Jobs[0].Finished)
	assert.False(t, r.Jobs[1].Finished)
	assert.Greater(t, r.Summary.Events, 0)
}

// TestKubernetesScoring: kube-scheduler's default scoring (LeastAllocated plus
// BalancedAllocation, 1:1) ranks a node by 1 − the largest utilisation after placement
// on two resources, not by the mean free share. A task of 1 core and 3 GiB leaves n0
// (10 cores, 5 GiB) at 10% cpu and 60% memory — the most free on average — and n1
// (2 cores, 6 GiB) at 50% and 50%: LeastAllocated alone takes n0, Kubernetes n1.
func TestKubernetesScoring(t *testing.T) {
	cl := workload.Cluster{Name: "two", Nodes: []workload.NodeSpec{
		{ID: "n0", Rack: "r0", Capacity: tuple(10000, 5*gib, 100<<20, 100<<20), Speed: 1},
		{ID: "n1", Rack: "r0", Capacity: tuple(2000, 6*gib, 100<<20, 100<<20), Speed: 1},
	}, IntraRackBandwidth: 100 << 20, CrossRackBandwidth: 10 << 20}
	demand := tuple(1000, 3*gib, 0, 0)
	w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, demand, oneStage(10*time.Second, demand))}}
	leastAllocated := Policy{Name: "LeastAllocated", Push: true, Options: []finegrain.Option{
		finegrain.WithPrediction(false), finegrain.WithCandidates(0), finegrain.WithScorer(match.LeastAllocated{Dims: workload.YARNDims()}),
	}}
	for _, tc := range []struct {
		p    Policy
		node string
	}{{Kubernetes(), "n1"}, {leastAllocated, "n0"}} {
		t.Run(tc.p.Name, func(t *testing.T) {
			// WithMode(Pull) is overridden: the policy runs in push mode.
			r, err := Run(&w, &cl, tc.p, WithMode(Pull), WithTaskRecords())
			require.NoError(t, err)
			assert.Equal(t, Push, r.Mode)
			require.Len(t, r.Tasks, 1)
			assert.Equal(t, tc.node, r.Tasks[0].Node)
		})
	}
}
