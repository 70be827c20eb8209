package cluster

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// This file is the task life cycle: two-phase reservations (Reserve, Commit,
// Unreserve), eviction and failure (back to pending), finish and cancellation, and
// speculative backup attempts, which follow the same two phases.

// Reservation is what a placement holds on a node.
type Reservation struct {
	// Start is when the reservation begins: now, or later for a future start.
	Start time.Duration
	// Hold is what is reserved on the node's timeline.
	Hold stage.Profile
	// Plan is the profile the task is expected to follow (Hold without the part held
	// until the task finishes); empty means Hold.
	Plan stage.Profile
	// Predicted reports a stage-by-stage plan (a prediction or a declaration) rather
	// than the request.
	Predicted bool
	// Allowance is how far below zero the reservation may take each free amount
	// (compression, as the matcher reported it in match.Result.Allowance).
	Allowance resource.Tuple
	// Devices is the GPU devices to hold for the task's GPU demand (TaskSpec.GPU), as
	// a GPU scorer chose them; zero lets the state choose (gpu.Devices.BestFit).
	Devices gpu.Allocation
}

// ownOn checks that t and n, the node it is to be held on (required), are this
// state's.
func (s *State) ownOn(t *TaskInfo, n *NodeInfo) error {
	if err := s.own(t, n); err != nil {
		return err
	}
	if n == nil {
		return fmt.Errorf("cluster: task %q: no node: %w", t.pe.ID, ErrUnknownNode)
	}
	return nil
}

// own checks that t and n (nil: none to check) are this state's: t is held
// (TaskInfo.held, so that it is the one s.tasks has under its ID) by a job of s.
func (s *State) own(t *TaskInfo, n *NodeInfo) error {
	if t == nil || !t.held || t.demand == nil || t.demand.owner != s {
		return fmt.Errorf("cluster: task: %w", ErrUnknownTask)
	}
	if n != nil && !s.holds(n) {
		return fmt.Errorf("cluster: node %q: %w", n.spec.ID, ErrUnknownNode)
	}
	return nil
}

