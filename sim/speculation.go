package sim

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
)

// This file runs the backup attempts a speculating scheduler launches
// (finegrain.WithSpeculation) and reports the progress the speculators read.

// progressReporter is the optional call through which node agents report the progress
// of their running tasks (Policy.Progress).
type progressReporter interface {
	Progress(id string, progress float64, now time.Duration) error
}

var _ progressReporter = (*finegrain.Scheduler)(nil)

// reportProgress tells the scheduler the progress of every task running on node n
// (advanced to now). Backups are not reported: the scheduler models the tasks.
func (s *Sim) reportProgress(n *node) error {
	pr, ok := s.sched.(progressReporter)
	if !ok {
		return nil
	}
	for _, x := range n.running {
		if x.backup || x.task.start == s.now {
			continue
		}
		if err := pr.Progress(x.task.wt.ID, x.progress(), s.now); err != nil {
			return fmt.Errorf("sim: progress of %q at %v: %w: %w", x.task.wt.ID, s.now, ErrScheduler, err)
		}
	}
	return nil
}

// startBackup runs the backup attempt the scheduler placed with a.
func (s *Sim) startBackup(a *finegrain.Assignment) error {
	ti, ok := s.byID[a.BackupOf]
	if !ok || s.tasks[ti].state != tRunning || s.tasks[ti].backup != nil {
		return fmt.Errorf("sim: backup %q of a task that is not running alone: %w", a.Task, ErrScheduler)
	}
	ni, ok := s.nodeIdx[a.Node]
	if !ok || !s.nodes[ni].up || a.Start != s.now {
		return fmt.Errorf("sim: backup %q on node %q at %v: %w", a.Task, a.Node, a.Start, ErrScheduler)
	}
	t, n := &s.tasks[ti], s.nodes[ni]
	s.advance(n, s.now)
	x, loc := s.newExec(t, n, true)
	s.m.locality[loc]++
	s.m.backups++
	n.running = append(n.running, x)
	t.backup, t.backupNode, t.backupPeak = x, ni, a.Profile.Peak()
	q := s.jobs[t.job].queue
	s.m.queueAlloc[q] = s.m.queueAlloc[q].Add(t.backupPeak)
	s.progressAt = s.now
	return s.reschedule(n)
}

// endBackup takes task t's ended backup out of the fairness metric.
func (s *Sim) endBackup(t *simTask) {
	q := s.jobs[t.job].queue
	s.m.queueAlloc[q] = s.m.queueAlloc[q].Sub(t.backupPeak)
	t.backupPeak = resource.Tuple{}
}

// stopBackup ends task t's backup run, which the scheduler has already dropped.
func (s *Sim) stopBackup(t *simTask) error {
	x, ni := t.backup, t.backupNode
	t.backup = nil
	s.endBackup(t)
	return s.stopRun(x, ni)
}

// stopRun takes run x off node ni (advanced to now first) and reschedules the node.
func (s *Sim) stopRun(x *exec, ni int32) error {
	n := s.nodes[ni]
	if !n.up {
		return nil
	}
	s.advance(n, s.now)
	for i, y := range n.running {
		if y == x {
			n.running = append(n.running[:i], n.running[i+1:]...)
			stopExec(x)
			s.wantHeartbeat(n)
			return s.reschedule(n)
		}
	}
	return nil
}
