package match

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Matcher decides whether, and how, a task whose demand over time is p fits server s
// if it starts at start (an offset on the server's timeline, at or after its origin).
// It only reads the server's timeline; the caller reserves after a successful match
// (with Result.Allowance as the compression allowance). Implementations allocate
// nothing and are safe for concurrent use as long as the timeline is not written
// meanwhile.
type Matcher interface {
	Match(s Server, start time.Duration, p stage.Profile) Result
}

// MatcherTo is a Matcher that can also write its verdict into a Result the caller
// holds: MatchTo(r, …) leaves in *r, whatever it held, exactly what Match returns. A
// Result is large, and a placement that matches many candidate nodes spends about as
// much copying one out as matching when the task fits; it calls MatchTo where a
// matcher has it. RequestQuantity, CoarseGrained and FineGrained do.
type MatcherTo interface {
	Matcher
	MatchTo(r *Result, s Server, start time.Duration, p stage.Profile)
}

var (
	_ MatcherTo = RequestQuantity{}
	_ MatcherTo = CoarseGrained{}
	_ MatcherTo = FineGrained{}
)

// RequestQuantity matches a task that cannot be predicted (a service, or a task
// without enough history: Alg. 1 line 8, docs/methods.md §3) by its request: the task
// gets exactly what it asks for, held for its whole (declared, or Forever) duration,
// without compression. Pass the request as a profile, usually one stage from
// stage.Constant; a multi-stage profile is read as its peak held throughout. The task
// fits when the server's free resources cover the request over [start, start + duration).
// Reserve the request with Hold.
type RequestQuantity struct{}

// Match implements Matcher.
func (RequestQuantity) Match(s Server, start time.Duration, p stage.Profile) (r Result) {
	peakMatch(&r, &s, start, p)
	return r
}

// MatchTo is Match writing its verdict in r (all of it), which need not be zero: see
// FineGrained.MatchTo.
func (RequestQuantity) MatchTo(r *Result, s Server, start time.Duration, p stage.Profile) {
	peakMatch(r, &s, start, p)
}

// Hold returns what a task matched by its request holds on the server: its peak for
// its whole duration (stage.Constant), the profile to reserve.
func (RequestQuantity) Hold(p stage.Profile) (stage.Profile, error) {
	if p.Len() == 0 {
		return stage.Profile{}, fmt.Errorf("match: %w", stage.ErrEmptyProfile)
	}
	return stage.Constant(p.Schema(), p.Peak(), p.Duration())
}

// CoarseGrained is the coarse-grained match of Alg. 1 lines 12–15: Mx is the task's
// per-dimension peak demand over its whole duration T (Profile.Peak), Ax the server's
// per-dimension minimum free amount over [start, start + T) (Timeline.MinFree); the
// match fails when Ax < Mx in the sense of eq. 13, i.e. some dimension's peak is not
// covered. It never compresses. On failure the result names the first such dimension
// (in slot order), the first stage demanding that peak, and the first segment where
// the minimum occurs.
type CoarseGrained struct{}

// Match implements Matcher.
func (CoarseGrained) Match(s Server, start time.Duration, p stage.Profile) (r Result) {
	peakMatch(&r, &s, start, p)
	return r
}

// MatchTo is Match writing its verdict in r (all of it), which need not be zero: see
// FineGrained.MatchTo.
func (CoarseGrained) MatchTo(r *Result, s Server, start time.Duration, p stage.Profile) {
	peakMatch(r, &s, start, p)
}

