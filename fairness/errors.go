package fairness

import (
	"errors"
	"fmt"

	"github.com/finegrain/finegrain/internal/field"
)

// Sentinel errors. Every error this package returns wraps one of them (or one of
// package resource's, for a bad tuple), so callers can test with errors.Is; most arrive
// inside a *FieldError that also names the field and the offending value.
var (
	// ErrInvalidWeight reports a weight that is zero, negative, NaN or infinite.
	ErrInvalidWeight = errors.New("weight must be a positive finite number")
	// ErrInvalidShare reports a min or max share (or a capacity, demand or allocation
	// given as a number) that is negative or NaN, or a min share that is infinite.
	ErrInvalidShare = errors.New("invalid share")
	// ErrMinAboveMax reports a min share larger than the max share.
	ErrMinAboveMax = errors.New("min share above max share")
	// ErrUnknownQueue reports a queue ID the tree does not hold.
	ErrUnknownQueue = errors.New("unknown queue")
	// ErrUnknownJob reports a job ID the tree (or the pending-task index) does not hold.
	ErrUnknownJob = errors.New("unknown job")
	// ErrUnknownTask reports a task ID the pending-task index does not hold.
	ErrUnknownTask = errors.New("unknown task")
	// ErrDuplicate reports an ID given twice where IDs must be unique.
	ErrDuplicate = errors.New("duplicate ID")
	// ErrInvalidID reports an empty ID.
	ErrInvalidID = errors.New("empty ID")
	// ErrNotEmpty reports the removal of a queue that still holds queues or jobs.
	ErrNotEmpty = errors.New("queue not empty")
	// ErrUnderflow reports a release or removal of more than is held: more tasks than
	// pending or running, or a tuple the held amount does not cover.
	ErrUnderflow = errors.New("more than held")
	// ErrOverMax reports an allocation that would take an entity over its max share.
	ErrOverMax = errors.New("over max share")
	// ErrInvalidCount reports a task count that is negative (or zero where one is
	// needed), or a task demand that cannot bound an allocation.
	ErrInvalidCount = errors.New("invalid count")
	// ErrInvalidWait reports a negative delay-scheduling threshold (W1, W2 or a skip
	// count).
	ErrInvalidWait = errors.New("invalid locality wait")
	// ErrTimeBackwards reports a time earlier than one already seen.
	ErrTimeBackwards = errors.New("time went backwards")
	// ErrInvalidLevel reports a locality level outside NodeLocal..OffSwitch.
	ErrInvalidLevel = errors.New("invalid locality level")
	// ErrInvalidLocation reports a data location without a node.
	ErrInvalidLocation = errors.New("invalid location")
	// ErrEmpty reports an empty set where at least one value is needed.
	ErrEmpty = errors.New("empty set")
	// ErrInvalidKind reports an Entry whose Kind is not KindQueue, KindJob or KindTask.
	ErrInvalidKind = errors.New("invalid kind")
	// ErrNilPolicy reports a nil Policy.
	ErrNilPolicy = errors.New("nil policy")
	// ErrNilOption reports a nil Option or TreeOption.
	ErrNilOption = errors.New("nil option")
)

// FieldError is the error returned for one bad input value. It names the field (and the
// queue, job or task it belongs to), the value as given, and wraps a sentinel. Its Field
// names what was wrong, e.g. `job "j1" weight` or "W1"; its Value is the offending
// value, as given; its Err is the sentinel describing what is wrong (or a wrapped
// resource error). Its message reads "fairness: Field = Value: Err".
type FieldError = field.Error[pkg]

// pkg is this package, for package field: its name starts the messages of FieldError.
type pkg struct{}

func (pkg) Name() string { return "fairness" }

func fieldErr(name string, value any, err error) error { return field.Err[pkg](name, value, err) }

// within prefixes the field of a *FieldError with whose it is ("job \"j\""), so the
// prefix is only formatted on the error path.
func within(who string, err error) error {
	if fe, ok := err.(*FieldError); ok {
		return &FieldError{Field: who + " " + fe.Field, Value: fe.Value, Err: fe.Err}
	}
	return fmt.Errorf("fairness: %s: %w", who, err)
}
