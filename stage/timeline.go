package stage

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"time"

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
// The step function lives in a B+-tree keyed by the time each step begins (steptree.go)
// whose inner nodes keep each child's per-dimension minimum free amount, with lazy
// range-add. For n steps on the timeline, k inside a window and s stages in a profile,
// a reservation, a release, a suspension or a resumption costs O(s log n) whatever its
// length; MinFree over any window O(log n); Walk O(log n + k); WalkBelow and WalkShort
// O((1 + r) log n) and O((s + r) log n) for r segments found. Adjacent equal steps are
// merged, so reserving and then releasing a profile restores the timeline exactly, and
// Len counts the constant segments.
//
// Amounts are exact over the whole int64 range: a compressible dimension is never taken
// below its capacity − MaxInt64, whatever the allowance (see Check), so an unlimited
// capacity (MaxInt64) is never compressed below zero. Resume puts a reservation back
// without that check: one resumed into what was reserved while it was suspended may
// take amounts further down, where they saturate and are no longer exact.
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
	root     *node         // the step tree (steptree.go); its first step begins at the origin
	len      int           // steps in the tree
	res      []reservation // the reservations held, by handle (reservations.go)
	held     int           // how many of res are held; the others were released
	last     Handle
	origin   time.Duration
	spare    []*node // recycled tree nodes
	version  uint64  // free-amount changes so far (Version)
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
		root:     &node{leaf: true, width: width(schema), at: []time.Duration{0}, val: []resource.Tuple{capacity}},
		len:      1,
	}
	return tl, nil
}

// Schema is the schema of the timeline's amounts.
func (tl *Timeline) Schema() *resource.Schema { return tl.schema }

// Capacity is the server's total resources, N in the paper.
func (tl *Timeline) Capacity() resource.Tuple { return tl.capacity }

// Origin is the earliest time the timeline describes: 0, or the last Trim.
func (tl *Timeline) Origin() time.Duration { return tl.origin }

// Len is the number of constant segments from the origin to Forever.
func (tl *Timeline) Len() int { return tl.len }

// Version counts the changes of the timeline's free amounts: it grows with every
// Reserve, Release, Suspend and Resume that changes them, and with nothing else (Trim
// drops history without changing what is free from the origin on). A caller that
// worked something out from the timeline may keep it while the version stays the
// same.
func (tl *Timeline) Version() uint64 { return tl.version }

// Clone returns a copy of the timeline that shares nothing with it: the same free
// amounts over time, reservations (suspended ones included, under the same handles),
// origin and Version. Changing either leaves the other as it was, so a copy may be
// read by other goroutines while its original changes — a snapshot of a node, as
// finegrain.Scheduler.Snapshot takes. It costs O(n) for n steps and allocates one
// node of the step tree for every 16 steps or so.
func (tl *Timeline) Clone() *Timeline {
	var c *Timeline
	if r := tl.root; r.leaf && len(r.at) <= smallSteps {
		c = smallClone(tl)
	} else {
		cp := *tl
		cp.root = tl.root.clone()
		c = &cp
	}
	c.res = slices.Clone(tl.res)
	c.spare = nil
	return c
}

// smallSteps is how many steps a timeline's tree may hold, in one leaf, for Clone to
// lay the copy out in one allocation (smallTimeline).
const smallSteps = 8

// smallTimeline is a clone of a timeline whose step tree is a single leaf of at most
// smallSteps steps — a node with a few tasks — in one allocation: the timeline, its
// leaf and the leaf's times and amounts side by side, in the order a query reads them.
// A snapshot reads thousands of node views per pod, each once (kube-scheduler's Filter
// over the nodes); with the parts in one block a view costs one or two cache misses to
// reach its amounts, not four. Its arrays are the leaf's length: a step added later
// moves them out of the block, as it would out of a full node's.
type smallTimeline struct {
	tl  Timeline
	nd  node
	at  [smallSteps]time.Duration
	val [smallSteps]resource.Tuple
}

// smallClone copies tl, whose tree is one leaf of at most smallSteps steps, into a
// smallTimeline; Clone copies the maps.
func smallClone(tl *Timeline) *Timeline {
	b := &smallTimeline{tl: *tl}
	r, n := tl.root, len(tl.root.at)
	b.nd.leaf, b.nd.width, b.nd.add = true, r.width, r.add
	b.nd.at, b.nd.val = b.at[:n:n], b.val[:n:n]
	copy(b.nd.at, r.at)
	copy(b.nd.val, r.val)
	b.tl.root = &b.nd
	return &b.tl
}

