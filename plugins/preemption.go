package plugins

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/resource"
)

// DefaultReclaimDelay is a reclaim delay (PreemptionConfig.ReclaimDelay) of 15 s: the
// order of the waits of YARN's capacity preemption (which kills a container marked
// for preemption 15 s later, max_wait_before_kill).
const DefaultReclaimDelay = 15 * time.Second

// PreemptionConfig says which preemption a Preemption plugin does.
type PreemptionConfig struct {
	// Priority evicts tasks of jobs of lower priority (JobSpec.Priority) for a task
	// that fits nowhere, as the Kubernetes scheduler's default preemption does.
	Priority bool
	// Guarantees makes queues' min shares guarantees: a queue (or an ancestor of it)
	// below its min share reclaims, for its task that fits nowhere, from queues outside
	// it above theirs (a queue without a min share is guaranteed nothing), most over
	// first, never taking one below its own min share (YARN's and YuniKorn's guarantee
	// preemption). Victims are of no higher priority than the task. With Guarantees
	// on, priority preemption too never takes a queue other than the task's own below
	// its min share (as YARN preempts across queues only by guarantees): otherwise the
	// two kinds could take turns evicting each other's tasks for ever.
	Guarantees bool
	// ReclaimDelay is how long a queue must have been seen below its guarantee, with a
	// task that fits nowhere, before it reclaims for that task (counted from when the
	// task became pending, if later: an old starvation does not count for new work);
	// 0 reclaims at once. It must be ≥ 0.
	ReclaimDelay time.Duration
	// PerHeartbeat bounds how many waiting tasks one heartbeat (pull mode) considers as
	// preemptors; 0 means 8.
	PerHeartbeat int
	// Candidates bounds how many nodes where eviction makes room push mode finds
	// before it picks the best of them, as the Kubernetes scheduler's
	// minCandidateNodesPercentage and minCandidateNodesAbsolute do; 0 means the
	// larger of 100 and a tenth of the nodes.
	Candidates int
}

// Preemption (PostFilter, Pass) makes room for a task that fits nowhere by evicting
// running tasks (framework.Cycle.Evict): they are pending again, counted against
// their job's disruption budget, and reported with the preemptor's Assignment.
//
// On a node, the victims are chosen the Kubernetes way, on the stage timeline:
//
//  1. Candidates are the node's running, preemptible tasks (not backups, not
//     TaskSpec.NonPreemptible, their job's disruption budget not used up) of a lower
//     priority (Priority), or, for a queue owed its guarantee (Guarantees), of a queue
//     above its min share.
//  2. With every candidate's reservation suspended, the task must pass the filters
//     from now for its whole profile, future stages included; otherwise the node
//     is not a choice.
//  3. Candidates are put back one by one, the most valuable first — higher
//     priority, then (reclaiming) the queue least over its guarantee, then the task
//     that has run longer — and each stays only if the task still passes. A
//     candidate whose reservation ends before the task needs the room is put back
//     at no cost: a task about to finish is not evicted when the timeline shows it
//     is out of the way in time.
//  4. Evicting a gang member that would leave its gang short of MinMember running
//     evicts the whole gang's running tasks (Volcano instead never preempts a member
//     below the gang's minAvailable; here the gang re-gathers later).
//
// A member of a gang that has not gathered (cluster.JobInfo.Gathered) evicts
// nothing: its gang might still not gather, and the evictions would be for nothing.
//
// Push mode (PostFilter) visits the nodes, roomiest first, until it has found
// Candidates where eviction makes room (every node, if fewer), and picks among them,
// as Kubernetes does, the node whose victims have the lowest highest priority, then
// the smallest sum of priorities, then the fewest victims, then the least run time
// lost; ties to the node visited first. Pull mode (Pass, after the locality pass)
// asks the heartbeat's node, for the first waiting tasks in fairness order that could
// evict something there and fit no node now, while the node gates allow a start (a
// node short of idle room is what it is for); one preemption per heartbeat.
type Preemption struct {
	cfg     PreemptionConfig
	starved map[string]time.Duration // queue → since when it is owed its guarantee

	// Scratch, reused from call to call.
	cands  []candidate
	best   victimSet
	cur    victimSet
	queues map[string]queueLoad
	paths  map[string][]string // queue → its path, for one heartbeat or placement
}

