package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails.
	return p
}

// scenario is a random tiny simulation drawn from one seed: 1–3 nodes of random size
// and speed in 1–2 racks, 1–4 jobs of 1–5 tasks (maps, sometimes reduces) of 1–3
// stages whose true memory may exceed what they declare, input blocks with replicas,
// one of the five policies, pull or push, sometimes a background load and a node
// failure. Every task's request and true demand fit every node when alone, with the
// background at its highest (80% of the least room any node ever has), so every run
// can finish. (A task that needs more than a node ever has beside its background
// waits: the scheduler holds the reported background, and compresses a placement only
// within its limit.)
type scenario struct {
	w    workload.Workload
	cl   workload.Cluster
	p    Policy
	opts []Option
	room resource.Tuple // the least room any node ever has beside its background
}

func drawScenario(seed uint64) scenario {
	r := rand.New(rand.NewPCG(seed, 11))
	var sc scenario
	nodes := 1 + r.IntN(3)
	sc.cl = workload.Cluster{Name: "prop", IntraRackBandwidth: 50 << 20, CrossRackBandwidth: 10 << 20}
	for i := range nodes {
		c := tuple(int64(1000*(1+r.IntN(4))), int64(2+r.IntN(6))*gib, int64(50+r.IntN(100))<<20, int64(50+r.IntN(100))<<20)
		sc.cl.Nodes = append(sc.cl.Nodes, workload.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", r.IntN(2)),
			Capacity: c, Speed: []float64{0.5, 1, 1.5}[r.IntN(3)]})
	}
	var bg *SeriesLoad
	if r.IntN(2) == 0 {
		bg, _ = RandomLoad(r, nodes, WithLoadStep(time.Duration(1+r.IntN(30))*time.Second), WithMemoryLevel(0, 0.15))
	}
	// minCap is the least room any node ever has beside its background.
	var minCap resource.Tuple
	for i, n := range sc.cl.Nodes {
		room := n.Capacity
		if bg != nil {
			room[workload.SlotCPU] = int64(float64(room[workload.SlotCPU]) * (1 - slices.Max(bg.CPU[i].Values)))
			room[workload.SlotMemory] = int64(float64(room[workload.SlotMemory]) * (1 - bg.Memory[i]))
		}
		if i == 0 {
			minCap = room
		}
		minCap = minCap.Min(room)
	}
	jobs := 1 + r.IntN(4)
	var at time.Duration
	for j := range jobs {
		at += time.Duration(r.IntN(5)) * time.Second
		job := workload.Job{ID: fmt.Sprintf("j%d", j), Queue: fmt.Sprintf("q%d", r.IntN(2)), Submit: at, App: "prop", Logic: fmt.Sprintf("logic%d", r.IntN(2))}
		tasks := 1 + r.IntN(5)
		for k := range tasks {
			kind := workload.Map
			if k > 0 && r.IntN(3) == 0 {
				kind = workload.Reduce
			}
			var st []stage.Stage
			peak := tuple(0, 0, 0, 0)
			for range 1 + r.IntN(3) {
				d := tuple(int64(100*(1+r.IntN(15))), minCap[workload.SlotMemory]*int64(1+r.IntN(7))/10, int64(r.IntN(60))<<20, int64(r.IntN(60))<<20)
				d = d.Min(minCap.Scale(0.8))
				st = append(st, stage.Stage{Duration: time.Duration(1+r.IntN(20)) * time.Second / 2, Demand: d})
				peak = peak.Max(d)
			}
			req := peak.Scale(0.5 + r.Float64()).Min(minCap.Scale(0.8)) // under- or over-declared
			t := workload.Task{ID: fmt.Sprintf("j%d/t%d", j, k), Kind: kind, InputBytes: int64(k % 2),
				True: stage.MustProfile(workload.Schema(), st...), Request: req}
			if kind == workload.Map && r.IntN(2) == 0 {
				t.Blocks = []int{len(sc.w.Blocks)}
				sc.w.Blocks = append(sc.w.Blocks, int64(1+r.IntN(200))<<20)
			}
			job.Tasks = append(job.Tasks, t)
		}
		sc.w.Jobs = append(sc.w.Jobs, job)
	}
	sc.w.Name = fmt.Sprintf("prop-%d", seed)
	sc.room = minCap
	sc.p = Policies()[r.IntN(5)]
	sc.opts = []Option{WithTaskRecords(), WithTimeLimit(24 * time.Hour), WithMode(Mode(r.IntN(2))),
		WithHeartbeat(time.Duration(1+r.IntN(3)) * 500 * time.Millisecond)}
	if bg != nil {
		sc.opts = append(sc.opts, WithBackground(bg))
	}
	if r.IntN(3) == 0 {
		sc.opts = append(sc.opts, WithFailures(NodeFailure{Node: sc.cl.Nodes[r.IntN(nodes)].ID,
			At: time.Duration(r.IntN(20)) * time.Second, Down: time.Duration(1+r.IntN(30)) * time.Second}))
	}
	return sc
}

