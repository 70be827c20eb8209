package cluster

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/btree"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// State is a cluster's scheduling state. Build one with New.
type State struct {
	schema *resource.Schema

	nodes     map[string]*NodeInfo
	nodeList  []*NodeInfo             // by NodeInfo.Index; nil where a removed node was
	freeNodes []int                   // indexes of removed nodes, for reuse
	byFree    *btree.BTreeG[freeItem] // nodes by free amount of keyDim, descending (index.go)
	stale     []*NodeInfo             // nodes whose key changed since the B-tree was updated (index.go)
	due       dueHeap                 // the nodes by when their key may next change (index.go)
	touched   []*NodeInfo             // nodes changed since the last TakeTouched (view.go)
	tracking  bool                    // TakeTouched was called: changes are recorded
	overflow  bool                    // more changes than touched keeps: TakeTouched hands every node
	keyDim    int
	capacity  resource.Tuple   // the cluster's total
	shapes    shapes           // the nodes' capacities, for Holds
	gpuShapes map[gpuShape]int // the shapes of the nodes with GPUs, for HoldsTask

	jobs      map[string]*JobInfo
	jobList   []*JobInfo             // by JobInfo.Index; nil where a forgotten job was
	freeJobs  []int                  // indexes of forgotten jobs, for reuse
	busyJobs  []*JobInfo             // the jobs with running tasks, in no order (JobInfo.busyAt)
	changing  map[*TaskInfo]struct{} // the running tasks holding a resize or a move (resize.go)
	lsPending resource.Tuple         // the requests of the pending latency-sensitive tasks
	classes   map[ClassID]*Class     // every pending task's demand class (classes.go)
	slots     []int                  // class slots free for reuse
	byslot    []*Class               // the classes by slot; nil: a free slot
	nslots    int                    // class slots handed out
	serial    uint64                 // classes created
	classSets uint64                 // job class sets numbered (JobInfo.ClassSet)
	runs      uint64                 // placements made (TaskInfo.RunID)
	tasks     map[string]*TaskInfo
	count     [Booked + 1]int
	booked    *btree.BTreeG[*TaskInfo] // Booked tasks by start, then ID
	spare     []*placement             // placement records given back, for reuse (reserve.go)

	tree     *fairness.Tree
	pending  *fairness.PendingIndex[*TaskInfo] // the pending tasks' entries (TaskInfo.pe)
	oneRack  map[string][]string               // a one-rack list per rack, for the entries to share
	ordering fairness.Policy
	hasMax   bool // some queue has a max share
	hasMin   bool // some queue has a min share
	tracker  *predict.ProgressTracker
	perJob   bool // keep a progress tracker per job

	clock     time.Duration // the latest time the state has been told
	refreshed time.Duration // when the free index was last refreshed
	walking   int           // Walks under way: tree changes wait (deferred) until none is
	walkSlots []int         // the outermost Walk's batch of slots (walkBatch)
	walkSink  int           // what walkBatched's first look loaded, which nothing reads
	deferred  []treeOp
	// queuesVersion counts the changes applied to the tree (QueuesVersion); atomic,
	// so that it is read without the lock the State's owner holds.
	queuesVersion atomic.Uint64
	// changed is the job of each of the latest changes to the tree (JobsChanged):
	// changed[v%changeLog] is that of the change that made QueuesVersion v, "" for a
	// change of no single job (the capacity, a queue added).
	changed [changeLog]string

	keep     Retention        // what is remembered of finished work (retention.go)
	ended    []ended          // finished and cancelled tasks, oldest first
	idle     idleJobs         // completed jobs, oldest first
	onForget []func(*JobInfo) // told of each job forgotten
}

// Option configures a State.
type Option func(*config) error

type config struct {
	ordering  fairness.Policy
	perJob    bool
	retention Retention
}

// WithOrdering sets the fairness policy that orders queues and jobs (Walk); default
// fairness.DRF.
func WithOrdering(p fairness.Policy) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("cluster: ordering is nil: %w", ErrInvalid)
		}
		c.ordering = p
		return nil
	}
}

// WithJobProgress keeps, besides the cluster-wide progress model, one per job
// (JobInfo.Progress), so that a speculator compares a task with its own job's tasks.
func WithJobProgress(on bool) Option {
	return func(c *config) error {
		c.perJob = on
		return nil
	}
}

