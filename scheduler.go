package finegrain

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/google/btree"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Scheduler is the reference scheduler: FGM's Algorithm 1 (SPEC §3) wired from the
// library's blocks. It keeps the cluster's state — nodes and their timelines, queues,
// jobs, tasks — and places tasks in two modes:
//
//   - pull (Heartbeat): a node reports room; the scheduler picks tasks to start there
//     (Alg. 1, as YARN's node heartbeats drive its schedulers);
//   - push (Place): a task is pending; the scheduler picks the best node for it (as a
//     Kubernetes-style orchestrator asks a scheduler to bind a pod).
//
// The parts are swappable with options: the estimator (predict.Estimator), the
// ordering (fairness.Policy), the QoS check (match.QoSCheck), the node scorer
// (match.Scorer), the adjuster's settings (policy.Option). The defaults are the
// paper's: DRF, prediction from similar tasks, fine-grained matching with at most 10%
// compression, the eq. 15 deadline check.
//
// Every submitted task is, at any moment, exactly one of Pending, Running, Finished or
// Cancelled; a non-compressible dimension is never reserved beyond a node's capacity.
// Calls that fail change nothing. A Scheduler is safe for concurrent use; calls are
// serialised.
type Scheduler struct {
	mu     sync.Mutex
	schema *resource.Schema
	cfg    config

	nodes    map[string]*node
	byFree   *btree.BTreeG[*node] // push index: nodes by free amount of keyDim, descending
	keyDim   int
	capacity resource.Tuple // the cluster's total

	jobs     map[string]*job
	busyJobs map[string]*job          // the jobs with running tasks
	classes  map[classID]*demandClass // every pending task's demand class (classes.go)
	tasks    map[string]*task
	count    [Cancelled + 1]int

	tree        *fairness.Tree
	pending     *fairness.Pending
	delay       *fairness.Delay
	conformity  *predict.ConformityLog
	adjuster    *policy.Adjuster
	compression *policy.Compression
	estimator   predict.Estimator
	tracker     *predict.ProgressTracker

	clock     time.Duration        // the latest time the scheduler has been told
	refreshed time.Duration        // when the push index was last refreshed
	beat      uint64               // heartbeat generation, marks jobs passed over in this pass
	delayTick time.Duration        // when delay scheduling's waits last grew (DelayUpdate); -DelayUpdate before the first heartbeat
	started   []*task              // tasks started in the current pass, for the tree
	refused   map[classID]struct{} // classes that did not fit the node in this heartbeat
	hasMax    bool                 // some queue has a max share
	keepTurn  bool                 // the ordering keeps a job first as it starts tasks (FIFO)
	deadline  match.DeadlineCheck
}

type node struct {
	spec     Node
	tl       *stage.Timeline
	running  map[string]*task
	key      int64        // free amount of keyDim when indexed
	external stage.Handle // the reservation holding load the scheduler did not place
}

type job struct {
	spec     Job
	passed   uint64                   // the heartbeat generation in which the job was passed over
	classes  []demandClass            // what its pending tasks ask for (classes.go)
	classIdx map[classID]int          // index of each class in classes
	running  map[string]*task         // its running tasks (not their backups)
	progress *predict.ProgressTracker // its tasks' progress, with speculation (speculation.go)
}

type task struct {
	spec    Task
	state   TaskState
	request resource.Tuple // what fairness counts as the task's demand
	usage   resource.Tuple // what fairness counts as held while running
	node    *node
	handle  stage.Handle
	start   time.Duration
	profile stage.Profile // what is reserved on the node
	planned time.Duration // predicted duration, for degradation (0 when not predicted)
	// reqProfile caches the request held for the declared duration (see requestProfile).
	reqProfile stage.Profile
	// Speculation (speculation.go): a running task's backup attempt, a backup's task,
	// and the nodes where the task's backups failed.
	backup, backupOf *task
	failedOn         []string
}

