package predict_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

func iv(sec int64, actual, predicted, idle int64) predict.Interval {
	return predict.Interval{Duration: time.Duration(sec) * time.Second, Actual: resource.Tuple{actual}, Predicted: resource.Tuple{predicted}, Idle: resource.Tuple{idle}}
}

func TestConformityKnownAnswers(t *testing.T) {
	capacity := std.MustTuple(1000)
	tests := []struct {
		name   string
		th     float64
		window []predict.Interval
		want   float64
	}{
		// μ = 300 > α = 250 and I = 250 < 0.3 × 1000: F = (200² × 10 s)/40 s = 10000
		// millicores².
		{"under-predicted and short of idle", 0.3, []predict.Interval{iv(10, 600, 400, 100), iv(30, 200, 200, 300)}, 10000},
		{"idle at the threshold", 0.25, []predict.Interval{iv(10, 600, 400, 100), iv(30, 200, 200, 300)}, 0},
		{"over-predicted on average", 0.3, []predict.Interval{iv(10, 600, 700, 100), iv(30, 200, 200, 300)}, 0},
		{"exact prediction", 1, []predict.Interval{iv(10, 600, 600, 0)}, 0},
		// μ = 350 > α = 300: both intervals count, the over-predicted one too.
		{"every segment's squared error counts", 0.5, []predict.Interval{iv(10, 600, 400, 0), iv(10, 100, 200, 0)}, (200*200*10 + 100*100*10) / 20.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := predict.Conformity(std, capacity, resource.Uniform(std.All(), tt.th), tt.window)
			require.NoError(t, err)
			assert.InDelta(t, tt.want, f[0], 1e-9)
			for d := 1; d < resource.MaxDims; d++ {
				assert.Zero(t, f[d], "dimension %d has no capacity", d)
			}
		})
	}
}

func TestConformityErrors(t *testing.T) {
	good := []predict.Interval{iv(10, 1, 1, 1)}
	th := resource.Uniform(std.All(), 0.1)
	capacity := std.MustTuple(1000)
	tests := []struct {
		name     string
		schema   *resource.Schema
		capacity resource.Tuple
		th       resource.Vector
		window   []predict.Interval
		want     error
	}{
		{"nil schema", nil, capacity, th, good, resource.ErrSchemaMismatch},
		{"negative capacity", std, resource.Tuple{-1}, th, good, resource.ErrNegative},
		{"threshold above 1", std, capacity, resource.Vector{1.5}, good, resource.ErrInvalidRatio},
		{"threshold NaN", std, capacity, resource.Vector{math.NaN()}, good, resource.ErrInvalidRatio},
		{"threshold outside the schema", std, capacity, resource.Vector{7: 0.5}, good, resource.ErrOutsideSchema},
		{"empty window", std, capacity, th, nil, predict.ErrNoSamples},
		{"zero duration", std, capacity, th, []predict.Interval{iv(0, 1, 1, 1)}, predict.ErrBadDuration},
		{"negative duration", std, capacity, th, []predict.Interval{iv(-1, 1, 1, 1)}, predict.ErrBadDuration},
		{"negative actual", std, capacity, th, []predict.Interval{iv(1, -1, 1, 1)}, resource.ErrNegative},
		{"negative predicted", std, capacity, th, []predict.Interval{iv(1, 1, -1, 1)}, resource.ErrNegative},
		{"negative idle", std, capacity, th, []predict.Interval{iv(1, 1, 1, -1)}, resource.ErrNegative},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := predict.Conformity(tt.schema, tt.capacity, tt.th, tt.window)
			require.ErrorIs(t, err, tt.want)
			assert.NotEmpty(t, err.Error())
		})
	}
}

func TestConformityProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	window := func(seed int64) (resource.Tuple, []predict.Interval) {
		r := rng(seed)
		capacity := std.MustTuple(1+r.Int64N(64000), 1+r.Int64N(1<<36))
		w := make([]predict.Interval, 1+r.IntN(20))
		for i := range w {
			w[i].Duration = time.Duration(1 + r.Int64N(int64(time.Hour)))
			for d := 0; d < 2; d++ {
				w[i].Actual[d] = r.Int64N(capacity[d] + 1)
				w[i].Predicted[d] = r.Int64N(capacity[d] + 1)
				w[i].Idle[d] = r.Int64N(capacity[d] + 1)
			}
		}
		return capacity, w
	}
	props.Property("F is non-negative, at most N² for usage within capacity, zero off the schema", prop.ForAll(func(seed int64, th float64) bool {
		capacity, w := window(seed)
		f, err := predict.Conformity(std, capacity, resource.Uniform(std.All(), th), w)
		if err != nil {
			return false
		}
		for d, x := range f {
			n := float64(capacity[d])
			if x < 0 || x > n*n*(1+1e-12) || (d >= 2 && x != 0) {
				return false
			}
		}
		return true
	}, gen.Int64(), gen.Float64Range(0, 1)))
	props.Property("F is zero when usage never exceeds the prediction", prop.ForAll(func(seed int64) bool {
		capacity, w := window(seed)
		for i := range w {
			w[i].Predicted = w[i].Predicted.Max(w[i].Actual)
		}
		f, err := predict.Conformity(std, capacity, resource.Uniform(std.All(), 1), w)
		return err == nil && f == resource.Vector{}
	}, gen.Int64()))
	props.Property("F is zero when idle is plentiful", prop.ForAll(func(seed int64) bool {
		capacity, w := window(seed)
		for i := range w {
			w[i].Idle = capacity
		}
		// Idle averages to the capacity (up to floating-point rounding of eq. 14).
		f, err := predict.Conformity(std, capacity, resource.Uniform(std.All(), 0.999), w)
		return err == nil && f == resource.Vector{}
	}, gen.Int64()))
	props.Property("when the conditions hold, F is the time-weighted squared error", prop.ForAll(func(seed int64) bool {
		capacity, w := window(seed)
		for i := range w {
			w[i].Actual = w[i].Predicted.Add(std.MustTuple(1, 1)) // μ > α everywhere
			w[i].Idle = resource.Tuple{}
		}
		f, err := predict.Conformity(std, capacity, resource.Uniform(std.All(), 0.5), w)
		if err != nil {
			return false
		}
		for d := 0; d < 2; d++ {
			var sum, total float64
			for _, x := range w {
				sum += float64(x.Duration) // (μi − αi)² = 1
				total += float64(x.Duration)
			}
			if math.Abs(f[d]-sum/total) > 1e-9*sum/total {
				return false
			}
		}
		return true
	}, gen.Int64()))
	props.Property("the log's mean is the mean of the last k values", prop.ForAll(func(k int, values []float64) bool {
		l, err := predict.NewConformityLog(k)
		if err != nil {
			return false
		}
		for _, v := range values {
			if l.Record("s", resource.Vector{v, 2 * v}) != nil {
				return false
			}
		}
		m, ok := l.Mean("s")
		if len(values) == 0 {
			return !ok && l.Len("s") == 0
		}
		last := values[max(len(values)-k, 0):]
		var want float64
		for _, v := range last {
			want += v
		}
		want /= float64(len(last))
		return ok && l.Len("s") == len(last) && math.Abs(m[0]-want) <= 1e-9*max(want, 1) && math.Abs(m[1]-2*want) <= 2e-9*max(want, 1)
	}, gen.IntRange(1, 10), gen.SliceOf(gen.Float64Range(0, 1e6))))
	props.TestingRun(t)
}

func TestConformityLog(t *testing.T) {
	l, err := predict.NewConformityLog(3)
	require.NoError(t, err)
	assert.Equal(t, 3, l.Window())
	_, ok := l.Mean("a")
	assert.False(t, ok)
	for _, x := range []float64{1, 2, 3, 4} {
		require.NoError(t, l.Record("a", resource.Vector{x}))
	}
	m, ok := l.Mean("a")
	require.True(t, ok)
	assert.Equal(t, resource.Vector{3}, m, "the mean of 2, 3, 4")
	require.NoError(t, l.Record("b", resource.Vector{0, 5}))
	m, _ = l.Mean("b")
	assert.Equal(t, resource.Vector{0, 5}, m)

	for _, bad := range []struct {
		name   string
		server string
		f      resource.Vector
		want   error
	}{
		{"empty server", "", resource.Vector{}, predict.ErrEmptyID},
		{"NaN", "a", resource.Vector{math.NaN()}, predict.ErrInvalidValue},
		{"infinite", "a", resource.Vector{0, math.Inf(1)}, predict.ErrInvalidValue},
		{"negative", "a", resource.Vector{-1}, predict.ErrInvalidValue},
	} {
		err := l.Record(bad.server, bad.f)
		require.ErrorIs(t, err, bad.want, bad.name)
		m, _ := l.Mean("a")
		assert.Equal(t, resource.Vector{3}, m, "%s: a rejected record changes nothing", bad.name)
		assert.Equal(t, 3, l.Len("a"))
	}

	l.Forget("a")
	_, ok = l.Mean("a")
	assert.False(t, ok)
	assert.Equal(t, 0, l.Len("a"))
	_, ok = l.Mean("b")
	assert.True(t, ok, "forgetting one server keeps the others")

	_, err = predict.NewConformityLog(0)
	require.ErrorIs(t, err, predict.ErrInvalidOption)
}

// TestConformityLogConcurrent exercises concurrent writers and readers; run with -race.
func TestConformityLogConcurrent(t *testing.T) {
	l, err := predict.NewConformityLog(4)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				s := fmt.Sprint("server", i%5)
				switch (g + i) % 3 {
				case 0:
					assert.NoError(t, l.Record(s, resource.Vector{float64(i)}))
				case 1:
					if m, ok := l.Mean(s); ok {
						assert.GreaterOrEqual(t, m[0], 0.0)
					}
				default:
					if i%50 == 0 {
						l.Forget(s)
					}
				}
			}
		}(g)
	}
	wg.Wait()
}
