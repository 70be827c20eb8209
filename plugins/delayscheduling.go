package plugins

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/resource"
)

// DelayUpdate is the step in which delay scheduling's waits grow: Hadoop's Fair
// Scheduler update interval.
const DelayUpdate = 500 * time.Millisecond

// DelayScheduling (Pass) is pull mode's default locality strategy: FGM's Algorithm 1
// lines 4–17 with delay scheduling (docs/methods.md §3, §10).
//
//  1. The node must have room (the NodeGate plugins); the JobFilter plugins may end
//     the heartbeat before the walk.
//  2. Jobs are visited in the fairness order (line 4; DRF by default), taken once per
//     pass (cluster.State.Walk). A job keeps taking tasks while the ordering's key
//     for it does not change (FIFO); otherwise (DRF, Fair) the pass moves on to the
//     next job after one task, and passes repeat, re-ordered, while tasks start. When
//     a queue has a max share, the order is re-taken after every start, so that max
//     shares are checked against up-to-date usage.
//  3. Under the clock rule (NewClockScheduling, the reference scheduler's default), a
//     job that may not launch on the node — its best locality there, from the
//     pending index's tables, is worse than its clock allows, and it is not a wait
//     WaitForRoom might waive (node-local allowed, rack-local at best) — is passed
//     over first (LocalityWait), before the packing bound and the job filters:
//     nothing about it changes, so it is not looked at. The walk still reaches it,
//     as the Decision counts it (Skipped, Refusals) and details it among the first
//     skips: a walk that left such jobs out would have to count those it would have
//     reached before it stopped, which takes each job's rank in the fairness order
//     (docs/performance-history.md, "An index of the jobs that could launch").
//     Each other job passes the JobFilter plugins; delay scheduling then decides whether it
//     takes the node at the locality of its best task there (line 6), and its first
//     task at that level is tried (framework.Cycle.Try). When that task fits no node
//     of the cluster even empty, the job's next task not known to fit no node is
//     tried in turn, so that it does not hold the job's other tasks back for ever; a
//     task among those at a locality the job may not launch at yet counts as an offer
//     passed up, so the job's wait grows. A job that waits for locality, or whose
//     task is refused, is passed over for the rest of the heartbeat. A task a Permit
//     plugin keeps waiting (a gang member) does not end the job's turn: the node is
//     offered to the job's next task while it has room.
//  4. With a fair packing bound (SetPackingBound), once a job found no room on the
//     node, jobs of queues more than the bound richer are passed over for the rest
//     of the heartbeat (AheadOfOrder).
//
// In Alg. 2.1's time-based variant (NewDelayScheduling) a job's wait grows in steps of at least DelayUpdate of
// cluster time, as Hadoop's Fair Scheduler updates it from its update thread: a job
// that passed up an offer during a step is credited with the whole step. A launch is
// recorded only once a task has started, so a task that does not fit does not reset
// its job's wait. Without a fairness.Delay a job takes any offer.
//
// With WaitForRoom, a job waits for a node-local offer only while a node holding the
// input of one of its first pending tasks could start that task now (its NodeGate
// plugins open, Cycle.Open, and the task passing the Filter plugins there): when every
// such node is full or stopped, the job takes a rack-local offer at hand without
// waiting, and its wait and level are left as they were (an off-switch offer it still
// waits for as delay scheduling says). Waiting for a node that has no room hands
// the offer to the jobs behind it in the fairness order, and when room is scarce —
// other applications' load held on the nodes (the cloud), or a busy cluster — the
// job's local nodes may stay full long after W1, so small jobs at the head of the
// order wait for nothing. Waits for a rack-local offer (W2) are not changed.
type DelayScheduling struct {
	delay   *fairness.Delay         // Alg. 2.1's offer-counting waits; nil: none
	clock   *fairness.LocalityClock // the clock rule (NewClockScheduling); nil: none
	tick    time.Duration           // when the waits last grew; -DelayUpdate before the first heartbeat
	room    bool                    // WaitForRoom: wait for node locality only while a local node has room
	scanAll bool                    // ScanLocality: a job's best locality from all its tasks, not the index's tables

	clocks []jobClock // by job slot: the job's state under the clock rule (clockOf)

	probed, keepTurn bool // whether the ordering keeps a job's turn, decided once

	refused []cluster.ClassID  // scratch of try: the job's classes refused so far
	waits   []fairness.WaitRef // by job slot: where delay keeps the job's wait (wait)

	scan     roomScan                       // localRoom's state
	opened   map[*cluster.NodeInfo]openMemo // localRoom's Cycle.Open answers (open)
	noMemo   bool                           // tests: ask the gates every time
	memoHits int                            // tests: answers the memo gave

	bound float64 // the fair packing bound; +Inf: none
	floor float64 // in a heartbeat: the least share of a queue passed over for want of room; +Inf: none

	walks  uint64      // the passes walked so far; a share remembered in another is stale
	shares []shareMemo // by job slot: its queue's share in the pass under way (queueShare)
}

