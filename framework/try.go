package framework

import (
	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
)

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
	c.d.skip(&Skip{Job: j.ID(), Task: t.ID(), Reason: c.explained(st, a).Reason, Plugin: st.Plugin, Result: a.Result})
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
