package finegrain

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Scheduler is the reference scheduler: FGM's Algorithm 1 (docs/methods.md §3) wired
// from the library's blocks, as a thin composition of three parts:
//
//   - the cluster state (package cluster): nodes and their timelines, queues, jobs,
//     tasks, two-phase reservations;
//   - the scheduling cycle (package framework): Demand → PreFilter → Filter →
//     (Score, PostFilter) → Reserve → Permit → commit, run in pull mode (Heartbeat: a
//     node has room, which tasks start there?) and push mode (Place: a task is
//     pending, which node takes it?);
//   - the plugins on the cycle's extension points (package plugins), chosen by the
//     options; list them with Plugins.
//
// The defaults are the paper's: DRF, prediction from similar tasks, fine-grained
// matching with at most 10% compression, the eq. 15 deadline check, delay scheduling
// (whose node-locality waits last only while a node holding the input has room);
// gang jobs (Job.MinMember) always run all-or-nothing (plugins.Gang). Preemption
// (WithPreemption) and future reservations (WithFutureStart, WithBooking) are
// opt-in.
//
// Every submitted task is, at any moment, exactly one of Pending, Reserved, Running,
// Booked, Finished or Cancelled; a non-compressible dimension is never reserved beyond a
// node's capacity. Calls that fail change nothing. A Scheduler is safe for concurrent
// use: calls that change it are serialised, and Filter, Score and the other reads run
// concurrently with each other.
type Scheduler struct {
	mu     sync.RWMutex
	schema *resource.Schema
	cfg    config

	state       *cluster.State
	fw          *framework.Framework
	conformity  *predict.ConformityLog
	monitor     *policy.Monitor              // usage reports → conformity → the adjuster (Alg. 3)
	qosVec      *plugins.QoSVectorScheduling // the pull strategy's pass under PullQoSVector, else nil
	adjuster    *policy.Adjuster
	compression *policy.Compression
	estimator   predict.Estimator
	loads       *predict.LoadLog // the external loads reported (SetExternalLoad)
	views       nodeViews        // the nodes as the latest Snapshot saw them (snapshot.go)
	scale       *scaleUp         // the scale-up rounds' planner and what they shrank (mixed.go)
}

// New returns a scheduler for resources described by schema, configured by opts.
func New(schema *resource.Schema, opts ...Option) (*Scheduler, error) {
	if schema == nil {
		return nil, fmt.Errorf("finegrain: nil schema: %w", resource.ErrSchemaMismatch)
	}
	cfg := defaults()
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("finegrain: nil option: %w", ErrInvalid)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Scheduler{schema: schema, cfg: cfg}
	var err error
	if s.state, err = cluster.New(schema, cluster.WithOrdering(cfg.ordering), cluster.WithJobProgress(cfg.speculator != nil), cluster.WithRetention(cfg.retention)); err != nil {
		return nil, err
	}
	if s.conformity, err = predict.NewConformityLog(cfg.window); err != nil {
		return nil, err
	}
	if s.loads, err = predict.NewLoadLog(schema, cfg.loadWindow, cfg.loadQ); err != nil {
		return nil, err
	}
	if s.adjuster, err = policy.NewAdjuster(schema, s.conformity, cfg.adjust...); err != nil {
		return nil, fmt.Errorf("finegrain: adjuster: %w", err)
	}
	limits := []policy.CompressionOption{policy.WithLimit(cfg.limit), policy.WithPenalty(cfg.penalty)}
	if s.compression, err = policy.NewCompression(schema, s.adjuster, limits...); err != nil {
		return nil, fmt.Errorf("finegrain: compression: %w", err)
	}
	idle := resource.Uniform(schema.All(), 0.1)
	if cfg.ihConform != nil {
		idle = *cfg.ihConform
	}
	if err := schema.ValidateRatios(idle, 1, false); err != nil {
		return nil, fmt.Errorf("finegrain: conformity idle threshold: %w: %w", ErrInvalid, err)
	}
	if s.monitor, err = policy.NewMonitor(schema, s.adjuster, s.conformity, idle); err != nil {
		return nil, fmt.Errorf("finegrain: monitor: %w", err)
	}
	if s.scale, err = newScaleUp(schema, cfg.scaleUp); err != nil {
		return nil, err
	}
	s.estimator = cfg.estimator
	if s.estimator == nil {
		if s.estimator, err = predict.NewSimilarTask(schema); err != nil {
			return nil, fmt.Errorf("finegrain: estimator: %w", err)
		}
	}
	list, err := s.plugins()
	if err != nil {
		return nil, err
	}
	fwOpts := []framework.Option{framework.WithCandidates(cfg.candidates), framework.WithSkipDetails(cfg.skipDetails), framework.WithLogger(cfg.logger)}
	if s.fw, err = framework.New(s.state, list, fwOpts...); err != nil {
		return nil, err
	}
	return s, nil
}

