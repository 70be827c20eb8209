package framework

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/stage"
)

// Code classifies what an extension point said, as the Kubernetes scheduling
// framework's status codes do.
type Code uint8

const (
	// Success: go on.
	Success Code = iota
	// Unschedulable: not this task here (or, from a job filter, not this job here);
	// the cycle moves on to the next node or job.
	Unschedulable
	// Closed: the node takes no task now (its mode stops allocation, it is busy, the
	// heartbeat's cap is reached); a pull cycle ends.
	Closed
	// Wait: a Permit plugin holds the task reserved until it is allowed or rejected.
	Wait
	// Error: the plugin failed; the cycle treats it as Unschedulable and logs it.
	Error
)

var codeNames = [...]string{"Success", "Unschedulable", "Closed", "Wait", "Error"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", uint8(c))
}

// Status is what an extension point returns: a code, the reason in a Decision's
// vocabulary, and the plugin that said it (filled in by the cycle). The zero Status
// is Success. Match results travel in the Attempt, not here, so a Status is small.
type Status struct {
	Code   Code
	Reason Reason
	Plugin string
}

// OK reports Success.
func (s Status) OK() bool { return s.Code == Success }

// Refuse is an Unschedulable status for reason r.
func Refuse(r Reason) Status { return Status{Code: Unschedulable, Reason: r} }

// Close is a Closed status for reason r.
func Close(r Reason) Status { return Status{Code: Closed, Reason: r} }

func (s Status) String() string {
	if s.OK() {
		return "Success"
	}
	if s.Plugin != "" {
		return fmt.Sprintf("%v: %v (%s)", s.Code, s.Reason, s.Plugin)
	}
	return fmt.Sprintf("%v: %v", s.Code, s.Reason)
}

// Reason says why a heartbeat stopped or why a job or task was passed over.
type Reason uint8

const (
	// NoReason: nothing was refused.
	NoReason Reason = iota
	// NodeBusy: the node's free resources are below the idle threshold (Alg. 1 line 1).
	NodeBusy
	// PolicyStop: the node's mode is StopAllocation (Alg. 3).
	PolicyStop
	// NoPending: no job has a task to offer the node: none is pending (or, under the
	// pre-release list, none is left that the node could take).
	NoPending
	// CapReached: the heartbeat started as many tasks as its cap allows.
	CapReached
	// NoRoom: the task does not fit; the match result says where.
	NoRoom
	// QoS: the task fits, but the QoS check (eq. 15 deadlines) refused it.
	QoS
	// LocalityWait: delay scheduling passed the offer, waiting for a more local node.
	LocalityWait
	// MaxShare: placing the task would take its job or a queue above its max share.
	MaxShare
	// PromisedElsewhere: under the pre-release list, every job that needs a slot was
	// promised a busy slot elsewhere where its task finishes sooner.
	PromisedElsewhere
	// PluginRefused: a plugin refused; Status.Plugin names it.
	PluginRefused
	// PermitWaiting: a Permit plugin holds the task reserved, waiting.
	PermitWaiting
	// PermitDenied: a Permit plugin rejected the task, or its wait timed out; its
	// reservation was rolled back.
	PermitDenied
	// NoClassFits: the job was passed over before a task was chosen because none of
	// its pending tasks can start on the node: what each class of them needs free
	// (DemandClasses) exceeds the node's free room, or a task of the class was
	// refused there earlier in the heartbeat. As a Decision's Stop: the heartbeat
	// found at once, from the demands of the pending tasks, that none of them can
	// start on the node, and walked no job.
	NoClassFits
	// Preempted: the task was evicted to make room for a task of a higher-priority
	// job (Eviction.Reason).
	Preempted
	// Reclaimed: the task was evicted so that a queue below its guaranteed minimum
	// gets it back from a queue above its own (Eviction.Reason).
	Reclaimed
	// GangWaiting: the task's job is a gang that may not begin to gather now: another
	// gang holds tentative reservations (one gang gathers at a time, so that two gangs
	// never each hold half of what they need), the gang backs off after a rollback, or
	// the node gives other work its turn after a rollback (plugins.Gang).
	GangWaiting
	// GangShort: the task's job is a gang with fewer live and finished tasks than its
	// MinMember (some were cancelled): it cannot gather until more are submitted.
	GangShort
	// NoGPU: the node's GPU devices cannot hold the task's GPU demand: too few of
	// them have its share free, or their model is not one the task allows
	// (plugins.GPUFit).
	NoGPU
	// AheadOfOrder: the job's queue holds more than the packing bound above the
	// share of a queue whose job was passed over earlier in the heartbeat for want of
	// room on the node (plugins.DelayScheduling's fair packing bound): it may not
	// take the node out of the fairness order.
	AheadOfOrder
	// OverCapacity: the task does not fit the node because a stage needs more of a
	// dimension than the node has at all, even empty: no wait and no eviction can
	// place it there (kube-scheduler's UnschedulableAndUnresolvable). Explanations
	// (Tally, Skip, probes) report it; plugins see NoRoom.
	OverCapacity
	// AllSkipped: as a Decision's Stop, tasks are pending but the heartbeat passed
	// every job that has one over (Decision.Refusals says why).
	AllSkipped
)

