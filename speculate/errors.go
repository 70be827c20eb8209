package speculate

import (
	"errors"

	"github.com/finegrain/finegrain/internal/field"
)

// Sentinel errors. Every error this package returns for bad input wraps one of them (or
// a sentinel of package resource, for problems with tuples), so callers can test with
// errors.Is; most arrive inside a *FieldError that also names the field and the
// offending value. A rejected call changes nothing.
var (
	// ErrInvalidOption reports an option value out of its range: a speculative cap
	// outside (0, 1], a negative or NaN threshold, a negative minimum runtime, a
	// non-positive block size or bandwidth.
	ErrInvalidOption = errors.New("invalid option")
	// ErrInvalidValue reports a number that is NaN, infinite or negative where a finite
	// non-negative value is needed, or a missing required value (a nil estimator).
	ErrInvalidValue = errors.New("invalid value")
	// ErrBadProgress reports a task progress outside [0, 1] or NaN, as reported by a
	// progress model.
	ErrBadProgress = errors.New("invalid progress")
	// ErrBadTime reports a negative time or duration where times are offsets from the
	// embedder's epoch and durations are lengths.
	ErrBadTime = errors.New("negative time")
	// ErrEmptyID reports an empty task, job, pool or node ID.
	ErrEmptyID = errors.New("empty ID")
	// ErrDuplicate reports an ID given twice where IDs must be unique.
	ErrDuplicate = errors.New("duplicate ID")
	// ErrUnknownNode reports a node ID the input does not describe.
	ErrUnknownNode = errors.New("unknown node")
	// ErrUnknownJob reports a job ID the input does not describe.
	ErrUnknownJob = errors.New("unknown job")
	// ErrOverCapacity reports a node whose allocation already exceeds its capacity on a
	// non-compressible dimension, or a plan step that would take it there.
	ErrOverCapacity = errors.New("over capacity on a non-compressible dimension")
	// ErrInconsistent reports amounts that contradict each other: a task's reclaimable
	// and preemptible amounts exceeding its allocation, or the tasks listed on a node
	// holding more than the node has allocated.
	ErrInconsistent = errors.New("inconsistent amounts")
	// ErrCannotMeet reports a straggler whose objective can no longer be met by scaling
	// up: its deadline has passed or it makes no progress.
	ErrCannotMeet = errors.New("objective cannot be met")
)

// FieldError is the error returned for bad input: it names the field (or option, or
// argument), the offending value, and wraps a sentinel error. Its Field names what was
// wrong, e.g. "speculative cap" or "Nodes[3].ID"; its Value is the offending value, as
// given; its Err is the sentinel (or wrapped lower-level error) describing what is
// wrong. Its message reads "speculate: Field = Value: Err".
type FieldError = field.Error[pkg]

// pkg is this package, for package field: its name starts the messages of FieldError
// and wrapf.
type pkg struct{}

func (pkg) Name() string { return "speculate" }

func fieldErr(name string, value any, err error) error { return field.Err[pkg](name, value, err) }

// wrapf prefixes a lower-level error (from resource) with where it happened, keeping it
// matchable with errors.Is and errors.As.
func wrapf(err error, format string, args ...any) error {
	return field.Wrapf[pkg](err, format, args...)
}
