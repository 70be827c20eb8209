package cluster

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Sentinel errors; every error of the package wraps one of these (or a sentinel of a
// lower package, such as resource.ErrNegative), so errors.Is works.
var (
	// ErrUnknownNode, ErrUnknownTask, ErrUnknownJob and ErrUnknownQueue report an ID the
	// state does not hold.
	ErrUnknownNode  = errors.New("unknown node")
	ErrUnknownTask  = errors.New("unknown task")
	ErrUnknownJob   = errors.New("unknown job")
	ErrUnknownQueue = errors.New("unknown queue")
	// ErrDuplicate reports an ID already in use.
	ErrDuplicate = errors.New("duplicate ID")
	// ErrInvalid reports a malformed argument: empty ID, negative time, bad option.
	ErrInvalid = errors.New("invalid argument")
	// ErrState reports an event that does not fit the task's state, such as a finish
	// before any start, a second cancellation or a commit of a task not reserved.
	ErrState = errors.New("event does not fit the task's state")
)

// NodeSpec describes one server of the cluster.
type NodeSpec struct {
	// ID names the node; unique in the cluster.
	ID string
	// Rack names the node's rack, for locality; may be empty.
	Rack string
	// Capacity is the node's total resources, N in the paper.
	Capacity resource.Tuple
	// GPU is the node's GPUs as separate devices (package gpu): tasks with a
	// TaskSpec.GPU demand are placed on them device by device. Zero: none.
	GPU gpu.Spec
}

// JobSpec describes a job: a group of tasks that fairness treats as one (the middle
// level of queue → job → task).
type JobSpec struct {
	// ID names the job; unique.
	ID string
	// Queue names the queue the job belongs to; "" is the default queue.
	Queue string
	// Weight is the job's fair-share weight; 0 means 1.
	Weight float64
	// Priority orders jobs under FIFO (higher first), and is the preemption priority
	// of the job's tasks: with priority preemption on, a task may evict tasks of jobs
	// of lower priority (like a Kubernetes pod's PriorityClass).
	Priority int
	// Submitted is when the job arrived; earlier first among equals.
	Submitted time.Duration
	// MinMember makes the job a gang: none of its tasks runs until MinMember of them
	// can run together (all-or-nothing, like a Volcano or coscheduling PodGroup's
	// minMember; as in Volcano, its finished tasks count toward it). Once they have,
	// the job's further tasks (reduce tasks, re-runs) start as they fit, until it loses
	// every running task to evictions or failures and gathers again
	// (JobInfo.Gathered). 0 or 1: no gang. Until it has gathered, the job must hold at
	// least MinMember live or finished tasks: Submit refuses a batch that leaves it
	// short.
	MinMember int
	// MaxDisrupted bounds how many of the job's tasks preemption may have evicted and
	// not yet run again at once (a disruption budget, like a Kubernetes
	// PodDisruptionBudget's maxUnavailable, but a hard bound: Kubernetes' preemption
	// honours a PDB only when it can, and a PDB counts every unavailable pod, failed
	// ones too); 0 means no bound. Tasks that must never be evicted are marked
	// TaskSpec.NonPreemptible.
	MaxDisrupted int
}

// TaskSpec describes one unit of work to place on a node.
type TaskSpec struct {
	// ID names the task; unique.
	ID string
	// Job names the task's job, which must have been submitted.
	Job string
	// Key is the task's similarity key (docs/methods.md §2, Def. 3): the estimator
	// predicts its stage profile from earlier tasks of the same key. A zero Key (empty
	// Logic) makes the task unpredictable: it is placed by its request.
	Key predict.Key
	// Request is the quantity the user asked for. Unpredictable tasks get exactly this
	// (request quantity).
	Request resource.Tuple
	// Duration is how long the request is held when known; 0 means until the task
	// finishes.
	Duration time.Duration
	// Profile optionally declares the task's stage profile; when set it is used instead
	// of an estimate.
	Profile stage.Profile
	// Deadline is the absolute time by which the task must finish, or 0 for none. Used
	// by the deadline QoS check (eq. 15).
	Deadline time.Duration
	// Inputs lists the nodes holding a replica of the task's input, for locality.
	Inputs []string
	// Priority orders tasks within a job: higher first. (The preemption priority is
	// the job's: JobSpec.Priority.)
	Priority int
	// Submitted is when the task arrived.
	Submitted time.Duration
	// NonPreemptible keeps the task from being evicted to make room for another
	// (priority or guarantee preemption). Failures and node removals still return it
	// to pending.
	NonPreemptible bool
	// GPU is what the task asks of a node's GPU devices (NodeSpec.GPU): a share of
	// one device or whole devices, of given models. It is held from the task's
	// reservation until it ends, whatever its profile. Zero: none.
	GPU gpu.Demand
	// Class says whether the task is batch work (the zero value) or latency-sensitive:
	// a service or a request-serving task with a service-level objective, the kind of
	// task the straggler method of docs/methods.md §11 protects at batch work's cost.
	Class TaskClass
	// SLO is the longest run time, counted from the task's start, that still meets the
	// task's service-level objective (T_SLO of docs/methods.md §11); 0: none. Only a
	// latency-sensitive task may have one.
	SLO time.Duration
}

// TaskClass is the kind of work a task does, for the methods that treat
// latency-sensitive tasks and batch tasks differently (docs/methods.md §11). The zero
// value is Batch.
type TaskClass uint8

const (
	// Batch: throughput work (a map or reduce task, a training step, a best-effort
	// pod) that may be slowed down to make room for latency-sensitive tasks. The zero
	// value: a task that says nothing is batch.
	Batch TaskClass = iota
	// LatencySensitive: a task whose run time matters to someone waiting (a service, a
	// query), usually with an objective (TaskSpec.SLO).
	LatencySensitive
)

var classNames = [...]string{"batch", "latency-sensitive"}

// String returns "batch" or "latency-sensitive" ("TaskClass(n)" for other values),
// which ParseTaskClass reads back.
func (c TaskClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("TaskClass(%d)", uint8(c))
}

// valid reports whether c is one of the classes above.
func (c TaskClass) valid() bool { return int(c) < len(classNames) }

// ParseTaskClass reads a task class as String writes it, without regard to case:
// "batch" or "latency-sensitive", or the abbreviations of co-located clusters'
// QoS classes, "BE" (best effort) for Batch and "LS" for LatencySensitive. Spaces
// around it are ignored. Any other text gives an error wrapping ErrInvalid that
// quotes it.
func ParseTaskClass(s string) (TaskClass, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "batch", "be":
		return Batch, nil
	case "latency-sensitive", "ls":
		return LatencySensitive, nil
	}
	return Batch, fmt.Errorf("cluster: task class %q (want batch, latency-sensitive, BE or LS): %w", s, ErrInvalid)
}

