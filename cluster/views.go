package cluster

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// NodeInfo is the read-only view of one node that plugins read: its spec, its
// timeline of free resources and the tasks reserved or running on it. It stays valid
// while the state holds the node. Do not change the timeline: reserve through the
// State.
type NodeInfo struct {
	spec     NodeSpec
	index    int // dense, in State.nodeList (Index)
	tl       *stage.Timeline
	tasks    map[string]*TaskInfo // reserved and running attempts, backups included
	key      int64                // free amount of the index dimension when indexed
	want     int64                // the key at the latest change, indexed once stale is false
	idKey    uint64               // the ID's first eight bytes (idPrefix), for the index's ties
	stale    bool                 // in State.stale: want may differ from key
	keyEnd   time.Duration        // when the free amount want was worked out from ends (State.due)
	dueAt    int                  // its place in State.due, + 1; 0 when not there
	external stage.Handle         // the reservation holding load the scheduler did not place
	load     resource.Tuple       // the external load last reported (SetExternalLoad)
	held     resource.Tuple       // what the external reservation holds of it
	gpus     gpu.Devices          // the node's GPU devices (NodeSpec.GPU)
	extWant  []int64              // by device: the external shares last set (SetExternalDevices)
	extHeld  []int64              // by device: what gpus holds of them; nil for none
	version  uint64               // changes so far (Version)
	touched  bool                 // in State.touched
	frozen   *frozenNode          // a view's own (View); nil for the state's node
}

// frozenNode is what a view (NodeInfo.View) keeps of its node's tasks.
type frozenNode struct {
	numTasks  int
	deadlines []PlacedWork
}

// ID names the node.
func (n *NodeInfo) ID() string { return n.spec.ID }

// Index is the node's dense index, for plugins that keep per-node scratch in a slice
// (State.NodeSlots bounds it), where a lookup by ID would cost more. Once the node is
// removed a later node may get the same index: a plugin keeping scratch by index
// checks that it is for the same *NodeInfo.
func (n *NodeInfo) Index() int { return n.index }

// Rack is the node's rack, "" when unknown.
func (n *NodeInfo) Rack() string { return n.spec.Rack }

// Capacity is the node's total resources.
func (n *NodeInfo) Capacity() resource.Tuple { return n.spec.Capacity }

// ExternalLoad is the load of other applications last set on the node
// (State.SetExternalLoad: through finegrain.Scheduler, the forecast of their reports,
// netted of the tasks' slack at each usage report); zero when none was.
func (n *NodeInfo) ExternalLoad() resource.Tuple { return n.load }

// ExternalHeld is what the node's timeline holds of its external load: the load, less
// what the tasks reserved there left no room for when it was set.
func (n *NodeInfo) ExternalHeld() resource.Tuple { return n.held }

// ExternalDevices is what the node's devices hold, device by device, of the shares
// of work the scheduler did not place (State.SetExternalDevices); nil when none is
// held. Read it; do not change it.
func (n *NodeInfo) ExternalDevices() []int64 { return n.extHeld }

// Spec is the node as it was added, or last updated (State.UpdateNode).
func (n *NodeInfo) Spec() NodeSpec { return n.spec }

// Timeline is the node's free resources over time, every reservation subtracted.
// Read it; never reserve or release on it directly.
func (n *NodeInfo) Timeline() *stage.Timeline { return n.tl }

// Devices is the node's GPU devices, each with its free share. Read it; never take
// or release on it directly.
func (n *NodeInfo) Devices() *gpu.Devices { return &n.gpus }

// NumTasks is how many task attempts (reserved or running, backups included) the node
// holds (for a view, held when it was taken).
func (n *NodeInfo) NumTasks() int {
	if n.frozen != nil {
		return n.frozen.numTasks
	}
	return len(n.tasks)
}