// shareMemo is the weighted dominant share of a job's queue, as worked out in one pass.
type shareMemo struct {
	job   *cluster.JobInfo
	walk  uint64
	share float64
}

// DefaultPackingBound is the fair packing bound the reference scheduler uses with DRF
// ordering (DelayScheduling.SetPackingBound): a queue may take a node out of the
// fairness order while its weighted dominant share is at most 5% of the cluster above
// that of a queue whose job found no room there.
const DefaultPackingBound = 0.05

// DelayOption configures DelayScheduling.
type DelayOption func(*DelayScheduling)

// WaitForRoom sets whether a job waits for a node-local offer only while a node
// holding its input could take its task now (see DelayScheduling); off by default,
// as in Hadoop's delay scheduling.
func WaitForRoom(on bool) DelayOption {
	return func(p *DelayScheduling) { p.room = on }
}

// ScanLocality makes a walk under the clock rule (NewClockScheduling) find a job's
// best locality on the node by looking at every pending task of the job
// (cluster.State.EachPending, cluster.State.Locality) instead of asking the pending
// index's node and rack tables (cluster.State.BestLocality): O(tasks) a job instead of
// O(1). The decisions are the same; it is the reference the index is checked against.
func ScanLocality() DelayOption {
	return func(p *DelayScheduling) { p.scanAll = true }
}

// NewDelayScheduling returns the strategy with delay scheduling d, Alg. 2.1's rule (a
// job's wait grows only while it passes offers up); nil d walks the fairness order with
// no locality waits.
func NewDelayScheduling(d *fairness.Delay, opts ...DelayOption) *DelayScheduling {
	p := &DelayScheduling{delay: d, tick: -DelayUpdate, bound: math.Inf(1)}
	for _, o := range opts {
		if o != nil {
			o(p)
		}
	}
	return p
}

// NewClockScheduling returns the strategy with locality waits by the clock rule c
// (fairness.LocalityClock): what a job may launch at depends on the time since its last
// launch (or its arrival, JobSpec.Submitted) alone. A job that may not launch on the
// heartbeat's node — its best task there is at a locality worse than it may launch at,
// and it is not a wait WaitForRoom might waive — is passed over first, before the job
// filters and the packing bound, at the cost of the pending index's probes for its
// best locality there (cluster.State.BestLocality) and one comparison; nothing about it
// changes, since an offer passed up does not count. Nil c walks the fairness order with
// no locality waits.
func NewClockScheduling(c *fairness.LocalityClock, opts ...DelayOption) *DelayScheduling {
	p := NewDelayScheduling(nil, opts...)
	p.clock = c
	return p
}

// jobClock is one job slot's state under the clock rule.
type jobClock struct {
	job *cluster.JobInfo // the job the state is of; another job in the slot starts afresh
	s   fairness.ClockState
}

