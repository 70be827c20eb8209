package policy

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// Conformity is where the adjuster reads servers' prediction conformity (eq. 16): Mean
// returns, per resource, the mean of the server's last k conformity values (k is the
// source's to choose), and false when it has none yet. The predict package's
// *ConformityLog satisfies it. Implementations must be safe for concurrent use.
type Conformity interface {
	Mean(server string) (resource.Vector, bool)
}

// Reduction turns a server's per-resource average conformity into the one number
// Alg. 3 compares with its thresholds; capacity is the server's total resources.
type Reduction func(mean resource.Vector, capacity resource.Tuple) float64

// WorstShare is the default Reduction: the worst resource's root-mean-square
// under-prediction as a fraction of its capacity, max over dimensions with a positive
// capacity of √F_k / N_k. Eq. 16's F is a mean of squared differences in base units
// (millicores², bytes²), so resources cannot be compared raw; the square root brings F
// back to the resource's unit and the capacity makes it a share in [0, 1] for usage
// within capacity. Negative values count as 0. A NaN value gives NaN (no decision).
func WorstShare(mean resource.Vector, capacity resource.Tuple) float64 {
	worst := 0.0
	for k, f := range mean {
		if capacity[k] <= 0 {
			continue
		}
		if f != f {
			return math.NaN()
		}
		worst = max(worst, math.Sqrt(max(f, 0))/float64(capacity[k]))
	}
	return worst
}

// WorstRaw is a Reduction for conformity sources that already report comparable,
// normalised values: the largest value over dimensions with a positive capacity.
func WorstRaw(mean resource.Vector, capacity resource.Tuple) float64 {
	worst := 0.0
	for k, f := range mean {
		if capacity[k] <= 0 {
			continue
		}
		if f != f {
			return math.NaN()
		}
		worst = max(worst, f)
	}
	return worst
}

// Degradation configures how the adjuster recognises a degrading server (Alg. 3's
// isDegradation, "running tasks' completion times grow abnormally"; the paper does not
// define it, this is our Reading): the embedder reports, per finished (or projected)
// task, its observed duration and the duration it was expected to take — best eq. 15's
// duration under the compression it was placed with (match.ResultDuration), so that
// planned compression is not mistaken for degradation. The server is degrading when it
// has at least MinReports of the last Window reports and their mean stretch
// observed/expected is at least Factor.
type Degradation struct {
	// Factor is the mean stretch that counts as abnormal; > 1. Default 1.5: the
	// largest planned slowdown at the 10% compression limit is 1/0.9 ≈ 1.11.
	Factor float64
	// Window is how many recent reports per server are kept; ≥ 1. Default 8.
	Window int
	// MinReports is how many reports are needed before judging; 1 ≤ MinReports ≤
	// Window. Default 3.
	MinReports int
}

// DefaultDegradation is the default Degradation.
var DefaultDegradation = Degradation{Factor: 1.5, Window: 8, MinReports: 3}

// Validate checks the configuration.
func (d Degradation) Validate() error {
	switch {
	case !(d.Factor > 1) || math.IsInf(d.Factor, 1):
		return settingErr("degradation factor", d.Factor, ErrInvalidValue)
	case d.Window < 1:
		return settingErr("degradation window", d.Window, ErrInvalidValue)
	case d.MinReports < 1 || d.MinReports > d.Window:
		return settingErr("degradation minimum reports", d.MinReports, ErrInvalidValue)
	}
	return nil
}

// Option configures an Adjuster.
type Option func(*Adjuster) error

// WithThresholds sets Alg. 3's thresholds (default DefaultThresholds).
func WithThresholds(t Thresholds) Option {
	return func(a *Adjuster) error {
		if err := t.Validate(); err != nil {
			return err
		}
		a.th = t
		return nil
	}
}

// WithReduction sets how per-resource conformity is reduced to the number compared
// with the thresholds (default WorstShare).
func WithReduction(r Reduction) Option {
	return func(a *Adjuster) error {
		if r == nil {
			return settingErr("reduction", "nil", ErrInvalidValue)
		}
		a.reduce = r
		return nil
	}
}

// WithIdleThreshold sets Alg. 1's idle threshold Ih per dimension: fractions in [0, 1],
// zero outside the schema (default DefaultIdleThreshold on every dimension).
func WithIdleThreshold(ih resource.Vector) Option {
	return func(a *Adjuster) error {
		if err := a.schema.ValidateRatios(ih, 1, false); err != nil {
			return settingErr("idle threshold", ih, err)
		}
		a.idle = ih
		return nil
	}
}

