package framework

import (
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// This file runs the cycles: pull (Heartbeat: node × jobs), push (Place: task ×
// nodes) and probes (Filter, Score: one task on one node, nothing reserved).

// Advance moves the state's clock to now, never back (cluster.State.Advance): booked
// tasks whose start has come run, the free index is refreshed when stale, and what has
// been retained long enough is forgotten. Every pull and push cycle starts with it;
// the framework's owner calls it for the events between cycles (a task finished or
// failed, a node left), so that the state's clock has this one owner.
func (f *Framework) Advance(now time.Duration) { f.state.Advance(now) }

// cycle starts a cycle of mode at now. A pull or push cycle first advances the
// state's clock to now (Advance)
// and is the framework's own Cycle, reused from cycle to cycle (one owner drives them,
// one at a time), so that starting one allocates nothing; a probe changes nothing and
// has a Cycle of its own, since probes run concurrently.
func (f *Framework) cycle(mode Mode, now time.Duration, n *cluster.NodeInfo) *Cycle {
	if mode == Probe {
		return &Cycle{fw: f, mode: mode, now: now, gen: f.gen, node: n}
	}
	f.gen++
	f.Advance(now)
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
			d.Refusals.sort()
			return *d, err
		}
	}
	d.Evicted = c.evicted
	d.Refusals.sort()
	if d.Stop == NoPending && f.state.Count(cluster.Pending) > 0 {
		d.Stop = AllSkipped
	}
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
// It fails with a *PlacementError saying why — every node's refusal counted by reason
// (PlacementError.Refusals) — and the task stays pending.
func (f *Framework) Place(t *cluster.TaskInfo, now time.Duration) (Assignment, error) {
	c := f.cycle(Push, now, nil)
	c.expire()
	base := &f.scratch
	c.prepare(base, t, nil, now, 0, false)
	if st := c.preFilter(base); !st.OK() {
		return Assignment{}, c.refusedBefore(base, st)
	}
	tl := f.tallying()
	tried := 0
	cands := f.cands[:0]
	f.state.Locate(&f.locator, t)
	f.state.ByFree(c.indexNeed(base), func(n *cluster.NodeInfo) bool {
		tried++
		if len(cands) == cap(cands) {
			cands = append(cands, Attempt{})
		} else {
			cands = cands[:len(cands)+1]
		}
		a := &cands[len(cands)-1]
		a.Task, a.Demand, a.Node, a.Start, a.Level, a.Backup = t, base.Demand, n, now, f.locator.Level(n), false
		if !c.filterCounted(a, tl) {
			cands = cands[:len(cands)-1]
			return true
		}
		return f.candidates == 0 || len(cands) < f.candidates
	})
	f.cands = cands
	walked := len(cands) == 0 // no node passed: the walk reached every node the index offers
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
		c.ruledOut(base, tl, tried)
		return Assignment{}, c.placementError(base, tried, tl, Status{})
	}
	as, st := c.claim(best)
	switch {
	case st.Code == Wait:
		return Assignment{}, &PlacementError{Task: t.ID(), Tried: tried, Reason: PermitWaiting, Plugin: st.Plugin, Evicted: c.evicted}
	case !st.OK():
		tl.count(CountOf(st, best.Result), 1) // its node counted in Of when it passed the filters
		if walked {
			c.ruledOut(base, tl, tried)
		} // else the walk stopped at enough candidates: the nodes after them were not asked
		return Assignment{}, c.placementError(base, tried, tl, st)
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

// indexNeed is what attempt a's first stage needs of the free index's dimension.
func (c *Cycle) indexNeed(a *Attempt) int64 {
	return a.Demand.Hold.Stage(0).Demand[c.fw.state.IndexDim()]
}

// tallying returns the framework's scratch tally, emptied: a placement counts its
// refusals there, and copies it out only when it fails.
func (f *Framework) tallying() *Tally {
	f.tally = Tally{Counts: f.tally.Counts[:0]}
	return &f.tally
}

// filterCounted runs the Filter plugins on attempt a and counts the node's answer in
// tl; it reports whether the node passed.
func (c *Cycle) filterCounted(a *Attempt, tl *Tally) bool {
	st := c.Filter(a)
	if st.OK() {
		tl.Of++ // as Add counts a pass, without copying the match result
		return true
	}
	tl.Add(a.Node.ID(), a.Node.Capacity(), c.explained(st, a), a.Result)
	return false
}

// explained is refusal st of attempt a as explanations report it: NoRoom becomes
// OverCapacity where the failing stage needs more of a non-compressible dimension
// than the node has at all. Plugins see st itself.
func (c *Cycle) explained(st Status, a *Attempt) Status {
	r := a.Result
	if st.Reason == NoRoom && r.Code == match.NoRoom && a.Node != nil && r.Dim >= 0 && r.Dim < resource.MaxDims &&
		!c.fw.state.Schema().Compressible().Has(r.Dim) && r.Demand > a.Node.Capacity()[r.Dim] {
		st.Reason = OverCapacity
	}
	return st
}

// ruledOut counts in tl the nodes of a push walk that visited tried of them: those the
// free index ruled out, short of its dimension for attempt a's first stage — smaller
// than that (OverCapacity) or with less of it free (NoRoom). It filters the roomiest
// of them, so that the closest node may be one the walk did not reach.
func (c *Cycle) ruledOut(a *Attempt, tl *Tally, tried int) {
	st := c.fw.state
	dim, need := st.IndexDim(), c.indexNeed(a)
	if skipped := st.NumNodes() - tried; skipped > 0 {
		name := st.Schema().DimName(dim)
		over := min(st.CountSmaller(dim, need), skipped)
		tl.Of += skipped
		tl.count(Count{Reason: OverCapacity, Dim: name}, over)
		tl.count(Count{Reason: NoRoom, Dim: name}, skipped-over)
		if n, ok := st.FirstBelow(need); ok && skipped > over {
			b := *a
			b.Node, b.Level = n, st.Locality(a.Task, n)
			tl.closer(n.ID(), n.Capacity(), c.explained(c.Filter(&b), &b), b.Result)
		}
	}
}

// refusedBefore is the error of a placement of attempt a refused by PreFilter status
// st, before any node was looked at: every node counts as refusing it for st's
// reason.
func (c *Cycle) refusedBefore(a *Attempt, st Status) *PlacementError {
	tl := c.fw.tallying()
	n := c.fw.state.NumNodes()
	tl.Of = n
	tl.count(CountOf(st, match.Result{}), n)
	return c.placementError(a, 0, tl, st)
}

// placementError is the error of a placement of attempt a that tried tried nodes and
// counted their refusals in tl: its Reason, Dim and Plugin are the first count's, its
// Result the closest node's verdict (or, with none, the last refusing node's); st,
// when not OK, is the refusal of a step after the filters (Reserve, Permit), which
// the Reason and Plugin then say.
func (c *Cycle) placementError(a *Attempt, tried int, tl *Tally, st Status) *PlacementError {
	c.resolvable(a, tl)
	e := &PlacementError{Task: a.Task.ID(), Tried: tried, Refusals: tl.Sorted(), Evicted: c.evicted, Result: tl.Short}
	if tl.Closest == "" {
		e.Result = tl.last
	}
	if len(e.Refusals.Counts) > 0 {
		first := e.Refusals.Counts[0]
		e.Reason, e.Dim, e.Plugin = first.Reason, first.Dim, first.Plugin
	}
	if !st.OK() {
		e.Reason, e.Plugin, e.Dim = st.Reason, st.Plugin, ""
	}
	return e
}

// resolvable sets tl's Unresolvable for attempt a: whether no node could hold its
// task even empty (cluster.State.CouldHold).
func (c *Cycle) resolvable(a *Attempt, tl *Tally) {
	tl.Unresolvable = !c.fw.state.CouldHold(a.Demand.Hold.Peak(), a.Task.GPU())
}

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
	return c.explained(st, &a), a.Result
}

// Score is a probe: node n's total score for pending task t from start, over the
// Score plugins (not normalised: there is one node), after Filter; the status says
// why t does not pass on n, and the score is then 0.
func (f *Framework) Score(t *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) (float64, Status) {
	c := f.cycle(Probe, start, n)
	var a Attempt
	if st := c.probe(&a, t, n, start); !st.OK() {
		return 0, c.explained(st, &a)
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