// New returns an empty state for resources described by schema.
func New(schema *resource.Schema, opts ...Option) (*State, error) {
	if schema == nil {
		return nil, fmt.Errorf("cluster: nil schema: %w", resource.ErrSchemaMismatch)
	}
	cfg := config{ordering: fairness.DRF{}, retention: DefaultRetention}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("cluster: nil option: %w", ErrInvalid)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	s := &State{
		schema:   schema,
		nodes:    make(map[string]*NodeInfo),
		jobs:     make(map[string]*JobInfo),
		classes:  make(map[ClassID]*Class),
		tasks:    make(map[string]*TaskInfo),
		keyDim:   firstNonCompressible(schema),
		ordering: cfg.ordering,
		perJob:   cfg.perJob,
		pending:  fairness.NewPendingIndex[*TaskInfo](),
		oneRack:  make(map[string][]string),
		keep:     cfg.retention,
	}
	s.booked = btree.NewG(8, func(a, b *TaskInfo) bool {
		if a.start != b.start {
			return a.start < b.start
		}
		return a.pe.ID < b.pe.ID
	})
	s.byFree = btree.NewG(16, byFreeLess)
	var err error
	if s.tree, err = fairness.NewTree(schema, resource.Tuple{}, fairness.WithPolicy(cfg.ordering)); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if s.tracker, err = predict.NewProgressTracker(); err != nil {
		return nil, fmt.Errorf("cluster: progress tracker: %w", err)
	}
	return s, nil
}

// firstNonCompressible is the dimension the free index sorts nodes by: a task can only
// start where this much of it is free, compression or not. Without one, slot 0.
func firstNonCompressible(schema *resource.Schema) int {
	for k := 0; k < schema.Len(); k++ {
		if !schema.Dim(k).Compressible {
			return k
		}
	}
	return 0
}

// Schema is the schema of every amount the state holds.
func (s *State) Schema() *resource.Schema { return s.schema }

// Ordering is the fairness policy that orders queues and jobs.
func (s *State) Ordering() fairness.Policy { return s.ordering }

// Capacity is the cluster's total resources.
func (s *State) Capacity() resource.Tuple { return s.capacity }

// Clock is the latest time the state has been told (Advance).
func (s *State) Clock() time.Duration { return s.clock }

// Advance moves the state's clock to now (never back), refreshing the free index when
// it is stale and forgetting what has been done for longer than Retention.Age.
func (s *State) Advance(now time.Duration) {
	if now <= s.clock {
		return
	}
	s.clock = now
	s.StartDue(now)
	if s.keep.Age > 0 {
		s.retire()
	}
	if now-s.refreshed < refreshEvery {
		return
	}
	s.refreshed = now
	s.refresh()
}

// Progress is the progress model of the running tasks, fed by Started, Progress,
// Finish and the rest of the life cycle.
func (s *State) Progress() *predict.ProgressTracker { return s.tracker }

// AddNode adds a server. It fails on an empty or duplicate ID, an invalid capacity or
// GPU spec, a capacity that is zero on every dimension, or one that would take the cluster's total
// out of the int64 range.
func (s *State) AddNode(spec NodeSpec) error {
	if spec.ID == "" {
		return fmt.Errorf("cluster: node ID is empty: %w", ErrInvalid)
	}
	if _, ok := s.nodes[spec.ID]; ok {
		return fmt.Errorf("cluster: node %q: %w", spec.ID, ErrDuplicate)
	}
	if err := s.schema.Validate(spec.Capacity); err != nil {
		return fmt.Errorf("cluster: node %q: capacity: %w", spec.ID, err)
	}
	if spec.Capacity == (resource.Tuple{}) {
		return fmt.Errorf("cluster: node %q: capacity is zero on every dimension: %w", spec.ID, ErrInvalid)
	}
	total, ok := s.capacity.CheckedAdd(spec.Capacity)
	if !ok {
		return fmt.Errorf("cluster: node %q: capacity %s: the cluster's total would leave the int64 range: %w",
			spec.ID, s.schema.Format(spec.Capacity), resource.ErrOverflow)
	}
	gpus, err := gpu.New(spec.GPU)
	if err != nil {
		return fmt.Errorf("cluster: node %q: %w: %w", spec.ID, ErrInvalid, err)
	}
	tl, err := stage.NewTimeline(s.schema, spec.Capacity)
	if err != nil {
		return fmt.Errorf("cluster: node %q: %w", spec.ID, err)
	}
	s.capacity = total
	s.shapes.add(spec.Capacity)
	if spec.GPU.Count > 0 {
		if s.gpuShapes == nil {
			s.gpuShapes = map[gpuShape]int{}
		}
		s.gpuShapes[gpuShape{spec.Capacity, spec.GPU}]++
	}
	s.treeApply(treeOp{kind: opCapacity, a: total})
	n := &NodeInfo{spec: spec, tl: tl, tasks: make(map[string]*TaskInfo), gpus: gpus, idKey: idPrefix(spec.ID)}
	s.nodes[spec.ID] = n
	n.index = takeSlot(&s.nodeList, &s.freeNodes, n)
	free, until := tl.FreeUntil(s.clock)
	n.key = free[s.keyDim]
	n.want = n.key
	s.due.set(n, until)
	s.byFree.ReplaceOrInsert(n.item())
	s.touch(n)
	s.relocate(spec.ID)
	return nil
}

