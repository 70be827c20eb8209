package match_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// busy returns the scenario most tests use: capacity cpu 4000, mem 8000, net 1000;
// reserved cpu 3000, mem 2000 over [0 s, 2 s) and cpu 1000, mem 6000 over [2 s, 4 s).
// Free: [0,2) cpu 1000 mem 6000; [2,4) cpu 3000 mem 2000; [4,∞) everything.
func busy(t testing.TB) *stage.Timeline {
	tl := timeline(t, tup(4000, 8000, 1000))
	reserve(t, tl, 0, prof(st(2, 3000, 2000, 0), st(2, 1000, 6000, 0)), resource.Tuple{})
	return tl
}

func tenPercent(t testing.TB) match.Fixed {
	f, err := match.UniformAllowance(schema3, 0.10)
	require.NoError(t, err)
	return f
}

func TestFineGrained(t *testing.T) {
	tl := busy(t)
	ten := tenPercent(t)
	task := prof(st(1, 1200, 1000, 0), st(2, 2000, 1000, 0))
	for _, tc := range []struct {
		name  string
		allow match.Allowance
		start float64
		p     stage.Profile
		want  match.Result
	}{
		{name: "fits later", start: 2, p: task, want: match.Result{Code: match.Fit, Stage: -1, Dim: -1}},
		{name: "stage 0 short, no allowance", start: 0, p: task, want: match.Result{
			Code: match.NoRoom, Stage: 0, Dim: 0, DimName: "cpu", From: 0, Until: sec(1), Demand: 1200, Free: 1000}},
		{name: "stage 0 compressed, stage 1 beyond the allowance", allow: ten, start: 0, p: task, want: match.Result{
			Code: match.NoRoom, Stage: 1, Dim: 0, DimName: "cpu", From: sec(1), Until: sec(2), Demand: 2000, Free: 1000, Allowed: 400}},
		{name: "memory is never compressed", allow: ten, start: 2, p: prof(st(1, 100, 3000, 0)), want: match.Result{
			Code: match.NoRoom, Stage: 0, Dim: 1, DimName: "memory", From: sec(2), Until: sec(3), Demand: 3000, Free: 2000}},
		{name: "a segment longer than the stage", start: 4, p: prof(st(1, 4000, 8000, 1000), st(1, 4001, 0, 0)), want: match.Result{
			Code: match.NoRoom, Stage: 1, Dim: 0, DimName: "cpu", From: sec(5), Until: sec(6), Demand: 4001, Free: 4000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := match.FineGrained{}.Match(match.Server{ID: "n1", Timeline: tl, Allowance: tc.allow}, sec(tc.start), tc.p)
			assert.Equal(t, tc.want.Code, r.Code, "%v", r)
			assert.Equal(t, tc.want.Stage, r.Stage)
			assert.Equal(t, tc.want.Dim, r.Dim)
			assert.Equal(t, tc.want.DimName, r.DimName)
			assert.Equal(t, tc.want.From, r.From)
			assert.Equal(t, tc.want.Until, r.Until)
			assert.Equal(t, tc.want.Demand, r.Demand)
			assert.Equal(t, tc.want.Free, r.Free)
			assert.Equal(t, tc.want.Allowed, r.Allowed)
			if r.Code == match.NoRoom {
				assert.Positive(t, r.Shortfall())
				assert.ErrorIs(t, r.Err(), match.ErrNoRoom)
				assert.ErrorIs(t, r.Err(), stage.ErrNoRoom)
			} else {
				assert.NoError(t, r.Err())
			}
		})
	}
}