// SetPackingBound sets the fair packing bound b, a weighted dominant share (a fraction
// of the cluster): once a job was passed over in a heartbeat for want of room on the
// node — its task did not fit (NoRoom) though the node, empty, could hold that task's
// demand as tried (a failed task's raised one, Prediction), or none of its task
// classes fits what is free (NoClassFits) though the node, empty, could hold the task
// it would have tried — a job of another queue may take
// the node only while its queue's weighted dominant share is at most b above that of
// the passed-over job's queue; a job beyond it is passed over (AheadOfOrder) for the
// rest of the heartbeat. It keeps packing from running ahead of the fairness order: a
// node's room freed bit by bit goes to the small tasks of richer queues no more than
// b past the poorer queue whose larger task waits for it. +Inf (the default of
// NewDelayScheduling) means no bound; 0 is strict. Orderings that keep a job's turn
// (FIFO) have no bound. b must be ≥ 0 and not NaN; on error nothing changes.
func (p *DelayScheduling) SetPackingBound(b float64) error {
	if !(b >= 0) {
		return fmt.Errorf("plugins: packing bound %v: %w", b, cluster.ErrInvalid)
	}
	p.bound = b
	return nil
}

// PackingBound is the fair packing bound (SetPackingBound); +Inf when there is none.
func (p *DelayScheduling) PackingBound() float64 { return p.bound }

// Name implements framework.Plugin.
func (*DelayScheduling) Name() string { return "DelayScheduling" }

// Delay is the delay-scheduling state, nil without one (or with the clock rule).
func (p *DelayScheduling) Delay() *fairness.Delay { return p.delay }

// Clock is the clock rule, nil without one (NewClockScheduling).
func (p *DelayScheduling) Clock() *fairness.LocalityClock { return p.clock }

// Pass implements framework.PassPlugin.
func (p *DelayScheduling) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	now := c.Now()
	if p.delay != nil && (now < p.tick || now-p.tick >= DelayUpdate) {
		if err := p.delay.Heartbeat(now); err != nil {
			return fmt.Errorf("finegrain: heartbeat of node %q: %w", n.ID(), err)
		}
		p.tick = now
	}
	if !p.probed {
		p.keepTurn, p.probed = keepsTurn(c.State().Ordering(), c.State().Schema()), true
	}
	p.floor = math.Inf(1)
	d := c.Decision()
	for {
		started := len(d.Assignments)
		if !p.pass(c, n) || len(d.Assignments) == started {
			return nil
		}
	}
}