// RemoveNode removes a server (it failed or left). Its running and booked tasks return
// to pending and are returned in ID order; reservations not yet committed are rolled back; backup
// attempts on the node end, as do the backups of the tasks returned to pending.
func (s *State) RemoveNode(id string) ([]string, error) {
	n, ok := s.nodes[id]
	if !ok {
		return nil, fmt.Errorf("cluster: remove node %q: %w", id, ErrUnknownNode)
	}
	s.revertMovesTo(n)
	var ids []string
	var backups, reserved []*TaskInfo
	for tid, t := range n.tasks {
		switch {
		case t.backs() != nil:
			backups = append(backups, t)
		case t.state == Reserved:
			reserved = append(reserved, t)
		default:
			ids = append(ids, tid)
		}
	}
	slices.Sort(ids)
	slices.SortFunc(backups, byID)
	slices.SortFunc(reserved, byID)
	for _, b := range backups {
		s.dropBackup(b.backs(), true)
	}
	for _, t := range reserved {
		s.requeue(t)
	}
	for _, tid := range ids {
		s.requeue(s.tasks[tid])
	}
	s.unindex(n)
	s.touch(n)
	delete(s.nodes, id)
	s.nodeList[n.index] = nil
	s.freeNodes = append(s.freeNodes, n.index)
	s.capacity = s.capacity.Sub(n.spec.Capacity)
	s.shapes.remove(n.spec.Capacity)
	if k := (gpuShape{n.spec.Capacity, n.spec.GPU}); k.spec.Count > 0 {
		if s.gpuShapes[k]--; s.gpuShapes[k] == 0 {
			delete(s.gpuShapes, k)
		}
	}
	s.treeApply(treeOp{kind: opCapacity, a: s.capacity})
	s.relocate(id)
	return ids, nil
}

// relocate re-files the tasks with an input on node id after the node joined or left,
// so that the locality index sees the node's rack (or its absence) as Locality does:
// a pending task is indexed again, its order among its job's tasks unchanged; a placed
// one, parked in the index, leaves the node and rack tables, to be filed anew should
// it come back to pending. A parked entry's racks are thus always those its inputs are
// in (index).
func (s *State) relocate(id string) {
	for _, t := range s.tasks {
		if !slices.Contains(t.pe.Nodes, id) {
			continue
		}
		switch {
		case t.state == Pending:
			_ = s.pending.Delete(&t.pe)
			s.index(t)
		case t.pe.Parked():
			_ = s.pending.Delete(&t.pe)
			t.pe.Racks = nil
		}
	}
}

func byID(a, b *TaskInfo) int { return strings.Compare(a.pe.ID, b.pe.ID) }

// AddQueue adds a queue under parent ("" for the root), configured by fairness options
// (weight, min and max share, the ordering among its children).
func (s *State) AddQueue(parent, id string, opts ...fairness.Option) error {
	if err := s.tree.AddQueue(parent, id, opts...); err != nil {
		if errors.Is(err, fairness.ErrUnknownQueue) {
			return fmt.Errorf("cluster: queue %q: %w: %w", id, ErrUnknownQueue, err)
		}
		return fmt.Errorf("cluster: %w", err)
	}
	s.changed[s.queuesVersion.Add(1)%changeLog] = ""
	if e, err := s.tree.Queue(id); err == nil {
		s.hasMax = s.hasMax || e.Share.HasMax()
		s.hasMin = s.hasMin || e.Share.Min > 0
	}
	return nil
}

// AddJob adds a job to its queue. It fails on an empty or duplicate ID, an unknown
// queue, a negative or NaN weight, a negative submission time, MinMember or
// MaxDisrupted.
func (s *State) AddJob(spec JobSpec) error {
	if spec.ID == "" {
		return fmt.Errorf("cluster: job ID is empty: %w", ErrInvalid)
	}
	if spec.Submitted < 0 || !(spec.Weight >= 0) {
		return fmt.Errorf("cluster: job %q: submitted %v, weight %v: %w", spec.ID, spec.Submitted, spec.Weight, ErrInvalid)
	}
	if spec.MinMember < 0 || spec.MaxDisrupted < 0 {
		return fmt.Errorf("cluster: job %q: min member %d, max disrupted %d: %w", spec.ID, spec.MinMember, spec.MaxDisrupted, ErrInvalid)
	}
	if _, ok := s.jobs[spec.ID]; ok {
		return fmt.Errorf("cluster: job %q: %w", spec.ID, ErrDuplicate)
	}
	w := spec.Weight
	if w == 0 {
		w = 1
	}
	slot := nextSlot(s.jobList, s.freeJobs) // the index takeSlot hands out below
	if err := s.tree.AddJob(spec.Queue, spec.ID, fairness.Weight(w), fairness.Priority(spec.Priority), fairness.SubmittedAt(spec.Submitted), fairness.Slot(slot)); err != nil {
		if errors.Is(err, fairness.ErrUnknownQueue) {
			return fmt.Errorf("cluster: job %q: %w: %w", spec.ID, ErrUnknownQueue, err)
		}
		return fmt.Errorf("cluster: job %q: %w", spec.ID, err)
	}
	j := &JobInfo{spec: spec, owner: s}
	j.index = takeSlot(&s.jobList, &s.freeJobs, j)
	s.jobs[spec.ID] = j
	return nil
}

