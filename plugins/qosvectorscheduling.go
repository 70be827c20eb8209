package plugins

import (
	"fmt"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
)

// QoSVectorDemand is a job's demand under QoS-vector scheduling (docs/methods.md §12):
// the QoS it asks of a node, how much its user cares about each feature, and the hard
// QoS its tasks cannot do without. Every task of the job asks the same. It is not the
// deadline QoS check of eq. 15 (plugins.QoS), which is another method.
type QoSVectorDemand struct {
	// Req is the job's QoS demand vector (eq. 1): cpu, memory, network, disk and
	// price, each in [1, 10].
	Req match.QoSVector
	// Weights are the user's preference weights over the same features (eq. 2): each
	// ≥ 0, summing to 1 within match.WeightTolerance. The largest is the job's class,
	// the sub-queue it waits in (ties to the earlier feature).
	Weights match.Weights
	// Need is the job's hard QoS: the memory and disk, in bytes, one of its tasks
	// actually needs (eq. 5's mem_task and disk_task).
	Need match.Hard
}

// Validate checks the demand: Req in [1, 10] and not NaN, weights ≥ 0 summing to 1,
// hard needs ≥ 0. The error wraps cluster.ErrInvalid and the match sentinel that says
// what is wrong (match.ErrBadVector, match.ErrBadWeights, match.ErrBadHard).
func (d QoSVectorDemand) Validate() error {
	if err := d.validate(); err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	return nil
}

func (d QoSVectorDemand) validate() error {
	for _, err := range []error{d.Req.Validate(), d.Weights.Validate(), d.Need.Validate()} {
		if err != nil {
			return fmt.Errorf("QoS-vector demand: %w: %w", cluster.ErrInvalid, err)
		}
	}
	return nil
}

// QoSVectorSupply is what a node offers under QoS-vector scheduling (docs/methods.md
// §12), as its heartbeat reports it: its QoS supply vector and its hard QoS values.
type QoSVectorSupply struct {
	// Res is the node's QoS supply vector (eq. 3): cpu, memory, network, disk and
	// price, each in [1, 10]. Its largest value is the node's class (steps 2 and 5).
	Res match.QoSVector
	// Remaining is the memory and disk, in bytes, the node has left (eq. 5's mem_res
	// and disk_res) at the time of the report.
	Remaining match.Hard
}

// Validate checks the supply: Res in [1, 10] and not NaN, remaining amounts ≥ 0. The
// error wraps cluster.ErrInvalid and match.ErrBadVector or match.ErrBadHard.
func (s QoSVectorSupply) Validate() error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	return nil
}

func (s QoSVectorSupply) validate() error {
	for _, err := range []error{s.Res.Validate(), s.Remaining.Validate()} {
		if err != nil {
			return fmt.Errorf("QoS-vector supply: %w: %w", cluster.ErrInvalid, err)
		}
	}
	return nil
}