// pass walks the jobs once in fairness order and reports whether the heartbeat may go
// on.
func (p *DelayScheduling) pass(c *framework.Cycle, n *cluster.NodeInfo) bool {
	if !c.Room() || !c.FilterPass() {
		return false
	}
	st := c.State()
	goOn := true
	p.walks++
	st.Walk(func(j *cluster.JobInfo) bool {
		if c.Skipped(j) {
			return true
		}
		if len(j.Classes()) == 0 { // its last pending task started in this walk
			c.SkipJobFor(j, framework.NoReason, "")
			return true
		}
		if p.clock != nil && !p.launchable(c, j, n) {
			c.SkipJobFor(j, framework.LocalityWait, "")
			return true
		}
		if p.ahead(c, j) {
			c.SkipJobFor(j, framework.AheadOfOrder, "")
			return true
		}
		if s := c.CheckJob(j); !s.OK() {
			if s.Reason == framework.NoClassFits && p.lowers(c, j) && fitsEmpty(st, j, n) && firstHeld(c, j, n) && p.wouldLaunch(c, j, n) {
				p.noRoom(c, j)
			}
			return true
		}
		for {
			// The first task in n's offer order is at the job's best locality there.
			t, best, ok := st.FirstPending(j, n, fairness.OffSwitch)
			if !ok {
				c.SkipJobFor(j, framework.NoReason, "")
				return true
			}
			var wait *fairness.WaitRef
			if p.delay != nil {
				wait = p.wait(c, j)
			}
			allowed, waived := p.allowed(c, j, wait), false
			if best > allowed {
				if !p.waivable(c, j, n, best, allowed) {
					p.passUp(wait, j, best)
					c.SkipJobFor(j, framework.LocalityWait, "")
					return true
				}
				waived = true // no node holding its input can take it: no use waiting
			}
			s, level := p.try(c, j, n, t, best, waived)
			if s.Code == framework.Wait {
				// A gang member is reserved and waits for its gang: offer the node
				// to the gang's next member while it has room.
				if goOn = c.Room(); !goOn {
					return false
				}
				continue
			}
			if !s.OK() {
				sk := framework.Skip{}
				if s.Reason == framework.LocalityWait {
					sk = framework.Skip{Job: j.ID(), Reason: framework.LocalityWait}
				}
				c.SkipJob(j, sk)
				if s.Reason == framework.NoRoom && !unplaceable(c, s) && fitsEmpty(st, j, n) && holdsTried(c, n) {
					p.noRoom(c, j)
				}
				goOn = s.Code != framework.Closed
				return goOn
			}
			if !waived {
				p.launched(c, wait, j, level)
			}
			if goOn = c.Room(); !goOn {
				return false
			}
			if st.HasMaxShare() {
				return false // re-take the order
			}
			if !p.keepTurn {
				return true
			}
		}
	})
	return goOn
}

// launchable reports, under the clock rule, whether job j may launch a task on node n
// now: its best locality there is no worse than it may launch at, or WaitForRoom might
// waive the wait (the walk decides). A job without pending tasks is left to the walk.
func (p *DelayScheduling) launchable(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) bool {
	best, allowed, ok := p.levels(c, j, n)
	if !ok {
		return true
	}
	// A wait WaitForRoom may waive is left to the walk, which asks after the job
	// filters: whether a node holding the job's input has room costs a look at the
	// input nodes of its first tasks, which most jobs the filters pass over never need.
	return best <= allowed || p.mayWaive(best, allowed)
}

// wouldLaunch reports whether job j, passed over by its classes, would have had a
// task tried on node n rather than waiting for locality: always under Alg. 2.1 (whose
// job filters come before the locality check), and under the clock rule when its best
// locality here is no worse than it may launch at or WaitForRoom waives the wait. A job
// that would have waited sets no packing floor, as it sets none in the walk.
func (p *DelayScheduling) wouldLaunch(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) bool {
	if p.clock == nil {
		return true
	}
	best, allowed, ok := p.levels(c, j, n)
	return ok && (best <= allowed || p.waivable(c, j, n, best, allowed))
}

// levels is, under the clock rule, the best locality of job j's pending tasks on node
// n (from the pending index, or a scan with ScanLocality) and the worst it may launch
// at now; false when j has none pending.
func (p *DelayScheduling) levels(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) (best, allowed fairness.Level, ok bool) {
	if p.scanAll {
		best, ok = scanLocality(c.State(), j, n)
	} else {
		best, ok = c.State().BestLocality(j, n)
	}
	if ok {
		allowed = p.clock.Allowed(p.clockOf(c, j).s, c.Now())
	}
	return best, allowed, ok
}

// mayWaive reports whether WaitForRoom could waive a wait for a task at locality best
// where the job may launch at allowed only (waivable then decides).
func (p *DelayScheduling) mayWaive(best, allowed fairness.Level) bool {
	return p.room && allowed == fairness.NodeLocal && best == fairness.RackLocal
}

