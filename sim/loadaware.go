package sim

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// UsageStat is how LoadAwareScheduler condenses a node's usage window into the
// node's measured usage.
type UsageStat uint8

const (
	// UsageMean is the time average of the window's intervals: Koordinator's NodeMetric
	// reports the node's average usage over its collection window.
	UsageMean UsageStat = iota
	// UsageMax is the largest interval of the window, dimension by dimension: more
	// conservative (a burst inside the window counts whole).
	UsageMax
)

// String names the statistic.
func (u UsageStat) String() string {
	switch u {
	case UsageMean:
		return "mean"
	case UsageMax:
		return "max"
	}
	return fmt.Sprintf("UsageStat(%d)", uint8(u))
}

// LoadAwareOption configures LoadAwareScheduler (and the LoadAware policy).
type LoadAwareOption func(*loadAwareConfig) error

type loadAwareConfig struct {
	args    *plugins.LoadAwareSchedulingArgs // nil: plugins.DefaultLoadAwareSchedulingArgs
	stat    UsageStat
	options []finegrain.Option
}

// WithLoadAwareArgs replaces Koordinator's defaults
// (plugins.DefaultLoadAwareSchedulingArgs) by args; plugins.NewLoadAwareScheduling
// validates them when the scheduler is built.
func WithLoadAwareArgs(args plugins.LoadAwareSchedulingArgs) LoadAwareOption {
	return func(c *loadAwareConfig) error {
		c.args = &args
		return nil
	}
}

// WithUsageStat sets how a usage window becomes the node's measured usage; default
// UsageMean.
func WithUsageStat(u UsageStat) LoadAwareOption {
	return func(c *loadAwareConfig) error {
		if u != UsageMean && u != UsageMax {
			return fieldErr("WithUsageStat", u, ErrInvalidOption)
		}
		c.stat = u
		return nil
	}
}

// WithLoadAwareOptions passes further options to the inner reference scheduler, after
// the load-aware ones (finegrain.WithMaxPerHeartbeat, finegrain.WithCandidates, …).
func WithLoadAwareOptions(opts ...finegrain.Option) LoadAwareOption {
	return func(c *loadAwareConfig) error {
		for _, o := range opts {
			if o == nil {
				return fieldErr("WithLoadAwareOptions", "nil option", ErrInvalidOption)
			}
		}
		c.options = append(c.options, opts...)
		return nil
	}
}

// LoadAwareScheduler is usage-aware overcommit placement as Kubernetes users run it
// with Koordinator's LoadAwareScheduling (docs/methods.md §15), built from the
// library's blocks: the reference scheduler without prediction, DRF ordering, and
// plugins.LoadAwareScheduling as its demand step, filter, node gate and (instead of
// NodeScore) score; the DemandClasses job filter, which reasons on requests, is
// removed, and so are what the reference scheduler adds to YARN's delay scheduling
// (finegrain.WithPackingBound(+Inf), finegrain.WithLocalityWaitForRoom off), which the
// rival has not.
//
// Its ReportUsage turns a node's usage window into the node's measured usage
// (WithUsageStat; the window's span is the report interval of Koordinator's
// estimated-pod rule) and hands it to the plugin; it is not forwarded to the inner
// scheduler: the rival has no conformity adjuster (eq. 16, Alg. 3). SetExternalLoad
// is absorbed: the measured usage already includes what other applications use, and
// holding it too would count it twice. Finished drops the observation: no per-task
// learning. The measurement includes the background: run it without
// WithReservedBackground, which would take the background's memory out of the
// capacity a second time.
//
// Reading: kube-scheduler's queue is FIFO by priority, not DRF; DRF is kept so that
// the difference with FGM is what each allocates on (measured usage plus estimates
// against predicted stage profiles), not the order. The fairness usage DRF sees for a
// running task is its estimate (request × scaling factor).
type LoadAwareScheduler struct {
	*finegrain.Scheduler
	plugin *plugins.LoadAwareScheduling
	stat   UsageStat

	mu    sync.Mutex
	nodes map[string]bool
}

var (
	_ Scheduler      = (*LoadAwareScheduler)(nil)
	_ externalLoader = (*LoadAwareScheduler)(nil)
	_ permitter      = (*LoadAwareScheduler)(nil)
)

