package sim

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/speculate"
)

// Scheduler is what the simulator drives: the public API of the reference
// *finegrain.Scheduler, which satisfies it. It is the seam for another scheduler — a
// wrapper that adds pre-release-list placement or speculation, a scheduler of your own
// — built by Policy.New. The simulator calls it from one goroutine, in event order.
type Scheduler interface {
	AddNode(n finegrain.Node) error
	RemoveNode(id string, now time.Duration) ([]string, error)
	AddQueue(parent, id string, opts ...fairness.Option) error
	SubmitJob(j finegrain.Job) error
	Submit(tasks ...finegrain.Task) error
	Heartbeat(node string, now time.Duration) (finegrain.Decision, error)
	Place(task string, now time.Duration) (finegrain.Assignment, error)
	Finished(task string, now time.Duration, obs *predict.Observation) error
	Failed(task string, now time.Duration) error
	ReportUsage(node string, now time.Duration, window []predict.Interval) (policy.Change, error)
	NodeFree(node string, t time.Duration) (resource.Tuple, error)
}

var _ Scheduler = (*finegrain.Scheduler)(nil)

// externalLoader is the optional call through which the simulator's node agents
// report the load the scheduler did not place (the background) along with their usage
// windows, for a policy with Feedback.
type externalLoader interface {
	SetExternalLoad(node string, now time.Duration, load resource.Tuple) (resource.Tuple, error)
}

var _ externalLoader = (*finegrain.Scheduler)(nil)

// permitter is the optional calls through which the simulator follows, in push mode,
// the tasks a Permit plugin keeps waiting (gang members: Place fails with a
// *finegrain.PlacementError whose Reason is finegrain.PermitWaiting, and the task is
// reserved). Permitted returns the waiting tasks allowed since the last call (the
// other members of a gang a placement completed); TaskState tells a task still waiting
// (finegrain.Reserved) from one the scheduler rolled back to pending (its wait timed
// out, or its node left); ExpirePermits lets time pass for the waits when a retry
// round has only waiting tasks to look at, so that waits end though nothing is placed.
// A scheduler that keeps tasks waiting in push mode must have all three.
type permitter interface {
	Permitted() []finegrain.Assignment
	TaskState(id string) (finegrain.TaskState, bool)
	ExpirePermits(now time.Duration) error
}

var _ permitter = (*finegrain.Scheduler)(nil)

// scaleUpper is the optional call through which the simulator runs the scale-up rounds
// of a policy with ScaleUp (finegrain.Scheduler.ScaleUp): the scheduler plans and
// applies a round on its state, and returns the actions for the simulator to carry out
// on the running tasks.
type scaleUpper interface {
	ScaleUp(now time.Duration) (finegrain.ScaleUpRound, error)
}

var _ scaleUpper = (*finegrain.Scheduler)(nil)

// Policy is a named scheduler configuration to run a workload under: how to build the
// scheduler, how to configure its queues, what users declare to it, and whether it
// learns from the cluster's feedback.
type Policy struct {
	// Name identifies the policy in results and tables, e.g. "DRF".
	Name string
	// Options configure the reference scheduler (finegrain.New) when New is nil.
	Options []finegrain.Option
	// New builds the scheduler for the schema; nil means finegrain.New(schema,
	// Options...), detailing no skips (finegrain.WithSkipDetails(0)) unless Options
	// say otherwise: the simulator reads none. This is the extension point for
	// schedulers other than the reference one (e.g. Fair with the pre-release list,
	// from package speculate).
	New func(schema *resource.Schema) (Scheduler, error)
	// Queue returns the fairness options of queue name, one of n queues (sorted names);
	// nil adds every queue with default options.
	Queue func(name string, n int) []fairness.Option
	// RequestDims is the set of dimensions of a task's declared request the scheduler is
	// told about; 0 means workload.YARNDims() (cpu and memory, as YARN reserves).
	RequestDims resource.Mask
	// Feedback makes the simulator feed the scheduler as a fine-grained cluster would:
	// every finished task reports an Observation of what it used (learning, eq. 8
	// Reading), and every node reports its usage windows (conformity eq. 16 → Alg. 3).
	// Request-based baselines leave it off: YARN has no such loop, and a baseline fed
	// usage reports would stop allocating on overloaded nodes like FGM.
	Feedback bool
	// Progress makes every node report the progress of its running tasks (the share of
	// their work done, eq. 3.1's input) at each heartbeat, before asking for work, to a
	// scheduler that takes it (finegrain.Scheduler.Progress): what speculation and the
	// pre-release list read.
	Progress bool
	// ScaleUp makes the simulator run a scale-up round for mixed workloads
	// (finegrain.Scheduler.ScaleUp, docs/methods.md §11) every WithScaleUpEvery of
	// simulated time, on a scheduler that has the call (New fails, with
	// ErrInvalidInput, on one that has not), and carry out the round's actions on the
	// running tasks by the execution model of a resize (package doc, "Scale-up"). Its
	// node agents report what Progress makes them report, and every running task's
	// usage so far (Scheduler.ReportRunning, at its 1st, 2nd, 4th, 8th, ... sample, as
	// under Feedback): the straggler test reads the progress, the resource-redundant
	// test the measured peak.
	ScaleUp bool
	// Push runs the policy in push mode (Mode Push) whatever WithMode says: every task
	// is placed on the best-scored node when it becomes pending, and pending tasks are
	// retried in the simulator's queue order (job priority, then submission), as
	// kube-scheduler's default queue sorts pods. The scheduler's fairness ordering
	// then plays no part: it orders heartbeats, and there are none.
	Push bool
}