// Reservations is the number of reservations held (reserved and not yet released).
func (tl *Timeline) Reservations() int { return tl.held }

// Lookup returns the start and profile of a reservation.
func (tl *Timeline) Lookup(h Handle) (start time.Duration, p Profile, ok bool) {
	i, ok := tl.find(h)
	if !ok {
		return 0, Profile{}, false
	}
	return tl.res[i].start, tl.res[i].profile, true
}

// FreeAt returns the free resources at time t (the origin's for t before the origin).
func (tl *Timeline) FreeAt(t time.Duration) resource.Tuple {
	_, _, free := tl.locate(max(t, tl.origin))
	return free
}

// FreeUntil returns the free resources at time t (the origin's for t before the
// origin), as FreeAt, and when they next change: the end of the segment holding t
// (Forever in the last). Until then, nothing but a change of the timeline changes
// FreeAt's answer.
func (tl *Timeline) FreeUntil(t time.Duration) (resource.Tuple, time.Duration) {
	_, end, free := tl.locate(max(t, tl.origin))
	return free, end
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
	walkNode(tl.root, Forever, from, to, &resource.Tuple{}, fn)
}

// WalkBelow calls fn for each segment overlapping the window [from, to) whose free
// amount is below floor on some dimension, in time order, with the segment clipped to
// the window, until fn returns false; it skips the others. The window is clipped to
// start at the origin. It descends only into the parts of the step tree whose minimum
// is below floor, so a window without such a segment costs O(log n), like MinFree, and
// each segment found at most one more descent: O((1 + r) log n) for r segments found.
// It allocates nothing.
func (tl *Timeline) WalkBelow(from, to time.Duration, floor resource.Tuple, fn func(Segment) bool) {
	from = max(from, tl.origin)
	if to <= from {
		return
	}
	walkBelow(tl.root, Forever, from, to, &resource.Tuple{}, &floor, fn)
}

