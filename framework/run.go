package framework

import (
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/match"
)

// This file runs the cycles: pull (Heartbeat: node × jobs), push (Place: task ×
// nodes) and probes (Filter, Score: one task on one node, nothing reserved).

// cycle starts a cycle of mode at now. A pull or push cycle first advances the
// state's clock to now (cluster.State.Advance: booked tasks whose start has come run)
// and is the framework's own Cycle, reused from cycle to cycle (one owner drives them,
// one at a time), so that starting one allocates nothing; a probe changes nothing and
// has a Cycle of its own, since probes run concurrently.
func (f *Framework) cycle(mode Mode, now time.Duration, n *cluster.NodeInfo) *Cycle {
	if mode == Probe {
		return &Cycle{fw: f, mode: mode, now: now, gen: f.gen, node: n}
	}
	f.gen++
	f.state.Advance(now)
	c := &f.owned
	*c = Cycle{fw: f, mode: mode, now: now, gen: f.gen, node: n}
	return c
}

// Heartbeat is pull mode: node n reports room at now, and the Pass plugins offer it
// to pending work in order — by default the locality strategy's passes over the jobs
// in fairness order, then speculation. The Decision says what starts there, why the
// heartbeat ended and which jobs were passed over. When a pass fails, the error is
// returned with the Decision so far: what earlier passes started is Running.
func (f *Framework) Heartbeat(n *cluster.NodeInfo, now time.Duration) (Decision, error) {
	c := f.cycle(Pull, now, n)
	d := &f.decision
	*d = Decision{Node: n.ID(), At: now, Stop: NoPending, details: f.details}
	c.d = d
	c.expire()
	for _, p := range f.passes {
		if err := p.Pass(c, n); err != nil {
			d.Evicted = c.evicted
			return *d, err
		}
	}
	d.Evicted = c.evicted
	f.started = len(d.Assignments)
	if f.logger != nil {
		f.debug("heartbeat", "node", n.ID(), "at", now, "started", len(d.Assignments), "stop", d.Stop, "skipped", d.Skipped)
	}
	return *d, nil
}

// Place is push mode: pending task t is placed at now on the best node.
//
//  1. Demand and PreFilter, once.
//  2. Filter, node by node from the free index: nodes in order of the free amount of
//     the index dimension (the schema's first non-compressible one), roomiest first,
//     stopping at the first node with less free than the task's first stage needs
//     (it cannot start there, compression or not), or once WithCandidates nodes have
//     passed.
//  3. Score the nodes that passed (Score plugins, normalised where a plugin asks);
//     the highest total wins, ties to the node visited first.
//  4. When none passed, the PostFilter plugins may propose a placement.
//  5. Reserve, Permit, commit.
//
// It fails with a *PlacementError saying why, and the task stays pending.
func (f *Framework) Place(t *cluster.TaskInfo, now time.Duration) (Assignment, error) {
	c := f.cycle(Push, now, nil)
	c.expire()
	base := &f.scratch
	c.prepare(base, t, nil, now, 0, false)
	if st := c.preFilter(base); !st.OK() {
		return Assignment{}, &PlacementError{Task: t.ID(), Reason: st.Reason, Plugin: st.Plugin}
	}
	dim := f.state.IndexDim()
	perr := PlacementError{Task: t.ID(), Reason: NoRoom, Dim: f.state.Schema().DimName(dim)}
	cands := f.cands[:0]
	f.state.Locate(&f.locator, t)
	f.state.ByFree(base.Demand.Hold.Stage(0).Demand[dim], func(n *cluster.NodeInfo) bool {
		perr.Tried++
		if len(cands) == cap(cands) {
			cands = append(cands, Attempt{})
		} else {
			cands = cands[:len(cands)+1]
		}
		a := &cands[len(cands)-1]
		a.Task, a.Demand, a.Node, a.Start, a.Level, a.Backup = t, base.Demand, n, now, f.locator.Level(n), false
		if st := c.Filter(a); !st.OK() {
			perr.Reason, perr.Plugin, perr.Result = st.Reason, st.Plugin, a.Result
			cands = cands[:len(cands)-1]
			return true
		}
		return f.candidates == 0 || len(cands) < f.candidates
	})
	f.cands = cands
	var best *Attempt
	if len(cands) > 0 {
		best = &cands[c.pick(cands)]
	} else if a, ok := c.postFilter(base); ok {
		cands = append(cands[:0], a)
		f.cands = cands
		best = &cands[0]
		c.chooseDevices(best)
	}
	if best == nil {
		perr.Evicted = c.evicted
		return Assignment{}, perr.escape()
	}
	as, st := c.bind(best)
	switch {
	case st.Code == Wait:
		return Assignment{}, &PlacementError{Task: t.ID(), Tried: perr.Tried, Reason: PermitWaiting, Plugin: st.Plugin, Evicted: c.evicted}
	case !st.OK():
		perr.Reason, perr.Plugin, perr.Evicted = st.Reason, st.Plugin, c.evicted
		return Assignment{}, perr.escape()
	}
	return as, nil
}

