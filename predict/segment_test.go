package predict_test

import (
	"errors"
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

// series returns cpu-only samples one second apart.
func series(cpu ...int64) []predict.Sample {
	s := make([]predict.Sample, len(cpu))
	for i, c := range cpu {
		s[i] = predict.Sample{At: time.Duration(i) * time.Second, Usage: resource.Tuple{c}}
	}
	return s
}

// cpuStages returns a profile's stages as (seconds, cpu) pairs.
func cpuStages(p stage.Profile) [][2]float64 {
	out := make([][2]float64, p.Len())
	for i := range out {
		st := p.Stage(i)
		out[i] = [2]float64{st.Duration.Seconds(), float64(st.Demand[0])}
	}
	return out
}

func TestSegmentKnownAnswers(t *testing.T) {
	tests := []struct {
		name    string
		samples []predict.Sample
		opts    []predict.SegmentOption
		want    [][2]float64
	}{
		{"a step", series(100, 100, 100, 900, 900, 900), nil, [][2]float64{{3, 100}, {3, 900}}},
		{"noise within the threshold merges at the peak", series(100, 120, 100, 900, 880, 900), nil, [][2]float64{{3, 120}, {3, 900}}},
		{"a constant series is one stage", series(5, 5, 5, 5), nil, [][2]float64{{4, 5}}},
		{"an all-zero series is one stage", series(0, 0, 0), nil, [][2]float64{{3, 0}}},
		{
			"irregular intervals",
			[]predict.Sample{{At: 100 * time.Second, Usage: resource.Tuple{500}}, {At: 110 * time.Second, Usage: resource.Tuple{500}}, {At: 115 * time.Second}, {At: 145 * time.Second}},
			[]predict.SegmentOption{predict.WithLastDuration(5 * time.Second)},
			[][2]float64{{15, 500}, {35, 0}},
		},
		{
			"one sample with a last duration",
			[]predict.Sample{{At: -time.Hour, Usage: resource.Tuple{7}}},
			[]predict.SegmentOption{predict.WithLastDuration(time.Minute)},
			[][2]float64{{60, 7}},
		},
		{
			"a short spike merges into the earlier of two equally close neighbours",
			series(100, 100, 100, 100, 100, 900, 100, 100, 100, 100),
			[]predict.SegmentOption{predict.WithMinStage(2 * time.Second)},
			[][2]float64{{6, 900}, {4, 100}},
		},
		{
			"without a minimum the spike stays",
			series(100, 100, 100, 100, 100, 900, 100, 100, 100, 100),
			nil,
			[][2]float64{{5, 100}, {1, 900}, {4, 100}},
		},
		{
			"the cap merges the pair that adds the least reserved time",
			// diff(0,900) = 1 but the lower stage lasts 1 s: cost 1; diff(900,600) = 1/3
			// but the lower stage lasts 10 s: cost 3.3.
			series(0, 900, 600, 600, 600, 600, 600, 600, 600, 600, 600, 600),
			[]predict.SegmentOption{predict.WithChangeThreshold(0), predict.WithMaxStages(2)},
			[][2]float64{{2, 900}, {10, 600}},
		},
		{"a cap of one", series(0, 900, 600), []predict.SegmentOption{predict.WithMaxStages(1)}, [][2]float64{{3, 900}}},
		{"threshold 0 splits every change", series(1, 2, 2, 3), []predict.SegmentOption{predict.WithChangeThreshold(0)}, [][2]float64{{1, 1}, {2, 2}, {1, 3}}},
		{"threshold 1 merges everything", series(0, 1000, 0, 1000), []predict.SegmentOption{predict.WithChangeThreshold(1)}, [][2]float64{{4, 1000}}},
		{"median", series(100, 100, 100, 1000), []predict.SegmentOption{predict.WithChangeThreshold(1), predict.WithPercentile(0.5)}, [][2]float64{{4, 100}}},
		{"75th percentile", series(100, 100, 100, 1000), []predict.SegmentOption{predict.WithChangeThreshold(1), predict.WithPercentile(0.75)}, [][2]float64{{4, 100}}},
		{"90th percentile", series(100, 100, 100, 1000), []predict.SegmentOption{predict.WithChangeThreshold(1), predict.WithPercentile(0.9)}, [][2]float64{{4, 1000}}},
		{
			"a percentile is time-weighted",
			[]predict.Sample{{At: 0, Usage: resource.Tuple{1000}}, {At: 9 * time.Second, Usage: resource.Tuple{100}}},
			[]predict.SegmentOption{predict.WithChangeThreshold(1), predict.WithPercentile(0.5), predict.WithLastDuration(time.Second)},
			[][2]float64{{10, 1000}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := predict.Segment(std, tt.samples, tt.opts...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, cpuStages(p))
		})
	}
}

func TestSegmentMultiDimensional(t *testing.T) {
	// CPU is flat while memory steps: the memory change alone starts a stage.
	s := series(500, 500, 500, 500)
	for i := range s {
		s[i].Usage[1] = 1 << 30
		if i >= 2 {
			s[i].Usage[1] = 4 << 30
		}
	}
	p, err := predict.Segment(std, s)
	require.NoError(t, err)
	require.Equal(t, 2, p.Len())
	assert.Equal(t, std.MustTuple(500, 1<<30), p.Stage(0).Demand)
	assert.Equal(t, std.MustTuple(500, 4<<30), p.Stage(1).Demand)
}

func TestSegmentErrors(t *testing.T) {
	tests := []struct {
		name    string
		schema  *resource.Schema
		samples []predict.Sample
		opts    []predict.SegmentOption
		want    error
	}{
		{"nil schema", nil, series(1, 2), nil, resource.ErrSchemaMismatch},
		{"no samples", std, nil, nil, predict.ErrNoSamples},
		{"one sample, no last duration", std, series(1), nil, predict.ErrNoSamples},
		{"unsorted", std, []predict.Sample{{At: 2}, {At: 1}}, nil, predict.ErrUnsorted},
		{"duplicate time (zero duration)", std, []predict.Sample{{At: 1}, {At: 1}}, nil, predict.ErrUnsorted},
		{"negative usage", std, []predict.Sample{{At: 1}, {At: 2, Usage: resource.Tuple{-1}}}, nil, resource.ErrNegative},
		{"outside the schema", std, []predict.Sample{{At: 1}, {At: 2, Usage: resource.Tuple{7: 1}}}, nil, resource.ErrOutsideSchema},
		{"span overflows", std, []predict.Sample{{At: math.MinInt64}, {At: math.MaxInt64}}, nil, predict.ErrBadDuration},
		{"span plus last overflows", std, []predict.Sample{{At: 0}, {At: math.MaxInt64 - 10}}, []predict.SegmentOption{predict.WithLastDuration(100)}, predict.ErrBadDuration},
		{"threshold NaN", std, series(1, 2), []predict.SegmentOption{predict.WithChangeThreshold(math.NaN())}, predict.ErrInvalidOption},
		{"threshold negative", std, series(1, 2), []predict.SegmentOption{predict.WithChangeThreshold(-0.1)}, predict.ErrInvalidOption},
		{"threshold above 1", std, series(1, 2), []predict.SegmentOption{predict.WithChangeThreshold(1.1)}, predict.ErrInvalidOption},
		{"negative min stage", std, series(1, 2), []predict.SegmentOption{predict.WithMinStage(-1)}, predict.ErrInvalidOption},
		{"zero max stages", std, series(1, 2), []predict.SegmentOption{predict.WithMaxStages(0)}, predict.ErrInvalidOption},
		{"percentile 0", std, series(1, 2), []predict.SegmentOption{predict.WithPercentile(0)}, predict.ErrInvalidOption},
		{"percentile above 1", std, series(1, 2), []predict.SegmentOption{predict.WithPercentile(1.5)}, predict.ErrInvalidOption},
		{"zero last duration", std, series(1, 2), []predict.SegmentOption{predict.WithLastDuration(0)}, predict.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]predict.Sample(nil), tt.samples...)
			_, err := predict.Segment(tt.schema, tt.samples, tt.opts...)
			require.ErrorIs(t, err, tt.want)
			assert.NotEmpty(t, err.Error())
			assert.Equal(t, before, tt.samples, "the input is not modified")
		})
	}
}

