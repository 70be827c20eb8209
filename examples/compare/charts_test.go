package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