// build returns the policy's scheduler.
func (p *Policy) build(schema *resource.Schema) (Scheduler, error) {
	if p.New != nil {
		s, err := p.New(schema)
		if err != nil {
			return nil, fmt.Errorf("sim: policy %q: %w", p.Name, err)
		}
		if s == nil {
			return nil, fieldErr("policy.New", p.Name, ErrInvalidInput)
		}
		return s, nil
	}
	s, err := newScheduler(schema, p.Options...)
	if err != nil {
		return nil, fmt.Errorf("sim: policy %q: %w", p.Name, err)
	}
	return s, nil
}

// newScheduler is finegrain.New for the simulator's own policies. The simulator reads
// no Decision's skip details, so the scheduler details none
// (finegrain.WithSkipDetails(0)) unless opts say otherwise: a heartbeat that passes a
// job over then allocates nothing for it, and decides as it would with details.
func newScheduler(schema *resource.Schema, opts ...finegrain.Option) (*finegrain.Scheduler, error) {
	return finegrain.New(schema, append([]finegrain.Option{finegrain.WithSkipDetails(0)}, opts...)...)
}

func (p *Policy) requestDims() resource.Mask {
	if p.RequestDims == 0 {
		return workload.YARNDims()
	}
	return p.RequestDims
}

// yarn is opts and what the YARN baselines keep of YARN: Hadoop's delay scheduling
// (Alg. 2.1, finegrain.PullDelayScheduling, unless opts say otherwise), where a job's
// wait grows while it passes up offers for locality, whether or not the nodes holding
// its input have room (finegrain.WithLocalityWaitForRoom off), and a killed task re-run
// on its request (finegrain.WithFailureEscalation off).
func yarn(opts ...finegrain.Option) []finegrain.Option {
	all := append([]finegrain.Option{finegrain.WithPullStrategy(finegrain.PullDelayScheduling())}, opts...)
	return append(all, finegrain.WithLocalityWaitForRoom(false), finegrain.WithFailureEscalation(false))
}

// FIFO is Hadoop's FIFO scheduler as FGM's baseline: request-based allocation (every
// task holds its declared cpu and memory until it finishes), jobs in priority and
// submission order, Hadoop's delay scheduling.
func FIFO() Policy {
	return Policy{Name: "FIFO", Options: yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.FIFO{}))}
}

// Capacity is Hadoop's Capacity scheduler as FGM's baseline: request-based, each of the
// n queues guaranteed 1/n of the cluster and elastic up to all of it, FIFO inside a
// queue, Hadoop's delay scheduling.
func Capacity() Policy {
	return Policy{
		Name:    "Capacity",
		Options: yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Capacity{})),
		Queue: func(_ string, n int) []fairness.Option {
			return []fairness.Option{fairness.MinShare(1 / float64(n))}
		},
	}
}