// postFilter asks the PostFilter plugins, in order, for a placement of the task of
// base, which passed no node's filters; the first proposal wins.
func (c *Cycle) postFilter(base *Attempt) (Attempt, bool) {
	for _, p := range c.fw.postFilters {
		a := *base
		if st := p.PostFilter(c, &a); st.OK() && a.Node != nil {
			a.Level = c.fw.state.Locality(a.Task, a.Node)
			return a, true
		}
	}
	return Attempt{}, false
}

// escape returns a copy of e on the heap, so that a placement that succeeds does not
// allocate its error.
func (e PlacementError) escape() *PlacementError { return &e }

// pick scores the candidates and returns the index of the best: the highest total
// over the Score plugins (each normalised over the candidates when it implements
// ScoreNormalizer), ties to the earliest.
func (c *Cycle) pick(cands []Attempt) int {
	f := c.fw
	if len(f.scores) == 0 {
		return 0
	}
	totals := f.totals[:0]
	for range cands {
		totals = append(totals, 0)
	}
	for _, p := range f.scores {
		norm, ok := p.(ScoreNormalizer)
		if !ok {
			for i := range cands {
				totals[i] += finite(p.Score(c, &cands[i]))
			}
			continue
		}
		s := f.scores1[:0]
		for i := range cands {
			s = append(s, finite(p.Score(c, &cands[i])))
		}
		norm.NormalizeScores(c, cands, s)
		for i := range s {
			totals[i] += finite(s[i])
		}
		f.scores1 = s
	}
	f.totals = totals
	best := 0
	for i := 1; i < len(totals); i++ {
		if totals[i] > totals[best] {
			best = i
		}
	}
	return best
}

// Filter is a probe: whether pending task t could be placed on node n from start —
// demand, PreFilter, Filter — and why not, with the match verdict. Nothing is
// reserved. Calls for different nodes may run concurrently with each other (not with
// cycles that change the state).
func (f *Framework) Filter(t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) (Status, match.Result) {
	c := f.cycle(Probe, start, n)
	var a Attempt
	st := c.probe(&a, t, n, start)
	return st, a.Result
}

// Score is a probe: node n's total score for pending task t from start, over the
// Score plugins (not normalised: there is one node), after Filter; the status says
// why t does not pass on n, and the score is then 0.
func (f *Framework) Score(t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) (float64, Status) {
	c := f.cycle(Probe, start, n)
	var a Attempt
	if st := c.probe(&a, t, n, start); !st.OK() {
		return 0, st
	}
	return c.score(&a), Status{}
}

func (c *Cycle) probe(a *Attempt, t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) Status {
	c.prepare(a, t, n, start, c.fw.state.Locality(t, n), false)
	if st := c.preFilter(a); !st.OK() {
		return st
	}
	return c.Filter(a)
}
