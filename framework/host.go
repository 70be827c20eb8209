package framework

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
)

// This file is host mode, for a host scheduler that runs its own scheduling cycle —
// the Kubernetes scheduling framework — and uses finegrain for its steps: it asks the
// probes (Framework.Filter and Framework.Score, run.go) for each node, chooses the
// node itself, and then holds the task here in two phases: Reserve on the node it
// chose (or PostFilter, when no node passed), then Commit once it has bound the task,
// or Unreserve when its own Permit step or its binding failed. finegrain's Permit
// plugins are not asked in host mode: the host's Permit step decides.

// Reserve holds pending task t on node n from now, for a host scheduler that chose n:
// Demand, PreFilter and Filter on n against the state as it is now (it may have
// changed since the host's probes), then Reserve (the state, then the Reserve
// plugins). The task is Reserved until Commit or Unreserve; the Assignment says what
// is held. It fails with a *PlacementError saying why, and the task stays pending.
func (f *Framework) Reserve(t *cluster.TaskInfo, n *cluster.NodeInfo, now time.Duration) (Assignment, error) {
	c := f.cycle(Push, now, nil)
	a := &f.scratch
	if st := c.probe(a, t, n, now); !st.OK() {
		tl := f.tallying()
		tl.Add(n.ID(), n.Capacity(), c.explained(st, a), a.Result)
		return Assignment{}, c.placementError(a, 1, tl, Status{})
	}
	return c.hold(a, 1)
}

// PostFilter is the host's PostFilter step for pending task t at now, after its
// Filter found no node: the PostFilter plugins run as in push mode (Place) — one may
// make room by preemption (the evicted tasks are in the Assignment's Evicted, pending
// again) or propose a later start (a booking) — and the placement proposed is held as
// by Reserve. Only nodes allow accepts are considered (nil: every node): the host
// rules out those its own filters refused, where making room would not help. It
// fails with a *PlacementError when no plugin proposes a placement; evictions already
// made are then in its Evicted.
func (f *Framework) PostFilter(t *cluster.TaskInfo, now time.Duration, allow func(*cluster.NodeInfo) bool) (Assignment, error) {
	c := f.cycle(Push, now, nil)
	c.allow = allow
	base := &f.scratch
	c.prepare(base, t, nil, now, 0, false)
	if st := c.preFilter(base); !st.OK() {
		return Assignment{}, c.refusedBefore(base, st)
	}
	a, ok := c.postFilter(base)
	if !ok {
		tl, tried := c.explain(base)
		return Assignment{}, c.placementError(base, tried, tl, Status{})
	}
	return c.hold(&a, 0)
}

// Explain says why pending task t cannot start now, node by node, without placing
// it: the PreFilter plugins, then the Filter plugins on the nodes the free index
// offers for its first stage, the rest counted as short of the index dimension
// (Place's walk, without scoring or reserving). A task that passes somewhere has a
// tally with fewer refusals than nodes. Whether a heartbeat offers it those nodes
// also depends on the fairness order and the locality waits (Decision.Refusals). It
// changes nothing but brings the free index up to date, so it must not run
// concurrently with other calls.
func (f *Framework) Explain(t *cluster.TaskInfo, now time.Duration) Tally {
	c := f.cycle(Probe, now, nil)
	var base Attempt
	c.prepare(&base, t, nil, now, 0, false)
	if st := c.preFilter(&base); !st.OK() {
		return c.refusedBefore(&base, st).Refusals
	}
	tl, _ := c.explain(&base)
	c.resolvable(&base, tl)
	return tl.Sorted()
}

// explain tallies why the task of attempt base passes no filter: Place's walk over the
// free index, without candidates. It returns the tally and how many nodes it tried.
func (c *Cycle) explain(base *Attempt) (*Tally, int) {
	f := c.fw
	tl := f.tallying()
	tried := 0
	f.state.Locate(&f.locator, base.Task)
	a := *base
	f.state.ByFree(c.indexNeed(base), func(n *cluster.NodeInfo) bool {
		tried++
		a.Node, a.Level = n, f.locator.Level(n)
		c.filterCounted(&a, tl)
		return true
	})
	c.ruledOut(base, tl, tried)
	return tl, tried
}