// Submit adds tasks, all or none: it fails, adding nothing, when any task has an empty
// or duplicate ID, an unknown job, an invalid request, key, profile or GPU demand, an
// unknown class, a negative time or SLO, or an SLO on a batch task, or when it would
// leave a gang job (JobSpec.MinMember) that has not gathered yet (JobInfo.Gathered)
// with fewer live and finished tasks than its MinMember.
func (s *State) Submit(specs ...TaskSpec) error {
	if err := s.Check(specs...); err != nil {
		return err
	}
	for i := range specs {
		t := s.newTask(&specs[i])
		s.tasks[t.pe.ID], t.held = t, true
		s.count[Pending]++
		s.taskAdded(s.jobs[t.pe.Job])
		s.enqueue(t)
	}
	return nil
}

// Check is Submit's validation alone: it reports the error Submit would return for
// specs, and adds nothing. A caller with checks of its own runs them between Check
// and Submit, on specs known to be valid.
func (s *State) Check(specs ...TaskSpec) error {
	seen := make(map[string]bool, len(specs))
	for i := range specs {
		if err := s.validateTask(&specs[i], seen); err != nil {
			return err
		}
	}
	return s.checkGangs(specs)
}

// newTask is a pending task of spec, which has been validated.
func (s *State) newTask(spec *TaskSpec) *TaskInfo {
	t := &TaskInfo{
		key:            taskKey{logic: spec.Key.Logic, size: spec.Key.InputSize},
		demand:         s.jobs[spec.Job].demandOf(s, spec.Request, spec.Duration, spec.Key.Family),
		deadline:       spec.Deadline,
		state:          Pending,
		nonPreemptible: spec.NonPreemptible,
		class:          spec.Class,
	}
	t.pe = fairness.PendingEntry[*TaskInfo]{ID: spec.ID, Job: spec.Job, Priority: spec.Priority, Submitted: spec.Submitted,
		Nodes: slices.Clone(spec.Inputs), Owner: t}
	for i, id := range t.pe.Nodes {
		if n := s.nodes[id]; n != nil {
			t.pe.Nodes[i] = n.spec.ID // the node's own string: the caller's copy is not kept
		}
	}
	if spec.Profile.Len() > 0 || spec.GPU.Count != 0 || spec.GPU.Milli != 0 || spec.GPU.Models != nil || spec.SLO != 0 {
		t.extra = &taskExtra{profile: spec.Profile, gpu: spec.GPU, slo: spec.SLO}
		t.extra.gpu.Models = slices.Clone(spec.GPU.Models)
	}
	return t
}

// checkGangs refuses a batch that leaves a gang job short of its MinMember live tasks:
// such a gang could never run. Of several, it names the first in the batch.
func (s *State) checkGangs(specs []TaskSpec) error {
	var adds map[string]int
	var order []string
	for i := range specs {
		if j := s.jobs[specs[i].Job]; j.spec.MinMember > 1 {
			if adds == nil {
				adds = map[string]int{}
			}
			if adds[j.spec.ID] == 0 {
				order = append(order, j.spec.ID)
			}
			adds[j.spec.ID]++
		}
	}
	for _, id := range order {
		j, k := s.jobs[id], adds[id]
		if have := j.live + j.finished + k; !j.gathered && have < j.spec.MinMember {
			return fmt.Errorf("cluster: gang job %q: %d live or finished tasks after this submission, MinMember %d (submit a gang's members together): %w",
				id, have, j.spec.MinMember, ErrInvalid)
		}
	}
	return nil
}