var reasonNames = [...]string{"none", "node busy", "policy stop", "no pending task", "cap reached", "no room", "QoS check", "locality wait", "max share", "promised elsewhere", "refused by a plugin", "waiting for permit", "permit denied", "no class of its tasks fits", "preempted", "reclaimed for a guarantee", "another gang is gathering", "gang short of MinMember tasks", "no GPU device fits", "its queue is ahead of a queue waiting for room here (packing bound)", "smaller than the task", "every job passed over"}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Assignment is a task placed on a node: the task now holds Profile on the node's
// timeline from Start.
type Assignment struct {
	Task, Job, Node string
	// Start is when the task's reservation begins: now, or later for a future-start
	// placement.
	Start time.Duration
	// Profile is what is planned: the predicted (or declared) stage profile, or the
	// request held until the task finishes for an unpredictable task.
	Profile stage.Profile
	// Predicted reports whether Profile is a prediction (or declaration) matched stage
	// by stage, rather than the request.
	Predicted bool
	// Result is the matcher's verdict: Fit, or FitCompressed with the compression each
	// stage runs under.
	Result match.Result
	// Locality is how close the task runs to its input.
	Locality fairness.Level
	// BackupOf is, for a backup attempt, the task it backs up; Task is then
	// cluster.BackupID(BackupOf). Empty for a task's own placement.
	BackupOf string
	// Evicted lists the tasks evicted to make room for this one (preemption): they
	// are pending again, and the embedder must stop them, and start this task once
	// they have stopped (the scheduler's books hold the room for it already).
	Evicted []Eviction
	// Devices is the GPU devices of Node the task holds (cluster.TaskSpec.GPU): the
	// devices to hand it, e.g. in CUDA_VISIBLE_DEVICES. Zero when it asks for none.
	Devices gpu.Allocation
}

// Eviction is a running task evicted to make room for another: it is pending again,
// counted against its job's disruption budget until placed again, and the embedder
// must stop it where it runs.
type Eviction struct {
	Task, Job, Node string
	// Reason is Preempted (a higher-priority task) or Reclaimed (a queue's guarantee).
	Reason Reason
	// For names the task the room was made for.
	For string
}

func (e Eviction) String() string {
	return fmt.Sprintf("task %q of job %q on node %q: %v for task %q", e.Task, e.Job, e.Node, e.Reason, e.For)
}

// Skip records a job passed over during a pass, and why.
type Skip struct {
	Job, Task string // Task is empty when the job was passed before a task was chosen
	Reason    Reason
	// Plugin names the plugin that passed the job over, when one did.
	Plugin string
	// Result is the task's match result when Reason is NoRoom, OverCapacity or QoS;
	// the zero Result otherwise, which means nothing.
	Result match.Result
}

// String explains the skip in one line, with the match result only where there is
// one: `job "etl", task "m3": no room: stage 0 needs memory=...`.
func (s Skip) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %q", s.Job)
	if s.Task != "" {
		fmt.Fprintf(&b, ", task %q", s.Task)
	}
	fmt.Fprintf(&b, ": %v", s.Reason)
	if s.Plugin != "" {
		fmt.Fprintf(&b, " (%s)", s.Plugin)
	}
	if s.Task != "" && (s.Reason == NoRoom || s.Reason == OverCapacity || s.Reason == QoS) {
		fmt.Fprintf(&b, ": %v", s.Result)
	}
	return b.String()
}

// MaxSkips is the most skips a Decision can detail.
const MaxSkips = 64

// DefaultSkipDetails is how many skips a Decision details unless told otherwise
// (WithSkipDetails): enough to see why the first jobs in order waited, at the cost of
// one small allocation in a heartbeat that passes a job over.
const DefaultSkipDetails = 8

// Decision is the outcome of one heartbeat (pull mode): the tasks to start on the node,
// why the pass stopped, how many jobs were passed over and, when asked, the first of
// them and why.
type Decision struct {
	Node        string
	At          time.Duration
	Assignments []Assignment
	// Stop says why the heartbeat ended: NodeBusy, PolicyStop, CapReached,
	// PromisedElsewhere; NoPending when no task is pending; AllSkipped when tasks
	// are pending but every job that has one was passed over (Refusals says why);
	// NoClassFits when the heartbeat could tell at once, from the demands of the
	// pending tasks, that none of them can start on the node — it then walks no job,
	// and Skipped is 0; PluginRefused when a pass plugin ends it
	// (plugins.QoSVectorScheduling: the node has not reported its QoS supply).
	Stop Reason
	// Skips details the first refusals — a job passed over, or one of its tasks
	// refused (Task set) — as many as the skip details setting asks; Skipped counts
	// all of them, and Refusals tallies all of them by reason. A job appears once
	// per task of it that was refused: a pass that looks past a task that fits no
	// node may refuse several.
	Skips   []Skip
	Skipped int
	// Refusals counts every skip of the heartbeat by reason, dimension and plugin
	// ("7 locality wait, 3 short of memory"); its Of is Skipped, and it names no
	// closest node (there is one node).
	Refusals Tally
	// Evicted lists the evictions of the heartbeat that no Assignment carries: those
	// made for a task that then waits for a permit (a gang) or was refused after all.
	// Like Assignment.Evicted, the embedder must stop these tasks.
	Evicted []Eviction

	details int // how many skips to detail
}

