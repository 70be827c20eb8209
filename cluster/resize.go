package cluster

import (
	"fmt"
	"slices"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// This file changes what a running task holds while it runs, in two phases as a
// reservation is made: Resize (grow or shrink in place) and Migrate (a planned move to
// another node) hold the change at once, and CommitChange keeps it or RevertChange
// gives it back. The mixed-workload method (docs/methods.md §11) plans such changes:
// a straggler grown in place or moved, batch tasks shrunk to make room and given their
// resources back later, none of them killed.

// ChangeKind is what a held change of a running task does (TaskInfo.Change).
type ChangeKind uint8

const (
	// NoChange: the task holds no change.
	NoChange ChangeKind = iota
	// Resizing: the task's reservation on its node is being replaced (State.Resize).
	Resizing
	// Migrating: the task holds a reservation on another node too, to move there
	// (State.Migrate).
	Migrating
)

// String names the kind.
func (k ChangeKind) String() string {
	switch k {
	case NoChange:
		return "none"
	case Resizing:
		return "resizing"
	case Migrating:
		return "migrating"
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// change is a running task's held change: what it will hold once committed, and what
// it held before.
type change struct {
	kind           ChangeKind
	node           *NodeInfo      // where the new reservation is: the task's node, or a move's target
	reservationRef                // the new reservation
	usage          resource.Tuple // what fairness counts the task as holding once committed
	devices        gpu.Allocation // a move's devices on the target; a resize keeps the task's
	plan           stage.Profile  // the plan from at
	planned        bool           // the plan is a prediction or declaration, not the request
	at             time.Duration  // when the change takes effect: the clock when it was made
	replaced       bool           // a resize has released the old reservation already (ChangeNow)
}

// Change reports the running task's held change (Resize, Migrate) and the node its new
// reservation is on; NoChange and nil when it holds none.
func (t *TaskInfo) Change() (ChangeKind, *NodeInfo) {
	if t.run == nil || t.run.change == nil {
		return NoChange, nil
	}
	return t.run.change.kind, t.run.change.node
}

// Resize replaces, from the state's clock on, what running task t holds on its node by
// r.Hold, tentatively: the timeline, the free index and the fairness usage see the new
// reservation at once, and the old one is kept aside until CommitChange drops it or
// RevertChange puts it back. It grows a task (a straggler given more) or shrinks one (a
// batch task reclaimed from or preempted without being killed) in place.
//
// r.Start must be the state's clock (Clock: call Advance first): a resize takes effect
// now. What the task held before the clock is history the state no longer reads, and
// goes with the old reservation. r.Plan (r.Hold when empty) is the profile the task is
// expected to follow from the clock on, r.Predicted whether it is a prediction, and
// r.Allowance the compression the new reservation may take, as for Reserve — zero on
// every non-compressible dimension, so that a resize never takes one over the node's
// capacity. The task keeps its GPU devices: r.Devices must be zero.
//
// Fairness counts the task as holding r.Hold's peak instead of its old usage; max
// shares are not enforced (a task already running is resized, not admitted). It fails,
// changing nothing, when t is not running, is a backup attempt or backed up, or already
// holds a change; on an invalid r; or when r.Hold does not fit the node once the old
// reservation is set aside (an error wrapping stage.ErrNoRoom).
func (s *State) Resize(t *TaskInfo, r Reservation) error {
	c, err := s.resize(t, r, false)
	if err != nil {
		return err
	}
	s.holdChange(t, c)
	return nil
}

// resize holds r on running task t's node in place of its reservation, which it sets
// aside (suspended), as Resize does — or, for good, releases (now) — and returns the
// change; it does not record it.
func (s *State) resize(t *TaskInfo, r Reservation, now bool) (change, error) {
	if err := s.changeable(t, "resize", r); err != nil {
		return change{}, err
	}
	if !r.Devices.IsZero() {
		return change{}, fmt.Errorf("cluster: resize task %q: devices %v: a resize keeps the task's devices: %w", t.pe.ID, r.Devices.Devices, ErrInvalid)
	}
	n := t.run.node
	var h stage.Handle
	var err error
	if now {
		h, err = n.tl.Replace(t.run.handle, r.Start, r.Hold, r.Allowance)
	} else {
		_ = n.tl.Suspend(t.run.handle) // held: the task is running with no change
		if h, err = n.tl.Reserve(r.Start, r.Hold, r.Allowance); err != nil {
			_ = n.tl.Resume(t.run.handle)
		}
	}
	if err != nil {
		return change{}, fmt.Errorf("cluster: resize task %q on node %q: %w", t.pe.ID, n.spec.ID, err)
	}
	c := newChange(Resizing, n, h, gpu.Allocation{}, r)
	c.replaced = now
	s.regrowExternal(n)
	if now { // the old reservation is gone: fairness counts the new usage in its place
		s.treeApply(treeOp{kind: opResize, job: t.pe.Job, a: c.usage, b: t.run.usage})
		return c, nil // commit reindexes and touches the node
	}
	s.treeApply(treeOp{kind: opAllocate, job: t.pe.Job, a: c.usage})
	s.treeApply(treeOp{kind: opRelease, job: t.pe.Job, a: t.run.usage})
	s.reindex(n)
	s.touch(n)
	return c, nil
}

// Migrate reserves r on node to for running task t, to move it there, tentatively: the
// task goes on holding its own node's reservation, and holds the new one too — the
// timeline, the free index and the fairness usage see both, as they see a backup
// attempt — until CommitChange moves the task (its old node's reservation and devices
// are released) or RevertChange drops the new reservation.
//
// r is as for Resize, except that r.Devices chooses the GPU devices on to (zero lets
// the state choose, as Reserve does). It fails, changing nothing, when t is not
// running, is a backup attempt or backed up, or already holds a change; when to is t's
// own node or not the state's; on an invalid r; or when r does not fit on to.
func (s *State) Migrate(t *TaskInfo, to *NodeInfo, r Reservation) error {
	c, err := s.migrate(t, to, r)
	if err != nil {
		return err
	}
	s.holdChange(t, c)
	return nil
}

// migrate reserves r on node to for running task t, as Migrate does, and returns the
// change; it does not record it.
func (s *State) migrate(t *TaskInfo, to *NodeInfo, r Reservation) (change, error) {
	if err := s.ownOn(t, to); err != nil {
		return change{}, err
	}
	if err := s.changeable(t, "move", r); err != nil {
		return change{}, err
	}
	if t.run.node == to {
		return change{}, fmt.Errorf("cluster: move task %q to its own node %q: %w", t.pe.ID, to.spec.ID, ErrInvalid)
	}
	h, devs, err := s.hold(t, to, r)
	if err != nil {
		return change{}, fmt.Errorf("cluster: move task %q to node %q: %w", t.pe.ID, to.spec.ID, err)
	}
	c := newChange(Migrating, to, h, devs, r)
	s.treeApply(treeOp{kind: opAllocate, job: t.pe.Job, a: c.usage})
	s.reindex(to)
	s.touch(to)
	return c, nil
}

// ChangeNow makes running task t hold r from the clock on — on its own node when to is
// nil, as Resize does, else on node to, as Migrate does — and keeps the change at
// once, as CommitChange does: the state is then as after Resize (or Migrate) and
// CommitChange, and no change is held in between. It is for a caller that decides a
// change when it makes it. It fails, changing nothing, as Resize (or Migrate) does.
func (s *State) ChangeNow(t *TaskInfo, to *NodeInfo, r Reservation) error {
	var c change
	var err error
	if to == nil {
		c, err = s.resize(t, r, true)
	} else {
		c, err = s.migrate(t, to, r)
	}
	if err != nil {
		return err
	}
	s.commit(t, &c)
	return nil
}

// changeable checks that running task t may take a change (event names it in errors)
// of reservation r.
func (s *State) changeable(t *TaskInfo, event string, r Reservation) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	switch {
	case t.state != Running || t.backs() != nil || t.backedBy() != nil:
		return fmt.Errorf("cluster: %s task %q: it is %v, a backup or backed up: %w", event, t.pe.ID, t.state, ErrState)
	case t.run.change != nil:
		return fmt.Errorf("cluster: %s task %q: it already holds a change (%v): %w", event, t.pe.ID, t.run.change.kind, ErrState)
	case r.Start != s.clock:
		return fmt.Errorf("cluster: %s task %q: start %v is not the clock %v: %w", event, t.pe.ID, r.Start, s.clock, ErrInvalid)
	case r.Hold.Len() == 0:
		return fmt.Errorf("cluster: %s task %q: empty profile: %w", event, t.pe.ID, ErrInvalid)
	}
	return nil
}

// newChange is a change of kind whose new reservation h (and devices devs) of r is
// on node n.
func newChange(kind ChangeKind, n *NodeInfo, h stage.Handle, devs gpu.Allocation, r Reservation) change {
	plan := r.Plan
	if plan.Len() == 0 {
		plan = r.Hold
	}
	return change{kind: kind, node: n, reservationRef: reservationRef{handle: h, start: r.Start, hold: r.Hold},
		usage: r.Hold.Peak(), devices: devs, plan: plan, planned: r.Predicted, at: r.Start}
}

// holdChange records change c as task t's held change.
func (s *State) holdChange(t *TaskInfo, c change) {
	t.run.change = &c
	if s.changing == nil {
		s.changing = make(map[*TaskInfo]struct{})
	}
	s.changing[t] = struct{}{}
}

// CommitChange keeps running task t's held change: a resized task holds its new
// reservation from now on; a moved task runs on its new node, and its old node's
// reservation and devices are released. The task's start (TaskInfo.Start) does not
// change; its plan (TaskInfo.Plan) is the change's, from the time the change was made
// (PlanStart). A moved task's run counts, for the progress model's node rates, on the
// node it started on.
func (s *State) CommitChange(t *TaskInfo) error {
	c, err := s.heldChange(t, "commit the change of")
	if err != nil {
		return err
	}
	s.unchange(t)
	s.commit(t, c)
	return nil
}

// commit makes running task t hold change c's reservation, which it holds beside its
// own (suspended, for a resize): CommitChange's work, once no change is recorded.
func (s *State) commit(t *TaskInfo, c *change) {
	p := t.run
	old := p.node
	switch {
	case c.kind == Resizing && !c.replaced:
		_ = old.tl.Release(p.handle) // the suspended old reservation
	case c.kind == Migrating:
		_ = old.tl.Release(p.handle)
		_ = old.gpus.Release(p.devices) // held since the reservation
		s.regrowExternal(old)
		delete(old.tasks, t.pe.ID)
		s.treeApply(treeOp{kind: opRelease, job: t.pe.Job, a: p.usage})
		p.node, p.devices = c.node, c.devices
		c.node.tasks[t.pe.ID] = t
		s.reindex(old)
		s.touch(old)
	}
	p.reservationRef, p.usage, p.plan, p.planStart, p.replanned = c.reservationRef, c.usage, c.plan, c.at, true
	p.planned = 0
	if c.planned {
		p.planned = c.plan.Duration()
	}
	s.reindex(p.node)
	s.touch(p.node)
}

// RevertChange gives running task t's held change back: everything is as it was
// before Resize or Migrate.
func (s *State) RevertChange(t *TaskInfo) error {
	c, err := s.heldChange(t, "revert the change of")
	if err != nil {
		return err
	}
	s.dropChange(t)
	if c.kind == Resizing {
		n := t.run.node
		_ = n.tl.Resume(t.run.handle) // it fitted beside everything else before the change
		s.treeApply(treeOp{kind: opAllocate, job: t.pe.Job, a: t.run.usage})
		s.reindex(n)
		s.touch(n)
	}
	return nil
}

// heldChange is task t's held change; an error (event names the call) when t holds
// none.
func (s *State) heldChange(t *TaskInfo, event string) (*change, error) {
	if err := s.own(t, nil); err != nil {
		return nil, err
	}
	if t.state != Running || t.run == nil || t.run.change == nil {
		return nil, fmt.Errorf("cluster: %s task %q: it holds no change: %w", event, t.pe.ID, ErrState)
	}
	return t.run.change, nil
}

// dropChange releases task t's held change, if it has one: its new reservation (and a
// move's devices) and the usage fairness counts for it. A resized task's old
// reservation stays suspended: RevertChange resumes it, and a task that stops drops it
// with its reservation.
func (s *State) dropChange(t *TaskInfo) {
	if t.run == nil || t.run.change == nil {
		return
	}
	c := t.run.change
	_ = c.node.tl.Release(c.handle)
	_ = c.node.gpus.Release(c.devices) // zero for a resize
	s.regrowExternal(c.node)
	s.treeApply(treeOp{kind: opRelease, job: t.pe.Job, a: c.usage})
	s.unchange(t)
	s.reindex(c.node)
	s.touch(c.node)
}

// unchange forgets task t's held change.
func (s *State) unchange(t *TaskInfo) {
	t.run.change = nil
	delete(s.changing, t)
}

// stopChange is what a task that stops (finishes, fails, is evicted, cancelled or
// withdrawn) does with a held change: it drops it; a resized task's old reservation,
// suspended, goes when the task's reservation is released.
func (s *State) stopChange(t *TaskInfo) {
	if t.run == nil || t.run.change == nil {
		return
	}
	if t.run.change.kind == Resizing {
		// The old reservation is released with the task, suspended: give fairness the
		// usage it counts for the task back first, as release takes it.
		s.treeApply(treeOp{kind: opAllocate, job: t.pe.Job, a: t.run.usage})
	}
	s.dropChange(t)
}

// revertMovesTo reverts the held moves whose target is node n, in task ID order: the
// node is leaving.
func (s *State) revertMovesTo(n *NodeInfo) {
	var moving []*TaskInfo
	for t := range s.changing {
		if c := t.run.change; c.kind == Migrating && c.node == n {
			moving = append(moving, t)
		}
	}
	slices.SortFunc(moving, byID)
	for _, t := range moving {
		s.dropChange(t)
	}
}

// PlanStart is when the placed task's plan (Plan) begins: its start, or the time of
// the last change committed (CommitChange), from which the plan is the change's.
func (t *TaskInfo) PlanStart() time.Duration {
	if t.run != nil && t.run.replanned {
		return t.run.planStart
	}
	return t.start
}

// holding is the reservation the placed task holds on its node — with a held resize,
// the new one —: when it begins and its profile; false when it holds none.
func (t *TaskInfo) holding() (time.Duration, stage.Profile, bool) {
	if t.run == nil {
		return 0, stage.Profile{}, false
	}
	r := &t.run.reservationRef
	if c := t.run.change; c != nil && c.kind == Resizing {
		r = &c.reservationRef
	}
	return r.start, r.hold, true
}

// HeldAt is what the placed task holds on its node at time at: its reservation's
// demand then, zero before the reservation begins and after it ends — with a held
// resize, the new reservation's. Zero for a task that is not placed.
func (t *TaskInfo) HeldAt(at time.Duration) resource.Tuple {
	start, p, ok := t.holding()
	if !ok || at < start || at-start >= p.Duration() {
		return resource.Tuple{}
	}
	return p.At(at - start)
}

// HeldFrom is what the placed task holds on its node from time at on: the stages of
// its reservation left then, the one at at cut to begin there — with a held resize,
// the new reservation's. Empty when nothing is left (or the task is not placed); the
// whole reservation when it begins at or after at.
func (t *TaskInfo) HeldFrom(at time.Duration) stage.Profile {
	start, p, ok := t.holding()
	if !ok || at <= start {
		return p
	}
	if at-start >= p.Duration() {
		return stage.Profile{}
	}
	left, err := stage.NewProfile(p.Schema(), appendLeft(nil, start, p, at)...)
	if err != nil { // cannot fail: the stages are the reservation's, the first shortened
		return stage.Profile{}
	}
	return left
}

// AppendHeldFrom appends to dst the stages of HeldFrom(at) — what the placed task
// holds from time at on — and returns the extended slice: for a caller that builds a
// profile of its own from them, without building HeldFrom's.
func (t *TaskInfo) AppendHeldFrom(dst []stage.Stage, at time.Duration) []stage.Stage {
	start, p, ok := t.holding()
	if !ok {
		return dst
	}
	return appendLeft(dst, start, p, at)
}

// appendLeft appends to dst the stages of reservation p, begun at start, left at time
// at: all of them when it begins at or after at, none once it has ended, else those
// from the one at at on, that one cut to begin there.
func appendLeft(dst []stage.Stage, start time.Duration, p stage.Profile, at time.Duration) []stage.Stage {
	i, off := 0, time.Duration(0)
	if at > start {
		off = at - start
		if i = p.StageAt(off); i < 0 {
			return dst
		}
	}
	first := len(dst)
	for k := i; k < p.Len(); k++ {
		dst = append(dst, p.Stage(k))
	}
	if off > 0 && dst[first].Duration != stage.Forever {
		dst[first].Duration = p.Offset(i+1) - off
	}
	return dst
}
