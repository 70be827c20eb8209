package framework

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/finegrain/finegrain/cluster"
)

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
