package predict_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

func TestNewLoadLogRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *resource.Schema
		window time.Duration
		q      float64
		want   error
	}{
		{"nil schema", nil, 0, 0.5, resource.ErrSchemaMismatch},
		{"negative window", std, -time.Second, 0.5, predict.ErrInvalidOption},
		{"quantile below 0", std, time.Minute, -0.1, predict.ErrInvalidOption},
		{"quantile above 1", std, time.Minute, 1.5, predict.ErrInvalidOption},
		{"NaN quantile", std, time.Minute, math.NaN(), predict.ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := predict.NewLoadLog(tc.schema, tc.window, tc.q)
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, l)
		})
	}
}

// The forecast: the latest report with no window; over a window, the q-quantile of the
// CPU reports (nearest rank) and the largest memory report; reports older than the
// window drop out.
func TestLoadLogForecast(t *testing.T) {
	type report struct {
		at       time.Duration
		cpu, mem int64
	}
	reports := []report{{0, 100, 50}, {10 * time.Second, 400, 10}, {20 * time.Second, 200, 30}, {30 * time.Second, 300, 20}}
	for _, tc := range []struct {
		name     string
		window   time.Duration
		q        float64
		cpu, mem int64 // after the last report
	}{
		{"no window: the latest", 0, 0.9, 300, 20},
		{"median of all four", time.Minute, 0.5, 200, 50},
		{"largest of all four", time.Minute, 1, 400, 50},
		{"smallest of all four", time.Minute, 0, 100, 50},
		{"the last 20 s: three reports", 20 * time.Second, 0.5, 300, 30},
		{"the last 5 s: the latest alone", 5 * time.Second, 1, 300, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := predict.NewLoadLog(std, tc.window, tc.q)
			require.NoError(t, err)
			var got resource.Tuple
			for _, r := range reports {
				got, err = l.Add("n1", r.at, std.MustTuple(r.cpu, r.mem))
				require.NoError(t, err)
			}
			assert.Equal(t, std.MustTuple(tc.cpu, tc.mem), got)
			again, ok := l.Forecast("n1")
			require.True(t, ok)
			assert.Equal(t, got, again)
			_, ok = l.Forecast("n2")
			assert.False(t, ok, "a server never reported has no forecast")
		})
	}
}

// Bad input is an error and changes nothing: the forecast stays what it was.
func TestLoadLogAddRejects(t *testing.T) {
	l, err := predict.NewLoadLog(std, time.Minute, 1)
	require.NoError(t, err)
	_, err = l.Add("n1", 10*time.Second, std.MustTuple(100, 10))
	require.NoError(t, err)
	_, err = l.Add("n1", 5*time.Second, std.MustTuple(900, 90))
	require.ErrorIs(t, err, predict.ErrBadTime, "time going backwards")
	var negative resource.Tuple
	negative[0] = -1
	_, err = l.Add("n1", 20*time.Second, negative)
	require.ErrorIs(t, err, resource.ErrNegative)
	got, ok := l.Forecast("n1")
	require.True(t, ok)
	assert.Equal(t, std.MustTuple(100, 10), got)
	l.Forget("n1")
	_, ok = l.Forecast("n1")
	assert.False(t, ok)
}

// A server reporting far more often than its window keeps at most MaxLoadReports.
func TestLoadLogBoundsItsReports(t *testing.T) {
	l, err := predict.NewLoadLog(std, time.Hour, 0)
	require.NoError(t, err)
	for i := range predict.MaxLoadReports + 10 {
		_, err := l.Add("n", time.Duration(i)*time.Millisecond, std.MustTuple(int64(i), 0))
		require.NoError(t, err)
	}
	got, _ := l.Forecast("n")
	assert.Equal(t, int64(10), got[0], "the ten oldest dropped: the smallest kept is the 11th")
}

// Whatever the reports, each compressible dimension's forecast is one of the reports
// kept, at the quantile's rank among them, and each non-compressible one the largest
// kept: never below the latest memory report.
func TestPropertyLoadLogForecast(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("forecast = quantile (compressible) or max (others) of the window", prop.ForAll(func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 3))
		window := time.Duration(r.IntN(60)) * time.Second
		q := float64(r.IntN(101)) / 100
		l, err := predict.NewLoadLog(std, window, q)
		if err != nil {
			return err.Error()
		}
		type rep struct {
			at   time.Duration
			load resource.Tuple
		}
		var all []rep
		at := time.Duration(0)
		for range 1 + r.IntN(40) {
			at += time.Duration(r.IntN(20)) * time.Second
			load := std.MustTuple(r.Int64N(1000), r.Int64N(1000))
			all = append(all, rep{at, load})
			got, err := l.Add("n", at, load)
			if err != nil {
				return err.Error()
			}
			var kept []resource.Tuple
			for _, x := range all {
				if at-x.at <= window {
					kept = append(kept, x.load)
				}
			}
			if window == 0 || len(kept) == 0 {
				kept = []resource.Tuple{load}
			}
			for k := 0; k < std.Len(); k++ {
				vals := make([]int64, len(kept))
				for i, x := range kept {
					vals[i] = x[k]
				}
				slices.Sort(vals)
				want := vals[len(vals)-1]
				if std.Dim(k).Compressible {
					want = vals[max(0, int(math.Ceil(q*float64(len(vals))))-1)]
				}
				if got[k] != want {
					return fmt.Sprintf("at %v, dim %d, window %v, q %v: forecast %d, want %d of %v", at, k, window, q, got[k], want, vals)
				}
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

func ExampleLoadLog() {
	// Plan around the 90th percentile of the CPU the other applications used over the
	// last five minutes, and the most memory they held then.
	l, _ := predict.NewLoadLog(resource.Standard(), 5*time.Minute, 0.9)
	cpu := []int64{4000, 6000, 5000, 9000, 5500} // millicores, one report a minute
	var forecast resource.Tuple
	for i, c := range cpu {
		forecast, _ = l.Add("node-1", time.Duration(i)*time.Minute, resource.Standard().MustTuple(c, 8<<30))
	}
	fmt.Println(forecast[0], forecast[1]>>30)
	// Output: 9000 8
}
