package finegrain

import (
	"fmt"
	"log/slog"
	"time"
)

// Running the scheduler: admission, time, memory, logs.

// WithUnresolvableAccepted makes Submit accept a task that no node of the cluster
// could hold even empty (ErrUnresolvable) and keep it pending, for a cluster that may
// grow — a node autoscaler adds nodes for what waits. Such a task waits until a node
// that can hold it joins: Explain and PlacementError.Refusals flag it Unresolvable,
// and heartbeats look past it. Off by default: Submit refuses it, as YARN refuses a
// request above its maximum allocation.
func WithUnresolvableAccepted(on bool) Option {
	return func(c *config) error {
		c.acceptUnres = on
		return nil
	}
}

// WithClockSkew sets how far behind the latest time seen an event may be and still be
// accepted, taken to happen at that latest time (default DefaultClockSkew; 0 refuses
// any event earlier than the latest). d must be in [0, 1 minute].
func WithClockSkew(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || d > time.Minute {
			return fmt.Errorf("finegrain: clock skew %v, want 0..1m: %w", d, ErrInvalid)
		}
		c.skew = d
		return nil
	}
}

// WithRetention sets what the scheduler remembers of finished work: finished and
// cancelled tasks, and completed jobs, are forgotten oldest first beyond counts or
// after an age (Retention). Default DefaultRetention, which keeps memory flat however
// many tasks pass through. A forgotten task is unknown to State and to events; a
// forgotten job must be submitted again (SubmitJob) before it takes new tasks.
// Negative counts or age are refused (by cluster.WithRetention).
func WithRetention(r Retention) Option {
	return func(c *config) error {
		c.retention = r
		return nil
	}
}

// WithLogger logs every decision at debug level, and unexpected refusals at warn
// level.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// WithSkipDetails makes each Decision detail the first n jobs a heartbeat passed over
// (Decision.Skips: the job, the task, the reason, the plugin and the match result), to
// see why tasks wait; Decision.Skipped counts them all and Decision.Refusals tallies
// them all by reason whatever n. n must be in [0, MaxSkips]; default
// DefaultSkipDetails (8). 0 allocates nothing for them.
func WithSkipDetails(n int) Option {
	return func(c *config) error {
		if n < 0 || n > MaxSkips {
			return fmt.Errorf("finegrain: skip details %d, want 0..%d: %w", n, MaxSkips, ErrInvalid)
		}
		c.skipDetails = n
		return nil
	}
}
