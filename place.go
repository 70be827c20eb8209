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

// demand returns the profile a task is matched and reserved with, and whether it is a
// prediction (matched stage by stage) rather than the request.
func (s *Scheduler) demand(t *task) (stage.Profile, bool) {
	if t.spec.Profile.Len() > 0 {
		return t.spec.Profile, true
	}
	if s.cfg.predict && t.spec.Key.Logic != "" {
		if p, ok := s.estimator.Estimate(t.spec.Key); ok && s.schema.Equal(p.Schema()) {
			return p, true
		}
	}
	return s.requestProfile(t), false
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
	profile   stage.Profile
	predicted bool
	result    match.Result
}

// try matches task t on node n from start: request quantity for an unpredictable task
// (Alg. 1 line 8), the node mode's matcher otherwise (fine-grained Alg. 2, or
// coarse-grained), then the QoS check when the match compresses anything.
func (s *Scheduler) try(t *task, n *node, start time.Duration) (attempt, Reason) {
	mode := s.adjuster.Mode(n.spec.ID)
	if !mode.Schedulable() {
		return attempt{}, PolicyStop
	}
	p, predicted := s.demand(t)
	server := s.compression.Server(n.spec.ID, n.tl)
	var r match.Result
	if predicted {
		m := mode.Matcher()
		if custom := s.cfg.matchers[mode]; custom != nil {
			m = custom
		}
		r = m.Match(server, start, p)
	} else {
		r = match.RequestQuantity{}.Match(server, start, p)
	}
	a := attempt{profile: p, predicted: predicted, result: r}
	if !r.Code.OK() {
		return a, NoRoom
	}
	if r.Compressed() && s.cfg.qos != nil {
		a.result = s.cfg.qos.CheckQoS(server, start, match.Task{ID: t.spec.ID, Profile: p, Deadline: t.spec.Deadline}, r)
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
	h, err := n.tl.Reserve(start, a.profile, a.result.Allowance)
	if err != nil {
		s.logWarn("reservation refused after a match", "task", t.spec.ID, "node", n.spec.ID, "err", err)
		return Assignment{}, false
	}
	usage := a.profile.Peak()
	_ = s.pending.Remove(t.spec.ID)
	if !deferTree {
		_ = s.tree.Start(t.spec.Job, t.request, usage)
	}
	t.node, t.handle, t.start, t.profile, t.usage = n, h, start, a.profile, usage
	t.planned = 0
	if a.predicted {
		t.planned = a.profile.Duration()
	}
	n.running[t.spec.ID] = t
	_ = s.tracker.Start(t.spec.ID, n.spec.ID, start)
	s.setState(t, Running)
	s.reindex(n)
	as := Assignment{
		Task: t.spec.ID, Job: t.spec.Job, Node: n.spec.ID, Start: start,
		Profile: a.profile, Predicted: a.predicted, Result: a.result, Locality: level,
	}
	s.logDebug("task placed", "task", t.spec.ID, "node", n.spec.ID, "start", start, "predicted", a.predicted, "result", a.result.Code, "locality", level)
	return as, true
}

// admit asks the fairness tree whether the job may hold one more task of profile p
// (max shares, Capacity's elasticity).
func (s *Scheduler) admit(t *task, p stage.Profile) bool {
	return s.tree.Admit(t.spec.Job, p.Peak()) == nil
}

func (s *Scheduler) logWarn(msg string, args ...any) {
	if s.cfg.logger != nil {
		s.cfg.logger.Warn(msg, args...)
	}
}
