package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/chart"
	"github.com/finegrain/finegrain/sim"
)

// The charts' SVG keeps every label's text as written: no tick label with a rounding
// tail, every policy in the legend.
func TestChartsText(t *testing.T) {
	dir := t.TempDir()
	lines := map[string][][2]float64{"FIFO": {{50, 0.1}, {100, 0.30000000000000004}}, "DRF": {{50, -12.2}, {100, 74.9}}}
	path := filepath.Join(dir, "gain.svg")
	require.NoError(t, gainChart(path, "gain", []string{"FIFO", "DRF"}, lines))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	svg := string(b)
	assert.NotContains(t, svg, "0000000")
	for _, s := range []string{">FIFO<", ">DRF<", ">0<", ">20<", ">60<"} {
		assert.True(t, strings.Contains(svg, s), "%s missing", s)
	}
}

// The side-by-side chart has one CDF line and one legend entry per policy, whatever
// the list (nine here), and bars for every policy but the reference.
func TestCompareChart(t *testing.T) {
	names := []string{"FIFO", "Capacity", "Fair", "DRF", "Tetris", "LoadAware", "K8sDefault", "FGM+Tetris", "FGM"}
	byPolicy := map[string][]*sim.Result{}
	var rows []row
	for i, n := range names {
		res := &sim.Result{Policy: n}
		for k := range 20 {
			d := time.Duration(k+1) * time.Duration(i+1) * time.Second
			res.Jobs = append(res.Jobs, sim.JobResult{ID: fmt.Sprint(k), Submit: 0, Done: d, Finished: true})
		}
		byPolicy[n] = []*sim.Result{res}
		rows = append(rows, row{policy: n, makespan: float64(100 + 10*i), jct: float64(10 * (i + 1)), p95: float64(20 * (9 - i))})
	}
	path := filepath.Join(t.TempDir(), "compare.svg")
	require.NoError(t, compareChart(path, "scenario", names, byPolicy, rows, "FGM"))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	svg := string(b)
	for _, n := range names {
		assert.Equal(t, 1, strings.Count(svg, ">"+n+"<"), "%s named once, in the legend", n)
	}
	for _, s := range []string{">makespan<", ">JCT mean<", ">JCT p95<"} {
		assert.Contains(t, svg, s)
	}
	// One CDF line per policy and one legend thumbnail each (stroked paths in the
	// policy's colour), and 3 × 8 bars (filled paths in the colours): every policy in
	// its own colour, K8sDefault, which the palette does not know, in one of the rest.
	var colors chart.Palette
	seen := map[color.Color]string{}
	for _, n := range names {
		c := colors.Color(n).(color.RGBA)
		assert.Empty(t, seen[c], "%s and %s share a colour", seen[c], n)
		seen[c] = n
		if chart.Known(n) {
			assert.Equal(t, chart.Color(n), c, n)
		}
		rgb := fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
		assert.GreaterOrEqual(t, strings.Count(svg, "stroke:"+rgb), 2, n)
		if n != "FGM" && rgb != "#000000" { // the SVG writes a black fill as the default, unstyled
			assert.Equal(t, 3, strings.Count(svg, "fill:"+rgb), n)
		}
	}
}

// Over more than three decades the CDF panel labels the powers of ten only.
func TestDecadeTicks(t *testing.T) {
	var got []string
	for _, tk := range (decadeTicks{}).Ticks(0.5, 3000) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	assert.Equal(t, []string{"1", "10", "100", "1000"}, got)
	got = nil
	for _, tk := range (decadeTicks{}).Ticks(1, 200) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	assert.Equal(t, []string{"1", "2", "5", "10", "20", "50", "100", "200"}, got)
}

// The ratio axis is labelled at round values, 1 among them, at most 8.
func TestRatioTicks(t *testing.T) {
	labelsOf := func(lo, hi float64) []string {
		var got []string
		for _, tk := range (ratioTicks{}).Ticks(lo, hi) {
			got = append(got, tk.Label)
		}
		return got
	}
	assert.Equal(t, []string{"0.9", "1", "1.1", "1.2", "1.3"}, labelsOf(0.87, 1.4))
	assert.Equal(t, []string{"0.7", "1", "1.5", "2"}, labelsOf(0.66, 2.8))
	assert.Equal(t, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10"}, labelsOf(0.09, 12))
	assert.Equal(t, []string{"0.01", "0.1", "1", "10", "100", "1000"}, labelsOf(0.005, 1500))
	assert.Empty(t, labelsOf(0, 1))
}

// The CDF charts are drawn when no job finished, or when every finished job took the
// same time, under a second or not (a log axis gonum/plot cannot range by itself).
func TestChartsDegenerateCDF(t *testing.T) {
	jobs := func(finished bool, d ...time.Duration) *sim.Result {
		res := &sim.Result{Policy: "FIFO"}
		for k, x := range d {
			res.Jobs = append(res.Jobs, sim.JobResult{ID: fmt.Sprint(k), Done: x, Finished: finished})
		}
		return res
	}
	for _, tc := range []struct {
		name string
		res  *sim.Result
	}{
		{"no job finished", jobs(false, 0)},
		{"no job at all", jobs(true)},
		{"one job of 0.19 s", jobs(true, 190*time.Millisecond)},
		{"jobs all of 0 s", jobs(true, 0, 0)},
		{"jobs all of 5 s", jobs(true, 5*time.Second, 5*time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			byPolicy := map[string][]*sim.Result{"FIFO": {tc.res}, "FGM": {tc.res}}
			rows := []row{{policy: "FIFO"}, {policy: "FGM"}}
			cdf, side := filepath.Join(dir, "cdf.svg"), filepath.Join(dir, "compare.svg")
			require.NotPanics(t, func() {
				require.NoError(t, cdfChart(cdf, "t", []string{"FIFO", "FGM"}, byPolicy))
				require.NoError(t, compareChart(side, "t", []string{"FIFO", "FGM"}, byPolicy, rows, "FGM"))
			})
			for _, p := range []string{cdf, side} {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Contains(t, string(b), "<svg", p)
			}
		})
	}
}

// The linear charts are drawn with no data too: no samples, no series point.
func TestChartsNoData(t *testing.T) {
	dir := t.TempDir()
	require.NotPanics(t, func() {
		require.NoError(t, utilChart(filepath.Join(dir, "util.svg"), "t", 0, []*sim.Result{{Policy: "FIFO"}}))
		require.NoError(t, gainChart(filepath.Join(dir, "gain.svg"), "t", []string{"FIFO"}, nil))
	})
	for _, f := range []string{"util.svg", "gain.svg"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}
