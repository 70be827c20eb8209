package finegrain

import (
	"errors"
	"fmt"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Sentinel errors of the Scheduler; every error it returns wraps one of these (or a
// sentinel of a lower package, such as resource.ErrNegative), so errors.Is works.
var (
	// ErrUnknownNode, ErrUnknownTask, ErrUnknownJob and ErrUnknownQueue report an ID the
	// scheduler does not hold.
	ErrUnknownNode  = errors.New("unknown node")
	ErrUnknownTask  = errors.New("unknown task")
	ErrUnknownJob   = errors.New("unknown job")
	ErrUnknownQueue = errors.New("unknown queue")
	// ErrDuplicate reports an ID already in use.
	ErrDuplicate = errors.New("duplicate ID")
	// ErrInvalid reports a malformed argument: empty ID, negative time, bad option.
	ErrInvalid = errors.New("invalid argument")
	// ErrState reports an event that does not fit the task's state, such as a finish
	// before any start or a second cancellation.
	ErrState = errors.New("event does not fit the task's state")
	// ErrNotPlaced reports a push placement that found no node; the returned Decision
	// says why.
	ErrNotPlaced = errors.New("no node fits the task")
)

// Node describes one server of the cluster.
type Node struct {
	// ID names the node; unique in the cluster.
	ID string
	// Rack names the node's rack, for locality (SPEC §10); may be empty.
	Rack string
	// Capacity is the node's total resources, N in the paper.
	Capacity resource.Tuple
}

// Job groups tasks for fairness (SPEC §10's middle level).
type Job struct {
	// ID names the job; unique.
	ID string
	// Queue names the queue the job belongs to; "" is the default queue.
	Queue string
	// Weight is the job's fair-share weight; 0 means 1.
	Weight float64
	// Priority orders jobs under FIFO: higher first.
	Priority int
	// Submitted is when the job arrived; earlier first among equals.
	Submitted time.Duration
}

// Task is one unit of work to place on a node.
type Task struct {
	// ID names the task; unique.
	ID string
	// Job names the task's job, which must have been submitted.
	Job string
	// Key is the task's similarity key (SPEC §2, Def. 3): the estimator predicts its
	// stage profile from earlier tasks of the same key. A zero Key (empty Logic) makes
	// the task unpredictable: it is placed by its request.
	Key predict.Key
	// Request is the quantity the user asked for. Unpredictable tasks get exactly this
	// (SPEC §3, request quantity).
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
	// Priority orders tasks within a job: higher first.
	Priority int
	// Submitted is when the task arrived.
	Submitted time.Duration
}

// TaskState is where a task is in its life. Every submitted task is in exactly one
// state at any moment.
type TaskState uint8

const (
	// Pending: waiting for a node.
	Pending TaskState = iota + 1
	// Running: holds an allocation on a node (its start may lie in the future when it
	// was placed with a future start).
	Running
	// Finished: done; its resources were returned.
	Finished
	// Cancelled: withdrawn by the embedder.
	Cancelled
)

func (s TaskState) String() string {
	switch s {
	case Pending:
		return "pending"
	case Running:
		return "running"
	case Finished:
		return "finished"
	case Cancelled:
		return "cancelled"
	}
	return fmt.Sprintf("TaskState(%d)", uint8(s))
}
