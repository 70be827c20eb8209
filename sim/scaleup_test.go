package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/speculate"
)

// scripted is the reference scheduler (request-based) whose scale-up rounds return the
// actions of a script, by round time, instead of planning: the execution model of a
// resize, seen alone. The scheduler's own books are not changed by them.
type scripted struct {
	*finegrain.Scheduler
	rounds map[time.Duration][]finegrain.ScaleAction
}

func (s *scripted) ScaleUp(now time.Duration) (finegrain.ScaleUpRound, error) {
	return finegrain.ScaleUpRound{At: now, Actions: s.rounds[now]}, nil
}

// scriptedPolicy runs the script's rounds (every 10 s: WithScaleUpEvery in
// resizeRun).
func scriptedPolicy(rounds map[time.Duration][]finegrain.ScaleAction) Policy {
	return Policy{Name: "scripted", Progress: true, ScaleUp: true, New: func(schema *resource.Schema) (Scheduler, error) {
		s, err := finegrain.New(schema, finegrain.WithPrediction(false))
		return &scripted{Scheduler: s, rounds: rounds}, err
	}}
}

// resizeRun runs task "j/m0" — 100 s of work on one stage demanding cpu 1000 and
// memory mem, requesting req — alone on node n0 of cpu capacity capCPU (and, when
// speed1 > 0, beside an empty node n1 of that speed), usage constant, under the script
// (rounds every 10 s).
func resizeRun(t *testing.T, capCPU, mem int64, req resource.Tuple, speed1 float64, rounds map[time.Duration][]finegrain.ScaleAction, opts ...Option) *Result {
	t.Helper()
	cl := oneNode(tuple(capCPU, 8*gib, 100<<20, 100<<20))
	if speed1 > 0 {
		cl.Nodes = append(cl.Nodes, workload.NodeSpec{ID: "n1", Rack: "r0", Capacity: cl.Nodes[0].Capacity, Speed: speed1})
	}
	w := workload.Workload{Name: "resize", Jobs: []workload.Job{handJob("j", "q", 0, req, oneStage(100*time.Second, tuple(1000, mem, 0, 0)))}}
	r, err := Run(&w, &cl, scriptedPolicy(rounds), append([]Option{WithVariation(NoVariation), WithTaskRecords(), WithScaleUpEvery(10 * time.Second)}, opts...)...)
	require.NoError(t, err)
	return r
}

// action is a scripted action on j/m0 at node n0.
func action(kind speculate.StepKind, amount, alloc resource.Tuple) finegrain.ScaleAction {
	return finegrain.ScaleAction{Kind: kind, Task: "j/m0", Node: "n0", Amount: amount, Allocation: alloc}
}

