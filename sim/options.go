package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/policy"
)

// Mode is how the simulator asks the scheduler for placements.
type Mode uint8

const (
	// Pull: every node heartbeats every WithHeartbeat period, and at once when a task
	// on it ends; the scheduler returns the tasks to start there (YARN's way, FGM's
	// Alg. 1).
	Pull Mode = iota
	// Push: every task is placed (Scheduler.Place) when it becomes pending — on
	// arrival, after a kill — and pending tasks are retried, higher job priority first,
	// then in submission order, when a task ends and every heartbeat period (a
	// Kubernetes-style orchestrator's way).
	Push
)

func (m Mode) String() string {
	switch m {
	case Pull:
		return "pull"
	case Push:
		return "push"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Defaults of the simulator.
const (
	// DefaultHeartbeat is H, the period of every node's heartbeat: 1 s (YARN's
	// NodeManager default).
	DefaultHeartbeat = time.Second
	// DefaultReportEvery is how often a node sends its usage window (eq. 16's T) to the
	// scheduler: 10 s, rounded up to whole agent samples (DefaultAgentEvery: four
	// intervals of 3 s).
	DefaultReportEvery = 10 * time.Second
	// DefaultSampleEvery is how often the cluster-wide metrics are sampled (Jain's index,
	// utilisation): 10 s.
	DefaultSampleEvery = 10 * time.Second
	// DefaultPenalty is the execution model's contention penalty p of eq. 5: the
	// scheduler's own default, policy.DefaultPenalty (0.05).
	DefaultPenalty = policy.DefaultPenalty
	// DefaultReplication is how many replicas of each input block the cluster holds.
	DefaultReplication = 3
	// DefaultTimeLimit stops a run whose jobs have not all finished after 30 days of
	// simulated time.
	DefaultTimeLimit = 30 * 24 * time.Hour
	// StallLimit stops a run, with ErrTimeLimit, when tasks are pending, none is running
	// and nothing has arrived, been placed, finished or come back for this long: the
	// scheduler will not place what is left (a task larger than any node, say).
	StallLimit = 24 * time.Hour
	// DefaultSmallTask separates small from large tasks in the summary: a task whose
	// true profile lasts less than 30 s on a normal node is small.
	DefaultSmallTask = 30 * time.Second
	// DefaultPushRetries is how many pending tasks in a row may fail a push placement
	// before a retry round stops.
	DefaultPushRetries = 32
	// MaxPeriod bounds the periods of WithHeartbeat, WithReportEvery and
	// WithSampleEvery: one day.
	MaxPeriod = 24 * time.Hour
)

// period validates a period option.
func period(name string, d time.Duration) error {
	if d <= 0 || d > MaxPeriod {
		return fieldErr(name, d, ErrInvalidOption)
	}
	return nil
}

// Option configures a simulation. An invalid value, or a nil Option, makes New (or Run)
// fail with an error wrapping ErrInvalidOption.
type Option func(*config) error

type config struct {
	mode        Mode
	heartbeat   time.Duration
	reportEvery time.Duration
	sampleEvery time.Duration
	penalty     float64
	replication int
	replGiven   bool // WithReplication set replication: more than the nodes is an error
	background  Background
	reserve     bool
	failures    []NodeFailure
	records     bool
	queueSample bool
	heldShares  bool
	progress    func(Progress)
	timeLimit   time.Duration
	timing      bool
	smallTask   time.Duration
	pushRetries int

	yield         Yield
	observe       Observe
	variation     Variation
	agentEvery    time.Duration
	redivideEvery time.Duration
	scaleUpEvery  time.Duration
	resizeModel   ResizeModel
}

func defaultConfig() config {
	return config{
		mode: Pull, heartbeat: DefaultHeartbeat, reportEvery: DefaultReportEvery,
		sampleEvery: DefaultSampleEvery, penalty: DefaultPenalty, replication: DefaultReplication,
		timeLimit: DefaultTimeLimit, smallTask: DefaultSmallTask, pushRetries: DefaultPushRetries,
		variation: DefaultVariation, agentEvery: DefaultAgentEvery, redivideEvery: DefaultRedivideEvery,
		scaleUpEvery: DefaultScaleUpEvery,
	}
}

// WithMode sets pull (the default) or push placement.
func WithMode(m Mode) Option {
	return func(c *config) error {
		if m != Pull && m != Push {
			return fieldErr("mode", m, ErrInvalidOption)
		}
		c.mode = m
		return nil
	}
}

// WithHeartbeat sets H, every node's heartbeat period (pull mode) and the beat at which
// true usage moves (Variation) and node agents sample (WithAgentEvery, in whole
// heartbeats); positive, at most MaxPeriod. Default DefaultHeartbeat.
func WithHeartbeat(d time.Duration) Option {
	return func(c *config) error {
		if err := period("heartbeat", d); err != nil {
			return err
		}
		c.heartbeat = d
		return nil
	}
}

// WithReportEvery sets how often nodes send usage windows to the scheduler (policies
// with Feedback); positive, at most MaxPeriod. It is rounded up to a whole number of
// agent samples (WithAgentEvery). Default DefaultReportEvery.
func WithReportEvery(d time.Duration) Option {
	return func(c *config) error {
		if err := period("report every", d); err != nil {
			return err
		}
		c.reportEvery = d
		return nil
	}
}

// WithSampleEvery sets how often cluster-wide metrics are sampled; positive, at most
// MaxPeriod. Default DefaultSampleEvery.
func WithSampleEvery(d time.Duration) Option {
	return func(c *config) error {
		if err := period("sample every", d); err != nil {
			return err
		}
		c.sampleEvery = d
		return nil
	}
}

// WithPenalty sets the execution model's contention penalty p (eq. 5): a compressed
// task progresses at (1 − rc)/(1 + p) of its speed. A finite number ≥ 0; default
// DefaultPenalty. It is the cluster's truth, independent of the penalty the scheduler
// assumes (finegrain.WithContentionPenalty).
func WithPenalty(p float64) Option {
	return func(c *config) error {
		if !field.Finite(p) || p < 0 {
			return fieldErr("penalty", p, ErrInvalidOption)
		}
		c.penalty = p
		return nil
	}
}

// WithReplication sets how many replicas of each input block are placed
// (workload.PlaceReplicas); between 1 and the number of nodes: New (or Run) fails with
// an error wrapping ErrInvalidOption on more. Default DefaultReplication, capped at the
// number of nodes (a cluster of fewer nodes holds one replica per node).
func WithReplication(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fieldErr("replication", n, ErrInvalidOption)
		}
		c.replication, c.replGiven = n, true
		return nil
	}
}