func TestNewSamples(t *testing.T) {
	s, err := predict.NewSamples(std, []time.Duration{0, time.Second}, []resource.Vector{{0.4, 10.5}, {2.6}})
	require.NoError(t, err)
	assert.Equal(t, []predict.Sample{{At: 0, Usage: resource.Tuple{0, 11}}, {At: time.Second, Usage: resource.Tuple{3}}}, s)

	tests := []struct {
		name  string
		at    []time.Duration
		usage []resource.Vector
		want  error
	}{
		{"length mismatch", []time.Duration{0}, nil, predict.ErrStageCount},
		{"NaN", []time.Duration{0, 1}, []resource.Vector{{}, {math.NaN()}}, predict.ErrInvalidValue},
		{"infinite", []time.Duration{0}, []resource.Vector{{math.Inf(1)}}, predict.ErrInvalidValue},
		{"negative", []time.Duration{0}, []resource.Vector{{0, -1}}, predict.ErrInvalidValue},
		{"outside the schema", []time.Duration{0}, []resource.Vector{{7: 1}}, resource.ErrOutsideSchema},
		{"unsorted", []time.Duration{1, 0}, []resource.Vector{{}, {}}, predict.ErrUnsorted},
		{"duplicate time", []time.Duration{1, 1}, []resource.Vector{{}, {}}, predict.ErrUnsorted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := predict.NewSamples(std, tt.at, tt.usage)
			require.ErrorIs(t, err, tt.want)
			var fe *predict.FieldError
			if !errorsAsDimension(err) {
				require.ErrorAs(t, err, &fe)
				assert.NotEmpty(t, fe.Field)
			}
		})
	}
	_, err = predict.NewSamples(nil, nil, nil)
	require.ErrorIs(t, err, resource.ErrSchemaMismatch)
}