// The execution model of a resize, one task alone on its node. It starts at 0 on n0
// (the first heartbeat) and has done 10 s of its 100 s of work at the round at 10 s.
func TestResizeExecutionModel(t *testing.T) {
	const p = DefaultPenalty
	req := tuple(1000, gib, 0, 0)
	for _, tc := range []struct {
		name   string
		capCPU int64
		req    resource.Tuple
		rounds map[time.Duration][]finegrain.ScaleAction
		model  ResizeModel
		finish float64 // seconds
	}{
		// Shrunk to half its CPU: eq. 5, rc = 0.5, the 90 s left at 0.5/(1 + p).
		{"preempted to half", 4000, req, map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Preempt, tuple(500, 0, 0, 0), tuple(500, gib, 0, 0))}}, Elastic, 10 + 90*(1+p)/0.5},
		// Grown to twice its CPU on a node with room: twice as fast, no penalty.
		{"expanded to twice", 4000, req, map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Expand, tuple(1000, 0, 0, 0), tuple(2000, gib, 0, 0))}}, Elastic, 10 + 90/2.0},
		// Grown to twice on a node of 1500: it now uses 2000, rc = 0.25 on the node.
		{"expanded beyond the node", 1500, req, map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Expand, tuple(1000, 0, 0, 0), tuple(2000, gib, 0, 0))}}, Elastic, 10 + 90/(2*0.75/(1+p))},
		// Shrunk at 10 s, given all back at 20 s: 10 s at 0.5/(1 + p), then speed 1.
		{"preempted then restored", 4000, req, map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Preempt, tuple(500, 0, 0, 0), tuple(500, gib, 0, 0))},
			20 * time.Second: {action(speculate.Restore, tuple(500, 0, 0, 0), tuple(1000, gib, 0, 0))}}, Elastic, 20 + 90 - 10*0.5/(1+p)},
		// Requested 2000 and using 1000, reclaimed to 1200: Elastic slows it by
		// f = 0.6; CappedShrink leaves it be, for it uses less than it holds.
		{"reclaimed, elastic", 4000, tuple(2000, gib, 0, 0), map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Reclaim, tuple(800, 0, 0, 0), tuple(1200, gib, 0, 0))}}, Elastic, 10 + 90*(1+p)/0.6},
		{"reclaimed, capped", 4000, tuple(2000, gib, 0, 0), map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Reclaim, tuple(800, 0, 0, 0), tuple(1200, gib, 0, 0))}}, CappedShrink, 100},
		// Capped below its use: eq. 1, rc = 1 − 500/1000.
		{"preempted to half, capped", 4000, req, map[time.Duration][]finegrain.ScaleAction{
			10 * time.Second: {action(speculate.Preempt, tuple(500, 0, 0, 0), tuple(500, gib, 0, 0))}}, CappedShrink, 10 + 90*(1+p)/0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := resizeRun(t, tc.capCPU, gib, tc.req, 0, tc.rounds, WithResizeModel(tc.model))
			assert.InDelta(t, tc.finish, r.Tasks[0].Finish.Seconds(), 1e-6)
			assert.Zero(t, r.Tasks[0].Kills)
			assert.Equal(t, "n0", r.Tasks[0].Node)
		})
	}
}

// A reclaim of memory below what the task uses kills it at once, as a container over
// its memory limit; the kill is counted apart from the nodes' overruns, and the task
// runs again, whole, on its request.
func TestResizeMemoryShrinkKills(t *testing.T) {
	r := resizeRun(t, 4000, 2*gib, tuple(1000, 2*gib, 0, 0), 0, map[time.Duration][]finegrain.ScaleAction{
		10 * time.Second: {action(speculate.Reclaim, tuple(0, gib, 0, 0), tuple(1000, gib, 0, 0))}})
	assert.Equal(t, 1, r.Summary.Mixed.ShrinkKills)
	assert.Zero(t, r.Summary.OOMKills)
	assert.Equal(t, 1, r.Tasks[0].Kills)
	assert.Equal(t, 2, r.Summary.Placements)
	// Killed at 10 s, placed again at the next periodic heartbeat, 11 s: 100 s more.
	assert.Equal(t, 11*time.Second, r.Tasks[0].Start)
	assert.Equal(t, 111*time.Second, r.Tasks[0].Finish)
	assert.Equal(t, 1, r.Summary.Mixed.Reclaimed)
	assert.Equal(t, 1, r.Summary.Mixed.BatchTasks)
	assert.InDelta(t, 111.0/100, r.Summary.Mixed.BatchSlowdown, 1e-9, "from the first run's start")
}

// A memory limit a shrink set also kills later, when the task's memory grows past it:
// under the default variation memory grows from 70% of the stage's demand to all of it,
// so a limit of 80% is passed a third of the way through, at the beat after 33.3 s.
func TestResizeMemoryShrinkKillsLater(t *testing.T) {
	cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "resize", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0), oneStage(100*time.Second, tuple(1000, gib, 0, 0)))}}
	limit := gib * 8 / 10
	r, err := Run(&w, &cl, scriptedPolicy(map[time.Duration][]finegrain.ScaleAction{
		10 * time.Second: {action(speculate.Reclaim, tuple(0, gib-limit, 0, 0), tuple(1000, limit, 0, 0))}}),
		WithTaskRecords(), WithScaleUpEvery(10*time.Second))
	require.NoError(t, err)
	assert.Equal(t, 1, r.Summary.Mixed.ShrinkKills)
	assert.Equal(t, 34*time.Second, r.Tasks[0].Start, "killed at the beat of 34 s, placed again by its heartbeat")
}