// WithDegradation sets how degradation is recognised (default DefaultDegradation).
func WithDegradation(d Degradation) Option {
	return func(a *Adjuster) error {
		if err := d.Validate(); err != nil {
			return err
		}
		a.deg = d
		return nil
	}
}

// WithInitialMode sets the mode of a server when it is added (default FineGrained,
// the mode of a server with no conformity problem).
func WithInitialMode(m NodeMode) Option {
	return func(a *Adjuster) error {
		if !m.Valid() {
			return settingErr("initial mode", m, ErrUnknownMode)
		}
		a.initial = m
		return nil
	}
}

// Change reports the adjuster's decision for one server.
type Change struct {
	// Server is the server's ID.
	Server string
	// From is the mode before the adjustment, To the mode after.
	From, To NodeMode
	// Score is the reduced average conformity the decision rests on.
	Score float64
	// Recycle asks the embedder to recycle the server's resources (reclaim or
	// preempt its tasks): it is stopped and degrading (Alg. 3 lines 2–6).
	Recycle bool
	// Stretch is, with Recycle, how much longer than expected the server's recently
	// finished tasks took on average (at least the degradation factor); 0 otherwise.
	Stretch float64
}

// Adjuster keeps every server's scheduling mode and adjusts it from prediction
// conformity (FGM §2.4, Alg. 3). It also answers Alg. 1 line 1 (is the server worth a
// scheduling pass: its mode and its idle resources) and is the ModeSource of the
// compression manager.
//
// The embedder drives it as it likes: call Adjust periodically, or AdjustServer when a
// server reports. An Adjuster is safe for concurrent use: schedulers may read modes
// while an adjustment runs; an adjustment reads conformity without holding the lock.
type Adjuster struct {
	schema *resource.Schema
	conf   Conformity

	mu      sync.RWMutex
	th      Thresholds
	reduce  Reduction
	idle    resource.Vector
	deg     Degradation
	initial NodeMode
	servers map[string]*server
	byID    sync.Map // id → *server, as servers: Lookup reads it without the lock
}

type server struct {
	ref      ModeRef // the mode, read through references without the lock
	capacity resource.Tuple
	mode     NodeMode
	score    float64
	scored   bool
	stretch  []float64 // ring of the last deg.Window observed/expected ratios
	next, n  int
}