// Fair is Hadoop's Fair scheduler as FGM's baseline: request-based, queues and jobs
// ordered by running tasks over weight (the fair rule of docs/methods.md §10), with
// Hadoop's delay scheduling.
func Fair() Policy {
	return Policy{Name: "Fair", Options: yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Fair{}))}
}

// DRF is YARN's dominant resource fairness as FGM's baseline: request-based, queues and
// jobs ordered by weighted dominant share, Hadoop's delay scheduling, without the fair
// packing bound (YARN lets any job take a node another found no room on;
// finegrain.WithPackingBound(+Inf)).
func DRF() Policy {
	return Policy{Name: "DRF", Options: yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.DRF{}), finegrain.WithPackingBound(math.Inf(1)))}
}

// Kubernetes is kube-scheduler with its default plugins as FGM's rival: push placement
// (Push) of one task at a time from a queue in priority, then arrival order
// (PrioritySort); request-based fit of cpu and memory (NodeResourcesFit's filter,
// finegrain.WithPrediction(false)); every fitting node scored (on fewer than 100 nodes the
// default percentageOfNodesToScore scores them all: finegrain.WithCandidates(0)) by
// NodeResourcesFit's LeastAllocated plus NodeResourcesBalancedAllocation with equal
// weights, over cpu and memory with equal weights, both counting the pod being placed.
// The default plugins that read what the simulator has no notion of (affinities,
// taints, images, topology spread) score every node alike and are left out; with a
// single priority, DefaultPreemption never acts. A container killed for running out of
// memory is re-run with the same request (no vertical pod autoscaler:
// finegrain.WithFailureEscalation off).
//
// Reading: kube-scheduler's balanced-allocation score is 1 − σ of the utilisations;
// match.BalancedAllocation is 1 − 2σ, scaled to [0, 1]. Weighing LeastAllocated 2 and
// BalancedAllocation 1 ranks nodes exactly as kube's 1:1 sum does: (2·LA + 1 − 2σ)/3
// orders nodes as LA − σ, and so does LA + 1 − σ.
func Kubernetes() Policy {
	return Policy{Name: "Kubernetes", Push: true, New: func(schema *resource.Schema) (Scheduler, error) {
		dims := workload.YARNDims()
		score, err := match.NewWeighted([]match.Scorer{match.LeastAllocated{Dims: dims}, match.BalancedAllocation{Dims: dims}}, []float64{2, 1})
		if err != nil {
			return nil, err
		}
		return newScheduler(schema, finegrain.WithPrediction(false), finegrain.WithCandidates(0), finegrain.WithScorer(score), finegrain.WithFailureEscalation(false))
	}}
}

// GPUSharing is a Kubernetes-like scheduler of GPU-sharing tasks, as the ATC'23
// fragmentation study runs its policies: push placement by request (no prediction),
// every node that fits scored (finegrain.WithCandidates(0)) by the GPU scorer s alone
// (finegrain.WithGPUScorer; the CPU and memory scorer, NodeScore, removed), which also
// chooses the devices. Use it with Fill, or with Run and WithMode(Push).
func GPUSharing(name string, s gpu.DeviceScorer) Policy {
	return Policy{Name: name, Options: []finegrain.Option{
		finegrain.WithPrediction(false), finegrain.WithCandidates(0), finegrain.WithGPUScorer(s), finegrain.WithoutPlugin("NodeScore"),
	}}
}

// FGM is the paper's scheduler with its defaults: DRF ordering, stage profiles predicted
// from similar tasks, fine-grained matching (Alg. 2) with at most 10% compression, the
// Alg. 3 adjuster fed by usage reports, locality waits by the clock rule
// (finegrain.PullLocalityClock) whose node-locality waits last only while a node
// holding the input has room (finegrain.WithLocalityWaitForRoom),
// with the fair packing bound (finegrain.DefaultPackingBound); unpredictable tasks fall
// back to their request. Every queue has a max share of FGMMaxShare (FGMQueue).
func FGM() Policy {
	return Policy{Name: "FGM", Feedback: true, Queue: FGMQueue}
}

// FGMMaxShare is the max share of FGM's queues (FGMQueue): a dominant share of 0.9,
// nine tenths of the cluster on the queue's dominant dimension.
const FGMMaxShare = 0.9

