package sim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// recorder is the reference scheduler with every observation it is handed kept.
type recorder struct {
	*finegrain.Scheduler
	obs map[string]predict.Observation
}

func (r *recorder) Finished(id string, now time.Duration, obs *predict.Observation) error {
	if obs != nil {
		r.obs[id] = *obs
	}
	return r.Scheduler.Finished(id, now, obs)
}

func recording() (Policy, *recorder) {
	rec := &recorder{obs: map[string]predict.Observation{}}
	p := FGM()
	p.New = func(schema *resource.Schema) (Scheduler, error) {
		s, err := finegrain.New(schema)
		rec.Scheduler = s
		return rec, err
	}
	return p, rec
}

// Measured (the default): a finished task hands the scheduler the series its node agent
// sampled every 3 s, from its first stage to its end — averages of what it got on CPU,
// the high-water mark of its memory — and never a profile. The oracle hands the true stages.
func TestAgentSeries(t *testing.T) {
	cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
	// Two stages: 10 s at 1 core and 1 GiB, then 5 s at 2 cores and 2 GiB.
	two := oneStage(10*time.Second, tuple(1000, gib, 0, 0))
	st := append(two.Stages(), oneStage(5*time.Second, tuple(2000, 2*gib, 0, 0)).Stages()...)
	w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, tuple(2000, 2*gib, 0, 0), stage.MustProfile(workload.Schema(), st...))}}

	p, rec := recording()
	_, err := Run(&w, &cl, p, WithVariation(NoVariation))
	require.NoError(t, err)
	obs := rec.obs["j/m0"]
	assert.Zero(t, obs.Profile.Len(), "no profile handed over")
	var at []time.Duration
	var cpu, mem []int64
	for _, s := range obs.Series.Samples {
		at = append(at, s.At)
		cpu = append(cpu, s.Usage[workload.SlotCPU])
		mem = append(mem, s.Usage[workload.SlotMemory])
	}
	start := at[0]
	for i := range at {
		at[i] -= start
	}
	// The agent samples on its node's clock (every third beat: at 2 s, 5 s, …), the
	// task's first interval is the part of one before it.
	assert.Equal(t, []time.Duration{0, 2 * time.Second, 5 * time.Second, 8 * time.Second, 11 * time.Second, 14 * time.Second}, at)
	assert.Equal(t, start+15*time.Second, obs.Series.End, "to the task's end")
	assert.Equal(t, []int64{1000, 1000, 1000, (2*1000 + 2000) / 3, 2000, 2000}, cpu, "[8 s, 11 s): two thirds at 1 core, a third at 2")
	assert.Equal(t, []int64{gib, gib, gib, 2 * gib, 2 * gib, 2 * gib}, mem, "memory: the most held in the interval")
	assert.Nil(t, obs.Series.Compression, "never compressed")

	p, rec = recording()
	_, err = Run(&w, &cl, p, WithVariation(NoVariation), WithObserve(Oracle))
	require.NoError(t, err)
	obs = rec.obs["j/m0"]
	assert.Zero(t, obs.Series.Len())
	require.Equal(t, 2, obs.Profile.Len(), "the oracle hands the true stages")
	assert.Equal(t, 10*time.Second, obs.Profile.Stage(0).Duration)
}

// The variation model: usage never exceeds the stage's demand, CPU moves around the
// level, memory grows through the stage; the same task draws the same usage.
func TestVariation(t *testing.T) {
	cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
	w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, tuple(2000, 2*gib, 0, 0),
		oneStage(100*time.Second, tuple(2000, 2*gib, 0, 0)))}}
	series := func() []predict.Sample {
		p, rec := recording()
		_, err := Run(&w, &cl, p)
		require.NoError(t, err)
		return rec.obs["j/m0"].Series.Samples
	}
	a := series()
	assert.Equal(t, a, series(), "deterministic")
	var sum float64
	for i, s := range a {
		assert.LessOrEqual(t, s.Usage[workload.SlotCPU], int64(2000))
		assert.LessOrEqual(t, s.Usage[workload.SlotMemory], 2*gib)
		if i > 0 {
			assert.GreaterOrEqual(t, s.Usage[workload.SlotMemory], a[i-1].Usage[workload.SlotMemory], "memory grows")
		}
		sum += float64(s.Usage[workload.SlotCPU])
	}
	mean := sum / float64(len(a))
	assert.InDelta(t, 0.8*2000, mean, 0.1*2000, "CPU around 80%% of the demand")
	assert.InDelta(t, 0.7*float64(2*gib), float64(a[0].Usage[workload.SlotMemory]), 0.05*float64(2*gib), "memory starts at 70%%")
}