// candidate is a task that might be evicted, with what ranks it.
type candidate struct {
	t      *cluster.TaskInfo
	reason framework.Reason
	prio   int
	over   float64       // its queue's use above its guarantee (reclaiming)
	ran    time.Duration // run time lost if evicted
}

// victimSet is the outcome on one node.
type victimSet struct {
	node    *cluster.NodeInfo
	victims []candidate
	maxPrio int
	sumPrio int64
	lost    time.Duration
}

// queueLoad is a queue's use and guarantee in its policy's unit.
type queueLoad struct {
	used, min float64
	entry     fairness.Entry
}

// NewPreemption returns the preemption plugin for cfg; it fails when cfg turns no
// preemption on, or on a negative delay, per-heartbeat bound or candidate count.
func NewPreemption(cfg PreemptionConfig) (*Preemption, error) {
	if !cfg.Priority && !cfg.Guarantees {
		return nil, fmt.Errorf("plugins: preemption: neither priority nor guarantees: %w", cluster.ErrInvalid)
	}
	if cfg.ReclaimDelay < 0 || cfg.PerHeartbeat < 0 || cfg.Candidates < 0 {
		return nil, fmt.Errorf("plugins: preemption: reclaim delay %v, per heartbeat %d, candidates %d: %w", cfg.ReclaimDelay, cfg.PerHeartbeat, cfg.Candidates, cluster.ErrInvalid)
	}
	if cfg.PerHeartbeat == 0 {
		cfg.PerHeartbeat = 8
	}
	return &Preemption{cfg: cfg, starved: map[string]time.Duration{}, queues: map[string]queueLoad{}, paths: map[string][]string{}}, nil
}

// Name implements framework.Plugin.
func (*Preemption) Name() string { return "Preemption" }

// Config is the plugin's configuration.
func (p *Preemption) Config() PreemptionConfig { return p.cfg }

// PostFilter implements framework.PostFilterPlugin: push mode's preemption over the
// nodes.
func (p *Preemption) PostFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	clear(p.paths)
	claim, ok := p.claim(c, a.Task)
	if !ok {
		return framework.Refuse(framework.NoRoom)
	}
	p.best = victimSet{victims: p.best.victims[:0]}
	want := p.cfg.Candidates
	if want == 0 {
		want = max(100, c.State().NumNodes()/10)
	}
	found := 0
	c.State().ByFree(math.MinInt64, func(n *cluster.NodeInfo) bool {
		if !p.victimsOn(c, a, n, claim, &p.cur) {
			return true
		}
		if found++; p.best.node == nil || p.cur.better(&p.best) {
			p.best, p.cur = p.cur, p.best
		}
		return found < want
	})
	if p.best.node == nil {
		return framework.Refuse(framework.NoRoom)
	}
	if err := p.evict(c, a.Task, p.best.victims); err != nil {
		c.Warn("preemption refused", "task", a.Task.ID(), "err", err)
		return framework.Refuse(framework.NoRoom)
	}
	a.Node, a.Start = p.best.node, c.Now()
	a.Level = c.State().Locality(a.Task, a.Node)
	if st := c.Filter(a); !st.OK() {
		return st
	}
	return framework.Status{}
}

