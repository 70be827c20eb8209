package finegrain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

// This file wires speculative execution (SPEC §8–9; package speculate's LATE and PRRL,
// or any speculate.Speculator) into pull mode: when a heartbeat has started what it
// could and the node still has room, the jobs that have no pending task are asked, in
// fairness order, whether to back up one of their running tasks there.

// BackupSuffix ends the ID of a backup attempt: the backup of task "t7" is
// "t7"+BackupSuffix. The scheduler names backups; a submitted task whose ID ends with
// it is never backed up.
const BackupSuffix = "#backup"

// BackupID returns the ID of task id's backup attempt.
func BackupID(id string) string { return id + BackupSuffix }

// WithSpeculation turns on speculative execution in pull mode with sp (LATE or PRRL
// from package speculate, or another speculate.Speculator). After a heartbeat's passes
// have started what they could, while the node has room, the jobs with running tasks
// and none pending are visited in priority then submission order, and sp decides whether one of each
// job's running tasks gets a backup attempt on the node. sp sees, for each job, a
// progress model of that job's own tasks (one predict.ProgressTracker per job, fed by
// Progress, Started, Finished and Failed), the tasks already backed up, and, as nodes
// not to back up on, each task's own node and the nodes where its backup failed; PRRL
// also sees the other jobs' running tasks as slots that free when their time left is
// up.
//
// A backup is placed like its task (same demand, same matcher) and comes back in the
// Decision as an Assignment whose Task is BackupID(task) and BackupOf the task. The
// embedder runs it and reports on it by that ID — Progress is accepted and ignored,
// Finished, Failed, Cancel — under these rules:
//
//   - The first attempt to finish finishes the task: Finished on either ID releases
//     both attempts' resources (stop the other attempt). A backup that wins counts on
//     its node's task rate.
//   - Failed (or Cancel) on a backup drops the backup only; the task runs on.
//   - Failed on a task, or RemoveNode of its node, drops its backup with it and makes
//     the task pending again (stop the backup); Cancel on a task cancels both.
//
// A task has at most one backup at a time. Backups hold resources and count in their
// job's fairness usage while they run; Counts and State count the task once (State of
// a backup ID reports Running while it runs).
func WithSpeculation(sp speculate.Speculator) Option {
	return func(c *config) error {
		if sp == nil {
			return fmt.Errorf("finegrain: speculator is nil: %w", ErrInvalid)
		}
		c.speculator = sp
		return nil
	}
}

// speculatePass offers node n's room to the jobs with running tasks and none pending,
// in priority then submission order (as Hadoop's schedulers offer speculation to the
// earlier job), one backup per job at most.
func (s *Scheduler) speculatePass(n *node, now time.Duration, d *Decision) {
	var busy []speculate.BusySlot
	busyDone := false
	var candidates []*job
	for _, j := range s.busyJobs {
		if len(j.classes) == 0 && j.progress != nil && j.progress.Len() > 0 {
			candidates = append(candidates, j)
		}
	}
	slices.SortFunc(candidates, func(a, b *job) int {
		if a.spec.Priority != b.spec.Priority {
			return cmp.Compare(b.spec.Priority, a.spec.Priority)
		}
		if a.spec.Submitted != b.spec.Submitted {
			return cmp.Compare(a.spec.Submitted, b.spec.Submitted)
		}
		return strings.Compare(a.spec.ID, b.spec.ID)
	})
	for _, j := range candidates {
		if !s.roomFor(n, now, d) {
			return
		}
		if !busyDone {
			busy, busyDone = s.busySlots(now, false), true
		}
		req := speculate.Request{Node: n.spec.ID, Now: now, Busy: otherJobs(busy, j)}
		dec, err := s.cfg.speculator.Speculate(s.specJob(j, now), req)
		if err != nil {
			s.logWarn("speculation failed", "job", j.spec.ID, "node", n.spec.ID, "err", err)
			continue
		}
		if dec.Action != speculate.Backup {
			continue
		}
		t := s.tasks[dec.Task]
		if t == nil || t.state != Running || t.backup != nil || t.node == n {
			continue
		}
		if a, ok := s.startBackup(t, n, now); ok {
			d.Assignments = append(d.Assignments, a)
		}
	}
}

// specJob is what the speculator reads of job j: its progress model, its unstarted
// count, its backed-up tasks, and the nodes its running tasks may not be backed up on.
func (s *Scheduler) specJob(j *job, now time.Duration) speculate.Job {
	sj := speculate.Job{Tasks: j.progress, Backups: map[string]bool{}, FailedOn: map[string][]string{}}
	for id, t := range j.running {
		if t.backup != nil {
			sj.Backups[id] = true
		}
		nodes := append(slices.Clip(t.failedOn), t.node.spec.ID)
		sj.FailedOn[id] = nodes
	}
	return sj
}

// busySlots lists the slots of the running tasks (and, with backups, of their backup
// attempts) whose time left is known, with that time left, sorted by node and task:
// the pre-release resources of SPEC §9 and §10.
func (s *Scheduler) busySlots(now time.Duration, backups bool) []speculate.BusySlot {
	var out []speculate.BusySlot
	for _, m := range s.nodes {
		for _, t := range m.running {
			if t.backupOf != nil && !backups {
				continue
			}
			if left, ok := s.timeLeft(t, now); ok {
				out = append(out, speculate.BusySlot{Task: t.spec.ID, Node: m.spec.ID, TimeLeft: left})
			}
		}
	}
	slices.SortFunc(out, func(a, b speculate.BusySlot) int {
		if a.Node != b.Node {
			return strings.Compare(a.Node, b.Node)
		}
		return strings.Compare(a.Task, b.Task)
	})
	return out
}