// Details is how many skips the Decision details at most (the skip-details setting).
func (d *Decision) Details() int { return d.details }

func (d *Decision) skip(sk *Skip) {
	d.tally(countOf(sk.Reason, sk.Plugin, &sk.Result))
	if len(d.Skips) < d.details {
		if d.Skips == nil {
			d.Skips = make([]Skip, 0, d.details)
		}
		d.Skips = append(d.Skips, *sk)
	}
}

// skipJob is skip for job j passed over for reason r by plugin (empty: none), before a
// task was chosen: the Skip, whose match result alone is some 500 bytes, is built
// only when the Decision details it. A walk records one for most jobs it reaches.
func (d *Decision) skipJob(j *cluster.JobInfo, r Reason, plugin string) {
	if len(d.Skips) < d.details {
		d.skip(&Skip{Job: j.ID(), Reason: r, Plugin: plugin})
		return
	}
	d.tally(Count{Reason: r, Plugin: plugin, N: 1}) // countOf's, with no match result
}

// tally counts one skip under key c.
func (d *Decision) tally(c Count) {
	d.Skipped++
	d.Refusals.Of++
	d.Refusals.count(c, 1)
}

// ErrNotPlaced reports a push placement that found no node; the PlacementError says
// why.
var ErrNotPlaced = errors.New("no node fits the task")

// PlacementError is the error of a placement that found no node (push, host
// Reserve and PostFilter): the task, how many nodes were tried, and why they refused
// it, counted by reason in the kube style with the node that came closest
// (Refusals). Its fields agree with its message: Reason, Dim and Plugin are the first
// count's, Result the closest node's.
type PlacementError struct {
	Task string
	// Tried counts the nodes the filters ran on. The free index rules out, without a
	// match, the nodes with less free of its dimension (cluster.State.IndexDim) than
	// the task's first stage needs: Refusals counts them as short of it.
	Tried int
	// Refusals counts the nodes of the cluster by why they refused the task (its Of
	// is every node considered), names the node that came closest and what it lacked,
	// and says whether the task is Unresolvable: no node could hold it even empty.
	// A task refused before any node was looked at (a PreFilter plugin) is counted
	// as refused by every node for that reason; one refused after the filters (a
	// Reserve or Permit plugin) by its chosen node, and then Of counts only the nodes
	// asked (a push walk stops once it has enough candidates: WithCandidates).
	Refusals Tally
	// Reason is why the task was not placed: the reason of Refusals' first count —
	// or of the step that refused it after the filters passed it somewhere
	// (PermitDenied, PermitWaiting, a Reserve plugin's).
	Reason Reason
	// Dim names the dimension short of room when Reason is NoRoom or OverCapacity.
	Dim string
	// Plugin names the plugin that refused, when one did.
	Plugin string
	// Result is the match result of the node that came closest (Refusals.Closest):
	// Code match.NoRoom and the stage, dimension and amounts it lacked. With no node
	// short of room, it is the last refusing node's verdict (match.Unschedulable,
	// DeadlineMissed, …), or the zero Result when no matcher refused.
	Result match.Result
	// Evicted lists tasks evicted for this one before it was kept waiting for a permit
	// (or refused after all): the embedder must stop them.
	Evicted []Eviction
}

func (e *PlacementError) Error() string {
	if e.Reason == PermitWaiting {
		return fmt.Sprintf("finegrain: task %q: reserved, waiting for a permit (%s): not placed yet", e.Task, e.Plugin)
	}
	if len(e.Refusals.Counts) == 0 && !e.Refusals.Unresolvable {
		if e.Plugin != "" {
			return fmt.Sprintf("finegrain: task %q: %v (%s): %v", e.Task, e.Reason, e.Plugin, ErrNotPlaced)
		}
		return fmt.Sprintf("finegrain: task %q: %v: %v", e.Task, e.Reason, ErrNotPlaced)
	}
	return fmt.Sprintf("finegrain: task %q: %s: %v", e.Task, e.Refusals.Explain(), ErrNotPlaced)
}

// Unwrap returns ErrNotPlaced (for PermitWaiting too: the task is not placed yet).
func (e *PlacementError) Unwrap() error { return ErrNotPlaced }