// WithBackground sets the other applications' load on the nodes: the "cloud"
// environment. nil (the default) is the dedicated environment.
func WithBackground(b Background) Option {
	return func(c *config) error {
		if s, ok := b.(*SeriesLoad); ok {
			if s == nil {
				return fieldErr("background", b, ErrInvalidOption)
			}
			if err := s.Validate(); err != nil {
				return fmt.Errorf("sim: background: %w: %w", ErrInvalidOption, err)
			}
		}
		c.background = b
		return nil
	}
}

// WithReservedBackground tells the scheduler each node's capacity less the background's
// non-compressible demand (memory) at time 0, as an operator sizes YARN's NodeManager
// (yarn.nodemanager.resource.memory-mb) below the machine's memory when other
// applications share it. Without it (the default) the scheduler is told the whole
// machine and never learns of the background. It applies to every policy alike; it has
// no effect without WithBackground.
func WithReservedBackground() Option {
	return func(c *config) error {
		c.reserve = true
		return nil
	}
}

// NodeFailure takes a node out of the cluster at At for Down (0: for good). Its running
// tasks are lost and return to pending (finegrain's RemoveNode); the node comes back
// empty.
type NodeFailure struct {
	// Node is the failing node's ID.
	Node string
	// At is when it fails; not negative.
	At time.Duration
	// Down is how long it stays out; 0 means it never comes back.
	Down time.Duration
}

