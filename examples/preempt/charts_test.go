package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CDF chart is drawn when no high-priority job finished, or when every one took
// the same time (under a second: the log axis's 1 s).
func TestCDFChartDegenerate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []cdfLine
	}{
		{"no job", []cdfLine{{name: "none"}, {name: "priority"}}},
		{"no job finished", []cdfLine{{name: "none", jobs: 3}, {name: "priority", jobs: 3}}},
		{"every job under 1 s", []cdfLine{{name: "none", xs: []float64{0.2, 0.5}, jobs: 2}, {name: "priority", xs: []float64{0.3}, jobs: 2}}},
		{"every job of 40 s", []cdfLine{{name: "none", xs: []float64{40, 40}, jobs: 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cdf.svg")
			require.NotPanics(t, func() { require.NoError(t, cdfChart(path, "t", tc.lines)) })
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Contains(t, string(b), "<svg")
		})
	}
}