// hold reserves attempt a for the host and keeps it until Commit or Unreserve.
func (c *Cycle) hold(a *Attempt, tried int) (Assignment, error) {
	c.chooseDevices(a)
	if st := c.reserve(a); !st.OK() {
		tl := c.fw.tallying()
		tl.Of = 1
		tl.count(CountOf(st, a.Result), 1)
		return Assignment{}, c.placementError(a, tried, tl, st)
	}
	f := c.fw
	if len(f.held) >= f.heldSweep {
		// Tasks cancelled or whose node left while held are dropped now and then, so
		// that the map holds no more than twice the live entries.
		for id, h := range f.held {
			if !heldValid(h) {
				delete(f.held, id)
			}
		}
		f.heldSweep = max(64, 2*len(f.held))
	}
	h := *a
	f.held[a.Task.ID()] = &h
	as := assignment(a)
	as.Evicted = c.takeEvicted(as.Task)
	return as, nil
}

// Held reports whether task t is held for the host (Reserve or PostFilter), and what
// is held: the node, the start and the profile. It only reads, and may run
// concurrently with probes.
func (f *Framework) Held(t *cluster.TaskInfo) (Assignment, bool) {
	h, ok := f.held[t.ID()]
	if !ok || h.Task != t || !heldValid(h) {
		return Assignment{}, false
	}
	return assignment(h), true
}

// Commit makes task t, held by Reserve or PostFilter, Running from now (or Booked,
// when it is held for a later start): the host has bound it. A reservation held from
// an earlier time (the host's Permit kept it waiting) moves to begin now, as
// Cycle.Allow moves a waiting task's, so that its stages follow the task's real start;
// where its node has no room for that, it keeps its earlier start.
func (f *Framework) Commit(t *cluster.TaskInfo, now time.Duration) (Assignment, error) {
	h, err := f.heldAttempt(t, "commit")
	if err != nil {
		return Assignment{}, err
	}
	delete(f.held, t.ID())
	c := f.cycle(Push, now, nil)
	if h.Start < now {
		if err := f.state.MoveStarts(cluster.Move{Task: t, Start: now, Allow: h.Result.Allowance}); err == nil {
			h.Start = now
		} else {
			f.debug("held reservation kept at its start", "task", t.ID(), "start", h.Start, "err", err)
		}
	}
	return c.commit(h), nil
}

// Unreserve rolls task t, held by Reserve or PostFilter, back to pending: the Reserve
// plugins' Unreserve in reverse order, then the state's. Evictions a PostFilter made
// stay made, as in Kubernetes.
func (f *Framework) Unreserve(t *cluster.TaskInfo, now time.Duration) error {
	h, err := f.heldAttempt(t, "unreserve")
	if err != nil {
		return err
	}
	delete(f.held, t.ID())
	c := f.cycle(Push, now, nil)
	c.rollback(h, len(f.reserves))
	return nil
}

// heldAttempt is task t's held attempt. A task that left its reservation by other
// means (cancelled, its node removed) is dropped and reported as not held.
func (f *Framework) heldAttempt(t *cluster.TaskInfo, event string) (*Attempt, error) {
	h, ok := f.held[t.ID()]
	if ok && h.Task == t && heldValid(h) {
		return h, nil
	}
	if ok && (h.Task != t || !heldValid(h)) {
		delete(f.held, t.ID())
	}
	return nil, fmt.Errorf("framework: %s task %q: not held for the host: %w", event, t.ID(), cluster.ErrState)
}

func heldValid(h *Attempt) bool {
	return h.Task.State() == cluster.Reserved && h.Task.Node() == h.Node
}
