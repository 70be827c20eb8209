package stage

import (
	"fmt"
	"iter"
	"time"

	"github.com/google/btree"

	"github.com/finegrain/finegrain/resource"
)

// Segment is a maximal interval [Start, End) over which a timeline's free resources are
// constant. Free may be negative on a compressible dimension that reservations have
// compressed; it is never negative on a non-compressible one.
type Segment struct {
	Start, End time.Duration
	Free       resource.Tuple
}

// Handle identifies a reservation on one timeline. The zero Handle is never issued.
type Handle uint64

// Timeline is a server's free resources over time: its capacity minus everything
// reserved on it, a step function from the timeline's origin to Forever. Reservations
// place a task's Profile at a start time; queries read the free segments over a window,
// their minimum (the coarse-grained matcher's Ax, docs/methods.md §3) and time-weighted
// average (eq. 14), and find the earliest start at which a profile fits.
//
// The step function lives in a B-tree keyed by the time each step begins, so a
// reservation, a release and a query over a window cost O(log n + k) for n steps on the
// timeline and k steps inside the window. Adjacent equal steps are merged, so reserving
// and then releasing a profile restores the timeline exactly.
//
// Compression: a reservation may take a compressible dimension below zero by at most the
// allowance it is given (the running tasks then share less than they demand and slow
// down, docs/methods.md §1); a non-compressible dimension never goes below zero. A
// reservation that would break either rule is refused and leaves the timeline unchanged.
//
// A Timeline has a single owner: it is not safe for concurrent use.
type Timeline struct {
	schema   *resource.Schema
	capacity resource.Tuple
	steps    *btree.BTreeG[step]
	res      map[Handle]reservation
	lifted   map[Handle]bool // reservations taken off by Suspend until Resume
	last     Handle
	origin   time.Duration
	spare    []*resource.Tuple // recycled step payloads
	version  uint64            // free-amount changes so far (Version)
}

// step is one B-tree item: from at onwards (until the next step) the free amount is
// *free. The payload is a pointer so a range update can change it in place, and the item
// is a small value so a search key costs no allocation.
type step struct {
	at   time.Duration
	free *resource.Tuple
}

// reservation is kept by value in Timeline.res: it must stay small enough (≤ 128
// bytes) for the map to hold it inline, without an allocation per reservation.
type reservation struct {
	start   time.Duration
	profile Profile
}

// NewTimeline returns the timeline of a server of the given capacity, free from time 0
// to Forever. It fails when capacity is not a valid amount for schema.
func NewTimeline(schema *resource.Schema, capacity resource.Tuple) (*Timeline, error) {
	if schema == nil {
		return nil, fmt.Errorf("stage: nil schema: %w", resource.ErrSchemaMismatch)
	}
	if err := schema.Validate(capacity); err != nil {
		return nil, fmt.Errorf("stage: capacity: %w", err)
	}
	tl := &Timeline{
		schema:   schema,
		capacity: capacity,
		steps:    btree.NewG(16, func(a, b step) bool { return a.at < b.at }),
		res:      make(map[Handle]reservation),
	}
	c := capacity
	tl.steps.ReplaceOrInsert(step{at: 0, free: &c})
	return tl, nil
}

// Schema is the schema of the timeline's amounts.
func (tl *Timeline) Schema() *resource.Schema { return tl.schema }

// Capacity is the server's total resources, N in the paper.
func (tl *Timeline) Capacity() resource.Tuple { return tl.capacity }

// Origin is the earliest time the timeline describes: 0, or the last Trim.
func (tl *Timeline) Origin() time.Duration { return tl.origin }

// Len is the number of constant segments from the origin to Forever.
func (tl *Timeline) Len() int { return tl.steps.Len() }

// Version counts the changes of the timeline's free amounts: it grows with every
// Reserve, Release, Suspend and Resume that changes them, and with nothing else (Trim
// drops history without changing what is free from the origin on). A caller that
// worked something out from the timeline may keep it while the version stays the
// same.
func (tl *Timeline) Version() uint64 { return tl.version }

// Reservations is the number of reservations held (reserved and not yet released).
func (tl *Timeline) Reservations() int { return len(tl.res) }

// Lookup returns the start and profile of a reservation.
func (tl *Timeline) Lookup(h Handle) (start time.Duration, p Profile, ok bool) {
	r, ok := tl.res[h]
	return r.start, r.profile, ok
}

// FreeAt returns the free resources at time t (the origin's for t before the origin).
func (tl *Timeline) FreeAt(t time.Duration) resource.Tuple {
	return *tl.floor(max(t, tl.origin)).free
}

