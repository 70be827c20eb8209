package chart

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// labels are the labelled ticks' labels.
func labels(ts []plot.Tick) []string {
	var got []string
	for _, tk := range ts {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	return got
}

func TestRoundTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 0.97, []string{"0.0", "0.2", "0.4", "0.6", "0.8"}},
		{-12.2, 74.9, []string{"0", "20", "40", "60"}},
		{0, 800, []string{"0", "200", "400", "600", "800"}},
		{-0.3, 0.3, []string{"-0.2", "0.0", "0.2"}},
		{0.1, 0.30000000000000004, []string{"0.10", "0.15", "0.20", "0.25", "0.30"}},
	} {
		assert.ElementsMatch(t, tc.want, labels(RoundTicks{}.Ticks(tc.lo, tc.hi)), "[%v, %v]", tc.lo, tc.hi)
	}
}

// Degenerate ranges give a few ticks, never an endless loop.
func TestRoundTicksDegenerate(t *testing.T) {
	for _, r := range [][2]float64{{0, 5e-324}, {0, math.MaxFloat64}, {-math.MaxFloat64, math.MaxFloat64},
		{1e16, 1e16 + 2}, {3, 3}, {math.NaN(), 1}, {0, math.Inf(1)}, {1e300, 1e301}} {
		ts := RoundTicks{}.Ticks(r[0], r[1])
		assert.NotEmpty(t, ts, "%v", r)
		assert.LessOrEqual(t, len(ts), maxTicks+1, "%v", r)
		for _, tk := range ts {
			assert.LessOrEqual(t, len(tk.Label), 16, "%v: label %q", r, tk.Label)
		}
	}
}

func TestLogTicks(t *testing.T) {
	ts := LogTicks{}.Ticks(3, 250)
	assert.Equal(t, []string{"5", "10", "20", "50", "100", "200"}, labels(ts))
	assert.Len(t, ts, 7+9+2) // 3..9, 10..90, 100 and 200
	for _, r := range [][2]float64{{0, 10}, {-1, 10}, {10, 1}, {1, math.Inf(1)}, {math.NaN(), 1}} {
		assert.Empty(t, LogTicks{}.Ticks(r[0], r[1]), "%v", r)
	}
	// The widest finite range stops after maxTicks.
	assert.LessOrEqual(t, len(LogTicks{}.Ticks(5e-324, math.MaxFloat64)), maxTicks+9)
}

// Save writes an SVG whose text is the chart's: title, axis labels, round tick labels
// and every legend entry.
func TestSave(t *testing.T) {
	c := New("a title", "x things", "y things")
	for i, name := range []string{"first", "second"} {
		require.NoError(t, c.AddLine(name, i, plotter.XYs{{X: 0, Y: 0.1 * float64(i)}, {X: 100, Y: 0.30000000000000004}}))
	}
	assert.Error(t, c.AddLine("bad", 2, plotter.XYs{{X: math.NaN(), Y: 0}}), "a point that is not a number")
	path := filepath.Join(t.TempDir(), "c.svg")
	require.NoError(t, c.Save(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	svg := string(b)
	assert.True(t, strings.HasPrefix(svg, "<?xml"), "not SVG: %.40q", svg)
	assert.NotContains(t, svg, "0000000")
	for _, s := range []string{">a title<", ">x things<", ">y things<", ">first<", ">second<", ">100<"} {
		assert.Contains(t, svg, s)
	}
	assert.NotContains(t, svg, ">bad<", "a refused line is not drawn nor named")
	assert.Error(t, c.Save(filepath.Join(t.TempDir(), "no", "such", "dir.svg")))
}

// LogRange widens a range a log axis cannot draw (no data, one value) and leaves a
// drawable one alone.
func TestLogRange(t *testing.T) {
	for _, tc := range []struct {
		name             string
		min, max         float64
		wantMin, wantMax float64
	}{
		{"no data", math.Inf(1), math.Inf(-1), 1, 10},
		{"one value under 1", 0.19, 0.19, 0.019, 1.9},
		{"one value of 1", 1, 1, 0.1, 10},
		{"one large value", 500, 500, 50, 5000},
		{"a range", 0.1, 3600, 0.1, 3600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := plot.New().X
			a.Min, a.Max = tc.min, tc.max
			LogRange(&a)
			assert.InDelta(t, tc.wantMin, a.Min, 1e-12)
			assert.InDelta(t, tc.wantMax, a.Max, 1e-12)
		})
	}
}

// A log-scale chart of one point, or of none, is drawn once LogRange has set its
// range; one gonum/plot cannot draw (a point at 0 on a log axis) is an error naming the
// file, not a panic, and leaves no file.
func TestSaveLogScale(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pts      plotter.XYs // nil: no line
		logRange bool
		wantErr  bool
	}{
		{"no data", nil, true, false},
		{"one point under 1 s", plotter.XYs{{X: 0.19, Y: 1}}, true, false},
		{"points at one x", plotter.XYs{{X: 1, Y: 0.5}, {X: 1, Y: 1}}, true, false},
		{"no data, range left to gonum", nil, false, true},
		{"one point, range left to gonum", plotter.XYs{{X: 0.19, Y: 1}}, false, true},
		{"a point at 0", plotter.XYs{{X: 0, Y: 0.5}, {X: 10, Y: 1}}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New("t", "x", "y")
			c.Plot.X.Scale = plot.LogScale{}
			c.Plot.X.Tick.Marker = LogTicks{}
			if tc.pts != nil {
				require.NoError(t, c.AddLine("line", 0, tc.pts))
			}
			if tc.logRange {
				LogRange(&c.Plot.X)
			}
			path := filepath.Join(t.TempDir(), "c.svg")
			var err error
			require.NotPanics(t, func() { err = c.Save(path) })
			if tc.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), path)
				assert.NoFileExists(t, path)
				return
			}
			require.NoError(t, err)
			assert.FileExists(t, path)
		})
	}
}
