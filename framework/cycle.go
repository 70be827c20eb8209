package framework

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Mode is the kind of cycle under way.
type Mode uint8

const (
	// Pull: a node has room; which tasks start there (Heartbeat)?
	Pull Mode = iota
	// Push: a task is pending; which node takes it (Place)?
	Push
	// Probe: a host scheduler asks whether a task fits a node, or how a node scores,
	// without reserving (Framework.Filter, Framework.Score).
	Probe
)

func (m Mode) String() string {
	switch m {
	case Pull:
		return "pull"
	case Push:
		return "push"
	case Probe:
		return "probe"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Cycle is one scheduling cycle — a heartbeat, a placement or a probe — and holds
// its scratch: plugins read what they need of it and never keep it.
type Cycle struct {
	fw    *Framework
	mode  Mode
	now   time.Duration
	gen   uint64
	node  *cluster.NodeInfo // pull: the heartbeat's node
	d     *Decision         // pull: what the heartbeat decided so far
	moves uint64            // assignments added to or withdrawn from d so far (Moves)

	free   resource.Tuple // pull: the node's free amount at now, while freeOK
	freeOK bool

	evicted []Eviction // evictions not yet handed to an Assignment

	// allow, in host mode's PostFilter, rules out the nodes the host scheduler's
	// own filters refused (Framework.PostFilter).
	allow func(*cluster.NodeInfo) bool
}

// State is the cluster state the cycle decides on.
func (c *Cycle) State() *cluster.State { return c.fw.state }

// Mode is the kind of cycle.
func (c *Cycle) Mode() Mode { return c.mode }

// Now is the time of the cycle.
func (c *Cycle) Now() time.Duration { return c.now }

// Gen numbers the cycle: plugins keep per-cycle scratch stamped with it (it grows from
// cycle to cycle; probes share the number of the cycle before them).
func (c *Cycle) Gen() uint64 { return c.gen }

// Moves counts the changes to the Decision's assignments so far in the cycle: each
// assignment added, and each withdrawn (a task started in this heartbeat and evicted).
// A plugin that remembers an answer depending on what the heartbeat started (a gate
// counting starts) asks afresh once it changed: the number of assignments alone may
// come back to the same value after a withdrawal and an addition.
func (c *Cycle) Moves() uint64 { return c.moves }

// Decision is what a pull cycle decided so far; nil in other modes.
func (c *Cycle) Decision() *Decision { return c.d }

// Warn logs an unexpected event at warn level, when the framework has a logger.
func (c *Cycle) Warn(msg string, args ...any) { c.fw.warn(msg, args...) }

// prepare starts attempt a of task t on node n (nil in push mode until a node is
// chosen) from start: the demand step.
func (c *Cycle) prepare(a *Attempt, t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration, level fairness.Level, backup bool) {
	*a = Attempt{Task: t, Node: n, Start: start, Level: level, Backup: backup}
	a.Demand = c.fw.demand.Demand(c, t)
}

// preFilter runs the PreFilter plugins.
func (c *Cycle) preFilter(a *Attempt) Status {
	for _, p := range c.fw.preFilters {
		if st := p.PreFilter(c, a); !st.OK() {
			return named(st, p)
		}
	}
	return Status{}
}

// Filter runs the Filter plugins on attempt a (its Task, Demand, Node and Start set)
// and reports the first refusal; a.Result holds the match verdict. PostFilter plugins
// call it on the placements they propose.
func (c *Cycle) Filter(a *Attempt) Status {
	a.Result = match.Result{Code: match.Fit, Stage: -1, Dim: -1}
	a.Devices = gpu.Allocation{}
	if c.allow != nil && a.Node != nil && !c.allow(a.Node) {
		return Status{Code: Unschedulable, Reason: PluginRefused, Plugin: "host"}
	}
	for _, p := range c.fw.filters {
		if st := p.Filter(c, a); !st.OK() {
			return named(st, p)
		}
	}
	return Status{}
}

func named(st Status, p Plugin) Status {
	if st.Plugin == "" {
		st.Plugin = p.Name()
	}
	if st.Code == Error {
		st.Code = Unschedulable
	}
	if st.Reason == NoReason {
		st.Reason = PluginRefused
	}
	return st
}

// chooseDevices lets the Score plugins choose the GPU devices of attempt a, which
// passed the filters but was not scored (a host's Reserve, a PostFilter's proposal),
// as they do for push placement's candidates (Attempt.Devices).
func (c *Cycle) chooseDevices(a *Attempt) {
	if !a.Task.GPU().IsZero() {
		c.score(a)
	}
}

// score is attempt a's total over the Score plugins, without normalisation.
func (c *Cycle) score(a *Attempt) float64 {
	total := 0.0
	for _, p := range c.fw.scores {
		total += finite(p.Score(c, a))
	}
	return total
}

func finite(x float64) float64 {
	if x != x {
		return math.Inf(-1)
	}
	return x
}

// reserve reserves attempt a: the state, then the Reserve plugins. On a refusal the
// reservation is rolled back and nothing has changed.
func (c *Cycle) reserve(a *Attempt) Status {
	st := c.fw.state
	r := cluster.Reservation{Start: a.Start, Hold: a.Demand.Hold, Plan: a.Demand.Plan, Predicted: a.Demand.Predicted, Allowance: a.Result.Allowance, Devices: a.Devices}
	if a.Backup {
		b, err := st.ReserveBackup(a.Task, a.Node, r)
		if err != nil {
			return Refuse(NoRoom)
		}
		a.Task = b
	} else if err := st.Reserve(a.Task, a.Node, r); err != nil {
		// It should not, after a successful match.
		c.fw.warn("reservation refused after a match", "task", a.Task.ID(), "node", a.Node.ID(), "err", err)
		return Refuse(NoRoom)
	}
	c.freeOK = false
	for i, p := range c.fw.reserves {
		if s := p.Reserve(c, a); !s.OK() {
			c.rollback(a, i)
			return named(s, p)
		}
	}
	return Status{}
}

// claim reserves attempt a (reserve), asks the Permit plugins and commits it. On Wait
// the task stays Reserved; on any refusal the reservation is rolled back and nothing
// has changed.
func (c *Cycle) claim(a *Attempt) (Assignment, Status) {
	if s := c.reserve(a); !s.OK() {
		return Assignment{}, s
	}
	var timeout time.Duration
	waits, by := false, ""
	for _, p := range c.fw.permits {
		s, wait := p.Permit(c, a)
		switch {
		case s.Code == Wait:
			if !waits || wait < timeout {
				timeout = wait
			}
			if !waits {
				by = p.Name()
			}
			waits = true
		case !s.OK():
			c.rollback(a, len(c.fw.reserves))
			s = named(s, p)
			s.Reason = PermitDenied
			return Assignment{}, s
		}
	}
	if waits {
		c.fw.waiting[a.Task.ID()] = &waiter{a: *a, deadline: stage.AddSat(c.now, max(timeout, 0))}
		return Assignment{}, Status{Code: Wait, Reason: PermitWaiting, Plugin: by}
	}
	return c.commit(a), Status{}
}

// commit makes reserved attempt a Running and returns its assignment.
func (c *Cycle) commit(a *Attempt) Assignment {
	_ = c.fw.state.Commit(a.Task) // a reserved task always commits
	as := assignment(a)
	as.Evicted = c.takeEvicted(as.Task)
	if c.fw.logger != nil {
		c.fw.debug("task placed", "task", as.Task, "node", as.Node, "start", as.Start, "predicted", as.Predicted, "result", as.Result.Code, "locality", as.Locality, "backup of", as.BackupOf)
	}
	return as
}

// assignment is what attempt a places.
func assignment(a *Attempt) Assignment {
	as := Assignment{
		Task: a.Task.ID(), Job: a.Task.Job(), Node: a.Node.ID(), Start: a.Start,
		Profile: a.Demand.Plan, Predicted: a.Demand.Predicted, Result: a.Result, Locality: a.Level,
		Devices: a.Task.Devices().Clone(),
	}
	if b := a.Task.BackupOf(); b != nil {
		as.BackupOf = b.ID()
	}
	return as
}

// Victim is a running task a plugin evicts, and why (Preempted or Reclaimed).
type Victim struct {
	Task   *cluster.TaskInfo
	Reason Reason
}

// Evict preempts victims to make room for task t (PostFilter and Pass plugins that
// preempt): each is evicted (cluster.State.Preempt), and the evictions go with t's
// Assignment, or with the Decision or the PlacementError when t does not start in this
// cycle. A victim that started in this same heartbeat (Started) is withdrawn instead
// (cluster.State.Withdraw): its assignment leaves the Decision and it is pending again,
// as if it had not been placed — no eviction to report, no disruption counted. Evict
// checks everything first and evicts none when one may not be evicted: a nil or
// foreign task, a victim not running, listed twice, a backup, a non-preemptible one,
// or one past its job's disruption budget.
func (c *Cycle) Evict(t *cluster.TaskInfo, victims []Victim) error {
	st := c.fw.state
	if t == nil || !c.owns(t) {
		return fmt.Errorf("framework: evict for a task the state does not hold: %w", cluster.ErrUnknownTask)
	}
	per := map[*cluster.JobInfo]int{}
	seen := map[*cluster.TaskInfo]bool{}
	for _, v := range victims {
		if v.Task == nil || !c.owns(v.Task) {
			return fmt.Errorf("framework: evict a task the state does not hold: %w", cluster.ErrUnknownTask)
		}
		j, _ := st.Job(v.Task.Job())
		if seen[v.Task] || v.Task.State() != cluster.Running || !v.Task.Preemptible() {
			return fmt.Errorf("framework: evict task %q: it is %v, preemptible %v, listed twice %v: %w", v.Task.ID(), v.Task.State(), v.Task.Preemptible(), seen[v.Task], cluster.ErrState)
		}
		seen[v.Task] = true
		if c.Started(v.Task) {
			continue // withdrawn: Restarted counts it if it was down before
		}
		if per[j]++; !j.MayDisrupt(per[j] + c.Restarted(j)) {
			return fmt.Errorf("framework: evict task %q: job %q's disruption budget: %w", v.Task.ID(), j.ID(), cluster.ErrInvalid)
		}
	}
	for _, v := range victims {
		if i := c.startedAt(v.Task); i >= 0 {
			c.evicted = append(c.evicted, c.d.Assignments[i].Evicted...)
			c.d.Assignments = slices.Delete(c.d.Assignments, i, i+1)
			c.moves++
			_ = st.Withdraw(v.Task) // checked above
			continue
		}
		node := v.Task.Node().ID()
		_ = st.Preempt(v.Task) // checked above
		c.evicted = append(c.evicted, Eviction{Task: v.Task.ID(), Job: v.Task.Job(), Node: node, Reason: v.Reason, For: t.ID()})
	}
	c.freeOK = false
	if c.fw.logger != nil {
		c.fw.debug("tasks evicted", "for", t.ID(), "victims", len(victims))
	}
	return nil
}

// owns reports whether t is a task of the cycle's state.
func (c *Cycle) owns(t *cluster.TaskInfo) bool {
	u, ok := c.fw.state.Task(t.ID())
	return ok && u == t
}

// Restarted counts job j's tasks that were preempted and started again in this pull
// cycle: the embedder has not been told yet, so for its disruption budget they are
// still down (cluster.TaskInfo.Resumed).
func (c *Cycle) Restarted(j *cluster.JobInfo) int {
	if c.d == nil {
		return 0
	}
	n := 0
	for _, a := range c.d.Assignments {
		if a.Job != j.ID() || a.BackupOf != "" {
			continue
		}
		if t, ok := c.fw.state.Task(a.Task); ok && t.State() == cluster.Running && t.Resumed() {
			n++
		}
	}
	return n
}

// Started reports whether task t started in this pull cycle: its assignment is in the
// Decision (the embedder has not been told yet). Evicting it withdraws it instead.
func (c *Cycle) Started(t *cluster.TaskInfo) bool { return c.startedAt(t) >= 0 }

// startedAt is the index in the pull cycle's Decision of task t's assignment, or -1.
func (c *Cycle) startedAt(t *cluster.TaskInfo) int {
	if c.d == nil {
		return -1
	}
	return slices.IndexFunc(c.d.Assignments, func(a Assignment) bool { return a.Task == t.ID() })
}

// Suspend takes placed task t's reservation off its node's timeline for a what-if
// question (cluster.State.Suspend): Filter then sees the node as if t were gone.
// Every suspension must be resumed (Resume) before the plugin returns.
func (c *Cycle) Suspend(t *cluster.TaskInfo) error {
	c.freeOK = false
	return c.fw.state.Suspend(t)
}

// Resume puts suspended task t's reservation back (Suspend).
func (c *Cycle) Resume(t *cluster.TaskInfo) error {
	c.freeOK = false
	return c.fw.state.Resume(t)
}

// Prepare builds an attempt of pending task t on node n from start — its demand, and
// the PreFilter plugins' verdict — for Pass plugins that look for a node or make room
// before they Try (preemption). The attempt returned is the caller's copy; building it
// allocates nothing beyond what the demand step does. Prepare may be called from
// concurrent Filter plugins and from within a PreFilter plugin.
func (c *Cycle) Prepare(t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) (Attempt, Status) {
	level := fairness.NodeLocal
	if n != nil {
		level = c.fw.state.Locality(t, n)
	}
	// The attempt passes through the plugins' interfaces, so a local one would move to
	// the heap: it is built in the framework's, unless another Prepare holds that (one
	// inside a PreFilter plugin's, or Filter plugins preparing concurrently).
	a := &c.fw.prepared
	if c.fw.preparing.CompareAndSwap(false, true) {
		defer c.fw.preparing.Store(false)
	} else {
		a = new(Attempt)
	}
	c.prepare(a, t, n, start, level, false)
	st := c.preFilter(a)
	return *a, st
}

// takeEvicted removes and returns the evictions made for task id.
func (c *Cycle) takeEvicted(id string) []Eviction {
	var out []Eviction
	keep := c.evicted[:0]
	for _, e := range c.evicted {
		if e.For == id {
			out = append(out, e)
		} else {
			keep = append(keep, e)
		}
	}
	c.evicted = keep
	return out
}

// rollback undoes a reservation: the first n Reserve plugins' Unreserve, in reverse
// order, then the state's.
func (c *Cycle) rollback(a *Attempt, n int) {
	for i := n - 1; i >= 0; i-- {
		c.fw.reserves[i].Unreserve(c, a)
	}
	_ = c.fw.state.Unreserve(a.Task)
	c.freeOK = false
}

// Free is the pull cycle's node's free resources at now, as its timeline holds them.
func (c *Cycle) Free() resource.Tuple {
	if !c.freeOK {
		c.free, c.freeOK = c.node.Timeline().FreeAt(c.now), true
	}
	return c.free
}

// FreeOn is node n's free resources at now, as its timeline holds them: Free for the
// pull cycle's node, read afresh for any other. NodeGate plugins read it, so that
// Open can ask them about another node.
func (c *Cycle) FreeOn(n *cluster.NodeInfo) resource.Tuple {
	if n == c.node {
		return c.Free()
	}
	return n.Timeline().FreeAt(c.now)
}

// Room reports whether the pull cycle's node may take another task (every NodeGate
// plugin agrees); otherwise it sets the Decision's Stop.
func (c *Cycle) Room() bool { return c.RoomIgnoring(NoReason) }

// Open reports whether every NodeGate plugin would let node n take a task now, were
// its heartbeat under way: a Pass plugin asks it about other nodes than the pull
// cycle's own (delay scheduling, to tell whether a node holding a job's input could
// take its task). Unlike Room, it changes nothing in the Decision.
func (c *Cycle) Open(n *cluster.NodeInfo) bool {
	for _, p := range c.fw.gates {
		if st := p.Gate(c, n); !st.OK() {
			return false
		}
	}
	return true
}

// RoomIgnoring is Room with a refusal for reason r taken as agreement: preemption asks
// RoomIgnoring(NodeBusy), since a node short of idle room is what it makes room on.
func (c *Cycle) RoomIgnoring(r Reason) bool {
	for _, p := range c.fw.gates {
		if st := p.Gate(c, c.node); !st.OK() && (r == NoReason || st.Reason != r) {
			c.d.Stop = st.Reason
			return false
		}
	}
	return true
}

// FilterPass runs the JobFilter plugins' pass check; false (with the Decision's Stop
// set) when the pass should not walk the jobs.
func (c *Cycle) FilterPass() bool {
	for _, p := range c.fw.jobFilters {
		if st := p.FilterPass(c, c.node); !st.OK() {
			c.d.Stop = st.Reason
			return false
		}
	}
	return true
}

// FilterJob runs the JobFilter plugins on job j; on a refusal it passes the job over
// for the rest of the heartbeat and returns false.
func (c *Cycle) FilterJob(j *cluster.JobInfo) bool { return c.CheckJob(j).OK() }

// CheckJob is FilterJob returning the first refusal's status (named after the plugin
// that refused), or Success when every JobFilter plugin lets job j through. A job
// refused is passed over, as by FilterJob.
func (c *Cycle) CheckJob(j *cluster.JobInfo) Status {
	for _, p := range c.fw.jobFilters {
		if st := p.FilterJob(c, j, c.node); !st.OK() {
			st = named(st, p)
			c.SkipJob(j, Skip{Job: j.ID(), Reason: st.Reason, Plugin: st.Plugin})
			return st
		}
	}
	return Status{}
}

// Skipped reports whether job j was passed over in this heartbeat.
func (c *Cycle) Skipped(j *cluster.JobInfo) bool {
	i := j.Index()
	return i < len(c.fw.passed) && c.fw.passed[i] == c.gen
}

// SkipJob passes job j over for the rest of the heartbeat; sk, when its Reason is
// set, is recorded in the Decision as a skip.
func (c *Cycle) SkipJob(j *cluster.JobInfo, sk Skip) {
	if n := c.fw.state.JobSlots(); len(c.fw.passed) < n {
		c.fw.passed = append(c.fw.passed, make([]uint64, n-len(c.fw.passed))...)
	}
	c.fw.passed[j.Index()] = c.gen
	if sk.Reason != NoReason {
		c.d.skip(sk)
	}
}

// Try is a pull cycle's task step: task t of job j is offered the heartbeat's node now
// at locality level — demand, PreFilter, Filter, Reserve, Permit, commit. On success
// the assignment joins the Decision. Otherwise the Decision records a skip saying
// why, the JobFilter plugins learn of the refusal, and the status says why; a Closed
// status means the heartbeat should end. Whether the job is then passed over (or
// offers another of its tasks) is the pass's choice (SkipJob).
func (c *Cycle) Try(j *cluster.JobInfo, t *cluster.TaskInfo, level fairness.Level) Status {
	a := &c.fw.scratch
	c.prepare(a, t, c.node, c.now, level, false)
	st := c.run(a)
	if st.OK() {
		return st
	}
	for _, p := range c.fw.jobFilters {
		p.Refused(c, a, st)
	}
	c.d.skip(Skip{Job: j.ID(), Task: t.ID(), Reason: c.explained(st, a).Reason, Plugin: st.Plugin, Result: a.Result})
	if st.Code == Closed || st.Reason == PolicyStop {
		st.Code = Closed
		c.d.Stop = st.Reason
	}
	return st
}

// TryAt is a pull cycle's placement of prepared attempt a (Prepare) on any node from
// any start — a future start elsewhere (a booking), say — with a.Node and a.Start set
// and a.Result from Filter, which the caller ran and passed: Reserve, Permit, commit.
// On success the assignment joins the Decision; otherwise nothing changed and the
// status says why.
func (c *Cycle) TryAt(a *Attempt) Status {
	if a.Node == nil {
		return Refuse(NoRoom)
	}
	as, st := c.claim(a)
	if st.OK() {
		c.assign(as)
		c.moves++
	}
	return st
}

// assign adds as to the heartbeat's Decision. The slice is the caller's once returned,
// so every heartbeat starts a new one: with room for as many assignments as the
// previous heartbeat made, so that it seldom grows.
func (c *Cycle) assign(as Assignment) {
	if c.d.Assignments == nil {
		c.d.Assignments = make([]Assignment, 0, max(c.fw.started, 1))
	}
	c.d.Assignments = append(c.d.Assignments, as)
}

// Tried is the attempt of the latest Try or TryBackup — its demand, node and match
// result — valid until the next one. Read it; do not keep it.
func (c *Cycle) Tried() *Attempt { return &c.fw.scratch }

// TryBackup is a pull cycle's backup step: a backup attempt of running task t is
// offered the heartbeat's node now, through the same steps as Try. On success the
// assignment (Task cluster.BackupID(t), BackupOf t) joins the Decision; a refusal is
// not recorded.
func (c *Cycle) TryBackup(t *cluster.TaskInfo) Status {
	a := &c.fw.scratch
	c.prepare(a, t, c.node, c.now, c.fw.state.Locality(t, c.node), true)
	return c.run(a)
}

// run takes pull attempt a through PreFilter, Filter, Reserve, Permit and commit; on
// success its assignment joins the Decision.
func (c *Cycle) run(a *Attempt) Status {
	st := c.preFilter(a)
	if st.OK() {
		st = c.Filter(a)
	}
	if !st.OK() {
		return st
	}
	as, st := c.claim(a)
	if st.OK() {
		c.assign(as)
		c.moves++
	}
	return st
}

// waiter is a task a Permit plugin keeps reserved.
type waiter struct {
	a        Attempt
	deadline time.Duration
}

// Waiting returns the tasks Permit plugins keep reserved, in ID order. A task that
// left its reservation by other means (cancelled, its node removed) is no longer
// listed.
func (c *Cycle) Waiting() []*cluster.TaskInfo {
	out := make([]*cluster.TaskInfo, 0, len(c.fw.waiting))
	for _, w := range c.fw.waiting {
		if w.valid() {
			out = append(out, w.a.Task)
		}
	}
	slices.SortFunc(out, func(a, b *cluster.TaskInfo) int { return strings.Compare(a.ID(), b.ID()) })
	return out
}

// Allow commits waiting task id, to start now: a reservation made earlier moves to
// begin now (cluster.State.MoveStarts). Where its node has no room for that, Allow
// fails and the task keeps waiting. Its assignment joins the Decision in a pull cycle
// (its node may differ from the heartbeat's) or waits in Framework.TakePermitted
// otherwise.
func (c *Cycle) Allow(id string) error { return c.AllowAll(id) }

// AllowAll commits waiting tasks ids together, all or none, to start now: their
// reservations made earlier move to begin now, together (cluster.State.MoveStarts);
// when one does not fit there, or one is not waiting, AllowAll fails and every task
// keeps waiting. A gang allows its members this way.
func (c *Cycle) AllowAll(ids ...string) error {
	ws := make([]*waiter, 0, len(ids))
	var moves []cluster.Move
	for _, id := range ids {
		w, ok := c.fw.waiting[id]
		if !ok || !w.valid() || slices.Contains(ws, w) {
			return fmt.Errorf("framework: allow task %q: not waiting: %w", id, cluster.ErrState)
		}
		ws = append(ws, w)
		if w.a.Start < c.now {
			moves = append(moves, cluster.Move{Task: w.a.Task, Start: c.now, Allow: w.a.Result.Allowance})
		}
	}
	if len(moves) > 0 {
		if err := c.fw.state.MoveStarts(moves...); err != nil {
			return fmt.Errorf("framework: allow %d waiting task(s): %w", len(ids), err)
		}
		c.freeOK = false
	}
	for i, id := range ids {
		delete(c.fw.waiting, id)
		w := ws[i]
		w.a.Start = max(w.a.Start, c.now)
		as := c.commit(&w.a)
		if c.d != nil {
			c.assign(as)
			c.moves++
		} else {
			c.fw.permitted = append(c.fw.permitted, as)
		}
	}
	return nil
}

// Reject rolls waiting task id's reservation back: it is pending again.
func (c *Cycle) Reject(id string) error {
	w, err := c.waiter(id, "reject")
	if err != nil {
		return err
	}
	c.rollback(&w.a, len(c.fw.reserves))
	return nil
}

// waiter takes waiting task id off the waiting list. A task that left its
// reservation by other means (cancelled, its node removed) is dropped from the list
// and reported as not waiting.
func (c *Cycle) waiter(id, event string) (*waiter, error) {
	w, ok := c.fw.waiting[id]
	if ok {
		delete(c.fw.waiting, id)
		ok = w.valid()
	}
	if !ok {
		return nil, fmt.Errorf("framework: %s task %q: not waiting: %w", event, id, cluster.ErrState)
	}
	return w, nil
}

// valid reports whether the waiting task still holds the reservation it waits with.
func (w *waiter) valid() bool {
	return w.a.Task.State() == cluster.Reserved && w.a.Task.Node() == w.a.Node
}

// expire rejects the waiting tasks whose wait is over, in ID order, and forgets those
// that left their reservation by other means.
func (c *Cycle) expire() {
	if len(c.fw.waiting) == 0 {
		return
	}
	for id, w := range c.fw.waiting {
		if !w.valid() {
			delete(c.fw.waiting, id)
		}
	}
	for _, t := range c.Waiting() {
		// A rejection may reject others (a gang's members go together).
		if w, ok := c.fw.waiting[t.ID()]; ok && w.deadline <= c.now {
			_ = c.Reject(t.ID())
		}
	}
}

// Expire lets time pass for the tasks Permit plugins keep waiting: those whose wait
// is over at now are rejected (rolled back, pending again), as at the start of every
// cycle. A push embedder with nothing to place calls it so that waits still end.
func (f *Framework) Expire(now time.Duration) {
	c := f.cycle(Push, now, nil)
	c.expire()
}

// TakePermitted returns, and forgets, the assignments of waiting tasks allowed outside
// a pull cycle.
func (f *Framework) TakePermitted() []Assignment {
	out := f.permitted
	f.permitted = nil
	return out
}
