package finegrain

import (
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// Option configures a Scheduler. The defaults are FGM's: DRF ordering, prediction from
// similar tasks, fine-grained stage matching with at most 10% compression, the Alg. 3
// adjuster, the eq. 15 deadline check, locality waits by the clock rule with W1 = 5 s
// and W2 = 20 s (WithLocalityClock) whose node-locality waits last only while a node
// holding the input has room (WithLocalityWaitForRoom), the fair packing bound
// (DefaultPackingBound).
type Option func(*config) error

type config struct {
	estimator   predict.Estimator
	predict     bool
	ordering    fairness.Policy
	limit       float64
	penalty     float64
	adjust      []policy.Option
	window      int
	ihConform   *resource.Vector // nil: 0.1 on every dimension of the schema
	delay       []fairness.DelayOption
	useDelay    bool          // locality waits: Alg. 2.1's (delay) or the clock rule's (clock)
	clock       bool          // the clock rule (WithLocalityClock) rather than Alg. 2.1's
	w1, w2      time.Duration // the clock rule's waits
	waitForRoom bool
	scorer      match.Scorer
	gpuScorer   gpu.DeviceScorer
	candidates  int
	qos         match.QoSCheck
	hasQoS      bool
	futureStart bool
	bookAfter   time.Duration
	bookPull    bool
	preemption  *plugins.PreemptionConfig
	gangTimeout time.Duration
	maxPerBeat  int
	logger      *slog.Logger
	matchers    map[policy.NodeMode]match.Matcher
	prerelease  *speculate.FairPlacer
	tetris      *plugins.TetrisConfig
	qosVector   *plugins.QoSVectorScheduling // WithQoSVectorScheduling
	speculator  speculate.Speculator
	acceptUnres bool // WithUnresolvableAccepted
	skipDetails int
	holdTail    bool
	escalate    bool
	packBound   float64 // the fair packing bound, when hasPack
	hasPack     bool
	skew        time.Duration
	retention   cluster.Retention
	edits       []pluginEdit // WithPlugin, WithPluginBefore, WithoutPlugin, in order
	loadWindow  time.Duration
	loadQ       float64
	netting     bool // WithExternalLoadNetting
}

// WithEstimator replaces the similar-task estimator (predict.SimilarTask) by est.
func WithEstimator(est predict.Estimator) Option {
	return func(c *config) error {
		if isNil(est) {
			return fmt.Errorf("finegrain: estimator is nil: %w", ErrInvalid)
		}
		c.estimator = est
		return nil
	}
}

// WithoutPrediction makes every task unpredictable, so every task is placed by its
// request held until it finishes (docs/methods.md §3, request quantity): the way YARN's FIFO,
// Capacity, Fair and DRF schedulers allocate, the baselines FGM is compared with.
// Finished tasks still feed the estimator, if one is set.
func WithoutPrediction() Option {
	return func(c *config) error {
		c.predict = false
		return nil
	}
}

// WithOrdering sets the fairness policy that orders queues and jobs (Alg. 1 line 4):
// fairness.DRF (the default), fairness.Fair, fairness.FIFO, fairness.Capacity or your
// own.
func WithOrdering(p fairness.Policy) Option {
	return func(c *config) error {
		if isNil(p) {
			return fmt.Errorf("finegrain: ordering is nil: %w", ErrInvalid)
		}
		c.ordering = p
		return nil
	}
}

// WithCompressionLimit sets eq. 7's limitation, the largest compression ratio allowed on
// any compressible resource; 0 disables compression. Default resource.
// DefaultCompressionLimit (10%).
func WithCompressionLimit(x float64) Option {
	return func(c *config) error {
		if !(x >= 0 && x < 1) {
			return fmt.Errorf("finegrain: compression limit %v not in [0, 1): %w", x, ErrInvalid)
		}
		c.limit = x
		return nil
	}
}

// WithExternalLoadForecast sets what SetExternalLoad holds on a node for the work the
// scheduler did not place (other applications sharing it): per dimension, the
// q-quantile of the loads reported over the last window on the compressible
// dimensions, and the largest on the others (predict.LoadLog). window ≥ 0 (0: the
// latest report alone, the default), q in [0, 1]. A larger window or q holds more
// room for the other applications and leaves less to the tasks: worth it where their
// load is spiky and an under-forecast costs the tasks much; docs/methods.md §6 has
// the figures that chose the default.
func WithExternalLoadForecast(window time.Duration, q float64) Option {
	return func(c *config) error {
		if window < 0 {
			return fmt.Errorf("finegrain: external load window %v is negative: %w", window, ErrInvalid)
		}
		if !(q >= 0 && q <= 1) {
			return fmt.Errorf("finegrain: external load quantile %v not in [0, 1]: %w", q, ErrInvalid)
		}
		c.loadWindow, c.loadQ = window, q
		return nil
	}
}

// WithExternalLoadNetting sets whether a node's usage report (ReportUsage) lets the
// scheduler hold, on the compressible dimensions, only the part of the external load
// (SetExternalLoad) that the tasks' reservations there do not already cover: what the
// tasks reserved now less what they used over the report's window (its actual usage
// less the external load) is room the node leaves idle, and the other applications'
// CPU is held net of it. The node is then planned on capacity less the larger of its
// reservations and its measured usage — the idle resources the FGM paper's node agents
// report — instead of on reservations and the external load added up. A task whose
// usage rises towards its reservation while the others' load stays is compressed, as
// it would be beside a load the forecast missed. Memory is always held whole. On by
// default; without usage reports it has no effect.
func WithExternalLoadNetting(on bool) Option {
	return func(c *config) error {
		c.netting = on
		return nil
	}
}

// WithContentionPenalty sets eq. 5/6's contention penalty p; default
// policy.DefaultPenalty.
func WithContentionPenalty(p float64) Option {
	return func(c *config) error {
		if !(p >= 0) || math.IsInf(p, 1) {
			return fmt.Errorf("finegrain: contention penalty %v not a finite value ≥ 0: %w", p, ErrInvalid)
		}
		c.penalty = p
		return nil
	}
}

// WithAdjuster passes options to the per-server policy adjuster (Alg. 3): thresholds,
// idle threshold, degradation, initial mode; see package policy.
func WithAdjuster(opts ...policy.Option) Option {
	return func(c *config) error {
		for i, o := range opts {
			if o == nil {
				return fmt.Errorf("finegrain: adjuster option %d is nil: %w", i, ErrInvalid)
			}
		}
		c.adjust = append(c.adjust, opts...)
		return nil
	}
}

// WithConformityWindow sets k, how many recent conformity values (eq. 16) per server
// the adjuster averages; default 5.
func WithConformityWindow(k int) Option {
	return func(c *config) error {
		if k < 1 {
			return fmt.Errorf("finegrain: conformity window %d < 1: %w", k, ErrInvalid)
		}
		c.window = k
		return nil
	}
}

// WithConformityIdleThreshold sets eq. 16's Th: usage above prediction counts against
// a server only while its idle resources are below Th × capacity. Default 0.1 on every
// dimension.
func WithConformityIdleThreshold(th resource.Vector) Option {
	return func(c *config) error {
		c.ihConform = &th
		return nil
	}
}

// WithLocalityClock sets the locality waits of the clock rule (fairness.LocalityClock,
// docs/methods.md §10), the default with W1 = fairness.DefaultW1 and W2 =
// fairness.DefaultW2: a job may launch node-local only for W1 after its last launch (or
// its arrival, Job.Submitted), rack-local for W2 more, then anywhere, whether or not it
// was offered a node meanwhile — as YARN's Fair Scheduler counts it with continuous
// scheduling. A heartbeat passes a job that may not launch on the node over at once,
// without looking at it further. Both waits must be ≥ 0 (0 and 0: no waits). It
// replaces WithDelayScheduling.
func WithLocalityClock(w1, w2 time.Duration) Option {
	return func(c *config) error {
		if _, err := fairness.NewLocalityClock(w1, w2); err != nil {
			return fmt.Errorf("finegrain: locality clock: %w", err)
		}
		c.useDelay, c.clock, c.delay, c.w1, c.w2 = true, true, nil, w1, w2
		return nil
	}
}

// WithDelayScheduling sets the locality waits of Alg. 2.1 (docs/methods.md §10, the PRRL
// thesis' rule and Hadoop's original Fair Scheduler's) instead of the default clock
// rule: a job's wait grows only while it passes offers up; with no options W1 = 5 s and
// W2 = 20 s. Every job a heartbeat reaches is offered the node, so that the waits of
// those that pass it up grow. The YARN baselines of package sim use it. It replaces
// WithLocalityClock.
//
// In the time-based variant a job's wait grows in steps of at least DelayUpdate of
// cluster time, as Hadoop's Fair Scheduler updates it from its update thread: a job
// that passed up an offer during a step is credited with the whole step. (Credited per
// node heartbeat instead, a job on a large cluster would have to pass up an offer on
// nearly every heartbeat to wait at all, and jobs waiting for locality would starve.)
func WithDelayScheduling(opts ...fairness.DelayOption) Option {
	return func(c *config) error {
		for i, o := range opts {
			if o == nil {
				return fmt.Errorf("finegrain: delay scheduling option %d is nil: %w", i, ErrInvalid)
			}
		}
		c.useDelay, c.clock, c.delay = true, false, opts
		return nil
	}
}

// WithoutDelayScheduling turns delay scheduling off: a job takes any offer, whatever
// the locality of its best task there.
func WithoutDelayScheduling() Option {
	return func(c *config) error {
		c.useDelay, c.clock, c.delay = false, false, nil
		return nil
	}
}

// DefaultPackingBound is the fair packing bound used with DRF ordering unless
// WithPackingBound or WithoutPackingBound says otherwise.
const DefaultPackingBound = plugins.DefaultPackingBound

// WithPackingBound sets pull mode's fair packing bound b (plugins.DelayScheduling.
// SetPackingBound): after a job was passed over in a heartbeat for want of room on
// the node, a job of another queue may take the node only while its queue's weighted
// dominant share is at most b above the passed-over job's queue's. It keeps
// fine-grained packing, which fits small tasks into room a larger task of a poorer
// queue is waiting for, from running ahead of the fairness order. The default is
// DefaultPackingBound with DRF ordering and none with the others (their orders are not
// by dominant share); FIFO never has one. It has no effect with WithPreReleaseList,
// with WithTetris, with WithQoSVectorScheduling or in push mode. b must be ≥ 0 and not
// NaN (0: strict).
func WithPackingBound(b float64) Option {
	return func(c *config) error {
		if !(b >= 0) {
			return fmt.Errorf("finegrain: packing bound %v: %w", b, ErrInvalid)
		}
		c.packBound, c.hasPack = b, true
		return nil
	}
}

// WithoutPackingBound turns the fair packing bound off (WithPackingBound): a job that
// finds no room on a node never holds other queues' jobs back there, as in YARN.
func WithoutPackingBound() Option {
	return func(c *config) error {
		c.packBound, c.hasPack = math.Inf(1), true
		return nil
	}
}

// WithLocalityWaitForRoom sets whether, under delay scheduling, a job waits for a
// node-local offer only while a node holding its input could start its task now (its
// mode, idle room and the match agree; plugins.WaitForRoom): when every such node is
// full or stopped, the job takes a rack-local offer at hand at once (an off-switch one
// only once its waits allow). On by default. Off is
// Hadoop's delay scheduling, where a job passes up offers until W1 has passed whether
// or not its nodes could take it: when room is scarce — other applications' load held
// on the nodes (SetExternalLoad), a busy cluster — the offers it passes up go to the
// jobs behind it, and a small job at the head of the fairness order can wait many
// times W1. It has no effect without delay scheduling, with WithPreReleaseList, with
// WithTetris or with WithQoSVectorScheduling.
func WithLocalityWaitForRoom(on bool) Option {
	return func(c *config) error {
		c.waitForRoom = on
		return nil
	}
}

// WithMatcherFor replaces the matcher a node in mode uses for predictable tasks (by
// default match.FineGrained in both fine-grained modes and match.CoarseGrained in
// CoarseGrained). Unpredictable tasks are always matched by their request; a node in
// StopAllocation takes nothing.
func WithMatcherFor(mode policy.NodeMode, m match.Matcher) Option {
	return func(c *config) error {
		if isNil(m) || !mode.Schedulable() {
			return fmt.Errorf("finegrain: matcher for mode %v: %w", mode, ErrInvalid)
		}
		if c.matchers == nil {
			c.matchers = make(map[policy.NodeMode]match.Matcher)
		}
		c.matchers[mode] = m
		return nil
	}
}

// WithHoldUntilFinished sets whether a task placed by a predicted (or declared)
// profile keeps its last stage's non-compressible demand (memory) reserved from the
// profile's end until it finishes. On by default: a task that outlives its prediction
// still holds its memory, and the node is not over-committed behind its back. Off is
// the paper's literal behaviour (the reservation ends with the prediction; the Alg. 3
// adjuster reacts to the conformity the overrun causes).
func WithHoldUntilFinished(on bool) Option {
	return func(c *config) error {
		c.holdTail = on
		return nil
	}
}

// WithFailureEscalation sets whether a task that failed (Failed: killed for running
// out of memory, say) is placed on more than its plan the next time: its request or
// its plan's peak, whichever is larger, then half as much more of its non-compressible
// demands for each further failure, up to what some node offers beside other
// applications' load (plugins.Prediction). On by default: a task predicted below what
// it really uses would otherwise be killed and placed on the same prediction for
// ever. Off re-places it on its plan, as YARN and Kubernetes re-run a killed
// container with the same request.
func WithFailureEscalation(on bool) Option {
	return func(c *config) error {
		c.escalate = on
		return nil
	}
}

// WithScorer sets how push placement ranks the nodes that fit; default
// match.LeastAllocated{}.
func WithScorer(s match.Scorer) Option {
	return func(c *config) error {
		if isNil(s) {
			return fmt.Errorf("finegrain: scorer is nil: %w", ErrInvalid)
		}
		c.scorer = s
		return nil
	}
}

// WithGPUScorer adds s to push placement's scoring of the nodes that fit a task (with
// a GPU demand, Task.GPU, or without: s ranks those too), with the same weight as
// WithScorer's scorer, and lets s choose the devices the task gets on the node that
// wins (plugins.GPUScore), in host mode's Reserve as well: gpu.DeviceBestFit,
// gpu.DotProduct, gpu.Packing or gpu.FGD. Without it, the devices are the best fit
// (gpu.Devices.BestFit) and nodes are scored by WithScorer alone. The GPUFit filter,
// which refuses nodes whose devices cannot hold a task's demand, is always on.
func WithGPUScorer(s gpu.DeviceScorer) Option {
	return func(c *config) error {
		if isNil(s) {
			return fmt.Errorf("finegrain: GPU scorer is nil: %w", ErrInvalid)
		}
		c.gpuScorer = s
		return nil
	}
}

// WithCandidates sets how many fitting nodes push placement scores before it picks the
// best (like the Kubernetes scheduler's percentage of nodes to score); 0 scores every
// node that fits. Default 16.
func WithCandidates(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("finegrain: candidates %d < 0: %w", n, ErrInvalid)
		}
		c.candidates = n
		return nil
	}
}