// New returns a scheduler for resources described by schema, configured by opts.
func New(schema *resource.Schema, opts ...Option) (*Scheduler, error) {
	if schema == nil {
		return nil, fmt.Errorf("finegrain: nil schema: %w", resource.ErrSchemaMismatch)
	}
	cfg := config{
		predict:    true,
		ordering:   fairness.DRF{},
		limit:      resource.DefaultCompressionLimit,
		penalty:    policy.DefaultPenalty,
		window:     5,
		useDelay:   true,
		scorer:     match.LeastAllocated{},
		candidates: 16,
		holdTail:   true,
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Scheduler{
		schema:    schema,
		cfg:       cfg,
		nodes:     make(map[string]*node),
		refused:   make(map[classID]struct{}),
		jobs:      make(map[string]*job),
		busyJobs:  make(map[string]*job),
		delayTick: -DelayUpdate,
		classes:   make(map[classID]*demandClass),
		tasks:     make(map[string]*task),
		keyDim:    firstNonCompressible(schema),
	}
	s.keepTurn = keepsTurn(cfg.ordering, schema)
	s.byFree = btree.NewG(16, func(a, b *node) bool {
		if a.key != b.key {
			return a.key > b.key
		}
		return a.spec.ID < b.spec.ID
	})
	var err error
	if s.tree, err = fairness.NewTree(schema, resource.Tuple{}, fairness.WithPolicy(cfg.ordering)); err != nil {
		return nil, fmt.Errorf("finegrain: %w", err)
	}
	s.pending = fairness.NewPending()
	if cfg.useDelay {
		if s.delay, err = fairness.NewDelay(cfg.delay...); err != nil {
			return nil, fmt.Errorf("finegrain: delay scheduling: %w", err)
		}
	}
	if s.conformity, err = predict.NewConformityLog(cfg.window); err != nil {
		return nil, fmt.Errorf("finegrain: %w", err)
	}
	if s.adjuster, err = policy.NewAdjuster(schema, s.conformity, cfg.adjust...); err != nil {
		return nil, fmt.Errorf("finegrain: adjuster: %w", err)
	}
	limits := []policy.CompressionOption{policy.WithLimit(cfg.limit), policy.WithPenalty(cfg.penalty)}
	if s.compression, err = policy.NewCompression(schema, s.adjuster, limits...); err != nil {
		return nil, fmt.Errorf("finegrain: compression: %w", err)
	}
	if !cfg.hasIh {
		cfg.ihConform = resource.Uniform(schema.All(), 0.1)
	}
	if err := schema.ValidateRatios(cfg.ihConform, 1, false); err != nil {
		return nil, fmt.Errorf("finegrain: conformity idle threshold: %w: %w", ErrInvalid, err)
	}
	s.cfg.ihConform = cfg.ihConform
	s.estimator = cfg.estimator
	if s.estimator == nil {
		if s.estimator, err = predict.NewSimilarTask(schema); err != nil {
			return nil, fmt.Errorf("finegrain: estimator: %w", err)
		}
	}
	if s.tracker, err = predict.NewProgressTracker(); err != nil {
		return nil, fmt.Errorf("finegrain: progress tracker: %w", err)
	}
	s.deadline = match.DeadlineCheck{Running: s.runningWithDeadlines}
	if !cfg.hasQoS {
		s.cfg.qos = s.deadline
	}
	return s, nil
}

// firstNonCompressible is the dimension the push index sorts nodes by: a task can
// only fit where this much of it is free, compression or not. Without one, slot 0.
func firstNonCompressible(schema *resource.Schema) int {
	for k := 0; k < schema.Len(); k++ {
		if !schema.Dim(k).Compressible {
			return k
		}
	}
	return 0
}

// Schema is the schema of every amount the scheduler handles.
func (s *Scheduler) Schema() *resource.Schema { return s.schema }

// Estimator is the estimator the scheduler predicts with and feeds.
func (s *Scheduler) Estimator() predict.Estimator { return s.estimator }

// Adjuster is the per-server policy adjuster, for reading or setting modes.
func (s *Scheduler) Adjuster() *policy.Adjuster { return s.adjuster }

// AddNode adds a server. It fails on an empty or duplicate ID or an invalid capacity.
func (s *Scheduler) AddNode(n Node) error {
	if n.ID == "" {
		return fmt.Errorf("finegrain: node ID is empty: %w", ErrInvalid)
	}
	tl, err := stage.NewTimeline(s.schema, n.Capacity)
	if err != nil {
		return fmt.Errorf("finegrain: node %q: %w", n.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.nodes[n.ID]; ok {
		return fmt.Errorf("finegrain: node %q: %w", n.ID, ErrDuplicate)
	}
	total := s.capacity.Add(n.Capacity)
	if err := s.tree.SetCapacity(total); err != nil {
		return fmt.Errorf("finegrain: node %q: %w", n.ID, err)
	}
	if err := s.adjuster.AddServer(n.ID, n.Capacity); err != nil {
		_ = s.tree.SetCapacity(s.capacity)
		return fmt.Errorf("finegrain: node %q: %w", n.ID, err)
	}
	s.capacity = total
	nd := &node{spec: n, tl: tl, running: make(map[string]*task)}
	s.nodes[n.ID] = nd
	s.index(nd)
	return nil
}

// RemoveNode removes a server (it failed or left) at now. Its running tasks return to
// pending; their IDs are returned in ID order. Backup attempts on the node end
// (WithSpeculation), as do the backups of the tasks returned to pending.
func (s *Scheduler) RemoveNode(id string, now time.Duration) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[id]
	if !ok {
		return nil, fmt.Errorf("finegrain: remove node %q: %w", id, ErrUnknownNode)
	}
	ids := make([]string, 0, len(n.running))
	var backups []*task
	for tid, t := range n.running {
		if t.backupOf != nil {
			backups = append(backups, t)
			continue
		}
		ids = append(ids, tid)
	}
	sort.Strings(ids)
	for _, b := range backups {
		s.dropBackup(b.backupOf, true)
	}
	for _, tid := range ids {
		s.requeue(s.tasks[tid])
	}
	s.byFree.Delete(n)
	delete(s.nodes, id)
	s.capacity = s.capacity.Sub(n.spec.Capacity)
	_ = s.tree.SetCapacity(s.capacity)
	_ = s.adjuster.RemoveServer(id)
	s.conformity.Forget(id)
	s.logDebug("node removed", "node", id, "requeued", len(ids), "at", now)
	return ids, nil
}

// AddQueue adds a queue under parent ("" for the root), configured by fairness
// options (weight, min and max share, the ordering among its children).
func (s *Scheduler) AddQueue(parent, id string, opts ...fairness.Option) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.tree.AddQueue(parent, id, opts...); err != nil {
		return fmt.Errorf("finegrain: %w", err)
	}
	if e, err := s.tree.Queue(id); err == nil && e.Share.HasMax() {
		s.hasMax = true
	}
	return nil
}

// SubmitJob adds a job to its queue. It fails on an empty or duplicate ID, an unknown
// queue, a negative weight or submission time.
func (s *Scheduler) SubmitJob(j Job) error {
	if j.ID == "" {
		return fmt.Errorf("finegrain: job ID is empty: %w", ErrInvalid)
	}
	if j.Submitted < 0 || !(j.Weight >= 0) {
		return fmt.Errorf("finegrain: job %q: submitted %v, weight %v: %w", j.ID, j.Submitted, j.Weight, ErrInvalid)
	}
	w := j.Weight
	if w == 0 {
		w = 1
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.ID]; ok {
		return fmt.Errorf("finegrain: job %q: %w", j.ID, ErrDuplicate)
	}
	if err := s.tree.AddJob(j.Queue, j.ID, fairness.Weight(w), fairness.Priority(j.Priority), fairness.SubmittedAt(j.Submitted)); err != nil {
		if errors.Is(err, fairness.ErrUnknownQueue) {
			return fmt.Errorf("finegrain: job %q: %w: %w", j.ID, ErrUnknownQueue, err)
		}
		return fmt.Errorf("finegrain: job %q: %w", j.ID, err)
	}
	s.jobs[j.ID] = &job{spec: j, running: map[string]*task{}}
	return nil
}

// Submit adds tasks, all or none: it fails, adding nothing, when any task has an empty
// or duplicate ID, an unknown job, an invalid request, key or profile, or a negative
// time.
func (s *Scheduler) Submit(tasks ...Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(tasks))
	for i := range tasks {
		if err := s.validateTask(&tasks[i], seen); err != nil {
			return err
		}
	}
	for i := range tasks {
		t := &task{spec: tasks[i], state: Pending, request: tasks[i].Request}
		t.spec.Inputs = append([]string(nil), t.spec.Inputs...)
		s.tasks[t.spec.ID] = t
		s.count[Pending]++
		s.enqueue(t)
	}
	return nil
}