func errorsAsDimension(err error) bool {
	var de *resource.DimensionError
	return errors.As(err, &de)
}

// checkSegmentation checks the invariants every segmentation must satisfy and returns a
// description of the first broken one, or "".
func checkSegmentation(samples []predict.Sample, p stage.Profile, last time.Duration, maxStages int, minStage time.Duration, peak bool) string {
	n := len(samples)
	if last == 0 {
		last = samples[n-1].At - samples[n-2].At
	}
	origin := samples[0].At
	if p.Duration() != samples[n-1].At-origin+last {
		return "the profile does not span the series"
	}
	if p.Len() > maxStages {
		return "too many stages"
	}
	for i := 0; i < p.Len(); i++ {
		if p.Len() > 1 && p.Stage(i).Duration < minStage {
			return "a stage is shorter than the minimum"
		}
	}
	// Each stage holds whole samples; its demand lies within them (at their peak with
	// the peak rule).
	var lo, hi resource.Tuple
	cur := -1
	for j, s := range samples {
		i := p.StageAt(s.At - origin)
		if i < 0 {
			return "a sample's time is not covered"
		}
		if peak && p.At(s.At-origin).AnyLess(s.Usage) {
			return "the peak rule understates a sample"
		}
		if i != cur {
			if p.Offset(i) != s.At-origin {
				return "a stage boundary is not a sample time"
			}
			if cur >= 0 && (p.Stage(cur).Demand.AnyLess(lo) || hi.AnyLess(p.Stage(cur).Demand)) {
				return "a stage demand lies outside its samples"
			}
			cur, lo, hi = i, s.Usage, s.Usage
		}
		lo, hi = lo.Min(s.Usage), hi.Max(s.Usage)
		if j == n-1 && (p.Stage(cur).Demand.AnyLess(lo) || hi.AnyLess(p.Stage(cur).Demand)) {
			return "a stage demand lies outside its samples"
		}
		if peak && j == n-1 && p.Stage(cur).Demand != hi {
			return "the peak rule's demand is not the peak"
		}
	}
	return ""
}

func TestSegmentProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("segmentation invariants on random irregular series", prop.ForAll(
		func(seed int64, n, maxStages int, threshold float64, minStage, last time.Duration, q float64) bool {
			r := rng(seed)
			samples := randSeries(r, n)
			opts := []predict.SegmentOption{predict.WithChangeThreshold(threshold), predict.WithMaxStages(maxStages), predict.WithMinStage(minStage)}
			if last > 0 {
				opts = append(opts, predict.WithLastDuration(last))
			}
			if q < 1 {
				opts = append(opts, predict.WithPercentile(q))
			}
			if n == 1 && last == 0 {
				_, err := predict.Segment(std, samples, opts...)
				return err != nil
			}
			p, err := predict.Segment(std, samples, opts...)
			if err != nil {
				t.Log(err)
				return false
			}
			if msg := checkSegmentation(samples, p, last, maxStages, minStage, q >= 1); msg != "" {
				t.Log(msg)
				return false
			}
			return true
		},
		gen.Int64(), gen.IntRange(1, 120), gen.IntRange(1, 12), gen.Float64Range(0, 1),
		gen.Int64Range(0, int64(30*time.Minute)).Map(func(x int64) time.Duration { return time.Duration(x) }),
		gen.Int64Range(0, int64(10*time.Minute)).Map(func(x int64) time.Duration { return time.Duration(x) }),
		gen.OneGenOf(gen.Const(1.0), gen.Float64Range(0.01, 1)),
	))
	props.Property("without minimum and cap, neighbouring stages differ materially", prop.ForAll(
		func(seed int64, n int, threshold float64) bool {
			r := rng(seed)
			samples := randSeries(r, n)
			p, err := predict.Segment(std, samples, predict.WithChangeThreshold(threshold), predict.WithMaxStages(n))
			if err != nil {
				return false
			}
			var peak resource.Tuple
			for _, s := range samples {
				peak = peak.Max(s.Usage)
			}
			for i := 1; i < p.Len(); i++ {
				a, b := p.Stage(i-1).Demand, p.Stage(i).Demand
				material := false
				for d := 0; d < std.Len(); d++ {
					if peak[d] > 0 && math.Abs(float64(a[d]-b[d]))/float64(peak[d]) > threshold {
						material = true
					}
				}
				if !material {
					return false
				}
			}
			return true
		},
		gen.Int64(), gen.IntRange(2, 120), gen.Float64Range(0, 1),
	))
	props.TestingRun(t)
}

// randSeries returns n samples at irregular intervals (1 s to 10 min) with a random
// walk of plateaus and noise on cpu, memory and net-io.
func randSeries(r interface {
	Int64N(int64) int64
	IntN(int) int
}, n int) []predict.Sample {
	s := make([]predict.Sample, n)
	at := time.Duration(r.Int64N(int64(time.Hour)))
	var level resource.Tuple
	for i := range s {
		if i == 0 || r.IntN(10) == 0 {
			level = resource.Tuple{r.Int64N(4000), r.Int64N(8 << 30), 0, r.Int64N(1 << 20)}
		}
		s[i].At = at
		for _, d := range []int{0, 1, 3} {
			s[i].Usage[d] = max(level[d]+r.Int64N(level[d]/5+1)-level[d]/10, 0)
		}
		at += time.Second + time.Duration(r.Int64N(int64(10*time.Minute)))
	}
	return s
}
