package framework

import (
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/stage"
)

// Plugin is anything registered with a Framework. A plugin implements one or more of
// the extension-point interfaces below; the framework calls it at each point it
// implements, in registration order. A plugin instance belongs to one Framework.
type Plugin interface {
	// Name names the plugin in statuses, logs and Framework.Plugins; unique within a
	// Framework.
	Name() string
}

// TaskDemand is what a task asks of a node.
type TaskDemand struct {
	// Plan is the profile the task is expected to follow: its declared profile, the
	// estimator's prediction, or its request held for its duration.
	Plan stage.Profile
	// Hold is what is matched and reserved: Plan, and for a predicted plan possibly
	// its last stage's non-compressible demand held until the task finishes.
	Hold stage.Profile
	// Predicted reports a stage-by-stage plan rather than the request.
	Predicted bool
}

// DemandPlugin works out a task's demand, the first step of every cycle (the data
// the Kubernetes framework's PreFilter computes). Exactly one is used: the last one
// registered.
type DemandPlugin interface {
	Plugin
	Demand(c *Cycle, t *cluster.TaskInfo) TaskDemand
}

// Attempt is one way of placing a task: the task, its demand, the node and the start
// being considered, and what the Filter plugins found. Filter plugins may set Result;
// the Reserve step reserves Demand.Hold with Result.Allowance.
type Attempt struct {
	Task   *cluster.TaskInfo
	Demand TaskDemand
	Node   *cluster.NodeInfo
	Start  time.Duration
	// Level is how close Node is to the task's input.
	Level fairness.Level
	// Result is the match verdict the matching Filter plugin wrote (and a QoS check
	// may have replaced); a Fit result when no plugin matched.
	Result match.Result
	// Backup marks a backup attempt of a running task (speculation).
	Backup bool
	// Devices is the GPU devices the task would hold on Node (cluster.TaskSpec.GPU):
	// zero after Filter, which lets the state take the best fit at Reserve; a GPU
	// Score plugin (plugins.GPUScore) sets the devices its score assumes. An attempt
	// reserved without being ranked (a host's Reserve, a PostFilter's proposal) is
	// scored first for that; pull mode takes the best fit.
	Devices gpu.Allocation
}

// PreFilterPlugin checks a task once per cycle, before any node: cluster-wide
// conditions such as queue quotas.
type PreFilterPlugin interface {
	Plugin
	PreFilter(c *Cycle, a *Attempt) Status
}

// FilterPlugin checks whether a.Task fits a.Node from a.Start. Filters run in order
// and the first that does not succeed decides. A Filter must only read shared state:
// the framework calls Filters concurrently for different nodes (Framework.Filter).
type FilterPlugin interface {
	Plugin
	Filter(c *Cycle, a *Attempt) Status
}

// PostFilterPlugin runs in push mode when no node passed the filters: it may make
// room (preemption) or find another way (a future start) and then fills a.Node and
// a.Start with a placement that passes the filters (Cycle.Filter) and succeeds. The
// first that succeeds wins.
type PostFilterPlugin interface {
	Plugin
	PostFilter(c *Cycle, a *Attempt) Status
}

// ScorePlugin ranks the nodes that passed the filters in push mode; higher is better.
// A node's score is the sum over score plugins (a plugin applies its own weight); NaN
// counts as −∞.
type ScorePlugin interface {
	Plugin
	Score(c *Cycle, a *Attempt) float64
}

// ScoreNormalizer is implemented by a ScorePlugin whose scores are normalised over the
// candidates before they are summed (the Kubernetes framework's NormalizeScore):
// scores[i] is the plugin's score of candidates[i].
type ScoreNormalizer interface {
	NormalizeScores(c *Cycle, candidates []Attempt, scores []float64)
}

// ReservePlugin is told that a task was reserved on a node (Reserve), and that the
// reservation was rolled back (Unreserve: a later Reserve plugin failed or a Permit
// plugin rejected it). A failing Reserve rolls the reservation back.
type ReservePlugin interface {
	Plugin
	Reserve(c *Cycle, a *Attempt) Status
	Unreserve(c *Cycle, a *Attempt)
}

// PermitPlugin approves a reservation before it is committed: Success commits it,
// Unschedulable rolls it back, Wait keeps the task Reserved for at most timeout
// until some plugin calls Cycle.Allow or Cycle.Reject for it (gang scheduling). A
// wait that times out is rejected at the first cycle after it.
type PermitPlugin interface {
	Plugin
	Permit(c *Cycle, a *Attempt) (st Status, timeout time.Duration)
}

// NodeGatePlugin (pull mode) says whether node n may take another task now. It is
// asked about the heartbeat's node before each pass over the jobs and after each
// start, where a Closed status ends the heartbeat with its reason; a Pass plugin may
// also ask about another node (Cycle.Open), so a gate reads n's free resources with
// Cycle.FreeOn(n), not Cycle.Free.
type NodeGatePlugin interface {
	Plugin
	Gate(c *Cycle, n *cluster.NodeInfo) Status
}

// JobFilterPlugin (pull mode) passes over jobs that cannot use the node, before a
// task is chosen. FilterPass runs before a pass walks the jobs (a Closed status ends
// the heartbeat); FilterJob runs for each job the walk reaches (Unschedulable passes
// the job over); Refused tells the plugin that a task was refused on the node, for
// what it may learn about the jobs still to come in this heartbeat.
type JobFilterPlugin interface {
	Plugin
	FilterPass(c *Cycle, n *cluster.NodeInfo) Status
	FilterJob(c *Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) Status
	Refused(c *Cycle, a *Attempt, st Status)
}

// PassPlugin (pull mode) offers the heartbeat's node to pending work: it chooses
// tasks (the locality strategy: the fairness order with delay scheduling, or the
// pre-release list) or backups (speculation) and starts them with Cycle.Try or
// Cycle.TryBackup. Passes run in registration order; an error ends the heartbeat
// and must come before the pass changes anything.
type PassPlugin interface {
	Plugin
	Pass(c *Cycle, n *cluster.NodeInfo) error
}

// ForgetPlugin is told when the state forgets a completed job (cluster.Retention), so
// that it drops what it keeps for the job: a delay-scheduling wait, or scratch kept
// by JobInfo.Index, which a later job may reuse. The job is still readable during the
// call, which comes after the event that completed the job (Finish, Cancel, a clock
// advance past Retention.Age), or when a Walk ends if the job completed during it.
type ForgetPlugin interface {
	Plugin
	Forget(j *cluster.JobInfo)
}
