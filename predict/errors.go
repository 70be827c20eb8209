package predict

import (
	"errors"

	"github.com/finegrain/finegrain/internal/field"
)

// Sentinel errors. Every error this package returns for bad input wraps one of them (or a
// sentinel of package resource or stage, for problems with tuples and profiles), so
// callers can test with errors.Is; most arrive inside a *FieldError that also names the
// field and the offending value.
var (
	// ErrInvalidOption reports an option value out of its range: a weight outside (0, 1],
	// a negative length, a cap below one, a NaN.
	ErrInvalidOption = errors.New("invalid option")
	// ErrImplausible reports an observation that cannot be true: a task seen using more
	// than the whole node it ran on.
	ErrImplausible = errors.New("implausible observation")
	// ErrInvalidKey reports a similarity key with an empty execution logic or a
	// negative input size.
	ErrInvalidKey = errors.New("invalid similarity key")
	// ErrInvalidValue reports a number that is NaN, infinite or negative where a finite
	// non-negative value is needed, or a ratio outside its range.
	ErrInvalidValue = errors.New("invalid value")
	// ErrNoSamples reports an empty series, or one too short for the computation.
	ErrNoSamples = errors.New("not enough samples")
	// ErrTooManySamples reports a series longer than Segment handles (2^31 − 1).
	ErrTooManySamples = errors.New("too many samples")
	// ErrUnsorted reports samples whose times do not strictly increase.
	ErrUnsorted = errors.New("samples not in strictly increasing time order")
	// ErrBadDuration reports a zero or negative duration where a positive one is
	// needed, or a span of time too long to represent.
	ErrBadDuration = errors.New("duration must be positive")
	// ErrStageCount reports per-stage data whose length does not match the profile's
	// number of stages.
	ErrStageCount = errors.New("stage count mismatch")
	// ErrBadProgress reports a progress value outside [0, 1], NaN, or lower than the
	// value reported before.
	ErrBadProgress = errors.New("invalid progress")
	// ErrBadTime reports a time earlier than one the call must follow (a report before
	// the task started, a sample before the previous one).
	ErrBadTime = errors.New("time out of order")
	// ErrEmptyID reports an empty task, node or server ID.
	ErrEmptyID = errors.New("empty ID")
	// ErrUnknownTask reports a task ID the tracker does not hold.
	ErrUnknownTask = errors.New("unknown task")
	// ErrDuplicateTask reports a task ID started twice.
	ErrDuplicateTask = errors.New("duplicate task")
	// ErrCheckpoint reports a checkpoint Restore refuses: input that is not a
	// checkpoint of a format and version it reads, is truncated or malformed, was made
	// for another schema (the error then also wraps resource.ErrSchemaMismatch) or
	// under incompatible options, or holds a state the estimator could not have
	// reached (negative or non-finite amounts, stage counts that disagree, duplicate
	// keys, more keys than the cap, a history that breaks its invariants).
	ErrCheckpoint = errors.New("invalid checkpoint")
)

// FieldError is the error returned for bad input: it names the field (or option, or
// argument), the offending value, and wraps a sentinel error. Its Field names what was
// wrong, e.g. "base weight" or "samples[3].At"; its Value is the offending value, as
// given; its Err is the sentinel (or wrapped lower-level error) describing what is
// wrong. Its message reads "predict: Field = Value: Err".
type FieldError = field.Error[pkg]

// pkg is this package, for package field: its name starts the messages of FieldError
// and wrapf.
type pkg struct{}

func (pkg) Name() string { return "predict" }

func fieldErr(name string, value any, err error) error { return field.Err[pkg](name, value, err) }

// wrapf prefixes a lower-level error (from resource or stage) with where it happened,
// keeping it matchable with errors.Is and errors.As.
func wrapf(err error, format string, args ...any) error {
	return field.Wrapf[pkg](err, format, args...)
}