// WithQoS replaces the deadline QoS check (eq. 15) by q; nil disables QoS checks.
func WithQoS(q match.QoSCheck) Option {
	return func(c *config) error {
		c.qos, c.hasQoS = q, true
		return nil
	}
}

// WithFutureStart lets push placement book a task at the earliest future start on
// some node when no node fits now (plugins.FutureStart): the task is Booked until its
// start, then Running. Off by default; WithBooking does the same in pull mode
// too, for tasks that have waited.
func WithFutureStart(on bool) Option {
	return func(c *config) error {
		c.futureStart, c.bookAfter, c.bookPull = on, 0, false
		return nil
	}
}

// WithBooking books tasks that have waited at least wait since they became
// pending and fit no node now, in push and pull mode (plugins.FutureStart): each
// gets a reservation at the earliest start at which its whole profile fits some node's
// timeline, and is Booked until then (its Assignment's Start is in the future: start
// the task then). What a booking holds is off limits to every later placement, so
// tasks placed in front of it never delay it (conservative backfilling, on the stage
// timeline: every task that waited that long holds its own booking),
// and a large task does not starve behind a stream of small ones. In pull mode, one
// task is booked per heartbeat, the first in fairness order that qualifies; the
// booking may be on another node than the heartbeat's. A task's wait counts from its
// Task.Submitted or, if later, the time of the scheduler's latest event before it was
// submitted (Submit takes no time: set Submitted), and afresh from its return to
// pending after an eviction or a failure. wait must be ≥ 0.
func WithBooking(wait time.Duration) Option {
	return func(c *config) error {
		if wait < 0 {
			return fmt.Errorf("finegrain: booking after %v < 0: %w", wait, ErrInvalid)
		}
		c.futureStart, c.bookAfter, c.bookPull = true, wait, true
		return nil
	}
}

