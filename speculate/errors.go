package speculate

import (
	"errors"
	"fmt"
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
// argument), the offending value, and wraps a sentinel error.
type FieldError struct {
	// Field names what was wrong, e.g. "speculative cap" or "Nodes[3].ID".
	Field string
	// Value is the offending value, as given.
	Value any
	// Err is the sentinel (or wrapped lower-level error) describing what is wrong.
	Err error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("speculate: %s = %s: %v", e.Field, quoted(e.Value), e.Err)
}

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, value any, err error) error {
	return &FieldError{Field: field, Value: value, Err: err}
}

// wrapf prefixes a lower-level error (from resource) with where it happened, keeping it
// matchable with errors.Is and errors.As.
func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("speculate: "+format+": %w", append(args, err)...)
}

// finite reports whether x is a number other than ±Inf and NaN.
func finite(x float64) bool { return x == x && x <= maxFloat && x >= -maxFloat }

const maxFloat = 1.7976931348623157e308

// quoted formats an offending value for a message; an empty string shows as "", so
// that no message ends in a bare "= :".
func quoted(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(v)
}