// Pass implements framework.PassPlugin: pull mode's preemption on the heartbeat's
// node.
func (p *Preemption) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	st := c.State()
	if st.Count(cluster.Pending) == 0 {
		return nil
	}
	low, any := math.MaxInt, false
	n.RangeTasks(func(t *cluster.TaskInfo) bool {
		if t.State() == cluster.Running && t.Preemptible() {
			if j, ok := st.Job(t.Job()); ok {
				low, any = min(low, j.Spec().Priority), true
			}
		}
		return true
	})
	reclaiming := p.cfg.Guarantees && st.HasMinShare()
	// The node gates must agree (a heartbeat cap, a node that stops allocation), but a
	// node short of idle room is what preemption is for.
	if !any || !c.RoomIgnoring(framework.NodeBusy) {
		return nil
	}
	tried, examined := 0, 0
	clear(p.paths)
	st.Walk(func(j *cluster.JobInfo) bool {
		if !reclaiming && j.Spec().Priority <= low {
			return true
		}
		if examined++; examined > 8*p.cfg.PerHeartbeat {
			return false
		}
		t, _, ok := st.FirstPending(j, n, fairness.OffSwitch)
		if !ok {
			return true
		}
		a, ok := stuck(c, t, n)
		if !ok {
			return true
		}
		claim, ok := p.claim(c, t)
		if !ok || (claim.prio <= low && !claim.reclaim) {
			return true
		}
		if tried++; !p.victimsOn(c, &a, n, claim, &p.cur) {
			return tried < p.cfg.PerHeartbeat
		}
		if err := p.evict(c, t, p.cur.victims); err != nil {
			c.Warn("preemption refused", "task", t.ID(), "err", err)
			return false
		}
		c.Try(j, t, st.Locality(t, n))
		return false
	})
	return nil
}

// claim is what a preemptor may do: evict lower priorities, and reclaim when its queue
// is owed its guarantee.
type claim struct {
	prio    int
	reclaim bool
	path    []string // the preemptor's queues, leaf first
	owed    string   // the queue on path owed its guarantee, when reclaim
}

// claim works out task t's claim at now, and records when its queue was first seen
// owed its guarantee; false when t may evict nothing.
func (p *Preemption) claim(c *framework.Cycle, t *cluster.TaskInfo) (claim, bool) {
	st := c.State()
	j, ok := st.Job(t.Job())
	if !ok || !j.Gathered() {
		return claim{}, false // a gang gathering might evict for members that never run
	}
	cl := claim{prio: j.Spec().Priority}
	if p.cfg.Guarantees && st.HasMinShare() {
		clear(p.queues)
		cl.path = p.path(st, j.Spec().Queue)
		for _, q := range cl.path {
			if l := p.load(st, q); l.min > 0 && l.used < l.min {
				cl.owed = q
				break
			}
		}
		for _, q := range cl.path {
			if q != cl.owed {
				delete(p.starved, q)
			}
		}
		if cl.owed != "" {
			now := c.Now()
			since, seen := p.starved[cl.owed]
			if !seen || now < since {
				since = now
			}
			// A task that became pending after the queue was last owed waits from
			// then: an old starvation does not count for new work.
			since = max(since, t.PendingSince())
			p.starved[cl.owed] = since
			cl.reclaim = now-since >= p.cfg.ReclaimDelay
		}
	}
	return cl, p.cfg.Priority || cl.reclaim
}

// path lists queue q and its ancestors, leaf first ("" is the root's default queue),
// cached for the heartbeat or placement.
func (p *Preemption) path(st *cluster.State, q string) []string {
	if out, ok := p.paths[q]; ok {
		return out
	}
	var out []string
	for i, x := 0, q; i < 64; i++ { // queues nest far less deep; the bound guards a cycle
		out = append(out, x)
		parent, err := st.ParentQueue(x)
		if err != nil || parent == "" || parent == x {
			break
		}
		x = parent
	}
	p.paths[q] = out
	return out
}