// FineGrained is the fine-grained match of Alg. 2 (docs/methods.md §4), exactly: the
// task's stages, laid end to end from start, are walked together with the server's free
// segments; every segment n overlapping a stage s must satisfy
//
//	nc + rc × N ≥ sc   and   nn ≥ sn
//
// on every dimension (eq. 13), where nc, nn are the compressible and non-compressible
// parts of the segment's free amounts, sc, sn those of the stage's demand, N the
// server's capacity and rc the compression ratios s.Allowance grants there (zero when
// it is nil). Because the check is on every dimension, a segment already squeezed
// below −rc × N on a compressible dimension refuses even a stage that does not demand
// that dimension, as the algorithm is printed.
//
// A successful match reports the compression each stage would run under
// (Result.StageRatio, Result.Compression; eq. 1 with the placed stage's demand) and
// the allowance to reserve with (Result.Allowance).
//
// The result is the algorithm's, segment by segment, but the segments that cover their
// stage's demand — where the check passes and nothing is recorded — are never looked
// at: the timeline keeps per-dimension minima over its step tree. The match first takes
// the window's least free amount (stage.Timeline.MinFree, O(log n) for n segments; the
// result's MinFree); when it covers the task's peak demand the task fits as it is,
// without a walk. Otherwise, when the allowance is a Fixed or nil — the same on every
// segment — or a MonotoneAllowance — least where the free amount is least, as the
// policy package's compression manager — each stage is settled by its own least free
// amount (stage.Timeline.MinFreeStages, one descent for all stages): the stage fails
// where that amount is short of its demand less the allowance there (the first such
// segment, found by stage.Timeline.WalkBelow, is the one reported), and otherwise the
// compression the walk would record is the one at that amount, the largest squeeze:
// O(s log n) for s stages, however many segments the task spans, and a
// MonotoneAllowance is asked once per stage short of its demand on a compressible
// dimension. Another Allowance
// may answer differently for each segment: stage.Timeline.WalkShort then visits, in
// time order, only the pieces of segment short of the demand of the stage they
// overlap, where compression must make up the difference or the match fails:
// O((s + r) log n) for r such pieces. (So does a capacity or demand beyond 2^51,
// where eq. 1's ratio computed in floating point may not grow with the squeeze, and a
// timeline whose amounts have saturated, stage.Timeline's Resume, where a stage's
// least free amount may disagree with its segments.) It allocates nothing.
type FineGrained struct{}

// Match implements Matcher.
func (m FineGrained) Match(s Server, start time.Duration, p stage.Profile) (r Result) {
	m.MatchTo(&r, s, start, p)
	return r
}

// MatchTo is Match writing its verdict in r (all of it), which need not be zero: the
// way to match many servers without copying each result (a Result is large, and a
// placement's candidate spends about as much on a copy of one as on the window's
// minimum when the task fits).
func (FineGrained) MatchTo(r *Result, s Server, start time.Duration, p stage.Profile) {
	if err := check(&s, start, &p); err != nil {
		*r = invalid(err)
		return
	}
	tl := s.Timeline
	schema := tl.Schema()
	ndims := schema.Len()
	// The window's least free amount, O(log n), is the result's MinFree; when it covers
	// the task's peak, no segment is short of any stage's demand: a fit, no walk, and
	// no walk's state either. (A peak beyond the capacity is never covered: no need to
	// look.) Otherwise only the pieces of segments short of the demand of the stage
	// they overlap are visited, in time order; the timeline's minima skip the others.
	end := stage.AddSat(start, p.Duration())
	capacity, peak := tl.Capacity(), p.Peak()
	if short(&capacity, &peak, ndims) {
		*r = fineWalkMatch(&s, start, p, end, &peak, nil)
		return
	}
	mf := minFree(tl, start, end, ndims)
	if short(&mf, &peak, ndims) {
		*r = fineWalkMatch(&s, start, p, end, &peak, &mf)
		return
	}
	*r = Result{}
	r.start(schema, p.Len())
	r.MinFree, r.MinFreeKnown = mf, true
}