// plugins builds the plugin list the options describe: the built-in plugins in the
// order they run at each extension point (a plugin that implements several sits at
// each), then the options' additions and removals (WithPlugin, WithPluginBefore,
// WithoutPlugin). framework.New registers each at the points it implements.
func (s *Scheduler) plugins() ([]framework.Plugin, error) {
	cfg := &s.cfg
	est := s.estimator
	if !cfg.predict {
		est = nil
	}
	pred, err1 := plugins.NewPrediction(s.schema, est, cfg.holdTail)
	gate, err2 := plugins.NewModeGate(s.adjuster)
	matcher, err3 := plugins.NewStageMatch(s.adjuster, s.compression, cfg.matchers)
	score, err4 := plugins.NewNodeScore(cfg.scorer, 1)
	gang, err5 := plugins.NewGang(cfg.gangTimeout)
	idle, err6 := plugins.NewIdleGate(s.adjuster)
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, err
	}
	pred.SetEscalation(cfg.escalate)
	classes, err := plugins.NewDemandClasses(pred)
	if err != nil {
		return nil, err
	}
	pull, walk, err := s.pullPass(pred)
	if err != nil {
		return nil, err
	}
	optional, err := s.optionalPlugins()
	if err != nil {
		return nil, err
	}

	list := []framework.Plugin{
		pred,                     // Demand: the declared profile, else the prediction, else the request (Alg. 1 line 8)
		plugins.QueueAdmission{}, // PreFilter: a queue at its max share takes no more, before any node is looked at
		gate,                     // Filter: a node in StopAllocation takes nothing (Alg. 3) — the cheapest refusal first
		plugins.GPUFit{},         // Filter: the node's GPU devices can hold the task's GPU demand
		matcher,                  // Filter: the stage match with bounded compression (Alg. 2) — the costly one
	}
	list = append(list, optional.qos...)        // Filter: a match that compresses keeps the deadlines (eq. 15), after the match it judges (WithQoS)
	list = append(list, score)                  // Score (push): rank the nodes that passed (WithScorer)
	list = append(list, optional.gpuScore...)   // Score (push): and choose the task's GPU devices (WithGPUScorer)
	list = append(list, gang)                   // PreFilter, Reserve, Permit: a gang's members start together
	list = append(list, optional.capPerBeat...) // NodeGate: at most n starts a heartbeat (WithMaxPerHeartbeat)
	list = append(list, idle)                   // NodeGate: the node has idle room in its mode (Alg. 1 line 1)
	list = append(list, classes)                // JobFilter: pass over jobs none of whose tasks can start on the node
	list = append(list, pull)                   // Pass: the pull strategy chooses the tasks (WithPullStrategy)
	list = append(list, optional.preempt...)    // Pass, PostFilter: make room now, after the strategy and before booking (WithPreemption)
	list = append(list, optional.book...)       // PostFilter, Pass: book a future start — waiting for room later (WithFutureStart, WithBooking)
	list = append(list, optional.speculate...)  // Pass: backups with what room is left, last (WithSpeculation)

	for _, e := range cfg.edits {
		if list, err = e.apply(list); err != nil {
			return nil, err
		}
	}
	// Walking the fairness order, which tries a job's task only once the job filters let
	// it through, the demand classes check a predicted first stage's window as the
	// stage matcher would, while all three are in the chain. (Tetris and the
	// pre-release list weigh every job's tasks in their own way: the check would only
	// add to it.)
	inChain := func(p framework.Plugin) bool { return slices.Contains(list, p) }
	if walk != nil && inChain(walk) && inChain(classes) && inChain(matcher) {
		classes.FirstStageWindow(matcher)
	}
	return list, nil
}

// optional holds the built-in plugins an option switches on, each empty or one.
type optional struct {
	qos, gpuScore, capPerBeat, preempt, book, speculate []framework.Plugin
}

// optionalPlugins builds the built-in plugins the options switch on.
func (s *Scheduler) optionalPlugins() (optional, error) {
	cfg := &s.cfg
	var o optional
	if !cfg.qosOff {
		q, err := plugins.NewQoS(s.compression, cfg.qos)
		if err != nil {
			return o, err
		}
		o.qos = []framework.Plugin{q}
	}
	if cfg.gpuScorer != nil {
		g, err := plugins.NewGPUScore(cfg.gpuScorer, 1)
		if err != nil {
			return o, err
		}
		o.gpuScore = []framework.Plugin{g}
	}
	if cfg.maxPerBeat > 0 {
		o.capPerBeat = []framework.Plugin{plugins.HeartbeatCap{Max: cfg.maxPerBeat}}
	}
	if cfg.preemption != nil {
		pr, err := plugins.NewPreemption(*cfg.preemption)
		if err != nil {
			return o, fmt.Errorf("finegrain: %w", err)
		}
		o.preempt = []framework.Plugin{pr}
	}
	if cfg.futureStart {
		fs, err := plugins.NewFutureStart(s.adjuster, s.compression, cfg.bookAfter)
		if err != nil {
			return o, err
		}
		o.book = []framework.Plugin{fs}
		if cfg.bookPull {
			b, err := plugins.NewBooking(fs)
			if err != nil {
				return o, err
			}
			o.book = append(o.book, b)
		}
	}
	if cfg.speculator != nil {
		sp, err := plugins.NewSpeculation(cfg.speculator)
		if err != nil {
			return o, err
		}
		o.speculate = []framework.Plugin{sp}
	}
	return o, nil
}

