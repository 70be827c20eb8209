package framework

import (
	"fmt"
	"slices"

	"github.com/finegrain/finegrain/cluster"
)

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