// PreemptionConfig says which preemption the scheduler does (WithPreemption).
type PreemptionConfig = plugins.PreemptionConfig

// DefaultReclaimDelay is a reclaim delay of 15 s (PreemptionConfig.ReclaimDelay), the
// order of YARN's capacity-preemption waits.
const DefaultReclaimDelay = plugins.DefaultReclaimDelay

// WithPreemption turns preemption on (plugins.Preemption; off by default): a task that
// fits nowhere may evict running tasks of lower-priority jobs (cfg.Priority), and a
// queue below its min share may, after cfg.ReclaimDelay, reclaim from queues outside
// it above theirs (cfg.Guarantees). Victims are chosen on the stage timeline — the
// fewest, of the lowest priority, that have run the least, and none whose reservation
// is out of the way in time — never a TaskSpec.NonPreemptible task nor beyond a job's
// JobSpec.MaxDisrupted. They are pending again at once, and reported with the
// preemptor's Assignment (Assignment.Evicted) or, when it does not start at once, in
// Decision.Evicted or PlacementError.Evicted: the embedder stops them, then starts
// the preemptor. Push mode (Place) preempts on the best of the first cfg.Candidates
// nodes where eviction makes room; pull mode (Heartbeat) on the heartbeat's node, for
// a waiting task that fits no node now. New fails when cfg turns nothing on or holds a
// negative delay, per-heartbeat bound or candidate count.
func WithPreemption(cfg PreemptionConfig) Option {
	return func(c *config) error {
		if !cfg.Priority && !cfg.Guarantees || cfg.ReclaimDelay < 0 || cfg.PerHeartbeat < 0 || cfg.Candidates < 0 {
			return fmt.Errorf("finegrain: preemption: priority %v, guarantees %v, reclaim delay %v, per heartbeat %d, candidates %d: %w",
				cfg.Priority, cfg.Guarantees, cfg.ReclaimDelay, cfg.PerHeartbeat, cfg.Candidates, ErrInvalid)
		}
		c.preemption = &cfg
		return nil
	}
}

