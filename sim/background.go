package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// Background is the load other applications put on the nodes: the FGM paper's "cloud"
// environment (docs/methods.md §7), where scientific applications share the servers with
// the platform. The scheduler never sees it; the execution model adds it to the tasks'
// demand on every node, so it compresses tasks on compressible dimensions and can push
// a node's memory over its capacity (a task is then killed, as by the OOM killer).
type Background interface {
	// Load returns the demand on node i (an index into the cluster's Nodes, whose
	// capacity is capacity) at time t, and the time of its next change after t
	// (stage.Forever when it never changes again). The demand must be a valid
	// non-negative tuple of workload.Schema() (nothing in the slots past its
	// dimensions), and the next change must be after t: the simulator's New or Run fails
	// with an error wrapping ErrInvalidInput otherwise. The simulator asks for
	// non-decreasing t on each node.
	Load(i int, capacity resource.Tuple, t time.Duration) (resource.Tuple, time.Duration)
}

// SeriesLoad is a Background that replays CPU series (as fractions of each node's CPU)
// with a constant memory footprint per node: node i replays CPU[i mod len(CPU)] scaled
// by CPUScale and holds Memory[i mod len(Memory)] of its memory. Build one from
// PlanetLab traces (workload.LoadPlanetLabDir) or with RandomLoad.
type SeriesLoad struct {
	// CPU holds the series; each value is the fraction of a node's CPU in use.
	CPU []workload.Series
	// CPUScale multiplies every CPU value (the result is capped at 1): a server hosts
	// several of the traced VMs. 0 means 1.
	CPUScale float64
	// Memory holds the fraction of a node's memory the other applications hold, in
	// [0, 1); nil means none.
	Memory []float64
}

// Validate checks the load: at least one CPU series, each with a positive step and
// values in [0, 1]; a finite non-negative scale; memory fractions in [0, 1).
func (s *SeriesLoad) Validate() error {
	if len(s.CPU) == 0 {
		return fieldErr("SeriesLoad.CPU", 0, ErrInvalidInput)
	}
	for i, c := range s.CPU {
		if c.Step <= 0 || len(c.Values) == 0 {
			return fieldErr(fmt.Sprintf("SeriesLoad.CPU[%d] (%s)", i, c.Name), c.Step, ErrInvalidInput)
		}
		for k, v := range c.Values {
			if !(v >= 0 && v <= 1) {
				return fieldErr(fmt.Sprintf("SeriesLoad.CPU[%d].Values[%d]", i, k), v, ErrInvalidInput)
			}
		}
	}
	if !field.Finite(s.CPUScale) || s.CPUScale < 0 {
		return fieldErr("SeriesLoad.CPUScale", s.CPUScale, ErrInvalidInput)
	}
	for i, m := range s.Memory {
		if !(m >= 0 && m < 1) {
			return fieldErr(fmt.Sprintf("SeriesLoad.Memory[%d]", i), m, ErrInvalidInput)
		}
	}
	return nil
}

func (s *SeriesLoad) cpu(i int, t time.Duration) float64 {
	scale := s.CPUScale
	if scale == 0 {
		scale = 1
	}
	return min(1, s.CPU[i%len(s.CPU)].At(t)*scale)
}

// Load implements Background.
func (s *SeriesLoad) Load(i int, capacity resource.Tuple, t time.Duration) (resource.Tuple, time.Duration) {
	var d resource.Tuple
	d[workload.SlotCPU] = part(s.cpu(i, t), capacity[workload.SlotCPU])
	if len(s.Memory) > 0 {
		d[workload.SlotMemory] = part(s.Memory[i%len(s.Memory)], capacity[workload.SlotMemory])
	}
	// The next change: the first later step whose value differs, within one period;
	// none (Forever) past the last step boundary a time.Duration holds.
	c := s.CPU[i%len(s.CPU)]
	if t < 0 {
		t = 0
	}
	now := s.cpu(i, t)
	last := stage.Forever / c.Step // the boundaries are k × Step for k ≤ last
	for k, n := t/c.Step+1, 0; n < len(c.Values) && k <= last; k, n = k+1, n+1 {
		if next := k * c.Step; s.cpu(i, next) != now {
			return d, next
		}
	}
	return d, stage.Forever
}

// part returns f × c rounded, for f in [0, 1] and c ≥ 0: at most c, also where
// float64(c) rounds up to 2⁶³, which no int64 holds.
func part(f float64, c int64) int64 {
	x := math.Round(f * float64(c))
	if x >= float64(c) {
		return c
	}
	return int64(x)
}

// LoadOption configures RandomLoad. An invalid value, or a nil LoadOption, makes
// RandomLoad fail with an error wrapping ErrInvalidOption.
type LoadOption func(*loadConfig) error

type loadConfig struct {
	step, period   time.Duration
	cpuLo, cpuHi   float64
	noise, persist float64
	memLo, memHi   float64
}