// Tasks returns the task attempts the node holds (reserved or running, backups
// included) in ID order. It allocates; call it where the list is needed.
func (n *NodeInfo) Tasks() []*TaskInfo { return sorted(n.tasks) }

// RangeTasks calls fn with each task placed on the node (as Tasks, backups included),
// in no particular order and without allocating, until fn returns false. fn must not
// change the state.
func (n *NodeInfo) RangeTasks(fn func(*TaskInfo) bool) {
	for _, t := range n.tasks {
		if !fn(t) {
			return
		}
	}
}

// sorted lists the tasks of m in ID order.
func sorted(m map[string]*TaskInfo) []*TaskInfo {
	out := make([]*TaskInfo, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	slices.SortFunc(out, byID)
	return out
}

// JobInfo is the read-only view of one job.
type JobInfo struct {
	spec     JobSpec
	index    int
	classes  []Class                    // what its pending tasks ask for (classes.go)
	classSet uint64                     // the number of the set of classes (ClassSet)
	classIdx map[int]int                // index in classes of each class, by Class.Slot
	pending  fairness.JobRef[*TaskInfo] // where the pending index keeps its tasks
	running  []*TaskInfo                // its running tasks (not their backups), in no order (placement.runAt)
	owner    *State                     // the state holding the job, for IsRunning
	busyAt   int                        // its index in State.busyJobs while it has running tasks
	progress *predict.ProgressTracker   // its tasks' progress (WithJobProgress)
	// demands are the latest distinct demands of its tasks, for the next to share
	// (demandOf); nextDemand is the one to replace next.
	demands    [recentDemands]*demand
	nextDemand int
	// disrupted counts its tasks preempted and not yet placed again (State.Preempt).
	disrupted int
	// gathered: a gang job has had MinMember tasks running or finished together, and
	// not lost every running task since to evictions or failures (JobInfo.Gathered);
	// finished counts its tasks that finished (JobInfo.Finished).
	gathered bool
	finished int

	// Retention (retention.go): tasks pending, reserved or running; whether the job is
	// complete and in the idle list, since when, and its neighbours there.
	live       int
	idle       bool
	doneAt     time.Duration
	prev, next *JobInfo
}

// ID names the job.
func (j *JobInfo) ID() string { return j.spec.ID }

// Spec is the job as it was added.
func (j *JobInfo) Spec() JobSpec { return j.spec }

// Index is the job's dense index, for plugins that keep per-job scratch in a slice
// (State.JobSlots bounds it). Once the job is forgotten (Retention) a later job may
// get the same index: a plugin keeping scratch by index resets it when told
// (State.OnForget, framework.ForgetPlugin).
func (j *JobInfo) Index() int { return j.index }

// Classes are the demand classes of the job's pending tasks (classes.go), in no
// particular order. The slice is the state's: read it, do not keep it.
func (j *JobInfo) Classes() []Class { return j.classes }

// ClassSet numbers the set of the job's demand classes (Classes, their counts of tasks
// aside): it changes whenever a class joins the set or leaves it, and no other job's
// set, now or earlier, has had the same number. 0 is the empty set of a job that never
// had a pending task. A plugin keeps what it worked out from a job's classes for as
// long as the number stays.
func (j *JobInfo) ClassSet() uint64 { return j.classSet }

// NumRunning is how many of the job's tasks are running (backups not counted).
func (j *JobInfo) NumRunning() int { return len(j.running) }

// IsRunning reports whether task id is one of the job's running tasks.
func (j *JobInfo) IsRunning(id string) bool { return j.isRunning(j.owner.tasks[id]) }

// isRunning reports whether t (nil: none) is one of the job's running tasks.
func (j *JobInfo) isRunning(t *TaskInfo) bool {
	return t != nil && t.run != nil && t.run.runAt < len(j.running) && j.running[t.run.runAt] == t
}

// Running returns the job's running tasks in ID order.
func (j *JobInfo) Running() []*TaskInfo {
	out := slices.Clone(j.running)
	slices.SortFunc(out, byID)
	return out
}

// swapRemove removes element i of list, moving the last element into its place and
// telling it its new index (moved), and returns the shortened list.
func swapRemove[T any](list []T, i int, moved func(T, int)) []T {
	last := len(list) - 1
	if i != last {
		list[i] = list[last]
		moved(list[i], i)
	}
	var zero T
	list[last] = zero
	return list[:last]
}

// Gathered reports whether the job runs as a gang should: it is no gang
// (JobSpec.MinMember ≤ 1), or MinMember of its tasks have been running or finished
// at once (Volcano's rule: finished tasks count) and it has not lost every running
// task to evictions, failures or node removals since. A gang that is not gathered
// starts its tasks only together, enough of them to bring its running and finished
// tasks to MinMember (plugins.Gang); once gathered, its further tasks (reduce tasks,
// say) start as they fit.
func (j *JobInfo) Gathered() bool {
	return j.spec.MinMember <= 1 || j.gathered || j.finished >= j.spec.MinMember
}

// Finished is how many of the job's tasks finished (those forgotten by Retention
// included).
func (j *JobInfo) Finished() int { return j.finished }

// Live is how many of the job's tasks are pending, reserved, booked or running.
func (j *JobInfo) Live() int { return j.live }

// Disrupted is how many of the job's tasks preemption evicted that are not placed
// again yet (State.Preempt); JobSpec.MaxDisrupted bounds it.
func (j *JobInfo) Disrupted() int { return j.disrupted }

// MayDisrupt reports whether preemption may evict k more of the job's tasks within its
// disruption budget (JobSpec.MaxDisrupted).
func (j *JobInfo) MayDisrupt(k int) bool {
	return j.spec.MaxDisrupted == 0 || j.disrupted+k <= j.spec.MaxDisrupted
}

// Progress is the progress model of the job's own tasks, or nil without
// WithJobProgress or before one of its tasks ran.
func (j *JobInfo) Progress() *predict.ProgressTracker { return j.progress }

// TaskInfo is the read-only view of one task, or of a task's backup attempt.
//
// It is what a pending task costs, so it holds only what a pending task needs (a
// 192-byte record, TestTaskInfoSizeClass): what only a placed task needs is in its
// placement, taken when it is reserved and given back when it leaves its node; what
// the tasks of a job share (their request and duration) is held once; what few tasks
// have (a declared profile, a GPU demand, nodes where backups failed) is held apart.
type TaskInfo struct {
	// pe is the task's entry in the pending index (indexed while it is pending, parked
	// while it is placed), and the home of its ID, job, priority, submission time and
	// inputs (pe.Nodes); pe.Racks are the inputs' racks when it was last indexed (nil
	// once it ends).
	pe           fairness.PendingEntry[*TaskInfo]
	key          taskKey // its predict.Key but the Family, which demand holds
	demand       *demand // its request, declared duration and key family, shared (demand)
	deadline     time.Duration
	start        time.Duration // when its reservation begins, or when it reported starting
	pendingSince time.Duration // when it last became pending (PendingSince)
	extra        *taskExtra    // what few tasks have; nil for none
	run          *placement    // while reserved, booked or running; nil otherwise
	state        TaskState
	disrupted    bool // preempted and not placed again yet (State.Preempt)
	// undisrupted: its latest commit ended a disruption (Withdraw restores it).
	undisrupted    bool
	failures       uint8     // runs lost to Fail, saturating (Failures)
	nonPreemptible bool      // TaskSpec.NonPreemptible
	class          TaskClass // TaskSpec.Class; its SLO is in extra
	// held: the state holds the task by its ID (State.tasks), so that a call that
	// takes a *TaskInfo knows it for its state's (State.own) without a lookup by ID:
	// from submission (or a backup's reservation) until it is forgotten or dropped.
	held bool
}

// demand is a request held for a declared duration (TaskSpec.Request, Duration), shared
// by the tasks of a job that ask the same (JobInfo keeps the latest few), with the
// request profile built once for all of them.
type demand struct {
	request  resource.Tuple
	duration time.Duration
	family   string                        // the tasks' predict.Key.Family
	profile  atomic.Pointer[stage.Profile] // the request held for duration (RequestProfile)
	owner    *State                        // the state whose job keeps it
	// classes are demand classes of this demand's undeclared tasks, by the tasks'
	// failures modulo its length: that of a task of this demand with the class's key
	// and failures, while the class has pending tasks (State.pendingClass).
	classes [8]*Class
}

// remember keeps class c, that of task t of demand d, for the next tasks like it
// (State.pendingClass); a task that declares its profile is not remembered.
func (d *demand) remember(t *TaskInfo, c *Class) {
	if t.Declared().Len() == 0 {
		d.classes[t.failures%uint8(len(d.classes))] = c
	}
}

// recentDemands is how many distinct demands a job keeps for its next tasks to share.
const recentDemands = 4

// demandOf returns a demand of request held for duration by tasks of key family
// family, owned by state s: one job j keeps, when one of its latest is alike, else a new one it keeps
// instead of its oldest.
func (j *JobInfo) demandOf(s *State, request resource.Tuple, duration time.Duration, family string) *demand {
	for _, d := range j.demands {
		if d != nil && d.duration == duration && d.request == request && d.family == family {
			return d
		}
	}
	d := &demand{request: request, duration: duration, family: family, owner: s}
	j.demands[j.nextDemand] = d
	j.nextDemand = (j.nextDemand + 1) % recentDemands
	return d
}

// taskExtra is what few tasks have: a declared profile, a GPU demand, a service-level
// objective (TaskSpec.Profile, GPU, SLO), nodes where their backups failed
// (TaskInfo.FailedOn).
type taskExtra struct {
	profile  stage.Profile
	gpu      gpu.Demand
	slo      time.Duration
	failedOn []string
}

// placement is what a task holds while it is placed (reserved, booked or running) on a
// node: the record is taken at Reserve and given back when the task leaves the node
// (State keeps a few given back for the next reservations).
type placement struct {
	// The fields read for every running task by a scale-up round come first, together.
	node *NodeInfo
	reservationRef
	peak   resource.Tuple // the peak of the usage reported while it runs (State.ObserveUsed)
	peaked bool           // a usage was reported
	// Speculation: a running task's backup attempt; a backup's task.
	backup, backupOf *TaskInfo
	change           *change   // a held resize or move (resize.go); nil for none
	measured         *measured // progress samples reported while it runs; nil: none
	id               uint64    // the state's number for this placement (TaskInfo.RunID)
	runAt            int       // its index in its job's running list while it runs (JobInfo.running)

	plan      stage.Profile  // what the task is expected to follow
	planned   time.Duration  // predicted duration, 0 when placed by its request
	usage     resource.Tuple // what fairness counts as held: the hold's peak
	devices   gpu.Allocation // the GPU devices it holds; zero for none
	planStart time.Duration  // with replanned: when plan begins, not the task's start
	replanned bool           // a change was committed: plan is the change's, from planStart
}

// reservationRef is a reservation on a node's timeline: its handle, and its start and
// profile as the timeline keeps them under it — kept here too, so that reading what a
// task holds (TaskInfo.HeldAt, HeldFrom) takes no lookup. A reservation never changes
// while it is held.
type reservationRef struct {
	handle stage.Handle
	start  time.Duration
	hold   stage.Profile
}

// measured is what a running task's progress reports said (progress.go): its latest
// samples, oldest first.
type measured struct {
	samples [keptSamples]predict.ProgressSample
	n       int // samples held, at most keptSamples
}

// RunID identifies the task's current placement — its run: the state numbers the
// placements it makes 1, 2, 3, ..., so a task placed again after a failure, an
// eviction or its node's loss has a new one, while resizes and moves
// (State.CommitChange) keep it. 0 when the task is not placed. Whoever keeps something
// about a run (what a scale-up round took from it, say) can tell it from a later run of
// the same task.
func (t *TaskInfo) RunID() uint64 {
	if t.run == nil {
		return 0
	}
	return t.run.id
}

// placedOn is the node placed task t is on; nil when it is not placed.
func (t *TaskInfo) placedOn() *NodeInfo {
	if t.run == nil {
		return nil
	}
	return t.run.node
}

// backs is, for a backup attempt, the task it backs up; nil for a task (and for a
// dropped attempt).
func (t *TaskInfo) backs() *TaskInfo {
	if t.run == nil {
		return nil
	}
	return t.run.backupOf
}

// backedBy is running task t's backup attempt, or nil.
func (t *TaskInfo) backedBy() *TaskInfo {
	if t.run == nil {
		return nil
	}
	return t.run.backup
}

// Devices is the GPU devices the placed task holds on its node (TaskSpec.GPU); zero
// when it holds none. The slice is the state's: read it, do not change it.
func (t *TaskInfo) Devices() gpu.Allocation {
	if t.run == nil {
		return gpu.Allocation{}
	}
	return t.run.devices
}

// Preemptible reports whether the task may be evicted to make room for another: it
// is not a backup attempt nor marked TaskSpec.NonPreemptible.
func (t *TaskInfo) Preemptible() bool { return t.backs() == nil && !t.nonPreemptible }

// Disrupted reports whether preemption evicted the task and it has not run again yet
// (a task booked for a future start is still disrupted until it starts).
func (t *TaskInfo) Disrupted() bool { return t.disrupted }

// Resumed reports whether the task, running, was preempted before its latest start:
// taking that start back (State.Withdraw) makes it disrupted again.
func (t *TaskInfo) Resumed() bool { return t.undisrupted }

// Failures counts the task's runs that failed (State.Fail: killed, out of memory, its
// container died), saturating at 255. Backup attempts that fail do not count, nor do
// evictions (preemption, a node leaving).
func (t *TaskInfo) Failures() int { return int(t.failures) }

// PendingSince is when the task last became pending: its submission (the later of
// TaskSpec.Submitted and the state's clock then), or its return to pending after an
// eviction, a failure or a rolled-back reservation. How long it has waited is the
// clock minus this.
func (t *TaskInfo) PendingSince() time.Duration { return t.pendingSince }

// ID names the task (BackupID(task) for a backup attempt).
func (t *TaskInfo) ID() string { return t.pe.ID }

// Job names the task's job.
func (t *TaskInfo) Job() string { return t.pe.Job }

// Spec is the task as it was submitted, with a copy of its inputs; the slices of its
// declared profile and GPU demand are the state's: do not change them. Hot paths read
// the fields they need (Inputs, Request, Deadline…) instead.
func (t *TaskInfo) Spec() TaskSpec {
	spec := TaskSpec{
		ID: t.pe.ID, Job: t.pe.Job, Key: t.Key(), Request: t.demand.request, Duration: t.demand.duration,
		Deadline: t.deadline, Inputs: slices.Clone(t.pe.Nodes), Priority: t.pe.Priority, Submitted: t.pe.Submitted,
		NonPreemptible: t.nonPreemptible, Class: t.class,
	}
	if t.extra != nil {
		spec.Profile, spec.GPU, spec.SLO = t.extra.profile, t.extra.gpu, t.extra.slo
	}
	return spec
}

// Key is the task's similarity key.
func (t *TaskInfo) Key() predict.Key {
	return predict.Key{Logic: t.key.logic, InputSize: t.key.size, Family: t.demand.family}
}

// taskKey is a task's predict.Key but its Family, which the tasks of a job share
// (demand): a TaskInfo stays in its size class (size_test.go).
type taskKey struct {
	logic string
	size  int64
}

// Inputs are the nodes holding the task's input (TaskSpec.Inputs). The slice is the
// pending index's own: read it, never change it.
func (t *TaskInfo) Inputs() []string { return t.pe.Nodes }

// Deadline is the task's deadline (TaskSpec.Deadline); 0 for none.
func (t *TaskInfo) Deadline() time.Duration { return t.deadline }

// Request is what the task asked for.
func (t *TaskInfo) Request() resource.Tuple { return t.demand.request }

// GPU is what the task asks of a node's GPU devices (TaskSpec.GPU). Its Models slice
// is the state's: read it, do not change it.
func (t *TaskInfo) GPU() gpu.Demand {
	if t.extra == nil {
		return gpu.Demand{}
	}
	return t.extra.gpu
}

// NeedsGPU reports whether the task asks for GPU devices (GPU is not zero), without
// copying its demand out: the question every candidate node of a placement asks.
func (t *TaskInfo) NeedsGPU() bool { return t.extra != nil && !t.extra.gpu.IsZero() }

// Declared is the task's declared stage profile; empty when it declared none.
func (t *TaskInfo) Declared() stage.Profile {
	if t.extra == nil {
		return stage.Profile{}
	}
	return t.extra.profile
}

// Class is the task's class (TaskSpec.Class): batch or latency-sensitive. A backup
// attempt has its task's.
func (t *TaskInfo) Class() TaskClass { return t.class }

// SLO is the longest run time, counted from the task's start, that still meets its
// service-level objective (TaskSpec.SLO); 0 for none, and always 0 for a batch task.
// A backup attempt has its task's.
func (t *TaskInfo) SLO() time.Duration {
	if t.extra == nil {
		return 0
	}
	return t.extra.slo
}

// State is where the task is in its life.
func (t *TaskInfo) State() TaskState { return t.state }

// Node is the node the task is reserved or running on; nil otherwise.
func (t *TaskInfo) Node() *NodeInfo { return t.placedOn() }

// Start is when the task's reservation begins (or when it reported starting).
func (t *TaskInfo) Start() time.Duration { return t.start }

// Plan is the profile the placed task is expected to follow: its declaration, the
// prediction, or its request held for its duration.
func (t *TaskInfo) Plan() stage.Profile {
	if t.run == nil {
		return stage.Profile{}
	}
	return t.run.plan
}

// Planned is the placed task's predicted duration; 0 when it was placed by its
// request.
func (t *TaskInfo) Planned() time.Duration {
	if t.run == nil {
		return 0
	}
	return t.run.planned
}

// Usage is what fairness counts the placed task as holding: the peak of its
// reservation.
func (t *TaskInfo) Usage() resource.Tuple {
	if t.run == nil {
		return resource.Tuple{}
	}
	return t.run.usage
}

// Backup is a running task's backup attempt, or nil.
func (t *TaskInfo) Backup() *TaskInfo { return t.backedBy() }

// BackupOf is, for a backup attempt, the task it backs up; nil for a task.
func (t *TaskInfo) BackupOf() *TaskInfo { return t.backs() }

// FailedOn lists the nodes where the task's backups failed. Read it; do not keep it.
func (t *TaskInfo) FailedOn() []string {
	if t.extra == nil {
		return nil
	}
	return t.extra.failedOn
}

// RequestProfile is the task's request held for its declared duration, or until it
// finishes (stage.Forever); built once for the tasks of its job asking the same, and
// safe to call concurrently.
func (t *TaskInfo) RequestProfile(schema *resource.Schema) stage.Profile {
	d := t.demand
	if p := d.profile.Load(); p != nil {
		return *p
	}
	dur := d.duration
	if dur == 0 {
		dur = stage.Forever
	}
	// Cannot fail: the request was validated at submission.
	p, _ := stage.Constant(schema, d.request, dur)
	d.profile.Store(&p)
	return p
}