// Walk calls fn for each segment overlapping the window [from, to), in time order, with
// the segment clipped to the window, until fn returns false. The window is clipped to
// start at the origin. Walk allocates nothing; it is the input of fine-grained matching
// (Alg. 2's ns).
func (tl *Timeline) Walk(from, to time.Duration, fn func(Segment) bool) {
	from = max(from, tl.origin)
	if to <= from {
		return
	}
	cur := tl.floor(from)
	start, free := from, cur.free
	done := false
	tl.steps.AscendGreaterOrEqual(step{at: from + 1}, func(s step) bool {
		end := min(s.at, to)
		if !fn(Segment{Start: start, End: end, Free: *free}) || s.at >= to {
			done = true
			return false
		}
		start, free = s.at, s.free
		return true
	})
	if !done {
		fn(Segment{Start: start, End: to, Free: *free})
	}
}

// Segments returns the segments overlapping [from, to), clipped to it, as Walk visits
// them, for use with range.
func (tl *Timeline) Segments(from, to time.Duration) iter.Seq[Segment] {
	return func(yield func(Segment) bool) { tl.Walk(from, to, yield) }
}

// AppendSegments appends the segments overlapping [from, to), clipped to it, to dst and
// returns the extended slice.
func (tl *Timeline) AppendSegments(dst []Segment, from, to time.Duration) []Segment {
	tl.Walk(from, to, func(s Segment) bool {
		dst = append(dst, s)
		return true
	})
	return dst
}

// MinFree returns the per-dimension minimum of the free resources over [from, to): the
// coarse-grained matcher's Ax (docs/methods.md §3). An empty window (to ≤ from) is read
// as the instant from.
func (tl *Timeline) MinFree(from, to time.Duration) resource.Tuple {
	if to <= max(from, tl.origin) {
		return tl.FreeAt(from)
	}
	m := tl.capacity
	tl.Walk(from, to, func(s Segment) bool {
		m = m.Min(s.Free)
		return true
	})
	return m
}

// Average returns the time-weighted average of the free resources over [from, to),
// eq. 14. An empty window (to ≤ from) is read as the instant from.
func (tl *Timeline) Average(from, to time.Duration) resource.Vector {
	if to <= max(from, tl.origin) {
		return tl.FreeAt(from).Float()
	}
	var a TimeAverage
	tl.Walk(from, to, func(s Segment) bool {
		a.Add(s.Free, s.End-s.Start)
		return true
	})
	return a.Mean()
}

// FitError says where a profile does not fit a timeline: which stage, in which segment
// of time, on which dimension, and by how much. It wraps ErrNoRoom.
type FitError struct {
	// Stage is the index of the first stage (in time order) that does not fit.
	Stage int
	// Dim is the slot of the dimension short of room and DimName its name.
	Dim     int
	DimName string
	// From and Until bound the segment where the stage does not fit.
	From, Until time.Duration
	// Demand is the stage's demand on the dimension, Free what the timeline had free
	// there and Allowance how far below zero compression could have taken it.
	Demand, Free, Allowance int64
}

// Shortfall is how much more of the dimension the stage would need: Demand − Free −
// Allowance.
func (e *FitError) Shortfall() int64 { return e.Demand - e.Free - e.Allowance }

func (e *FitError) Error() string {
	until := "forever"
	if e.Until != Forever {
		until = e.Until.String()
	}
	return fmt.Sprintf("stage: stage %d needs %s=%d over [%v, %s) but %d is free (compression allowance %d): %v",
		e.Stage, e.DimName, e.Demand, e.From, until, e.Free, e.Allowance, ErrNoRoom)
}

// Unwrap returns ErrNoRoom.
func (e *FitError) Unwrap() error { return ErrNoRoom }

// Check reports whether p, started at start with the compression allowance allow, fits
// the timeline: nil when Reserve would accept it, a *FitError when there is no room, or
// a validation error. allow is an amount per dimension by which free resources may go
// below zero; it must be zero on non-compressible dimensions.
func (tl *Timeline) Check(start time.Duration, p Profile, allow resource.Tuple) error {
	if err := tl.validate(start, p, allow); err != nil {
		return err
	}
	if c, bad := tl.conflict(start, p, allow); bad {
		return tl.fitError(c, allow)
	}
	return nil
}

// Reserve places p on the timeline from start, with the compression allowance allow (see
// Check), and returns the reservation's handle. When p does not fit it returns a
// *FitError; on any error the timeline is unchanged.
func (tl *Timeline) Reserve(start time.Duration, p Profile, allow resource.Tuple) (Handle, error) {
	if err := tl.Check(start, p, allow); err != nil {
		return 0, err
	}
	tl.apply(start, p, -1)
	tl.last++
	tl.res[tl.last] = reservation{start: start, profile: p}
	return tl.last, nil
}

