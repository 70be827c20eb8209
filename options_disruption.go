package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/plugins"
)

// Disruption: evicting tasks, and gangs that start together.

// PreemptionConfig says which preemption the scheduler does (WithPreemption).
type PreemptionConfig = plugins.PreemptionConfig

// DefaultReclaimDelay is a reclaim delay of 15 s (PreemptionConfig.ReclaimDelay), the
// order of YARN's capacity-preemption waits.
const DefaultReclaimDelay = plugins.DefaultReclaimDelay

// WithPreemption turns preemption on (plugins.Preemption; off by default): a task that
// fits nowhere may evict running tasks of lower-priority jobs (cfg.Priority), and a
// queue below its min share may, after cfg.ReclaimDelay, reclaim from queues outside
// it above theirs (cfg.Guarantees). Victims are chosen on the stage timeline — the
// fewest, of the lowest priority, that have run the least, and none whose reservation
// is out of the way in time — never a TaskSpec.NonPreemptible task nor beyond a job's
// JobSpec.MaxDisrupted. They are pending again at once, and reported with the
// preemptor's Assignment (Assignment.Evicted) or, when it does not start at once, in
// Decision.Evicted or PlacementError.Evicted: the embedder stops them, then starts
// the preemptor. Push mode (Place) preempts on the best of the first cfg.Candidates
// nodes where eviction makes room; pull mode (Heartbeat) on the heartbeat's node, for
// a waiting task that fits no node now. The zero PreemptionConfig, which turns nothing
// on, switches preemption off. New fails when cfg holds a negative delay,
// per-heartbeat bound or candidate count.
func WithPreemption(cfg PreemptionConfig) Option {
	return func(c *config) error {
		if cfg == (PreemptionConfig{}) {
			c.preemption = nil
			return nil
		}
		if !cfg.Priority && !cfg.Guarantees || cfg.ReclaimDelay < 0 || cfg.PerHeartbeat < 0 || cfg.Candidates < 0 {
			return fmt.Errorf("finegrain: preemption: priority %v, guarantees %v, reclaim delay %v, per heartbeat %d, candidates %d: %w",
				cfg.Priority, cfg.Guarantees, cfg.ReclaimDelay, cfg.PerHeartbeat, cfg.Candidates, ErrInvalid)
		}
		c.preemption = &cfg
		return nil
	}
}

// DefaultGangTimeout is how long a gang's members wait for the rest of it
// (WithGangTimeout): 60 s, the Kubernetes coscheduling plugin's default.
const DefaultGangTimeout = plugins.DefaultGangTimeout

// WithGangTimeout sets how long the reserved members of a gang job (JobSpec.MinMember)
// wait for the rest of the gang before they are rolled back (plugins.Gang); d must be
// > 0. Default DefaultGangTimeout.
func WithGangTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("finegrain: gang timeout %v ≤ 0: %w", d, ErrInvalid)
		}
		c.gangTimeout = d
		return nil
	}
}