// Reserve holds r on node n for pending task t, tentatively: the timeline, the free
// index and the fairness usage see it at once, and t is Reserved until Commit or
// Unreserve. A refused reservation (the timeline has no room, a malformed profile)
// changes nothing.
func (s *State) Reserve(t *TaskInfo, n *NodeInfo, r Reservation) error {
	if err := s.ownOn(t, n); err != nil {
		return err
	}
	if t.state != Pending || t.backs() != nil {
		return fmt.Errorf("cluster: reserve task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	h, devs, err := s.hold(t, n, r)
	if err != nil {
		return fmt.Errorf("cluster: reserve task %q on node %q: %w", t.pe.ID, n.spec.ID, err)
	}
	usage := r.Hold.Peak()
	s.dequeue(t, true)
	s.treeApply(treeOp{kind: opStart, job: t.pe.Job, a: t.demand.request, b: usage})
	s.place(t, n, h, devs, r, usage)
	s.setState(t, Reserved)
	return nil
}

// hold reserves r on n's timeline, and the GPU devices task t asks for: those of
// r.Devices, or the best fit. On an error nothing is held.
func (s *State) hold(t *TaskInfo, n *NodeInfo, r Reservation) (stage.Handle, gpu.Allocation, error) {
	if r.Start < 0 {
		return 0, gpu.Allocation{}, fmt.Errorf("start %v: %w", r.Start, ErrInvalid)
	}
	if r.Hold.Len() == 0 {
		return 0, gpu.Allocation{}, fmt.Errorf("empty profile: %w", ErrInvalid)
	}
	devs, err := s.devices(t, n, r.Devices)
	if err != nil {
		return 0, gpu.Allocation{}, err
	}
	if err := n.gpus.Take(devs); err != nil {
		return 0, gpu.Allocation{}, fmt.Errorf("devices %v: %w: %w", devs.Devices, stage.ErrNoRoom, err)
	}
	h, err := n.tl.Reserve(r.Start, r.Hold, r.Allowance)
	if err != nil {
		_ = n.gpus.Release(devs)
		return 0, gpu.Allocation{}, err
	}
	return h, devs, nil
}

// devices is the allocation of task t's GPU demand on node n: a, when it is one of the
// demand (its count and share, on a model the demand allows), or the best fit when a
// is zero.
func (s *State) devices(t *TaskInfo, n *NodeInfo, a gpu.Allocation) (gpu.Allocation, error) {
	d := t.GPU()
	switch {
	case d.IsZero() && a.IsZero():
		return gpu.Allocation{}, nil
	case d.IsZero() || !d.Allows(n.gpus.Model()):
		return gpu.Allocation{}, fmt.Errorf("devices %v for a demand of %v on model %q: %w", a.Devices, d, n.gpus.Model(), ErrInvalid)
	case a.IsZero():
		best, ok := n.gpus.BestFit(d)
		if !ok {
			return gpu.Allocation{}, fmt.Errorf("%v on %d devices with %d free in all: %w", d, n.gpus.Len(), n.gpus.FreeTotal(), stage.ErrNoRoom)
		}
		return best, nil
	case len(a.Devices) != d.Count || a.Milli != d.Milli:
		return gpu.Allocation{}, fmt.Errorf("devices %v of %d each for a demand of %v: %w", a.Devices, a.Milli, d, ErrInvalid)
	}
	return a.Clone(), nil
}

// place records that t holds reservation h of r, and devices devs, on n: it takes a
// placement record (State.placement).
func (s *State) place(t *TaskInfo, n *NodeInfo, h stage.Handle, devs gpu.Allocation, r Reservation, usage resource.Tuple) {
	plan := r.Plan
	if plan.Len() == 0 {
		plan = r.Hold
	}
	p := s.placement()
	s.runs++
	p.node, p.plan, p.usage, p.devices, p.id = n, plan, usage, devs, s.runs
	p.reservationRef = reservationRef{handle: h, start: r.Start, hold: r.Hold}
	if r.Predicted {
		p.planned = plan.Duration()
	}
	t.run, t.start = p, r.Start
	n.tasks[t.pe.ID] = t
	s.reindex(n)
	s.touch(n)
}

// keptPlacements bounds the placement records the state keeps for the next
// reservations, so that placing and releasing tasks allocates nothing in the steady
// state while the records of a burst of releases are not held for ever.
const keptPlacements = 256

// placement is a placement record to fill: one given back, or a new one.
func (s *State) placement() *placement {
	if k := len(s.spare); k > 0 {
		p := s.spare[k-1]
		s.spare[k-1] = nil
		s.spare = s.spare[:k-1]
		return p
	}
	return &placement{}
}

// unplace gives placed task t's placement record back: t is on no node.
func (s *State) unplace(t *TaskInfo) {
	p := t.run
	t.run = nil
	*p = placement{}
	if len(s.spare) < keptPlacements {
		s.spare = append(s.spare, p)
	}
}

// ReserveBackup holds r on node n for a backup attempt of running task t,
// tentatively, and returns the attempt (ID BackupID(t.ID()), Reserved until Commit or
// Unreserve). It fails, changing nothing, when t is not running, already has a
// backup, is itself a backup or is named like one, or when n is t's own node.
func (s *State) ReserveBackup(t *TaskInfo, n *NodeInfo, r Reservation) (*TaskInfo, error) {
	if err := s.ownOn(t, n); err != nil {
		return nil, err
	}
	id := BackupID(t.pe.ID)
	switch {
	case t.state != Running || t.backs() != nil || t.backedBy() != nil || t.run.change != nil:
		return nil, fmt.Errorf("cluster: back up task %q: it is %v, backed up or changing: %w", t.pe.ID, t.state, ErrState)
	case strings.HasSuffix(t.pe.ID, BackupSuffix) || s.tasks[id] != nil:
		return nil, fmt.Errorf("cluster: back up task %q: %q is taken: %w", t.pe.ID, id, ErrDuplicate)
	case t.run.node == n:
		return nil, fmt.Errorf("cluster: back up task %q on its own node %q: %w", t.pe.ID, n.spec.ID, ErrInvalid)
	}
	h, devs, err := s.hold(t, n, r)
	if err != nil {
		return nil, fmt.Errorf("cluster: back up task %q on node %q: %w", t.pe.ID, n.spec.ID, err)
	}
	b := &TaskInfo{key: t.key, demand: t.demand, deadline: t.deadline, state: Reserved, nonPreemptible: t.nonPreemptible, class: t.class}
	b.pe = fairness.PendingEntry[*TaskInfo]{ID: id, Job: t.pe.Job, Priority: t.pe.Priority, Submitted: t.pe.Submitted, Nodes: t.pe.Nodes, Owner: b}
	if t.extra != nil {
		b.extra = &taskExtra{profile: t.extra.profile, gpu: t.extra.gpu, slo: t.extra.slo} // not the nodes where t's backups failed
	}
	usage := r.Hold.Peak()
	s.treeApply(treeOp{kind: opAllocate, job: t.pe.Job, a: usage})
	s.tasks[id], b.held = b, true
	s.place(b, n, h, devs, r, usage)
	b.run.backupOf, t.run.backup = t, b
	return b, nil
}

// Move is one reservation to move (MoveStarts): reserved task Task, to begin at Start
// with compression allowance Allow.
type Move struct {
	Task  *TaskInfo
	Start time.Duration
	Allow resource.Tuple
}

// MoveStarts moves reserved tasks' reservations, each on its own node, to begin at
// their new starts, all or none: every task's reservation is taken off first, then
// each profile must fit at its new start beside the others already moved; if one does
// not, everything is as it was. Tasks a Permit plugin kept waiting start when they are
// allowed, not when they were reserved: their reservations move with them
// (framework.Cycle.Allow), a gang's together.
func (s *State) MoveStarts(moves ...Move) error {
	seen := make(map[*TaskInfo]bool, len(moves))
	for _, m := range moves {
		t := m.Task
		if err := s.own(t, nil); err != nil {
			return err
		}
		if t.state != Reserved || seen[t] {
			return fmt.Errorf("cluster: move the start of task %q: it is %v, or listed twice: %w", t.pe.ID, t.state, ErrState)
		}
		if m.Start < 0 {
			return fmt.Errorf("cluster: move the start of task %q to %v: %w", t.pe.ID, m.Start, ErrInvalid)
		}
		seen[t] = true
	}
	for _, m := range moves {
		_ = m.Task.run.node.tl.Suspend(m.Task.run.handle) // held: the task is Reserved
	}
	moved := make([]stage.Handle, 0, len(moves))
	var err error
	for _, m := range moves {
		n := m.Task.run.node
		_, hold, _ := n.tl.Lookup(m.Task.run.handle)
		h, e := n.tl.Reserve(m.Start, hold, m.Allow)
		if e != nil {
			err = fmt.Errorf("cluster: move the start of task %q to %v on node %q: %w", m.Task.pe.ID, m.Start, n.spec.ID, e)
			break
		}
		moved = append(moved, h)
	}
	if err != nil {
		for i, h := range moved {
			_ = moves[i].Task.run.node.tl.Release(h)
		}
		for _, m := range moves {
			_ = m.Task.run.node.tl.Resume(m.Task.run.handle)
		}
		return err
	}
	for i, m := range moves {
		n := m.Task.run.node
		_ = n.tl.Release(m.Task.run.handle)                                            // the suspended old reservation
		m.Task.run.handle, m.Task.run.start, m.Task.start = moved[i], m.Start, m.Start // the same profile
		s.reindex(n)
		s.touch(n)
	}
	return nil
}

// Commit makes reserved task (or backup attempt) t Running, or Booked when its
// reservation starts after the clock.
func (s *State) Commit(t *TaskInfo) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Reserved {
		return fmt.Errorf("cluster: commit task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if t.backs() != nil {
		t.state = Running
		return nil
	}
	if t.start > s.clock {
		s.setState(t, Booked)
		s.booked.ReplaceOrInsert(t)
		return nil
	}
	s.run(t)
	return nil
}

// run makes committed task t Running; a preempted task's disruption ends.
func (s *State) run(t *TaskInfo) {
	t.undisrupted = t.disrupted
	s.restored(t)
	j := s.jobs[t.pe.Job]
	t.run.runAt = len(j.running)
	j.running = append(j.running, t)
	if len(j.running)+j.finished >= j.spec.MinMember {
		j.gathered = true
	}
	if len(j.running) == 1 { // busy from now on (it is there already when it had one running)
		j.busyAt = len(s.busyJobs)
		s.busyJobs = append(s.busyJobs, j)
	}
	s.progressStart(t, t.run.node.spec.ID, t.start)
	s.setState(t, Running)
}

// StartDue makes the booked tasks whose start is at or before now Running, in start
// order; Advance calls it. It changes nothing else (not the clock).
func (s *State) StartDue(now time.Duration) {
	for {
		t, ok := s.booked.Min()
		if !ok || t.start > now {
			return
		}
		s.booked.DeleteMin()
		s.run(t)
	}
}

// Unreserve rolls reserved task t back to Pending, or drops reserved backup attempt
// t: everything is as it was before Reserve (ReserveBackup).
func (s *State) Unreserve(t *TaskInfo) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Reserved {
		return fmt.Errorf("cluster: unreserve task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if t.backs() != nil {
		s.dropBackup(t.backs(), false)
		return nil
	}
	since := t.pendingSince
	s.requeue(t)
	t.pendingSince = since // as it was before Reserve: its wait goes on
	return nil
}

// Evict releases running task t's reservation and makes it pending again, its
// backup dropped; for a backup attempt, drops the attempt. The task keeps its place
// among its job's pending tasks.
func (s *State) Evict(t *TaskInfo) error {
	return s.stop(t, "evict", false)
}

// Preempt evicts running task t to make room for another (priority or guarantee
// preemption): as Evict, and t counts against its job's disruption budget
// (JobSpec.MaxDisrupted, JobInfo.Disrupted) until it runs again or is cancelled. It
// fails, changing nothing, on a task that is not running, a backup attempt, a
// NonPreemptible task, or one whose job's budget is used up.
func (s *State) Preempt(t *TaskInfo) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	j := s.jobs[t.pe.Job]
	switch {
	case t.state != Running || t.backs() != nil:
		return fmt.Errorf("cluster: preempt task %q: it is %v or a backup: %w", t.pe.ID, t.state, ErrState)
	case t.nonPreemptible:
		return fmt.Errorf("cluster: preempt task %q: it is non-preemptible: %w", t.pe.ID, ErrInvalid)
	case !j.MayDisrupt(1):
		return fmt.Errorf("cluster: preempt task %q: job %q has %d of %d disruptions in use: %w", t.pe.ID, j.spec.ID, j.disrupted, j.spec.MaxDisrupted, ErrInvalid)
	}
	s.requeue(t)
	t.disrupted = true
	j.disrupted++
	return nil
}

// Suspend takes placed task t's reservation off its node's timeline, and its GPU
// devices off the node's, for a what-if
// question — would another task fit were t gone? — until Resume puts it back exactly
// (stage.Timeline.Suspend). Nothing else changes: t keeps its state, and the free
// index is not updated, so a caller must Resume before the state is used otherwise,
// and must not reserve on the node meanwhile.
func (s *State) Suspend(t *TaskInfo) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.run == nil || t.run.change != nil {
		return fmt.Errorf("cluster: suspend task %q: it is %v or holds a change: %w", t.pe.ID, t.state, ErrState)
	}
	if err := t.run.node.tl.Suspend(t.run.handle); err != nil {
		return fmt.Errorf("cluster: suspend task %q: %w: %w", t.pe.ID, ErrState, err)
	}
	_ = t.run.node.gpus.Release(t.run.devices) // held while placed
	s.touch(t.run.node)
	return nil
}

