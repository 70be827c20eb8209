package framework

import (
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/stage"
)

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