// fineWalkMatch is FineGrained.Match for a task whose peak is not covered by the
// window's least free amount (minFree, when known; nil when the peak exceeds the
// capacity and it was not looked at): the walk over the short pieces.
func fineWalkMatch(s *Server, start time.Duration, p stage.Profile, end time.Duration, peak *resource.Tuple, known *resource.Tuple) Result {
	tl := s.Timeline
	schema := tl.Schema()
	// The walk's state holds values only (no pointers to this frame), so that passing
	// w.visit to WalkBelow allocates nothing.
	w := fineWalk{
		id: s.ID, allow: s.Allowance, schema: schema,
		comp: schema.Compressible(), capacity: tl.Capacity(), ndims: schema.Len(),
	}
	w.r.start(schema, p.Len())
	w.compCap = w.capacity.Only(w.comp)
	switch a := s.Allowance.(type) {
	case Fixed:
		// A constant allowance is the same on every segment: compute rc × N once.
		w.allow, w.fixed = nil, scaleAllowance(w.compCap, resource.Vector(a))
	case MonotoneAllowance:
		w.monotone = a.MonotoneInFree()
	}
	if known != nil {
		w.r.MinFree = *known
	}
	w.p, w.i = p, -1
	if (w.allow == nil || w.monotone) && exactRatios(&w.capacity, peak, w.ndims) {
		w.byStage(tl, start)
		if w.unsure {
			// A stage's minimum was short of its floor but no step was (the tree's minima
			// and steps disagree once amounts have saturated, see stage.Timeline): the
			// walk's answer, from scratch.
			minFree := w.r.MinFree
			w.r, w.i = Result{}, -1
			w.r.start(schema, p.Len())
			w.r.MinFree = minFree
			tl.WalkShort(start, p, resource.Tuple{}, w.visit)
		}
	} else {
		tl.WalkShort(start, p, resource.Tuple{}, w.visit)
	}
	if w.r.Code == NoRoom {
		return w.r
	}
	if w.r.Allowance != (resource.Tuple{}) {
		w.r.Code = FitCompressed
	}
	if known == nil {
		w.r.MinFree = minFree(tl, start, end, w.ndims)
	}
	w.r.MinFreeKnown = true
	return w.r
}

// start makes the zero result r the one a fine-grained match starts from: nothing
// found yet. (Set in place: a Result is large, and building one to copy in costs a
// match a copy.)
func (r *Result) start(schema *resource.Schema, stages int) {
	r.Stage, r.Dim, r.schema, r.nstages = -1, -1, schema, stages
}

// minFree is the least free amount over [start, end), which is empty only when start
// is Forever: the minimum over no segment is then MaxInt64 on the schema's ndims
// dimensions.
func minFree(tl *stage.Timeline, start, end time.Duration, ndims int) resource.Tuple {
	if start < end {
		return tl.MinFree(start, end)
	}
	var m resource.Tuple
	for k := 0; k < ndims && k < resource.MaxDims; k++ {
		m[k] = math.MaxInt64
	}
	return m
}

// fineWalk is the state of Alg. 2's walk over the pieces of timeline short of a stage's
// demand: the last such piece was stage i's, st.
type fineWalk struct {
	id                string
	allow             Allowance
	fixed             resource.Tuple // rc × N when allow is nil because it is a Fixed
	monotone          bool           // allow is a MonotoneAllowance that holds its promises
	p                 stage.Profile
	r                 Result
	schema            *resource.Schema
	st                stage.Stage
	i                 int
	ndims             int
	unsure            bool            // byStage found a short minimum but no short step
	tl                *stage.Timeline // byStage's timeline and the task's start
	start             time.Duration
	comp              resource.Mask
	capacity, compCap resource.Tuple
}

// ratioExact bounds the capacities and demands for which byStage's answer is exact: up
// to it, the amounts in eq. 1 and their sums are integers a float64 holds exactly.
const ratioExact = 1 << 51

// exactRatios reports whether every capacity and peak demand is within ratioExact, so
// that eq. 1's ratio computed in floating point grows with the squeeze (see byStage).
func exactRatios(capacity, peak *resource.Tuple, n int) bool {
	for k := 0; k < n && k < resource.MaxDims; k++ {
		if capacity[k] > ratioExact || peak[k] > ratioExact {
			return false
		}
	}
	return true
}