func (s *Scheduler) validateTask(t *Task, seen map[string]bool) error {
	switch {
	case t.ID == "":
		return fmt.Errorf("finegrain: task ID is empty: %w", ErrInvalid)
	case seen[t.ID] || s.tasks[t.ID] != nil:
		return fmt.Errorf("finegrain: task %q: %w", t.ID, ErrDuplicate)
	case s.jobs[t.Job] == nil:
		return fmt.Errorf("finegrain: task %q: job %q: %w", t.ID, t.Job, ErrUnknownJob)
	case t.Duration < 0 || t.Deadline < 0 || t.Submitted < 0:
		return fmt.Errorf("finegrain: task %q: duration %v, deadline %v, submitted %v: %w", t.ID, t.Duration, t.Deadline, t.Submitted, ErrInvalid)
	case t.Key.InputSize < 0:
		return fmt.Errorf("finegrain: task %q: key input size %d: %w", t.ID, t.Key.InputSize, ErrInvalid)
	case t.Profile.Len() > 0 && !s.schema.Equal(t.Profile.Schema()):
		return fmt.Errorf("finegrain: task %q: profile: %w", t.ID, resource.ErrSchemaMismatch)
	}
	if err := s.schema.Validate(t.Request); err != nil {
		return fmt.Errorf("finegrain: task %q: request: %w", t.ID, err)
	}
	seen[t.ID] = true
	return nil
}

