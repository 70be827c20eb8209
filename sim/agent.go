package sim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Observe is what a policy with Feedback is told of a finished task.
type Observe uint8

const (
	// Measured (the default): the usage series the node agent sampled while the task
	// ran (predict.Series), which the scheduler's estimator divides into stages itself.
	// No stage boundary and no exact peak is handed over.
	Measured Observe = iota
	// Oracle is an ablation: the task's true stages, their boundaries as they ran, the
	// exact peak of their non-compressible usage and the average of what they got on the
	// compressible dimensions — what no node agent can know. It shows what the
	// measurement costs.
	Oracle
)

func (o Observe) String() string {
	switch o {
	case Measured:
		return "measured"
	case Oracle:
		return "oracle"
	}
	return fmt.Sprintf("Observe(%d)", uint8(o))
}

// ParseObserve is the inverse of Observe.String.
func ParseObserve(s string) (Observe, error) {
	switch s {
	case "measured":
		return Measured, nil
	case "oracle":
		return Oracle, nil
	}
	return 0, fieldErr("observe", s, ErrInvalidOption)
}

// Variation is how a task's true usage moves within a stage of its true profile (the
// execution model's step 3 uses the usage, not the stage's demand). A stage's demand
// (workload.Task.True) is the most it can use; each node beat (every heartbeat) its
// usage is redrawn:
//
//   - on the compressible dimensions (CPU, bandwidth), one level for all of them: Level
//     plus autocorrelated jitter — an AR(1) process z ← φz + √(1 − φ²)ε with ε standard
//     normal, φ = Persistence — scaled by Jitter, clamped to [0.05, 1]; with chance Spike
//     a beat is a spike at the stage's full demand;
//   - on the non-compressible dimensions (memory), a linear growth through the stage
//     from MemoryStart of the demand when the stage starts to all of it when it ends,
//     read at each beat from the stage's progress.
//
// The draws come from a source seeded by the task's ID and the run's number, so a run is
// the same whatever the policy, as far as it runs the same. NoVariation is the constant
// usage of earlier versions: every stage uses its demand throughout.
type Variation struct {
	// Level is the mean compressible usage, as a share of the stage's demand, in (0, 1].
	Level float64
	// Jitter is the standard deviation of the jitter, as a share of the demand, ≥ 0.
	Jitter float64
	// Persistence is φ, the jitter's correlation from one beat to the next, in [0, 1).
	Persistence float64
	// Spike is the chance per beat of a spike to the full demand, in [0, 1].
	Spike float64
	// MemoryStart is the share of its non-compressible demand a stage uses when it
	// starts, in (0, 1].
	MemoryStart float64
}

// DefaultVariation is the simulator's default within-stage usage: CPU at 80% of the
// stage's demand on average, ±10% jitter that lasts (φ = 0.8 a second, about five
// seconds' memory), a spike to the full demand one beat in twenty; memory growing from
// 70% to 100% of the stage's demand. The stage demand stays the most a task can use,
// so the baselines' requests (above the true peak) stay valid.
var DefaultVariation = Variation{Level: 0.8, Jitter: 0.1, Persistence: 0.8, Spike: 0.05, MemoryStart: 0.7}

// NoVariation makes every stage use its whole demand throughout.
var NoVariation = Variation{Level: 1, MemoryStart: 1}

func (v Variation) validate() error {
	switch {
	case !(v.Level > 0 && v.Level <= 1):
		return fieldErr("variation level", v.Level, ErrInvalidOption)
	case !(v.Jitter >= 0) || math.IsInf(v.Jitter, 1):
		return fieldErr("variation jitter", v.Jitter, ErrInvalidOption)
	case !(v.Persistence >= 0 && v.Persistence < 1):
		return fieldErr("variation persistence", v.Persistence, ErrInvalidOption)
	case !(v.Spike >= 0 && v.Spike <= 1):
		return fieldErr("variation spike", v.Spike, ErrInvalidOption)
	case !(v.MemoryStart > 0 && v.MemoryStart <= 1):
		return fieldErr("variation memory start", v.MemoryStart, ErrInvalidOption)
	}
	return nil
}

// constant reports whether v is NoVariation's constant usage.
func (v Variation) constant() bool { return v.Level == 1 && v.Jitter == 0 && v.MemoryStart == 1 }