func (s *State) validateTask(t *TaskSpec, seen map[string]bool) error {
	switch {
	case t.ID == "":
		return fmt.Errorf("cluster: task ID is empty: %w", ErrInvalid)
	case seen[t.ID] || s.tasks[t.ID] != nil:
		return fmt.Errorf("cluster: task %q: %w", t.ID, ErrDuplicate)
	case s.jobs[t.Job] == nil:
		return fmt.Errorf("cluster: task %q: job %q: %w", t.ID, t.Job, ErrUnknownJob)
	case t.Duration < 0 || t.Deadline < 0 || t.Submitted < 0:
		return fmt.Errorf("cluster: task %q: duration %v, deadline %v, submitted %v: %w", t.ID, t.Duration, t.Deadline, t.Submitted, ErrInvalid)
	case t.Key.InputSize < 0:
		return fmt.Errorf("cluster: task %q: key input size %d: %w", t.ID, t.Key.InputSize, ErrInvalid)
	case !t.Class.valid():
		return fmt.Errorf("cluster: task %q: class %v: %w", t.ID, t.Class, ErrInvalid)
	case t.SLO < 0:
		return fmt.Errorf("cluster: task %q: SLO %v is negative: %w", t.ID, t.SLO, ErrInvalid)
	case t.SLO > 0 && t.Class != LatencySensitive:
		return fmt.Errorf("cluster: task %q: SLO %v on a %v task (only a latency-sensitive task may have one): %w", t.ID, t.SLO, t.Class, ErrInvalid)
	case t.Profile.Len() > 0 && !s.schema.Equal(t.Profile.Schema()):
		return fmt.Errorf("cluster: task %q: profile schema %v, the cluster's %v: %w", t.ID, t.Profile.Schema(), s.schema, resource.ErrSchemaMismatch)
	}
	for i, in := range t.Inputs {
		if in == "" {
			return fmt.Errorf("cluster: task %q: input %d names no node: %w", t.ID, i, ErrInvalid)
		}
	}
	if err := s.schema.Validate(t.Request); err != nil {
		return fmt.Errorf("cluster: task %q: request: %w", t.ID, err)
	}
	if err := t.GPU.Validate(); err != nil {
		return fmt.Errorf("cluster: task %q: %w: %w", t.ID, ErrInvalid, err)
	}
	seen[t.ID] = true
	return nil
}

// enqueue makes a task pending in the fairness tree, the locality index and its
// demand classes.
func (s *State) enqueue(t *TaskInfo) {
	t.pendingSince = max(t.pe.Submitted, s.clock)
	s.index(t)
	s.treeApply(treeOp{kind: opAddPending, job: t.pe.Job, a: t.demand.request})
	s.addPending(s.jobs[t.pe.Job], t)
	if t.class == LatencySensitive {
		s.lsPending = s.lsPending.Add(t.demand.request)
	}
}

// dequeue takes a pending task out of the fairness tree's pending demand (unless it
// starts: then Tree.Start does), the locality index and its demand classes. A task
// that starts is parked in the locality index, which keeps its place there should it
// come back to pending (Unreserve, an eviction); it leaves the index when it ends
// (taskEnded), or when a node holding one of its inputs joins or leaves (relocate).
func (s *State) dequeue(t *TaskInfo, starts bool) {
	if starts {
		_ = s.pending.Park(&t.pe) // pending: indexed; its racks stay as filed
	} else {
		_ = s.pending.Delete(&t.pe)
		t.pe.Racks = nil
	}
	if !starts {
		s.treeApply(treeOp{kind: opRemovePending, job: t.pe.Job, a: t.demand.request})
	}
	s.removePending(s.jobs[t.pe.Job], t)
	if t.class == LatencySensitive {
		s.lsPending = s.lsPending.Sub(t.demand.request)
	}
}

// PendingLatencySensitive is the sum of the requests of the pending latency-sensitive
// tasks (TaskSpec.Class): the "new latency-sensitive demand" a scale-up plan makes
// room for (docs/methods.md §11, R_NE). O(1): it is kept as tasks come and go.
func (s *State) PendingLatencySensitive() resource.Tuple { return s.lsPending }

// index puts pending task t's entry in the pending index with the racks its inputs
// are in now: a parked entry takes up its places again under the racks it was filed
// with, which are those (relocate files anew any whose input's node joined or left
// since), and any other entry is filed with the racks looked up.
func (s *State) index(t *TaskInfo) {
	if !t.pe.Parked() {
		t.pe.Racks = s.racks(t.pe.Nodes)
	}
	// Only fails on input validated at submission.
	_ = s.pending.Insert(&t.pe)
}

// racks are the racks of nodes, position by position ("" for a node the state does not
// hold); nil when none is known. A single node's is a list shared by every task with
// its single input in that rack.
func (s *State) racks(nodes []string) []string {
	var out []string
	for i, id := range nodes {
		n := s.nodes[id]
		if n == nil || n.spec.Rack == "" {
			continue
		}
		if len(nodes) == 1 {
			one := s.oneRack[n.spec.Rack]
			if one == nil {
				one = []string{n.spec.Rack}
				s.oneRack[n.spec.Rack] = one
			}
			return one
		}
		if out == nil {
			out = make([]string, len(nodes))
		}
		out[i] = n.spec.Rack
	}
	return out
}

