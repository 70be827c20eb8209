package plugins

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/stage"
)

// NodeScore (Score) ranks the nodes a task passed on in push mode with a
// match.Scorer (LeastAllocated, MostAllocated, BestFit, BalancedAllocation, Alignment
// or your own), times Weight: match.ScoreServer, the scorer applied to the node's
// least free amount over the task's window and the task's peak demand — the same
// scoring as match.ChooseServer. The window is what the task holds (its plan, and for a
// predicted task the memory it keeps until it finishes); the built-in matchers report
// the window's least free amount as they match, so scoring walks no timeline again.
type NodeScore struct {
	scorer match.Scorer
	weight float64
}

// NewNodeScore returns the scoring plugin for sc with weight w (a finite number > 0).
func NewNodeScore(sc match.Scorer, w float64) (*NodeScore, error) {
	if sc == nil || !(w > 0) || math.IsInf(w, 1) {
		return nil, fmt.Errorf("plugins: node score: scorer %v, weight %v: %w", sc, w, cluster.ErrInvalid)
	}
	return &NodeScore{scorer: sc, weight: w}, nil
}

// Name implements framework.Plugin.
func (*NodeScore) Name() string { return "NodeScore" }

// Score implements framework.ScorePlugin.
func (s *NodeScore) Score(_ *framework.Cycle, a *framework.Attempt) float64 {
	// match.ScoreServer, without copying the Result: the window's least free amount as
	// the match reported it (match.WindowFree).
	tl := a.Node.Timeline()
	free := a.Result.MinFree
	if !a.Result.MinFreeKnown {
		free = tl.MinFree(a.Start, stage.AddSat(a.Start, a.Demand.Hold.Duration()))
	}
	score := s.scorer.Score(tl.Capacity(), free, a.Demand.Hold.Peak())
	if score != score {
		return math.Inf(-1)
	}
	return s.weight * score
}

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

// Booking (Pass) is FutureStart in pull mode: after the locality pass, it books the
// first waiting task, in fairness order among the first jobs it looks at, that has
// waited FutureStart.Wait and fits no node now, on the node and at the start
// FutureStart finds (not necessarily the heartbeat's node): one booking per
// heartbeat.
type Booking struct {
	fs *FutureStart
}

// NewBooking returns the pull-mode booking pass of fs.
func NewBooking(fs *FutureStart) (*Booking, error) {
	if fs == nil {
		return nil, fmt.Errorf("plugins: booking: nil future start: %w", cluster.ErrInvalid)
	}
	return &Booking{fs: fs}, nil
}

// Name implements framework.Plugin.
func (*Booking) Name() string { return "Booking" }

// maxLook bounds the jobs a heartbeat's booking pass looks at.
const maxLook = 16

// Pass implements framework.PassPlugin.
func (b *Booking) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	st := c.State()
	if st.Count(cluster.Pending) == 0 {
		return nil
	}
	looked := 0
	st.Walk(func(j *cluster.JobInfo) bool {
		if looked++; looked > maxLook {
			return false
		}
		t, _, ok := st.FirstPending(j, n, fairness.OffSwitch)
		if !ok || !b.fs.bookable(c, t) {
			return true
		}
		a, ok := stuck(c, t, nil)
		if !ok {
			return true
		}
		best, ok := b.fs.earliest(c, &a)
		if !ok {
			return true
		}
		best.Level = st.Locality(t, best.Node)
		return !c.TryAt(&best).OK()
	})
	return nil
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
