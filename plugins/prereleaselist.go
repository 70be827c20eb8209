package plugins

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

// PreReleaseList (Pass) is pull mode's alternative locality strategy: the
// pre-release resource list (PRRL thesis ch. 4, Alg. 4.1/4.2; package speculate)
// instead of the fairness order with delay scheduling. On a heartbeat the placer picks
// the pool and job by the fair rule and either gives the node a task of that job
// (node-local, else rack-local, else any) or promises the job a busy slot elsewhere
// where its task would finish sooner (the slot's time left plus the task and transfer
// times) and moves on. There are no wait parameters. A job's task time on a node is
// 1/rate of the tasks finished there (eq. 3.5), from reported progress; a busy slot's
// time left is its task's (eq. 3.4), or, without progress reports, what remains of its
// predicted duration.
//
// Each decision reads every queue, job, pending task and running task: O(pending +
// running) a heartbeat, meant for clusters of the thesis' scale rather than for
// 100,000 pending tasks. Queue min shares are read in tasks (as Fair counts them).
// JobFilter plugins are not consulted. Tasks known to fit no node of the cluster even
// empty are left out of the list — declared profiles no node holds, and for the rest
// of the heartbeat undeclared tasks of a class refused that way — so that they do not
// hold their jobs' other tasks back for ever; a job refused otherwise is passed over.
type PreReleaseList struct {
	placer  *speculate.FairPlacer
	refused []cluster.ClassID // classes refused in the current heartbeat
}

// NewPreReleaseList returns the strategy placing with p.
func NewPreReleaseList(p *speculate.FairPlacer) (*PreReleaseList, error) {
	if p == nil {
		return nil, fmt.Errorf("plugins: pre-release list: nil placer: %w", cluster.ErrInvalid)
	}
	return &PreReleaseList{placer: p}, nil
}

// Name implements framework.Plugin.
func (*PreReleaseList) Name() string { return "PreReleaseList" }

// Pass implements framework.PassPlugin: Alg. 4.2 for the free node, again after each
// start while the node has room.
func (p *PreReleaseList) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	d := c.Decision()
	st := c.State()
	p.refused = p.refused[:0]
	for c.Room() {
		pl, err := p.placer.Place(fairState(c, n, p.refused), n.ID())
		if err != nil {
			c.Warn("pre-release placement failed", "node", n.ID(), "err", err)
			d.Stop = framework.NoPending
			return nil
		}
		if !pl.Assigned {
			d.Stop = framework.NoPending
			if len(pl.PreAssigned) > 0 {
				d.Stop = framework.PromisedElsewhere
			}
			return nil
		}
		j, _ := st.Job(pl.Job)
		t, _ := st.Task(pl.Task)
		switch s := c.Try(j, t, pl.Locality); {
		case s.OK():
		case s.Code == framework.Closed:
			return nil
		case unplaceable(c, s) && (t.Declared().Len() > 0 || len(p.refused) < maxGlobalClasses):
			// fairState leaves it out from now on (fitsNoNode): a declared task by its
			// own profile, an undeclared one by its class.
			if s.Reason == framework.NoRoom && t.Declared().Len() == 0 { // no task of its class fits this node
				p.refused = append(p.refused, st.ClassOf(t))
			}
		default:
			c.SkipJob(j, framework.Skip{})
		}
	}
	return nil
}

// rootPool names the jobs submitted to no queue as a pool.
const rootPool = "(root)"

// fairState builds what the pre-release list reads: pools (the jobs' queues) with
// their jobs not passed over in this heartbeat and their pending tasks not known to
// fit no node (fitsNoNode), every running task as a busy slot with its time left, and
// every node's rack.
func fairState(c *framework.Cycle, n *cluster.NodeInfo, refused []cluster.ClassID) speculate.FairState {
	st := c.State()
	fs := speculate.FairState{Racks: make(map[string]string, st.NumNodes())}
	for m := range st.Nodes() {
		fs.Racks[m.ID()] = m.Rack()
	}
	order := speculate.FairJobs
	if _, fifo := st.Ordering().(fairness.FIFO); fifo {
		order = speculate.FIFOJobs
	}
	timer := taskTimer(st.Progress())
	pools := map[string]int{}
	st.Walk(func(j *cluster.JobInfo) bool {
		if c.Skipped(j) {
			return true
		}
		e, err := st.JobEntry(j.ID())
		if err != nil {
			return true
		}
		pj := speculate.PoolJob{ID: j.ID(), Weight: e.Share.Weight, Priority: e.Priority, Submitted: e.Submitted, Running: e.Running, TaskTime: timer}
		st.AscendPending(j, n, fairness.OffSwitch, func(t *cluster.TaskInfo, _ fairness.Level) bool {
			if !fitsNoNode(st, t, refused) {
				pj.Pending = append(pj.Pending, speculate.PendingTask{ID: t.ID(), Locations: locations(st, t)})
			}
			return true
		})
		if len(pj.Pending) == 0 {
			return true
		}
		q := j.Spec().Queue
		i, ok := pools[q]
		if !ok {
			i = len(fs.Pools)
			pools[q] = i
			pool := speculate.Pool{ID: q, Weight: 1, Order: order}
			if q == "" {
				pool.ID = rootPool
			}
			if qe, err := st.QueueEntry(q); err == nil && q != "" {
				pool.Weight, pool.MinShare = qe.Share.Weight, int(qe.Share.Min)
			}
			fs.Pools = append(fs.Pools, pool)
		}
		fs.Pools[i].Jobs = append(fs.Pools[i].Jobs, pj)
		return true
	})
	fs.Busy = busySlots(st, c.Now(), true)
	return fs
}

// locations are a task's input replicas with their racks, as package speculate reads
// them.
func locations(st *cluster.State, t *cluster.TaskInfo) []speculate.Location {
	locs := st.Locations(t)
	if len(locs) == 0 {
		return nil
	}
	out := make([]speculate.Location, len(locs))
	for i, l := range locs {
		out[i] = speculate.Location{Node: l.Node, Rack: l.Rack}
	}
	return out
}

// busySlots lists the slots of the running tasks (and, with backups, of their backup
// attempts) whose time left is known, with that time left, sorted by node and task
// (State.Nodes and NodeInfo.Tasks come in ID order): the pre-release resources of docs/methods.md §9 and §10.
func busySlots(st *cluster.State, now time.Duration, backups bool) []speculate.BusySlot {
	var out []speculate.BusySlot
	for m := range st.Nodes() {
		for _, t := range m.Tasks() {
			if t.State() != cluster.Running || (t.BackupOf() != nil && !backups) {
				continue
			}
			if left, ok := st.TimeLeft(t, now); ok {
				out = append(out, speculate.BusySlot{Task: t.ID(), Node: m.ID(), TimeLeft: left})
			}
		}
	}
	return out
}

// taskTimer is eq. 3.5's 1/progressRate(node) from the finished tasks, or nil (the
// same everywhere) before any finished.
func taskTimer(tracker *predict.ProgressTracker) speculate.TaskTimer {
	all := tracker.Finished()
	if all.N == 0 || all.Mean <= 0 {
		return nil
	}
	return nodeTimer{tracker: tracker, mean: all.Mean}
}

type nodeTimer struct {
	tracker *predict.ProgressTracker
	mean    float64
}

// TaskTime implements speculate.TaskTimer.
func (t nodeTimer) TaskTime(node string) time.Duration {
	rate := t.mean
	if r, ok := t.tracker.NodeRate(node); ok && r.Mean > 0 {
		rate = r.Mean
	}
	return time.Duration(float64(time.Second) / rate)
}
