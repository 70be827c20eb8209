package cluster

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file feeds the progress models (docs/methods.md §8): the cluster's, which the
// pre-release list and Scheduler.Runtime read, and with WithJobProgress one per job,
// which speculation reads.

// Started records that running task t actually started at now (it may differ from
// the planned start): its progress clock restarts there.
func (s *State) Started(t *TaskInfo, now time.Duration) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("cluster: start of task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if now < 0 {
		return fmt.Errorf("cluster: start of task %q at %v: negative time: %w", t.pe.ID, now, ErrInvalid)
	}
	t.start = now
	if t.backs() != nil {
		return nil
	}
	if m := t.run.measured; m != nil {
		m.n = 0 // its progress restarts: the samples of the run before are not of this one
	}
	s.progressAbandon(t)
	s.progressStart(t, t.run.node.spec.ID, now)
	return nil
}

// ReportProgress records running task t's progress in [0, 1] at now. A backup's
// progress is accepted and not modelled.
func (s *State) ReportProgress(t *TaskInfo, progress float64, now time.Duration) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("cluster: progress of task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if now < 0 {
		return fmt.Errorf("cluster: progress of task %q at %v: negative time: %w", t.pe.ID, now, ErrInvalid)
	}
	if t.backs() != nil {
		return nil
	}
	if err := s.tracker.Update(t.pe.ID, progress, now); err != nil {
		return fmt.Errorf("cluster: progress of task %q: %w", t.pe.ID, err)
	}
	if j := s.jobs[t.pe.Job]; j.progress != nil {
		_ = j.progress.Update(t.pe.ID, progress, now)
	}
	t.run.keep(predict.ProgressSample{At: now, Progress: progress})
	return nil
}

// keptSamples is how many of a running task's latest progress samples the state
// keeps: the four the straggler test reads (docs/methods.md §11, S1).
const keptSamples = 4

// keep adds progress sample x to the placed task's latest ones: a sample at the time
// of the latest replaces it, and the oldest goes once keptSamples are held.
func (p *placement) keep(x predict.ProgressSample) {
	m := p.measure()
	switch {
	case m.n > 0 && m.samples[m.n-1].At >= x.At:
		m.samples[m.n-1] = x // the tracker refuses earlier times: the same time, again
	case m.n == keptSamples:
		copy(m.samples[:], m.samples[1:])
		m.samples[keptSamples-1] = x
	default:
		m.samples[m.n] = x
		m.n++
	}
}

// measure is the placed task's measurements, made on first use.
func (p *placement) measure() *measured {
	if p.measured == nil {
		p.measured = &measured{}
	}
	return p.measured
}

// ProgressSamples appends to dst the running task's latest progress samples
// (ReportProgress), at most four, oldest first, in strictly increasing time: what the
// straggler test of docs/methods.md §11 reads (predict.DetectStraggler). A report at
// the time of the latest replaces it; Started, which restarts the task's progress,
// clears them. None for a task that is not placed, or a backup attempt.
func (t *TaskInfo) ProgressSamples(dst []predict.ProgressSample) []predict.ProgressSample {
	if t.run == nil || t.run.measured == nil {
		return dst
	}
	m := t.run.measured
	return append(dst, m.samples[:m.n]...)
}

// ObserveUsed records that running task t was measured using used (a sample, or the
// peak of a series): the state keeps the peak of what was reported since it was
// placed, which the resource-redundant test of docs/methods.md §11 (T1–T2) reads
// (UsedPeak). It fails, changing nothing, on a task that is not running or an amount
// that is not valid for the schema.
func (s *State) ObserveUsed(t *TaskInfo, used resource.Tuple) error {
	if err := s.own(t, nil); err != nil {
		return err
	}
	if t.state != Running {
		return fmt.Errorf("cluster: usage of task %q: it is %v: %w", t.pe.ID, t.state, ErrState)
	}
	if err := s.schema.Validate(used); err != nil {
		return fmt.Errorf("cluster: usage of task %q: %w", t.pe.ID, err)
	}
	t.run.peak, t.run.peaked = t.run.peak.Max(used), true
	return nil
}

// UsedPeak is the peak of the usage reported for the placed task since it was placed
// (State.ObserveUsed), per dimension, and whether any was reported.
func (t *TaskInfo) UsedPeak() (resource.Tuple, bool) {
	if t.run == nil || !t.run.peaked {
		return resource.Tuple{}, false
	}
	return t.run.peak, true
}

func (s *State) progressStart(t *TaskInfo, node string, at time.Duration) {
	_ = s.tracker.Start(t.pe.ID, node, at)
	if j := s.jobs[t.pe.Job]; s.perJob {
		if j.progress == nil {
			j.progress, _ = predict.NewProgressTracker()
		}
		_ = j.progress.Start(t.pe.ID, node, at)
	}
}

func (s *State) progressFinish(t *TaskInfo, at time.Duration) {
	_ = s.tracker.Finish(t.pe.ID, at)
	if j := s.jobs[t.pe.Job]; j.progress != nil {
		_ = j.progress.Finish(t.pe.ID, at)
	}
}

func (s *State) progressAbandon(t *TaskInfo) {
	_ = s.tracker.Abandon(t.pe.ID)
	if j := s.jobs[t.pe.Job]; j.progress != nil {
		_ = j.progress.Abandon(t.pe.ID)
	}
}

// backupWon records that task t's backup b finished first at now, on b's node: the
// run counts on that node's rate (eq. 3.5), from the backup's start.
func (s *State) backupWon(t, b *TaskInfo, now time.Duration) {
	s.progressAbandon(t)
	node := b.run.node.spec.ID
	_ = s.tracker.Start(b.pe.ID, node, b.start)
	_ = s.tracker.Finish(b.pe.ID, now)
	if j := s.jobs[t.pe.Job]; j.progress != nil {
		_ = j.progress.Start(b.pe.ID, node, b.start)
		_ = j.progress.Finish(b.pe.ID, now)
	}
}

// TimeLeft is when placed task t's slot frees, from now: by its reported progress
// (eq. 3.4), else by what remains of its predicted duration; false when unknown.
func (s *State) TimeLeft(t *TaskInfo, now time.Duration) (time.Duration, bool) {
	if p, ok := s.tracker.Task(t.pe.ID, now); ok && p.Progress > 0 && p.Rate > 0 {
		return max(p.TimeLeft, 0), true
	}
	if planned := t.Planned(); planned > 0 {
		return max(t.PlanStart()+planned-now, 0), true
	}
	return 0, false
}