// enqueue makes a task pending in the fairness tree and the locality index.
func (s *Scheduler) enqueue(t *task) {
	locs := make([]fairness.Location, 0, len(t.spec.Inputs))
	for _, id := range t.spec.Inputs {
		rack := ""
		if n := s.nodes[id]; n != nil {
			rack = n.spec.Rack
		}
		locs = append(locs, fairness.Location{Node: id, Rack: rack})
	}
	// Both calls only fail on input validated above.
	_ = s.pending.Add(fairness.Task{ID: t.spec.ID, Job: t.spec.Job, Priority: t.spec.Priority, Submitted: t.spec.Submitted, Locations: locs})
	_ = s.tree.AddPending(t.spec.Job, 1, t.request)
	s.addPending(s.jobs[t.spec.Job], t)
}

// Cancel withdraws a pending or running task; a running task's resources return to its
// node.
func (s *Scheduler) Cancel(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.task(id)
	if err != nil {
		return err
	}
	switch t.state {
	case Pending:
		_ = s.pending.Remove(id)
		_ = s.tree.RemovePending(t.spec.Job, 1, t.request)
		s.removePending(s.jobs[t.spec.Job], t)
	case Running:
		if t.backupOf != nil {
			s.dropBackup(t.backupOf, false)
			s.logDebug("backup cancelled", "task", id, "at", now)
			return nil
		}
		s.release(t)
	default:
		return fmt.Errorf("finegrain: cancel task %q: it is %v: %w", id, t.state, ErrState)
	}
	s.setState(t, Cancelled)
	s.logDebug("task cancelled", "task", id, "at", now)
	return nil
}

// Started records that a running task actually started at now (it may differ from the
// start the scheduler planned). Optional; it sharpens the completion times the
// adjuster's degradation test sees.
func (s *Scheduler) Started(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.running(id, "start", now)
	if err != nil {
		return err
	}
	t.start = now
	if t.backupOf != nil {
		return nil
	}
	// Restart the progress clock at the actual start.
	s.progressAbandon(t)
	s.progressStart(t, t.node.spec.ID, now)
	return nil
}