// Locations are task t's input replicas with the racks of the nodes holding them (""
// for a node the state does not hold).
func (s *State) Locations(t *TaskInfo) []fairness.Location {
	if len(t.pe.Nodes) == 0 {
		return nil
	}
	locs := make([]fairness.Location, 0, len(t.pe.Nodes))
	for _, id := range t.pe.Nodes {
		rack := ""
		if n := s.nodes[id]; n != nil {
			rack = n.spec.Rack
		}
		locs = append(locs, fairness.Location{Node: id, Rack: rack})
	}
	return locs
}

// Locality is how close node n is to task t's input: node-local for a task without
// inputs.
func (s *State) Locality(t *TaskInfo, n *NodeInfo) fairness.Level {
	if len(t.pe.Nodes) == 0 {
		return fairness.NodeLocal
	}
	level := fairness.OffSwitch
	for _, id := range t.pe.Nodes {
		if id == n.spec.ID {
			return fairness.NodeLocal
		}
		if m := s.nodes[id]; m != nil && m.spec.Rack != "" && m.spec.Rack == n.spec.Rack {
			level = fairness.RackLocal
		}
	}
	return level
}

// Locator is Locality for one task and many nodes (a push placement visits many):
// State.Locate looks the task's input nodes up once, so that Level costs no lookup by
// ID. Level answers as Locality would have when Locate filled the Locator; the zero
// Locator is that of a task without inputs. Reuse one from task to task: Locate
// overwrites it.
type Locator struct {
	nodes []*NodeInfo // the input nodes; nil for an ID the state does not hold
	racks []string    // their racks
}

// Locate fills l for task t.
func (s *State) Locate(l *Locator, t *TaskInfo) {
	l.nodes, l.racks = l.nodes[:0], l.racks[:0]
	for _, id := range t.pe.Nodes {
		n, rack := s.nodes[id], ""
		if n != nil {
			rack = n.spec.Rack
		}
		l.nodes, l.racks = append(l.nodes, n), append(l.racks, rack)
	}
}

// Level is how close node n is to the input of the task Locate filled l for:
// Locality(t, n).
func (l *Locator) Level(n *NodeInfo) fairness.Level {
	if len(l.nodes) == 0 {
		return fairness.NodeLocal
	}
	level := fairness.OffSwitch
	for i, m := range l.nodes {
		if m == n {
			return fairness.NodeLocal
		}
		if r := l.racks[i]; r != "" && r == n.spec.Rack {
			level = fairness.RackLocal
		}
	}
	return level
}

// Node returns a node.
func (s *State) Node(id string) (*NodeInfo, bool) {
	n, ok := s.nodes[id]
	return n, ok
}

// Job returns a job.
func (s *State) Job(id string) (*JobInfo, bool) {
	j, ok := s.jobs[id]
	return j, ok
}

// JobAt returns the job of index i (JobInfo.Index), for plugins that keep per-job
// scratch in slices; nil when no job has that index now (i out of range, or its job
// was forgotten).
func (s *State) JobAt(i int) *JobInfo {
	if i < 0 || i >= len(s.jobList) {
		return nil
	}
	return s.jobList[i]
}

// JobSlots bounds JobInfo.Index: every job's index is below it. Indexes of forgotten
// jobs are reused (Retention), so it stays near the most jobs held at once.
func (s *State) JobSlots() int { return len(s.jobList) }

// NumJobs is how many jobs the state holds, completed jobs not yet forgotten
// included.
func (s *State) NumJobs() int { return len(s.jobs) }

// Task returns a task, or a backup attempt by its BackupID.
func (s *State) Task(id string) (*TaskInfo, bool) {
	t, ok := s.tasks[id]
	return t, ok
}

// NodeSlots bounds NodeInfo.Index: every node's index is below it. Indexes of removed
// nodes are reused, so it stays near the most nodes held at once.
func (s *State) NodeSlots() int { return len(s.nodeList) }

// holds reports whether n is one of the state's nodes, without a lookup by ID.
func (s *State) holds(n *NodeInfo) bool {
	return n.index < len(s.nodeList) && s.nodeList[n.index] == n
}

// NumNodes is how many nodes the cluster has.
func (s *State) NumNodes() int { return len(s.nodes) }

// Count is how many tasks are in state st (backup attempts are not counted). For
// Finished and Cancelled it counts every task that ever ended, those forgotten
// (Retention) included.
func (s *State) Count(st TaskState) int {
	if int(st) >= len(s.count) {
		return 0
	}
	return s.count[st]
}