// Release returns a reservation's resources to the timeline. Releasing a handle that is
// not held (never issued, or already released) is an error and changes nothing.
// Resources before the origin are gone with the history Trim dropped.
func (tl *Timeline) Release(h Handle) error {
	r, ok := tl.res[h]
	if !ok {
		return fmt.Errorf("stage: release of handle %d: %w", h, ErrUnknownReservation)
	}
	delete(tl.res, h)
	if tl.lifted[h] {
		delete(tl.lifted, h)
		return nil
	}
	tl.apply(r.start, r.profile, +1)
	return nil
}

// Suspend takes reservation h's resources off the timeline for a what-if question —
// would a profile fit were h gone? — until Resume puts them back exactly, under the
// same handle and without a fit check (preemption asks this of its candidate victims).
// Suspending a handle that is not held, or is already suspended, is an error and
// changes nothing. A suspended reservation still counts in Reservations, and Release
// drops it.
func (tl *Timeline) Suspend(h Handle) error {
	r, ok := tl.res[h]
	if !ok || tl.lifted[h] {
		return fmt.Errorf("stage: suspend of handle %d: %w", h, ErrUnknownReservation)
	}
	if tl.lifted == nil {
		tl.lifted = make(map[Handle]bool)
	}
	tl.lifted[h] = true
	tl.apply(r.start, r.profile, +1)
	return nil
}

// Resume puts suspended reservation h back on the timeline as it was. What was reserved
// while it was suspended may leave less than it holds: the free amounts then go below
// zero (or below the compression allowance), and it is the caller's part not to reserve
// into a suspension it will resume. Resuming a handle that is not suspended is an error
// and changes nothing.
func (tl *Timeline) Resume(h Handle) error {
	r, ok := tl.res[h]
	if !ok || !tl.lifted[h] {
		return fmt.Errorf("stage: resume of handle %d: not suspended: %w", h, ErrUnknownReservation)
	}
	delete(tl.lifted, h)
	tl.apply(r.start, r.profile, -1)
	return nil
}

// EarliestFit returns the earliest start at or after from at which p fits the timeline
// with the compression allowance allow: the basis of future-start placement. It is
// from, or a time at which a stage begins exactly where a segment ends. It fails with a
// *FitError (wrapping ErrNoRoom) when p fits at no start, which happens only when some
// stage demands more than the timeline's last, unending segment has.
func (tl *Timeline) EarliestFit(from time.Duration, p Profile, allow resource.Tuple) (time.Duration, error) {
	from = max(from, tl.origin)
	if err := tl.validate(from, p, allow); err != nil {
		return 0, err
	}
	start := from
	for {
		c, bad := tl.conflict(start, p, allow)
		if !bad {
			return start, nil
		}
		// Stage c.stage meets the same short segment for every start that keeps the
		// stage's beginning before the segment's end: jump past it.
		if c.until == Forever {
			return 0, tl.fitError(c, allow)
		}
		start = c.until - p.offsets[c.stage]
	}
}

// Trim forgets the timeline before now: the origin moves to now, and the segments that
// ended before it are dropped, so a long-running timeline stays small. Reservations are
// kept until released. Trimming to a time at or before the origin does nothing.
func (tl *Timeline) Trim(now time.Duration) {
	if now <= tl.origin {
		return
	}
	tl.split(now)
	for {
		first, _ := tl.steps.Min()
		if first.at >= now {
			break
		}
		tl.steps.DeleteMin()
		tl.spare = append(tl.spare, first.free)
	}
	tl.origin = now
}

// validate checks the inputs common to Check, Reserve and EarliestFit.
func (tl *Timeline) validate(start time.Duration, p Profile, allow resource.Tuple) error {
	if p.Len() == 0 {
		return fmt.Errorf("stage: %w", ErrEmptyProfile)
	}
	if !tl.schema.Equal(p.schema) {
		return fmt.Errorf("stage: profile schema %v, timeline schema %v: %w", p.schema, tl.schema, resource.ErrSchemaMismatch)
	}
	if start < tl.origin {
		return fmt.Errorf("stage: start %v before origin %v: %w", start, tl.origin, ErrBeforeOrigin)
	}
	if err := tl.schema.ValidateAllowance(allow); err != nil {
		return fmt.Errorf("stage: compression allowance: %w", err)
	}
	return nil
}

// conflict describes the first place a profile does not fit, without allocating.
type conflict struct {
	stage, dim  int
	from, until time.Duration
	demand      int64
	free        int64
}