// pullPass builds the pull strategy's Pass plugin (WithPullStrategy); walk is it when
// it walks the fairness order (plugins.DelayScheduling), nil otherwise.
func (s *Scheduler) pullPass(pred *plugins.Prediction) (pass framework.Plugin, walk *plugins.DelayScheduling, err error) {
	cfg := &s.cfg
	p := cfg.pull
	switch p.kind {
	case pullTetris:
		t, err := plugins.NewTetris(p.tetris, pred)
		return t, nil, err
	case pullPreRelease:
		l, err := plugins.NewPreReleaseList(p.placer)
		return l, nil, err
	case pullQoSVector:
		s.qosVec = plugins.NewQoSVectorScheduling()
		return s.qosVec, nil, nil
	case pullClock:
		walk = plugins.NewClockScheduling(p.clock, plugins.WaitForRoom(cfg.waitForRoom))
	case pullDelay:
		d, err := fairness.NewDelay(p.delay...)
		if err != nil {
			return nil, nil, fmt.Errorf("finegrain: delay scheduling: %w: %w", ErrInvalid, err)
		}
		walk = plugins.NewDelayScheduling(d, plugins.WaitForRoom(cfg.waitForRoom))
	default: // pullFairness
		walk = plugins.NewDelayScheduling(nil, plugins.WaitForRoom(cfg.waitForRoom))
	}
	if err := walk.SetPackingBound(cfg.packingBound()); err != nil {
		return nil, nil, fmt.Errorf("finegrain: %w", err)
	}
	return walk, walk, nil
}

// packingBound is the fair packing bound (WithPackingBound): by default
// DefaultPackingBound under DRF ordering and none (+Inf) under the others, whose orders
// are not by dominant share.
func (c *config) packingBound() float64 {
	if c.packBound != nil {
		return *c.packBound
	}
	switch c.ordering.(type) {
	case fairness.DRF, *fairness.DRF:
		return DefaultPackingBound
	}
	return math.Inf(1)
}

// apply makes edit e to list.
func (e pluginEdit) apply(list []framework.Plugin) ([]framework.Plugin, error) {
	find := func(name string) int {
		for i, p := range list {
			if p.Name() == name {
				return i
			}
		}
		return -1
	}
	switch {
	case e.plugin == nil:
		i := find(e.remove)
		if i < 0 {
			return nil, fmt.Errorf("finegrain: without plugin %q: no such plugin: %w", e.remove, ErrInvalid)
		}
		return append(list[:i:i], list[i+1:]...), nil
	case e.before == "":
		return append(list, e.plugin), nil
	}
	i := find(e.before)
	if i < 0 {
		return nil, fmt.Errorf("finegrain: plugin %q before %q: no such plugin: %w", e.plugin.Name(), e.before, ErrInvalid)
	}
	out := append(list[:i:i], e.plugin)
	return append(out, list[i:]...), nil
}

// Schema is the schema of every amount the scheduler handles.
func (s *Scheduler) Schema() *resource.Schema { return s.schema }

// Estimator is the estimator the scheduler predicts with and feeds.
func (s *Scheduler) Estimator() predict.Estimator { return s.estimator }

// Adjuster is the per-server policy adjuster, for reading or setting modes.
func (s *Scheduler) Adjuster() *policy.Adjuster { return s.adjuster }

// Runtime is the progress model of the running tasks — progress, rate, time left,
// per-node rates — as package speculate's LATE and PRRL speculators read it.
func (s *Scheduler) Runtime() predict.RuntimeEstimator { return s.state.Progress() }

// Plugins lists the scheduler's plugins by extension point, in the order they run
// (framework.Framework.Plugins).
func (s *Scheduler) Plugins() map[string][]string { return s.fw.Plugins() }

// AddNode adds a server, with its GPU devices (Node.GPU). It fails on an empty or
// duplicate ID, an invalid capacity or an invalid GPU spec.
func (s *Scheduler) AddNode(n Node) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.state.AddNode(n); err != nil {
		return err
	}
	if err := s.adjuster.AddServer(n.ID, n.Capacity); err != nil {
		_, _ = s.state.RemoveNode(n.ID)
		return fmt.Errorf("finegrain: node %q: %w", n.ID, err)
	}
	return nil
}

// RemoveNode removes a server (it failed or left) at now. Its running and booked tasks
// return to pending; their IDs are returned in ID order. Reservations not yet committed are
// rolled back; backup attempts on the node end (WithSpeculation), as do the backups of
// the tasks returned to pending.
func (s *Scheduler) RemoveNode(id string, now time.Duration) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.eventTime("removal of node", id, now)
	if err != nil {
		return nil, err
	}
	ids, err := s.state.RemoveNode(id)
	if err != nil {
		return nil, err
	}
	_ = s.adjuster.RemoveServer(id)
	delete(s.scale.degraded, id)
	s.conformity.Forget(id)
	s.loads.Forget(id)
	s.fw.Advance(at)
	s.logDebug("node removed", "node", id, "requeued", len(ids), "at", at)
	return ids, nil
}