func TestFineGrainedCompression(t *testing.T) {
	tl := busy(t)
	// Stage 0 needs 1200 cpu where 1000 are free: 200 squeezed, within 10% of 4000.
	p := prof(st(1, 1200, 1000, 0), st(1, 2000, 1000, 0))
	r := match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: tenPercent(t)}, 0, prof(st(1, 1200, 1000, 0)))
	require.Equal(t, match.FitCompressed, r.Code, "%v", r)
	assert.True(t, r.Compressed())
	assert.InDelta(t, 200.0/4200, r.Compression[0], 1e-12, "eq. 1: (D − C)/D with D = 3000 + 1200")
	assert.Zero(t, r.Compression[1], "memory is not compressible")
	assert.Equal(t, tup(200, 0, 0), r.Allowance)
	assert.Equal(t, 1, r.Stages())
	assert.InDelta(t, 200.0/4200, r.StageRatio(0), 1e-12)
	assert.Zero(t, r.StageRatio(1), "out of range")
	assert.Contains(t, r.String(), "cpu by 4.76%")

	// The allowance the result carries is exactly what Reserve needs.
	_, err := tl.Reserve(0, prof(st(1, 1200, 1000, 0)), r.Allowance)
	require.NoError(t, err)
	assert.Equal(t, int64(-200), tl.FreeAt(0)[0])

	// From 0 s, stage 0 of p now meets cpu free −200: −200 + 400 < 1200.
	r = match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: tenPercent(t)}, 0, p)
	assert.Equal(t, match.NoRoom, r.Code)
	assert.Equal(t, int64(-200), r.Free)
	assert.Equal(t, int64(1000), r.Shortfall())
	assert.Zero(t, r.Compression, "a failed match reports no compression")
}

// A squeezed segment refuses even a stage that does not demand the squeezed
// dimension: Alg. 2 compares every dimension (eq. 13).
func TestFineGrainedSqueezedDimension(t *testing.T) {
	tl := timeline(t, tup(4000, 8000, 1000))
	reserve(t, tl, 0, prof(st(1, 4400, 0, 0)), tup(400, 0, 0)) // cpu free −400
	onlyMem := prof(st(1, 0, 1000, 0))
	r := match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: tenPercent(t)}, 0, onlyMem)
	assert.Equal(t, match.Fit, r.Code, "−400 + 10%% of 4000 covers a zero demand: %v", r)
	five, err := match.UniformAllowance(schema3, 0.05)
	require.NoError(t, err)
	r = match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: five}, 0, onlyMem)
	assert.Equal(t, match.NoRoom, r.Code)
	assert.Equal(t, "cpu", r.DimName)
	assert.Equal(t, int64(200), r.Shortfall())
	// Timeline.Reserve itself skips undemanded dimensions.
	assert.NoError(t, tl.Check(0, onlyMem, resource.Tuple{}))
}

func TestCoarseAndRequest(t *testing.T) {
	tl := busy(t)
	server := match.Server{ID: "n1", Timeline: tl, Allowance: tenPercent(t)}
	bursty := prof(st(1, 500, 1000, 0), st(1, 3000, 1000, 0)) // small, then a 3000 cpu burst
	// Fine-grained: [1,2) has 1000 cpu free ≥ 500, [2,3) 3000 ≥ 3000.
	assert.Equal(t, match.Fit, match.FineGrained{}.Match(server, sec(1), bursty).Code)
	for _, m := range []match.Matcher{match.CoarseGrained{}, match.RequestQuantity{}} {
		// Coarse: Mx = <3000, 1000>, Ax over [1,3) = <1000, 2000>: Ax < Mx.
		r := m.Match(server, sec(1), bursty)
		assert.Equal(t, match.NoRoom, r.Code)
		assert.Equal(t, 1, r.Stage, "the stage holding the peak")
		assert.Equal(t, "cpu", r.DimName)
		assert.Equal(t, int64(3000), r.Demand)
		assert.Equal(t, int64(1000), r.Free)
		assert.Zero(t, r.Allowed, "coarse matching never compresses")
		assert.Equal(t, sec(1), r.From)
		assert.Equal(t, sec(2), r.Until)
		// Later, the whole window has room.
		r = m.Match(server, sec(4), bursty)
		assert.Equal(t, match.Fit, r.Code)
		assert.Zero(t, r.Compression)
	}
	// A memory peak that does not fit [2,4) but cpu fits: the first short dimension.
	r := match.CoarseGrained{}.Match(server, sec(2), prof(st(1, 100, 3000, 0)))
	assert.Equal(t, "memory", r.DimName)
	assert.Equal(t, sec(2), r.From)
	assert.Equal(t, sec(3), r.Until)
}

