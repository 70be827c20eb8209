package match

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// refFineGrained is Alg. 2 as FineGrained.Match computed it before the timeline kept
// range minima: one walk over every segment the task overlaps, each checked against the
// stages it overlaps. It is the reference of TestFineGrainedMatchesReference, which
// checks that the stage-by-stage match (a range minimum per stage, a walk only over the
// segments short of a stage's demand) returns exactly the same Result.
func refFineGrained(s Server, start time.Duration, p stage.Profile) Result {
	if err := check(&s, start, &p); err != nil {
		return invalid(err)
	}
	tl := s.Timeline
	schema := tl.Schema()
	w := refWalk{
		id: s.ID, allow: s.Allowance, p: p, schema: schema, start: start,
		sStart: start, sEnd: stage.AddSat(start, p.Offset(1)), d: p.Stage(0).Demand, n: p.Len(),
		comp: schema.Compressible(), capacity: tl.Capacity(), ndims: schema.Len(),
		r: Result{Stage: -1, Dim: -1, schema: schema, nstages: p.Len()},
	}
	for k := 0; k < w.ndims && k < resource.MaxDims; k++ {
		w.min[k] = math.MaxInt64
	}
	w.compCap = w.capacity.Only(w.comp)
	if f, ok := s.Allowance.(Fixed); ok {
		w.allow, w.fixed = nil, scaleAllowance(w.compCap, resource.Vector(f))
	}
	tl.Walk(start, stage.AddSat(start, p.Duration()), w.visit)
	if w.r.Code == Fit && w.r.Allowance != (resource.Tuple{}) {
		w.r.Code = FitCompressed
	}
	if w.r.Code.OK() {
		w.r.MinFree, w.r.MinFreeKnown = w.min, true
	}
	return w.r
}

// refWalk is the state of the reference walk: stage i of p, [sStart, sEnd), demanding d.
type refWalk struct {
	id                string
	allow             Allowance
	fixed             resource.Tuple
	p                 stage.Profile
	r                 Result
	schema            *resource.Schema
	start             time.Duration
	sStart, sEnd      time.Duration
	d                 resource.Tuple
	i, n              int
	ndims             int
	comp              resource.Mask
	capacity, compCap resource.Tuple
	min               resource.Tuple
}

func (w *refWalk) visit(seg stage.Segment) bool {
	for k := 0; k < w.ndims && k < resource.MaxDims; k++ {
		w.min[k] = min(w.min[k], seg.Free[k])
	}
	for {
		if short(&seg.Free, &w.d, w.ndims) && !w.squeeze(&seg) {
			return false
		}
		if seg.End < w.sEnd {
			return true
		}
		w.i++
		if w.i == w.n {
			return false
		}
		w.sStart, w.sEnd = w.sEnd, stage.AddSat(w.start, w.p.Offset(w.i+1))
		w.d = w.p.Stage(w.i).Demand
		if seg.End == w.sStart {
			return true
		}
	}
}

func (w *refWalk) squeeze(seg *stage.Segment) bool {
	d := &w.d
	piece := stage.Segment{Start: max(seg.Start, w.sStart), End: min(seg.End, w.sEnd), Free: seg.Free}
	allow := w.fixed
	if w.allow != nil {
		for k := range d {
			if seg.Free[k] < d[k] && w.comp.Has(k) {
				allow = allowance(w.allow, w.id, w.capacity, w.compCap, piece, *d)
				break
			}
		}
	}
	for k := range d {
		if seg.Free[k] < d[k]-allow[k] {
			w.r = Result{
				Code: NoRoom, Stage: w.i, Dim: k, DimName: w.schema.DimName(k),
				From: piece.Start, Until: piece.End,
				Demand: d[k], Free: seg.Free[k], Allowed: allow[k], schema: w.schema,
			}
			return false
		}
	}
	for k := range d {
		if d[k] > 0 && seg.Free[k] < d[k] {
			squeeze := d[k] - seg.Free[k]
			rc := float64(squeeze) / float64(w.capacity[k]-seg.Free[k]+d[k])
			w.r.Compression[k] = max(w.r.Compression[k], rc)
			w.r.Allowance[k] = max(w.r.Allowance[k], squeeze)
			w.r.noteStage(w.i, rc)
		}
	}
	return true
}