// DefaultGangTimeout is how long a gang's members wait for the rest of it
// (WithGangTimeout): 60 s, the Kubernetes coscheduling plugin's default.
const DefaultGangTimeout = plugins.DefaultGangTimeout

// WithGangTimeout sets how long the reserved members of a gang job (JobSpec.MinMember)
// wait for the rest of the gang before they are rolled back (plugins.Gang); d must be
// > 0. Default DefaultGangTimeout.
func WithGangTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("finegrain: gang timeout %v ≤ 0: %w", d, ErrInvalid)
		}
		c.gangTimeout = d
		return nil
	}
}

// WithMaxPerHeartbeat caps the tasks one heartbeat may start; 0 (the default) means no
// cap: the pass stops when the node is used up.
func WithMaxPerHeartbeat(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("finegrain: max per heartbeat %d < 0: %w", n, ErrInvalid)
		}
		c.maxPerBeat = n
		return nil
	}
}

// WithLogger logs every decision at debug level, and unexpected refusals at warn
// level.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// WithSkipDetails makes each Decision detail the first n jobs a heartbeat passed over
// (Decision.Skips: the job, the task, the reason, the plugin and the match result), to
// see why tasks wait; Decision.Skipped counts them all and Decision.Refusals tallies
// them all by reason whatever n. n must be in [0, MaxSkips]; default
// DefaultSkipDetails (8). 0 allocates nothing for them.
func WithSkipDetails(n int) Option {
	return func(c *config) error {
		if n < 0 || n > MaxSkips {
			return fmt.Errorf("finegrain: skip details %d, want 0..%d: %w", n, MaxSkips, ErrInvalid)
		}
		c.skipDetails = n
		return nil
	}
}