// NewAdjuster returns an adjuster for servers whose capacities are in schema, reading
// conformity from conf. It fails on a nil schema or source and on an invalid option;
// the error names the setting.
func NewAdjuster(schema *resource.Schema, conf Conformity, opts ...Option) (*Adjuster, error) {
	if schema == nil {
		return nil, settingErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	if conf == nil {
		return nil, settingErr("conformity", "nil", ErrNilConformity)
	}
	a := &Adjuster{
		schema:  schema,
		conf:    conf,
		th:      DefaultThresholds,
		reduce:  WorstShare,
		idle:    resource.Uniform(schema.All(), DefaultIdleThreshold),
		deg:     DefaultDegradation,
		servers: make(map[string]*server),
	}
	for i, o := range opts {
		if o == nil {
			return nil, settingErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidValue)
		}
		if err := o(a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// AddServer starts tracking a server of the given capacity, in the initial mode. It
// fails on an empty or already-tracked ID and on a capacity invalid for the schema.
func (a *Adjuster) AddServer(id string, capacity resource.Tuple) error {
	if id == "" {
		return settingErr("server ID", `""`, ErrInvalidID)
	}
	if err := a.schema.Validate(capacity); err != nil {
		return settingErr("capacity of "+id, capacity, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.servers[id]; ok {
		return settingErr("server ID", id, ErrDuplicateServer)
	}
	s := &server{capacity: capacity, mode: a.initial}
	s.ref.id = id
	s.ref.mode.Store(uint32(a.initial))
	floor := capacity.ScaleEach(a.idle)
	s.ref.floor.Store(&floor)
	a.servers[id] = s
	a.byID.Store(id, s)
	return nil
}

// SetCapacity changes tracked server id's capacity (its allocatable resources
// changed): the idle threshold (Schedulable) is read against the new one from now on;
// its mode, score and history stay. It fails on an unknown ID and on a capacity
// invalid for the schema.
func (a *Adjuster) SetCapacity(id string, capacity resource.Tuple) error {
	if err := a.schema.Validate(capacity); err != nil {
		return settingErr("capacity of "+id, capacity, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.servers[id]
	if !ok {
		return settingErr("server ID", id, ErrUnknownServer)
	}
	s.capacity = capacity
	floor := capacity.ScaleEach(a.idle)
	s.ref.floor.Store(&floor)
	return nil
}

// RemoveServer stops tracking a server.
func (a *Adjuster) RemoveServer(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.servers[id]
	if !ok {
		return settingErr("server ID", id, ErrUnknownServer)
	}
	s.ref.removed.Store(true)
	delete(a.servers, id)
	a.byID.Delete(id)
	return nil
}

// Servers returns the IDs of the tracked servers, sorted.
func (a *Adjuster) Servers() []string {
	a.mu.RLock()
	defer a.mu.RUnlock()
	ids := make([]string, 0, len(a.servers))
	for id := range a.servers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Mode returns a server's current mode; StopAllocation for a server not tracked (a
// scheduler must not allocate on it). It implements ModeSource.
func (a *Adjuster) Mode(id string) NodeMode {
	m, ok := a.Lookup(id)
	if !ok {
		return ModeStopAllocation
	}
	return m
}

// Lookup returns a server's current mode and whether it is tracked. It takes no lock:
// filters on many goroutines ask it for every node they probe.
func (a *Adjuster) Lookup(id string) (NodeMode, bool) {
	v, ok := a.byID.Load(id)
	if !ok {
		return ModeStopAllocation, false
	}
	return NodeMode(v.(*server).ref.mode.Load()), true // set with s.mode (setMode)
}

// Ref returns a reference to tracked server id's mode, for a caller that reads it
// often: ModeRef.Mode costs no lookup by ID and no lock. false for a server not
// tracked.
func (a *Adjuster) Ref(id string) (*ModeRef, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s, ok := a.servers[id]
	if !ok {
		return nil, false
	}
	return &s.ref, true
}

// ModeRef is a reference to one tracked server's mode (Adjuster.Ref). It reads what
// Adjuster.Mode would, for as long as the server stays tracked: once it is removed
// (RemoveServer) the reference is void for good, and a server added again under the
// same ID has a reference of its own. Safe for concurrent use.
type ModeRef struct {
	mode    atomic.Uint32
	removed atomic.Bool
	floor   atomic.Pointer[resource.Tuple] // the idle threshold's share of the capacity (BelowIdle)
	id      string                         // the server's; beside its mode, so that a reader checks both in one cache line
}

// ID is the ID of the server whose mode r reads.
func (r *ModeRef) ID() string { return r.id }

// Mode returns the server's current mode, and false once the server was removed
// (then look it up again: Adjuster.Mode, Adjuster.Ref).
func (r *ModeRef) Mode() (NodeMode, bool) {
	if r.removed.Load() {
		return ModeStopAllocation, false
	}
	return NodeMode(r.mode.Load()), true
}

// Schedulable reports what Adjuster.Schedulable would for the server with idle
// resources idle, which must lie within the adjuster's schema: whether its mode lets
// tasks be allocated and idle is not below the idle threshold. live is false once the
// server was removed (then ask the Adjuster).
func (r *ModeRef) Schedulable(idle resource.Tuple) (ok, live bool) {
	if r.removed.Load() {
		return false, false
	}
	return NodeMode(r.mode.Load()).Schedulable() && !idle.AnyLess(*r.floor.Load()), true
}

// setMode sets the server's mode; a.mu is held for writing.
func (s *server) setMode(m NodeMode) {
	s.mode = m
	s.ref.mode.Store(uint32(m))
}

// Matcher returns the matcher for a server's current mode (see Mode.Matcher).
func (a *Adjuster) Matcher(id string) match.Matcher { return a.Mode(id).Matcher() }

// SetMode sets a server's mode by hand (an operator's override); the next adjustment
// of the server decides afresh.
func (a *Adjuster) SetMode(id string, m NodeMode) error {
	if !m.Valid() {
		return settingErr("mode", m, ErrUnknownMode)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.servers[id]
	if !ok {
		return settingErr("server ID", id, ErrUnknownServer)
	}
	s.setMode(m)
	return nil
}

// Thresholds returns the current thresholds.
func (a *Adjuster) Thresholds() Thresholds {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.th
}

// SetThresholds replaces the thresholds at run time; invalid ones are rejected and
// the old ones kept.
func (a *Adjuster) SetThresholds(t Thresholds) error {
	if err := t.Validate(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.th = t
	return nil
}

// Score returns the reduced average conformity of a server's last adjustment, and
// false when it has not been scored yet.
func (a *Adjuster) Score(id string) (float64, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s, ok := a.servers[id]
	if !ok || !s.scored {
		return 0, false
	}
	return s.score, true
}

// Schedulable is Alg. 1 line 1: a server is worth a scheduling pass unless its mode
// is StopAllocation or its idle resources are below the idle threshold of its capacity
// on some dimension (BelowIdle). idle is eq. 14's time-weighted average of the
// server's free resources; it may be negative on a compressed dimension.
func (a *Adjuster) Schedulable(id string, idle resource.Tuple) (bool, error) {
	for k := a.schema.Len(); k < resource.MaxDims; k++ {
		if idle[k] != 0 {
			return false, settingErr("idle", idle, resource.ErrOutsideSchema)
		}
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	s, ok := a.servers[id]
	if !ok {
		return false, settingErr("server ID", id, ErrUnknownServer)
	}
	return s.mode.Schedulable() && !BelowIdle(idle, s.capacity, a.idle), nil
}

// ObserveCompletion records that a task on the server took observed where it was
// expected to take expected (see Degradation). expected must be positive and observed
// non-negative.
func (a *Adjuster) ObserveCompletion(id string, expected, observed time.Duration) error {
	if expected <= 0 {
		return settingErr("expected duration", expected, ErrInvalidValue)
	}
	if observed < 0 {
		return settingErr("observed duration", observed, ErrInvalidValue)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.servers[id]
	if !ok {
		return settingErr("server ID", id, ErrUnknownServer)
	}
	if len(s.stretch) != a.deg.Window {
		s.stretch, s.next, s.n = make([]float64, a.deg.Window), 0, 0
	}
	s.stretch[s.next] = float64(observed) / float64(expected)
	s.next = (s.next + 1) % len(s.stretch)
	s.n = min(s.n+1, len(s.stretch))
	return nil
}

// Degrading reports whether the server is degrading (see Degradation).
func (a *Adjuster) Degrading(id string) (bool, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s, ok := a.servers[id]
	if !ok {
		return false, settingErr("server ID", id, ErrUnknownServer)
	}
	_, ok = a.degrading(s)
	return ok, nil
}

// degrading reports whether server s is degrading, and its mean stretch.
func (a *Adjuster) degrading(s *server) (float64, bool) {
	if s.n < a.deg.MinReports {
		return 0, false
	}
	sum := 0.0
	for i := 0; i < s.n; i++ {
		sum += s.stretch[i]
	}
	mean := sum / float64(s.n)
	return mean, mean >= a.deg.Factor
}

// AdjustServer applies Alg. 3 to one server: it reads the server's average
// conformity, reduces it to a score and sets the mode the thresholds give. A stopped,
// degrading server gets Recycle; its completion reports are then cleared, so one
// degradation episode is signalled once. A server without conformity data (or with a
// NaN score) keeps its mode. The returned Change has From == To when nothing changed.
func (a *Adjuster) AdjustServer(id string) (Change, error) {
	a.mu.RLock()
	_, ok := a.servers[id]
	a.mu.RUnlock()
	if !ok {
		return Change{}, settingErr("server ID", id, ErrUnknownServer)
	}
	mean, have := a.conf.Mean(id) // outside the lock: the source has its own
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.servers[id]
	if !ok {
		return Change{}, settingErr("server ID", id, ErrUnknownServer)
	}
	return a.apply(id, s, mean, have), nil
}

// Adjust applies Alg. 3 to every tracked server, in ID order, and returns the servers
// whose mode changed or whose resources should be recycled.
func (a *Adjuster) Adjust() []Change {
	ids := a.Servers()
	means := make([]resource.Vector, len(ids))
	have := make([]bool, len(ids))
	for i, id := range ids {
		means[i], have[i] = a.conf.Mean(id)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var changes []Change
	for i, id := range ids {
		s, ok := a.servers[id]
		if !ok {
			continue // removed meanwhile
		}
		if c := a.apply(id, s, means[i], have[i]); c.From != c.To || c.Recycle {
			changes = append(changes, c)
		}
	}
	return changes
}

// apply is Alg. 3's body for one server; a.mu is held.
func (a *Adjuster) apply(id string, s *server, mean resource.Vector, have bool) Change {
	c := Change{Server: id, From: s.mode, To: s.mode, Score: s.score}
	if !have {
		return c
	}
	score := a.reduce(mean, s.capacity)
	if score != score {
		return c
	}
	s.score, s.scored = score, true
	c.Score = score
	s.setMode(a.th.Mode(score))
	c.To = s.mode
	if stretch, ok := a.degrading(s); s.mode == ModeStopAllocation && ok {
		c.Recycle, c.Stretch = true, stretch
		s.n, s.next = 0, 0
	}
	return c
}

// String describes the change, e.g. "n1: FineGrained → CoarseGrained (score 0.12)".
func (c Change) String() string {
	s := fmt.Sprintf("%s: %v → %v (score %.3g)", c.Server, c.From, c.To, c.Score)
	if c.Recycle {
		s += fmt.Sprintf(", recycle (tasks %.3g× as long as expected)", c.Stretch)
	}
	return s
}
