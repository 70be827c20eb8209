package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
)

// Node policy: each node's mode (Alg. 3) and the load the scheduler did not place.

// WithAdjuster passes options to the per-server policy adjuster (Alg. 3): thresholds,
// idle threshold, degradation, initial mode; see package policy.
func WithAdjuster(opts ...policy.Option) Option {
	return func(c *config) error {
		for i, o := range opts {
			if o == nil {
				return fmt.Errorf("finegrain: adjuster option %d is nil: %w", i, ErrInvalid)
			}
		}
		c.adjust = append(c.adjust, opts...)
		return nil
	}
}

// WithConformityWindow sets k, how many recent conformity values (eq. 16) per server
// the adjuster averages; default 5.
func WithConformityWindow(k int) Option {
	return func(c *config) error {
		if k < 1 {
			return fmt.Errorf("finegrain: conformity window %d < 1: %w", k, ErrInvalid)
		}
		c.window = k
		return nil
	}
}

// WithConformityIdleThreshold sets eq. 16's Th: usage above prediction counts against
// a server only while its idle resources are below Th × capacity. Default 0.1 on every
// dimension.
func WithConformityIdleThreshold(th resource.Vector) Option {
	return func(c *config) error {
		c.ihConform = &th
		return nil
	}
}

// WithExternalLoadForecast sets what SetExternalLoad holds on a node for the work the
// scheduler did not place (other applications sharing it): per dimension, the
// q-quantile of the loads reported over the last window on the compressible
// dimensions, and the largest on the others (predict.LoadLog). window ≥ 0 (0: the
// latest report alone, the default), q in [0, 1]. A larger window or q holds more
// room for the other applications and leaves less to the tasks: worth it where their
// load is spiky and an under-forecast costs the tasks much; docs/methods.md §6 has
// the figures that chose the default.
func WithExternalLoadForecast(window time.Duration, q float64) Option {
	return func(c *config) error {
		if window < 0 {
			return fmt.Errorf("finegrain: external load window %v is negative: %w", window, ErrInvalid)
		}
		if !(q >= 0 && q <= 1) {
			return fmt.Errorf("finegrain: external load quantile %v not in [0, 1]: %w", q, ErrInvalid)
		}
		c.loadWindow, c.loadQ = window, q
		return nil
	}
}

// WithExternalLoadNetting sets whether a node's usage report (ReportUsage) lets the
// scheduler hold, on the compressible dimensions, only the part of the external load
// (SetExternalLoad) that the tasks' reservations there do not already cover: what the
// tasks reserved now less what they used over the report's window (its actual usage
// less the external load) is room the node leaves idle, and the other applications'
// CPU is held net of it. The node is then planned on capacity less the larger of its
// reservations and its measured usage — the idle resources the FGM paper's node agents
// report — instead of on reservations and the external load added up. A task whose
// usage rises towards its reservation while the others' load stays is compressed, as
// it would be beside a load the forecast missed. Memory is always held whole. On by
// default; without usage reports it has no effect.
func WithExternalLoadNetting(on bool) Option {
	return func(c *config) error {
		c.netting = on
		return nil
	}
}