// FGMQueue is the fairness configuration of FGM's queues: a max share of FGMMaxShare
// (fairness.MaxShare), whatever the queue and however many there are, that a queue
// with no task running may go over with one task (fairness.FirstTaskOverMax), so that
// a task larger than the cap, as on a small cluster, waits for its queue's other tasks
// to end but is never stopped for good.
//
// DRF charges a placed task the peak of the profile held for it on every dimension
// (cpu, memory, disk and network bandwidth). A request is held whole, so a queue of
// request-based tasks never holds more than the cluster; a predicted profile's peaks
// come from stages that do not all run at once, so the fine-grained matcher packs tasks
// whose peaks add up to more than the cluster holds, and a queue's dominant share can
// pass 1. That happens while the queue alone has work pending: in the compare
// workloads one queue's tasks held up to twice the cluster's disk bandwidth in peaks.
// No other queue can then come level with it, and without preemption DRF's order
// evens the shares out only as fast as its tasks end.
//
// The cap leaves room for the queues that come next. Without preemption a queue whose
// work arrives while another holds the cluster waits for that queue's tasks to end,
// which for long reduce phases is minutes; a queue capped below the whole cluster
// leaves room that the arriving queue's tasks start in at once, as a YARN queue's
// maximum capacity or a YuniKorn queue's max resources do for their neighbours. The
// price is that a queue alone with work cannot use that room either. The value 0.9
// is measured, not derived (compare -max-share; docs/results.md, "FGM's queue cap"):
// over max shares of 0.75 to 1 on compare's four environments, seeds 1–9, it is the
// largest that keeps FGM's backlogged Jain index online in a dedicated cluster within
// 1% of DRF's both over the nine seeds and over the table's three (0.95: 0.858 against
// 0.867 over nine, 2.7% below over three; 1: 0.839), and it held on seeds 10–18; lower
// caps finish the offline cloud workload 3–4% later over nine seeds. A max share also makes the
// scheduler re-take the fairness order after every task it starts
// (plugins.DelayScheduling), so that a heartbeat's tasks go by up-to-date shares rather
// than one to every job of the poorest queue before the next queue is looked at.
func FGMQueue(queue string, queues int) []fairness.Option {
	return FGMQueueAt(FGMMaxShare)(queue, queues)
}

// FGMQueueAt is FGMQueue with a max share of max in place of FGMMaxShare (0: none), for
// a Policy's Queue: to run FGM with another cap (compare -max-share).
func FGMQueueAt(max float64) func(queue string, queues int) []fairness.Option {
	return func(string, int) []fairness.Option {
		return []fairness.Option{fairness.MaxShare(max), fairness.FirstTaskOverMax(true)}
	}
}

// FairPreRelease is Hadoop's Fair scheduler choosing tasks by the pre-release resource
// list (PRRL thesis ch. 4, Alg. 4.1/4.2; finegrain.PullPreReleaseList) instead of delay
// scheduling: request-based, node agents report progress so that busy slots have a
// time left. Compare it with Fair (delay scheduling) for locality and job completion.
func FairPreRelease() Policy {
	return Policy{Name: "Fair+PRL", Progress: true, New: func(schema *resource.Schema) (Scheduler, error) {
		placer, err := speculate.NewFairPlacer()
		if err != nil {
			return nil, err
		}
		return newScheduler(schema, yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Fair{}), finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer)))...)
	}}
}

// FairLATE is Fair (with delay scheduling) speculating with LATE (docs/methods.md §8;
// Hadoop's defaults: speculativeCap 0.1, slowTaskThreshold 1, slowNodeThreshold 1, 60 s
// minimum runtime); node agents report progress.
func FairLATE() Policy {
	return Policy{Name: "Fair+LATE", Progress: true, New: func(schema *resource.Schema) (Scheduler, error) {
		late, err := speculate.NewLATE()
		if err != nil {
			return nil, err
		}
		return newScheduler(schema, yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Fair{}), finegrain.WithSpeculation(late))...)
	}}
}