// UpdateNode changes a node's capacity and GPU devices (Node.Capacity, Node.GPU) at
// now — an orchestrator saw them change: allocatable resources revised, a device
// plugin that reported its GPUs after the node joined, the GPU model labelled later
// — keeping the tasks placed there with their reservations, plans and devices, and
// the node's mode and usage history. Its free resources move by the difference: a
// capacity below what is held there leaves the node over-committed (nothing more is
// placed there) until enough of it ends. Devices added are free; a model change keeps
// the devices' shares. It fails, changing nothing, on an unknown node
// (ErrUnknownNode), another rack, an invalid or all-zero capacity or GPU spec (as
// AddNode), or fewer devices than its tasks hold (ErrState: a task holds a device that
// would go).
func (s *Scheduler) UpdateNode(n Node, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.eventTime("update of node", n.ID, now)
	if err != nil {
		return err
	}
	if err := s.state.UpdateNode(n, at); err != nil {
		return err
	}
	if err := s.adjuster.SetCapacity(n.ID, n.Capacity); err != nil {
		return fmt.Errorf("finegrain: node %q: %w", n.ID, err) // not reached: the state checked the capacity
	}
	s.fw.Advance(at)
	s.logDebug("node updated", "node", n.ID, "capacity", s.schema.Format(n.Capacity), "gpu", n.GPU.Count, "at", at)
	return nil
}

// AddQueue adds a queue under parent ("" for the root), configured by fairness
// options (weight, min and max share, the ordering among its children).
func (s *Scheduler) AddQueue(parent, id string, opts ...fairness.Option) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.state.AddQueue(parent, id, opts...); err != nil {
		return err
	}
	return nil
}

// SubmitJob adds a job to its queue. It fails on an empty or duplicate ID, an unknown
// queue, a negative weight or submission time.
func (s *Scheduler) SubmitJob(j Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.state.AddJob(j); err != nil {
		return err
	}
	return nil
}

// Submit adds tasks, all or none: it fails, adding nothing, when any task has an empty
// or duplicate ID, an unknown job, an invalid request, key, profile or GPU demand
// (Task.GPU), an unknown class (Task.Class), a negative time or SLO, or an SLO on a
// batch task, or when it would leave a gang job (Job.MinMember)
// that has not run yet with fewer tasks than its MinMember. It refuses a task that
// says nothing of what it needs (ErrNoDemand: no request, profile, GPU demand or key
// to learn from) and, unless WithUnresolvableAccepted, one that no node could ever
// hold (ErrUnresolvable, with an *UnresolvableError saying what).
func (s *Scheduler) Submit(tasks ...Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.state.Check(tasks...); err != nil {
		return err
	}
	for i := range tasks {
		if err := s.admissible(&tasks[i]); err != nil {
			return err
		}
	}
	if err := s.state.Submit(tasks...); err != nil {
		return err
	}
	s.scale.arrived(tasks)
	return nil
}

// learns reports whether tasks of key may be placed by a learned profile.
func (s *Scheduler) learns(key predict.Key) bool {
	return s.cfg.predict && key.Logic != ""
}

// admissible refuses task t when it declares no demand (ErrNoDemand) or, unless
// WithUnresolvableAccepted, when no node could hold it even empty: the
// non-compressible part of its declared profile's peak, or of its request when it is
// placed by its request (no key to learn from), with its GPU demand
// (cluster.State.CouldHold; ErrUnresolvable). With no node yet, it accepts.
func (s *Scheduler) admissible(t *Task) error {
	declared := t.Profile.Len() > 0
	if !declared && t.Request.IsZero() && t.GPU.IsZero() && !s.learns(t.Key) {
		key := "no key to learn one from"
		if t.Key.Logic != "" {
			key = "a key but prediction off (WithPrediction(false))"
		}
		return fmt.Errorf("finegrain: task %q: no request, no profile, no GPU demand and %s: %w", t.ID, key, ErrNoDemand)
	}
	if s.cfg.acceptUnres || s.state.NumNodes() == 0 {
		return nil
	}
	var peak resource.Tuple
	switch {
	case declared:
		peak = t.Profile.Peak()
	case !s.learns(t.Key):
		peak = t.Request
	}
	if s.state.CouldHold(peak, t.GPU) {
		return nil
	}
	need := peak.Only(s.schema.NonCompressible())
	return &UnresolvableError{Task: t.ID, Need: need, GPU: t.GPU, Largest: s.state.Largest(), schema: s.schema}
}

// Heartbeat is pull mode, FGM's Algorithm 1: node id reports room at now, and the
// scheduler returns the tasks to start there. The Pass plugins offer the node in
// turn — by default plugins.DelayScheduling (jobs in fairness order, delay scheduling
// for locality; see its doc for the steps), or plugins.PreReleaseList, then
// plugins.Preemption and plugins.Booking when configured, then plugins.Speculation —
// and every task they choose goes through the same cycle: Demand
// (plugins.Prediction), PreFilter (plugins.QueueAdmission, plugins.Gang), Filter
// (plugins.ModeGate, plugins.StageMatch, plugins.QoS), Reserve, Permit (plugins.Gang),
// commit. The Decision says what started, why the heartbeat ended, and which jobs were
// passed over and why. A task a Permit plugin kept waiting and allowed during the
// heartbeat (a gang's members) comes back in it too, with its own node, as does a
// booking on another node (its Start in the future); the tasks evicted to make room
// come with the assignments they made room for (Assignment.Evicted), or in
// Decision.Evicted. When a pass fails (time going backwards under delay scheduling),
// the error comes with the Decision so far.
func (s *Scheduler) Heartbeat(id string, now time.Duration) (Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.state.Node(id)
	if !ok {
		return Decision{}, fmt.Errorf("finegrain: heartbeat of node %q: %w", id, ErrUnknownNode)
	}
	at, err := s.eventTime("heartbeat of node", id, now)
	if err != nil {
		return Decision{}, err
	}
	return s.fw.Heartbeat(n, at)
}