// scanLocality is the best locality of job j's pending tasks on node n, from every
// task's inputs (ScanLocality); false when j has none pending.
func scanLocality(st *cluster.State, j *cluster.JobInfo, n *cluster.NodeInfo) (fairness.Level, bool) {
	best, ok := fairness.OffSwitch, false
	st.EachPending(j, func(t *cluster.TaskInfo) bool {
		best, ok = min(best, st.Locality(t, n)), true
		return best > fairness.NodeLocal
	})
	return best, ok
}

// allowed is the worst locality job j may launch at now (wait: its reference in the
// offer-counting state, nil without one); OffSwitch without locality waits.
func (p *DelayScheduling) allowed(c *framework.Cycle, j *cluster.JobInfo, wait *fairness.WaitRef) fairness.Level {
	switch {
	case p.clock != nil:
		return p.clock.Allowed(p.clockOf(c, j).s, c.Now())
	case p.delay != nil:
		return p.delay.AllowedByRef(wait, j.ID())
	}
	return fairness.OffSwitch
}

// waivable reports whether WaitForRoom waives job j's wait for a task at locality best
// on node n, where it may launch at allowed only: it waits for a node-local offer, its
// best here is rack-local, and no node holding its input could start its task now.
func (p *DelayScheduling) waivable(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo, best, allowed fairness.Level) bool {
	return p.mayWaive(best, allowed) && !p.localRoom(c, j, n)
}

// passUp records that job j passed up an offer at locality best: its wait grows under
// Alg. 2.1; the clock rule counts no offers.
func (p *DelayScheduling) passUp(wait *fairness.WaitRef, j *cluster.JobInfo, best fairness.Level) {
	if p.delay != nil {
		_, _, _ = p.delay.OfferByRef(wait, j.ID(), best)
	}
}

// launched records that job j launched a task at locality level.
func (p *DelayScheduling) launched(c *framework.Cycle, wait *fairness.WaitRef, j *cluster.JobInfo, level fairness.Level) {
	switch {
	case p.clock != nil:
		if s, err := fairness.Launch(level, c.Now()); err == nil {
			p.clockOf(c, j).s = s
		}
	case p.delay != nil:
		_, _, _ = p.delay.OfferByRef(wait, j.ID(), level)
	}
}

// clockOf is job j's state under the clock rule, kept by j's slot: a job the slot has
// not held yet starts from its arrival (JobSpec.Submitted).
func (p *DelayScheduling) clockOf(c *framework.Cycle, j *cluster.JobInfo) *jobClock {
	if n := c.State().JobSlots(); len(p.clocks) < n {
		p.clocks = append(p.clocks, make([]jobClock, n-len(p.clocks))...)
	}
	k := &p.clocks[j.Index()]
	if k.job != j {
		*k = jobClock{job: j, s: fairness.Arrived(j.Spec().Submitted)}
	}
	return k
}

// wait is the reference to job j's state in the delay-scheduling state, kept by j's
// slot (a slot's next job finds the reference stale: fairness.WaitRef).
func (p *DelayScheduling) wait(c *framework.Cycle, j *cluster.JobInfo) *fairness.WaitRef {
	if n := c.State().JobSlots(); len(p.waits) < n {
		p.waits = append(p.waits, make([]fairness.WaitRef, n-len(p.waits))...)
	}
	return &p.waits[j.Index()]
}

// ahead reports whether job j's queue holds more than the packing bound above the
// floor: the least share of a queue whose job found no room on the node in this
// heartbeat.
func (p *DelayScheduling) ahead(c *framework.Cycle, j *cluster.JobInfo) bool {
	if math.IsInf(p.bound, 1) || p.keepTurn || math.IsInf(p.floor, 1) {
		return false
	}
	return p.queueShare(c, j) > p.floor+p.bound
}

// noRoom records that job j was passed over for want of room on the node.
func (p *DelayScheduling) noRoom(c *framework.Cycle, j *cluster.JobInfo) {
	if p.lowers(c, j) {
		p.floor = p.queueShare(c, j)
	}
}

