package workload

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
)

// Option configures a generator (FGM, Thesis, FromSWIM, FromAlibaba2017) or FromOpenB.
// Each option says which generators use it; the others ignore it. An invalid value, or a nil
// Option, makes the generator return an error wrapping ErrInvalidOption.
type Option func(*config) error

type config struct {
	scale     float64
	queues    []string
	blockSize int64
	perReduce int64
	overLo    float64
	overHi    float64
	rounding  resource.Tuple
	jitter    float64
	maxTasks  int
	machine   int64   // machine memory for FromAlibaba2017 (WithMachineMemory); 0 = default
	lsFrac    float64 // the share of latency-sensitive jobs (WithLatencySensitive)
	sloFactor float64 // a latency-sensitive task's SLO over its true run time (WithSLOFactor)

	total   int64
	online  bool
	meanGap time.Duration
	sizes   InputSizes
	maxJob  int64
	apps    []AppClass
	weights []float64
}

// Defaults shared by the generators.
const (
	// DefaultBlockSize is the HDFS block size of the PRRL thesis (§4.3.1): 128 MiB.
	DefaultBlockSize = 128 * MiB
	// DefaultBytesPerReduce is the shuffle handled by one reduce task: 1 GiB, a common
	// rule of thumb (Hive's bytes-per-reducer default was 1 GB).
	DefaultBytesPerReduce = GiB
	// DefaultTotalInput is the FGM offline workload's total input (FGM §4.1): 400 GB,
	// read as 400 GiB, 3,200 blocks of 128 MiB.
	DefaultTotalInput = 400 * GiB
	// DefaultMaxJobInput caps one job's input in the FGM generator, together with a
	// quarter of the total input (the smaller wins): 64 GiB, 512 blocks.
	DefaultMaxJobInput = 64 * GiB
	// DefaultMeanInterarrival is the mean gap between job arrivals of the online FGM
	// workload: 1 s. The paper does not give its arrival rate, and Facebook's own (a
	// job every 14.7 s in FB-2009, 3.5 s in FB-2010) was for a cluster of hundreds of
	// nodes; at 1 s the default jobs (1.2 GB of input on average, about 280 core-
	// seconds of work each) keep roughly 80% of the 23-node FGM cluster's cores busy,
	// so the scheduler matters without the queue growing without bound.
	DefaultMeanInterarrival = time.Second
	// DefaultJitter is the generators' default Jitter.Sigma (Thesis: 0).
	DefaultJitter = 0.05
	// DefaultMaxTasks bounds the tasks a generator builds, to keep memory in check.
	DefaultMaxTasks = 2_000_000
	// DefaultSLOFactor is WithSLOFactor's default: a latency-sensitive task meets its
	// objective when it runs at most 1.5 times as long as it would alone on a node of
	// speed 1 with everything it demands — room for a half of its run time lost to
	// waiting for a slow node, compression or co-located load, and not more.
	DefaultSLOFactor = 1.5
)

// DefaultRequestRounding is the granularity requests are rounded up to: 100
// milli-cores, 128 MiB, 1 MiB/s of disk and network bandwidth.
func DefaultRequestRounding() resource.Tuple {
	return schema.MustTuple(100, 128*MiB, MiB, MiB)
}

func defaults() config {
	return config{
		scale:     1,
		queues:    []string{"queue1", "queue2", "queue3"},
		blockSize: DefaultBlockSize,
		perReduce: DefaultBytesPerReduce,
		overLo:    1.2,
		overHi:    1.5,
		rounding:  DefaultRequestRounding(),
		jitter:    DefaultJitter,
		maxTasks:  DefaultMaxTasks,
		total:     DefaultTotalInput,
		meanGap:   DefaultMeanInterarrival,
		sizes:     FB2009(),
		apps:      DefaultApps(),
		sloFactor: DefaultSLOFactor,
	}
}

func (c *config) apply(opts []Option) error {
	for i, o := range opts {
		if o == nil {
			return optErr(fmt.Sprintf("options[%d]", i), "nil")
		}
		if err := o(c); err != nil {
			return err
		}
	}
	return nil
}

func optErr(name string, v any) error { return fieldErr(name, v, ErrInvalidOption) }

// WithScale multiplies the size of the workload by f, a positive finite number at most
// 1000: FGM's total input, Thesis's number of jobs per class and queue (rounded, at
// least one), FromSWIM's byte counts, FromAlibaba2017's instances per task (rounded
// up). Default 1. Use it to keep a run small (e.g. 0.1).
func WithScale(f float64) Option {
	return func(c *config) error {
		if !field.Finite(f) || f <= 0 || f > 1000 {
			return optErr("scale", f)
		}
		c.scale = f
		return nil
	}
}

