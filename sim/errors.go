package sim

import (
	"errors"

	"github.com/finegrain/finegrain/internal/field"
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
// argument), the offending value, and wraps a sentinel error. Its Field names what was
// wrong, e.g. "heartbeat" or "failures[2].Node"; its Value is the offending value, as
// given; its Err is the sentinel (or wrapped lower-level error) describing what is
// wrong. Its message reads "sim: Field = Value: Err".
type FieldError = field.Error[pkg]

// pkg is this package, for package field: its name starts the messages of FieldError.
type pkg struct{}

func (pkg) Name() string { return "sim" }

func fieldErr(name string, value any, err error) error { return field.Err[pkg](name, value, err) }
