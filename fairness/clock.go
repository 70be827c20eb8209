package fairness

import (
	"fmt"
	"math"
	"time"
)

// LocalityClock is delay scheduling by the clock (docs/methods.md §10, "the clock
// rule"): the locality a job may launch at is a function of the time since its last
// launch alone, whether or not it was offered a node meanwhile — node-local for W1
// after it, rack-local for W2 more, then any node — as YARN's Fair Scheduler with
// continuous scheduling counts it (FSAppAttempt.getAllowedLocalityLevelByTime). The
// relaxation after a launch follows the level launched at, as Delay's does (Alg. 2.1):
// after a rack-local launch the job may take a rack-local task at once and any task
// W2 later; after an off-switch launch it takes any task until it launches node-local
// again. A job that never launched counts from its arrival.
//
// Delay (Alg. 2.1, the thesis's rule) grows a job's wait only for the update steps in
// which it passed an offer up, so a scheduler must offer the node to every job to keep
// the waits right; under the clock rule a job that may not launch on a node can be
// passed over without being looked at, which lets a heartbeat skip the jobs waiting for
// other nodes at the cost of one comparison each.
//
// A LocalityClock holds only the two waits: the per-job state (ClockState) is its
// owner's, kept wherever it keeps a record per job. It is immutable and safe for
// concurrent use.
type LocalityClock struct {
	w1, w2 time.Duration
}

// ClockState is one job's state under the clock rule: the level it last launched at
// and when (or, before its first launch, NodeLocal and when it arrived).
type ClockState struct {
	Level Level
	Since time.Duration
}

// NewLocalityClock returns the clock rule with waits w1 (node-local) and w2 (then
// rack-local); both must be ≥ 0 and their sum must not overflow. 0 and 0 is no wait.
func NewLocalityClock(w1, w2 time.Duration) (*LocalityClock, error) {
	if err := checkWaits(int64(w1), int64(w2), "W1", "W2", w1, w2); err != nil {
		return nil, err
	}
	return &LocalityClock{w1: w1, w2: w2}, nil
}

// Waits returns W1 and W2.
func (c *LocalityClock) Waits() (w1, w2 time.Duration) { return c.w1, c.w2 }

// Arrived is the state of a job that arrived at at and has not launched yet.
func Arrived(at time.Duration) ClockState { return ClockState{Level: NodeLocal, Since: at} }

// Allowed is the worst locality a job in state s may launch at, at now: OffSwitch once
// it last launched off-switch, or W2 after a rack-local launch, or W1 + W2 after a
// node-local one (or its arrival); RackLocal after a rack-local launch, or W1 after a
// node-local one; else NodeLocal. A time before s.Since counts as no time waited.
func (c *LocalityClock) Allowed(s ClockState, now time.Duration) Level {
	if s.Level >= OffSwitch {
		return OffSwitch
	}
	var waited time.Duration // now − s.Since, saturated; none when now is before it
	if now > s.Since {
		if waited = now - s.Since; waited < 0 {
			waited = math.MaxInt64 // past the int64 range
		}
	}
	switch s.Level {
	case RackLocal:
		if waited >= c.w2 {
			return OffSwitch
		}
		return RackLocal
	default:
		switch {
		case waited >= c.w1 && waited-c.w1 >= c.w2:
			return OffSwitch
		case waited >= c.w1:
			return RackLocal
		}
		return NodeLocal
	}
}

// Launch is the state of a job launching a task at locality l at now, l no worse
// than Allowed: the level becomes l and the clock restarts. It fails on an invalid
// level.
func Launch(l Level, now time.Duration) (ClockState, error) {
	if l > OffSwitch {
		return ClockState{}, fieldErr("launch locality", l, ErrInvalidLevel)
	}
	return ClockState{Level: l, Since: now}, nil
}

// String describes the state, e.g. "rack-local since 12s".
func (s ClockState) String() string { return fmt.Sprintf("%v since %v", s.Level, s.Since) }