// Place is push mode: task id is pending at now; the scheduler chooses a node for it,
// reserves it there and returns the assignment — the way a Kubernetes-style
// orchestrator asks a scheduler to bind a pod. Nodes are visited from the roomiest
// down by a free-capacity index and filtered as in pull mode; the first WithCandidates
// that pass (16 by default) are scored (WithScorer) and the best wins. A task that
// fits nowhere now may evict others (WithPreemption: Assignment.Evicted lists them, to
// stop) or be booked where it can start earliest (WithFutureStart, WithBooking:
// Assignment.Start is then in the future, and the task is Booked until then);
// framework.Framework.Place has the steps. Otherwise Place fails with a
// *PlacementError saying why, and the task stays pending — or, for a member of a gang
// (Job.MinMember) that waits for the rest, Reserved, with Reason PermitWaiting: the
// members' assignments come from Permitted once the gang can run.
func (s *Scheduler) Place(id string, now time.Duration) (Assignment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.pending(id, "placement of task", now)
	if err != nil {
		return Assignment{}, err
	}
	return s.fw.Place(t, at)
}

// Filter reports whether pending task id could be placed on node nodeID from at, and
// if not why (the status and the match verdict), without reserving anything: the
// question a host scheduler's Filter plugin asks for each node. Calls run
// concurrently with each other.
func (s *Scheduler) Filter(id, nodeID string, at time.Duration) (Status, match.Result, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, n, err := s.probe(id, nodeID, at)
	if err != nil {
		return Status{}, match.Result{}, err
	}
	st, r := s.fw.Filter(t, n, at)
	return st, r, nil
}

// Score is node nodeID's score for pending task id from at, over the Score plugins
// (WithScorer by default), without reserving anything: the question a host
// scheduler's Score plugin asks for each node. When the task does not pass the
// filters there, the score is 0 and the status says why. Calls run concurrently with
// each other.
func (s *Scheduler) Score(id, nodeID string, at time.Duration) (float64, Status, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, n, err := s.probe(id, nodeID, at)
	if err != nil {
		return 0, Status{}, err
	}
	x, st := s.fw.Score(t, n, at)
	return x, st, nil
}

func (s *Scheduler) probe(id, nodeID string, at time.Duration) (*cluster.TaskInfo, *cluster.NodeInfo, error) {
	t, err := s.asked("probe of task", id, at)
	if err != nil {
		return nil, nil, err
	}
	n, ok := s.state.Node(nodeID)
	if !ok {
		return nil, nil, fmt.Errorf("finegrain: probe of task %q: node %q: %w", id, nodeID, ErrUnknownNode)
	}
	return t, n, nil
}

// asked returns pending task id for a question asked about it at at (what, for the
// error: "probe of task"). A question changes nothing: unlike an event, it does not
// move the clock.
func (s *Scheduler) asked(what, id string, at time.Duration) (*cluster.TaskInfo, error) {
	if err := checkTime(what, id, at); err != nil {
		return nil, err
	}
	t, err := s.task(id)
	if err != nil {
		return nil, err
	}
	if t.State() != Pending {
		return nil, fmt.Errorf("finegrain: %s %q: it is %v: %w", what, id, t.State(), ErrState)
	}
	return t, nil
}

// ExpirePermits lets time pass for the tasks a Permit plugin keeps waiting (gang
// members, Reserved): those whose wait is over at now are rolled back and pending
// again, as at the start of every Heartbeat and Place. A push-mode embedder calls it
// now and then when it has nothing to place, so that a gang that cannot gather lets
// go of what it holds.
func (s *Scheduler) ExpirePermits(now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.eventTime("expiry of permit waits", "", now)
	if err != nil {
		return err
	}
	s.fw.Advance(at)
	s.fw.Expire(at)
	return nil
}

// Permitted returns, and forgets, the assignments of tasks a Permit plugin kept
// waiting and allowed during a Place (in pull mode they come back in the Decision).
func (s *Scheduler) Permitted() []Assignment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fw.TakePermitted()
}

// Cancel withdraws a pending, reserved, booked or running task; a placed task's
// resources return to its node.
func (s *Scheduler) Cancel(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.task(id)
	if err != nil {
		return err
	}
	at, err := s.eventTime("cancellation of task", id, now)
	if err != nil {
		return err
	}
	if err := s.state.Cancel(t, at); err != nil {
		return err
	}
	s.fw.Advance(at)
	if s.cfg.logger != nil { // the arguments would escape, and allocate, even unlogged
		s.logDebug("task cancelled", "task", id, "at", at)
	}
	return nil
}

// Started records that a running task actually started at now (it may differ from the
// start the scheduler planned). Optional; it sharpens the completion times the
// adjuster's degradation test sees.
func (s *Scheduler) Started(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.running(id, "start of task", now)
	if err != nil {
		return err
	}
	if err := s.state.Started(t, at); err != nil {
		return err
	}
	s.fw.Advance(at)
	return nil
}

// Progress reports a running task's progress in [0, 1] at now (docs/methods.md §8, eq.
// 3.1): the input of the progress model that speculation (Runtime) and the
// pre-release list read. Progress may not go down, nor time backwards.
func (s *Scheduler) Progress(id string, progress float64, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.running(id, "progress report of task", now)
	if err != nil {
		return err
	}
	if err := s.state.ReportProgress(t, progress, at); err != nil {
		return err
	}
	s.fw.Advance(at)
	return nil
}

