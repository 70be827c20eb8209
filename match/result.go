package match

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Code classifies the outcome of a match, like a Kubernetes scheduling framework
// status code: whether the task may be allocated, and if not, what kind of reason
// stands in the way.
type Code uint8

const (
	// Fit: the task fits as it is; nothing is compressed.
	Fit Code = iota
	// FitCompressed: the task fits by compressing compressible resources, within the
	// allowance the server's policy grants (Alg. 2 with rc > 0). Result.Compression and
	// Result.StageRatio say by how much.
	FitCompressed
	// NoRoom: some stage of the task lacks some resource. Result.Stage, Dim, From,
	// Until, Demand, Free and Allowed say where and by how much.
	NoRoom
	// DeadlineMissed: the task fits, but under the resulting compression some task on
	// the server would miss its deadline (eq. 15). Result.Task, Finish and Deadline say
	// which and by how much.
	DeadlineMissed
	// Unschedulable: the server's policy accepts no task now (StopAllocation).
	Unschedulable
	// Invalid: the input was malformed; Result.Cause says how.
	Invalid
)

var codeNames = [...]string{"Fit", "FitCompressed", "NoRoom", "DeadlineMissed", "Unschedulable", "Invalid"}

// String returns the code's name, e.g. "FitCompressed".
func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", uint8(c))
}

// OK reports whether the code allows the allocation: Fit or FitCompressed.
func (c Code) OK() bool { return c == Fit || c == FitCompressed }

// StageRatios is how many stages' compression ratios a Result holds inline, so that a
// match allocates nothing. For a profile of more stages, the last slot holds the largest
// ratio of stage StageRatios−1 and every later stage (an upper bound for each of them).
const StageRatios = 16

// Result is the outcome of matching a task against a server, explaining itself: on
// failure which stage, which dimension, when and by how much; on success the
// compression each stage would run under. It is a value; a match allocates nothing.
//
// Fields not relevant to the Code are zero: the failure fields are set for NoRoom,
// the deadline fields for DeadlineMissed, Compression, Allowance and the stage ratios
// for FitCompressed.
type Result struct {
	// Code is the outcome.
	Code Code
	// Cause is the validation error when Code is Invalid, nil otherwise.
	Cause error

	// Stage is the index of the task's stage that does not fit (NoRoom), or of the
	// stage of Task whose compression makes it late (DeadlineMissed, the first
	// compressed stage); -1 when not applicable.
	Stage int
	// Dim is the slot of the dimension short of room; -1 when not applicable.
	Dim int
	// DimName is the name of dimension Dim.
	DimName string
	// From and Until bound the time where the stage does not fit: the part of a free
	// segment of the timeline that the stage overlaps.
	From, Until time.Duration
	// Demand is the stage's demand on Dim, Free what the server had free there and
	// Allowed how far below zero compression could take it (Alg. 2's rc × N); the
	// shortfall is Demand − Free − Allowed.
	Demand, Free, Allowed int64

	// Task is the ID of the task that would miss its deadline (DeadlineMissed).
	Task string
	// Finish is when Task would finish under the compression (eq. 15), Deadline when
	// it must finish.
	Finish, Deadline time.Duration

	// Compression is, per dimension, the largest compression ratio (eq. 1) the task
	// would run under in any stage: with its stage placed, demand D exceeds capacity C
	// and every task sharing the dimension gets C/D of its demand, rc = (D − C)/D.
	Compression resource.Vector
	// Allowance is, per dimension, how far below zero the task takes the free amount
	// at worst: the compression allowance to pass to stage.Timeline.Reserve so that it
	// accepts exactly this placement.
	Allowance resource.Tuple
	// MinFree is, on a fit, the least free amount per dimension over the task's window
	// (what stage.Timeline.MinFree returns), when MinFreeKnown says the matcher saw it
	// on its way — the built-in matchers do — so that scoring (ScoreServer) need not
	// walk the timeline again.
	MinFree      resource.Tuple
	MinFreeKnown bool

	schema  *resource.Schema
	stages  [StageRatios]float64
	nstages int
}

// Compressed reports whether the task fits only by compression.
func (r Result) Compressed() bool { return r.Code == FitCompressed }

// Shortfall is how much more of Dim the failing stage needs: Demand − Free − Allowed
// (positive for NoRoom, zero otherwise).
func (r Result) Shortfall() int64 {
	if r.Code != NoRoom {
		return 0
	}
	return r.Demand - r.Free - r.Allowed
}