// load is queue q's use and guarantee in its ordering's unit, cached for the call.
func (p *Preemption) load(st *cluster.State, q string) queueLoad {
	if l, ok := p.queues[q]; ok {
		return l
	}
	e, err := st.QueueEntry(q)
	if err != nil {
		return queueLoad{}
	}
	used, _ := st.Ordering().Measure(&e, st.Capacity())
	l := queueLoad{used: used, min: e.Share.Min, entry: e}
	p.queues[q] = l
	return l
}

// over is how far queue path v (leaf first) may give up usage u: the least, over its
// queues not shared with the preemptor's path, of use above the guarantee (0 for a
// queue without a min share) after the eviction; negative when the eviction would take
// one of them below its guarantee, +Inf when every queue of v is the preemptor's too.
func (p *Preemption) over(st *cluster.State, v []string, u resource.Tuple, running int, mine []string) float64 {
	least := math.Inf(1)
	for _, q := range v {
		if slices.Contains(mine, q) {
			break
		}
		l := p.load(st, q)
		e := l.entry
		e.Usage, e.Running = e.Usage.Sub(u), e.Running-running
		after, _ := st.Ordering().Measure(&e, st.Capacity())
		least = min(least, after-l.min)
	}
	return least
}

// victimsOn finds the victims that make room for attempt a on node n (the steps in
// the type's doc) into out; false when no eviction there makes room.
func (p *Preemption) victimsOn(c *framework.Cycle, a *framework.Attempt, n *cluster.NodeInfo, cl claim, out *victimSet) bool {
	st := c.State()
	now := c.Now()
	cands := p.cands[:0]
	guarded := p.cfg.Guarantees && st.HasMinShare()
	var freeable int64
	dim := st.IndexDim()
	n.RangeTasks(func(t *cluster.TaskInfo) bool {
		if t.State() != cluster.Running || !t.Preemptible() {
			return true
		}
		j, ok := st.Job(t.Job())
		if !ok || !j.MayDisrupt(1) {
			return true
		}
		cd := candidate{t: t, prio: j.Spec().Priority, ran: max(now-t.Start(), 0)}
		switch {
		case p.cfg.Priority && cd.prio < cl.prio:
			if guarded && p.over(st, p.path(st, j.Spec().Queue), t.Usage(), 1, cl.path) < 0 {
				return true // guarantees hold against priority too: no queue below its own
			}
			cd.reason = framework.Preempted
		case cl.reclaim && cd.prio <= cl.prio:
			vp := p.path(st, j.Spec().Queue)
			if slices.Contains(vp, cl.owed) {
				return true // the owed queue's own: reclaiming from it gains it nothing
			}
			if cd.over = p.over(st, vp, t.Usage(), 1, cl.path); cd.over < 0 || math.IsInf(cd.over, 1) {
				return true
			}
			cd.reason = framework.Reclaimed
		default:
			return true
		}
		freeable += t.Usage()[dim]
		cands = append(cands, cd)
		return true
	})
	p.cands = cands
	if len(cands) == 0 || n.Timeline().FreeAt(now)[dim]+freeable < a.Demand.Hold.Stage(0).Demand[dim] {
		return false
	}
	// Most valuable first: they are put back first.
	slices.SortFunc(cands, func(x, y candidate) int {
		return cmp.Or(cmp.Compare(y.prio, x.prio), cmp.Compare(x.over, y.over), cmp.Compare(y.ran, x.ran), cmp.Compare(x.t.ID(), y.t.ID()))
	})
	for _, cd := range cands {
		_ = c.Suspend(cd.t)
	}
	try := *a
	try.Node, try.Start = n, now
	fits := c.Filter(&try).OK()
	victims := out.victims[:0]
	for i, cd := range cands {
		if !fits {
			_ = c.Resume(cd.t)
			continue
		}
		_ = c.Resume(cd.t)
		if !c.Filter(&try).OK() {
			_ = c.Suspend(cd.t)
			victims = append(victims, cands[i])
		}
	}
	for _, v := range victims {
		_ = c.Resume(v.t)
	}
	*out = victimSet{node: n, victims: victims}
	if !fits {
		return false
	}
	victims, ok := p.withGangs(st, victims)
	if !ok || !p.withinLimits(c, victims, cl) {
		return false
	}
	out.victims = victims
	out.maxPrio = math.MinInt
	for _, v := range victims {
		out.maxPrio = max(out.maxPrio, v.prio)
		out.sumPrio += int64(min(max(v.prio, math.MinInt32), math.MaxInt32)) + math.MaxInt32 + 1
		out.lost += v.ran
	}
	return len(victims) > 0
}