// QoSVectorScheduling (Pass, Forget) is pull mode's task choice by QoS-vector matching
// in capacity scheduling (the QoS paper; docs/methods.md §12, steps 1–7), in place of
// DelayScheduling. Jobs carry a QoSVectorDemand (SetDemand) and nodes a
// QoSVectorSupply (SetSupply). While the heartbeat's node has room (the NodeGate
// plugins) and the JobFilter plugins let the heartbeat go on:
//
//  1. Jobs wait in queues by their JobSpec.Queue (the user's queue, its capacity
//     configured with a min share) and, within a queue, in sub-queues by their class,
//     the feature of their largest weight. The jobs with pending tasks not passed over
//     in this heartbeat and let through by the JobFilter plugins are taken in the
//     fairness order (cluster.State.Walk). A job without a demand is passed over
//     (PluginRefused; its tasks wait until it has one).
//  2. The node is classified by the largest feature of its supply, rank i = 1.
//  3. The queue with the most free capacity is chosen: its min share (the capacity
//     configured with fairness.MinShare) less what it uses, both in the ordering's
//     unit (fairness.Policy.Measure; under fairness.Capacity and DRF a fraction of the
//     cluster, under Fair and FIFO running tasks); ties to the queue reached first in
//     the fairness order. Jobs submitted to no queue are in the root queue, whose use
//     is the whole cluster's. Reading: only queues with a job waiting compete; the
//     printed "if the queue is empty, assign nothing" is read as "no queue has a job
//     waiting", since the literal reading would idle the node whenever the queue of
//     most free capacity had nothing to run.
//  4. The sub-queue of the node's class is chosen; when it is empty, i ← i + 1 and
//  5. the node is classified by its i-th largest feature, back to 4 (at most five
//     ranks: a queue with a job waiting has a non-empty sub-queue).
//  6. In the sub-queue, every job is evaluated against the node (match.Aging.Pick):
//     value (eq. 4), must_value (eq. 5) and finalvalue (eq. 6) with the job's aging
//     priority, which rises by one each time its hard QoS fails (must_value ≤ 0); the
//     job of best finalvalue among those whose hard QoS is met is chosen (ties to the
//     earlier in the fairness order), and its first pending task is tried
//     (framework.Cycle.Try; there are no locality waits). Reading (as printed): when no
//     job of the sub-queue meets the hard QoS, nothing is chosen and the heartbeat
//     ends (Stop PluginRefused, a skip for each job refused).
//  7. After a start the choice starts again from step 3, with the node's remaining
//     hard values less the task's need; a job whose task is refused is passed over
//     for the rest of the heartbeat (as DelayScheduling does, a task that fits no node
//     even empty does not hold its job's other tasks back).
//
// A node's hard values are those of its latest SetSupply less the needs of the tasks
// this pass started there since: report the supply with each heartbeat, as the paper's
// workers do. A node without a supply takes nothing from this pass (Stop
// PluginRefused). Push mode and the other passes (preemption, bookings, speculation)
// place as they would without it.
//
// Cost: each choice walks the jobs once (as a DelayScheduling pass does) and
// evaluates the jobs of one sub-queue. QoSVectorScheduling belongs to one Framework
// and is not safe for concurrent use: the reference Scheduler serialises its calls.
type QoSVectorScheduling struct {
	aging    match.Aging
	demands  []qosDemand          // by job slot (cluster.JobInfo.Index)
	supplies map[string]qosSupply // by node ID
	try      DelayScheduling      // its try, with no locality waits

	// Scratch reused from choice to choice.
	c      *framework.Cycle
	visit  func(*cluster.JobInfo) bool // p.collect, bound once
	cands  []qosCand
	queues []qosQueue
	byID   map[string]int // index in queues by queue ID
	jobs   []match.QoSJob
	picks  []int // index in cands of each of jobs
}

// qosDemand is a job's demand, with the job it was set for: a later job in the same
// slot, or of the same ID after the first was forgotten, has none until it is set.
// A zero qosDemand (nil job) is none.
type qosDemand struct {
	job *cluster.JobInfo
	d   QoSVectorDemand
}

// qosSupply is a node's latest report, with the node it was set for (a node removed
// and added again has none until it reports), and the hard needs of the tasks started
// there since.
type qosSupply struct {
	node *cluster.NodeInfo
	s    QoSVectorSupply
	used match.Hard
}

// qosCand is a job that may take the node in this choice.
type qosCand struct {
	job   *cluster.JobInfo
	queue int // index in queues
	d     QoSVectorDemand
}

// qosQueue is a queue with a job waiting, in the order the walk reached it.
type qosQueue struct {
	id   string
	free float64
}

// NewQoSVectorScheduling returns the pass with no demands and no supplies.
func NewQoSVectorScheduling() *QoSVectorScheduling {
	p := &QoSVectorScheduling{
		supplies: make(map[string]qosSupply),
		byID:     make(map[string]int),
		try:      *NewDelayScheduling(nil),
	}
	p.visit = p.collect
	return p
}

// Name implements framework.Plugin.
func (*QoSVectorScheduling) Name() string { return "QoSVectorScheduling" }

// SetDemand sets job j's demand, replacing any earlier one. It fails, changing
// nothing, on a nil job or an invalid demand (QoSVectorDemand.Validate).
func (p *QoSVectorScheduling) SetDemand(j *cluster.JobInfo, d QoSVectorDemand) error {
	if j == nil {
		return fmt.Errorf("plugins: QoS-vector demand for a nil job: %w", cluster.ErrUnknownJob)
	}
	if err := d.validate(); err != nil {
		return fmt.Errorf("plugins: job %q: %w", j.ID(), err)
	}
	i := j.Index()
	if i >= len(p.demands) {
		p.demands = append(p.demands, make([]qosDemand, i+1-len(p.demands))...)
	}
	p.demands[i] = qosDemand{job: j, d: d}
	return nil
}