// Defaults of RandomLoad: the "cloud" environment's other applications.
const (
	// DefaultLoadStep is how long each background CPU level holds: 1 minute.
	DefaultLoadStep = time.Minute
	// DefaultLoadPeriod is after how long a generated series repeats: 2 hours.
	DefaultLoadPeriod = 2 * time.Hour
	// MaxLoadSteps bounds the values of one generated series (period / step).
	MaxLoadSteps = 1 << 20
)

// WithLoadStep sets how long each level holds (default DefaultLoadStep); positive.
func WithLoadStep(d time.Duration) LoadOption {
	return func(c *loadConfig) error {
		if d <= 0 {
			return fieldErr("load step", d, ErrInvalidOption)
		}
		c.step = d
		return nil
	}
}

// WithLoadPeriod sets after how long a series repeats (default DefaultLoadPeriod); at
// least one step and at most MaxLoadSteps steps.
func WithLoadPeriod(d time.Duration) LoadOption {
	return func(c *loadConfig) error {
		if d <= 0 {
			return fieldErr("load period", d, ErrInvalidOption)
		}
		c.period = d
		return nil
	}
}

// WithCPULevel sets the range each node's mean background CPU fraction is drawn from,
// uniformly; 0 ≤ lo ≤ hi ≤ 1. Default [0.2, 0.6].
func WithCPULevel(lo, hi float64) LoadOption {
	return func(c *loadConfig) error {
		if !(lo >= 0 && lo <= hi && hi <= 1) {
			return fieldErr("cpu level", [2]float64{lo, hi}, ErrInvalidOption)
		}
		c.cpuLo, c.cpuHi = lo, hi
		return nil
	}
}

// WithCPUNoise sets how the level moves around a node's mean from step to step: an AR(1)
// process x ← mean + persistence × (x − mean) + sigma × Z, clamped to [0, 0.95].
// sigma in [0, 1], persistence in [0, 1). Default 0.1 and 0.8.
func WithCPUNoise(sigma, persistence float64) LoadOption {
	return func(c *loadConfig) error {
		if !(sigma >= 0 && sigma <= 1) {
			return fieldErr("cpu noise sigma", sigma, ErrInvalidOption)
		}
		if !(persistence >= 0 && persistence < 1) {
			return fieldErr("cpu noise persistence", persistence, ErrInvalidOption)
		}
		c.noise, c.persist = sigma, persistence
		return nil
	}
}

// WithMemoryLevel sets the range each node's background memory fraction is drawn from,
// uniformly; 0 ≤ lo ≤ hi < 1. Default [0.05, 0.15].
func WithMemoryLevel(lo, hi float64) LoadOption {
	return func(c *loadConfig) error {
		if !(lo >= 0 && lo <= hi && hi < 1) {
			return fieldErr("memory level", [2]float64{lo, hi}, ErrInvalidOption)
		}
		c.memLo, c.memHi = lo, hi
		return nil
	}
}

// RandomLoad generates a background for n nodes from the caller-owned source r: each
// node draws a mean CPU fraction (WithCPULevel), a series around it that moves every
// step (WithCPUNoise, WithLoadStep) and repeats after the period, and a constant memory
// fraction (WithMemoryLevel). The same r state and options give the same load.
func RandomLoad(r *rand.Rand, n int, opts ...LoadOption) (*SeriesLoad, error) {
	if r == nil {
		return nil, fieldErr("rand", nil, ErrInvalidOption)
	}
	if n < 1 {
		return nil, fieldErr("nodes", n, ErrInvalidOption)
	}
	c := loadConfig{step: DefaultLoadStep, period: DefaultLoadPeriod, cpuLo: 0.2, cpuHi: 0.6,
		noise: 0.1, persist: 0.8, memLo: 0.05, memHi: 0.15}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("load options[%d]", i), "nil", ErrInvalidOption)
		}
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	steps := c.period / c.step
	if steps < 1 || steps > MaxLoadSteps {
		return nil, fieldErr("load period / step", steps, ErrInvalidOption)
	}
	l := &SeriesLoad{CPU: make([]workload.Series, n), Memory: make([]float64, n)}
	for i := range n {
		mean := c.cpuLo + (c.cpuHi-c.cpuLo)*r.Float64()
		vals := make([]float64, int(steps))
		x := mean
		for k := range vals {
			x = mean + c.persist*(x-mean) + c.noise*r.NormFloat64()
			x = max(0, min(0.95, x))
			// Two decimals: levels as a monitoring agent reports them.
			vals[k] = math.Round(x*100) / 100
		}
		l.CPU[i] = workload.Series{Name: fmt.Sprintf("random-%d", i), Step: c.step, Values: vals}
		l.Memory[i] = c.memLo + (c.memHi-c.memLo)*r.Float64()
	}
	return l, nil
}
