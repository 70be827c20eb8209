package match

import (
	"errors"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/stage"
)

// Sentinel errors of this package; errors.Is matches them through the wrapping.
var (
	// ErrNoRoom reports a task that does not fit a server: some stage lacks some
	// resource. It is stage.ErrNoRoom, so one errors.Is test covers both packages.
	ErrNoRoom = stage.ErrNoRoom
	// ErrDeadline reports an allocation under which a task would miss its deadline
	// (the deadline QoS check, eq. 15).
	ErrDeadline = errors.New("a task would miss its deadline")
	// ErrUnschedulable reports a server whose policy accepts no task now.
	ErrUnschedulable = errors.New("server accepts no tasks")
	// ErrNoServers reports a placement among no servers.
	ErrNoServers = errors.New("no servers")
	// ErrNilArgument reports a nil matcher or scorer where one is required.
	ErrNilArgument = errors.New("nil argument")
	// ErrNilTimeline reports a Server view without a timeline.
	ErrNilTimeline = errors.New("server has no timeline")
	// ErrBadTask reports a malformed task: a negative deadline or an empty ID where one
	// is needed.
	ErrBadTask = errors.New("invalid task")
	// ErrBadVector reports a malformed QoS vector (docs/methods.md §12): wrong length, or a
	// value outside [1, 10] or not a number.
	ErrBadVector = errors.New("invalid QoS vector")
	// ErrBadWeights reports malformed QoS weights: wrong length, a weight negative or
	// not a number, or weights not summing to 1 within WeightTolerance.
	ErrBadWeights = errors.New("invalid QoS weights")
	// ErrBadHard reports a negative hard QoS amount (memory or disk).
	ErrBadHard = errors.New("invalid hard QoS amount")
	// ErrBadWeight reports a scorer weight that is not positive and finite
	// (NewWeighted), or scorers and weights of different lengths.
	ErrBadWeight = errors.New("invalid scorer weight")
	// ErrDuplicate reports an ID given twice where IDs must be unique.
	ErrDuplicate = errors.New("duplicate ID")
	// ErrBadRank reports a feature rank outside [1, QoSLen].
	ErrBadRank = errors.New("feature rank out of range")
)

// FieldError is the error returned for a bad value in a named field: which field (and
// element, when the field is a vector), the value given, and the sentinel describing
// what is wrong. Its Field names the field, e.g. "req[2]" or "weights"; its Value is the
// offending value, as given; its Err is the sentinel. Its message reads
// "match: Field = Value: Err", and errors.Is matches the sentinel through it.
type FieldError = field.Error[pkg]

// pkg is this package, for package field: its name starts the messages of FieldError.
type pkg struct{}

func (pkg) Name() string { return "match" }

func fieldErr(name string, value any, err error) error { return field.Err[pkg](name, value, err) }