// Finished records that a running task finished at now: its resources return to its
// node, and obs, when not nil, what it was seen to use — the usage series its node
// agent sampled (obs.Series), which the estimator divides into stages, or a ready
// profile (obs.Profile) — feeds the estimator under the task's key. An observation the
// estimator rejects, or an implausible one (usage beyond the capacity of the node the
// task ran on: ErrImplausible), is an error, and then nothing changes: call again
// without it to finish the task anyway.
func (s *Scheduler) Finished(id string, now time.Duration, obs *predict.Observation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.running(id, "finish of task", now)
	if err != nil {
		return err
	}
	if at < t.Start() {
		return fmt.Errorf("finegrain: finish of task %q at %v before its start %v: %w", id, at, t.Start(), ErrState)
	}
	if key := t.Key(); obs != nil && key.Logic != "" {
		if err := s.plausible(t, id, "finish", obs); err != nil {
			return err
		}
		if err := s.estimator.Observe(key, *obs); err != nil {
			return fmt.Errorf("finegrain: finish of task %q: observation rejected: %w", id, err)
		}
	}
	node := t.Node().ID()
	if t.Planned() > 0 {
		_ = s.adjuster.ObserveCompletion(node, t.Planned(), at-t.Start())
	}
	if err := s.state.Finish(t, at); err != nil {
		return err
	}
	s.fw.Advance(at)
	if s.cfg.logger != nil { // the arguments would escape, and allocate, even unlogged
		s.logDebug("task finished", "task", id, "node", node, "at", at)
	}
	return nil
}

// ReportRunning feeds the estimator what running task id has used so far, at now:
// obs is the usage series its node agent has sampled since the task started
// (obs.Series, End = now) or the stages it has run (obs.Profile). When the estimator
// learns from running tasks (predict.RunningObserver, as predict.SimilarTask does
// unless predict.WithoutRunning), the task's key becomes predictable before any of its
// tasks has finished: its pending siblings are placed on what it uses rather than on
// their requests (docs/methods.md §2, "learning from running tasks"). Report a task
// now and then (when its samples have doubled, say), not at every sample: the
// estimator divides every report into stages; a task without a key, or an estimator
// that does not learn from running tasks, teaches it nothing. The report's peak is
// kept as the task's measured peak (cluster.TaskInfo.UsedPeak), which the scale-up
// rounds' resource-redundant test reads (ScaleUp). A report the estimator rejects, or
// an implausible one (usage beyond the capacity of the node the task runs on:
// ErrImplausible), is an error and changes nothing; so is a task that is not running
// (ErrState, ErrUnknownTask).
func (s *Scheduler) ReportRunning(id string, now time.Duration, obs predict.Observation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.running(id, "running report of task", now)
	if err != nil {
		return err
	}
	if err := s.plausible(t, id, "running report", &obs); err != nil {
		return err
	}
	peak := obs.Profile.Peak()
	if obs.Profile.Len() == 0 {
		peak = obs.Series.Peak()
	}
	if err := s.schema.Validate(peak); err != nil {
		return fmt.Errorf("finegrain: running report of task %q: %w: %w", id, ErrInvalid, err)
	}
	ro, ok := s.estimator.(predict.RunningObserver)
	if key := t.Key(); ok && key.Logic != "" {
		if err := ro.ObserveRunning(key, obs); err != nil {
			return fmt.Errorf("finegrain: running report of task %q: observation rejected: %w", id, err)
		}
	}
	_ = s.state.ObserveUsed(t, peak) // running, and validated above
	s.fw.Advance(at)
	return nil
}

// plausible refuses an observation of task t (named id by the caller), reported at an
// event ("finish", "running report"), that no node like the one t runs on could have
// made (predict.Observation.Plausible): the estimator would learn a demand no node
// holds.
func (s *Scheduler) plausible(t *cluster.TaskInfo, id, event string, obs *predict.Observation) error {
	if err := obs.Plausible(s.schema, t.Node().Capacity()); err != nil {
		return fmt.Errorf("finegrain: %s of task %q on node %q: %w", event, id, t.Node().ID(), err)
	}
	return nil
}

// Failed records that a running task was lost (killed, out of memory, its container
// died) at now: its resources return to its node and it is pending again.
func (s *Scheduler) Failed(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.running(id, "failure of task", now)
	if err != nil {
		return err
	}
	if err := s.state.Fail(t); err != nil {
		return err
	}
	s.fw.Advance(at)
	if s.cfg.logger != nil { // the arguments would escape, and allocate, even unlogged
		s.logDebug("task failed", "task", id, "at", at)
	}
	return nil
}

func (s *Scheduler) task(id string) (*cluster.TaskInfo, error) {
	t, ok := s.state.Task(id)
	if !ok {
		return nil, fmt.Errorf("finegrain: task %q: %w", id, ErrUnknownTask)
	}
	return t, nil
}

