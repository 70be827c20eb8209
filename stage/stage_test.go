package stage_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var schema = resource.MustSchema(resource.CPU, resource.Memory)

func tup(cpu, mem int64) resource.Tuple { return resource.Tuple{cpu, mem} }

func TestProfile(t *testing.T) {
	p, err := stage.NewProfile(schema,
		stage.Stage{Duration: 2 * time.Second, Demand: tup(1000, 2000)},
		stage.Stage{Duration: 3 * time.Second, Demand: tup(3000, 1000)},
		stage.Stage{Duration: time.Second, Demand: tup(500, 4000)},
	)
	require.NoError(t, err)
	assert.Equal(t, 3, p.Len())
	assert.Equal(t, 6*time.Second, p.Duration())
	assert.Equal(t, tup(3000, 4000), p.Peak())
	assert.Equal(t, 2*time.Second, p.Offset(1))
	assert.Equal(t, 6*time.Second, p.Offset(3))
	for _, tc := range []struct {
		at    time.Duration
		stage int
		want  resource.Tuple
	}{
		{-1, -1, tup(0, 0)}, {0, 0, tup(1000, 2000)}, {2*time.Second - 1, 0, tup(1000, 2000)},
		{2 * time.Second, 1, tup(3000, 1000)}, {5 * time.Second, 2, tup(500, 4000)}, {6 * time.Second, -1, tup(0, 0)},
	} {
		assert.Equal(t, tc.stage, p.StageAt(tc.at), "%v", tc.at)
		assert.Equal(t, tc.want, p.At(tc.at), "%v", tc.at)
	}
	for i, want := range []resource.Tuple{tup(1000, 2000), tup(3000, 1000), tup(500, 4000)} {
		assert.Equal(t, want, p.Demand(i), "stage %d", i)
	}
	d := p.Demand(0)
	d[0] = 7 // a copy: the profile is immutable
	assert.Equal(t, tup(1000, 2000), p.Stage(0).Demand)
	stages := p.Stages()
	stages[0].Duration = time.Hour // a copy: the profile is immutable
	assert.Equal(t, 2*time.Second, p.Stage(0).Duration)
	assert.Equal(t, schema, p.Schema())
	assert.Equal(t, "[2s {cpu=1,memory=2k}, 3s {cpu=3,memory=1k}, 1s {cpu=500m,memory=4k}]", p.String())

	open, err := stage.Constant(schema, tup(100, 100), stage.Forever)
	require.NoError(t, err)
	assert.Equal(t, stage.Forever, open.Duration())
	long := stage.MustProfile(schema, stage.Stage{Duration: stage.Forever - 1, Demand: tup(1, 1)}, stage.Stage{Duration: time.Hour, Demand: tup(1, 1)})
	assert.Equal(t, stage.Forever, long.Duration(), "sums saturate")
}

// The zero Profile is the empty profile: every method but an out-of-range Stage or
// Offset answers without panicking. Offset(Len()) once panicked on it although the doc
// says it is the total duration.
func TestZeroProfile(t *testing.T) {
	var p stage.Profile
	for name, tc := range map[string]struct {
		got, want any
	}{
		"Len":                       {p.Len(), 0},
		"Offset(Len())":             {p.Offset(p.Len()), time.Duration(0)},
		"Duration":                  {p.Duration(), time.Duration(0)},
		"Offset(Len()) is Duration": {p.Offset(p.Len()), p.Duration()},
		"Stages":                    {len(p.Stages()), 0},
		"Peak":                      {p.Peak(), resource.Tuple{}},
		"At(0)":                     {p.At(0), resource.Tuple{}},
		"At(-1)":                    {p.At(-1), resource.Tuple{}},
		"StageAt(0)":                {p.StageAt(0), -1},
		"String":                    {p.String(), "[]"},
		"Schema":                    {p.Schema(), (*resource.Schema)(nil)},
	} {
		t.Run(name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
	_, err := p.Stretch(2)
	assert.ErrorIs(t, err, stage.ErrEmptyProfile)
	assert.Panics(t, func() { p.Stage(0) }, "no stage 0")
	assert.Panics(t, func() { p.Offset(1) }, "no offset past Len()")
}

// The zero Profile handed to a timeline is refused or finds nothing, without a panic
// and without changing the timeline: a Profile points to its stages, and the zero one
// to none.
func TestZeroProfileOnTimeline(t *testing.T) {
	tl, err := stage.NewTimeline(schema, tup(10, 10))
	require.NoError(t, err)
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(4, 4)}), resource.Tuple{})
	require.NoError(t, err)
	before := slices.Collect(tl.Segments(0, stage.Forever))
	var zero stage.Profile
	_, err = tl.Reserve(0, zero, resource.Tuple{})
	assert.Error(t, err, "Reserve")
	assert.Error(t, tl.Check(0, zero, resource.Tuple{}), "Check")
	_, err = tl.EarliestFit(0, zero, resource.Tuple{})
	assert.Error(t, err, "EarliestFit")
	calls := 0
	tl.WalkShort(0, zero, resource.Tuple{}, func(int, stage.Segment) bool { calls++; return true })
	tl.MinFreeStages(0, zero, func(int, resource.Tuple) bool { calls++; return true })
	assert.Zero(t, calls, "no stage to report")
	assert.Equal(t, before, slices.Collect(tl.Segments(0, stage.Forever)), "the timeline is unchanged")
	assert.True(t, zero.Same(stage.Profile{}), "two zero Profiles are one")
	assert.Panics(t, func() { zero.Demand(0) }, "no stage 0")
}