// byStage is the walk's answer when the allowance is the same on every segment (a Fixed,
// or none), computed from each stage's least free amount (Timeline.MinFreeStages)
// instead of a visit per short piece: with a constant allowance a, a stage demanding d
// fails at a piece whose free amount f has f < d − a on some dimension, which happens
// within the stage exactly when its least free amount m does, and then the first such
// piece in time order is the walk's (WalkBelow finds it). Otherwise the walk records,
// per dimension, the largest squeeze d − f and the largest ratio (d − f)/(N − f + d)
// over the stage's short pieces: both grow as f falls, so they are the values at m.
// (The ratio grows with the squeeze in floating point too while the amounts are exact
// there: exactRatios.)
func (w *fineWalk) byStage(tl *stage.Timeline, start time.Duration) {
	w.tl, w.start = tl, start
	tl.MinFreeStages(start, w.p, w.stageMin)
}

// stageMin checks stage i, whose least free amount is m, as byStage says.
func (w *fineWalk) stageMin(i int, m resource.Tuple) bool {
	w.i = i
	dem := w.p.Demand(i)
	d := &dem
	allow := &w.fixed
	isShort, shortComp, fails := false, false, false
	for k := 0; k < w.ndims && k < resource.MaxDims; k++ {
		if m[k] < d[k] {
			isShort, shortComp = true, shortComp || w.comp.Has(k)
			fails = fails || m[k] < d[k]-w.fixed[k] // both are not negative: no overflow
		}
	}
	if !isShort {
		return true
	}
	from, to := stage.AddSat(w.start, w.p.Offset(i)), stage.AddSat(w.start, w.p.Offset(i+1))
	var atMin resource.Tuple
	if w.monotone && shortComp {
		// Asked only when short on a compressible dimension, as squeeze asks. The
		// allowance at the stage's least free amounts is the least over its window on
		// each dimension, and free + allowance is least there (MonotoneAllowance).
		atMin = allowance(w.allow, w.id, w.capacity, w.compCap, stage.Segment{Start: max(from, w.tl.Origin()), End: to, Free: m}, *d)
		allow, fails = &atMin, false
		for k := 0; k < w.ndims && k < resource.MaxDims; k++ {
			fails = fails || m[k] < d[k]-atMin[k]
		}
	}
	if fails {
		// The first piece that fails is below the demand less the allowance at the
		// minimum (an allowance is at least that anywhere in the window).
		w.st = w.p.Stage(i)
		var floor resource.Tuple
		for k := range d {
			floor[k] = d[k] - allow[k]
		}
		w.tl.WalkBelow(from, to, floor, w.visitStage)
		w.unsure = w.r.Code != NoRoom
		return false
	}
	w.compress(&m, d)
	return true
}

// visitStage fails the match at the first piece of stage w.i that the allowance does not
// make up for.
func (w *fineWalk) visitStage(piece stage.Segment) bool {
	return w.squeeze(&piece)
}

// visit checks a piece of free segment, clipped to stage i, that does not cover the
// stage's demand (Alg. 2 line 8: nc + rc × N < sc or nn < sn fails the match, unless
// compression makes up for it).
func (w *fineWalk) visit(i int, piece stage.Segment) bool {
	if i != w.i {
		w.i, w.st = i, w.p.Stage(i)
	}
	return w.squeeze(&piece)
}

// short is free.AnyLess(demand) (eq. 13) over the first n slots (those of the schema;
// the others are zero in both) without copying the tuples.
func short(free, demand *resource.Tuple, n int) bool {
	for k := 0; k < n && k < resource.MaxDims; k++ {
		if free[k] < demand[k] {
			return true
		}
	}
	return false
}

