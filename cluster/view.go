package cluster

import (
	"slices"
	"strings"
	"time"

	"github.com/finegrain/finegrain/stage"
)

// This file is what a snapshot of the state is made of (finegrain.Scheduler.Snapshot,
// framework.Probe): read-only copies of nodes and tasks that other goroutines read
// without the state's owner while the state moves on, and the list of nodes changed
// since the copies were last brought up to date.

// PlacedWork is what the eq. 15 deadline check reads of a task placed on a node: its
// ID, its plan, the start of its reservation and its deadline.
type PlacedWork struct {
	ID       string
	Plan     stage.Profile
	Start    time.Duration
	Deadline time.Duration
}

// Version counts the changes of the node: it grows with every reservation made,
// moved or released on it, every external load or external device share set, every
// suspension and resumption of a task on it, every update (State.UpdateNode), and
// when it is added or removed. A view keeps the version of the
// node it was taken of.
func (n *NodeInfo) Version() uint64 { return n.version }

// DeadlineTasks lists the tasks placed on the node (reserved, booked or running,
// backups included, as Tasks) that have a deadline, in ID order: what the eq. 15
// deadline check weighs a compressed placement against. On a view, the tasks as they
// were when it was taken. It allocates when there are some.
func (n *NodeInfo) DeadlineTasks() []PlacedWork {
	if n.frozen != nil {
		return n.frozen.deadlines
	}
	var out []PlacedWork
	for _, t := range n.tasks {
		if t.deadline > 0 {
			out = append(out, PlacedWork{ID: t.pe.ID, Plan: t.Plan(), Start: t.PlanStart(), Deadline: t.deadline})
		}
	}
	slices.SortFunc(out, func(a, b PlacedWork) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// View returns a read-only copy of the node as it is now, which other goroutines may
// read while the state changes the node: its spec and index, a copy of its timeline
// (stage.Timeline.Clone) and of its GPU devices, its external load, how many tasks it
// holds (NumTasks) and the tasks with deadlines (DeadlineTasks), all as they are now.
// A view lists no tasks (Tasks, RangeTasks: the tasks themselves change with the
// state) and is never reserved on; IsView reports one. Take it while nothing changes
// the state (its owner's lock held, at least for reading).
func (n *NodeInfo) View() *NodeInfo {
	v := *n
	v.tl = n.tl.Clone()
	v.tasks = nil
	v.gpus = n.gpus.Clone()
	v.extWant, v.extHeld = slices.Clone(n.extWant), slices.Clone(n.extHeld) // changed in place (regrowExternal)
	v.stale, v.touched, v.dueAt = false, false, 0
	v.frozen = &frozenNode{numTasks: len(n.tasks), deadlines: n.DeadlineTasks()}
	return &v
}

// IsView reports whether n is a view (View), not the state's node.
func (n *NodeInfo) IsView() bool { return n.frozen != nil }

// View returns a read-only copy of task t as it is now, which other goroutines may read
// while the state changes t: its ID, job, spec, key, request, declared profile, GPU
// demand, inputs, deadline, state and failures as they are now (the demand and the
// extra parts, which do not change, are shared). For a placed task, Node, Plan and
// the rest of its placement are those of the state's own record, which changes: take
// views of pending tasks. The view is never passed to the state's methods, which
// refuse it. Take it while nothing changes the state.
func (t *TaskInfo) View() *TaskInfo {
	v := *t
	v.held = false // not the state's: State.own refuses it
	return &v
}

// touch records that node n changed: its version moves, and TakeTouched hands it on
// once a keeper of views has asked (State.tracking).
func (s *State) touch(n *NodeInfo) {
	n.version++
	if !s.tracking || n.touched {
		return
	}
	if len(s.touched) >= 2*len(s.nodeList)+64 {
		s.overflow = true // nobody took them for long: the next TakeTouched hands every node
		return
	}
	n.touched = true
	s.touched = append(s.touched, n)
}

// TakeTouched calls fn with every node changed (Version) since the last call, each
// once, in the order they first changed — a node removed since included: held reports
// whether the state still holds it — and forgets them. A node added since is among
// them. It is how a keeper of node views (View) brings them up to date at the cost of
// the changes, not of the nodes.
//
// The first call — before it the state records no changes — and a call after more
// changes than the state keeps (twice as many nodes as it holds, and 64: a keeper that
// stopped asking) first call all, when not nil, and then fn with every node the state
// holds: the keeper forgets what it kept and starts again from them.
//
// It changes only the list it empties, which nothing else reads: it may run while
// other goroutines read the state (the finegrain Scheduler runs it under its read lock,
// one caller at a time), never while the state changes.
func (s *State) TakeTouched(all func(), fn func(n *NodeInfo, held bool)) {
	if !s.tracking || s.overflow {
		for i, n := range s.touched {
			n.touched = false
			s.touched[i] = nil
		}
		s.touched = s.touched[:0]
		s.tracking, s.overflow = true, false
		if all != nil {
			all()
		}
		for _, n := range s.nodeList {
			if n != nil {
				fn(n, true)
			}
		}
		return
	}
	for i, n := range s.touched {
		n.touched = false
		s.touched[i] = nil
		fn(n, s.holds(n))
	}
	s.touched = s.touched[:0]
}
