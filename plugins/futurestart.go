package plugins

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/policy"
)

// FutureStart (PostFilter) books a task that fits no node now at the earliest start
// any node's timeline offers for its whole profile, future stages included: each
// node proposes its earliest fit (stage.Timeline.EarliestFit, with the compression the
// node's mode allows up to the compression limit), which must then pass the filters;
// the earliest wins, ties to the roomiest node. The task is then Booked
// (cluster.Booked) until its start, and what it holds is off limits to every later
// placement: tasks placed in front of it (backfilling) use only what leaves its
// booking whole: backfilling's rule on the stage timeline (conservative backfilling,
// since every task that qualifies gets a booking, not only the queue's head as in
// EASY).
//
// Only a task that has waited at least Wait since it became pending
// (cluster.TaskInfo.PendingSince: its submission, or its return to pending) is booked, and no member of a gang that has not
// gathered (cluster.JobInfo.Gathered): a gang's members start together. The PostFilter books the task a push
// placement found no node for; Booking does the same in pull mode. Finding the
// earliest start visits every node: O(nodes) for each task booked.
type FutureStart struct {
	adjuster    *policy.Adjuster
	compression *policy.Compression
	wait        time.Duration
}

// NewFutureStart returns the future-start plugin: tasks waiting at least wait (≥ 0)
// are booked.
func NewFutureStart(adj *policy.Adjuster, comp *policy.Compression, wait time.Duration) (*FutureStart, error) {
	if adj == nil || comp == nil || wait < 0 {
		return nil, fmt.Errorf("plugins: future start: adjuster %v, compression manager %v, wait %v: %w", adj != nil, comp != nil, wait, cluster.ErrInvalid)
	}
	return &FutureStart{adjuster: adj, compression: comp, wait: wait}, nil
}

// Name implements framework.Plugin.
func (*FutureStart) Name() string { return "FutureStart" }

// Wait is how long a task waits before it is booked.
func (f *FutureStart) Wait() time.Duration { return f.wait }

// bookable reports whether task t has waited long enough to be booked, and is no
// member of a gang still gathering: a gang's members start together, now, not each at
// its own future start.
func (f *FutureStart) bookable(c *framework.Cycle, t *cluster.TaskInfo) bool {
	if c.Now()-t.PendingSince() < f.wait {
		return false
	}
	j, ok := c.State().Job(t.Job())
	return ok && j.Gathered()
}

// PostFilter implements framework.PostFilterPlugin.
func (f *FutureStart) PostFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	if !f.bookable(c, a.Task) {
		return framework.Refuse(framework.NoRoom)
	}
	best, ok := f.earliest(c, a)
	if !ok {
		return framework.Refuse(framework.NoRoom)
	}
	*a = best
	return framework.Status{}
}

// earliest finds the earliest start at which attempt a's task passes the filters on
// some node.
func (f *FutureStart) earliest(c *framework.Cycle, a *framework.Attempt) (framework.Attempt, bool) {
	schema := c.State().Schema()
	var (
		best  framework.Attempt
		found bool
		start time.Duration
	)
	c.State().ByFree(math.MinInt64, func(n *cluster.NodeInfo) bool {
		allow := n.Capacity().Only(schema.Compressible()).ScaleEach(f.compression.Limit())
		if !f.adjuster.Mode(n.ID()).Compressible() {
			allow = allow.Scale(0)
		}
		at, err := n.Timeline().EarliestFit(c.Now(), a.Demand.Hold, allow)
		if err != nil || (found && at >= start) {
			return true
		}
		try := *a
		try.Node, try.Start = n, at
		if c.Filter(&try).OK() {
			best, found, start = try, true, at
		}
		return true
	})
	return best, found
}