// lowers reports whether job j, passed over for want of room, would lower the floor:
// there is a bound, and j's queue is poorer than the floor so far.
func (p *DelayScheduling) lowers(c *framework.Cycle, j *cluster.JobInfo) bool {
	return !math.IsInf(p.bound, 1) && !p.keepTurn && p.queueShare(c, j) < p.floor
}

// fitsEmpty reports whether some task class of job j could start on node n empty
// (holdsEmpty): a job that the node could never hold does not hold other queues back
// there. Both of the bound's refusals test it; the task refused, or the one the job
// would have tried, must moreover fit the node empty itself (holdsTried, firstHeld).
func fitsEmpty(st *cluster.State, j *cluster.JobInfo, n *cluster.NodeInfo) bool {
	capacity := n.Capacity()
	for _, cl := range j.Classes() {
		if holdsEmpty(st, cl.ID, capacity) {
			return true
		}
	}
	return false
}

// holdsTried reports whether node n, empty, could hold the task of the latest Try as
// it was tried: n's capacity covers its demand's peak (a failed task's raised demand,
// Prediction). A job is passed over once its task is refused, so when n could never
// hold that task the job does not wait for room on n, and it sets no floor there
// although other classes of it would fit: otherwise a task that only a busy larger
// node holds would keep the richer queues off n, empty, for as long as that node is
// busy.
func holdsTried(c *framework.Cycle, n *cluster.NodeInfo) bool {
	return n.Capacity().Covers(c.Tried().Demand.Hold.Peak())
}

// firstHeld is holdsTried for a job passed over by its classes (NoClassFits): whether
// node n, empty, could hold the task the job offers n first (its first pending task
// at its best locality there), as the Demand plugins ask it, and some node could hold
// it at all. Trying the task would have found no room (no class fits what is free), so
// the quick check sets the floor exactly where trying would.
func firstHeld(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) bool {
	t, _, ok := c.State().FirstPending(j, n, fairness.OffSwitch)
	if !ok {
		return false
	}
	a, s := c.Prepare(t, nil, c.Now())
	peak := a.Demand.Hold.Peak()
	return s.OK() && n.Capacity().Covers(peak) && c.State().HoldsTask(peak, t.GPU())
}

// holdsEmpty reports whether a task of class id could start on an empty node of
// capacity, by its request or its declared first stage. A class of tasks that failed
// never does: its tasks may ask for more than the class says (Prediction raises them),
// more than the node has.
func holdsEmpty(st *cluster.State, id cluster.ClassID, capacity resource.Tuple) bool {
	if id.Failures > 0 {
		return false
	}
	if id.Declared {
		return capacity.CoversOn(id.First, st.Schema().NonCompressible())
	}
	return capacity.Covers(id.Request)
}

// queueShare is the weighted dominant share of job j's queue, worked out once a pass
// for each job the packing bound asks about: a pass is one cluster.State.Walk, which
// holds back every change to the fairness tree until it ends, so that the queue's
// entry, and its share, stay as they were for the whole pass. The bound asks about
// every job the walk reaches once a job found no room, each a lookup of its queue by
// ID.
func (p *DelayScheduling) queueShare(c *framework.Cycle, j *cluster.JobInfo) float64 {
	st := c.State()
	if n := st.JobSlots(); len(p.shares) < n {
		p.shares = append(p.shares, make([]shareMemo, n-len(p.shares))...)
	}
	m := &p.shares[j.Index()]
	if m.job != j || m.walk != p.walks {
		*m = shareMemo{job: j, walk: p.walks, share: queueShare(st, j)}
	}
	return m.share
}

// queueShare is the weighted dominant share of job j's queue.
func queueShare(st *cluster.State, j *cluster.JobInfo) float64 {
	e, err := st.QueueEntry(j.Spec().Queue)
	if err != nil {
		return 0
	}
	return e.Usage.DominantShare(st.Capacity()) / e.Share.Weight
}

