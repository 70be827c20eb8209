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
	// policy's colour), and 3 × 8 bars (filled paths in the colours).
	for i := range names {
		c := policyColor(i).(color.RGBA)
		rgb := fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
		assert.GreaterOrEqual(t, strings.Count(svg, "stroke:"+rgb), 2, names[i])
		if names[i] != "FGM" {
			assert.Equal(t, 3, strings.Count(svg, "fill:"+rgb), names[i])
		}
	}
}
