package framework

import (
	"math"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
)

// prepare starts attempt a of task t on node n (nil in push mode until a node is
// chosen) from start: the demand step.
func (c *Cycle) prepare(a *Attempt, t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration, level fairness.Level, backup bool) {
	*a = Attempt{Task: t, Node: n, Start: start, Level: level, Backup: backup}
	a.Demand = c.fw.demand.Demand(c, t)
}

// preFilter runs the PreFilter plugins.
func (c *Cycle) preFilter(a *Attempt) Status {
	for _, p := range c.fw.preFilters {
		if st := p.PreFilter(c, a); !st.OK() {
			return named(st, p)
		}
	}
	return Status{}
}

// Filter runs the Filter plugins on attempt a (its Task, Demand, Node and Start set)
// and reports the first refusal; a.Result holds the match verdict. PostFilter plugins
// call it on the placements they propose.
func (c *Cycle) Filter(a *Attempt) Status {
	a.Result = match.Result{Code: match.Fit, Stage: -1, Dim: -1}
	a.Devices = gpu.Allocation{}
	if c.allow != nil && a.Node != nil && !c.allow(a.Node) {
		return Status{Code: Unschedulable, Reason: PluginRefused, Plugin: "host"}
	}
	for _, p := range c.fw.filters {
		if st := p.Filter(c, a); !st.OK() {
			return named(st, p)
		}
	}
	return Status{}
}

func named(st Status, p Plugin) Status {
	if st.Plugin == "" {
		st.Plugin = p.Name()
	}
	if st.Code == Error {
		st.Code = Unschedulable
	}
	if st.Reason == NoReason {
		st.Reason = PluginRefused
	}
	return st
}

// chooseDevices lets the Score plugins choose the GPU devices of attempt a, which
// passed the filters but was not scored (a host's Reserve, a PostFilter's proposal),
// as they do for push placement's candidates (Attempt.Devices).
func (c *Cycle) chooseDevices(a *Attempt) {
	if !a.Task.GPU().IsZero() {
		c.score(a)
	}
}

// score is attempt a's total over the Score plugins, without normalisation.
func (c *Cycle) score(a *Attempt) float64 {
	total := 0.0
	for _, p := range c.fw.scores {
		total += finite(p.Score(c, a))
	}
	return total
}

func finite(x float64) float64 {
	if x != x {
		return math.Inf(-1)
	}
	return x
}

// Prepare builds an attempt of pending task t on node n from start — its demand, and
// the PreFilter plugins' verdict — for Pass plugins that look for a node or make room
// before they Try (preemption). The attempt returned is the caller's copy; building it
// allocates nothing beyond what the demand step does. Prepare may be called from
// concurrent Filter plugins and from within a PreFilter plugin.
func (c *Cycle) Prepare(t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) (Attempt, Status) {
	level := fairness.NodeLocal
	if n != nil {
		level = c.fw.state.Locality(t, n)
	}
	// The attempt passes through the plugins' interfaces, so a local one would move to
	// the heap: it is built in the framework's, unless another Prepare holds that (one
	// inside a PreFilter plugin's, or Filter plugins preparing concurrently).
	a := &c.fw.prepared
	if c.fw.preparing.CompareAndSwap(false, true) {
		defer c.fw.preparing.Store(false)
	} else {
		a = new(Attempt)
	}
	c.prepare(a, t, n, start, level, false)
	st := c.preFilter(a)
	return *a, st
}