func TestRequestQuantityHold(t *testing.T) {
	hold, err := match.RequestQuantity{}.Hold(prof(st(1, 500, 1000, 0), st(2, 3000, 100, 0)))
	require.NoError(t, err)
	assert.Equal(t, 1, hold.Len())
	assert.Equal(t, tup(3000, 1000, 0), hold.Stage(0).Demand)
	assert.Equal(t, sec(3), hold.Duration())
	_, err = match.RequestQuantity{}.Hold(stage.Profile{})
	assert.ErrorIs(t, err, stage.ErrEmptyProfile)

	// A service: a request held forever.
	tl := busy(t)
	svc, err := stage.Constant(schema3, tup(1000, 1000, 0), stage.Forever)
	require.NoError(t, err)
	r := match.RequestQuantity{}.Match(match.Server{Timeline: tl}, 0, svc)
	assert.Equal(t, match.Fit, r.Code)
	svc, _ = stage.Constant(schema3, tup(1001, 1000, 0), stage.Forever)
	r = match.RequestQuantity{}.Match(match.Server{Timeline: tl}, 0, svc)
	assert.Equal(t, match.NoRoom, r.Code)
	assert.Contains(t, r.String(), "over [0s, 2s)")
}

func TestRefuse(t *testing.T) {
	r := match.RefuseAll{}.Match(match.Server{}, 0, stage.Profile{})
	assert.Equal(t, match.Unschedulable, r.Code)
	assert.ErrorIs(t, r.Err(), match.ErrUnschedulable)
	assert.Equal(t, "server accepts no tasks", r.String())
}

func TestMatchErrors(t *testing.T) {
	tl := busy(t)
	tl.Trim(sec(1))
	other, err := stage.NewTimeline(resource.Standard(), resource.Standard().MustTuple(4000))
	require.NoError(t, err)
	good := prof(st(1, 1, 1, 0))
	for _, tc := range []struct {
		name   string
		server match.Server
		start  time.Duration
		p      stage.Profile
		want   error
	}{
		{"nil timeline", match.Server{ID: "n1"}, 0, good, match.ErrNilTimeline},
		{"empty profile", match.Server{Timeline: tl}, sec(1), stage.Profile{}, stage.ErrEmptyProfile},
		{"schema mismatch", match.Server{Timeline: other}, 0, good, resource.ErrSchemaMismatch},
		{"before origin", match.Server{Timeline: tl}, 0, good, stage.ErrBeforeOrigin},
	} {
		for _, m := range []match.Matcher{match.FineGrained{}, match.CoarseGrained{}, match.RequestQuantity{}} {
			t.Run(tc.name, func(t *testing.T) {
				before := tl.AppendSegments(nil, 0, stage.Forever)
				r := m.Match(tc.server, tc.start, tc.p)
				assert.Equal(t, match.Invalid, r.Code)
				assert.ErrorIs(t, r.Err(), tc.want)
				assert.ErrorIs(t, r.Cause, tc.want)
				assert.NotEmpty(t, r.String())
				assert.Equal(t, before, tl.AppendSegments(nil, 0, stage.Forever), "a match never writes")
			})
		}
	}
}

// recorder is a fake Allowance that records its queries and returns ratios.
type recorder struct {
	ratios  resource.Vector
	queries []match.AllowanceQuery
}

func (r *recorder) Allowed(q match.AllowanceQuery) resource.Vector {
	r.queries = append(r.queries, q)
	return r.ratios
}