// WithUnresolvableAccepted makes Submit accept a task that no node of the cluster
// could hold even empty (ErrUnresolvable) and keep it pending, for a cluster that may
// grow — a node autoscaler adds nodes for what waits. Such a task waits until a node
// that can hold it joins: Explain and PlacementError.Refusals flag it Unresolvable,
// and heartbeats look past it. Off by default: Submit refuses it, as YARN refuses a
// request above its maximum allocation.
func WithUnresolvableAccepted(on bool) Option {
	return func(c *config) error {
		c.acceptUnres = on
		return nil
	}
}

// WithPreReleaseList makes pull mode choose tasks by the pre-release resource list
// (plugins.PreReleaseList, PRRL thesis Alg. 4.1/4.2) instead of the fairness order with
// delay scheduling: on a heartbeat, p picks the pool and job by the fair rule and
// either gives the node a task of that job (node-local, else rack-local, else any) or
// promises the job a busy slot elsewhere where its task would finish sooner, and moves
// on. There are no wait parameters. A job's task time on a node comes from the
// progress the embedder reports (Scheduler.Progress). Each decision costs O(pending +
// running): meant for clusters of the thesis' scale. Push mode is unaffected. It
// replaces WithTetris, and WithTetris replaces it: the later wins.
func WithPreReleaseList(p *speculate.FairPlacer) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("finegrain: pre-release placer is nil: %w", ErrInvalid)
		}
		c.prerelease, c.tetris = p, nil
		return nil
	}
}