// Resume puts suspended task t's reservation back (Suspend).
func (s *State) Resume(t *TaskInfo) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.run == nil {
		return fmt.Errorf("cluster: resume task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if err := t.run.node.gpus.Take(t.run.devices); err != nil {
		return fmt.Errorf("cluster: resume task %q: its devices were taken meanwhile: %w: %w", t.pe.ID, ErrState, err)
	}
	if err := t.run.node.tl.Resume(t.run.handle); err != nil {
		_ = t.run.node.gpus.Release(t.run.devices)
		return fmt.Errorf("cluster: resume task %q: %w: %w", t.pe.ID, ErrState, err)
	}
	s.touch(t.run.node)
	return nil
}

// Withdraw takes back running task t's placement made in the current scheduling cycle
// (the embedder has not been told of it): t is pending again, and a disruption its
// start ended (Disrupted) is back, as if it had not been placed. It fails, changing
// nothing, on a task that is not running or is a backup attempt.
func (s *State) Withdraw(t *TaskInfo) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Running || t.backs() != nil {
		return fmt.Errorf("cluster: withdraw task %q: it is %v or a backup: %w", t.pe.ID, t.state, ErrState)
	}
	undone, since := t.undisrupted, t.pendingSince
	s.requeue(t)
	t.pendingSince = since // as if it had not been placed: its wait goes on
	if undone {
		t.disrupted = true
		s.jobs[t.pe.Job].disrupted++
	}
	return nil
}