// squeeze handles a segment whose free amounts do not cover the stage's demand: it
// fails the match (false) unless the compression allowed there makes up for it, and
// records the compression.
func (w *fineWalk) squeeze(piece *stage.Segment) bool {
	d, seg := &w.st.Demand, piece
	allow := w.fixed
	if w.allow != nil {
		for k := range d {
			if seg.Free[k] < d[k] && w.comp.Has(k) {
				allow = allowance(w.allow, w.id, w.capacity, w.compCap, *piece, *d)
				break
			}
		}
	}
	for k := range d {
		if seg.Free[k] < d[k]-allow[k] { // free + allowance < demand, without overflow
			w.r = Result{
				Code: NoRoom, Stage: w.i, Dim: k, DimName: w.schema.DimName(k),
				From: piece.Start, Until: piece.End,
				Demand: d[k], Free: seg.Free[k], Allowed: allow[k], schema: w.schema,
			}
			return false
		}
	}
	w.compress(&seg.Free, d)
	return true
}

// compress records the compression of a piece of stage w.i with free amounts free,
// which the allowance makes up for: every task sharing dimension k gets C/D of its
// demand d, rc = (D − C)/D with D = C − free + demand (eq. 1).
func (w *fineWalk) compress(free, d *resource.Tuple) {
	for k := 0; k < w.ndims && k < resource.MaxDims; k++ {
		if d[k] > 0 && free[k] < d[k] {
			squeeze := d[k] - free[k]
			rc := float64(squeeze) / float64(w.capacity[k]-free[k]+d[k])
			w.r.Compression[k] = max(w.r.Compression[k], rc)
			w.r.Allowance[k] = max(w.r.Allowance[k], squeeze)
			w.r.noteStage(w.i, rc)
		}
	}
}

// RefuseAll is the matcher of a server whose policy accepts no task (StopAllocation): it
// returns Unschedulable for every task.
type RefuseAll struct{}

// Match implements Matcher.
func (RefuseAll) Match(Server, time.Duration, stage.Profile) Result {
	return Result{Code: Unschedulable, Stage: -1, Dim: -1}
}

// peakMatch is the shared check of RequestQuantity and CoarseGrained: Ax < Mx (eq. 13),
// its verdict written in out.
func peakMatch(out *Result, s *Server, start time.Duration, p stage.Profile) {
	if err := check(s, start, &p); err != nil {
		*out = invalid(err)
		return
	}
	tl := s.Timeline
	end := stage.AddSat(start, p.Duration())
	ax, mx := tl.MinFree(start, end), p.Peak()
	schema := tl.Schema()
	if !ax.AnyLess(mx) {
		*out = Result{Code: Fit, Stage: -1, Dim: -1, schema: schema, nstages: p.Len(), MinFree: ax, MinFreeKnown: true}
		return
	}
	k := 0
	for ax[k] >= mx[k] {
		k++
	}
	r := Result{Code: NoRoom, Stage: -1, Dim: k, DimName: schema.DimName(k), Demand: mx[k], Free: ax[k], schema: schema}
	for i := 0; i < p.Len(); i++ {
		if p.Stage(i).Demand[k] == mx[k] {
			r.Stage = i
			break
		}
	}
	// The first segment where dimension k is at its minimum: the first at or below it.
	floor := resource.Tuple{math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64}
	floor[k] = ax[k] + 1 // ax[k] < mx[k] ≤ MaxInt64
	tl.WalkBelow(start, end, floor, func(seg stage.Segment) bool {
		r.From, r.Until = seg.Start, seg.End
		return false
	})
	*out = r
}

// check validates the input common to every matcher.
func check(s *Server, start time.Duration, p *stage.Profile) error {
	if s.Timeline == nil {
		return fmt.Errorf("match: server %q: %w", s.ID, ErrNilTimeline)
	}
	if p.Len() == 0 {
		return fmt.Errorf("match: %w", stage.ErrEmptyProfile)
	}
	if tl := s.Timeline; !tl.Schema().Equal(p.Schema()) {
		return fmt.Errorf("match: profile schema %v, server %q schema %v: %w", p.Schema(), s.ID, tl.Schema(), resource.ErrSchemaMismatch)
	}
	if o := s.Timeline.Origin(); start < o {
		return fmt.Errorf("match: start %v before the origin %v of server %q's timeline: %w", start, o, s.ID, stage.ErrBeforeOrigin)
	}
	return nil
}