// withGangs adds, for a victim of a gang that would be left with fewer than MinMember
// running, the gang's other running tasks; false when one of them may not be
// evicted.
func (p *Preemption) withGangs(st *cluster.State, victims []candidate) ([]candidate, bool) {
	var per map[string]int
	for _, v := range victims {
		j, _ := st.Job(v.t.Job())
		if j.Spec().MinMember > 1 {
			if per == nil {
				per = map[string]int{}
			}
			per[j.ID()]++
		}
	}
	if len(per) == 0 {
		return victims, true
	}
	ids := slices.Sorted(maps.Keys(per)) // victims in a deterministic order
	for _, id := range ids {
		j, _ := st.Job(id)
		if j.NumRunning()+j.Finished()-per[id] >= j.Spec().MinMember {
			continue // its finished tasks keep it at MinMember
		}
		for _, t := range j.Running() {
			if slices.ContainsFunc(victims, func(v candidate) bool { return v.t == t }) {
				continue
			}
			if !t.Preemptible() {
				return victims, false
			}
			victims = append(victims, candidate{t: t, reason: victims[0].reason, prio: j.Spec().Priority, ran: max(st.Clock()-t.Start(), 0)})
		}
	}
	return victims, true
}

// withinLimits checks the victims together: each job's disruption budget, and that no
// queue they come from is taken below its guarantee.
func (p *Preemption) withinLimits(c *framework.Cycle, victims []candidate, cl claim) bool {
	st := c.State()
	guarded := p.cfg.Guarantees && st.HasMinShare()
	perJob := map[string]int{}
	perQueue := map[string]resource.Tuple{} // usage leaving each queue, ancestors included
	count := map[string]int{}
	for _, v := range victims {
		j, _ := st.Job(v.t.Job())
		// A victim started in this heartbeat is withdrawn, not evicted: no budget
		// of its own (framework.Cycle.Evict), but its usage leaves its queues all
		// the same.
		if !c.Started(v.t) {
			if perJob[j.ID()]++; !j.MayDisrupt(perJob[j.ID()] + c.Restarted(j)) {
				return false
			}
		}
		if guarded {
			for _, q := range p.path(st, j.Spec().Queue) {
				if slices.Contains(cl.path, q) {
					break
				}
				perQueue[q] = perQueue[q].Add(v.t.Usage())
				count[q]++
			}
		}
	}
	for q, u := range perQueue {
		if p.over(st, []string{q}, u, count[q], cl.path) < 0 {
			return false
		}
	}
	return true
}

// evict evicts the victims for task t, each with its reason.
func (p *Preemption) evict(c *framework.Cycle, t *cluster.TaskInfo, victims []candidate) error {
	vs := make([]framework.Victim, len(victims))
	for i, v := range victims {
		vs[i] = framework.Victim{Task: v.t, Reason: v.reason}
	}
	return c.Evict(t, vs)
}

// better reports whether victim set v beats w (Kubernetes' node choice, with run time
// lost for the start-time rule).
func (v *victimSet) better(w *victimSet) bool {
	return cmp.Or(cmp.Compare(v.maxPrio, w.maxPrio), cmp.Compare(v.sumPrio, w.sumPrio),
		cmp.Compare(len(v.victims), len(w.victims)), cmp.Compare(v.lost, w.lost)) < 0
}
