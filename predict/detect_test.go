package predict_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// ps builds progress samples from (seconds, progress) pairs.
func ps(pairs ...float64) []predict.ProgressSample {
	s := make([]predict.ProgressSample, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		s = append(s, predict.ProgressSample{At: time.Duration(pairs[i] * float64(time.Second)), Progress: pairs[i+1]})
	}
	return s
}

func TestDetectStragglerKnownAnswers(t *testing.T) {
	tests := []struct {
		name       string
		samples    []predict.ProgressSample
		start, slo time.Duration
		straggler  bool
		v1, v2     float64
		finish     time.Duration
	}{
		// S2: v2 = 0.02 > v1 = 0.01, whatever the SLO.
		{"speeding up", ps(10, .1, 20, .2, 30, .3, 40, .5), 0, sec, false, .01, .02, 65 * sec},
		// v1 = v2 = 0.01, T = 0.6/0.01 + 40 = 100 s.
		{"steady, predicted within the SLO", ps(10, .1, 20, .2, 30, .3, 40, .4), 0, 120 * sec, false, .01, .01, 100 * sec},
		{"steady, predicted past the SLO", ps(10, .1, 20, .2, 30, .3, 40, .4), 0, 90 * sec, true, .01, .01, 100 * sec},
		{"predicted exactly at the SLO", ps(10, .1, 20, .2, 30, .3, 40, .4), 0, 100 * sec, true, .01, .01, 100 * sec},
		// v1 = 0.02, v2 = 0.005: T = 0.55/0.005 + 40 = 150 s.
		{"slowing down", ps(10, .1, 20, .3, 30, .4, 40, .45), 0, 120 * sec, true, .02, .005, 150 * sec},
		{"slowing down, generous SLO", ps(10, .1, 20, .3, 30, .4, 40, .45), 0, 200 * sec, false, .02, .005, 150 * sec},
		{"stalled", ps(10, .1, 20, .3, 30, .4, 40, .4), 0, time.Hour, true, .02, 0, stage.Forever},
		{"finished", ps(10, .1, 20, .5, 30, 1, 40, 1), 0, 50 * sec, false, .04, 0, 40 * sec},
		// The run time counts from the start: T = 1100 s, run time 100 s.
		{"started later", ps(1010, .1, 1020, .2, 1030, .3, 1040, .4), 1000 * sec, 120 * sec, false, .01, .01, 1100 * sec},
		// Only the last four samples count: the early burst is ignored.
		{"older samples ignored", ps(0, 0, 5, .09, 10, .1, 20, .2, 30, .3, 40, .4), 0, 90 * sec, true, .01, .01, 100 * sec},
		{"progress falls", ps(10, .1, 20, .2, 30, .3, 40, .25), 0, time.Hour, true, .01, -.005, stage.Forever},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := predict.DetectStraggler(tt.samples, tt.start, tt.slo)
			require.NoError(t, err)
			assert.Equal(t, tt.straggler, v.Straggler)
			assert.InDelta(t, tt.v1, v.V1, 1e-12)
			assert.InDelta(t, tt.v2, v.V2, 1e-12)
			assert.InDelta(t, float64(tt.finish), float64(v.Finish), 1e3, "finish %v", v.Finish)
		})
	}
}

func TestDetectStragglerErrors(t *testing.T) {
	good := ps(10, .1, 20, .2, 30, .3, 40, .4)
	tests := []struct {
		name    string
		samples []predict.ProgressSample
		start   time.Duration
		slo     time.Duration
		want    error
	}{
		{"three samples", good[:3], 0, sec, predict.ErrNoSamples},
		{"zero SLO", good, 0, 0, predict.ErrBadDuration},
		{"progress above 1", ps(10, .1, 20, .2, 30, 1.3, 40, .4), 0, sec, predict.ErrBadProgress},
		{"progress NaN", ps(10, math.NaN(), 20, .2, 30, .3, 40, .4), 0, sec, predict.ErrBadProgress},
		{"unsorted", ps(10, .1, 30, .2, 20, .3, 40, .4), 0, sec, predict.ErrUnsorted},
		{"duplicate time", ps(10, .1, 20, .2, 20, .3, 40, .4), 0, sec, predict.ErrUnsorted},
		{"sample before the start", good, 15 * sec, sec, predict.ErrBadTime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := predict.DetectStraggler(tt.samples, tt.start, tt.slo)
			require.ErrorIs(t, err, tt.want)
			assert.NotEmpty(t, err.Error())
		})
	}
}

