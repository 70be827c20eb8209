package sim

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors. Every error this package returns wraps one of them (or a sentinel of
// package workload, finegrain or resource), so callers can test with errors.Is; bad
// arguments arrive inside a *FieldError naming the field and the value.
var (
	// ErrInvalidOption reports an option value out of its range, or a nil option: a
	// non-positive heartbeat, a NaN penalty, a replication below one or above the
	// cluster's nodes.
	ErrInvalidOption = errors.New("invalid option")
	// ErrInvalidInput reports a workload, cluster, policy or background the simulator
	// cannot run: one that fails its own Validate, a nil constructor, a failure of an
	// unknown node, a background with an out-of-range value (a negative demand, one
	// outside the schema's dimensions, a next change not after the time asked). It
	// also reports a nil or malformed Result given to a CSV writer.
	ErrInvalidInput = errors.New("invalid input")
	// ErrScheduler reports a scheduler call the simulator needed that was refused (the
	// scheduler's own error is wrapped too). It indicates a scheduler that breaks its
	// contract, such as an assignment of a task that is not pending.
	ErrScheduler = errors.New("scheduler refused a call")
	// ErrTimeLimit reports a run stopped at its time limit (WithTimeLimit) with jobs
	// unfinished; the Result returned with it holds what happened until then.
	ErrTimeLimit = errors.New("time limit reached")
	// ErrUnknownPolicy reports a policy name PolicyByName does not know.
	ErrUnknownPolicy = errors.New("unknown policy")
)

// FieldError is the error returned for bad input: it names the field (or option, or
// argument), the offending value, and wraps a sentinel error.
type FieldError struct {
	// Field names what was wrong, e.g. "heartbeat" or "failures[2].Node".
	Field string
	// Value is the offending value, as given.
	Value any
	// Err is the sentinel (or wrapped lower-level error) describing what is wrong.
	Err error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("sim: %s = %s: %v", e.Field, quoted(e.Value), e.Err)
}

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, value any, err error) error {
	return &FieldError{Field: field, Value: value, Err: err}
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// quoted formats an offending value for a message; an empty string shows as "", so
// that no message ends in a bare "= :".
func quoted(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(v)
}