// varying is an Allowance that is not a Fixed: its ratios depend on the query (the
// piece of timeline, its free amounts and the demand), and it records every query, so
// that the property below also checks that both matchers ask it the same questions in
// the same order.
type varying struct {
	base    float64
	queries []AllowanceQuery
}

func (v *varying) Allowed(q AllowanceQuery) resource.Vector {
	v.queries = append(v.queries, q)
	var r resource.Vector
	for k := range r {
		h := uint64(q.Segment.Start/time.Millisecond)*31 + uint64(q.Segment.End/time.Millisecond)*7 +
			uint64(q.Segment.Free[k]&0xff)*3 + uint64(q.Demand[k]&0xff) + uint64(k)
		r[k] = v.base * float64(h%5) / 4
	}
	return r
}

// monotone is a MonotoneAllowance: on each dimension, eq. 6/7's shape
// (resource.CompressionBound clamped to [0, limit]) of that dimension's capacity, free
// amount and demand alone, or, with steps, a staircase of the free amount — both never
// fall as the free amount grows. It counts the questions it is asked.
type monotone struct {
	penalty, limit float64
	steps          bool
	queries        int
}

func (m *monotone) MonotoneInFree() bool { return true }

func (m *monotone) Allowed(q AllowanceQuery) resource.Vector {
	m.queries++
	var r resource.Vector
	running, headroom := q.Capacity.Sub(q.Segment.Free), q.Segment.Free.Add(q.Capacity) // saturating
	for k := range r {
		n, d := q.Capacity[k], q.Demand[k]
		if d <= 0 || n <= 0 {
			continue
		}
		if m.steps {
			r[k] = m.limit * float64(min(max(headroom[k], 0)/(n/4+1), 8)) / 8
			continue
		}
		b, err := resource.CompressionBound(float64(d), float64(max(running[k], 0)), m.penalty)
		if err == nil {
			r[k], _ = resource.MaxCompression(b, m.limit)
		}
	}
	return r
}

// notMonotone is an Allowance that says it keeps MonotoneAllowance's promises when
// it does not: FineGrained must not take its word when it answers false.
type notMonotone struct{ monotone }

func (*notMonotone) MonotoneInFree() bool { return false }

var refSchema = resource.MustSchema(resource.CPU, resource.Memory, resource.NetIO, resource.DiskIO)

// refScenario is a random server: a timeline of up to a few hundred segments on a
// quarter-second grid, with reservations that compress (some far below zero, by
// resuming a suspended reservation into space taken meanwhile), some released, and the
// history trimmed now and then.
func refScenario(r *rand.Rand) *stage.Timeline {
	capacity := refSchema.MustTuple(int64(2000+r.Intn(2000)), int64(2000+r.Intn(2000)), int64(1000+r.Intn(1000)), int64(1000+r.Intn(1000)))
	tl, _ := stage.NewTimeline(refSchema, capacity)
	var hs []stage.Handle
	for n := r.Intn(250); n > 0; n-- {
		switch x := r.Intn(20); {
		case x == 0:
			tl.Trim(tl.Origin() + time.Duration(r.Intn(8))*time.Second/4)
		case x < 4 && len(hs) > 0:
			_ = tl.Release(hs[r.Intn(len(hs))])
		case x < 5 && len(hs) > 0:
			h := hs[r.Intn(len(hs))]
			if tl.Suspend(h) == nil {
				_, _ = tl.Reserve(tl.Origin()+time.Duration(r.Intn(200))*time.Second/4, refProfile(r, 400), resource.Tuple{})
				_ = tl.Resume(h)
			}
		default:
			allow := resource.Tuple{}
			if r.Intn(2) == 0 {
				allow = refSchema.MustTuple(int64(r.Intn(400)), 0, int64(r.Intn(200)), int64(r.Intn(200)))
			}
			if h, err := tl.Reserve(tl.Origin()+time.Duration(r.Intn(200))*time.Second/4, refProfile(r, 200), allow); err == nil {
				hs = append(hs, h)
			}
		}
	}
	return tl
}