func TestDetectRedundantKnownAnswers(t *testing.T) {
	alloc := std.MustTuple(4000, 8<<30)
	usage := []resource.Tuple{std.MustTuple(500, 2<<30), std.MustTuple(1000, 6<<30), std.MustTuple(800, 5<<30)}
	r, err := predict.DetectRedundant(std, usage, alloc, resource.Uniform(std.All(), 0.8))
	require.NoError(t, err)
	assert.Equal(t, std.MustTuple(1000, 6<<30), r.Peak)
	assert.InDelta(t, 0.25, r.Utilisation[0], 1e-15, "T1: 1000/4000")
	assert.InDelta(t, 0.75, r.Utilisation[1], 1e-15, "T1: 6 GiB/8 GiB")
	assert.True(t, r.IsRedundant())
	assert.Equal(t, resource.Mask(0b11), r.Redundant, "T2: both below 0.8")
	// Keep ⌈peak/0.8⌉: 1250 millicores and 7.5 GiB.
	assert.Equal(t, std.MustTuple(2750, 512<<20), r.Reclaimable)

	usage = append(usage, std.MustTuple(0, 7<<30))
	r, err = predict.DetectRedundant(std, usage, alloc, resource.Uniform(std.All(), 0.8))
	require.NoError(t, err)
	assert.Equal(t, resource.Mask(0b01), r.Redundant, "7/8 ≥ 0.8: memory is not redundant")
	assert.Equal(t, std.MustTuple(2750), r.Reclaimable)

	r, err = predict.DetectRedundant(std, usage, alloc, resource.Vector{0.8})
	require.NoError(t, err)
	assert.Equal(t, resource.Mask(0b01), r.Redundant, "an expected utilisation of 0 disables a dimension")

	r, err = predict.DetectRedundant(std, usage, std.MustTuple(0, 64<<30), resource.Uniform(std.All(), 0.8))
	require.NoError(t, err)
	assert.Equal(t, resource.Mask(0b10), r.Redundant, "nothing allocated: not redundant")
	assert.Zero(t, r.Utilisation[0])
}

func TestDetectRedundantErrors(t *testing.T) {
	u := []resource.Tuple{std.MustTuple(1)}
	exp := resource.Uniform(std.All(), 0.5)
	tests := []struct {
		name   string
		schema *resource.Schema
		usage  []resource.Tuple
		alloc  resource.Tuple
		exp    resource.Vector
		want   error
	}{
		{"nil schema", nil, u, std.MustTuple(1), exp, resource.ErrSchemaMismatch},
		{"no samples", std, nil, std.MustTuple(1), exp, predict.ErrNoSamples},
		{"negative usage", std, []resource.Tuple{{-1}}, std.MustTuple(1), exp, resource.ErrNegative},
		{"negative allocation", std, u, resource.Tuple{-1}, exp, resource.ErrNegative},
		{"usage outside the schema", std, []resource.Tuple{{7: 1}}, std.MustTuple(1), exp, resource.ErrOutsideSchema},
		{"expected above 1", std, u, std.MustTuple(1), resource.Vector{1.2}, resource.ErrInvalidRatio},
		{"expected NaN", std, u, std.MustTuple(1), resource.Vector{math.NaN()}, resource.ErrInvalidRatio},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := predict.DetectRedundant(tt.schema, tt.usage, tt.alloc, tt.exp)
			require.ErrorIs(t, err, tt.want)
		})
	}
}

// TestRedundancyTest: NewRedundancyTest refuses what DetectRedundant refuses of the
// schema and the expected utilisation; Detect refuses what it refuses of the samples
// and the allocation, and answers as it does; Reclaimable refuses a peak and an
// allocation as Detect does, and answers with its Reclaimable over the samples' peak.
func TestRedundancyTest(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema *resource.Schema
		exp    resource.Vector
		want   error
	}{
		{"nil schema", nil, resource.Uniform(std.All(), 0.5), resource.ErrSchemaMismatch},
		{"expected above 1", std, resource.Vector{1.2}, resource.ErrInvalidRatio},
		{"expected NaN", std, resource.Vector{math.NaN()}, resource.ErrInvalidRatio},
		{"expected outside the schema", std, resource.Vector{7: 0.5}, resource.ErrOutsideSchema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := predict.NewRedundancyTest(tt.schema, tt.exp)
			require.ErrorIs(t, err, tt.want)
		})
	}
	test, err := predict.NewRedundancyTest(std, resource.Uniform(std.All(), 0.5))
	require.NoError(t, err)
	for _, tt := range []struct {
		name  string
		usage []resource.Tuple
		alloc resource.Tuple
		want  error
	}{
		{"no samples", nil, std.MustTuple(1), predict.ErrNoSamples},
		{"negative usage", []resource.Tuple{{-1}}, std.MustTuple(1), resource.ErrNegative},
		{"negative allocation", []resource.Tuple{std.MustTuple(1)}, resource.Tuple{-1}, resource.ErrNegative},
		{"usage outside the schema", []resource.Tuple{{7: 1}}, std.MustTuple(1), resource.ErrOutsideSchema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := test.Detect(tt.usage, tt.alloc)
			require.ErrorIs(t, err, tt.want)
			if len(tt.usage) > 0 {
				_, err = test.Reclaimable(tt.usage[0], tt.alloc)
				require.ErrorIs(t, err, tt.want, "Reclaimable")
			}
		})
	}
	props := gopter.NewProperties(params())
	props.Property("Detect answers as DetectRedundant", prop.ForAll(func(seed int64, u float64) string {
		r := rng(seed)
		exp := resource.Uniform(std.All(), u)
		test, err := predict.NewRedundancyTest(std, exp)
		if err != nil {
			return err.Error()
		}
		alloc := std.MustTuple(r.Int64N(1<<40), r.Int64N(1<<40), r.Int64N(1<<20))
		usage := make([]resource.Tuple, 1+r.IntN(4))
		for i := range usage {
			usage[i] = std.MustTuple(r.Int64N(alloc[0]+1), r.Int64N(alloc[1]+1), r.Int64N(alloc[2]+1))
		}
		if r.IntN(8) == 0 {
			usage[0][0] = -1
		}
		got, err1 := test.Detect(usage, alloc)
		want, err2 := predict.DetectRedundant(std, usage, alloc, exp)
		if got != want || fmt.Sprint(err1) != fmt.Sprint(err2) {
			return fmt.Sprintf("Detect %+v (%v), DetectRedundant %+v (%v)", got, err1, want, err2)
		}
		if err2 == nil {
			if rr, err := test.Reclaimable(want.Peak, alloc); err != nil || rr != want.Reclaimable {
				return fmt.Sprintf("Reclaimable of the peak %v (%v), DetectRedundant's %v", rr, err, want.Reclaimable)
			}
		}
		return ""
	}, gen.Int64(), gen.Float64Range(0, 1)))
	props.TestingRun(t)
}

func TestDetectorProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	samples := func(seed int64) []predict.ProgressSample {
		r := rng(seed)
		s := make([]predict.ProgressSample, 4+r.IntN(4))
		at, p := time.Duration(r.Int64N(int64(time.Hour))), r.Float64()*0.5
		for i := range s {
			at += time.Duration(1 + r.Int64N(int64(time.Minute)))
			p = min(p+r.Float64()*0.1, 1)
			s[i] = predict.ProgressSample{At: at, Progress: p}
		}
		return s
	}
	props.Property("a task that speeds up is never a straggler", prop.ForAll(func(seed int64, slo int64) bool {
		s := samples(seed)
		v, err := predict.DetectStraggler(s, 0, time.Duration(slo))
		return err == nil && (v.V2 <= v.V1*(1+1e-6) || !v.Straggler)
	}, gen.Int64(), gen.Int64Range(1, int64(3*time.Hour))))
	props.Property("a straggler stays one under a tighter SLO", prop.ForAll(func(seed int64, a, b int64) bool {
		s := samples(seed)
		loose, tight := time.Duration(max(a, b)), time.Duration(min(a, b))
		vl, err1 := predict.DetectStraggler(s, 0, loose)
		vt, err2 := predict.DetectStraggler(s, 0, tight)
		return err1 == nil && err2 == nil && (!vl.Straggler || vt.Straggler)
	}, gen.Int64(), gen.Int64Range(1, int64(3*time.Hour)), gen.Int64Range(1, int64(3*time.Hour))))
	props.Property("the predicted finish is not before the last sample", prop.ForAll(func(seed int64) bool {
		s := samples(seed)
		v, err := predict.DetectStraggler(s, 0, time.Hour)
		return err == nil && v.Finish >= s[len(s)-1].At
	}, gen.Int64()))
	props.Property("reclaiming keeps the peak and the expected utilisation", prop.ForAll(func(seed int64, u float64) bool {
		r := rng(seed)
		alloc := std.MustTuple(r.Int64N(1<<40), r.Int64N(1<<40), r.Int64N(1<<20))
		usage := make([]resource.Tuple, 1+r.IntN(10))
		for i := range usage {
			usage[i] = std.MustTuple(r.Int64N(alloc[0]+1), r.Int64N(alloc[1]+1), r.Int64N(alloc[2]+1))
		}
		res, err := predict.DetectRedundant(std, usage, alloc, resource.Uniform(std.All(), u))
		if err != nil {
			return false
		}
		left := alloc.Sub(res.Reclaimable)
		for d := 0; d < std.Len(); d++ {
			redundant := alloc[d] > 0 && float64(res.Peak[d]) < u*float64(alloc[d])
			if res.Redundant.Has(d) != redundant || res.Reclaimable[d] < 0 || left[d] < res.Peak[d] {
				return false
			}
			if !redundant && res.Reclaimable[d] != 0 {
				return false
			}
			// After reclaiming, the peak uses at most the expected share (up to rounding).
			if redundant && left[d] > 0 && float64(res.Peak[d])/float64(left[d]) > u*(1+1e-9) {
				return false
			}
		}
		return true
	}, gen.Int64(), gen.Float64Range(0.01, 1)))
	props.TestingRun(t)
}