// Same tells copies of one profile from equal profiles built apart.
func TestProfileSame(t *testing.T) {
	st := []stage.Stage{{Duration: time.Second, Demand: tup(1000, 2000)}, {Duration: time.Second, Demand: tup(10, 20)}}
	p := stage.MustProfile(schema, st...)
	q := p
	other := stage.MustProfile(resource.MustSchema(resource.CPU, resource.Memory), st...)
	for name, tc := range map[string]struct {
		a, b stage.Profile
		same bool
	}{
		"a copy":             {p, q, true},
		"itself":             {p, p, true},
		"equal, built apart": {p, stage.MustProfile(schema, st...), false},
		"another schema":     {p, other, false},
		"a longer profile":   {p, stage.MustProfile(schema, append(st, st[0])...), false},
		"the zero profile":   {p, stage.Profile{}, false},
		"two zero profiles":  {stage.Profile{}, stage.Profile{}, true},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.same, tc.a.Same(tc.b))
			assert.Equal(t, tc.same, tc.b.Same(tc.a))
		})
	}
}

func TestProfileErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema *resource.Schema
		stages []stage.Stage
		want   error
		text   string
	}{
		{"nil schema", nil, []stage.Stage{{Duration: 1}}, resource.ErrSchemaMismatch, "nil schema"},
		{"no stages", schema, nil, stage.ErrEmptyProfile, "no stages"},
		{"zero duration", schema, []stage.Stage{{Duration: 1}, {Duration: 0}}, stage.ErrBadDuration, "stage 1"},
		{"negative duration", schema, []stage.Stage{{Duration: -time.Second}}, stage.ErrBadDuration, "stage 0"},
		{"negative demand", schema, []stage.Stage{{Duration: 1, Demand: tup(1, -5)}}, resource.ErrNegative, "memory"},
		{"outside schema", schema, []stage.Stage{{Duration: 1, Demand: resource.Tuple{1, 1, 1}}}, resource.ErrOutsideSchema, "#2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := stage.NewProfile(tc.schema, tc.stages...)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.text)
			assert.Equal(t, 0, p.Len())
		})
	}
	assert.Panics(t, func() { stage.MustProfile(schema) })
}

func TestTimeAverage(t *testing.T) {
	var a stage.TimeAverage
	assert.Equal(t, resource.Vector{}, a.Mean())
	a.Add(tup(100, 10), 3*time.Second)
	a.Add(tup(200, 40), time.Second)
	a.Add(tup(999, 999), 0) // ignored
	a.Add(tup(999, 999), -time.Second)
	assert.Equal(t, 4*time.Second, a.Duration())
	// eq. 14: (100×3 + 200×1)/4 = 125; (10×3 + 40×1)/4 = 17.5
	assert.Equal(t, resource.Vector{125, 17.5}, a.Mean())
}

func newTimeline(t *testing.T, capacity resource.Tuple) *stage.Timeline {
	tl, err := stage.NewTimeline(schema, capacity)
	require.NoError(t, err)
	return tl
}

func segs(tl *stage.Timeline, from, to time.Duration) []stage.Segment {
	return tl.AppendSegments(nil, from, to)
}