func TestAgentOptions(t *testing.T) {
	for _, o := range []Option{
		WithObserve(Observe(9)), WithAgentEvery(0), WithAgentEvery(-time.Second), WithRedivideEvery(0),
		WithVariation(Variation{Level: 0}), WithVariation(Variation{Level: 1, MemoryStart: 0}),
		WithVariation(Variation{Level: 1, MemoryStart: 1, Jitter: math.NaN()}),
		WithVariation(Variation{Level: 1, MemoryStart: 1, Persistence: 1}),
		WithVariation(Variation{Level: 1, MemoryStart: 1, Spike: 1.5}),
	} {
		var c config
		assert.ErrorIs(t, o(&c), ErrInvalidOption)
	}
	o, err := ParseObserve("oracle")
	require.NoError(t, err)
	assert.Equal(t, "oracle", o.String())
	_, err = ParseObserve("truth")
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// Memory is read as its high-water mark since the previous sample: a stage that drops
// its memory is not learned one sample early.
func TestAgentMemoryHighWaterMark(t *testing.T) {
	cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
	st := append(oneStage(10*time.Second, tuple(1000, 2*gib, 0, 0)).Stages(), oneStage(5*time.Second, tuple(1000, gib, 0, 0)).Stages()...)
	w := workload.Workload{Name: "one", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, 2*gib, 0, 0), stage.MustProfile(workload.Schema(), st...))}}
	p, rec := recording()
	_, err := Run(&w, &cl, p, WithVariation(NoVariation))
	require.NoError(t, err)
	var mem []int64
	for _, s := range rec.obs["j/m0"].Series.Samples {
		mem = append(mem, s.Usage[workload.SlotMemory])
	}
	assert.Equal(t, []int64{2 * gib, 2 * gib, 2 * gib, 2 * gib, gib, gib}, mem, "[8 s, 11 s) held 2 GiB until 10 s")
}

// A run that was never sampled (its stages took no time once its input arrived)
// reports no observation, and the simulation goes on.
func TestAgentNoSampleNoObservation(t *testing.T) {
	s := &Sim{schema: workload.Schema()}
	x := &exec{task: &simTask{wt: &workload.Task{ID: "t"}}}
	assert.Nil(t, s.measured(x))
	x.sampling, x.sampleAt = true, s.now
	assert.Nil(t, s.measured(x), "sampled from now: nothing yet")
}

// runRecorder is the reference scheduler with the running reports it is handed kept:
// the sample counts of each task's reports, and the placements made on a prediction
// before any task finished.
type runRecorder struct {
	*finegrain.Scheduler
	reports        map[string][]int
	finished       int
	predictedEarly int
}

func (r *runRecorder) ReportRunning(id string, now time.Duration, obs predict.Observation) error {
	r.reports[id] = append(r.reports[id], obs.Series.Len())
	return r.Scheduler.ReportRunning(id, now, obs)
}

func (r *runRecorder) Finished(id string, now time.Duration, obs *predict.Observation) error {
	r.finished++
	return r.Scheduler.Finished(id, now, obs)
}

func (r *runRecorder) Heartbeat(node string, now time.Duration) (finegrain.Decision, error) {
	d, err := r.Scheduler.Heartbeat(node, now)
	for _, a := range d.Assignments {
		if a.Predicted && r.finished == 0 {
			r.predictedEarly++
		}
	}
	return d, err
}

// A run placed on its request is reported to the scheduler at its 1st, 2nd, 4th, ...
// sample; from the reports, the scheduler places its siblings on what it uses before
// any of them has finished — unless its estimator does not learn from running tasks.
func TestAgentReportsRunningTasks(t *testing.T) {
	cl := oneNode(tuple(5000, 8*gib, 100<<20, 100<<20))
	// Eight 2-minute tasks using half a core of the two they ask for: two fit by
	// request, with a core to spare, and a third on what they use within FGM's max
	// share (FGMMaxShare: 4.5 of the node's 5 cores).
	var profiles []stage.Profile
	for range 8 {
		profiles = append(profiles, oneStage(2*time.Minute, tuple(500, gib, 0, 0)))
	}
	w := workload.Workload{Name: "siblings", Jobs: []workload.Job{handJob("j", "q", 0, tuple(2000, 2*gib, 0, 0), profiles...)}}
	run := func(opts ...predict.EstimatorOption) *runRecorder {
		rec := &runRecorder{reports: map[string][]int{}}
		p := FGM()
		p.New = func(schema *resource.Schema) (Scheduler, error) {
			est, err := predict.NewSimilarTask(schema, opts...)
			if err != nil {
				return nil, err
			}
			s, err := finegrain.New(schema, finegrain.WithEstimator(est))
			rec.Scheduler = s
			return rec, err
		}
		res, err := Run(&w, &cl, p, WithVariation(NoVariation))
		require.NoError(t, err)
		assert.Zero(t, res.Summary.ObsRejected)
		return rec
	}
	rec := run()
	require.NotEmpty(t, rec.reports["j/m0"])
	assert.Equal(t, []int{1, 2, 4, 8, 16, 32}, rec.reports["j/m0"], "at the 1st, 2nd, 4th ... of its 40 samples")
	assert.Positive(t, rec.predictedEarly, "siblings placed on a report before any task finished")
	for id, counts := range rec.reports {
		assert.Equal(t, 1, counts[0], "%s: reported from its first sample", id)
	}

	rec = run(predict.WithoutRunning())
	assert.Zero(t, rec.predictedEarly, "without learning from running tasks, every sibling waits for a finish")
}