func TestAllowanceSeam(t *testing.T) {
	tl := busy(t)
	rec := &recorder{ratios: resource.Vector{0.1, 0.5, 0.2}}
	// Stage 0 over [1,2): cpu 1200 vs 1000 free. Stage 1 over [2,3): fits as it is.
	p := prof(st(1, 1200, 10, 0), st(1, 100, 10, 0))
	r := match.FineGrained{}.Match(match.Server{ID: "n7", Timeline: tl, Allowance: rec}, sec(1), p)
	require.Equal(t, match.FitCompressed, r.Code)
	require.Len(t, rec.queries, 1, "asked only where compression is needed")
	q := rec.queries[0]
	assert.Equal(t, "n7", q.Server)
	assert.Equal(t, tup(4000, 8000, 1000), q.Capacity)
	assert.Equal(t, stage.Segment{Start: sec(1), End: sec(2), Free: tup(1000, 6000, 1000)}, q.Segment, "clipped to the stage")
	assert.Equal(t, tup(1200, 10, 0), q.Demand)
	assert.Equal(t, tup(200, 0, 0), r.Allowance, "memory's 0.5 is ignored: not compressible")

	// Garbage ratios are read clamped: NaN and negative as 0, above 1 as 1.
	for _, tc := range []struct {
		ratio float64
		want  match.Code
	}{{math.NaN(), match.NoRoom}, {-1, match.NoRoom}, {math.Inf(1), match.FitCompressed}, {7, match.FitCompressed}} {
		rec := &recorder{ratios: resource.Vector{tc.ratio}}
		r := match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: rec}, sec(1), p)
		assert.Equal(t, tc.want, r.Code, "ratio %v", tc.ratio)
	}
}

func TestFixedErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    resource.Vector
		want error
	}{
		{"negative", resource.Vector{-0.1}, resource.ErrInvalidRatio},
		{"NaN", resource.Vector{math.NaN()}, resource.ErrInvalidRatio},
		{"above one", resource.Vector{1.5}, resource.ErrInvalidRatio},
		{"non-compressible memory", resource.Vector{0.1, 0.1}, resource.ErrNotCompressible},
		{"outside the schema", resource.Vector{0, 0, 0, 0.1}, resource.ErrOutsideSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := match.NewFixed(schema3, tc.v)
			assert.ErrorIs(t, err, tc.want)
			var de *resource.DimensionError
			assert.True(t, errors.As(err, &de), "names the dimension: %v", err)
		})
	}
	_, err := match.NewFixed(nil, resource.Vector{})
	assert.ErrorIs(t, err, resource.ErrSchemaMismatch)
	_, err = match.UniformAllowance(nil, 0.1)
	assert.ErrorIs(t, err, resource.ErrSchemaMismatch)
	_, err = match.UniformAllowance(schema3, 2)
	assert.ErrorIs(t, err, resource.ErrInvalidRatio)
	f, err := match.UniformAllowance(schema3, 0.1)
	require.NoError(t, err)
	assert.Equal(t, resource.Vector{0.1, 0, 0.1}, f.Allowed(match.AllowanceQuery{}))
}

func TestCodeAndResultStrings(t *testing.T) {
	for c, want := range map[match.Code]string{
		match.Fit: "Fit", match.FitCompressed: "FitCompressed", match.NoRoom: "NoRoom",
		match.DeadlineMissed: "DeadlineMissed", match.Unschedulable: "Unschedulable", match.Invalid: "Invalid",
		match.Code(99): "Code(99)",
	} {
		assert.Equal(t, want, c.String())
		assert.Equal(t, c == match.Fit || c == match.FitCompressed, c.OK())
	}
	assert.Equal(t, "fits", match.Result{Code: match.Fit}.String())
	assert.Equal(t, "invalid input", match.Result{Code: match.Invalid}.String())
	assert.Equal(t, "Code(99)", match.Result{Code: 99}.String())
	r := match.Result{Code: match.NoRoom, Stage: 2, DimName: "cpu", Demand: 5, Free: 1, Allowed: 1, Until: stage.Forever}
	assert.Equal(t, "stage 2 needs cpu=5 over [0s, forever) but 1 is free (compression allowance 1, short by 3)", r.String())
	var me *match.Error
	require.ErrorAs(t, r.Err(), &me)
	assert.Equal(t, "match: "+r.String(), me.Error())
	assert.Zero(t, match.Result{Code: match.Fit, Demand: 5}.Shortfall())
	assert.Zero(t, match.Result{Code: match.Fit, Finish: 5}.Late())
	assert.Nil(t, (&match.Error{Result: match.Result{Code: match.Invalid}}).Unwrap())
}
