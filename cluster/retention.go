package cluster

import (
	"fmt"
	"time"
)

// This file bounds what the state remembers of finished work. A finished or
// cancelled task stays readable (Task, Scheduler.TaskState) for a while, so that late
// events get a precise error and embedders can look it up; a completed job keeps its
// ID and fairness entry so that more tasks can still be submitted to it. Both are
// then forgotten, oldest first, by count and by age, so that memory stays flat
// however long the state runs.

// Retention bounds what the state remembers of finished work. Finished and cancelled
// tasks are forgotten oldest first once more than Tasks are remembered; completed jobs
// (jobs that have had tasks, none of them now pending, reserved or running) oldest
// first once more than Jobs are remembered; both as soon as they have been done for
// longer than Age of cluster time, when Age > 0.
//
// A forgotten task is unknown: Task reports false, events for it fail with
// ErrUnknownTask, and its ID may be submitted again. A forgotten job is unknown:
// submitting tasks to it fails with ErrUnknownJob until it is added again, as a new
// job with no fairness history. Count(Finished) and Count(Cancelled) go on counting
// every task that ever ended.
//
// The counterparts elsewhere: Kubernetes' terminated-pod garbage collection
// (kube-controller-manager --terminated-pod-gc-threshold, default 12500) and a Job's
// ttlSecondsAfterFinished; YARN's yarn.resourcemanager.max-completed-applications.
type Retention struct {
	// Tasks is how many finished or cancelled tasks are remembered; 0 forgets a task
	// as soon as it ends.
	Tasks int
	// Jobs is how many completed jobs are remembered; 0 forgets a job as soon as its
	// last task ends.
	Jobs int
	// Age, when positive, forgets a task or job that has been done for longer than
	// this, whatever the counts.
	Age time.Duration
}

// DefaultRetention remembers the last 12,500 finished tasks (Kubernetes' default
// terminated-pod threshold) and the last 1,000 completed jobs (YARN's default
// max-completed-applications), with no age limit. Memory stays flat: about what
// those hold, whatever the number of tasks the state has seen.
var DefaultRetention = Retention{Tasks: 12500, Jobs: 1000}

// WithRetention sets what the state remembers of finished work (Retention); default
// DefaultRetention. Negative counts or age are refused. To remember everything (memory
// then grows with every task), pass math.MaxInt counts.
func WithRetention(r Retention) Option {
	return func(c *config) error {
		if r.Tasks < 0 || r.Jobs < 0 || r.Age < 0 {
			return fmt.Errorf("cluster: retention tasks %d, jobs %d, age %v: negative: %w", r.Tasks, r.Jobs, r.Age, ErrInvalid)
		}
		c.retention = r
		return nil
	}
}

// ended is a finished or cancelled task waiting to be forgotten.
type ended struct {
	t  *TaskInfo
	at time.Duration
}

// idleJobs lists the completed jobs, oldest completion first, through their prev
// and next links, so that a job given a new task leaves it in O(1).
type idleJobs struct {
	head, tail *JobInfo
	n          int
}

func (l *idleJobs) push(j *JobInfo) {
	j.idle, j.prev, j.next = true, l.tail, nil
	if l.tail != nil {
		l.tail.next = j
	} else {
		l.head = j
	}
	l.tail = j
	l.n++
}

func (l *idleJobs) remove(j *JobInfo) {
	if j.prev != nil {
		j.prev.next = j.next
	} else {
		l.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else {
		l.tail = j.prev
	}
	j.idle, j.prev, j.next = false, nil, nil
	l.n--
}

// Retention is what the state remembers of finished work.
func (s *State) Retention() Retention { return s.keep }

// Remembered is how many finished or cancelled tasks and completed jobs the state
// still remembers (Retention bounds both).
func (s *State) Remembered() (tasks, jobs int) { return len(s.ended), s.idle.n }

// OnForget registers fn to be called with each completed job the state forgets,
// just before it goes, so that whoever keeps state by job (a plugin's per-job
// scratch, a delay-scheduling wait) can drop it. Calls happen in the order fns were
// registered.
func (s *State) OnForget(fn func(j *JobInfo)) {
	if fn != nil {
		s.onForget = append(s.onForget, fn)
	}
}

// taskEnded is called when task t (not a backup) has just finished or been
// cancelled at time at: it is remembered for a while, and its job may be complete.
func (s *State) taskEnded(t *TaskInfo, at time.Duration) {
	if t.pe.Parked() {
		_ = s.pending.Delete(&t.pe) // it will not be pending again
		t.pe.Racks = nil
	}
	s.ended = append(s.ended, ended{t: t, at: at})
	j := s.jobs[t.pe.Job]
	if j.live--; j.live == 0 {
		j.doneAt = at
		s.idle.push(j)
	}
	s.retire()
}

// taskAdded is called when a task is submitted to job j: j is live again.
func (s *State) taskAdded(j *JobInfo) {
	if j.live++; j.idle {
		s.idle.remove(j)
	}
}

// retire forgets what Retention no longer keeps. It waits while a Walk is under way,
// which holds jobs by reference.
func (s *State) retire() {
	if s.walking > 0 {
		return
	}
	old := func(at time.Duration) bool { return s.keep.Age > 0 && s.clock-at > s.keep.Age }
	for len(s.ended) > 0 && (len(s.ended) > s.keep.Tasks || old(s.ended[0].at)) {
		t := s.ended[0].t
		s.ended[0] = ended{}
		s.ended = s.ended[1:]
		if s.tasks[t.pe.ID] == t {
			delete(s.tasks, t.pe.ID)
			t.held = false
		}
	}
	for j := s.idle.head; j != nil && (s.idle.n > s.keep.Jobs || old(j.doneAt)); j = s.idle.head {
		s.forget(j)
	}
}

// forget drops completed job j: its fairness entry, its ID and its index, which a
// later job may reuse.
func (s *State) forget(j *JobInfo) {
	for _, fn := range s.onForget {
		fn(j)
	}
	s.idle.remove(j)
	// Cannot fail: the job is in the tree, with nothing pending or running.
	_ = s.tree.RemoveJob(j.spec.ID)
	delete(s.jobs, j.spec.ID)
	s.jobList[j.index] = nil
	s.freeJobs = append(s.freeJobs, j.index)
}