func TestTimelineReserveRelease(t *testing.T) {
	tl := newTimeline(t, tup(4000, 8000))
	p := stage.MustProfile(schema,
		stage.Stage{Duration: 2 * time.Second, Demand: tup(1000, 2000)},
		stage.Stage{Duration: 3 * time.Second, Demand: tup(3000, 1000)})
	h, err := tl.Reserve(time.Second, p, resource.Tuple{})
	require.NoError(t, err)
	assert.Equal(t, []stage.Segment{
		{Start: 0, End: time.Second, Free: tup(4000, 8000)},
		{Start: time.Second, End: 3 * time.Second, Free: tup(3000, 6000)},
		{Start: 3 * time.Second, End: 6 * time.Second, Free: tup(1000, 7000)},
		{Start: 6 * time.Second, End: 10 * time.Second, Free: tup(4000, 8000)},
	}, segs(tl, 0, 10*time.Second))
	assert.Equal(t, 4, tl.Len())
	assert.Equal(t, 1, tl.Reservations())
	start, got, ok := tl.Lookup(h)
	assert.True(t, ok)
	assert.Equal(t, time.Second, start)
	assert.Equal(t, p.Stages(), got.Stages())

	// Clipped windows.
	assert.Empty(t, segs(tl, 4*time.Second, 4*time.Second))
	assert.Equal(t, []stage.Segment{
		{Start: 2 * time.Second, End: 3 * time.Second, Free: tup(3000, 6000)},
		{Start: 3 * time.Second, End: 4 * time.Second, Free: tup(1000, 7000)},
	}, segs(tl, 2*time.Second, 4*time.Second))
	assert.Equal(t, tup(1000, 6000), tl.MinFree(0, 10*time.Second))
	assert.Equal(t, tup(3000, 6000), tl.MinFree(2*time.Second, 2*time.Second), "empty window reads the instant")
	assert.Equal(t, tup(1000, 7000), tl.FreeAt(5*time.Second))
	// eq. 14 over [0, 10s): (4000×1 + 3000×2 + 1000×3 + 4000×4)/10 = 2900.
	assert.Equal(t, resource.Vector{2900, 7300}, tl.Average(0, 10*time.Second))
	assert.Equal(t, resource.Vector{1000, 7000}, tl.Average(4*time.Second, 4*time.Second))

	require.NoError(t, tl.Release(h))
	assert.Equal(t, 1, tl.Len(), "release merges the steps back")
	assert.Equal(t, 0, tl.Reservations())
	err = tl.Release(h)
	assert.ErrorIs(t, err, stage.ErrUnknownReservation)
	assert.ErrorIs(t, tl.Release(12345), stage.ErrUnknownReservation)
}

func TestTimelineCompression(t *testing.T) {
	tl := newTimeline(t, tup(4000, 8000))
	big := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(4300, 1000)})

	// Without an allowance the CPU over-commit is refused, and nothing changes.
	_, err := tl.Reserve(0, big, resource.Tuple{})
	var fe *stage.FitError
	require.ErrorAs(t, err, &fe)
	assert.ErrorIs(t, err, stage.ErrNoRoom)
	assert.EqualExportedValues(t, stage.FitError{Stage: 0, Dim: 0, DimName: "cpu", From: 0, Until: stage.Forever, Demand: 4300, Free: 4000}, *fe)
	assert.Equal(t, int64(300), fe.Shortfall())
	assert.Contains(t, err.Error(), "needs cpu=4300m over [0s, forever) but 4 is free (compression allowance 0)")
	assert.Equal(t, 1, tl.Len())

	// With 10% of capacity allowed on CPU it fits, and free CPU goes below zero.
	allow := tl.Capacity().Only(schema.Compressible()).Scale(0.1)
	h, err := tl.Reserve(0, big, allow)
	require.NoError(t, err)
	assert.Equal(t, tup(-300, 7000), tl.FreeAt(0))
	// Another CPU demand no longer fits in the allowance; memory-only demand does.
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(200, 0)}), allow)
	assert.ErrorIs(t, err, stage.ErrNoRoom)
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(0, 7000)}), allow)
	assert.NoError(t, err)
	// Memory is never compressed.
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(0, 1)}), allow)
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "memory", fe.DimName)
	require.NoError(t, tl.Release(h))
}