// restored ends t's disruption, if it was preempted: it runs again, or left.
func (s *State) restored(t *TaskInfo) {
	if t.disrupted {
		t.disrupted = false
		s.jobs[t.pe.Job].disrupted--
	}
}

// Fail records that running task t was lost (killed, out of memory): as Evict, and a
// failed backup's node is remembered as one not to back the task up on again, while a
// task's own failure counts in its Failures.
func (s *State) Fail(t *TaskInfo) error {
	return s.stop(t, "fail", true)
}

func (s *State) stop(t *TaskInfo, event string, failed bool) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("cluster: %s task %q: it is %v: %w", event, t.pe.ID, t.state, ErrState)
	}
	if t.backs() != nil {
		s.dropBackup(t.backs(), failed)
		return nil
	}
	if failed && t.failures < math.MaxUint8 {
		t.failures++
	}
	s.requeue(t)
	return nil
}

// Finish records that running task t finished at now: its resources (and its
// backup's) return to their nodes and its run joins its node's progress rate. When t
// is a backup attempt, the backup won: its task finishes, and the run counts on the
// backup's node. The finished task stays readable until Retention forgets it, and its
// job, if this was its last live task, is complete.
func (s *State) Finish(t *TaskInfo, now time.Duration) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("cluster: finish task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if now < t.start {
		return fmt.Errorf("cluster: finish of task %q at %v before its start %v: %w", t.pe.ID, now, t.start, ErrState)
	}
	if b := t; b.backs() != nil {
		t = b.backs()
		s.backupWon(t, b, now)
	} else {
		s.progressFinish(t, now)
	}
	s.release(t)
	s.setState(t, Finished)
	s.jobs[t.pe.Job].finished++
	s.taskEnded(t, now)
	return nil
}