// Forget implements framework.ForgetPlugin: a forgotten job's locality wait goes.
func (p *DelayScheduling) Forget(j *cluster.JobInfo) {
	if p.delay != nil {
		p.delay.Forget(j.ID())
	}
	if i := j.Index(); i < len(p.clocks) && p.clocks[i].job == j {
		p.clocks[i] = jobClock{}
	}
}

// maxTries bounds the tasks of one job a pass offers the node to before it passes
// the job over.
const maxTries = 8

// try offers the node to job j's first pending task t, at locality best, its best. When
// that task's demand fits no node of the cluster even empty (cluster.State.Holds), it
// would hold the job back for ever, so the job's next task that is not known to fit
// no node is offered in turn (up to maxTries tries), best locality first. Known to fit
// no node: an undeclared task of a class already refused that way (undeclared tasks of
// one class that never failed are matched against the same profile), or a declared
// profile no node holds. A task found that way at a locality worse than delay scheduling allows the
// job is an offer the job passes up: its wait grows, and it takes such a task once it
// has waited long enough. A gang that has not gathered looks past its members that do
// not fit this node the same way (other than the refused class, a member may), so
// that it gathers wherever each member fits. When waived, the job's wait was waived
// for this offer (WaitForRoom): it takes tasks at locality best or better without
// waiting. It returns the last status and the locality of the task it concerns.
func (p *DelayScheduling) try(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo, t *cluster.TaskInfo, best fairness.Level, waived bool) (framework.Status, fairness.Level) {
	st := c.State()
	level := best
	s := c.Try(j, t, level)
	refused := p.refused[:0]
	for tries := 1; tries < maxTries && (unplaceable(c, s) || gathers(j, s)); tries++ {
		if s.Reason == framework.NoRoom && t.Declared().Len() == 0 && t.Failures() == 0 { // no task of its class fits this node
			refused = append(refused, st.ClassOf(t))
		}
		t = nil
		st.AscendPending(j, n, fairness.OffSwitch, func(u *cluster.TaskInfo, l fairness.Level) bool {
			if fitsNoNode(st, u, refused) {
				return true
			}
			t, level = u, l
			return false
		})
		if t == nil {
			break
		}
		if (p.delay != nil || p.clock != nil) && !(waived && level <= best) {
			var wait *fairness.WaitRef
			if p.delay != nil {
				wait = p.wait(c, j)
			}
			if level > p.allowed(c, j, wait) {
				if p.clock != nil {
					s = framework.Refuse(framework.LocalityWait)
					break
				}
				if _, ok, _ := p.delay.OfferByRef(wait, j.ID(), level); !ok {
					s = framework.Refuse(framework.LocalityWait)
					break
				}
			}
		}
		s = c.Try(j, t, level)
	}
	p.refused = refused
	return s, level
}

// roomTries bounds the pending tasks of a job whose input nodes localRoom looks at.
const roomTries = 4

// localRoom reports whether one of job j's first pending tasks (at most roomTries, in
// the order n's heartbeat offers them) could start now on a node holding its input,
// other than n: the node's NodeGate plugins are open and the task passes the Filter
// plugins there. A task the PreFilter plugins refuse is not looked at.
func (p *DelayScheduling) localRoom(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) bool {
	r := &p.scan
	r.c, r.n, r.found, r.tries = c, n, false, 0
	if r.visit == nil {
		r.visit = p.roomVisit // bound once: the walk allocates nothing
	}
	c.State().AscendPending(j, n, fairness.OffSwitch, r.visit)
	found := r.found
	r.c, r.n = nil, nil
	return found
}

// roomScan is localRoom's state, kept on the plugin so that its visits allocate
// nothing.
type roomScan struct {
	c     *framework.Cycle
	n     *cluster.NodeInfo
	found bool
	tries int
	ready framework.Attempt // the task's attempt, prepared once
	try   framework.Attempt // a copy of it for one node, which the filters may write
	visit func(*cluster.TaskInfo, fairness.Level) bool
}