// running returns the running task id for an event at now, and the event's time
// (eventTime), or the error saying why the event does not apply. The event's time says
// whether a booked task has started: when its start has come by then, the bookings
// due by then start (cluster.State.StartDue) before the task's state is checked — the
// one change an event call makes even when it is then refused, which only records that
// time has passed.
func (s *Scheduler) running(id, event string, now time.Duration) (*cluster.TaskInfo, time.Duration, error) {
	t, at, err := s.eventOn(id, event, now, Running)
	if err != nil {
		return nil, 0, err
	}
	if t.State() == Booked && t.Start() <= at {
		s.state.StartDue(at)
	}
	return inState(t, at, event, Running)
}

// pending returns the pending task id for an event at now, and the event's time.
func (s *Scheduler) pending(id, event string, now time.Duration) (*cluster.TaskInfo, time.Duration, error) {
	return s.held(id, event, now, Pending)
}

// held returns task id, in state want (not Running: see running), for an event at now,
// and the event's time. It changes nothing.
func (s *Scheduler) held(id, event string, now time.Duration, want TaskState) (*cluster.TaskInfo, time.Duration, error) {
	t, at, err := s.eventOn(id, event, now, want)
	if err != nil {
		return nil, 0, err
	}
	return inState(t, at, event, want)
}

// eventOn returns task id for an event at now, and the event's time: an error unless
// the task is in state want, or Booked (which running may start), and the time is
// valid. It changes nothing.
func (s *Scheduler) eventOn(id, event string, now time.Duration, want TaskState) (*cluster.TaskInfo, time.Duration, error) {
	t, err := s.task(id)
	if err != nil {
		return nil, 0, err
	}
	if st := t.State(); st != want && st != Booked {
		return nil, 0, stateErr(event, id, st)
	}
	at, err := s.eventTime(event, id, now)
	if err != nil {
		return nil, 0, err
	}
	return t, at, nil
}

// inState returns t and at when t is in state want, else the error of an event on it.
func inState(t *cluster.TaskInfo, at time.Duration, event string, want TaskState) (*cluster.TaskInfo, time.Duration, error) {
	if st := t.State(); st != want {
		return nil, 0, stateErr(event, t.ID(), st)
	}
	return t, at, nil
}

// stateErr is the error of an event on task id in state st, to which it does not apply.
func stateErr(event, id string, st TaskState) error {
	return fmt.Errorf("finegrain: %s %q: it is %v: %w", event, id, st, ErrState)
}

// TaskState returns a task's state, or false for an unknown task: one never submitted, or
// a finished or cancelled task the scheduler has forgotten (WithRetention).
func (s *Scheduler) TaskState(id string) (TaskState, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.state.Task(id)
	if !ok {
		return 0, false
	}
	return t.State(), true
}

// Counts returns how many tasks are pending, running, finished and cancelled; the last
// two count every task that ever ended, forgotten ones included (WithRetention). Tasks
// a Permit plugin keeps Reserved, and tasks Booked for a future start, are counted by
// Count(Reserved) and Count(Booked), not here.
func (s *Scheduler) Counts() (pending, running, finished, cancelled int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state.Count(Pending), s.state.Count(Running), s.state.Count(Finished), s.state.Count(Cancelled)
}

// Count returns how many tasks are in state st (for Finished and Cancelled, every
// task that ever ended, as Counts).
func (s *Scheduler) Count(st TaskState) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state.Count(st)
}