// refProfile is 1–10 stages of a quarter second to 10 s (now and then much longer, or
// unending), demanding up to maxDemand of each dimension, or nothing of some.
func refProfile(r *rand.Rand, maxDemand int) stage.Profile {
	st := make([]stage.Stage, 1+r.Intn(10))
	for i := range st {
		d := time.Duration(1+r.Intn(40)) * time.Second / 4
		switch r.Intn(40) {
		case 0:
			d = stage.Forever
		case 1, 2:
			d = time.Duration(1+r.Intn(400)) * time.Second / 4
		}
		var demand resource.Tuple
		for k := 0; k < refSchema.Len(); k++ {
			if r.Intn(4) > 0 {
				demand[k] = int64(r.Intn(maxDemand + 1))
			}
		}
		st[i] = stage.Stage{Duration: d, Demand: demand}
	}
	return stage.MustProfile(refSchema, st...)
}

func TestFineGrainedMatchesReference(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	props := gopter.NewProperties(params)
	props.Property("FineGrained returns exactly the Result of the walk-only Alg. 2, and asks an Allowance the same questions (a MonotoneAllowance fewer)", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		tl := refScenario(r)
		for q := 0; q < 20; q++ {
			p := refProfile(r, []int{100, 500, 1000, 2500}[r.Intn(4)])
			start := tl.Origin() + time.Duration(r.Intn(220))*time.Second/4
			if r.Intn(30) == 0 {
				start = tl.Origin() - time.Second // before the origin: Invalid
			}
			fixed, _ := UniformAllowance(refSchema, float64(r.Intn(41))/100)
			if r.Intn(10) == 0 {
				fixed, _ = UniformAllowance(refSchema, 1)
			}
			base := float64(r.Intn(41)) / 100
			got, want := &varying{base: base}, &varying{base: base}
			for _, c := range []struct {
				name      string
				got, want Allowance
			}{{"none", nil, nil}, {"fixed", fixed, fixed}, {"varying", got, want}} {
				a := FineGrained{}.Match(Server{ID: "s", Timeline: tl, Allowance: c.got}, start, p)
				b := refFineGrained(Server{ID: "s", Timeline: tl, Allowance: c.want}, start, p)
				if a.Code == Invalid && b.Code == Invalid && a.Cause.Error() == b.Cause.Error() {
					continue
				}
				if a != b {
					return fmt.Sprintf("%s allowance, %v from %v on %v:\n got  %+v\n want %+v", c.name, p, start, tl.AppendSegments(nil, 0, stage.Forever), a, b)
				}
			}
			if !slices.Equal(got.queries, want.queries) {
				return fmt.Sprintf("%v from %v: allowance queries\n got  %v\n want %v", p, start, got.queries, want.queries)
			}
			// A MonotoneAllowance is asked about stages, not pieces: a match that fits
			// asks it at most once a stage, and the Result is still the walk's.
			lim, pen := float64(r.Intn(41))/100, float64(r.Intn(20))/100
			for _, steps := range []bool{false, true} {
				mg, mw := &monotone{penalty: pen, limit: lim, steps: steps}, &monotone{penalty: pen, limit: lim, steps: steps}
				a := FineGrained{}.Match(Server{ID: "s", Timeline: tl, Allowance: mg}, start, p)
				b := refFineGrained(Server{ID: "s", Timeline: tl, Allowance: mw}, start, p)
				if a.Code == Invalid && b.Code == Invalid && a.Cause.Error() == b.Cause.Error() {
					continue
				}
				if a != b {
					return fmt.Sprintf("monotone allowance (steps %v), %v from %v on %v:\n got  %+v\n want %+v", steps, p, start, tl.AppendSegments(nil, 0, stage.Forever), a, b)
				}
				if a.Code.OK() && mg.queries > p.Len() {
					return fmt.Sprintf("monotone allowance (steps %v), %v from %v: %d questions for %d stages", steps, p, start, mg.queries, p.Len())
				}
				// One that says it does not keep the promises is asked as any other.
				ng, nw := &notMonotone{monotone{penalty: pen, limit: lim, steps: steps}}, &notMonotone{monotone{penalty: pen, limit: lim, steps: steps}}
				a = FineGrained{}.Match(Server{ID: "s", Timeline: tl, Allowance: ng}, start, p)
				b = refFineGrained(Server{ID: "s", Timeline: tl, Allowance: nw}, start, p)
				if a.Code != Invalid && (a != b || ng.queries != nw.queries) {
					return fmt.Sprintf("not monotone (steps %v), %v from %v: %d questions against %d\n got  %+v\n want %+v", steps, p, start, ng.queries, nw.queries, a, b)
				}
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

// Matching allocates nothing, fitting as it is, by compression (with a Fixed and with
// another Allowance) or not at all.
func TestMatchAllocatesNothing(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	tl, _ := stage.NewTimeline(refSchema, refSchema.MustTuple(4000, 4000, 2000, 2000))
	for i := 0; i < 200; i++ {
		_, _ = tl.Reserve(time.Duration(i)*time.Second/2, refProfile(r, 300), refSchema.MustTuple(200, 0, 100, 100))
	}
	fixed, _ := UniformAllowance(refSchema, 0.3)
	v := &varying{base: 0.3}
	p := stage.MustProfile(refSchema, stage.Stage{Duration: 20 * time.Second, Demand: refSchema.MustTuple(3000, 100, 100, 100)})
	codes := map[Code]bool{}
	for _, a := range []Allowance{nil, fixed, v} {
		for _, start := range []time.Duration{0, 30 * time.Second, 200 * time.Second} {
			s := Server{ID: "s", Timeline: tl, Allowance: a}
			codes[FineGrained{}.Match(s, start, p).Code] = true // and the recorder has room
			if n := testing.AllocsPerRun(50, func() {
				v.queries = v.queries[:0]
				_ = FineGrained{}.Match(s, start, p)
				_ = CoarseGrained{}.Match(s, start, p)
			}); n != 0 {
				t.Errorf("allowance %T from %v: %v allocations", a, start, n)
			}
		}
	}
	if !codes[Fit] || !codes[FitCompressed] || !codes[NoRoom] {
		t.Errorf("the cases cover %v, not every code", codes)
	}
}

// Past 2^53 an amount is not exact in a float64, and eq. 1's ratio, computed in floating
// point, can fall as the squeeze grows: here the squeezes 2^54 + 1 and 2^54 + 2 are one
// float64, while the denominators N + squeeze round to two (the second is a tie that
// rounds up). The piece with the smaller squeeze then has the larger ratio, which the
// walk records and a per-stage minimum would miss; FineGrained walks at such amounts.
func TestFineGrainedHugeAmountsMatchReference(t *testing.T) {
	const sq1, sq2 = 1<<54 + 1, 1<<54 + 2
	k := int64(1<<52) | 1          // odd, so that a tie rounds up to (k+1)·1024
	capacity := k*1024 + 512 - sq2 // capacity + sq2 is the tie
	demand := capacity - (1 << 56) // squeezes below the capacity
	schema := resource.MustSchema(resource.CPU)
	tl, err := stage.NewTimeline(schema, schema.MustTuple(capacity))
	if err != nil {
		t.Fatal(err)
	}
	for i, sq := range []int64{sq1, sq2} { // free = demand − squeeze over [i s, i+1 s)
		p := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(capacity - demand + sq)})
		if _, err := tl.Reserve(time.Duration(i)*time.Second, p, resource.Tuple{}); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := float64(sq1)/float64(capacity+sq1), float64(sq2)/float64(capacity+sq2); !(a > b) {
		t.Fatalf("the case does not show the rounding: %v, %v", a, b)
	}
	fixed, _ := UniformAllowance(schema, 0.05)
	task := stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: schema.MustTuple(demand)})
	s := Server{ID: "s", Timeline: tl, Allowance: fixed}
	got, want := FineGrained{}.Match(s, 0, task), refFineGrained(s, 0, task)
	if got.Code != FitCompressed || got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