// Cancel withdraws a pending, reserved, booked or running task at now; a placed task's
// resources return to its node. Cancelling a backup attempt drops the attempt only.
// The cancelled task stays readable until Retention forgets it (its age counts from
// now).
func (s *State) Cancel(t *TaskInfo, now time.Duration) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	switch t.state {
	case Pending:
		s.dequeue(t, false)
	case Running, Reserved, Booked:
		if t.backs() != nil {
			s.dropBackup(t.backs(), false)
			return nil
		}
		s.release(t)
	default:
		return fmt.Errorf("cluster: cancel task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	s.restored(t)
	s.setState(t, Cancelled)
	s.taskEnded(t, now)
	return nil
}

func (s *State) setState(t *TaskInfo, st TaskState) {
	if t.backs() == nil {
		s.count[t.state]--
		s.count[st]++
	}
	t.state = st
}

// release returns a placed task's reservation and fairness usage (and its backup's),
// and stops tracking its progress.
func (s *State) release(t *TaskInfo) {
	s.dropBackup(t, false)
	s.stopChange(t)
	n := t.run.node
	if t.state == Booked {
		s.booked.Delete(t)
	}
	if t.state == Running {
		s.progressAbandon(t)
		if j := s.jobs[t.pe.Job]; j.isRunning(t) {
			if j.running = swapRemove(j.running, t.run.runAt, func(u *TaskInfo, i int) { u.run.runAt = i }); len(j.running) == 0 {
				s.busyJobs = swapRemove(s.busyJobs, j.busyAt, func(b *JobInfo, i int) { b.busyAt = i })
			}
		}
	}
	_ = n.tl.Release(t.run.handle)
	_ = n.gpus.Release(t.run.devices) // held since the reservation
	s.regrowExternal(n)
	delete(n.tasks, t.pe.ID)
	s.treeApply(treeOp{kind: opRelease, job: t.pe.Job, a: t.run.usage})
	s.unplace(t)
	s.reindex(n)
	s.touch(n)
}

// requeue returns a placed task to pending. A gang that loses its last running task
// this way must gather again.
func (s *State) requeue(t *TaskInfo) {
	t.undisrupted = false
	s.release(t)
	if j := s.jobs[t.pe.Job]; len(j.running) == 0 {
		j.gathered = false
	}
	s.setState(t, Pending)
	s.enqueue(t)
}

// dropBackup ends task t's backup attempt, if it has one: its resources return to its
// node and its ID is forgotten. failed records its node as one not to back t up on.
func (s *State) dropBackup(t *TaskInfo, failed bool) {
	b := t.backedBy()
	if b == nil {
		return
	}
	n := b.run.node
	if failed {
		if t.extra == nil {
			t.extra = &taskExtra{}
		}
		t.extra.failedOn = append(t.extra.failedOn, n.spec.ID)
	}
	_ = n.tl.Release(b.run.handle)
	_ = n.gpus.Release(b.run.devices) // held since the reservation
	s.regrowExternal(n)
	delete(n.tasks, b.pe.ID)
	s.treeApply(treeOp{kind: opRelease, job: t.pe.Job, a: b.run.usage})
	delete(s.tasks, b.pe.ID)
	t.run.backup, b.state, b.held = nil, Cancelled, false
	s.unplace(b)
	s.reindex(n)
	s.touch(n)
}