// WalkShort calls fn for each piece of timeline where a stage of p, started at start,
// would be short of room — the part of a segment that stage i overlaps, when the
// segment's free amount is below the stage's demand less slack on some dimension — in
// time order, with fn's arguments the stage's index and the piece (clipped to the stage
// and to the origin), until fn returns false. Slack is what may go below zero (a
// compression allowance, for instance); pass the zero Tuple to find every piece not
// covering its stage's demand, as fine-grained matching (Alg. 2) does. A profile
// without stages has no pieces.
//
// It descends into the step tree only where a subtree's minimum is short of a stage it
// overlaps, so it costs O((s + r) log n) for s stages and r pieces found, whatever the
// profile's length: O(s log n) for a profile that fits everywhere. It allocates
// nothing.
func (tl *Timeline) WalkShort(start time.Duration, p Profile, slack resource.Tuple, fn func(stage int, piece Segment) bool) {
	w := shortWalk{p: &p, start: start, from: max(start, tl.origin), to: AddSat(start, p.Duration()), slack: &slack, fn: fn}
	if w.from >= w.to {
		return
	}
	w.setStage(0)
	w.node(tl.root, Forever, &resource.Tuple{})
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
// as the instant from. It costs O(log n) whatever the window's length: the subtrees of
// the step tree inside the window count by the minima they keep, and only the two
// holding the window's ends are descended into. It allocates nothing.
func (tl *Timeline) MinFree(from, to time.Duration) resource.Tuple {
	from = max(from, tl.origin)
	if to <= from {
		return tl.FreeAt(from)
	}
	var m resource.Tuple
	minNode(tl.root, Forever, from, to, &m)
	return m
}

// MinFreeStages calls fn, in stage order, with each stage of p started at start and the
// least free amount over its window — [start + p.Offset(i), start + p.Offset(i+1)),
// clipped to start at the origin — until fn returns false: MinFree for every stage at
// once. A stage whose window is empty (it ends at or before the origin, or begins at
// Forever) is not reported. One descent of the step tree serves every stage: it visits
// the subtrees that straddle a stage boundary and counts the others by the minima they
// keep, O(s log n) for s stages. It allocates nothing.
func (tl *Timeline) MinFreeStages(start time.Duration, p Profile, fn func(stage int, least resource.Tuple) bool) {
	w := stageMins{p: &p, start: start, from: max(start, tl.origin), to: AddSat(start, p.Duration()), fn: fn, j: -1}
	if w.from >= w.to {
		return
	}
	if w.node(tl.root, Forever, &resource.Tuple{}) && w.seen {
		w.fn(w.j, w.m)
	}
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

	// dim is the dimension, for writing the amounts in its units; zero in a FitError
	// built by hand, whose amounts are written as plain base units.
	dim resource.Dimension
}

// Shortfall is how much more of the dimension the stage would need: Demand − Free −
// Allowance.
func (e *FitError) Shortfall() int64 { return e.Demand - e.Free - e.Allowance }

// Error reads, for example, "stage: stage 0 needs memory=9Gi over [0s, forever) but
// 8Gi is free (compression allowance 0): not enough free resources", the amounts
// written as Kubernetes quantities of the dimension (resource.Dimension.FormatAmount).
func (e *FitError) Error() string {
	until := "forever"
	if e.Until != Forever {
		until = e.Until.String()
	}
	return fmt.Sprintf("stage: stage %d needs %s=%s over [%v, %s) but %s is free (compression allowance %s): %v",
		e.Stage, e.DimName, e.amount(e.Demand), e.From, until, e.amount(e.Free), e.amount(e.Allowance), ErrNoRoom)
}

func (e *FitError) amount(v int64) string {
	if e.dim.Name == "" {
		return strconv.FormatInt(v, 10)
	}
	return e.dim.FormatAmount(v)
}

// Unwrap returns ErrNoRoom.
func (e *FitError) Unwrap() error { return ErrNoRoom }

// Check reports whether p, started at start with the compression allowance allow, fits
// the timeline: nil when Reserve would accept it, a *FitError when there is no room, or
// a validation error. allow is an amount per dimension by which free resources may go
// below zero; it must be zero on non-compressible dimensions. No dimension goes below
// its capacity − MaxInt64 whatever allow says (an unlimited capacity, MaxInt64, is
// never compressed), so that the timeline's amounts stay exact.
func (tl *Timeline) Check(start time.Duration, p Profile, allow resource.Tuple) error {
	if err := tl.validate(start, p, allow); err != nil {
		return err
	}
	allow = tl.bounded(allow)
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
	return tl.add(start, p), nil
}

// Release returns a reservation's resources to the timeline. Releasing a handle that is
// not held (never issued, or already released) is an error and changes nothing.
// Resources before the origin are gone with the history Trim dropped.
func (tl *Timeline) Release(h Handle) error {
	i, ok := tl.find(h)
	if !ok {
		return fmt.Errorf("stage: release of handle %d: %w", h, ErrUnknownReservation)
	}
	r := tl.res[i]
	tl.drop(i)
	if !r.lifted {
		tl.apply(r.start, r.profile, +1)
	}
	return nil
}

// Replace releases reservation h and reserves p from start, with the compression
// allowance allow, in its place, at once: p is checked as Reserve checks it, with h's
// resources given back, and when it does not fit (a *FitError) or is invalid nothing
// changes. It returns the new reservation's handle. The timeline ends as Suspend(h),
// Reserve and Release(h) leave it — the same free amounts, handles and Version — for
// a caller that replaces a reservation for good. Replacing a handle that is not held,
// or is suspended, is an error and changes nothing.
func (tl *Timeline) Replace(h Handle, start time.Duration, p Profile, allow resource.Tuple) (Handle, error) {
	i, ok := tl.find(h)
	if !ok || tl.res[i].lifted {
		return 0, fmt.Errorf("stage: replace of handle %d: %w", h, ErrUnknownReservation)
	}
	old := tl.res[i]
	tl.apply(old.start, old.profile, +1)
	if err := tl.Check(start, p, allow); err != nil {
		tl.apply(old.start, old.profile, -1)
		return 0, err
	}
	tl.apply(start, p, -1)
	tl.drop(i)
	return tl.add(start, p), nil
}

// Suspend takes reservation h's resources off the timeline for a what-if question —
// would a profile fit were h gone? — until Resume puts them back exactly, under the
// same handle and without a fit check (preemption asks this of its candidate victims).
// Suspending a handle that is not held, or is already suspended, is an error and
// changes nothing. A suspended reservation still counts in Reservations, and Release
// drops it.
func (tl *Timeline) Suspend(h Handle) error {
	i, ok := tl.find(h)
	if !ok || tl.res[i].lifted {
		return fmt.Errorf("stage: suspend of handle %d: %w", h, ErrUnknownReservation)
	}
	tl.res[i].lifted = true
	tl.apply(tl.res[i].start, tl.res[i].profile, +1)
	return nil
}

// Resume puts suspended reservation h back on the timeline as it was. What was reserved
// while it was suspended may leave less than it holds: the free amounts then go below
// zero (or below the compression allowance), and it is the caller's part not to reserve
// into a suspension it will resume. Resuming a handle that is not suspended is an error
// and changes nothing.
func (tl *Timeline) Resume(h Handle) error {
	i, ok := tl.find(h)
	if !ok || !tl.res[i].lifted {
		return fmt.Errorf("stage: resume of handle %d: not suspended: %w", h, ErrUnknownReservation)
	}
	tl.res[i].lifted = false
	tl.apply(tl.res[i].start, tl.res[i].profile, -1)
	return nil
}

// EarliestFit returns the earliest start at or after from at which p fits the timeline
// with the compression allowance allow: the basis of future-start placement. It is
// from, or a time at which a stage begins exactly where a segment ends. It fails with a
// *FitError (wrapping ErrNoRoom) when p fits at no start, which happens only when some
// stage demands more than the timeline's last, unending segment has.
//
// Each start it tries costs one WalkShort over the profile's pieces that do not fit,
// and the next start tried is past all of them at once: a stage meets a short segment
// for every start that keeps its beginning before the segment's end.
func (tl *Timeline) EarliestFit(from time.Duration, p Profile, allow resource.Tuple) (time.Duration, error) {
	from = max(from, tl.origin)
	if err := tl.validate(from, p, allow); err != nil {
		return 0, err
	}
	allow = tl.bounded(allow)
	start := from
	for {
		next, bad, never := tl.jump(start, p, allow)
		if !bad {
			return start, nil
		}
		if never {
			// No start fits. The error names the first conflict at the start where
			// stepping one conflict at a time meets the unending segment first.
			return tl.earliestFitStepwise(from, p, allow)
		}
		start = next
	}
}

// jump checks p, started at start, against the timeline as conflict does, but looks at
// every piece where a stage does not fit (WalkShort with the allowance as slack). Stage
// j meets the same short segment [a, b) for every later start before b − offset j, so
// next, the largest such bound, is the earliest start that can fit. never reports a
// piece in the timeline's last, unending segment: then no later start fits either.
func (tl *Timeline) jump(start time.Duration, p Profile, allow resource.Tuple) (next time.Duration, bad, never bool) {
	tl.WalkShort(start, p, allow, func(j int, seg Segment) bool {
		d := &p.stages[j].Demand
		for k := range d {
			if d[k] > 0 && seg.Free[k] < d[k]-allow[k] { // free − demand < −allow, without overflow
				end := seg.End
				if end == AddSat(start, p.offsets[j+1]) {
					_, end, _ = tl.locate(seg.Start) // the piece is clipped to the stage
				}
				bad, never = true, end == Forever
				next = max(next, end-p.offsets[j]) // > start: the stage began before end
				return !never
			}
		}
		return true // short only on dimensions the stage does not demand
	})
	return next, bad, never
}

// earliestFitStepwise is EarliestFit one conflict at a time: from start, the first
// place the profile does not fit, then the start just past it, until it fits or the
// conflict is in the last, unending segment.
func (tl *Timeline) earliestFitStepwise(start time.Duration, p Profile, allow resource.Tuple) (time.Duration, error) {
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

// SetCapacity changes the server's capacity to c (its allocatable resources changed):
// every free amount from the origin on moves by the difference, on each dimension,
// and the reservations stay as they are. Where the reservations hold more than a
// smaller capacity leaves, the free amount goes below zero — the server is
// over-committed until they end, and nothing more fits there meanwhile — as after a
// Resume into what was reserved meanwhile. It fails, changing nothing, when c is not a
// valid amount for the schema.
func (tl *Timeline) SetCapacity(c resource.Tuple) error {
	if err := tl.schema.Validate(c); err != nil {
		return fmt.Errorf("stage: capacity: %w", err)
	}
	var up, down resource.Tuple
	for k := range c {
		// Both capacities lie in [0, MaxInt64]: the difference cannot overflow.
		if d := c[k] - tl.capacity[k]; d > 0 {
			up[k] = d
		} else {
			down[k] = -d
		}
	}
	for _, part := range []struct {
		amount resource.Tuple
		sign   int64
	}{{up, +1}, {down, -1}} {
		if part.amount.IsZero() {
			continue
		}
		p, err := Constant(tl.schema, part.amount, Forever)
		if err != nil {
			return fmt.Errorf("stage: capacity: %w", err)
		}
		tl.apply(tl.origin, p, part.sign)
	}
	tl.capacity = c
	return nil
}

// Trim forgets the timeline before now: the origin moves to now, and the segments that
// ended before it are dropped, so a long-running timeline stays small. Reservations are
// kept until released. Trimming to a time at or before the origin does nothing.
func (tl *Timeline) Trim(now time.Duration) {
	if now <= tl.origin {
		return
	}
	tl.split(now)
	for tl.root.at[0] < now {
		if tl.len == 1 {
			// Only at now = Forever, where split makes no step: the last step, in
			// effect there, begins at the new origin.
			tl.root.at[0] = now
			break
		}
		tl.removeStep(tl.root.at[0])
	}
	tl.origin = now
}

// validate checks the inputs common to Check, Reserve and EarliestFit.
func (tl *Timeline) validate(start time.Duration, p Profile, allow resource.Tuple) error {
	if p.Len() == 0 {
		return fmt.Errorf("stage: %w", ErrEmptyProfile)
	}
	if !tl.schema.Equal(p.Schema()) {
		return fmt.Errorf("stage: profile schema %v, timeline schema %v: %w", p.Schema(), tl.schema, resource.ErrSchemaMismatch)
	}
	if start < tl.origin {
		return fmt.Errorf("stage: start %v before origin %v: %w", start, tl.origin, ErrBeforeOrigin)
	}
	if err := tl.schema.ValidateAllowance(allow); err != nil {
		return fmt.Errorf("stage: compression allowance: %w", err)
	}
	return nil
}

// bounded is the allowance allow as the timeline applies it: no dimension may go below
// its capacity − MaxInt64, so that every free amount it ever holds lies within one int64
// range of the others. The step tree's lazy adds are differences of such amounts and stay
// exact: an unlimited capacity (MaxInt64) is never compressed below zero, and an
// allowance beyond MaxInt64 − capacity is cut to it.
func (tl *Timeline) bounded(allow resource.Tuple) resource.Tuple {
	for k := range allow {
		allow[k] = min(allow[k], math.MaxInt64-tl.capacity[k])
	}
	return allow
}

// conflict describes the first place a profile does not fit, without allocating.
type conflict struct {
	stage, dim  int
	from, until time.Duration
	demand      int64
	free        int64
}

func (tl *Timeline) fitError(c conflict, allow resource.Tuple) error {
	e := &FitError{
		Stage: c.stage, Dim: c.dim, DimName: tl.schema.DimName(c.dim),
		From: c.from, Until: c.until,
		Demand: c.demand, Free: c.free, Allowance: allow[c.dim],
	}
	if c.dim < tl.schema.Len() {
		e.dim = tl.schema.Dim(c.dim)
	}
	return e
}

// conflict finds the first segment, in time order, where some stage of p, started at
// start, does not fit: a dimension the stage demands where free − demand < −allow.
// Dimensions a stage does not demand are not checked, so earlier compression there does
// not block it. WalkShort visits only the pieces below some stage's demand less the
// allowance, which the step tree's minima rule out in O(s log n) when there are none.
func (tl *Timeline) conflict(start time.Duration, p Profile, allow resource.Tuple) (c conflict, bad bool) {
	tl.WalkShort(start, p, allow, func(j int, seg Segment) bool {
		d := &p.stages[j].Demand
		for k := range d {
			if d[k] > 0 && seg.Free[k] < d[k]-allow[k] { // free − demand < −allow, without overflow
				c = conflict{stage: j, dim: k, from: seg.Start, demand: d[k], free: seg.Free[k]}
				bad = true
				return false
			}
		}
		return true // short only on dimensions the stage does not demand
	})
	if bad {
		// The piece is clipped to the stage; EarliestFit needs the real end of the
		// constant segment.
		_, c.until, _ = tl.locate(c.from)
	}
	return c, bad
}

// apply adds sign × p's demands, started at start, to the free amounts, then merges the
// steps the change made equal to their predecessors. It splits the steps at every stage
// boundary first, so that one descent over the window (stageUpdate) updates every stage,
// lazily for the parts of the tree inside one stage; on its way the descent sees most
// boundary steps stay different from their predecessors, and only the others are looked
// up again for a merge.
func (tl *Timeline) apply(start time.Duration, p Profile, sign int64) {
	from := max(start, tl.origin)
	end := AddSat(start, p.Duration())
	if from >= end {
		return
	}
	tl.version++
	tl.splitStages(start, &p)
	u := stageUpdate{start: start, from: from, end: end, p: &p, neg: sign < 0}
	u.node(tl.root, Forever)
	for i := 0; i <= p.Len(); i++ {
		if i >= 64 || u.kept&(1<<i) == 0 { // the update saw most boundaries stay
			tl.merge(AddSat(start, p.offsets[i]))
		}
	}
}

// merge removes the step beginning at t if it holds the same amount as the one before.
func (tl *Timeline) merge(t time.Duration) {
	if t <= tl.origin || t == Forever {
		return
	}
	if tl.redundant(t) {
		tl.removeStep(t)
	}
}
