package framework

import (
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/finegrain/finegrain/cluster"
)

// Framework runs scheduling cycles over a cluster.State with a set of plugins. It is
// driven by one owner at a time (the reference Scheduler holds its lock), except
// Filter and Score, which only read and may run concurrently.
type Framework struct {
	state *cluster.State

	demand      DemandPlugin
	preFilters  []PreFilterPlugin
	filters     []FilterPlugin
	postFilters []PostFilterPlugin
	scores      []ScorePlugin
	reserves    []ReservePlugin
	permits     []PermitPlugin
	gates       []NodeGatePlugin
	jobFilters  []JobFilterPlugin
	passes      []PassPlugin
	forgets     []ForgetPlugin
	all         []Plugin

	candidates int
	details    int
	logger     *slog.Logger
	onViews    bool // every PreFilter, Filter and Score plugin is ViewSafe (probe.go)

	// Scratch reused from cycle to cycle (a single owner drives cycles).
	owned     Cycle    // the pull or push cycle under way (cycle)
	decision  Decision // the heartbeat's Decision under way, returned by value
	started   int      // the assignments of the last heartbeat that ended without error
	gen       uint64   // the current cycle's generation
	passed    []uint64 // by job index: the generation of the pull cycle that passed it over
	scratch   Attempt  // the attempt of a pull Try
	prepared  Attempt  // the attempt a Prepare builds, while preparing holds it
	preparing atomic.Bool
	cands     []Attempt
	tally     Tally           // the refusals of the placement under way (Place, host mode)
	locator   cluster.Locator // the locality of a push placement's task
	totals    []float64
	scores1   []float64

	waiting   map[string]*waiter  // tasks a Permit plugin keeps waiting, by ID
	permitted []Assignment        // waiting tasks allowed in push cycles, not yet taken
	held      map[string]*Attempt // tasks held for a host scheduler (host.go), by ID
	heldSweep int                 // the size of held at which stale entries are next dropped
}

// Option configures a Framework.
type Option func(*Framework) error

// WithCandidates sets how many nodes that pass the filters push placement scores
// before it picks the best (like the Kubernetes scheduler's percentage of nodes to
// score); 0 scores every node that passes. Default 16.
func WithCandidates(n int) Option {
	return func(f *Framework) error {
		if n < 0 {
			return fmt.Errorf("framework: candidates %d < 0: %w", n, cluster.ErrInvalid)
		}
		f.candidates = n
		return nil
	}
}

// WithSkipDetails makes each Decision detail the first n jobs a heartbeat passed over
// (Decision.Skips). n must be in [0, MaxSkips]; default DefaultSkipDetails.
func WithSkipDetails(n int) Option {
	return func(f *Framework) error {
		if n < 0 || n > MaxSkips {
			return fmt.Errorf("framework: skip details %d, want 0..%d: %w", n, MaxSkips, cluster.ErrInvalid)
		}
		f.details = n
		return nil
	}
}

// WithLogger logs every placement at debug level and unexpected refusals at warn
// level; nil logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(f *Framework) error {
		f.logger = l
		return nil
	}
}

// New returns a framework running plugins, in the given order at each extension point
// they implement, over state. It fails on a nil state or plugin, a duplicate name, a
// plugin that implements no extension point, or no DemandPlugin. The framework asks
// state to tell it of the jobs it forgets (cluster.State.OnForget): a state serves one
// framework.
func New(state *cluster.State, plugins []Plugin, opts ...Option) (*Framework, error) {
	if state == nil {
		return nil, fmt.Errorf("framework: nil state: %w", cluster.ErrInvalid)
	}
	f := &Framework{state: state, candidates: 16, details: DefaultSkipDetails, waiting: map[string]*waiter{}, held: map[string]*Attempt{}, heldSweep: 64}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("framework: nil option: %w", cluster.ErrInvalid)
		}
		if err := o(f); err != nil {
			return nil, err
		}
	}
	names := map[string]bool{}
	for i, p := range plugins {
		if p == nil {
			return nil, fmt.Errorf("framework: plugin %d is nil: %w", i, cluster.ErrInvalid)
		}
		name := p.Name()
		if name == "" || names[name] {
			return nil, fmt.Errorf("framework: plugin name %q empty or used twice: %w", name, cluster.ErrInvalid)
		}
		names[name] = true
		if !f.register(p) {
			return nil, fmt.Errorf("framework: plugin %q implements no extension point: %w", name, cluster.ErrInvalid)
		}
		f.all = append(f.all, p)
	}
	if f.demand == nil {
		return nil, fmt.Errorf("framework: no demand plugin: %w", cluster.ErrInvalid)
	}
	f.onViews = viewSafe(f.preFilters) && viewSafe(f.filters) && viewSafe(f.scores)
	state.OnForget(f.forget)
	return f, nil
}