func (tl *Timeline) fitError(c conflict, allow resource.Tuple) error {
	return &FitError{
		Stage: c.stage, Dim: c.dim, DimName: tl.schema.DimName(c.dim),
		From: c.from, Until: c.until,
		Demand: c.demand, Free: c.free, Allowance: allow[c.dim],
	}
}

// conflict finds the first segment, in time order, where some stage of p, started at
// start, does not fit: a dimension the stage demands where free − demand < −allow.
// Dimensions a stage does not demand are not checked, so earlier compression there does
// not block it. One walk over the whole window serves every stage.
func (tl *Timeline) conflict(start time.Duration, p Profile, allow resource.Tuple) (c conflict, bad bool) {
	end := AddSat(start, p.Duration())
	i, n := 0, len(p.stages)
	tl.Walk(start, end, func(seg Segment) bool {
		// Stages before i ended at or before seg.Start; check those that begin before
		// seg.End.
		for j := i; j < n; j++ {
			from := AddSat(start, p.offsets[j])
			if from >= seg.End {
				break
			}
			d := &p.stages[j].Demand
			for k := range d {
				if d[k] > 0 && seg.Free[k]-d[k] < -allow[k] {
					c = conflict{stage: j, dim: k, from: max(seg.Start, from), until: seg.End, demand: d[k], free: seg.Free[k]}
					bad = true
					return false
				}
			}
		}
		for i < n && AddSat(start, p.offsets[i+1]) <= seg.End {
			i++
		}
		return true
	})
	if bad && c.until == end {
		// Walk clips the last segment to the window; EarliestFit needs the real end of
		// the constant segment.
		c.until = tl.segmentEnd(c.from)
	}
	return c, bad
}

// apply adds sign × p's demands, started at start, to the free amounts, then merges the
// steps the change made equal to their predecessors. It splits the steps at every stage
// boundary first, so one pass over the window updates every stage.
func (tl *Timeline) apply(start time.Duration, p Profile, sign int64) {
	from := max(start, tl.origin)
	end := AddSat(start, p.Duration())
	if from >= end {
		return
	}
	tl.version++
	for i := 0; i <= p.Len(); i++ {
		tl.split(AddSat(start, p.offsets[i]))
	}
	i := 0
	tl.steps.AscendRange(step{at: from}, step{at: end}, func(st step) bool {
		for AddSat(start, p.offsets[i+1]) <= st.at {
			i++
		}
		if sign < 0 {
			*st.free = st.free.Sub(p.stages[i].Demand)
		} else {
			*st.free = st.free.Add(p.stages[i].Demand)
		}
		return true
	})
	for i := 0; i <= p.Len(); i++ {
		tl.merge(AddSat(start, p.offsets[i]))
	}
}

// floor returns the step in effect at t ≥ origin: the last one beginning at or before t.
func (tl *Timeline) floor(t time.Duration) step {
	var f step
	tl.steps.DescendLessOrEqual(step{at: t}, func(s step) bool {
		f = s
		return false
	})
	return f
}

// segmentEnd returns the end of the constant segment containing t.
func (tl *Timeline) segmentEnd(t time.Duration) time.Duration {
	end := Forever
	tl.steps.AscendGreaterOrEqual(step{at: t + 1}, func(s step) bool {
		end = s.at
		return false
	})
	return end
}

// split makes a step begin exactly at t (origin < t < Forever), copying the amount in
// effect there.
func (tl *Timeline) split(t time.Duration) {
	if t <= tl.origin || t == Forever {
		return
	}
	f := tl.floor(t)
	if f.at == t {
		return
	}
	tl.steps.ReplaceOrInsert(step{at: t, free: tl.newFree(*f.free)})
}

// merge removes the step beginning at t if it holds the same amount as the one before.
func (tl *Timeline) merge(t time.Duration) {
	if t <= tl.origin || t == Forever {
		return
	}
	var prev, cur step
	n := 0
	tl.steps.DescendLessOrEqual(step{at: t}, func(s step) bool {
		if n == 0 {
			cur = s
		} else {
			prev = s
		}
		n++
		return n < 2
	})
	if n == 2 && cur.at == t && *cur.free == *prev.free {
		tl.steps.Delete(cur)
		tl.spare = append(tl.spare, cur.free)
	}
}

func (tl *Timeline) newFree(v resource.Tuple) *resource.Tuple {
	if n := len(tl.spare); n > 0 {
		p := tl.spare[n-1]
		tl.spare = tl.spare[:n-1]
		*p = v
		return p
	}
	return &v
}