// Defaults of the node agent.
const (
	// DefaultAgentEvery is how often a node agent samples the usage of the tasks on
	// its node: 3 s, Hadoop YARN's container monitor
	// (yarn.nodemanager.container-monitor.interval-ms). It is rounded up to whole
	// heartbeats.
	DefaultAgentEvery = 3 * time.Second
	// DefaultRedivideEvery is how often the scheduler's estimator is asked to
	// re-divide stages (predict.Redivider): every minute of simulated time.
	DefaultRedivideEvery = time.Minute
)

// WithObserve sets what policies with Feedback learn from: Measured (the default) or
// the Oracle ablation.
func WithObserve(o Observe) Option {
	return func(c *config) error {
		if o != Measured && o != Oracle {
			return fieldErr("observe", o, ErrInvalidOption)
		}
		c.observe = o
		return nil
	}
}

// WithVariation sets how true usage moves within a stage; default DefaultVariation.
func WithVariation(v Variation) Option {
	return func(c *config) error {
		if err := v.validate(); err != nil {
			return err
		}
		c.variation = v
		return nil
	}
}

// WithAgentEvery sets how often node agents sample usage (the series a finished task
// reports, and the intervals of the usage windows); positive, at most MaxPeriod,
// rounded up to whole heartbeats. Default DefaultAgentEvery.
func WithAgentEvery(d time.Duration) Option {
	return func(c *config) error {
		if err := period("agent every", d); err != nil {
			return err
		}
		c.agentEvery = d
		return nil
	}
}

// WithRedivideEvery sets how often the scheduler's estimator re-divides stages, when it
// can (predict.Redivider, reached through the scheduler's Estimator method); positive,
// at most MaxPeriod. Default DefaultRedivideEvery.
func WithRedivideEvery(d time.Duration) Option {
	return func(c *config) error {
		if err := period("redivide every", d); err != nil {
			return err
		}
		c.redivideEvery = d
		return nil
	}
}

// usageModel is a run's state of the Variation model.
type usageModel struct {
	r *rand.Rand
	z float64 // the AR(1) jitter
}

// newUsage seeds run number run of task id.
func newUsage(id string, run uint64) usageModel {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return usageModel{r: rand.New(rand.NewPCG(h.Sum64(), run))}
}

// redraw moves run x's usage on to the next beat: a new compressible level, and the
// memory of its stage's progress. The caller recomputes the node.
func (s *Sim) redraw(x *exec) {
	v := s.cfg.variation
	if v.constant() || x.idx < 0 {
		return
	}
	phi := v.Persistence
	x.usage.z = phi*x.usage.z + math.Sqrt(1-phi*phi)*x.usage.r.NormFloat64()
	x.level = min(max(v.Level+v.Jitter*x.usage.z, 0.05), 1)
	if v.Spike > 0 && x.usage.r.Float64() < v.Spike {
		x.level = 1
	}
	s.applyUsage(x)
}

// applyUsage sets x's true usage from its stage's demand, its compressible level and its
// progress through the stage.
func (s *Sim) applyUsage(x *exec) {
	if v := s.cfg.variation; v.constant() || x.idx < 0 {
		x.use = x.demand
	} else {
		work := x.stageWork()
		frac := 0.0
		if work > 0 {
			frac = min(max(1-x.remaining/work, 0), 1)
		}
		mem := v.MemoryStart + (1-v.MemoryStart)*frac
		comp := s.schema.Compressible()
		for k := 0; k < s.schema.Len(); k++ {
			f := mem
			if comp.Has(k) {
				f = x.level
			}
			x.use[k] = int64(float64(x.demand[k]) * f)
		}
	}
	x.peak = x.peak.Max(x.use)
	x.sampleHWM = x.sampleHWM.Max(x.use)
}

// runningReporter is the optional call through which the node agents of a policy
// with Feedback report what a task still running has used so far
// (finegrain.Scheduler.ReportRunning).
type runningReporter interface {
	ReportRunning(task string, now time.Duration, obs predict.Observation) error
}

var _ runningReporter = (*finegrain.Scheduler)(nil)

