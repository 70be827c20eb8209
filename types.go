package finegrain

import (
	"errors"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/predict"
)

// The Scheduler's vocabulary is its parts': the specs and task states of package
// cluster, the decisions and reasons of package framework. The names below are the
// same types, so that a program using only the Scheduler needs only this package.

type (
	// Node describes one server of the cluster (cluster.NodeSpec).
	Node = cluster.NodeSpec
	// Job groups tasks for fairness (cluster.JobSpec).
	Job = cluster.JobSpec
	// Task is one unit of work to place on a node (cluster.TaskSpec).
	Task = cluster.TaskSpec
	// TaskState is where a task is in its life (cluster.TaskState).
	TaskState = cluster.TaskState
	// TaskClass says whether a task is batch work or latency-sensitive (Task.Class,
	// with its objective in Task.SLO; cluster.TaskClass).
	TaskClass = cluster.TaskClass
	// Assignment is a task placed on a node (framework.Assignment).
	Assignment = framework.Assignment
	// Decision is the outcome of one heartbeat (framework.Decision).
	Decision = framework.Decision
	// Reason says why a heartbeat stopped or a job or task was passed over
	// (framework.Reason).
	Reason = framework.Reason
	// Skip records a job passed over during a heartbeat (framework.Skip).
	Skip = framework.Skip
	// PlacementError is the error of a push placement that found no node
	// (framework.PlacementError).
	PlacementError = framework.PlacementError
	// Status is what a plugin or a probe says (framework.Status).
	Status = framework.Status
	// Retention bounds what the scheduler remembers of finished work
	// (cluster.Retention; WithRetention).
	Retention = cluster.Retention
	// Eviction is a running task evicted to make room for another (framework.Eviction;
	// WithPreemption): the embedder stops it; it is pending again.
	Eviction = framework.Eviction
	// Tally counts why nodes refused a task, by reason, dimension and plugin, in the
	// kube-scheduler style (framework.Tally; Explain, PlacementError.Refusals,
	// Decision.Refusals).
	Tally = framework.Tally
	// Count is one line of a Tally (framework.Count).
	Count = framework.Count
)

// DefaultRetention remembers the last 12,500 finished tasks and the last 1,000
// completed jobs, with no age limit (cluster.DefaultRetention).
var DefaultRetention = cluster.DefaultRetention

// The task states.
const (
	Pending   = cluster.Pending
	Running   = cluster.Running
	Finished  = cluster.Finished
	Cancelled = cluster.Cancelled
	Reserved  = cluster.Reserved
	Booked    = cluster.Booked
)

// The task classes (Task.Class): Batch, the zero value, and LatencySensitive.
const (
	Batch            = cluster.Batch
	LatencySensitive = cluster.LatencySensitive
)

// ParseTaskClass reads a task class: "batch" or "latency-sensitive", or "BE" or "LS",
// in any case (cluster.ParseTaskClass).
func ParseTaskClass(s string) (TaskClass, error) { return cluster.ParseTaskClass(s) }

// The reasons.
const (
	NoReason          = framework.NoReason
	NodeBusy          = framework.NodeBusy
	PolicyStop        = framework.PolicyStop
	NoPending         = framework.NoPending
	CapReached        = framework.CapReached
	NoRoom            = framework.NoRoom
	QoS               = framework.QoS
	LocalityWait      = framework.LocalityWait
	MaxShare          = framework.MaxShare
	PromisedElsewhere = framework.PromisedElsewhere
	PluginRefused     = framework.PluginRefused
	PermitWaiting     = framework.PermitWaiting
	PermitDenied      = framework.PermitDenied
	NoClassFits       = framework.NoClassFits
	Preempted         = framework.Preempted
	Reclaimed         = framework.Reclaimed
	GangWaiting       = framework.GangWaiting
	GangShort         = framework.GangShort
	NoGPU             = framework.NoGPU
	AheadOfOrder      = framework.AheadOfOrder
	OverCapacity      = framework.OverCapacity
	AllSkipped        = framework.AllSkipped
)

// Sentinel errors; every error the Scheduler returns wraps one of these (or a sentinel
// of a lower package, such as resource.ErrNegative), so errors.Is works.
var (
	ErrUnknownNode  = cluster.ErrUnknownNode
	ErrUnknownTask  = cluster.ErrUnknownTask
	ErrUnknownJob   = cluster.ErrUnknownJob
	ErrUnknownQueue = cluster.ErrUnknownQueue
	ErrDuplicate    = cluster.ErrDuplicate
	ErrInvalid      = cluster.ErrInvalid
	ErrState        = cluster.ErrState
	ErrNotPlaced    = framework.ErrNotPlaced
	ErrImplausible  = predict.ErrImplausible
	// ErrUnresolvable: no node of the cluster could hold the task even empty — its
	// request or declared profile exceeds every node's capacity on a non-compressible
	// dimension (memory, disk, …), or no node has the GPU devices it asks — so Submit
	// refuses it (WithUnresolvableAccepted keeps it
	// waiting instead, for a cluster that may grow). An *UnresolvableError says what.
	ErrUnresolvable = errors.New("no node could ever hold the task")
	// ErrNoDemand: the task says nothing of what it needs — no request, no declared
	// profile, no GPU demand and no key the scheduler could learn a profile for — so
	// it would be placed as needing nothing, any number of it on one node.
	ErrNoDemand = errors.New("the task declares no demand")
)

// BackupSuffix ends the ID of a backup attempt (WithSpeculation).
const BackupSuffix = cluster.BackupSuffix

// BackupID returns the ID of task id's backup attempt.
func BackupID(id string) string { return cluster.BackupID(id) }

// MaxSkips is the most skips a Decision can detail (WithSkipDetails).
const MaxSkips = framework.MaxSkips

// DefaultSkipDetails is how many skips a Decision details by default (WithSkipDetails).
const DefaultSkipDetails = framework.DefaultSkipDetails

// DelayUpdate is the step in which delay scheduling's waits grow (PullDelayScheduling):
// Hadoop's Fair Scheduler update interval.
const DelayUpdate = plugins.DelayUpdate