// TaskState is where a task is in its life. Every submitted task is in exactly one
// state at any moment.
type TaskState uint8

const (
	// Pending: waiting for a node.
	Pending TaskState = iota + 1
	// Running: holds a committed reservation on a node, and its start has come.
	Running
	// Finished: done; its resources were returned.
	Finished
	// Cancelled: withdrawn by the embedder.
	Cancelled
	// Reserved: holds a tentative reservation on a node, visible to every later
	// decision, that is either committed (Running, or Booked) or rolled back (Pending).
	// A task is Reserved only between the Reserve and Permit steps of a scheduling
	// cycle, or while a Permit plugin keeps it waiting.
	Reserved
	// Booked: holds a committed reservation on a node that starts in the future (a
	// future-start placement): nothing placed later may take what it holds, and it
	// becomes Running when the clock reaches its start (State.Advance).
	Booked
)

var stateNames = [...]string{"", "pending", "running", "finished", "cancelled", "reserved", "booked"}

func (s TaskState) String() string {
	if s > 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("TaskState(%d)", uint8(s))
}

// BackupSuffix ends the ID of a backup attempt: the backup of task "t7" is
// "t7"+BackupSuffix. The state names backups; a submitted task whose ID ends with it is
// never backed up.
const BackupSuffix = "#backup"

// BackupID returns the ID of task id's backup attempt.
func BackupID(id string) string { return id + BackupSuffix }