// NodeFree returns a node's free resources at t, as its timeline holds them.
func (s *Scheduler) NodeFree(id string, t time.Duration) (resource.Tuple, error) {
	if err := checkTime("free resources of node", id, t); err != nil {
		return resource.Tuple{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, ok := s.state.Node(id)
	if !ok {
		return resource.Tuple{}, fmt.Errorf("finegrain: node %q: %w", id, ErrUnknownNode)
	}
	return n.Timeline().FreeAt(t), nil
}

// NodeDevices returns a copy of a node's GPU devices as the scheduler holds them:
// each device's free share, after the tasks placed there and the external shares
// (SetExternalDevices).
func (s *Scheduler) NodeDevices(id string) (gpu.Devices, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, ok := s.state.Node(id)
	if !ok {
		return gpu.Devices{}, fmt.Errorf("finegrain: node %q: %w", id, ErrUnknownNode)
	}
	return n.Devices().Clone(), nil
}

// FreeSegments returns a node's free resources over [from, to) as its timeline holds
// them: what is left after every reservation, segment by segment.
func (s *Scheduler) FreeSegments(id string, from, to time.Duration) ([]stage.Segment, error) {
	if err := checkTime("free segments of node", id, from); err != nil {
		return nil, err
	}
	if to < from {
		return nil, fmt.Errorf("finegrain: free segments of node %q over [%v, %v): the end is before the start: %w", id, from, to, ErrInvalid)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, ok := s.state.Node(id)
	if !ok {
		return nil, fmt.Errorf("finegrain: node %q: %w", id, ErrUnknownNode)
	}
	return n.Timeline().AppendSegments(nil, from, to), nil
}

// SetExternalLoad tells the scheduler how much of node id is used, from now on, by
// work it did not place — other applications sharing the server, the FGM paper's
// "cloud" environment, as a node agent measures it. The scheduler forecasts their load
// from the reports (WithExternalLoadForecast; by default the latest report is the
// forecast) and holds the forecast on the node's timeline from now until the next
// report replaces it, so matching sees only what is really left. Where the tasks
// already reserved there leave less than the forecast, the scheduler holds what is
// free (the node is over-committed in fact; the adjuster sees it in the usage
// reports); the amount held is returned. A forecast of zero clears the hold. A load
// that is invalid, or a report earlier than the node's previous one, is an error and
// changes nothing.
func (s *Scheduler) SetExternalLoad(id string, now time.Duration, load resource.Tuple) (resource.Tuple, error) {
	if err := s.schema.Validate(load); err != nil {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.state.Node(id)
	if !ok {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q: %w", id, ErrUnknownNode)
	}
	at, err := s.eventTime("external load of node", id, now)
	if err != nil {
		return resource.Tuple{}, err
	}
	forecast, err := s.loads.Add(id, at, load)
	if err != nil {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q: %w", id, err)
	}
	s.fw.Advance(at)
	held, err := s.state.SetExternalLoad(n, at, forecast)
	if err != nil {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q: %w", id, err)
	}
	return held, nil
}

// SetExternalDevices tells the scheduler how much of each of node id's GPU devices
// is used, from now on, by work it did not place — pods of another scheduler, or
// placed before this one started, whose devices the orchestrator knows: used[i]
// thousandths (0 to gpu.Milli) of device i. They are held until the next call
// replaces them, so that no task is given a share of a device beyond its whole.
// Where the tasks placed there leave less of a device free, what is free is held (the
// device is over-committed in fact), and more of it as they give the device back;
// entries for devices the node does not have are held once it has them (UpdateNode).
// It returns what is held of each device now. nil clears the holds. It fails,
// changing nothing, on an unknown node, an amount out of range or a time going
// backwards.
func (s *Scheduler) SetExternalDevices(id string, now time.Duration, used []int64) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.state.Node(id)
	if !ok {
		return nil, fmt.Errorf("finegrain: external devices of node %q: %w", id, ErrUnknownNode)
	}
	at, err := s.eventTime("external devices of node", id, now)
	if err != nil {
		return nil, err
	}
	held, err := s.state.SetExternalDevices(n, used)
	if err != nil {
		return nil, fmt.Errorf("finegrain: %w", err)
	}
	s.fw.Advance(at)
	return held, nil
}

// ReportUsage is a node's periodic usage report: the window of intervals of actual
// usage against what was predicted (reserved) and what was idle. The scheduler's
// policy.Monitor computes the window's prediction conformity (eq. 16), records it, and
// lets the adjuster re-decide the node's mode (Alg. 3); the change is returned. A Change
// with Recycle set asks the embedder to relieve the node: Recycle moves tasks off it,
// kill-free.
func (s *Scheduler) ReportUsage(id string, now time.Duration, window []predict.Interval) (policy.Change, error) {
	s.mu.Lock() // held throughout, so that the node cannot be removed half-way
	defer s.mu.Unlock()
	n, ok := s.state.Node(id)
	if !ok {
		return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: %w", id, ErrUnknownNode)
	}
	at, err := s.eventTime("usage report of node", id, now)
	if err != nil {
		return policy.Change{}, err
	}
	capacity := n.Capacity()
	for i, in := range window {
		if err := s.schema.Validate(in.Actual); err != nil {
			return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: window[%d] actual usage: %w", id, i, err)
		}
		if !capacity.Covers(in.Actual) {
			return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: window[%d] actual usage %s exceeds the capacity %s: %w",
				id, i, s.schema.Format(in.Actual), s.schema.Format(capacity), ErrInvalid)
		}
	}
	c, err := s.monitor.Report(id, capacity, window)
	if err != nil {
		return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: %w", id, err)
	}
	s.fw.Advance(at)
	if c.From != c.To {
		s.logDebug("node mode changed", "node", id, "from", c.From, "to", c.To, "score", c.Score, "at", at)
	}
	if c.Recycle {
		s.scale.degraded[id] = c.Stretch // for Recycle
	}
	if s.cfg.netting {
		s.netExternalLoad(n, at, window)
	}
	return c, nil
}

// netExternalLoad holds node n's external load forecast net of the slack its tasks
// leave on the compressible dimensions: what they reserve at now less what they used
// over window (its actual usage less the forecast), per dimension
// (WithExternalLoadNetting). The window was validated.
func (s *Scheduler) netExternalLoad(n *cluster.NodeInfo, now time.Duration, window []predict.Interval) {
	forecast, ok := s.loads.Forecast(n.ID())
	if !ok || forecast.IsZero() {
		return
	}
	var total time.Duration
	var sum resource.Vector
	for _, in := range window {
		total += in.Duration
		for k := 0; k < s.schema.Len(); k++ {
			sum[k] += float64(in.Actual[k]) * in.Duration.Seconds()
		}
	}
	if total <= 0 {
		return
	}
	reserved := n.Capacity().Sub(n.Timeline().FreeAt(now)).Sub(n.ExternalHeld())
	net := forecast
	comp := s.schema.Compressible()
	for k := 0; k < s.schema.Len(); k++ {
		if !comp.Has(k) {
			continue
		}
		used := max(0, int64(sum[k]/total.Seconds())-forecast[k])
		net[k] = max(0, forecast[k]-max(0, reserved[k]-used))
	}
	// The load is valid (the forecast of valid reports) and n is held: this cannot fail.
	_, _ = s.state.SetExternalLoad(n, now, net)
}

func (s *Scheduler) logDebug(msg string, args ...any) {
	if s.cfg.logger != nil {
		s.cfg.logger.Debug(msg, args...)
	}
}
