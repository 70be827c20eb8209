package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"dedicated", "cloud"}, c.envs)
	assert.Equal(t, []string{"offline", "online"}, c.modes)
	assert.Equal(t, 1.0, c.scale)
	c, err = parseFlags([]string{"-swim", "x.tsv"})
	require.NoError(t, err)
	assert.Equal(t, 0.1, c.scale, "a SWIM trace is scaled down by default")
	for _, args := range [][]string{
		{"-env", "moon"}, {"-mode", "sometimes"}, {"-runs", "0"}, {"-workers", "0"},
		{"-scale", "-1"}, {"-scale", "NaN"}, {"stray"}, {"-nope"},
	} {
		_, err := parseFlags(args)
		assert.Error(t, err, args)
	}
}

// A small run writes the tables and every output file.
func TestCompareSmall(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-scale", "0.01", "-runs", "1", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	assert.NotContains(t, errOut.String(), "\r", "no progress frames where stderr is not a terminal")
	for _, s := range []string{"offline-dedicated", "offline-cloud", "online-dedicated", "online-cloud", "online series"} {
		assert.Contains(t, out.String(), s)
	}
	for _, p := range []string{"FIFO", "Capacity", "Fair", "DRF", "FGM"} {
		assert.Contains(t, out.String(), p)
	}
	for _, f := range []string{"table.csv", "runs.csv", "series.csv", "jobs-offline-dedicated.csv", "samples-online-cloud.csv",
		"jct-cdf-offline-dedicated.svg", "util-cpu-online-cloud.svg", "util-memory-offline-cloud.svg", "series-gain-dedicated.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.NotEmpty(t, b, f)
		if strings.HasSuffix(f, ".svg") {
			assert.Contains(t, string(b), "<svg", f)
		}
	}
	// 4 table scenarios + 2 × 7 series volumes, 5 policies each, plus the header.
	runs, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
	require.NoError(t, err)
	assert.Equal(t, (4+14)*5+1, strings.Count(string(runs), "\n"))
}

// A SWIM trace replaces the generated workload; skipped when the data is absent.
func TestCompareSWIM(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "swim", "FB-2009_samples_24_times_1hr_0.tsv")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("SWIM trace not found at %s: %v", path, err)
	}
	// The first 100 jobs (the trace's first ~15 minutes) keep the test short.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.SplitAfterN(string(b), "\n", 101)
	dir := t.TempDir()
	head := filepath.Join(dir, "FB-2009_head.tsv")
	require.NoError(t, os.WriteFile(head, []byte(strings.Join(lines[:100], "")), 0o644))
	c, err := parseFlags([]string{"-swim", head, "-scale", "0.1", "-runs", "1", "-env", "dedicated", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	assert.Contains(t, out.String(), "swim-FB-2009_head-dedicated")
	assert.Contains(t, out.String(), "100 jobs")
}