// NewLoadAwareScheduler returns the load-aware scheduler for schema. Like every
// scheduler the simulator builds, it details no skips in its Decisions
// (finegrain.WithSkipDetails(0)) unless WithLoadAwareOptions says otherwise. It fails
// on a nil or invalid option, or arguments plugins.NewLoadAwareScheduling refuses.
func NewLoadAwareScheduler(schema *resource.Schema, opts ...LoadAwareOption) (*LoadAwareScheduler, error) {
	var cfg loadAwareConfig
	for _, o := range opts {
		if o == nil {
			return nil, fieldErr("LoadAwareOption", "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	args := plugins.DefaultLoadAwareSchedulingArgs(schema)
	if cfg.args != nil {
		args = *cfg.args
	}
	la, err := plugins.NewLoadAwareScheduling(schema, args)
	if err != nil {
		return nil, fmt.Errorf("sim: load aware: %w: %w", ErrInvalidOption, err)
	}
	fopts := append([]finegrain.Option{
		finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.DRF{}), finegrain.WithPullStrategy(finegrain.PullDelayScheduling()),
		finegrain.WithPlugin(la), finegrain.WithoutPlugin("NodeScore"), finegrain.WithoutPlugin("DemandClasses"),
		finegrain.WithPackingBound(math.Inf(1)), finegrain.WithLocalityWaitForRoom(false),
	}, cfg.options...)
	s, err := newScheduler(schema, fopts...)
	if err != nil {
		return nil, fmt.Errorf("sim: load aware: %w", err)
	}
	return &LoadAwareScheduler{Scheduler: s, plugin: la, stat: cfg.stat, nodes: map[string]bool{}}, nil
}

// LoadAware is the load-aware overcommit baseline as a policy (LoadAwareScheduler
// with opts; Koordinator's defaults without): measured node usage plus estimates
// instead of requests, no stage profiles, no per-task learning. Feedback is on, for
// the usage reports; option errors surface when the simulation builds it.
func LoadAware(opts ...LoadAwareOption) Policy {
	return Policy{Name: "LoadAware", Feedback: true, New: func(schema *resource.Schema) (Scheduler, error) {
		return NewLoadAwareScheduler(schema, opts...)
	}}
}

// LoadAwareFull is LoadAware with its usage thresholds raised to 100% of the cpu and
// the memory ("LoadAware-100"): as far as a user could tune Koordinator's filter to
// overcommit, for comparison with its defaults.
func LoadAwareFull() Policy {
	args := plugins.DefaultLoadAwareSchedulingArgs(workload.Schema())
	for k, th := range args.UsageThresholds {
		if th > 0 {
			args.UsageThresholds[k] = 1
		}
	}
	p := LoadAware(WithLoadAwareArgs(args))
	p.Name = "LoadAware-100"
	return p
}

// Plugin is the load-aware plugin, for reading its measurements and estimates.
func (s *LoadAwareScheduler) Plugin() *plugins.LoadAwareScheduling { return s.plugin }

// AddNode adds a node; it has no measurement until its first report.
func (s *LoadAwareScheduler) AddNode(n finegrain.Node) error {
	if err := s.Scheduler.AddNode(n); err != nil {
		return err
	}
	s.plugin.Forget(n.ID)
	s.mu.Lock()
	s.nodes[n.ID] = true
	s.mu.Unlock()
	return nil
}

// RemoveNode removes a node and forgets its measurement.
func (s *LoadAwareScheduler) RemoveNode(id string, now time.Duration) ([]string, error) {
	ids, err := s.Scheduler.RemoveNode(id, now)
	if err != nil {
		return nil, err
	}
	s.plugin.Forget(id)
	s.mu.Lock()
	delete(s.nodes, id)
	s.mu.Unlock()
	return ids, nil
}

// Finished reports a task's end without its observation: there is no learning.
func (s *LoadAwareScheduler) Finished(id string, now time.Duration, _ *predict.Observation) error {
	return s.Scheduler.Finished(id, now, nil)
}

func (s *LoadAwareScheduler) known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[id]
}

// SetExternalLoad absorbs the background a node agent reports: the measured usage
// already includes it. It checks the call (a known node, a load valid for the schema)
// and holds nothing.
func (s *LoadAwareScheduler) SetExternalLoad(id string, _ time.Duration, load resource.Tuple) (resource.Tuple, error) {
	if err := s.Schema().Validate(load); err != nil {
		return resource.Tuple{}, fmt.Errorf("sim: load aware: external load of node %q: %w", id, err)
	}
	if !s.known(id) {
		return resource.Tuple{}, fmt.Errorf("sim: load aware: external load of node %q: %w", id, finegrain.ErrUnknownNode)
	}
	return resource.Tuple{}, nil
}

// ReportUsage records node id's measured usage: the window's intervals' Actual,
// condensed by the UsageStat, over the window's span, ending at now. The inner
// scheduler's conformity adjuster is not fed; the Change is always empty. It fails,
// changing nothing, on an unknown node, an empty window, an interval with a negative
// duration or an invalid Actual, or a report older than the node's last.
func (s *LoadAwareScheduler) ReportUsage(id string, now time.Duration, window []predict.Interval) (policy.Change, error) {
	if !s.known(id) {
		return policy.Change{}, fmt.Errorf("sim: load aware: usage of node %q: %w", id, finegrain.ErrUnknownNode)
	}
	usage, span, err := condense(s.Schema(), s.stat, window)
	if err != nil {
		return policy.Change{}, fmt.Errorf("sim: load aware: usage of node %q: %w", id, err)
	}
	if err := s.plugin.Report(id, now, usage, span); err != nil {
		return policy.Change{}, fmt.Errorf("sim: load aware: %w", err)
	}
	return policy.Change{}, nil
}

// condense is the window's usage by stat, and its span.
func condense(schema *resource.Schema, stat UsageStat, window []predict.Interval) (resource.Tuple, time.Duration, error) {
	if len(window) == 0 {
		return resource.Tuple{}, 0, fmt.Errorf("empty window: %w", finegrain.ErrInvalid)
	}
	var span time.Duration
	var sum resource.Vector
	var peak resource.Tuple
	for i, in := range window {
		if in.Duration < 0 {
			return resource.Tuple{}, 0, fmt.Errorf("window[%d] duration %v < 0: %w", i, in.Duration, finegrain.ErrInvalid)
		}
		if err := schema.Validate(in.Actual); err != nil {
			return resource.Tuple{}, 0, fmt.Errorf("window[%d] actual: %w", i, err)
		}
		span += in.Duration
		for k := 0; k < schema.Len(); k++ {
			sum[k] += float64(in.Actual[k]) * in.Duration.Seconds()
		}
		peak = peak.Max(in.Actual)
	}
	if stat == UsageMax || span == 0 {
		return peak, span, nil
	}
	var mean resource.Tuple
	for k := 0; k < schema.Len(); k++ {
		mean[k] = int64(sum[k]/span.Seconds() + 0.5)
	}
	return mean, span, nil
}