// TetrisConfig is Tetris' knobs (WithTetris).
type TetrisConfig = plugins.TetrisConfig

// WithTetris makes pull mode choose tasks by Tetris' packing heuristic (plugins.Tetris,
// docs/methods.md §14) instead of the fairness order with delay scheduling: on a
// heartbeat, of the jobs in the fairness order only the first ⌈(1−cfg.Fairness)·J⌉
// compete, each with the task it would start on the node, and the task of best
// alignment with the node's free resources over its window, less ε times its job's
// remaining work, is tried, while the node has room. There are no locality waits
// (delay-scheduling options are ignored); a remote task loses cfg.RemotePenalty of its
// alignment. plugins.DefaultTetrisConfig holds the paper's knobs. It replaces
// WithPreReleaseList, and WithPreReleaseList replaces it: the later wins. Push mode is
// unaffected (WithScorer(match.Alignment{}) scores its nodes Tetris' way). New fails
// when a knob is out of range (TetrisConfig.Validate).
func WithTetris(cfg TetrisConfig) Option {
	return func(c *config) error {
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("finegrain: %w", err) // wraps ErrInvalid
		}
		c.tetris, c.prerelease = &cfg, nil
		return nil
	}
}

// WithQoSVectorScheduling makes pull mode choose tasks by QoS-vector matching in
// capacity scheduling (plugins.QoSVectorScheduling, docs/methods.md §12, steps 1–7)
// instead of the fairness order with delay scheduling: on a heartbeat, of the queues
// with a job waiting the one with the most free capacity (its min share, the capacity
// configured with fairness.MinShare, less its use) is chosen; in it, the sub-queue of
// the jobs whose class (largest preference weight) is the node's largest QoS feature,
// or when that sub-queue is empty its 2nd largest, 3rd, ...; in that sub-queue, the job
// of best finalvalue (eq. 4–6, with priority aging) among those whose hard QoS the node
// meets. Give each job its demand with SetJobQoSVector and each node its supply with
// SetNodeQoSVector, with every heartbeat; a job without one waits, a node without one
// takes nothing from this pass. The paper builds on capacity scheduling: use it with
// WithOrdering(fairness.Capacity{}) and queues with min shares.
//
// It is not WithQoS, which replaces the eq. 15 deadline check, another method. There
// are no locality waits (delay-scheduling options and the packing bound have no
// effect). New refuses it together with WithTetris or WithPreReleaseList, which would
// choose the tasks in its place. Push mode (Place) and the other passes (WithPreemption,
// WithBooking, WithSpeculation) are unaffected.
func WithQoSVectorScheduling() Option {
	return func(c *config) error {
		c.qosVector = plugins.NewQoSVectorScheduling()
		return nil
	}
}

