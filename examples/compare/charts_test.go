package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
		var got []string
		for _, tk := range (roundTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		assert.ElementsMatch(t, tc.want, got, "[%v, %v]", tc.lo, tc.hi)
	}
}

// Degenerate ranges give a few ticks, never an endless loop.
func TestRoundTicksDegenerate(t *testing.T) {
	for _, r := range [][2]float64{{0, 5e-324}, {0, math.MaxFloat64}, {-math.MaxFloat64, math.MaxFloat64},
		{1e16, 1e16 + 2}, {3, 3}, {math.NaN(), 1}, {0, math.Inf(1)}, {1e300, 1e301}} {
		ts := roundTicks{}.Ticks(r[0], r[1])
		assert.NotEmpty(t, ts, "%v", r)
		assert.LessOrEqual(t, len(ts), maxTicks+1, "%v", r)
		for _, tk := range ts {
			assert.LessOrEqual(t, len(tk.Label), 16, "%v: label %q", r, tk.Label)
		}
	}
}

// The charts' SVG keeps every label's text as written: no tick label with a rounding
// tail, every policy in the legend.
func TestChartsText(t *testing.T) {
	dir := t.TempDir()
	lines := map[string][][2]float64{"FIFO": {{50, 0.1}, {100, 0.30000000000000004}}, "DRF": {{50, -12.2}, {100, 74.9}}}
	path := filepath.Join(dir, "gain.svg")
	require.NoError(t, gainChart(path, "gain", lines))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	svg := string(b)
	assert.NotContains(t, svg, "0000000")
	for _, s := range []string{">FIFO<", ">DRF<", ">0<", ">20<", ">60<"} {
		assert.True(t, strings.Contains(svg, s), "%s missing", s)
	}
}