// sampleTasks is the node agent's sample at now of every task computing on node n
// (moving input is not sampled): the average of what it got on the compressible
// dimensions since its last sample, as cumulative counters give it (cgroup CPU time,
// I/O bytes), and the most it held on the others meanwhile, as a high-water mark reset
// at each reading gives it (cgroup v2 memory.peak); with the largest compression it
// experienced meanwhile. Under Measured, a run placed on its request (its key had no
// prediction) is reported to a scheduler that takes running reports (runningReporter)
// at its 1st, 2nd, 4th, 8th, ... sample: its series so far, from which the scheduler
// may predict its pending siblings before any of them finishes. Under ScaleUp every
// run is so reported, predicted or not, under Oracle too: the scale-up rounds' T1–T2
// read the peak of what it used.
func (s *Sim) sampleTasks(n *node) {
	rr, report := s.sched.(runningReporter)
	report = report && (s.cfg.observe == Measured || s.pol.ScaleUp)
	for _, x := range n.running {
		s.sampleTask(x)
		if k := len(x.series); report && k > 0 && k&(k-1) == 0 && !x.backup && (!x.task.predicted || s.pol.ScaleUp) {
			s.reportRunning(rr, x)
		}
	}
}

// reportRunning reports running run x's series so far to the scheduler. A report the
// scheduler refuses is counted with the refused observations (Summary.ObsRejected).
func (s *Sim) reportRunning(rr runningReporter, x *exec) {
	sr := predict.Series{Samples: x.series, End: s.now}
	if x.anyRC {
		sr.Compression = x.seriesRC
	}
	if err := rr.ReportRunning(x.task.wt.ID, s.now, predict.Observation{Series: sr}); err != nil {
		s.m.obsRejected++
	}
}

// sampleTask appends x's sample for [x.sampleAt, now) to its series.
func (s *Sim) sampleTask(x *exec) {
	if !x.sampling {
		return
	}
	dt := s.now - x.sampleAt
	if dt <= 0 {
		return
	}
	x.series = append(x.series, predict.Sample{At: x.sampleAt, Usage: s.reading(x.allocInt, dt, x.sampleHWM)})
	x.seriesRC = append(x.seriesRC, x.sampleRC)
	x.anyRC = x.anyRC || x.sampleRC != resource.Vector{}
	x.sampleAt, x.allocInt, x.sampleRC, x.sampleHWM = s.now, resource.Vector{}, resource.Vector{}, x.use
}

// reading is what is read of a run over d: the average of what it got (integral, in
// unit·seconds) on the compressible dimensions, peak on the others.
func (s *Sim) reading(integral resource.Vector, d time.Duration, peak resource.Tuple) resource.Tuple {
	sec := d.Seconds()
	u := peak
	comp := s.schema.Compressible()
	for k := 0; k < s.schema.Len(); k++ {
		if comp.Has(k) {
			u[k] = int64(math.Round(integral[k] / sec))
		}
	}
	return u
}

// measured is what the node agent reports of the finished run x: its sampled series,
// the last sample however short. A run with no sample at all (its stages took no time
// after its input arrived) reports nothing: nil.
func (s *Sim) measured(x *exec) *predict.Observation {
	s.sampleTask(x)
	if len(x.series) == 0 {
		return nil
	}
	sr := predict.Series{Samples: x.series, End: s.now}
	if x.anyRC {
		sr.Compression = x.seriesRC
	}
	return &predict.Observation{Series: sr}
}

// oracle is the Oracle ablation's observation of the finished run x: the true stages as
// they ran (durations stretched by compression and node speed), the exact peak of their
// non-compressible usage, the time average of what they got on the compressible
// dimensions, and the largest compression of each.
func (x *exec) oracle(schema *resource.Schema) (predict.Observation, error) {
	p, err := stage.NewProfile(schema, x.obs...)
	if err != nil {
		return predict.Observation{}, fmt.Errorf("sim: observation of %q: %w", x.task.wt.ID, err)
	}
	o := predict.Observation{Profile: p}
	if x.anyRC {
		o.Compression = x.obsRC
	}
	return o, nil
}

// redivide asks the scheduler's estimator to re-divide stages, when it can.
func (s *Sim) redivide() {
	if e, ok := s.sched.(interface{ Estimator() predict.Estimator }); ok {
		if r, ok := e.Estimator().(predict.Redivider); ok {
			s.m.redivided += r.Redivide()
		}
	}
}