// Finished records that a running task finished at now: its resources return to its
// node, and obs, when not nil, what it was seen to use, feeds the estimator under the
// task's key. An observation the estimator rejects is an error, and then nothing
// changes: call again without it to finish the task anyway.
func (s *Scheduler) Finished(id string, now time.Duration, obs *predict.Observation) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.running(id, "finish", now)
	if err != nil {
		return err
	}
	if now < t.start {
		return fmt.Errorf("finegrain: finish of task %q at %v before its start %v: %w", id, now, t.start, ErrState)
	}
	if obs != nil && t.spec.Key.Logic != "" {
		if err := s.estimator.Observe(t.spec.Key, *obs); err != nil {
			return fmt.Errorf("finegrain: finish of task %q: observation rejected: %w", id, err)
		}
	}
	n := t.node
	if t.planned > 0 {
		_ = s.adjuster.ObserveCompletion(n.spec.ID, t.planned, now-t.start)
	}
	// The finished run's rate joins its node's (PRRL eq. 3.5); a task that ends the
	// instant it starts has no rate and is dropped. A backup that finishes first
	// finishes its task.
	if b := t; b.backupOf != nil {
		t = b.backupOf
		s.backupWon(t, b, now)
	} else {
		s.progressFinish(t, now)
	}
	s.release(t)
	s.setState(t, Finished)
	s.logDebug("task finished", "task", id, "node", n.spec.ID, "at", now)
	return nil
}

// Failed records that a running task was lost (killed, out of memory, its container
// died) at now: its resources return to its node and it is pending again.
func (s *Scheduler) Failed(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.running(id, "failure", now)
	if err != nil {
		return err
	}
	if t.backupOf != nil {
		s.dropBackup(t.backupOf, true)
		s.logDebug("backup failed", "task", id, "at", now)
		return nil
	}
	s.requeue(t)
	s.logDebug("task failed", "task", id, "at", now)
	return nil
}

// running returns the running task id for an event at now, or the error saying why
// the event does not apply.
func (s *Scheduler) running(id, event string, now time.Duration) (*task, error) {
	t, err := s.task(id)
	if err != nil {
		return nil, err
	}
	if t.state != Running {
		return nil, fmt.Errorf("finegrain: %s of task %q: it is %v: %w", event, id, t.state, ErrState)
	}
	if now < 0 {
		return nil, fmt.Errorf("finegrain: %s of task %q at %v: %w", event, id, now, ErrInvalid)
	}
	return t, nil
}

// State returns a task's state, or false for an unknown task.
func (s *Scheduler) State(id string) (TaskState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return 0, false
	}
	return t.state, true
}

// Counts returns how many tasks are in each state.
func (s *Scheduler) Counts() (pending, running, finished, cancelled int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count[Pending], s.count[Running], s.count[Finished], s.count[Cancelled]
}

// NodeFree returns a node's free resources at t, as its timeline holds them.
func (s *Scheduler) NodeFree(id string, t time.Duration) (resource.Tuple, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[id]
	if !ok {
		return resource.Tuple{}, fmt.Errorf("finegrain: node %q: %w", id, ErrUnknownNode)
	}
	return n.tl.FreeAt(t), nil
}

// FreeSegments returns a node's free resources over [from, to) as its timeline holds
// them: what is left after every reservation, segment by segment.
func (s *Scheduler) FreeSegments(id string, from, to time.Duration) ([]stage.Segment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[id]
	if !ok {
		return nil, fmt.Errorf("finegrain: node %q: %w", id, ErrUnknownNode)
	}
	return n.tl.AppendSegments(nil, from, to), nil
}

