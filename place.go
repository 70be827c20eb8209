package finegrain

import (
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/stage"
)

// This file is the path a placement takes, shared by pull and push: what the task will
// demand (prediction or request), how it matches the node (Alg. 1 lines 7–12 and
// Alg. 2), the QoS check (line 17) and the allocation.

// want is what a task asks of a node.
type want struct {
	// plan is the profile the task is expected to follow: its declared profile, the
	// estimator's prediction, or its request held for its duration.
	plan stage.Profile
	// hold is what is matched and reserved: plan, and for a predicted plan (with
	// WithHoldUntilFinished, the default) its last stage's non-compressible demand
	// from the plan's end until the task finishes, so that a task outliving its
	// prediction keeps its memory.
	hold stage.Profile
	// predicted reports a stage-by-stage plan rather than the request.
	predicted bool
}

// demand returns what task t asks of a node now.
func (s *Scheduler) demand(t *task) want {
	if t.spec.Profile.Len() > 0 {
		return s.predictedWant(t.spec.Profile)
	}
	if s.cfg.predict && t.spec.Key.Logic != "" {
		if p, ok := s.estimator.Estimate(t.spec.Key); ok && s.schema.Equal(p.Schema()) {
			return s.predictedWant(p)
		}
	}
	p := s.requestProfile(t)
	return want{plan: p, hold: p}
}

func (s *Scheduler) predictedWant(p stage.Profile) want {
	w := want{plan: p, hold: p, predicted: true}
	if !s.cfg.holdTail || p.Duration() == stage.Forever {
		return w
	}
	tail := p.Stage(p.Len() - 1).Demand.Only(s.schema.NonCompressible())
	if tail.IsZero() {
		return w
	}
	stages := append(p.Stages(), stage.Stage{Duration: stage.Forever, Demand: tail})
	if q, err := stage.NewProfile(p.Schema(), stages...); err == nil {
		w.hold = q
	}
	return w
}

// requestProfile is the request held for the declared duration, or until the task
// finishes (Forever); built once per task.
func (s *Scheduler) requestProfile(t *task) stage.Profile {
	if t.reqProfile.Len() == 0 {
		d := t.spec.Duration
		if d == 0 {
			d = stage.Forever
		}
		// Cannot fail: the request was validated at submission.
		t.reqProfile, _ = stage.Constant(s.schema, t.spec.Request, d)
	}
	return t.reqProfile
}

// attempt is one way of placing a task on a node.
type attempt struct {
	want
	result match.Result
}

// try matches task t on node n from start: request quantity for an unpredictable task
// (Alg. 1 line 8), the node mode's matcher otherwise (fine-grained Alg. 2, or
// coarse-grained), then the QoS check when the match compresses anything.
func (s *Scheduler) try(t *task, w want, n *node, start time.Duration) (attempt, Reason) {
	mode := s.adjuster.Mode(n.spec.ID)
	if !mode.Schedulable() {
		return attempt{want: w}, PolicyStop
	}
	server := s.compression.Server(n.spec.ID, n.tl)
	var r match.Result
	if w.predicted {
		m := mode.Matcher()
		if custom := s.cfg.matchers[mode]; custom != nil {
			m = custom
		}
		r = m.Match(server, start, w.hold)
	} else {
		r = match.RequestQuantity{}.Match(server, start, w.hold)
	}
	a := attempt{want: w, result: r}
	if !r.Code.OK() {
		return a, NoRoom
	}
	if r.Compressed() && s.cfg.qos != nil {
		a.result = s.cfg.qos.CheckQoS(server, start, match.Task{ID: t.spec.ID, Profile: w.plan, Deadline: t.spec.Deadline}, r)
		if !a.result.Code.OK() {
			return a, QoS
		}
	}
	return a, NoReason
}

// allocate reserves an accepted attempt on the node and moves the task to Running.
// It reports false when the timeline refuses the reservation (it should not, after a
// successful match; the task then stays pending). With deferTree the caller records
// the start in the fairness tree itself (Tree.Start with t.request and t.usage).
func (s *Scheduler) allocate(t *task, n *node, start time.Duration, a attempt, level fairness.Level, deferTree bool) (Assignment, bool) {
	// The matcher reports how far below zero the task takes each free amount: exactly
	// the allowance the reservation needs.
	h, err := n.tl.Reserve(start, a.hold, a.result.Allowance)
	if err != nil {
		s.logWarn("reservation refused after a match", "task", t.spec.ID, "node", n.spec.ID, "err", err)
		return Assignment{}, false
	}
	usage := a.hold.Peak()
	j := s.jobs[t.spec.Job]
	_ = s.pending.Remove(t.spec.ID)
	s.removePending(j, t)
	if !deferTree {
		_ = s.tree.Start(t.spec.Job, t.request, usage)
	}
	t.node, t.handle, t.start, t.profile, t.usage = n, h, start, a.plan, usage
	t.planned = 0
	if a.predicted {
		t.planned = a.plan.Duration()
	}
	n.running[t.spec.ID] = t
	j.running[t.spec.ID] = t
	s.busyJobs[j.spec.ID] = j
	s.progressStart(t, n.spec.ID, start)
	s.setState(t, Running)
	s.reindex(n)
	as := Assignment{
		Task: t.spec.ID, Job: t.spec.Job, Node: n.spec.ID, Start: start,
		Profile: a.plan, Predicted: a.predicted, Result: a.result, Locality: level,
	}
	s.logDebug("task placed", "task", t.spec.ID, "node", n.spec.ID, "start", start, "predicted", a.predicted, "result", a.result.Code, "locality", level)
	return as, true
}

// admit asks the fairness tree whether the job may hold one more task wanting w (max
// shares, Capacity's elasticity).
func (s *Scheduler) admit(t *task, w want) bool {
	return s.tree.Admit(t.spec.Job, w.hold.Peak()) == nil
}

func (s *Scheduler) logWarn(msg string, args ...any) {
	if s.cfg.logger != nil {
		s.cfg.logger.Warn(msg, args...)
	}
}