// demand is job j's demand; false when none was set for it.
func (p *QoSVectorScheduling) demand(j *cluster.JobInfo) (*QoSVectorDemand, bool) {
	if i := j.Index(); i < len(p.demands) && p.demands[i].job == j {
		return &p.demands[i].d, true
	}
	return nil, false
}

// Demand is job j's demand; false when none was set for it.
func (p *QoSVectorScheduling) Demand(j *cluster.JobInfo) (QoSVectorDemand, bool) {
	if d, ok := p.demand(j); ok {
		return *d, true
	}
	return QoSVectorDemand{}, false
}

// SetSupply records node n's report, replacing the earlier one: its hard values are
// s.Remaining until this pass starts a task there. It fails, changing nothing, on a
// nil node or an invalid supply (QoSVectorSupply.Validate).
func (p *QoSVectorScheduling) SetSupply(n *cluster.NodeInfo, s QoSVectorSupply) error {
	if n == nil {
		return fmt.Errorf("plugins: QoS-vector supply for a nil node: %w", cluster.ErrUnknownNode)
	}
	if err := s.validate(); err != nil {
		return fmt.Errorf("plugins: node %q: %w", n.ID(), err)
	}
	p.supplies[n.ID()] = qosSupply{node: n, s: s}
	return nil
}

// Supply is node n's supply as the next choice sees it: the latest report, its
// Remaining less the hard needs of the tasks this pass started there since (at least
// 0); false when n has not reported.
func (p *QoSVectorScheduling) Supply(n *cluster.NodeInfo) (QoSVectorSupply, bool) {
	e, ok := p.supplies[n.ID()]
	if !ok || e.node != n {
		return QoSVectorSupply{}, false
	}
	s := e.s
	s.Remaining = match.Hard{Memory: max(s.Remaining.Memory-e.used.Memory, 0), Disk: max(s.Remaining.Disk-e.used.Disk, 0)}
	return s, true
}

// Priority is job j's aging priority: 0 at first, one more for each evaluation against
// a node whose hard QoS it did not meet (docs/methods.md §12, eq. 6).
func (p *QoSVectorScheduling) Priority(j *cluster.JobInfo) int { return p.aging.Priority(j.ID()) }

// Forget implements framework.ForgetPlugin: a forgotten job's demand and priority go.
func (p *QoSVectorScheduling) Forget(j *cluster.JobInfo) {
	if i := j.Index(); i < len(p.demands) && p.demands[i].job == j {
		p.demands[i] = qosDemand{}
	}
	p.aging.Forget(j.ID())
}

// Pass implements framework.PassPlugin: steps 1–7 while the node has room.
func (p *QoSVectorScheduling) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	d := c.Decision()
	if _, ok := p.Supply(n); !ok {
		c.Warn("QoS-vector scheduling: the node has reported no QoS supply", "node", n.ID())
		d.Stop = framework.PluginRefused
		return nil
	}
	p.prune(c.State())
	defer func() { p.c = nil }()
	for c.Room() && c.FilterPass() {
		sup, _ := p.Supply(n)
		if !p.choose(c) { // step 1 and 3
			return nil
		}
		// Steps 2, 4–6 in the chosen queue, whose jobs p.jobs holds in fairness order.
		node := match.QoSNode{Res: sup.Res, Remaining: sup.Remaining}
		i, err := p.aging.Pick(node, p.jobs)
		if err != nil { // cannot happen: demands and supplies were validated
			c.Warn("QoS-vector scheduling: pick failed", "node", n.ID(), "err", err)
			d.Stop = framework.PluginRefused
			return nil
		}
		if i < 0 {
			p.refuse(c, node)
			d.Stop = framework.PluginRefused
			return nil
		}
		cd := p.cands[p.picks[i]]
		t, level, ok := c.State().FirstPending(cd.job, n, fairness.OffSwitch)
		if !ok { // cannot happen: a candidate has pending tasks
			c.SkipJob(cd.job, framework.Skip{})
			continue
		}
		s, _ := p.try.try(c, cd.job, n, t, level, false)
		if s.OK() || s.Code == framework.Wait {
			e := p.supplies[n.ID()]
			e.used.Memory += cd.d.Need.Memory
			e.used.Disk += cd.d.Need.Disk
			p.supplies[n.ID()] = e
			continue
		}
		c.SkipJob(cd.job, framework.Skip{})
		if s.Code == framework.Closed {
			return nil
		}
	}
	return nil
}