func TestTimelineErrors(t *testing.T) {
	_, err := stage.NewTimeline(schema, tup(-1, 0))
	assert.ErrorIs(t, err, resource.ErrNegative)
	_, err = stage.NewTimeline(nil, tup(1, 0))
	assert.ErrorIs(t, err, resource.ErrSchemaMismatch)

	tl := newTimeline(t, tup(4000, 8000))
	p := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)})
	other := stage.MustProfile(resource.Standard(), stage.Stage{Duration: time.Second, Demand: tup(1, 1)})
	tests := []struct {
		name  string
		start time.Duration
		p     stage.Profile
		allow resource.Tuple
		want  error
	}{
		{"zero profile", 0, stage.Profile{}, resource.Tuple{}, stage.ErrEmptyProfile},
		{"schema mismatch", 0, other, resource.Tuple{}, resource.ErrSchemaMismatch},
		{"before origin", -time.Second, p, resource.Tuple{}, stage.ErrBeforeOrigin},
		{"allowance on memory", 0, p, tup(0, 10), resource.ErrNotCompressible},
		{"negative allowance", 0, p, tup(-10, 0), resource.ErrNegative},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := segs(tl, 0, stage.Forever)
			_, err := tl.Reserve(tc.start, tc.p, tc.allow)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorIs(t, tl.Check(tc.start, tc.p, tc.allow), tc.want)
			if tc.start >= 0 {
				_, err = tl.EarliestFit(tc.start, tc.p, tc.allow)
				assert.ErrorIs(t, err, tc.want)
			}
			assert.Equal(t, before, segs(tl, 0, stage.Forever), "a refused call changes nothing")
			assert.Equal(t, 0, tl.Reservations())
		})
	}
}

func TestEarliestFit(t *testing.T) {
	tl := newTimeline(t, tup(4000, 8000))
	p := stage.MustProfile(schema,
		stage.Stage{Duration: 2 * time.Second, Demand: tup(1000, 2000)},
		stage.Stage{Duration: 3 * time.Second, Demand: tup(3000, 1000)})
	_, err := tl.Reserve(time.Second, p, resource.Tuple{})
	require.NoError(t, err)

	// At 0 the second stage [2s, 5s) meets the 1000-CPU segment [3s, 6s); the first
	// start that moves it past is 6s − 2s = 4s.
	start, err := tl.EarliestFit(0, p, resource.Tuple{})
	require.NoError(t, err)
	assert.Equal(t, 4*time.Second, start)
	assert.NoError(t, tl.Check(start, p, resource.Tuple{}))
	assert.ErrorIs(t, tl.Check(start-1, p, resource.Tuple{}), stage.ErrNoRoom)

	// A small task fits right away.
	small := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(500, 500)})
	start, err = tl.EarliestFit(0, small, resource.Tuple{})
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), start)

	// A demand above capacity never fits.
	_, err = tl.EarliestFit(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(0, 9000)}), resource.Tuple{})
	var fe *stage.FitError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, stage.Forever, fe.Until)
	assert.Contains(t, err.Error(), "forever")
}

func TestTrim(t *testing.T) {
	tl := newTimeline(t, tup(4000, 8000))
	a, err := tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: tup(1000, 1000)}), resource.Tuple{})
	require.NoError(t, err)
	b, err := tl.Reserve(3*time.Second, stage.MustProfile(schema, stage.Stage{Duration: 4 * time.Second, Demand: tup(2000, 2000)}), resource.Tuple{})
	require.NoError(t, err)
	require.Equal(t, 4, tl.Len())

	tl.Trim(5 * time.Second)
	assert.Equal(t, 5*time.Second, tl.Origin())
	assert.Equal(t, []stage.Segment{
		{Start: 5 * time.Second, End: 7 * time.Second, Free: tup(2000, 6000)},
		{Start: 7 * time.Second, End: 8 * time.Second, Free: tup(4000, 8000)},
	}, segs(tl, 0, 8*time.Second), "windows are clipped to the origin")
	assert.Equal(t, tup(2000, 6000), tl.FreeAt(0))
	tl.Trim(time.Second) // backwards: nothing
	assert.Equal(t, 5*time.Second, tl.Origin())

	_, err = tl.Reserve(4*time.Second, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)}), resource.Tuple{})
	assert.ErrorIs(t, err, stage.ErrBeforeOrigin)
	require.NoError(t, tl.Release(a))
	require.NoError(t, tl.Release(b))
	assert.Equal(t, 1, tl.Len())
	assert.Equal(t, tup(4000, 8000), tl.FreeAt(6*time.Second))
	start, err := tl.EarliestFit(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)}), resource.Tuple{})
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, start, "earliest fit starts at the origin")
}

