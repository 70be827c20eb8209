package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/speculate"
)

// Pull mode: who gets a node that has room.

// PullStrategy is how a heartbeat chooses the tasks that start on its node
// (WithPullStrategy). Three walk the jobs in fairness order (WithOrdering) and differ in
// their locality waits: PullLocalityClock, the default; PullDelayScheduling, the PRRL
// thesis' and Hadoop's original rule; PullFairnessOrder, none. Three choose in a way of
// their own: PullTetris, PullPreReleaseList and PullQoSVector. Build one with these
// functions; the zero PullStrategy is refused. Push mode (Place) and the passes after
// the strategy's (preemption, booking, speculation) are the same whichever is chosen.
type PullStrategy struct {
	kind   pullKind
	clock  *fairness.LocalityClock // PullLocalityClock's waits (immutable, shared)
	delay  []fairness.DelayOption  // PullDelayScheduling's options
	tetris plugins.TetrisConfig    // PullTetris' knobs
	placer *speculate.FairPlacer   // PullPreReleaseList's placer
	err    error                   // why the arguments were refused, reported by WithPullStrategy
}

type pullKind uint8

const (
	pullNone pullKind = iota // the zero PullStrategy
	pullClock
	pullDelay
	pullFairness
	pullTetris
	pullPreRelease
	pullQoSVector
)

var pullNames = [...]string{"none", "locality clock", "delay scheduling", "fairness order", "Tetris", "pre-release list", "QoS vector"}

// String names the strategy, e.g. "locality clock".
func (p PullStrategy) String() string { return pullNames[p.kind] }

// PullLocalityClock is the default pull strategy: the jobs in fairness order with
// locality waits counted by the clock (fairness.LocalityClock, docs/methods.md §10;
// plugins.NewClockScheduling). A job may launch node-local only for w1 after its last
// launch (or its arrival, Job.Submitted), rack-local for w2 more, then anywhere, whether
// or not it was offered a node meanwhile — as YARN's Fair Scheduler counts it with
// continuous scheduling. A heartbeat passes a job that may not launch on the node over
// at once, without looking at it further. The default waits are fairness.DefaultW1 and
// fairness.DefaultW2 (5 s and 20 s). Both must be ≥ 0 (0 and 0: no waits), and their
// sum must not overflow a time.Duration; New fails with ErrInvalid otherwise.
func PullLocalityClock(w1, w2 time.Duration) PullStrategy {
	clock, err := fairness.NewLocalityClock(w1, w2)
	if err != nil {
		return PullStrategy{kind: pullClock, err: fmt.Errorf("finegrain: locality clock: %w: %w", ErrInvalid, err)}
	}
	return PullStrategy{kind: pullClock, clock: clock}
}

// PullDelayScheduling is the jobs in fairness order with the locality waits of
// Alg. 2.1 (docs/methods.md §10, the PRRL thesis' rule and Hadoop's original Fair
// Scheduler's; plugins.NewDelayScheduling): a job's wait grows only while it passes
// offers up; with no options W1 = 5 s and W2 = 20 s. Every job a heartbeat reaches is
// offered the node, so that the waits of those that pass it up grow. The YARN baselines
// of package sim use it.
//
// In the time-based variant a job's wait grows in steps of at least DelayUpdate of
// cluster time, as Hadoop's Fair Scheduler updates it from its update thread: a job
// that passed up an offer during a step is credited with the whole step. (Credited per
// node heartbeat instead, a job on a large cluster would have to pass up an offer on
// nearly every heartbeat to wait at all, and jobs waiting for locality would starve.)
func PullDelayScheduling(opts ...fairness.DelayOption) PullStrategy {
	p := PullStrategy{kind: pullDelay, delay: opts}
	for i, o := range opts {
		if o == nil {
			p.err = fmt.Errorf("finegrain: delay scheduling option %d is nil: %w", i, ErrInvalid)
			return p
		}
	}
	// The options are checked when New builds the strategy's state, which is the
	// scheduler's own (fairness.Delay counts each job's offers).
	return p
}

// PullFairnessOrder is the jobs in fairness order without locality waits: a job takes
// any offer, whatever the locality of its best task there.
func PullFairnessOrder() PullStrategy { return PullStrategy{kind: pullFairness} }

// TetrisConfig is Tetris' knobs (PullTetris).
type TetrisConfig = plugins.TetrisConfig

// PullTetris chooses tasks by Tetris' packing heuristic (plugins.Tetris,
// docs/methods.md §14): on a heartbeat, of the jobs in the fairness order only the first
// ⌈(1−cfg.Fairness)·J⌉ compete, each with the task it would start on the node, and the
// task of best alignment with the node's free resources over its window, less ε times
// its job's remaining work, is tried, while the node has room. There are no locality
// waits; a remote task loses cfg.RemotePenalty of its alignment.
// plugins.DefaultTetrisConfig holds the paper's knobs; a knob out of range is refused
// (TetrisConfig.Validate). WithScorer(match.Alignment{}) scores push placement's nodes
// Tetris' way.
func PullTetris(cfg TetrisConfig) PullStrategy {
	p := PullStrategy{kind: pullTetris, tetris: cfg}
	if err := cfg.Validate(); err != nil {
		p.err = fmt.Errorf("finegrain: %w", err) // wraps ErrInvalid
	}
	return p
}

