package finegrain_test

import (
	"bufio"
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// updateRounds rewrites testdata/scaleup_rounds.golden from the rounds as they are now:
// only when their decisions are meant to change.
var updateRounds = flag.Bool("update-scaleup-rounds", false, "rewrite testdata/scaleup_rounds.golden")

// roundsGolden holds, for each seed of TestScaleUpRoundsUnchanged, the SHA-256 of the
// record roundWorld writes of four rounds on that seed's cluster, and the number of
// actions they made; and the same of three rounds on BenchmarkScaleUpRound's cluster.
const roundsGolden = "testdata/scaleup_rounds.golden"

// roundsSeeds is how many seeds TestScaleUpRoundsUnchanged replays.
const roundsSeeds = 120

// TestScaleUpRoundsUnchanged replays four scale-up rounds, and the events between
// them, on each of roundsSeeds random clusters (roundWorld), and three rounds on
// BenchmarkScaleUpRound's cluster (replayBenchRounds), and compares the record of
// everything the rounds decided and left behind with the one kept in roundsGolden: a
// faster round must decide, and leave the state, exactly as the rounds did when the
// record was written. The record covers each round's stragglers, plan, actions and
// skips, and after each round every task's state and allocation, every node's free
// segments, the queues' fairness standing and the placements of later heartbeats.
func TestScaleUpRoundsUnchanged(t *testing.T) {
	got := make([]string, 0, roundsSeeds)
	acted := 0
	for seed := int64(1); seed <= roundsSeeds; seed++ {
		w, err := replayRounds(seed, (*finegrain.Scheduler).ScaleUp)
		require.NoError(t, err, "seed %d", seed)
		acted += w.actions()
		got = append(got, fmt.Sprintf("seed %d actions %d sha256 %x", seed, w.actions(), sha256.Sum256([]byte(w.out.String()))))
	}
	require.Positive(t, acted, "no round acted: the record checks nothing")
	w, err := replayBenchRounds(t, (*finegrain.Scheduler).ScaleUp)
	require.NoError(t, err, "BenchmarkScaleUpRound's cluster")
	got = append(got, fmt.Sprintf("bench actions %d sha256 %x", w.actions(), sha256.Sum256([]byte(w.out.String()))))
	if *updateRounds {
		require.NoError(t, os.WriteFile(roundsGolden, []byte(strings.Join(got, "\n")+"\n"), 0o644))
		return
	}
	f, err := os.Open(roundsGolden)
	require.NoError(t, err)
	defer f.Close()
	var want []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		want = append(want, sc.Text())
	}
	require.Len(t, want, len(got))
	for i := range got {
		assert.Equal(t, want[i], got[i], "the rounds decided otherwise than recorded (replayRounds and replayBenchRounds write the record)")
	}
}

// roundSchema is the rounds' schema: two compressible dimensions (cores and network)
// and memory.
var roundSchema = resource.MustSchema(resource.CPU, resource.Memory, resource.NetIO)

// roundWorld is a random cluster driven through scale-up rounds and the events
// between them — progress, usage reports, finishes, failures, arrivals, undos,
// heartbeats, a node shrinking — all drawn from one seeded source, with a record of
// every decision and of the state after each round. Two worlds of the same seed whose
// schedulers decide alike write the same record.
type roundWorld struct {
	s      *finegrain.Scheduler
	r      *rand.Rand
	round  func(*finegrain.Scheduler, time.Duration) (finegrain.ScaleUpRound, error)
	nodes  []string
	jobs   []string
	tasks  []string                 // every task submitted, in submission order
	starts map[string]time.Duration // when each running task's run began
	ls     map[string]bool          // the latency-sensitive tasks
	prog   map[string]float64       // each running task's progress so far
	now    time.Duration
	rounds []finegrain.ScaleUpRound // the rounds so far
	out    strings.Builder
	// version is QueuesVersion at the last record: a record says whether it moved, not
	// by how much (the count of tree updates a change takes is not a decision).
	version uint64
}