// SetExternalLoad tells the scheduler how much of node id is used, from now on, by
// work it did not place — other applications sharing the server, the FGM paper's
// "cloud" environment, as a node agent measures it. The load is held on the node's
// timeline from now until the next report replaces it, so matching sees only what is
// really left. Where the tasks already reserved there leave less than the load, the
// scheduler holds what is free (the node is over-committed in fact; the adjuster sees
// it in the usage reports); the amount held is returned. A zero load clears the
// report.
func (s *Scheduler) SetExternalLoad(id string, now time.Duration, load resource.Tuple) (resource.Tuple, error) {
	if err := s.schema.Validate(load); err != nil {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q: %w", id, err)
	}
	if now < 0 {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q at %v: %w", id, now, ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[id]
	if !ok {
		return resource.Tuple{}, fmt.Errorf("finegrain: external load of node %q: %w", id, ErrUnknownNode)
	}
	s.advance(now)
	if n.external != 0 {
		_ = n.tl.Release(n.external)
		n.external = 0
	}
	held := load.Min(n.tl.MinFree(now, stage.Forever).Max(resource.Tuple{}))
	if !held.IsZero() {
		p, err := stage.Constant(s.schema, held, stage.Forever)
		if err == nil {
			n.external, err = n.tl.Reserve(max(now, n.tl.Origin()), p, resource.Tuple{})
		}
		if err != nil {
			n.external, held = 0, resource.Tuple{}
		}
	}
	s.reindex(n)
	return held, nil
}

// ReportUsage is a node's periodic usage report: the window of intervals of actual
// usage against what was predicted (reserved) and what was idle. It computes the
// window's prediction conformity (eq. 16), records it, and lets the adjuster
// re-decide the node's mode (Alg. 3); the change is returned. A Change with Recycle
// set asks the embedder to reclaim or preempt the node's tasks.
func (s *Scheduler) ReportUsage(id string, now time.Duration, window []predict.Interval) (policy.Change, error) {
	s.mu.Lock()
	n, ok := s.nodes[id]
	s.mu.Unlock()
	if !ok {
		return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: %w", id, ErrUnknownNode)
	}
	f, err := predict.Conformity(s.schema, n.spec.Capacity, s.cfg.ihConform, window)
	if err != nil {
		return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: %w", id, err)
	}
	if err := s.conformity.Record(id, f); err != nil {
		return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: %w", id, err)
	}
	c, err := s.adjuster.AdjustServer(id)
	if err != nil {
		return policy.Change{}, fmt.Errorf("finegrain: usage of node %q: %w", id, err)
	}
	if c.From != c.To {
		s.logDebug("node mode changed", "node", id, "from", c.From, "to", c.To, "score", c.Score, "at", now)
	}
	return c, nil
}

func (s *Scheduler) task(id string) (*task, error) {
	t, ok := s.tasks[id]
	if !ok {
		return nil, fmt.Errorf("finegrain: task %q: %w", id, ErrUnknownTask)
	}
	return t, nil
}

func (s *Scheduler) setState(t *task, st TaskState) {
	s.count[t.state]--
	t.state = st
	s.count[st]++
}

// release returns a running task's reservation and fairness usage (and its backup's),
// and stops tracking its progress.
func (s *Scheduler) release(t *task) {
	s.dropBackup(t, false)
	s.progressAbandon(t)
	n := t.node
	_ = n.tl.Release(t.handle)
	delete(n.running, t.spec.ID)
	if j := s.jobs[t.spec.Job]; len(j.running) > 0 {
		if delete(j.running, t.spec.ID); len(j.running) == 0 {
			delete(s.busyJobs, j.spec.ID)
		}
	}
	_ = s.tree.Release(t.spec.Job, t.usage)
	t.node, t.handle, t.profile, t.planned = nil, 0, stage.Profile{}, 0
	s.reindex(n)
}

// requeue returns a running task to pending.
func (s *Scheduler) requeue(t *task) {
	s.release(t)
	s.setState(t, Pending)
	s.enqueue(t)
}

// runningWithDeadlines lists the tasks on a node that have deadlines, for the eq. 15
// check. Called with the lock held.
func (s *Scheduler) runningWithDeadlines(id string) []match.Running {
	n := s.nodes[id]
	if n == nil {
		return nil
	}
	var out []match.Running
	for _, t := range n.running {
		if t.spec.Deadline > 0 {
			out = append(out, match.Running{Task: match.Task{ID: t.spec.ID, Profile: t.profile, Deadline: t.spec.Deadline}, Start: t.start})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (s *Scheduler) logDebug(msg string, args ...any) {
	if s.cfg.logger != nil {
		s.cfg.logger.Debug(msg, args...)
	}
}
