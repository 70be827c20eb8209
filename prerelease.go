package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

// This file wires the pre-release resource list (PRRL thesis ch. 4, Alg. 4.1/4.2, SPEC
// §10; package speculate) into pull mode as an alternative to fairness order plus
// delay scheduling, and the progress model (SPEC §8) that both it and speculation read.

// WithPreReleaseList makes pull mode choose tasks by the pre-release resource list
// instead of the fairness order with delay scheduling: on a heartbeat, p picks the pool
// and job by the fair rule and either gives the node a task of that job (node-local,
// else rack-local, else any) or promises the job a busy slot elsewhere where its task
// would finish sooner (the slot's time left plus the task and transfer times) and moves
// on. There are no wait parameters. A job's task time on a node is 1/rate of the tasks
// finished there (eq. 3.5), from the progress the embedder reports (Scheduler.
// Progress); a busy slot's time left is its task's (eq. 3.4), or, without progress
// reports, what remains of its predicted duration.
//
// Each decision reads every queue, job, pending task and running task: O(pending +
// running) a heartbeat, meant for clusters of the thesis' scale rather than for 100,000
// pending tasks. Queue min shares are read in tasks (as Fair counts them). Push mode
// is unaffected.
func WithPreReleaseList(p *speculate.FairPlacer) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("finegrain: pre-release placer is nil: %w", ErrInvalid)
		}
		c.prerelease = p
		return nil
	}
}

// Progress reports a running task's progress in [0, 1] at now (SPEC §8, eq. 3.1): the
// input of the progress model that speculation (Runtime) and the pre-release list
// read. Progress may not go down, nor time backwards.
func (s *Scheduler) Progress(id string, progress float64, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.running(id, "progress report", now)
	if err != nil {
		return err
	}
	if t.backupOf != nil {
		return nil // a backup's progress is not modelled (WithSpeculation)
	}
	if err := s.tracker.Update(id, progress, now); err != nil {
		return fmt.Errorf("finegrain: progress of task %q: %w", id, err)
	}
	if j := s.jobs[t.spec.Job]; j.progress != nil {
		_ = j.progress.Update(id, progress, now)
	}
	return nil
}

// Runtime is the progress model of the running tasks — progress, rate, time left,
// per-node rates — as package speculate's LATE and PRRL speculators read it
// (speculate.Job.Tasks).
func (s *Scheduler) Runtime() predict.RuntimeEstimator { return s.tracker }

// pullPreRelease is a heartbeat's pass under WithPreReleaseList: Alg. 4.2 for the free
// node, again after each start while the node has room.
func (s *Scheduler) pullPreRelease(n *node, now time.Duration, d *Decision) {
	for s.roomFor(n, now, d) {
		state := s.fairState(n, now)
		pl, err := s.cfg.prerelease.Place(state, n.spec.ID)
		if err != nil {
			s.logWarn("pre-release placement failed", "node", n.spec.ID, "err", err)
			d.Stop = NoPending
			return
		}
		if !pl.Assigned {
			d.Stop = NoPending
			if len(pl.PreAssigned) > 0 {
				d.Stop = PromisedElsewhere
			}
			return
		}
		j, t := s.jobs[pl.Job], s.tasks[pl.Task]
		a, why := s.try(t, s.demand(t), n, now)
		if why == NoReason && !s.admit(t, a.want) {
			why = MaxShare
		}
		if why == NoReason {
			if as, ok := s.allocate(t, n, now, a, levelOf(pl.Locality), false); ok {
				d.Assignments = append(d.Assignments, as)
				continue
			}
			why = NoRoom
		}
		j.passed = s.beat
		d.skip(Skip{Job: pl.Job, Task: pl.Task, Reason: why, Result: a.result})
		if why == PolicyStop {
			d.Stop = PolicyStop
			return
		}
	}
}

// fairState builds what the pre-release list reads: pools (the jobs' queues) with their
// jobs not passed over in this heartbeat and their pending tasks, every running task as
// a busy slot with its time left, and every node's rack.
func (s *Scheduler) fairState(n *node, now time.Duration) speculate.FairState {
	st := speculate.FairState{Racks: make(map[string]string, len(s.nodes))}
	for id, m := range s.nodes {
		st.Racks[id] = m.spec.Rack
	}
	order := speculate.FairJobs
	if _, fifo := s.cfg.ordering.(fairness.FIFO); fifo {
		order = speculate.FIFOJobs
	}
	timer := s.taskTimer()
	pools := map[string]int{}
	s.tree.Walk(func(jid string) bool {
		j := s.jobs[jid]
		if j.passed == s.beat {
			return true
		}
		e, err := s.tree.Job(jid)
		if err != nil {
			return true
		}
		pj := speculate.PoolJob{ID: jid, Weight: e.Share.Weight, Priority: e.Priority, Submitted: e.Submitted, Running: e.Running, TaskTime: timer}
		s.pending.Ascend(jid, n.spec.ID, n.spec.Rack, fairness.OffSwitch, func(tid string, _ fairness.Level) bool {
			pj.Pending = append(pj.Pending, speculate.PendingTask{ID: tid, Locations: s.locations(s.tasks[tid])})
			return true
		})
		q := j.spec.Queue
		i, ok := pools[q]
		if !ok {
			i = len(st.Pools)
			pools[q] = i
			pool := speculate.Pool{ID: q, Weight: 1, Order: order}
			if q == "" {
				pool.ID = rootPool
			}
			if qe, err := s.tree.Queue(q); err == nil && q != "" {
				pool.Weight, pool.MinShare = qe.Share.Weight, int(qe.Share.Min)
			}
			st.Pools = append(st.Pools, pool)
		}
		st.Pools[i].Jobs = append(st.Pools[i].Jobs, pj)
		return true
	})
	st.Busy = s.busySlots(now, true)
	return st
}

// levelOf maps speculate's locality to fairness's (the two packages are siblings and
// do not import each other).
func levelOf(l speculate.Locality) fairness.Level {
	switch l {
	case speculate.NodeLocal:
		return fairness.NodeLocal
	case speculate.RackLocal:
		return fairness.RackLocal
	}
	return fairness.OffSwitch
}

// rootPool names the jobs submitted to no queue as a pool.
const rootPool = "(root)"

// locations are a task's input replicas with their racks.
func (s *Scheduler) locations(t *task) []speculate.Location {
	if len(t.spec.Inputs) == 0 {
		return nil
	}
	out := make([]speculate.Location, 0, len(t.spec.Inputs))
	for _, id := range t.spec.Inputs {
		rack := ""
		if m := s.nodes[id]; m != nil {
			rack = m.spec.Rack
		}
		out = append(out, speculate.Location{Node: id, Rack: rack})
	}
	return out
}

// timeLeft is when a running task's slot frees, from now: by its reported progress
// (eq. 3.4), else by what remains of its predicted duration; false when unknown.
func (s *Scheduler) timeLeft(t *task, now time.Duration) (time.Duration, bool) {
	if p, ok := s.tracker.Task(t.spec.ID, now); ok && p.Progress > 0 && p.Rate > 0 {
		return max(p.TimeLeft, 0), true
	}
	if t.planned > 0 {
		return max(t.start+t.planned-now, 0), true
	}
	return 0, false
}

// taskTimer is eq. 3.5's 1/progressRate(node) from the finished tasks, or nil (the
// same everywhere) before any finished.
func (s *Scheduler) taskTimer() speculate.TaskTimer {
	all := s.tracker.Finished()
	if all.N == 0 || all.Mean <= 0 {
		return nil
	}
	return nodeTimer{tracker: s.tracker, mean: all.Mean}
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