// otherJobs is busy without job j's own tasks (the speculator counts those itself).
func otherJobs(busy []speculate.BusySlot, j *job) []speculate.BusySlot {
	if len(j.running) == 0 {
		return busy
	}
	out := make([]speculate.BusySlot, 0, len(busy))
	for _, b := range busy {
		if _, own := j.running[b.Task]; !own {
			out = append(out, b)
		}
	}
	return out
}

// startBackup places a backup attempt of running task t on node n at now, if it fits.
func (s *Scheduler) startBackup(t *task, n *node, now time.Duration) (Assignment, bool) {
	id := BackupID(t.spec.ID)
	if strings.HasSuffix(t.spec.ID, BackupSuffix) || s.tasks[id] != nil {
		return Assignment{}, false
	}
	a, why := s.try(t, s.demand(t), n, now)
	if why != NoReason || !s.admit(t, a.want) {
		return Assignment{}, false
	}
	h, err := n.tl.Reserve(now, a.hold, a.result.Allowance)
	if err != nil {
		return Assignment{}, false
	}
	spec := t.spec
	spec.ID = id
	b := &task{spec: spec, state: Running, request: t.request, usage: a.hold.Peak(), node: n, handle: h, start: now, profile: a.plan, backupOf: t}
	if a.predicted {
		b.planned = a.plan.Duration()
	}
	_ = s.tree.Start(t.spec.Job, t.request, b.usage)
	t.backup = b
	s.tasks[id] = b
	n.running[id] = b
	s.reindex(n)
	s.logDebug("backup placed", "task", t.spec.ID, "node", n.spec.ID, "start", now)
	return Assignment{
		Task: id, Job: t.spec.Job, Node: n.spec.ID, Start: now, BackupOf: t.spec.ID,
		Profile: a.plan, Predicted: a.predicted, Result: a.result, Locality: s.localityOf(t, n),
	}, true
}

// dropBackup ends task t's backup attempt, if it has one: its resources return to its
// node and its ID is forgotten. failed records its node as one not to back t up on.
func (s *Scheduler) dropBackup(t *task, failed bool) {
	b := t.backup
	if b == nil {
		return
	}
	n := b.node
	if failed {
		t.failedOn = append(t.failedOn, n.spec.ID)
	}
	_ = n.tl.Release(b.handle)
	delete(n.running, b.spec.ID)
	_ = s.tree.Release(t.spec.Job, b.usage)
	delete(s.tasks, b.spec.ID)
	t.backup, b.backupOf, b.node, b.state = nil, nil, nil, Cancelled
	s.reindex(n)
}

// progressStart, progressFinish and progressAbandon feed the progress models: the
// scheduler's (pre-release list, Runtime) and, with speculation, the task's job's.
func (s *Scheduler) progressStart(t *task, node string, at time.Duration) {
	_ = s.tracker.Start(t.spec.ID, node, at)
	if j := s.jobs[t.spec.Job]; s.cfg.speculator != nil {
		if j.progress == nil {
			j.progress, _ = predict.NewProgressTracker()
		}
		_ = j.progress.Start(t.spec.ID, node, at)
	}
}

func (s *Scheduler) progressFinish(t *task, at time.Duration) {
	_ = s.tracker.Finish(t.spec.ID, at)
	if j := s.jobs[t.spec.Job]; j.progress != nil {
		_ = j.progress.Finish(t.spec.ID, at)
	}
}

func (s *Scheduler) progressAbandon(t *task) {
	_ = s.tracker.Abandon(t.spec.ID)
	if j := s.jobs[t.spec.Job]; j.progress != nil {
		_ = j.progress.Abandon(t.spec.ID)
	}
}

// backupWon records that task t's backup b finished first at now, on b's node: the
// run counts on that node's rate (eq. 3.5), from the backup's start.
func (s *Scheduler) backupWon(t, b *task, now time.Duration) {
	s.progressAbandon(t)
	node := b.node.spec.ID
	_ = s.tracker.Start(b.spec.ID, node, b.start)
	_ = s.tracker.Finish(b.spec.ID, now)
	if j := s.jobs[t.spec.Job]; j.progress != nil {
		_ = j.progress.Start(b.spec.ID, node, b.start)
		_ = j.progress.Finish(b.spec.ID, now)
	}
}

// localityOf is how close task t runs to its input on node n.
func (s *Scheduler) localityOf(t *task, n *node) fairness.Level {
	if len(t.spec.Inputs) == 0 {
		return fairness.NodeLocal
	}
	level := fairness.OffSwitch
	for _, id := range t.spec.Inputs {
		if id == n.spec.ID {
			return fairness.NodeLocal
		}
		if m := s.nodes[id]; m != nil && m.spec.Rack != "" && m.spec.Rack == n.spec.Rack {
			level = fairness.RackLocal
		}
	}
	return level
}