// WithFailures schedules node failures. Times must not be negative (nor At + Down
// overflow); nodes are checked
// against the cluster when the simulation is built; a node must not fail again while
// down.
func WithFailures(f ...NodeFailure) Option {
	return func(c *config) error {
		for i, x := range f {
			if x.Node == "" {
				return fieldErr(fmt.Sprintf("failures[%d].Node", i), x.Node, ErrInvalidOption)
			}
			if x.At < 0 || x.Down < 0 || x.Down > math.MaxInt64-x.At {
				return fieldErr(fmt.Sprintf("failures[%d]", i), x, ErrInvalidOption)
			}
		}
		c.failures = append(c.failures, f...)
		return nil
	}
}

// WithTaskRecords keeps one TaskResult per task in the Result (memory grows with the
// workload).
func WithTaskRecords() Option {
	return func(c *config) error {
		c.records = true
		return nil
	}
}

// WithQueueSamples keeps, at every sample (WithSampleEvery), one QueueSample per queue
// in the Result (Result.QueueSamples): what each queue holds, runs and waits for, the
// detail behind a sample's Jain indices. Each sample then looks at every task of the
// workload, so a long run on a large workload samples more slowly.
func WithQueueSamples() Option {
	return func(c *config) error {
		c.queueSample = true
		return nil
	}
}

// WithHeldShares also measures, at every sample, each queue's dominant share of what
// the scheduler holds for its running tasks at that instant — a stage profile's stage
// in force then, not its peak — and Jain's indices over those shares
// (Sample.HeldJain, HeldBackloggedJain; Summary's means; QueueSample.HeldShare). The
// scheduler is asked through its Allocation call (finegrain.Scheduler.Allocation);
// one without it counts the stage of the profile each task was placed on in force
// since its run started. Each sample then asks about every running task.
func WithHeldShares() Option {
	return func(c *config) error {
		c.heldShares = true
		return nil
	}
}

// Progress is a run's state, reported to the WithProgress callback.
type Progress struct {
	// Now is the simulated time.
	Now time.Duration
	// Finished and Total count tasks (a task killed and rerun counts once).
	Finished, Total int
	// Jobs and JobsTotal count jobs finished and in the workload.
	Jobs, JobsTotal int
}

// WithProgress calls fn from the simulating goroutine at every metrics sample and once
// at the end; nil turns it off.
func WithProgress(fn func(Progress)) Option {
	return func(c *config) error {
		c.progress = fn
		return nil
	}
}

// WithTimeLimit stops the run at this simulated time (positive) with ErrTimeLimit if
// jobs remain. Default DefaultTimeLimit.
func WithTimeLimit(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fieldErr("time limit", d, ErrInvalidOption)
		}
		c.timeLimit = d
		return nil
	}
}

// WithDecisionTiming measures the real wall-clock time of every Heartbeat and Place
// call into Result.Timing. It is the one output that is not deterministic; the rest of
// the Result does not depend on it.
func WithDecisionTiming() Option {
	return func(c *config) error {
		c.timing = true
		return nil
	}
}

// WithSmallTask sets the true duration (on a normal node, uncontended) below which a
// task counts as small in the summary; positive. Default DefaultSmallTask.
func WithSmallTask(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fieldErr("small task", d, ErrInvalidOption)
		}
		c.smallTask = d
		return nil
	}
}

// WithPushRetries sets how many pending tasks in a row may fail to be placed before a
// push retry round stops (push mode); at least 1. Default DefaultPushRetries.
func WithPushRetries(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fieldErr("push retries", n, ErrInvalidOption)
		}
		c.pushRetries = n
		return nil
	}
}