// replayRounds builds seed's world and runs four rounds on it with round, then a
// heartbeat from every node.
func replayRounds(seed int64, round func(*finegrain.Scheduler, time.Duration) (finegrain.ScaleUpRound, error)) (*roundWorld, error) {
	return replayRoundsOn(seed, 0, round)
}

// replayRoundsOn is replayRounds with the world's ScaleUpConfig.Parallelism set to
// parallelism.
func replayRoundsOn(seed int64, parallelism int, round func(*finegrain.Scheduler, time.Duration) (finegrain.ScaleUpRound, error)) (*roundWorld, error) {
	w, err := newRoundWorld(seed, parallelism, round)
	if err != nil {
		return nil, err
	}
	for k := range 4 {
		if k > 0 {
			w.between()
		}
		if err := w.scaleUp(); err != nil {
			return nil, err
		}
	}
	w.heartbeats(len(w.nodes))
	return w, nil
}

// actions is the number of actions of the rounds so far.
func (w *roundWorld) actions() int {
	n := 0
	for _, r := range w.rounds {
		n += len(r.Actions)
	}
	return n
}

// replayBenchRounds runs three rounds, at 4, 5 and 6 s, with round on
// BenchmarkScaleUpRound's cluster, on a scheduler with opts.
func replayBenchRounds(tb testing.TB, round func(*finegrain.Scheduler, time.Duration) (finegrain.ScaleUpRound, error), opts ...finegrain.Option) (*roundWorld, error) {
	w := &roundWorld{s: scaleUpCluster(tb, opts...), r: rand.New(rand.NewSource(0)), round: round, now: 4 * time.Second}
	for i := range 1000 {
		w.nodes = append(w.nodes, fmt.Sprintf("n%04d", i))
	}
	for i := range 10000 {
		w.tasks = append(w.tasks, fmt.Sprintf("t%05d", i))
	}
	for k := range 3 {
		w.now = time.Duration(4+k) * time.Second
		if err := w.scaleUp(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// newRoundWorld builds seed's cluster: 2–13 nodes of random sizes, 1–4 jobs of
// random priorities, 5–70 tasks (a third latency-sensitive; some with staged
// profiles, some not preemptible) placed from 0 s where they fit, some failed and
// placed again at 2 s, progress reported at 1–4 s and usage at 4 s; and a random
// scale-up configuration, with parallelism (ScaleUpConfig.Parallelism; the record
// does not show it).
func newRoundWorld(seed int64, parallelism int, round func(*finegrain.Scheduler, time.Duration) (finegrain.ScaleUpRound, error)) (*roundWorld, error) {
	r := rand.New(rand.NewSource(seed))
	var cfg finegrain.ScaleUpConfig
	variant := r.Intn(7)
	switch variant {
	case 0:
		cfg.IdleOnly = true
	case 1:
		cfg.Planner = []speculate.PlannerOption{speculate.WithMoves(false)}
	case 2:
		cfg.Planner = []speculate.PlannerOption{speculate.WithLocalTopUp(false)}
	case 3:
		cfg.Planner = []speculate.PlannerOption{speculate.WithRecovery(false)}
	}
	if r.Intn(3) == 0 {
		cfg.ExpectedUtilisation = resource.Uniform(roundSchema.All(), 0.5+0.4*r.Float64())
	}
	if r.Intn(3) == 0 {
		cfg.PreemptibleShare = 0.2 + 0.8*r.Float64()
	}
	cfg.Parallelism = parallelism
	s, err := finegrain.New(roundSchema, finegrain.WithPrediction(false), finegrain.WithScaleUp(cfg))
	if err != nil {
		return nil, err
	}
	w := &roundWorld{s: s, r: r, round: round, starts: map[string]time.Duration{}, ls: map[string]bool{}, prog: map[string]float64{}}
	fmt.Fprintf(&w.out, "seed %d variant %d expected %v share %v\n", seed, variant, cfg.ExpectedUtilisation, cfg.PreemptibleShare)
	for i := range 2 + r.Intn(12) {
		n := finegrain.Node{ID: fmt.Sprintf("n%02d", i), Capacity: roundSchema.MustTuple(int64(4000+r.Intn(13)*1000), int64(8+r.Intn(25))*gib, int64(1000+r.Intn(5)*1000))}
		if err := s.AddNode(n); err != nil {
			return nil, err
		}
		w.nodes = append(w.nodes, n.ID)
	}
	for _, q := range []string{"qa", "qb"} {
		if err := s.AddQueue("", q); err != nil {
			return nil, err
		}
	}
	for j := range 1 + r.Intn(4) {
		job := finegrain.Job{ID: fmt.Sprintf("j%d", j), Queue: []string{"qa", "qb"}[j%2], Priority: r.Intn(3) - 1}
		if err := s.SubmitJob(job); err != nil {
			return nil, err
		}
		w.jobs = append(w.jobs, job.ID)
	}
	for range 5 + r.Intn(66) {
		w.submit(r.Intn(3) == 0, true)
	}
	w.progress(time.Second)
	var failed []string
	for _, id := range w.running() {
		if r.Intn(12) == 0 {
			w.event("fail "+id, s.Failed(id, time.Second))
			delete(w.starts, id)
			failed = append(failed, id)
		}
	}
	for _, id := range failed {
		w.place(id, 2*time.Second)
	}
	for k := 2; k <= 4; k++ {
		w.progress(time.Duration(k) * time.Second)
	}
	w.now = 4 * time.Second
	w.usage()
	if r.Intn(4) == 0 {
		n := w.nodes[r.Intn(len(w.nodes))]
		w.event("external load on "+n, nil)
		_, err := s.SetExternalLoad(n, 3*time.Second, roundSchema.MustTuple(int64(r.Intn(3000)), int64(r.Intn(4))*gib, int64(r.Intn(500))))
		w.event("", err)
	}
	if r.Intn(4) == 0 {
		w.shrinkNode()
	}
	return w, nil
}

// shrinkNode lowers a random node's capacity at the clock: its cores, and now and
// then its memory, perhaps below what its tasks hold.
func (w *roundWorld) shrinkNode() {
	n := w.nodes[w.r.Intn(len(w.nodes))]
	memory := int64(32 * gib)
	if w.r.Intn(2) == 0 {
		memory = int64(1+w.r.Intn(8)) * gib
	}
	w.event("shrink "+n, w.s.UpdateNode(finegrain.Node{ID: n, Capacity: roundSchema.MustTuple(int64(1000+w.r.Intn(4000)), memory, 5000)}, w.now))
}

// submit submits a random task — latency-sensitive when ls — and, when place, tries
// to place it at the clock on a random node, then on another.
func (w *roundWorld) submit(ls, place bool) {
	r := w.r
	id := fmt.Sprintf("t%03d", len(w.tasks))
	tk := finegrain.Task{ID: id, Job: w.jobs[r.Intn(len(w.jobs))], NonPreemptible: r.Intn(6) == 0, Submitted: w.now,
		Request: roundSchema.MustTuple(int64(200+r.Intn(3800)), int64(256+r.Intn(6*1024))*mib, int64(r.Intn(400)))}
	if r.Intn(4) == 0 {
		stages := make([]stage.Stage, 1+r.Intn(3))
		var peak resource.Tuple
		for i := range stages {
			stages[i] = stage.Stage{Duration: time.Duration(3+r.Intn(30)) * time.Second,
				Demand: roundSchema.MustTuple(int64(100+r.Intn(3000)), int64(128+r.Intn(4*1024))*mib, int64(r.Intn(300)))}
			peak = peak.Max(stages[i].Demand)
		}
		if r.Intn(2) == 0 {
			stages[len(stages)-1].Duration = stage.Forever
		}
		tk.Profile, tk.Request = stage.MustProfile(roundSchema, stages...), peak
	}
	if ls {
		tk.Class, tk.SLO = finegrain.LatencySensitive, time.Duration(3+r.Intn(30))*time.Second
	}
	if err := w.s.Submit(tk); err != nil {
		w.event("submit "+id, err)
		return
	}
	w.tasks = append(w.tasks, id)
	w.ls[id] = ls
	if place {
		w.place(id, w.now)
	}
}

// place reserves and commits task id at now on a random node, or the next one.
func (w *roundWorld) place(id string, now time.Duration) {
	i := w.r.Intn(len(w.nodes))
	for k := range 2 {
		n := w.nodes[(i+k)%len(w.nodes)]
		if _, err := w.s.Reserve(id, n, now); err != nil {
			continue
		}
		_, err := w.s.Commit(id, now)
		w.event("commit "+id, err)
		if err == nil {
			w.starts[id], w.prog[id] = now, 0
		}
		return
	}
}

// running lists the running tasks in submission order.
func (w *roundWorld) running() []string {
	var ids []string
	for _, id := range w.tasks {
		if st, _ := w.s.TaskState(id); st == finegrain.Running {
			ids = append(ids, id)
		}
	}
	return ids
}

// progress reports the running tasks' progress at at: random steps, the later ones
// of some latency-sensitive tasks slower (stragglers), and now and then none.
func (w *roundWorld) progress(at time.Duration) {
	for _, id := range w.running() {
		if w.starts[id] >= at || w.r.Intn(10) == 0 {
			continue
		}
		step := w.r.Float64() * 0.25
		if w.ls[id] && at > 2*time.Second && w.r.Intn(2) == 0 {
			step *= 0.2
		}
		w.prog[id] = min(1, w.prog[id]+step)
		w.event("progress "+id, w.s.Progress(id, w.prog[id], at))
	}
}

// usage reports, at the clock, a random peak for about half of the running tasks.
func (w *roundWorld) usage() {
	for _, id := range w.running() {
		if w.r.Intn(2) == 0 || w.starts[id] >= w.now {
			continue
		}
		a, err := w.s.Allocation(id, w.now)
		if err != nil {
			w.event("allocation "+id, err)
			continue
		}
		used := a.Held
		for d := range used {
			used[d] = used[d] * int64(w.r.Intn(101)) / 100
		}
		obs := predict.Observation{Profile: stage.MustProfile(roundSchema, stage.Stage{Duration: w.now - w.starts[id], Demand: used})}
		w.event("usage "+id, w.s.ReportRunning(id, w.now, obs))
	}
}

// between moves the clock on by a second and makes the events between two rounds:
// some of the last round's actions undone (in reverse), tasks finished and failed,
// new arrivals, progress and usage, and heartbeats.
func (w *roundWorld) between() {
	r := w.r
	w.now += time.Second
	if last := w.rounds[len(w.rounds)-1].Actions; r.Intn(3) == 0 {
		for i := len(last) - 1; i >= 0; i-- {
			if r.Intn(2) == 0 {
				w.event(fmt.Sprintf("undo %v %s", last[i].Kind, last[i].Task), w.s.UndoScale(last[i], w.now))
			}
		}
	}
	for _, id := range w.running() {
		switch r.Intn(14) {
		case 0:
			w.event("finish "+id, w.s.Finished(id, w.now, nil))
			delete(w.starts, id)
		case 1:
			w.event("fail "+id, w.s.Failed(id, w.now))
			delete(w.starts, id)
			w.place(id, w.now)
		}
	}
	for range r.Intn(4) {
		w.submit(r.Intn(2) == 0, r.Intn(2) == 0)
	}
	w.progress(w.now)
	w.usage()
	if r.Intn(6) == 0 {
		w.shrinkNode()
	}
	w.heartbeats(r.Intn(3))
}

// heartbeats sends k heartbeats from random nodes at the clock and records what they
// placed.
func (w *roundWorld) heartbeats(k int) {
	for range k {
		n := w.nodes[w.r.Intn(len(w.nodes))]
		d, err := w.s.Heartbeat(n, w.now)
		w.event("heartbeat "+n, err)
		for _, a := range d.Assignments {
			fmt.Fprintf(&w.out, "heartbeat %s placed %+v\n", n, a)
			if _, err := w.s.Commit(a.Task, w.now); err == nil {
				w.starts[a.Task], w.prog[a.Task] = w.now, 0
			}
		}
		fmt.Fprintf(&w.out, "heartbeat %s stop %v skipped %d\n", n, d.Stop, d.Skipped)
	}
}

// scaleUp runs a round at the clock, and records it and the state after it.
func (w *roundWorld) scaleUp() error {
	round, err := w.round(w.s, w.now)
	if err != nil {
		return err
	}
	w.rounds = append(w.rounds, round)
	o := &w.out
	fmt.Fprintf(o, "round at %v\n", round.At)
	for _, st := range round.Stragglers {
		fmt.Fprintf(o, "straggler %+v\n", st)
	}
	p := round.Plan
	fmt.Fprintf(o, "plan idle %v need %v reclaimed %v preempted %v available %v restored %v\n", p.Idle, p.Need, p.Reclaimed, p.Preempted, p.Available, p.Restored)
	for _, st := range p.Steps {
		fmt.Fprintf(o, "step %+v\n", st)
	}
	for _, u := range p.Unserved {
		fmt.Fprintf(o, "unserved %+v\n", u)
	}
	for _, a := range round.Actions {
		fmt.Fprintf(o, "action %+v\n", a)
	}
	for _, sk := range round.Skipped {
		fmt.Fprintf(o, "skipped %s %v: %v\n", sk.Task, sk.Kind, sk.Err)
	}
	w.state()
	return nil
}

// state records every task's state and allocation, every node's free segments over
// the next minute, and the queues' standing, at the clock.
func (w *roundWorld) state() {
	o := &w.out
	for _, id := range w.tasks {
		st, _ := w.s.TaskState(id)
		fmt.Fprintf(o, "task %s %v", id, st)
		if a, err := w.s.Allocation(id, w.now); err == nil {
			fmt.Fprintf(o, " on %s holds %v ahead %v", a.Node, a.Held, a.Ahead)
		}
		fmt.Fprintln(o)
	}
	for _, n := range w.nodes {
		segs, err := w.s.FreeSegments(n, w.now, w.now+time.Minute)
		fmt.Fprintf(o, "node %s %v %v\n", n, segs, err)
	}
	qs, err := w.s.Queues("")
	v := w.s.QueuesVersion()
	fmt.Fprintf(o, "queues %+v %v version moved %t\n", qs, err, v != w.version)
	w.version = v
	pending, running, finished, cancelled := w.s.Counts()
	fmt.Fprintf(o, "counts %d %d %d %d\n", pending, running, finished, cancelled)
}

// event records an event's error, if any.
func (w *roundWorld) event(what string, err error) {
	if err != nil {
		fmt.Fprintf(&w.out, "%s: %v\n", what, err)
	}
}

// mib is a mebibyte.
const mib = 1 << 20

// TestRoundWorldVaries checks that the seeds of TestScaleUpRoundsUnchanged reach the
// paths a round can take: stragglers found and not sized, every kind of action, moves
// and local top-ups, refusals by the state, and recovery.
func TestRoundWorldVaries(t *testing.T) {
	kinds := map[speculate.StepKind]int{}
	var skipped, topUps, unserved int
	for seed := int64(1); seed <= roundsSeeds; seed++ {
		w, err := newRoundWorld(seed, 0, (*finegrain.Scheduler).ScaleUp)
		require.NoError(t, err)
		for k := range 4 {
			if k > 0 {
				w.between()
			}
			require.NoError(t, w.scaleUp())
			last := w.rounds[len(w.rounds)-1]
			for _, a := range last.Actions {
				kinds[a.Kind]++
			}
			for _, st := range last.Plan.Steps {
				if st.For != "" {
					topUps++
				}
			}
			skipped += len(last.Skipped)
			unserved += len(last.Plan.Unserved)
		}
	}
	t.Logf("actions by kind %v; %d top-up steps, %d skipped, %d unserved", kinds, topUps, skipped, unserved)
	for _, k := range []speculate.StepKind{speculate.Reclaim, speculate.Preempt, speculate.Expand, speculate.Move, speculate.Restore} {
		assert.Positive(t, kinds[k], "no %v action", k)
	}
	assert.Positive(t, topUps, "no local top-up")
	assert.Positive(t, skipped, "no skip")
	assert.Positive(t, unserved, "no straggler unserved")
}

// TestPropertyScaleUpMatchesReference: on random worlds (a fresh seed every run;
// gopter prints it when the property fails), four rounds of Scheduler.ScaleUp decide,
// and leave the state, exactly as four rounds of the reference round
// (Scheduler.ReferenceScaleUp, the round as first written) do: the two records are
// the same.
func TestPropertyScaleUpMatchesReference(t *testing.T) {
	props := mixedProperties()
	props.Property("a round decides as the reference round does", prop.ForAll(func(seed int64) string {
		got, err := replayRounds(seed, (*finegrain.Scheduler).ScaleUp)
		if err != nil {
			return err.Error()
		}
		want, err := replayRounds(seed, (*finegrain.Scheduler).ReferenceScaleUp)
		if err != nil {
			return err.Error()
		}
		return sameRounds(got, want)
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// TestPropertyScaleUpParallelismChangesNothing: on random worlds (a fresh seed every
// run; gopter prints it when the property fails), rounds listing the tasks and
// preparing the changes on 2–6 goroutines (ScaleUpConfig.Parallelism) decide, and
// leave the state, exactly as rounds on one goroutine do. The worlds have 2–13 nodes
// and the rounds make up to a few dozen changes, so that every run of nodes and of
// changes is small and the goroutines' shares are joined in many ways.
func TestPropertyScaleUpParallelismChangesNothing(t *testing.T) {
	props := mixedProperties()
	props.Property("parallel rounds decide as serial ones", prop.ForAll(func(seed int64, parallelism int) string {
		got, err := replayRoundsOn(seed, parallelism, (*finegrain.Scheduler).ScaleUp)
		if err != nil {
			return err.Error()
		}
		want, err := replayRoundsOn(seed, 1, (*finegrain.Scheduler).ScaleUp)
		if err != nil {
			return err.Error()
		}
		return sameRounds(got, want)
	}, gen.Int64().WithShrinker(gopter.NoShrinker), gen.IntRange(2, 6)))
	props.TestingRun(t)
}

// TestBenchRoundsMatchReference: three rounds on BenchmarkScaleUpRound's cluster
// decide, and leave the state, as the reference rounds do — on one goroutine and on
// three (ScaleUpConfig.Parallelism).
func TestBenchRoundsMatchReference(t *testing.T) {
	want, err := replayBenchRounds(t, (*finegrain.Scheduler).ReferenceScaleUp)
	require.NoError(t, err)
	require.Positive(t, want.actions())
	for _, parallelism := range []int{0, 3} {
		got, err := replayBenchRounds(t, (*finegrain.Scheduler).ScaleUp, finegrain.WithScaleUp(finegrain.ScaleUpConfig{Parallelism: parallelism}))
		require.NoError(t, err)
		assert.Empty(t, sameRounds(got, want), "parallelism %d", parallelism)
	}
}

// sameRounds is "" when worlds got and want made the same rounds — equal values,
// nil slices where the other has them — and wrote the same record; else the first
// difference.
func sameRounds(got, want *roundWorld) string {
	if !reflect.DeepEqual(got.rounds, want.rounds) {
		for i := range min(len(got.rounds), len(want.rounds)) {
			if !reflect.DeepEqual(got.rounds[i], want.rounds[i]) {
				return fmt.Sprintf("round %d:\n%#v\nthe reference:\n%#v", i+1, got.rounds[i], want.rounds[i])
			}
		}
		return fmt.Sprintf("%d rounds, the reference %d", len(got.rounds), len(want.rounds))
	}
	if got.out.String() == want.out.String() {
		return ""
	}
	g, w := strings.Split(got.out.String(), "\n"), strings.Split(want.out.String(), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, the reference %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, the reference %d", len(g), len(w))
}