// conserved reports, as an error, how a result breaks conservation: every task finishes
// exactly once, after its counted killed runs; nothing is lost.
func conserved(w *workload.Workload, r *Result) error {
	s := r.Summary
	switch {
	case s.Tasks != w.NumTasks() || len(r.Tasks) != s.Tasks:
		return fmt.Errorf("tasks %d, records %d, workload %d", s.Tasks, len(r.Tasks), w.NumTasks())
	case s.JobsFinished != s.Jobs:
		return fmt.Errorf("%d of %d jobs finished", s.JobsFinished, s.Jobs)
	case s.Placements != s.Tasks+s.OOMKills+s.Mixed.ShrinkKills+s.NodeKills+s.Preemptions+s.Reclaims:
		return fmt.Errorf("placements %d != tasks %d + kills %d + shrink kills %d + node kills %d + evictions %d + %d", s.Placements, s.Tasks, s.OOMKills, s.Mixed.ShrinkKills, s.NodeKills, s.Preemptions, s.Reclaims)
	case len(r.Evictions) != s.Preemptions+s.Reclaims:
		return fmt.Errorf("%d eviction records, %d preemptions + %d reclaims", len(r.Evictions), s.Preemptions, s.Reclaims)
	case s.SmallTasks.N+s.LargeTasks.N != s.Tasks:
		return fmt.Errorf("small %d + large %d finishes != %d tasks", s.SmallTasks.N, s.LargeTasks.N, s.Tasks)
	}
	kills, evictions := 0, 0
	var lost time.Duration
	for _, x := range r.Tasks {
		kills += x.Kills
		evictions += x.Evictions
		lost += x.Lost
		if !(x.Submitted <= x.Start && x.Start < x.Finish) {
			return fmt.Errorf("task %s: submitted %v, start %v, finish %v", x.ID, x.Submitted, x.Start, x.Finish)
		}
	}
	if kills != s.OOMKills+s.Mixed.ShrinkKills {
		return fmt.Errorf("task kills %d != %d + %d", kills, s.OOMKills, s.Mixed.ShrinkKills)
	}
	if evictions != s.Preemptions+s.Reclaims || lost != s.PreemptedWork {
		return fmt.Errorf("task evictions %d (lost %v) != %d + %d (lost %v)", evictions, lost, s.Preemptions, s.Reclaims, s.PreemptedWork)
	}
	for _, j := range r.Jobs {
		if !(j.Submit <= j.FirstStart && j.FirstStart <= j.Done) {
			return fmt.Errorf("job %s: submit %v, first start %v, done %v", j.ID, j.Submit, j.FirstStart, j.Done)
		}
	}
	return nil
}

