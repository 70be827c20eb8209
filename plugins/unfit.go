package plugins

import (
	"slices"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
)

// A task that fits no node of the cluster even empty would hold its job back for
// ever if a pass kept offering the node to it first; the locality strategies
// (DelayScheduling, PreReleaseList) look past such tasks with the first two checks.
// The last two tell Preemption and Booking which waiting tasks need room made or
// booked.

// unplaceable reports whether status s refused the latest Try for want of room or
// devices with a demand that no one node of the cluster could hold even empty: its
// resources and its GPU devices together.
func unplaceable(c *framework.Cycle, s framework.Status) bool {
	if s.Code != framework.Unschedulable {
		return false
	}
	a := c.Tried()
	return (s.Reason == framework.NoRoom || s.Reason == framework.NoGPU) && !c.State().HoldsTask(a.Demand.Hold.Peak(), a.Task.GPU())
}

// fitsNoNode reports whether pending task t is known to fit no node even empty: its
// GPU demand, its declared profile's peak, or, undeclared, its class is among refused
// (classes whose demand was found to fit no node).
func fitsNoNode(st *cluster.State, t *cluster.TaskInfo, refused []cluster.ClassID) bool {
	if d := t.Declared(); d.Len() > 0 {
		return !st.HoldsTask(d.Peak(), t.GPU())
	}
	if !st.HoldsGPU(t.GPU()) {
		return true
	}
	return len(refused) > 0 && slices.Contains(refused, st.ClassOf(t))
}

// stuck prepares pending task t for node n (nil in push terms: no node yet) and
// reports whether it needs room made or booked: it passes the PreFilter plugins, some
// node of the cluster could hold it empty (its resources and its GPU devices), and no
// node passes it now. Preemption and Booking look for such tasks.
func stuck(c *framework.Cycle, t *cluster.TaskInfo, n *cluster.NodeInfo) (framework.Attempt, bool) {
	a, s := c.Prepare(t, n, c.Now())
	return a, s.OK() && c.State().HoldsTask(a.Demand.Hold.Peak(), t.GPU()) && !fitsSomeNode(c, &a)
}

// fitsSomeNode reports whether attempt a's task passes the filters on some node now:
// then it starts without evicting or booking anything. It visits the nodes the free
// index offers for the task's first stage (cluster.State.ByFree).
func fitsSomeNode(c *framework.Cycle, a *framework.Attempt) bool {
	dim := c.State().IndexDim()
	found := false
	try := *a
	c.State().ByFree(a.Demand.Hold.Stage(0).Demand[dim], func(n *cluster.NodeInfo) bool {
		try.Node, try.Start = n, c.Now()
		found = c.Filter(&try).OK()
		return !found
	})
	return found
}