// PullPreReleaseList chooses tasks by the pre-release resource list
// (plugins.PreReleaseList, PRRL thesis Alg. 4.1/4.2) instead of delay scheduling: on a
// heartbeat, placer picks the pool and job by the fair rule and either gives the node a
// task of that job (node-local, else rack-local, else any) or promises the job a busy
// slot elsewhere where its task would finish sooner, and moves on. There are no wait
// parameters. A job's task time on a node comes from the progress the embedder reports
// (Scheduler.Progress). Each decision costs O(pending + running): meant for clusters
// of the thesis' scale. placer must not be nil.
func PullPreReleaseList(placer *speculate.FairPlacer) PullStrategy {
	p := PullStrategy{kind: pullPreRelease, placer: placer}
	if placer == nil {
		p.err = fmt.Errorf("finegrain: pre-release placer is nil: %w", ErrInvalid)
	}
	return p
}

// PullQoSVector chooses tasks by QoS-vector matching in capacity scheduling
// (plugins.QoSVectorScheduling, docs/methods.md §12, steps 1–7): on a heartbeat, of the
// queues with a job waiting the one with the most free capacity (its min share, the
// capacity configured with fairness.MinShare, less its use) is chosen; in it, the
// sub-queue of the jobs whose class (largest preference weight) is the node's largest
// QoS feature, or when that sub-queue is empty its 2nd largest, 3rd, ...; in that
// sub-queue, the job of best finalvalue (eq. 4–6, with priority aging) among those whose
// hard QoS the node meets. Give each job its demand with SetJobQoSVector and each node
// its supply with SetNodeQoSVector, with every heartbeat; a job without one waits, a
// node without one takes nothing from this pass. The paper builds on capacity
// scheduling: use it with WithOrdering(fairness.Capacity{}) and queues with min shares.
// It is not WithQoS, which replaces the eq. 15 deadline check, another method.
func PullQoSVector() PullStrategy { return PullStrategy{kind: pullQoSVector} }

// WithPullStrategy sets how a heartbeat chooses the tasks that start on its node (see
// PullStrategy); default PullLocalityClock(fairness.DefaultW1, fairness.DefaultW2).
// Given twice, the later wins. New fails with the error of a strategy whose arguments
// were refused, and on the zero PullStrategy.
func WithPullStrategy(p PullStrategy) Option {
	return func(c *config) error {
		if p.kind == pullNone {
			return fmt.Errorf("finegrain: pull strategy: the zero PullStrategy; build one with PullLocalityClock, PullDelayScheduling, PullFairnessOrder, PullTetris, PullPreReleaseList or PullQoSVector: %w", ErrInvalid)
		}
		if p.err != nil {
			return p.err
		}
		c.pull = p
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

// DefaultPackingBound is the fair packing bound used with DRF ordering unless
// WithPackingBound says otherwise.
const DefaultPackingBound = plugins.DefaultPackingBound

// WithPackingBound sets pull mode's fair packing bound b (plugins.DelayScheduling.
// SetPackingBound): after a job was passed over in a heartbeat for want of room on
// the node, a job of another queue may take the node only while its queue's weighted
// dominant share is at most b above the passed-over job's queue's. It keeps
// fine-grained packing, which fits small tasks into room a larger task of a poorer
// queue is waiting for, from running ahead of the fairness order. The default is
// DefaultPackingBound with DRF ordering and none with the others (their orders are not
// by dominant share); FIFO never has one. +Inf switches it off: a job that finds no
// room on a node never holds other queues' jobs back there, as in YARN. It applies to
// the pull strategies that walk the fairness order (PullLocalityClock,
// PullDelayScheduling, PullFairnessOrder), not in push mode. b must be ≥ 0 and not NaN
// (0: strict).
func WithPackingBound(b float64) Option {
	return func(c *config) error {
		if !(b >= 0) {
			return fmt.Errorf("finegrain: packing bound %v: %w", b, ErrInvalid)
		}
		c.packBound = &b
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
// times W1. It applies to the pull strategies with locality waits (PullLocalityClock,
// PullDelayScheduling).
func WithLocalityWaitForRoom(on bool) Option {
	return func(c *config) error {
		c.waitForRoom = on
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
// job's fairness usage while they run; Counts and TaskState count the task once
// (TaskState of a backup ID reports Running while it runs). nil (the default)
// switches speculation off.
func WithSpeculation(sp speculate.Speculator) Option {
	return func(c *config) error {
		if isNil(sp) {
			sp = nil
		}
		c.speculator = sp
		return nil
	}
}