// ShortfallShare is the shortfall as a share of capacity's amount on Dim: how far a
// server of that capacity is from holding the failing stage, comparable across
// dimensions and servers (smaller is closer). It is +Inf when the Code is not NoRoom
// or the capacity on Dim is zero.
func (r Result) ShortfallShare(capacity resource.Tuple) float64 {
	if r.Code != NoRoom || r.Dim < 0 || r.Dim >= resource.MaxDims || capacity[r.Dim] <= 0 {
		return math.Inf(1)
	}
	return float64(r.Shortfall()) / float64(capacity[r.Dim])
}

// Late is how much after its deadline Task would finish (positive for DeadlineMissed,
// zero otherwise).
func (r Result) Late() time.Duration {
	if r.Code != DeadlineMissed {
		return 0
	}
	return r.Finish - r.Deadline
}

// Stages is the number of the task's stages the result describes (0 for results
// that are not fits).
func (r Result) Stages() int { return r.nstages }

// StageRatio is eq. 15's rc_i for stage i: the largest compression ratio over the
// compressible dimensions that stage i would run under (0 when uncompressed). For
// i ≥ StageRatios it is an upper bound (see StageRatios).
func (r Result) StageRatio(i int) float64 {
	if i < 0 || i >= r.nstages {
		return 0
	}
	return r.stages[min(i, StageRatios-1)]
}

func (r *Result) noteStage(i int, rc float64) {
	j := min(i, StageRatios-1)
	r.stages[j] = max(r.stages[j], rc)
}

// Err returns nil when the code allows the allocation and otherwise an *Error that
// carries the result and wraps ErrNoRoom, ErrDeadline, ErrUnschedulable or, for
// Invalid, the validation error.
func (r Result) Err() error {
	if r.Code.OK() {
		return nil
	}
	return &Error{Result: r}
}

// String explains the result in one line, e.g. "stage 1 needs cpu=2 over [0s, 2s) but
// 1 is free (compression allowance 400m, short by 600m)": amounts are written as
// Kubernetes quantities of the dimension (resource.Dimension.FormatAmount), or as
// plain base units in a Result built by hand.
func (r Result) String() string {
	switch r.Code {
	case Fit:
		return "fits"
	case FitCompressed:
		var b strings.Builder
		b.WriteString("fits by compressing")
		for k, x := range r.Compression {
			if x > 0 {
				fmt.Fprintf(&b, " %s by %.2f%%", r.dimName(k), 100*x)
			}
		}
		return b.String()
	case NoRoom:
		until := "forever"
		if r.Until != stage.Forever {
			until = r.Until.String()
		}
		return fmt.Sprintf("stage %d needs %s=%s over [%v, %s) but %s is free (compression allowance %s, short by %s)",
			r.Stage, r.DimName, r.amount(r.Demand), r.From, until, r.amount(r.Free), r.amount(r.Allowed), r.amount(r.Shortfall()))
	case DeadlineMissed:
		return fmt.Sprintf("task %q would finish at %v under compression, %v after its deadline %v",
			r.Task, r.Finish, r.Late(), r.Deadline)
	case Unschedulable:
		return ErrUnschedulable.Error()
	case Invalid:
		if r.Cause != nil {
			return r.Cause.Error()
		}
		return "invalid input"
	}
	return r.Code.String()
}

// Error is the error form of a Result that does not allow the allocation.
type Error struct {
	// Result is the result the error stands for.
	Result Result
}

// Error explains the result (Result.String). For Invalid it is the validation error's
// own message, which names its package already.
func (e *Error) Error() string {
	if e.Result.Code == Invalid && e.Result.Cause != nil {
		return e.Result.Cause.Error()
	}
	return "match: " + e.Result.String()
}

// Unwrap returns the sentinel for the result's code (ErrNoRoom, ErrDeadline,
// ErrUnschedulable), or the validation error for Invalid.
func (e *Error) Unwrap() error {
	switch e.Result.Code {
	case NoRoom:
		return ErrNoRoom
	case DeadlineMissed:
		return ErrDeadline
	case Unschedulable:
		return ErrUnschedulable
	}
	return e.Result.Cause
}

// amount writes v, an amount of dimension Dim, as a Kubernetes quantity of that
// dimension ("2", "500m", "16Gi"), or as plain base units in a Result built without a
// schema.
func (r Result) amount(v int64) string {
	if r.schema == nil || r.Dim < 0 || r.Dim >= r.schema.Len() {
		return strconv.FormatInt(v, 10)
	}
	return r.schema.Dim(r.Dim).FormatAmount(v)
}

func (r Result) dimName(k int) string {
	if r.schema == nil {
		return fmt.Sprintf("#%d", k)
	}
	return r.schema.DimName(k)
}

func invalid(err error) Result { return Result{Code: Invalid, Cause: err, Stage: -1, Dim: -1} }