// A move keeps the task's progress: moved at 10 s to a node of speed 2 with what it
// held, it does the 90 s of work left in 45 s there, and finishes there.
func TestResizeMoveKeepsProgress(t *testing.T) {
	r := resizeRun(t, 4000, gib, tuple(1000, gib, 0, 0), 2, map[time.Duration][]finegrain.ScaleAction{
		10 * time.Second: {{Kind: speculate.Move, Task: "j/m0", Node: "n1", From: "n0", Allocation: tuple(1000, gib, 0, 0)}}})
	assert.InDelta(t, 55.0, r.Tasks[0].Finish.Seconds(), 1e-6)
	assert.Equal(t, "n1", r.Tasks[0].Node)
	assert.Equal(t, time.Duration(0), r.Tasks[0].Start, "one run")
	assert.Equal(t, 1, r.Summary.Mixed.Moved)
	assert.Zero(t, r.Tasks[0].Kills)
}

// An action the simulator cannot carry out is a scheduler error: a task that does not
// run, or runs elsewhere.
func TestResizeRefusals(t *testing.T) {
	cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
	cl.Nodes = append(cl.Nodes, workload.NodeSpec{ID: "n1", Rack: "r0", Capacity: cl.Nodes[0].Capacity, Speed: 1})
	w := workload.Workload{Name: "resize", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0), oneStage(100*time.Second, tuple(1000, gib, 0, 0)))}}
	for name, a := range map[string]finegrain.ScaleAction{
		"unknown task": {Kind: speculate.Expand, Task: "nope", Node: "n0", Allocation: tuple(2000, gib, 0, 0)},
		"wrong node":   {Kind: speculate.Expand, Task: "j/m0", Node: "n1", Allocation: tuple(2000, gib, 0, 0)},
		"wrong from":   {Kind: speculate.Move, Task: "j/m0", Node: "n0", From: "n1", Allocation: tuple(2000, gib, 0, 0)},
		"to no node":   {Kind: speculate.Move, Task: "j/m0", Node: "n9", From: "n0", Allocation: tuple(2000, gib, 0, 0)},
	} {
		_, err := Run(&w, &cl, scriptedPolicy(map[time.Duration][]finegrain.ScaleAction{10 * time.Second: {a}}), WithScaleUpEvery(10*time.Second))
		assert.ErrorIs(t, err, ErrScheduler, name)
	}
}

// noScaleUp is a scheduler without the ScaleUp call.
type noScaleUp struct{ Scheduler }