// WithQueues sets the queues jobs are submitted to: FGM, FromSWIM and FromAlibaba2017
// assign each job to one uniformly at random; Thesis submits its job mix to every
// queue. Names must be non-empty and distinct. Default "queue1", "queue2", "queue3" (the thesis' three
// queues; FGM's evaluation does not say how many users it had).
func WithQueues(names ...string) Option {
	return func(c *config) error {
		if len(names) == 0 {
			return optErr("queues", "none")
		}
		for i, n := range names {
			if n == "" {
				return optErr(fmt.Sprintf("queues[%d]", i), n)
			}
			for _, m := range names[:i] {
				if m == n {
					return fieldErr(fmt.Sprintf("queues[%d]", i), n, fmt.Errorf("%w: %w", ErrInvalidOption, ErrDuplicateID))
				}
			}
		}
		c.queues = append([]string(nil), names...)
		return nil
	}
}

// WithBlockSize sets the input block size, one map task per block (all generators).
// Default DefaultBlockSize (128 MiB). Must be positive.
func WithBlockSize(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return optErr("block size", bytes)
		}
		c.blockSize = bytes
		return nil
	}
}

// WithBytesPerReduce sets the shuffle bytes handled by one reduce task: a job with
// shuffle S gets ceil(S / bytes) reduce tasks, each handling bytes except the last,
// which handles the rest (FGM, FromSWIM). Default DefaultBytesPerReduce (1 GiB). Must
// be positive.
func WithBytesPerReduce(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return optErr("bytes per reduce", bytes)
		}
		c.perReduce = bytes
		return nil
	}
}

// WithOverestimate sets the range of the factor by which users over-declare: each job
// draws one factor uniformly in [lo, hi] and declares, for each task kind, the largest
// true peak of its tasks of that kind times the factor (see Overestimate). 0 < lo ≤ hi
// ≤ 100; lo < 1 models users who under-declare. Default [1.2, 1.5] (Thesis: [1, 1], a
// slot is exactly what a task takes).
func WithOverestimate(lo, hi float64) Option {
	return func(c *config) error {
		if !field.Finite(lo) || lo <= 0 || lo > 100 {
			return optErr("overestimate low", lo)
		}
		if !field.Finite(hi) || hi < lo || hi > 100 {
			return optErr("overestimate high", hi)
		}
		c.overLo, c.overHi = lo, hi
		return nil
	}
}

// WithRequestRounding sets the granularity declared requests are rounded up to, per
// dimension of Schema() (0 = whole units). Default DefaultRequestRounding().
func WithRequestRounding(t resource.Tuple) Option {
	return func(c *config) error {
		if err := schema.Validate(t); err != nil {
			return fieldErr("request rounding", schema.Format(t), fmt.Errorf("%w: %w", ErrInvalidOption, err))
		}
		c.rounding = t
		return nil
	}
}

// WithJitter sets the per-task jitter's sigma (see Jitter), in [0, 1] (all
// generators). Default DefaultJitter (0.05); Thesis default 0 (Table 4.2 gives one
// processing time per job type).
func WithJitter(sigma float64) Option {
	return func(c *config) error {
		if !field.Finite(sigma) || sigma < 0 || sigma > 1 {
			return optErr("jitter", sigma)
		}
		c.jitter = sigma
		return nil
	}
}

// WithMaxTasks sets the most tasks a generator may build; a workload that would have
// more is refused with ErrTooLarge before anything is built (all generators). Default
// DefaultMaxTasks. Must be positive.
func WithMaxTasks(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return optErr("max tasks", n)
		}
		c.maxTasks = n
		return nil
	}
}

// WithTotalInput sets the FGM workload's total input before scaling. Default
// DefaultTotalInput (400 GiB); the paper's online series is 50, 100, ..., 400 GB.
// Must be positive.
func WithTotalInput(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return optErr("total input", bytes)
		}
		c.total = bytes
		return nil
	}
}

// WithOnline makes the FGM workload online: jobs arrive as a Poisson process, the first
// at 0 and the others after exponentially distributed gaps of mean meanGap (FGM §4.1).
// Without it the workload is offline: every job at 0. meanGap must be positive.
func WithOnline(meanGap time.Duration) Option {
	return func(c *config) error {
		if meanGap <= 0 {
			return optErr("mean interarrival", meanGap)
		}
		c.online, c.meanGap = true, meanGap
		return nil
	}
}

