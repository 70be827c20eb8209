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

func TestParseTrace(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		kind  string
		paths []string
		scale float64
		envs  []string
	}{
		{[]string{"-trace", "swim:a.tsv"}, traceSWIM, []string{"a.tsv"}, 0.1, []string{"dedicated", "cloud"}},
		{[]string{"-swim", "a.tsv"}, traceSWIM, []string{"a.tsv"}, 0.1, []string{"dedicated", "cloud"}},
		{[]string{"-trace", "alibaba2017:b.csv", "-scale", "0.5"}, traceAlibaba, []string{"b.csv"}, 0.5, []string{"dedicated", "cloud"}},
		{[]string{"-trace", "openb:n.csv,p.csv"}, traceOpenB, []string{"n.csv", "p.csv"}, 0.001, []string{"dedicated"}},
		{[]string{"-trace", "openb:n.csv,p.csv", "-env", "dedicated"}, traceOpenB, []string{"n.csv", "p.csv"}, 0.001, []string{"dedicated"}},
	} {
		c, err := parseFlags(tc.args)
		require.NoError(t, err, tc.args)
		assert.Equal(t, tc.kind, c.traceKind, tc.args)
		assert.Equal(t, tc.paths, c.tracePath, tc.args)
		assert.Equal(t, tc.scale, c.scale, tc.args)
		assert.Equal(t, tc.envs, c.envs, tc.args)
	}
	for _, args := range [][]string{
		{"-trace", "swim"}, {"-trace", "swim:"}, {"-trace", "gfs:x"}, {"-trace", "openb:n.csv"},
		{"-trace", "openb:,p.csv"}, {"-trace", "openb:n,p,q"}, {"-swim", "a", "-trace", "swim:b"},
		{"-trace", "openb:n,p", "-env", "cloud"}, {"-trace", "openb:n,p", "-scale", "2"},
		{"-fgd-coverage", "0"}, {"-fgd-coverage", "1.5"}, {"-fgd-coverage", "NaN"},
	} {
		_, err := parseFlags(args)
		assert.Error(t, err, args)
	}
}

// headFile writes the header and n rows of the shared data file rel into dir, every
// stride-th row from the first, or skips when the file is absent.
func headFile(t *testing.T, dir, rel string, n, stride int) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "data", rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("trace not found at %s: %v", path, err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	keep := lines[:1]
	for i := 1; i < len(lines) && len(keep) <= n; i += stride {
		keep = append(keep, lines[i])
	}
	out := filepath.Join(dir, filepath.Base(rel))
	require.NoError(t, os.WriteFile(out, []byte(strings.Join(keep, "")), 0o644))
	return out
}

// The head of the Alibaba 2017 batch sample replays on the FGM cluster.
func TestCompareAlibaba2017(t *testing.T) {
	dir := t.TempDir()
	head := headFile(t, dir, "alibaba/v2017/batch_task_sample.csv", 300, 1)
	c, err := parseFlags([]string{"-trace", "alibaba2017:" + head, "-scale", "0.001", "-runs", "1", "-env", "dedicated", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	assert.Contains(t, out.String(), "alibaba2017-batch_task_sample-dedicated")
	assert.Contains(t, out.String(), "23 node(s)")
}

// The head of an openb pod list replays on the head of the node list, and the fill
// experiment runs on them.
func TestCompareOpenB(t *testing.T) {
	dir := t.TempDir()
	out := compareOpenB(t, dir, "openb_pod_list_gpushare40.csv")
	assert.Contains(t, out.String(), "openb-gpushare40-dedicated")
	assert.Contains(t, out.String(), "40 node(s)")
	assert.Contains(t, out.String(), "GPU fragmentation")
	for _, p := range []string{"BestFit", "DotProduct", "Packing", "FGD"} {
		assert.Contains(t, out.String(), p)
	}
	for _, f := range []string{"fill.csv", "fill-unallocated-gpu.svg", "table.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.NotEmpty(t, b, f)
	}
}

// A pod list without times (multigpu20) runs the fragmentation experiment alone.
func TestCompareOpenBUntimed(t *testing.T) {
	out := compareOpenB(t, t.TempDir(), "openb_pod_list_multigpu20.csv")
	assert.Contains(t, out.String(), "no pod times")
	assert.Contains(t, out.String(), "GPU fragmentation")
	assert.NotContains(t, out.String(), "JCT mean")
	assert.Contains(t, out.String(), "0 simulations")
}

// compareOpenB runs compare, one seed, on 40 of the shared openb GPU nodes and 300 pods
// of pod list pods, writing to dir, and returns what it printed; it skips without the
// data.
func compareOpenB(t *testing.T, dir, pods string) *bytes.Buffer {
	t.Helper()
	nodes := headFile(t, dir, "alibaba/gpu-v2023/openb_node_list_gpu_node.csv", 40, 30)
	list := headFile(t, dir, "alibaba/gpu-v2023/"+pods, 300, 27)
	c, err := parseFlags([]string{"-trace", "openb:" + nodes + "," + list, "-runs", "1", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	return &out
}