// A policy asking for scale-up of a scheduler without it is refused; so are a bad
// period and a bad resize model.
func TestScaleUpPolicyRefusals(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.01)
	p := Policy{Name: "x", ScaleUp: true, New: func(schema *resource.Schema) (Scheduler, error) {
		s, err := finegrain.New(schema)
		return noScaleUp{s}, err
	}}
	_, err := Run(&w, &cl, p)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = Run(&w, &cl, FairScaleUp(finegrain.ScaleUpConfig{}), WithScaleUpEvery(0))
	assert.ErrorIs(t, err, ErrInvalidOption)
	_, err = Run(&w, &cl, FairScaleUp(finegrain.ScaleUpConfig{}), WithResizeModel(7))
	assert.ErrorIs(t, err, ErrInvalidOption)
	_, err = Run(&w, &cl, FairScaleUp(finegrain.ScaleUpConfig{PreemptibleShare: 2}))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	for _, m := range []ResizeModel{Elastic, CappedShrink} {
		got, err := ParseResizeModel(m.String())
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	_, err = ParseResizeModel("rubber")
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// Without latency-sensitive tasks, the mixed-workload outcome is zero and the run is
// the run it always was; scale-up rounds, which then plan nothing, change nothing
// either: FairScaleUp's run is FairProgress's, byte for byte.
func TestMixedOutcomeWithoutLatencySensitive(t *testing.T) {
	w, cl := smallFGM(t, 2, 0.03)
	r, err := Run(&w, &cl, Fair())
	require.NoError(t, err)
	assert.Equal(t, MixedOutcome{}, r.Summary.Mixed)

	base, err := Run(&w, &cl, FairProgress(), WithTaskRecords())
	require.NoError(t, err)
	assert.Equal(t, MixedOutcome{}, base.Summary.Mixed)
	p := FairScaleUp(finegrain.ScaleUpConfig{})
	p.Name = base.Policy
	up, err := Run(&w, &cl, p, WithTaskRecords())
	require.NoError(t, err)
	assert.Equal(t, base.Summary.Events+up.Summary.Mixed.Rounds, up.Summary.Events, "the rounds are events of their own")
	up.Summary.Events = base.Summary.Events
	assert.True(t, bytes.Equal(csvOf(t, base), csvOf(t, up)), "scale-up rounds without latency-sensitive tasks change nothing")
	assert.Positive(t, up.Summary.Mixed.Rounds)
	assert.Zero(t, up.Summary.Mixed.Stragglers+up.Summary.Mixed.Expanded+up.Summary.Mixed.Reclaimed+up.Summary.Mixed.Preempted)
	assert.Equal(t, up.Summary.Mixed.BatchTasks, w.NumTasks())
}

// The mixed-workload outcome counts what it says: on a workload with latency-sensitive
// jobs, the SLO attainment is the share of them that finished within their SLO of
// their first start, read off the task records.
func TestMixedOutcomeCounts(t *testing.T) {
	w, cl := smallFGM(t, 2, 0.03, workload.WithLatencySensitive(0.5), workload.WithSLOFactor(1.05))
	bg, err := RandomLoad(rand.New(rand.NewPCG(2, 3)), len(cl.Nodes))
	require.NoError(t, err)
	r, err := Run(&w, &cl, FairProgress(), WithTaskRecords(), WithBackground(bg))
	require.NoError(t, err)
	m := r.Summary.Mixed
	ls, met := 0, 0
	for j := range w.Jobs {
		for k := range w.Jobs[j].Tasks {
			wt := &w.Jobs[j].Tasks[k]
			if !wt.LatencySensitive {
				continue
			}
			ls++
			rec := finishOf(t, r, wt.ID)
			if rec.Kills == 0 && rec.Evictions == 0 && rec.Finish-rec.Start <= wt.SLO {
				met++
			}
		}
	}
	assert.Equal(t, ls, m.LSTasks)
	assert.Equal(t, met, m.LSMet, "no run was lost, so the first start is the last")
	assert.InDelta(t, float64(met)/float64(ls), m.SLOAttainment, 1e-12)
	assert.Less(t, m.LSMet, m.LSTasks, "an SLO of 1.05 × the run time is missed on a loaded node")
	assert.Equal(t, w.NumTasks()-ls, m.BatchTasks)
	assert.Greater(t, m.BatchSlowdown, 1.0)
	assert.Zero(t, m.Rounds)
}

// On a small mixed workload on a loaded cloud, the scale-up rounds with reclaim and
// preemption meet at least as many SLOs as no action. (One workload and seed, chosen
// before the run; not a claim about every workload: examples/mixed measures more.)
func TestScaleUpMeetsAtLeastNoAction(t *testing.T) {
	w, cl := smallFGM(t, 1, 0.1, workload.WithLatencySensitive(0.3))
	bg, err := RandomLoad(rand.New(rand.NewPCG(1, 3)), len(cl.Nodes))
	require.NoError(t, err)
	none, err := Run(&w, &cl, FairProgress(), WithBackground(bg))
	require.NoError(t, err)
	up, err := Run(&w, &cl, FairScaleUp(finegrain.ScaleUpConfig{}), WithBackground(bg))
	require.NoError(t, err)
	t.Logf("SLO attainment: no action %.3f, scale-up %.3f; batch slowdown %.3f, %.3f; shrink kills %d",
		none.Summary.Mixed.SLOAttainment, up.Summary.Mixed.SLOAttainment, none.Summary.Mixed.BatchSlowdown,
		up.Summary.Mixed.BatchSlowdown, up.Summary.Mixed.ShrinkKills)
	assert.GreaterOrEqual(t, up.Summary.Mixed.SLOAttainment, none.Summary.Mixed.SLOAttainment)
	assert.Equal(t, len(w.Jobs), up.Summary.JobsFinished)
}

// drawScaleUpScenario is drawScenario with latency-sensitive tasks (about half the
// jobs, SLO 1–2 × their run time) under Fair with scale-up rounds — from idle room
// only or with reclaim and preemption, every 1–5 s, either resize model.
func drawScaleUpScenario(seed uint64) scenario {
	sc := drawScenario(seed)
	r := rand.New(rand.NewPCG(seed, 17))
	for i := range sc.w.Jobs {
		if r.IntN(2) == 0 {
			continue
		}
		for k := range sc.w.Jobs[i].Tasks {
			t := &sc.w.Jobs[i].Tasks[k]
			t.LatencySensitive = true
			t.SLO = time.Duration(float64(t.True.Duration()) * (1 + r.Float64()))
		}
	}
	sc.p = FairScaleUp(finegrain.ScaleUpConfig{IdleOnly: r.IntN(3) == 0})
	sc.opts = append(sc.opts, WithScaleUpEvery(time.Duration(1+r.IntN(5))*time.Second), WithResizeModel(ResizeModel(r.IntN(2))))
	return sc
}

// Scale-up rounds on random tiny scenarios: every task finishes exactly once (a run a
// shrink killed runs again, counted), what the tasks use never passes a node's
// capacity, the scheduler holds nothing on any node once every task has finished,
// and a second run writes the same bytes.
func TestPropertyScaleUp(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 300
	seed := time.Now().UnixNano()
	p.SetSeed(seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gopter seed %d", seed)
		}
	})
	acted := 0
	props := gopter.NewProperties(p)
	props.Property("no task lost or run twice; within capacity; nothing held at the end; deterministic", prop.ForAll(func(seed uint64) string {
		sc := drawScaleUpScenario(seed)
		s, err := New(&sc.w, &sc.cl, sc.p, append(sc.opts, WithSampleEvery(500*time.Millisecond))...)
		if err != nil {
			return err.Error()
		}
		r1, err := s.Run()
		if err != nil {
			return err.Error()
		}
		if err := conserved(&sc.w, r1); err != nil {
			return err.Error()
		}
		m := r1.Summary.Mixed
		if m.Expanded+m.Moved+m.Reclaimed+m.Preempted+m.Restored > 0 {
			acted++
		}
		for _, sm := range r1.Samples {
			for k := range r1.Dims {
				if u := sm.Used[k] + sm.Background[k]; u > 1+1e-6 || sm.Used[k] < 0 {
					return fmt.Sprintf("at %v dim %s: used %v + background %v", sm.At, r1.Dims[k], sm.Used[k], sm.Background[k])
				}
			}
		}
		for _, n := range s.nodes {
			if !n.up {
				continue
			}
			free, err := s.sched.NodeFree(n.spec.ID, s.now)
			if err != nil {
				return err.Error()
			}
			if free != n.adv {
				return fmt.Sprintf("node %s: free %v at the end, capacity %v", n.spec.ID, free, n.adv)
			}
			if len(n.running) != 0 {
				return fmt.Sprintf("node %s: %d runs left", n.spec.ID, len(n.running))
			}
		}
		sc2 := drawScaleUpScenario(seed)
		r2, err := Run(&sc2.w, &sc2.cl, sc2.p, append(sc2.opts, WithSampleEvery(500*time.Millisecond))...)
		if err != nil || !bytes.Equal(csvOf(t, r1), csvOf(t, r2)) || r1.Summary.Mixed != r2.Summary.Mixed {
			return "two runs differ"
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
	t.Logf("%d scenarios had scale-up actions", acted)
	assert.Positive(t, acted, "some scenario resized or moved a task")
}