// WithSpeculation turns on speculative execution in pull mode with sp (LATE or PRRL
// from package speculate, or another speculate.Speculator; plugins.Speculation).
// After a heartbeat's passes have started what they could, while the node has room,
// the jobs with running tasks and none pending are visited in priority then
// submission order, and sp decides whether one of each job's running tasks gets a
// backup attempt on the node. sp sees, for each job, a progress model of that job's
// own tasks (fed by Progress, Started, Finished and Failed), the tasks already backed
// up, and, as nodes not to back up on, each task's own node and the nodes where its
// backup failed; PRRL also sees the other jobs' running tasks as slots that free when
// their time left is up.
//
// A backup is placed like its task (same demand, same plugins) and comes back in the
// Decision as an Assignment whose Task is BackupID(task) and BackupOf the task. The
// embedder runs it and reports on it by that ID — Progress is accepted and ignored,
// Finished, Failed, Cancel — under these rules:
//
//   - The first attempt to finish finishes the task: Finished on either ID releases
//     both attempts' resources (stop the other attempt). A backup that wins counts on
//     its node's task rate.
//   - Failed (or Cancel) on a backup drops the backup only; the task runs on.
//   - Failed on a task, or RemoveNode of its node, drops its backup with it and makes
//     the task pending again (stop the backup); Cancel on a task cancels both.
//
// A task has at most one backup at a time. Backups hold resources and count in their
// job's fairness usage while they run; Counts and State count the task once (State of
// a backup ID reports Running while it runs).
func WithSpeculation(sp speculate.Speculator) Option {
	return func(c *config) error {
		if isNil(sp) {
			return fmt.Errorf("finegrain: speculator is nil: %w", ErrInvalid)
		}
		c.speculator = sp
		return nil
	}
}

// pluginEdit is one change to the default plugin list.
type pluginEdit struct {
	plugin framework.Plugin // to add; nil for a removal
	before string           // add before this plugin; "" appends
	remove string           // the plugin to remove
}

// WithPlugin adds p to the scheduler's plugins, after the built-in ones, at every
// extension point p implements (package framework: PreFilter, Filter, PostFilter,
// Score, Reserve, Permit, NodeGate, JobFilter, Pass; a DemandPlugin replaces the
// demand step). Options apply in order.
func WithPlugin(p framework.Plugin) Option {
	return func(c *config) error {
		if isNil(p) {
			return fmt.Errorf("finegrain: plugin is nil: %w", ErrInvalid)
		}
		c.edits = append(c.edits, pluginEdit{plugin: p})
		return nil
	}
}

// WithPluginBefore adds p just before the plugin named before, so that at every
// extension point both implement, p runs first: WithPluginBefore("StageMatch", f)
// filters before matching. New fails when no plugin is named before.
func WithPluginBefore(before string, p framework.Plugin) Option {
	return func(c *config) error {
		if isNil(p) || before == "" {
			return fmt.Errorf("finegrain: plugin %v before %q: %w", p, before, ErrInvalid)
		}
		c.edits = append(c.edits, pluginEdit{plugin: p, before: before})
		return nil
	}
}

// WithoutPlugin removes the plugin named name (a built-in one, listed by
// Scheduler.Plugins, or one added earlier); with WithPluginBefore it reorders. New
// fails when no plugin is named name.
func WithoutPlugin(name string) Option {
	return func(c *config) error {
		if name == "" {
			return fmt.Errorf("finegrain: plugin name is empty: %w", ErrInvalid)
		}
		c.edits = append(c.edits, pluginEdit{remove: name})
		return nil
	}
}

// WithClockSkew sets how far behind the latest time seen an event may be and still be
// accepted, taken to happen at that latest time (default DefaultClockSkew; 0 refuses
// any event earlier than the latest). d must be in [0, 1 minute].
func WithClockSkew(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || d > time.Minute {
			return fmt.Errorf("finegrain: clock skew %v, want 0..1m: %w", d, ErrInvalid)
		}
		c.skew = d
		return nil
	}
}

// WithRetention sets what the scheduler remembers of finished work: finished and
// cancelled tasks, and completed jobs, are forgotten oldest first beyond counts or
// after an age (Retention). Default DefaultRetention, which keeps memory flat however
// many tasks pass through. A forgotten task is unknown to State and to events; a
// forgotten job must be submitted again (SubmitJob) before it takes new tasks.
// Negative counts or age are refused (by cluster.WithRetention).
func WithRetention(r Retention) Option {
	return func(c *config) error {
		c.retention = r
		return nil
	}
}

// isNil reports whether v, an implementation of one of the interfaces the options
// take, is nil or a nil pointer (or map, slice, function, channel) in an interface:
// such a value would pass a plain nil check and fail at its first use.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