// Nodes yields every node, in ID order.
func (s *State) Nodes() iter.Seq[*NodeInfo] {
	return func(yield func(*NodeInfo) bool) {
		ids := make([]string, 0, len(s.nodes))
		for id := range s.nodes {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if !yield(s.nodes[id]) {
				return
			}
		}
	}
}

// BusyJobs yields the jobs with running tasks, in no particular order. The state must
// not change during the iteration: a job that stops being busy then may make it pass
// over another.
func (s *State) BusyJobs() iter.Seq[*JobInfo] {
	return func(yield func(*JobInfo) bool) {
		for _, j := range s.busyJobs {
			if !yield(j) {
				return
			}
		}
	}
}

// JobEntry is a job's fairness entry: its share settings, usage and demand.
func (s *State) JobEntry(id string) (fairness.Entry, error) { return s.tree.Job(id) }

// QueueEntry is a queue's fairness entry.
func (s *State) QueueEntry(id string) (fairness.Entry, error) { return s.tree.Queue(id) }

// ParentQueue is the queue holding queue id ("" for the root's children); it fails on
// an unknown queue.
func (s *State) ParentQueue(id string) (string, error) {
	p, err := s.tree.Parent(fairness.KindQueue, id)
	if err != nil {
		return "", fmt.Errorf("cluster: queue %q: %w: %w", id, ErrUnknownQueue, err)
	}
	return p, nil
}

// HasMaxShare reports whether some queue has a max share.
func (s *State) HasMaxShare() bool { return s.hasMax }

// HasMinShare reports whether some queue has a min share (a guarantee).
func (s *State) HasMinShare() bool { return s.hasMin }

// Admit reports whether job j may hold one more task using usage within every max
// share above it (fairness.Tree.Admit): nil when it may.
func (s *State) Admit(j *JobInfo, usage resource.Tuple) error {
	return s.tree.Admit(j.spec.ID, usage)
}

// Walk calls fn with every job that has pending tasks, in fairness order (queues,
// then jobs, each in its policy's order), until fn returns false. The order is taken
// once: changes fn makes to fairness usage (Reserve, Commit) take effect in the tree
// when the walk ends, so that the walk sees one consistent order, as Alg. 1 line 4
// sorts once per pass.
func (s *State) Walk(fn func(j *JobInfo) bool) {
	s.walking++
	if s.walking > 1 {
		s.tree.WalkSlots(func(i int) bool { return fn(s.jobList[i]) })
	} else {
		s.walkBatched(fn)
	}
	if s.walking--; s.walking > 0 {
		return
	}
	for _, op := range s.deferred {
		s.treeApply(op)
	}
	s.deferred = s.deferred[:0]
	s.retire() // what ended during the walk
}

// walkBatch is how many jobs the outermost Walk takes from the tree at a time.
const walkBatch = 32

// walkBatched is Walk's visit of the jobs for the outermost walk: it takes their slots
// from the tree walkBatch at a time and looks at each job's record once before fn is
// called with the first: the loads do not depend on one another, so that the memory
// fetches them together, where one at a time, each a cache miss in a walk over tens
// of thousands of jobs, they would come one after the other. fn is called with the
// same jobs in the same order, each looked up when its turn comes, and the walk stops
// where fn says: the tree does not change during a walk.
func (s *State) walkBatched(fn func(j *JobInfo) bool) {
	buf := s.walkSlots[:0]
	more := true
	flush := func() bool {
		sink := 0
		for _, i := range buf {
			if j := s.jobList[i]; j != nil {
				sink += j.index + len(j.classes)
			}
		}
		s.walkSink = sink
		for _, i := range buf {
			if !fn(s.jobList[i]) {
				return false
			}
		}
		buf = buf[:0]
		return true
	}
	s.tree.WalkSlots(func(i int) bool {
		if buf = append(buf, i); len(buf) < walkBatch {
			return true
		}
		more = flush()
		return more
	})
	if more && len(buf) > 0 {
		flush()
	}
	s.walkSlots = buf[:0]
}

// changeLog is how many of the latest changes to the fairness tree JobsChanged
// remembers.
const changeLog = 16