// choose collects the candidate jobs (step 1) and the queue with the most free
// capacity among theirs (step 3), leaving the queue's jobs in p.jobs, in fairness
// order, and their indexes in p.cands in p.picks; false when no job is a candidate.
func (p *QoSVectorScheduling) choose(c *framework.Cycle) bool {
	st := c.State()
	p.c, p.cands, p.queues = c, p.cands[:0], p.queues[:0]
	clear(p.byID)
	st.Walk(p.visit)
	if len(p.cands) == 0 {
		return false
	}
	// Shares are read after the walk, which defers changes to the fairness tree.
	best := 0
	for i := range p.queues {
		q := &p.queues[i]
		q.free = queueFree(st, q.id)
		if q.free > p.queues[best].free {
			best = i
		}
	}
	p.jobs, p.picks = p.jobs[:0], p.picks[:0]
	for i, cd := range p.cands {
		if cd.queue == best {
			p.jobs = append(p.jobs, match.QoSJob{ID: cd.job.ID(), Req: cd.d.Req, Weights: cd.d.Weights, Need: cd.d.Need})
			p.picks = append(p.picks, i)
		}
	}
	return true
}

// collect is the walk's visit: it keeps the jobs that may take the node, and their
// queues in the order first reached.
func (p *QoSVectorScheduling) collect(j *cluster.JobInfo) bool {
	c := p.c
	switch {
	case c.Skipped(j):
		return true
	case len(j.Classes()) == 0: // its last pending task started in this heartbeat
		c.SkipJob(j, framework.Skip{})
		return true
	}
	d, ok := p.demand(j)
	if !ok {
		c.SkipJob(j, framework.Skip{Job: j.ID(), Reason: framework.PluginRefused, Plugin: p.Name()})
		return true
	}
	if !c.FilterJob(j) {
		return true
	}
	// The walk takes a queue's jobs one after another: most often j's queue is the
	// last one seen.
	q := j.Spec().Queue
	qi := len(p.queues) - 1
	if qi < 0 || p.queues[qi].id != q {
		var seen bool
		if qi, seen = p.byID[q]; !seen {
			qi = len(p.queues)
			p.queues = append(p.queues, qosQueue{id: q})
			p.byID[q] = qi
		}
	}
	p.cands = append(p.cands, qosCand{job: j, queue: qi, d: *d})
	return true
}

// queueFree is queue q's free capacity: its min share less its use, in the ordering's
// unit ("" is the root queue).
func queueFree(st *cluster.State, q string) float64 {
	e, err := st.QueueEntry(q)
	if err != nil {
		return 0
	}
	used, _ := st.Ordering().Measure(&e, st.Capacity())
	return e.Share.Min - used
}

// refuse records that no job of the node's sub-queue in the chosen queue meets the
// hard QoS on node: each is passed over with a skip.
func (p *QoSVectorScheduling) refuse(c *framework.Cycle, node match.QoSNode) {
	for rank := 1; rank <= match.QoSLen; rank++ {
		class, _ := node.Res.Class(rank)
		found := false
		for i, j := range p.jobs {
			if j.Weights.Class() == class {
				found = true
				c.SkipJob(p.cands[p.picks[i]].job, framework.Skip{Job: j.ID, Reason: framework.PluginRefused, Plugin: p.Name()})
			}
		}
		if found {
			return
		}
	}
}

// prune drops the supplies of nodes no longer in the state once there are twice as
// many as nodes, so that the map stays O(nodes).
func (p *QoSVectorScheduling) prune(st *cluster.State) {
	if len(p.supplies) <= 2*st.NumNodes() {
		return
	}
	for id, e := range p.supplies {
		if m, ok := st.Node(id); !ok || m != e.node {
			delete(p.supplies, id)
		}
	}
}