// InputSizes is a distribution of job input sizes the FGM generator draws from: the
// seam for a distribution other than the Facebook ones. *QuantileTable implements it.
type InputSizes interface {
	// Name identifies the distribution in the workload's name.
	Name() string
	// Sample draws a size in [1, max] bytes (max ≥ 1) from the distribution truncated at
	// max, using only r for randomness. Values outside [1, max] are clamped.
	Sample(r *rand.Rand, max int64) int64
}

// WithInputSizes sets the job input-size distribution of the FGM generator. Default
// FB2009(). Must not be nil, nor a QuantileTable not built by NewQuantileTable or
// FitQuantileTable (such as &QuantileTable{}).
func WithInputSizes(q InputSizes) Option {
	return func(c *config) error {
		if q == nil || reflect.ValueOf(q).Kind() == reflect.Pointer && reflect.ValueOf(q).IsNil() {
			return optErr("input sizes", "nil")
		}
		if t, ok := q.(*QuantileTable); ok && len(t.knots) < 2 {
			return optErr("input sizes", fmt.Sprintf("a QuantileTable of %d knots (build it with NewQuantileTable)", len(t.knots)))
		}
		c.sizes = q
		return nil
	}
}

// WithMaxJobInput caps one job's input in the FGM generator: sizes are drawn from the
// distribution truncated at min(bytes, total input). Default: min(DefaultMaxJobInput,
// total input / 4), so that no single job dominates the workload. Must be positive.
func WithMaxJobInput(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return optErr("max job input", bytes)
		}
		c.maxJob = bytes
		return nil
	}
}

// WithApps sets the application classes jobs are drawn from (FGM, FromSWIM), with the
// given relative weights (nil weights: equal). Classes must be valid and have distinct
// names; weights must be finite, non-negative, not all zero, one per class. Default
// DefaultApps(), equal weights.
func WithApps(apps []AppClass, weights []float64) Option {
	return func(c *config) error {
		if len(apps) == 0 {
			return optErr("apps", "none")
		}
		if weights != nil && len(weights) != len(apps) {
			return optErr("app weights", fmt.Sprintf("%d weights for %d apps", len(weights), len(apps)))
		}
		sum := 0.0
		for i := range apps {
			if err := apps[i].Validate(); err != nil {
				return fmt.Errorf("workload: apps[%d]: %w: %w", i, ErrInvalidOption, err)
			}
			for j := range apps[:i] {
				if apps[j].Name == apps[i].Name {
					return fieldErr(fmt.Sprintf("apps[%d].Name", i), apps[i].Name, fmt.Errorf("%w: %w", ErrInvalidOption, ErrDuplicateID))
				}
			}
			if weights != nil {
				if w := weights[i]; !field.Finite(w) || w < 0 {
					return optErr(fmt.Sprintf("app weights[%d]", i), w)
				}
				sum += weights[i]
			}
		}
		if weights != nil && sum <= 0 {
			return optErr("app weights", "all zero")
		}
		c.apps = append([]AppClass(nil), apps...)
		c.weights = append([]float64(nil), weights...)
		return nil
	}
}

// WithLatencySensitive makes a share frac, in [0, 1], of the jobs latency-sensitive
// (FGM, Thesis, FromSWIM, FromAlibaba2017): every task of such a job is
// latency-sensitive (Task.LatencySensitive), with an SLO by WithSLOFactor. round(frac ×
// jobs) jobs are chosen uniformly at random after everything else is drawn, with one
// r.Perm over the jobs (no draw when that is none or all of them), so the workload is
// the one without the option but for its tasks' classes and SLOs. Default 0: every task is
// batch. FromOpenB ignores it: its pods carry their own class.
func WithLatencySensitive(frac float64) Option {
	return func(c *config) error {
		if !field.Finite(frac) || frac < 0 || frac > 1 {
			return optErr("latency-sensitive share", frac)
		}
		c.lsFrac = frac
		return nil
	}
}

// WithSLOFactor sets the SLO of the latency-sensitive tasks a generator or FromOpenB
// makes: f times the task's true run time (Task.True's duration, alone on a node of
// speed 1 with everything it demands), rounded up to a nanosecond — a task meets its
// objective when the cluster slows it down by at most a factor f. The traces give no
// SLO, so this rule stands in for one. f must be finite and at least 1 (a task cannot
// run faster than its true run time). Default DefaultSLOFactor (1.5).
func WithSLOFactor(f float64) Option {
	return func(c *config) error {
		if !field.Finite(f) || f < 1 {
			return optErr("SLO factor", f)
		}
		c.sloFactor = f
		return nil
	}
}