func TestWalkStops(t *testing.T) {
	tl := newTimeline(t, tup(4000, 8000))
	for i := 0; i < 5; i++ {
		_, err := tl.Reserve(time.Duration(2*i)*time.Second, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)}), resource.Tuple{})
		require.NoError(t, err)
	}
	n := 0
	for range tl.Segments(0, stage.Forever) {
		n++
		if n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
	n = 0
	tl.Walk(0, stage.Forever, func(stage.Segment) bool { n++; return true })
	assert.Equal(t, tl.Len(), n)
	assert.True(t, errors.Is(&stage.FitError{}, stage.ErrNoRoom))
}

func TestStretch(t *testing.T) {
	p := stage.MustProfile(schema,
		stage.Stage{Duration: 2 * time.Second, Demand: tup(1000, 2000)},
		stage.Stage{Duration: 3 * time.Second, Demand: tup(3000, 1000)})
	q, err := p.Stretch(1.25)
	require.NoError(t, err)
	assert.Equal(t, []stage.Stage{
		{Duration: 2500 * time.Millisecond, Demand: tup(1000, 2000)},
		{Duration: 3750 * time.Millisecond, Demand: tup(3000, 1000)},
	}, q.Stages())
	assert.Equal(t, p.Peak(), q.Peak())
	tiny, err := p.Stretch(1e-12)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(2), tiny.Duration(), "a stage never shrinks below 1 ns")
	huge, err := p.Stretch(1e300)
	require.NoError(t, err)
	assert.Equal(t, stage.Forever, huge.Duration())
	for _, f := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := p.Stretch(f)
		assert.ErrorIs(t, err, stage.ErrBadDuration, "%v", f)
	}
	_, err = stage.Profile{}.Stretch(2)
	assert.ErrorIs(t, err, stage.ErrEmptyProfile)
}

func TestTimeHelpers(t *testing.T) {
	assert.Equal(t, 3*time.Second, stage.AddSat(time.Second, 2*time.Second))
	assert.Equal(t, stage.Forever, stage.AddSat(stage.Forever-1, 2))
	assert.Equal(t, stage.Forever, stage.AddSat(time.Hour, stage.Forever))
	for _, tc := range []struct {
		s    float64
		want time.Duration
	}{{1.5, 1500 * time.Millisecond}, {0, 0}, {-1, 0}, {math.NaN(), 0}, {math.Inf(1), stage.Forever}, {1e12, stage.Forever}, {1e-10, 0}} {
		assert.Equal(t, tc.want, stage.Seconds(tc.s), "%v", tc.s)
	}
}

func TestSuspendResumeRelease(t *testing.T) {
	tl, err := stage.NewTimeline(schema, tup(10, 10))
	require.NoError(t, err)
	p := stage.MustProfile(schema, stage.Stage{Duration: 4 * time.Second, Demand: tup(6, 6)})
	h, err := tl.Reserve(0, p, resource.Tuple{})
	require.NoError(t, err)

	require.ErrorIs(t, tl.Resume(h), stage.ErrUnknownReservation, "not suspended")
	require.NoError(t, tl.Suspend(h))
	assert.Equal(t, tup(10, 10), tl.FreeAt(time.Second), "a suspended reservation holds nothing")
	assert.Equal(t, 1, tl.Reservations())
	assert.NoError(t, tl.Check(0, p, resource.Tuple{}), "the what-if question sees the room")
	require.NoError(t, tl.Resume(h))
	assert.Equal(t, tup(4, 4), tl.FreeAt(time.Second))

	require.NoError(t, tl.Suspend(h))
	require.NoError(t, tl.Release(h), "releasing a suspended reservation gives nothing back twice")
	assert.Equal(t, tup(10, 10), tl.FreeAt(time.Second))
	assert.Equal(t, 0, tl.Reservations())
	assert.ErrorIs(t, tl.Suspend(h), stage.ErrUnknownReservation)
	assert.ErrorIs(t, tl.Suspend(99), stage.ErrUnknownReservation)
}