// JobsChanged appends to ids the job of each change to the fairness tree after
// version since (QueuesVersion), oldest first — a job once per change: tasks
// submitted, started, released — and reports whether it could tell: false when one
// of them was of no single job (the cluster's capacity, a queue added) or they are
// more than the state remembers (the latest 16). A pass that keeps the jobs in walk
// order from one choice to the next asks it whether its own start was all that
// changed (Resettle).
func (s *State) JobsChanged(since uint64, ids []string) ([]string, bool) {
	now := s.queuesVersion.Load()
	if now < since || now-since > changeLog {
		return ids, false
	}
	for v := since + 1; v <= now; v++ {
		id := s.changed[v%changeLog]
		if id == "" {
			return ids, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// Resettle is fairness.Resettle on the state's fairness tree, whose slots are the
// jobs' indexes: it brings order — some of the jobs Walk visits, in the order it
// visited them, index giving each one's JobInfo.Index — up to date after changes to
// the job at order[at] alone (JobsChanged tells), as Walk would now visit them: the
// job and its queues' blocks of jobs move, the jobs Walk no longer visits are dropped.
func Resettle[E any](s *State, order []E, at int, index func(E) int) []E {
	return fairness.Resettle(s.tree, order, at, index)
}

// BestLocality is the best locality level at which job j has a pending task for node
// n; false when j has none pending.
func (s *State) BestLocality(j *JobInfo, n *NodeInfo) (fairness.Level, bool) {
	return s.pending.BestByRef(&j.pending, j.spec.ID, n.spec.ID, n.spec.Rack)
}

// EachPending calls fn with every pending task of job j, in task order, until fn
// returns false: O(n) for its n pending tasks, from the job's own record alone, not
// the pending index's node and rack tables (which BestLocality and FirstPending read).
// With Locality it is the reference the index's answers can be checked against.
func (s *State) EachPending(j *JobInfo, fn func(t *TaskInfo) bool) {
	s.pending.AscendJob(j.spec.ID, func(e *fairness.PendingEntry[*TaskInfo]) bool { return fn(e.Owner) })
}

// FirstPending is job j's first pending task, in task order, at locality worst or
// better for node n.
func (s *State) FirstPending(j *JobInfo, n *NodeInfo, worst fairness.Level) (*TaskInfo, fairness.Level, bool) {
	e, l, ok := s.pending.FirstByRef(&j.pending, j.spec.ID, n.spec.ID, n.spec.Rack, worst)
	if !ok {
		return nil, 0, false
	}
	return e.Owner, l, true
}

// AscendPending calls fn with job j's pending tasks at locality worst or better for
// node n, best locality first and in task order within a level, until fn returns
// false.
func (s *State) AscendPending(j *JobInfo, n *NodeInfo, worst fairness.Level, fn func(t *TaskInfo, l fairness.Level) bool) {
	s.pending.AscendByRef(&j.pending, j.spec.ID, n.spec.ID, n.spec.Rack, worst, func(e *fairness.PendingEntry[*TaskInfo], l fairness.Level) bool {
		return fn(e.Owner, l)
	})
}

// treeOp is a change to the fairness tree, applied at once or, during a Walk, when
// it ends.
type treeOp struct {
	kind opKind
	job  string
	a, b resource.Tuple
}

type opKind uint8

const (
	opAddPending    opKind = iota // a: demand
	opRemovePending               // a: demand
	opStart                       // a: request, b: usage
	opAllocate                    // a: usage
	opRelease                     // a: usage
	opResize                      // a: the new usage, b: the old
	opCapacity                    // a: the cluster's capacity
)

// treeApply applies op, or defers it during a walk. The tree calls cannot fail on the
// state's own bookkeeping.
func (s *State) treeApply(op treeOp) {
	if s.walking > 0 {
		s.deferred = append(s.deferred, op)
		return
	}
	s.changed[s.queuesVersion.Add(1)%changeLog] = op.job // "" for the capacity
	switch op.kind {
	case opAddPending:
		_ = s.tree.AddPending(op.job, 1, op.a)
	case opRemovePending:
		_ = s.tree.RemovePending(op.job, 1, op.a)
	case opStart:
		_ = s.tree.Start(op.job, op.a, op.b)
	case opAllocate:
		_ = s.tree.Allocate(op.job, op.a)
	case opRelease:
		_ = s.tree.Release(op.job, op.a)
	case opResize:
		_ = s.tree.Resize(op.job, op.b, op.a)
	case opCapacity:
		_ = s.tree.SetCapacity(op.a)
	}
}

// takeSlot puts v in a slot of list, a freed one (from free) if any, else a new one at
// the end, and returns the slot's index.
func takeSlot[T any](list *[]T, free *[]int, v T) int {
	i := nextSlot(*list, *free)
	if k := len(*free); k > 0 {
		*free = (*free)[:k-1]
		(*list)[i] = v
	} else {
		*list = append(*list, v)
	}
	return i
}

// nextSlot is the index takeSlot hands out next: the last freed, else a new one.
func nextSlot[T any](list []T, free []int) int {
	if k := len(free); k > 0 {
		return free[k-1]
	}
	return len(list)
}
