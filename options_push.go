package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
)

// Push mode: which node a pending task gets.

// WithScorer sets how push placement ranks the nodes that fit; default
// match.LeastAllocated{}.
func WithScorer(s match.Scorer) Option {
	return func(c *config) error {
		if isNil(s) {
			return fmt.Errorf("finegrain: scorer is nil: %w", ErrInvalid)
		}
		c.scorer = s
		return nil
	}
}

// WithGPUScorer adds s to push placement's scoring of the nodes that fit a task (with
// a GPU demand, Task.GPU, or without: s ranks those too), with the same weight as
// WithScorer's scorer, and lets s choose the devices the task gets on the node that
// wins (plugins.GPUScore), in host mode's Reserve as well: gpu.DeviceBestFit,
// gpu.DotProduct, gpu.Packing or gpu.FGD. Without it, the devices are the best fit
// (gpu.Devices.BestFit) and nodes are scored by WithScorer alone. The GPUFit filter,
// which refuses nodes whose devices cannot hold a task's demand, is always on. nil
// (the default) switches the GPU scorer off.
func WithGPUScorer(s gpu.DeviceScorer) Option {
	return func(c *config) error {
		if isNil(s) {
			s = nil
		}
		c.gpuScorer = s
		return nil
	}
}

// WithCandidates sets how many fitting nodes push placement scores before it picks the
// best (like the Kubernetes scheduler's percentage of nodes to score); 0 scores every
// node that fits. Default 16.
func WithCandidates(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("finegrain: candidates %d < 0: %w", n, ErrInvalid)
		}
		c.candidates = n
		return nil
	}
}

// WithFutureStart lets push placement book a task at the earliest future start on
// some node when no node fits now (plugins.FutureStart): the task is Booked until its
// start, then Running. Off by default; WithBooking does the same in pull mode
// too, for tasks that have waited.
func WithFutureStart(on bool) Option {
	return func(c *config) error {
		c.futureStart, c.bookAfter, c.bookPull = on, 0, false
		return nil
	}
}

// WithBooking books tasks that have waited at least wait since they became
// pending and fit no node now, in push and pull mode (plugins.FutureStart): each
// gets a reservation at the earliest start at which its whole profile fits some node's
// timeline, and is Booked until then (its Assignment's Start is in the future: start
// the task then). What a booking holds is off limits to every later placement, so
// tasks placed in front of it never delay it (conservative backfilling, on the stage
// timeline: every task that waited that long holds its own booking),
// and a large task does not starve behind a stream of small ones. In pull mode, one
// task is booked per heartbeat, the first in fairness order that qualifies; the
// booking may be on another node than the heartbeat's. A task's wait counts from its
// Task.Submitted or, if later, the time of the scheduler's latest event before it was
// submitted (Submit takes no time: set Submitted), and afresh from its return to
// pending after an eviction or a failure. wait must be ≥ 0.
func WithBooking(wait time.Duration) Option {
	return func(c *config) error {
		if wait < 0 {
			return fmt.Errorf("finegrain: booking after %v < 0: %w", wait, ErrInvalid)
		}
		c.futureStart, c.bookAfter, c.bookPull = true, wait, true
		return nil
	}
}