// roomVisit is localRoom's look at pending task t.
func (p *DelayScheduling) roomVisit(t *cluster.TaskInfo, _ fairness.Level) bool {
	r := &p.scan
	c, st := r.c, r.c.State()
	r.tries++
	prepared := false
	for _, id := range t.Inputs() {
		m, ok := st.Node(id)
		if !ok || m == r.n || !p.open(c, m) {
			continue
		}
		if !prepared { // once a node is open: most often none is when room is short
			var s framework.Status
			if r.ready, s = c.Prepare(t, nil, c.Now()); !s.OK() {
				break
			}
			prepared = true
		}
		r.try = r.ready
		r.try.Node, r.try.Start, r.try.Level = m, c.Now(), fairness.NodeLocal
		if c.Filter(&r.try).OK() {
			r.found = true
			return false
		}
	}
	return r.tries < roomTries
}

// openMemo is one answer of Cycle.Open for a node other than the heartbeat's, and
// what it depends on: the cycle, the node's timeline (its version) and the tasks the
// cycle started so far (Cycle.Moves).
type openMemo struct {
	open    bool
	gen     uint64
	version uint64
	moves   uint64
}

// open is c.Open(m) for a node m other than the heartbeat's, remembered for the
// heartbeat: a job's input nodes are asked about again and again as the walk visits
// the jobs waiting for them, while none of them changes. The answer is asked afresh
// once m's timeline changed (a gang's waiting members rolled back there) or the
// heartbeat's assignments changed (a gate may count its starts; Cycle.Moves counts
// additions and withdrawals alike). The gates' other input, the
// node's policy mode, changes only between calls of the Scheduler. Answers of
// earlier cycles are not used; they are dropped at once when the memo holds twice as
// many nodes as the cluster has (removed nodes), so that it stays O(nodes).
func (p *DelayScheduling) open(c *framework.Cycle, m *cluster.NodeInfo) bool {
	if p.noMemo {
		return c.Open(m)
	}
	if p.opened == nil || len(p.opened) > 2*c.State().NumNodes() {
		p.opened = make(map[*cluster.NodeInfo]openMemo)
	}
	g, v, k := c.Gen(), m.Timeline().Version(), c.Moves()
	if o, ok := p.opened[m]; ok && o.gen == g && o.version == v && o.moves == k {
		p.memoHits++
		return o.open
	}
	o := openMemo{open: c.Open(m), gen: g, version: v, moves: k}
	p.opened[m] = o
	return o.open
}

// gathers reports whether status s refused a member of gang j, not gathered yet, for
// want of room on the node: another member may fit there, and a gang gathers member by
// member wherever each fits.
func gathers(j *cluster.JobInfo, s framework.Status) bool {
	return !j.Gathered() && s.Code == framework.Unschedulable && s.Reason == framework.NoRoom
}

// keepsTurn reports whether ordering p keeps a job in its place when it starts one
// more task: whether its key is independent of what the job runs. Under FIFO (and
// inside Capacity's queues) it is, so a job goes on taking tasks as a re-sort would
// let it; under DRF and Fair its key grows and a pass moves on to the next job after
// one task. Decided by probing the ordering with two entries that differ only in what
// they run.
func keepsTurn(p fairness.Policy, schema *resource.Schema) bool {
	var capacity, usage resource.Tuple
	for k := 0; k < schema.Len(); k++ {
		capacity[k], usage[k] = 1<<40, 1<<30
	}
	idle := fairness.Entry{ID: "probe", Kind: fairness.KindJob, Share: fairness.DefaultShare(), Pending: 2, Demand: usage.Add(usage)}
	busy := idle
	busy.Running, busy.Pending, busy.Usage, busy.Demand = 1, 1, usage, usage
	return p.Key(&idle, capacity) == p.Key(&busy, capacity)
}