// Conservation and determinism on random tiny scenarios: every run finishes every task
// exactly once, and a second run of the same scenario writes the same bytes.
func TestPropertyConservationAndDeterminism(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("no task lost; same inputs, same result", prop.ForAll(func(seed uint64) string {
		sc := drawScenario(seed)
		r1, err := Run(&sc.w, &sc.cl, sc.p, sc.opts...)
		if err != nil {
			return err.Error()
		}
		if err := conserved(&sc.w, r1); err != nil {
			return sc.p.Name + ": " + err.Error()
		}
		sc2 := drawScenario(seed)
		r2, err := Run(&sc2.w, &sc2.cl, sc2.p, sc2.opts...)
		if err != nil {
			return err.Error()
		}
		if !bytes.Equal(csvOf(t, r1), csvOf(t, r2)) {
			return "two runs differ"
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// Utilisation never exceeds capacity on any dimension (the fluid model shares
// compressible ones, kills on non-compressible ones), and the time average of a node's
// usage is between 0 and 1.
func TestPropertyWithinCapacity(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("used + background ≤ capacity", prop.ForAll(func(seed uint64) string {
		sc := drawScenario(seed)
		r, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithSampleEvery(250*time.Millisecond))...)
		if err != nil {
			return err.Error()
		}
		for _, s := range r.Samples {
			for k := range r.Dims {
				if u := s.Used[k] + s.Background[k]; u > 1+1e-6 || s.Used[k] < 0 {
					return fmt.Sprintf("at %v dim %s: used %v + background %v", s.At, r.Dims[k], s.Used[k], s.Background[k])
				}
			}
		}
		for k := range r.Dims {
			if u := r.Summary.Used[k]; u < 0 || u > 1+1e-6 {
				return fmt.Sprintf("mean used %v on %s", u, r.Dims[k])
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// drawPreemptScenario is drawScenario with priorities, gangs and preemption: every
// job gets a priority of 0–2, about a third become gangs of 2 up to all their map
// tasks (MinMember), and the policy is request-based or FGM-like DRF with priority
// preemption, guarantee preemption (every queue guaranteed a share, a random reclaim
// delay) or both, and a short random gang timeout. A gang's tasks use and declare at
// most 80% of the least room of a node over MinMember, and have a logic of their own
// (so no estimate learned from other tasks predicts more), so that the gang fits one
// node whole: a gang that fits nowhere would rightly wait for ever.
func drawPreemptScenario(seed uint64) scenario {
	sc := drawScenario(seed)
	r := rand.New(rand.NewPCG(seed, 13))
	for i := range sc.w.Jobs {
		j := &sc.w.Jobs[i]
		j.Priority = r.IntN(3)
		maps := j.NumTasks(workload.Map)
		if maps < 2 || r.IntN(3) != 0 {
			continue
		}
		j.MinMember = 2 + r.IntN(maps-1)
		j.Logic = "gang-" + j.ID
		limit := sc.room.Scale(0.8 / float64(j.MinMember))
		for k := range j.Tasks {
			t := &j.Tasks[k]
			st := t.True.Stages()
			for x := range st {
				st[x].Demand = st[x].Demand.Min(limit)
			}
			t.True = stage.MustProfile(workload.Schema(), st...)
			t.Request = t.Request.Min(limit)
		}
	}
	cfg := finegrain.PreemptionConfig{Priority: r.IntN(3) != 0, ReclaimDelay: time.Duration(r.IntN(6)) * time.Second}
	cfg.Guarantees = !cfg.Priority || r.IntN(2) == 0
	opts := []finegrain.Option{finegrain.WithOrdering(fairness.DRF{}), finegrain.WithPreemption(cfg),
		finegrain.WithGangTimeout(time.Duration(2+r.IntN(19)) * time.Second)}
	feedback := r.IntN(2) == 0
	if !feedback {
		opts = append(opts, finegrain.WithPrediction(false))
	}
	share := []float64{0.2, 0.4, 0.5}[r.IntN(3)]
	sc.p = Policy{Name: fmt.Sprintf("DRF%+v", cfg), Options: opts, Feedback: feedback,
		Queue: func(string, int) []fairness.Option { return []fairness.Option{fairness.MinShare(share)} }}
	sc.opts = append(sc.opts, WithTimeLimit(time.Hour)) // the runs end in minutes
	return sc
}

// Preemption and gangs on random tiny scenarios: every task finishes exactly once (an
// evicted run is charged and runs again), the run ends, no gang ever runs short of its
// MinMember before it has gathered, and a second run writes the same bytes.
func TestPropertyPreemptionAndGangs(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("no task lost or run twice; gangs whole; same inputs, same result", prop.ForAll(func(seed uint64) string {
		sc := drawPreemptScenario(seed)
		r1, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithTaskRecords())...)
		if err != nil {
			return sc.p.Name + ": " + err.Error()
		}
		if err := conserved(&sc.w, r1); err != nil {
			return sc.p.Name + ": " + err.Error()
		}
		if r1.Summary.PartialGangs != 0 {
			return fmt.Sprintf("%s: %d partial gang runs", sc.p.Name, r1.Summary.PartialGangs)
		}
		sc2 := drawPreemptScenario(seed)
		r2, _ := Run(&sc2.w, &sc2.cl, sc2.p, append(sc2.opts, WithTaskRecords())...)
		if r2 == nil || !bytes.Equal(csvOf(t, r1), csvOf(t, r2)) || !slices.Equal(r1.Evictions, r2.Evictions) {
			return "two runs differ"
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// Scenarios TestPropertyPreemptionAndGangs drew. Seed 9862792245023793551: on one
// slow node, a high-priority task predicted below its true memory was killed, placed
// on the same prediction beside others, and killed again for an hour while it
// preempted them in turn; no job finished. A failed task now holds its request, then
// more (plugins.Prediction). Seed 0: that escalation asked for more memory than any
// node had beside the other applications' load, and the task waited for ever; it now
// stops at what some node offers (cluster.State.Offers). Seeds 15274454634811251853
// and 6545768874873355781: a gang's raised members no longer fit the node together,
// and the gang never gathered; a gang's members now keep to their requests. The loops
// were found with each stage using its whole demand and the true stages handed over;
// under the measured default, seed 6545768874873355781 kills a small task 25 times in
// 13 s beside the node's oldest run, predicted below its use from a sampled series,
// until that run ends (the oldest run is never the victim while others run): the
// loop ends, and the runs must all finish.
func TestKillLoopEnds(t *testing.T) {
	for _, seed := range []uint64{9862792245023793551, 0, 15274454634811251853, 6545768874873355781} {
		for _, o := range []Option{WithVariation(NoVariation), WithObserve(Oracle)} {
			sc := drawPreemptScenario(seed)
			r, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithVariation(NoVariation), o)...)
			require.NoError(t, err, "seed %d", seed)
			assert.Equal(t, len(sc.w.Jobs), r.Summary.JobsFinished, "seed %d", seed)
			assert.Less(t, r.Summary.OOMKills, 20, "seed %d", seed)
		}
		sc := drawPreemptScenario(seed)
		r, err := Run(&sc.w, &sc.cl, sc.p, sc.opts...)
		require.NoError(t, err, "seed %d, measured", seed)
		assert.Equal(t, len(sc.w.Jobs), r.Summary.JobsFinished, "seed %d, measured", seed)
	}
}