// point is one extension point: its name, as Plugins keys it, and how a plugin is
// registered there and the registered ones listed.
type point struct {
	name string
	add  func(f *Framework, p Plugin) bool // registers p if it implements the point
	list func(f *Framework) []Plugin       // the registered plugins, in order
}

// at is the extension point name whose plugins implement T and sit in the slice slot
// returns.
func at[T Plugin](name string, slot func(f *Framework) *[]T) point {
	return point{
		name: name,
		add: func(f *Framework, p Plugin) bool {
			x, ok := p.(T)
			if ok {
				s := slot(f)
				*s = append(*s, x)
			}
			return ok
		},
		list: func(f *Framework) []Plugin {
			s := *slot(f)
			out := make([]Plugin, len(s))
			for i, x := range s {
				out[i] = x
			}
			return out
		},
	}
}

// points are the extension points, in the order a task meets them and then pull
// mode's own; Demand, of which exactly one plugin is used (the last registered), is
// handled apart.
var points = [...]point{
	at("PreFilter", func(f *Framework) *[]PreFilterPlugin { return &f.preFilters }),
	at("Filter", func(f *Framework) *[]FilterPlugin { return &f.filters }),
	at("PostFilter", func(f *Framework) *[]PostFilterPlugin { return &f.postFilters }),
	at("Score", func(f *Framework) *[]ScorePlugin { return &f.scores }),
	at("Reserve", func(f *Framework) *[]ReservePlugin { return &f.reserves }),
	at("Permit", func(f *Framework) *[]PermitPlugin { return &f.permits }),
	at("NodeGate", func(f *Framework) *[]NodeGatePlugin { return &f.gates }),
	at("JobFilter", func(f *Framework) *[]JobFilterPlugin { return &f.jobFilters }),
	at("Pass", func(f *Framework) *[]PassPlugin { return &f.passes }),
	at("Forget", func(f *Framework) *[]ForgetPlugin { return &f.forgets }),
}

// register adds p at every extension point it implements, and reports whether there
// was one.
func (f *Framework) register(p Plugin) bool {
	any := false
	if x, ok := p.(DemandPlugin); ok {
		f.demand, any = x, true
	}
	for _, pt := range points {
		if pt.add(f, p) {
			any = true
		}
	}
	return any
}

// State is the cluster state the framework schedules on.
func (f *Framework) State() *cluster.State { return f.state }

// Plugins lists the registered plugins' names by extension point, in the order they
// run, keyed by the point's name ("Demand", "PreFilter", "Filter", "PostFilter",
// "Score", "Reserve", "Permit", "NodeGate", "JobFilter", "Pass", "Forget"); a point
// without plugins is left out.
func (f *Framework) Plugins() map[string][]string {
	out := map[string][]string{"Demand": {f.demand.Name()}}
	for _, pt := range points {
		for _, p := range pt.list(f) {
			out[pt.name] = append(out[pt.name], p.Name())
		}
	}
	return out
}

// forget tells the ForgetPlugins that the state forgets job j, and clears the job's
// index in the framework's own scratch.
func (f *Framework) forget(j *cluster.JobInfo) {
	if i := j.Index(); i < len(f.passed) {
		f.passed[i] = 0
	}
	for _, p := range f.forgets {
		p.Forget(j)
	}
}

func (f *Framework) debug(msg string, args ...any) {
	if f.logger != nil {
		f.logger.Debug(msg, args...)
	}
}

func (f *Framework) warn(msg string, args ...any) {
	if f.logger != nil {
		f.logger.Warn(msg, args...)
	}
}