// FairPRRL is Fair (with delay scheduling) speculating with the pre-release resource
// list (docs/methods.md §9, thesis Alg. 3.1; LATE's defaults); node agents report
// progress.
func FairPRRL() Policy {
	return Policy{Name: "Fair+PRRL", Progress: true, New: func(schema *resource.Schema) (Scheduler, error) {
		prrl, err := speculate.NewPRRL()
		if err != nil {
			return nil, err
		}
		return newScheduler(schema, yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Fair{}), finegrain.WithSpeculation(prrl))...)
	}}
}

// FairProgress is Fair (with delay scheduling) whose node agents report progress, as
// FairLATE's and FairScaleUp's do, and that takes no action on it: the "no action" run
// of the mixed-workload comparison (Mixed), heartbeating exactly as the others do. The
// reports change none of Fair's decisions.
func FairProgress() Policy {
	return Policy{Name: "Fair", Progress: true, Options: yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Fair{}))}
}

// FairScaleUp is Fair (with delay scheduling) running scale-up rounds for mixed
// workloads (Policy.ScaleUp; docs/methods.md §11) configured by cfg
// (finegrain.WithScaleUp): node agents report progress and running usage, and every
// WithScaleUpEvery the scheduler grows or moves the latency-sensitive tasks that will
// miss their SLO, taking room from idle nodes and — unless cfg.IdleOnly — from batch
// tasks, by reclaim and preemption that shrink them. It is named "Fair+ScaleUp", or
// "Fair+ScaleUp/idle" with cfg.IdleOnly. Building the scheduler fails on an invalid
// cfg.
func FairScaleUp(cfg finegrain.ScaleUpConfig) Policy {
	name := "Fair+ScaleUp"
	if cfg.IdleOnly {
		name += "/idle"
	}
	return Policy{Name: name, Progress: true, ScaleUp: true,
		Options: yarn(finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Fair{}), finegrain.WithScaleUp(cfg))}
}

// Mixed returns the mixed-workload comparison (docs/methods.md §11): four runs on the
// same base, Fair with delay scheduling and progress reports, that differ only in what
// they do about latency-sensitive tasks falling behind — no action (FairProgress), LATE
// backups (FairLATE), scale-up from idle room only (FairScaleUp with IdleOnly), and
// scale-up with reclaim and preemption (FairScaleUp, the defaults).
func Mixed() []Policy {
	return []Policy{FairProgress(), FairLATE(), FairScaleUp(finegrain.ScaleUpConfig{IdleOnly: true}), FairScaleUp(finegrain.ScaleUpConfig{})}
}

// Placements returns Fair with delay scheduling and Fair with the pre-release list
// (the comparison of docs/methods.md §10).
func Placements() []Policy { return []Policy{Fair(), FairPreRelease()} }

// Speculations returns Fair without speculation, with LATE and with PRRL (the comparison
// of docs/methods.md §8–9).
func Speculations() []Policy { return []Policy{Fair(), FairLATE(), FairPRRL()} }

// Baselines returns FGM's four baselines: FIFO, Capacity, Fair, DRF.
func Baselines() []Policy { return []Policy{FIFO(), Capacity(), Fair(), DRF()} }

// Policies returns the baselines followed by FGM, the comparison of docs/methods.md §7.
func Policies() []Policy { return append(Baselines(), FGM()) }

// Rivals returns what users would run instead of FGM today: Kubernetes
// (kube-scheduler's default plugins), Tetris (multi-resource packing, docs/methods.md
// §14) and LoadAware (Koordinator's usage-aware placement, §15).
func Rivals() []Policy { return []Policy{Kubernetes(), Tetris(), LoadAware()} }

// Comparison returns the baselines, the rivals and FGM, in that order: the tables of
// examples/compare.
func Comparison() []Policy { return append(append(Baselines(), Rivals()...), FGM()) }

// PolicyByName returns the named policy of Comparison, Placements or Speculations, or
// FGM+Tetris, LoadAware-100, Fair+ScaleUp or Fair+ScaleUp/idle, ignoring case.
func PolicyByName(name string) (Policy, error) {
	for _, p := range append(Comparison(), FGMTetris(), LoadAwareFull(), FairPreRelease(), FairLATE(), FairPRRL(), Mixed()[2], Mixed()[3]) {
		if strings.EqualFold(p.Name, name) {
			return p, nil
		}
	}
	return Policy{}, fieldErr("policy", name, ErrUnknownPolicy)
}
