package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/clitest"
	"github.com/finegrain/finegrain/sim"
)

// The walk-through end to end: the detectors find stragglers, the plan serves every
// one of them within its SLO at the speed model the walk-through assumes,
// Planner.Apply accepts the plan (no memory over capacity), the plan takes something
// from batch tasks, and recovery gives all of it back.
func TestWalkthrough(t *testing.T) {
	o, err := walkthrough(io.Discard)
	require.NoError(t, err)
	require.Positive(t, o.stragglers)
	assert.Equal(t, o.stragglers, o.served)
	assert.False(t, o.taken.IsZero())
	assert.True(t, o.owed.IsZero(), "still owed: %v", o.owed)
}

// small is a quick configuration: one seed of a tenth of the generated workload.
func small(t *testing.T, args ...string) config {
	t.Helper()
	c, err := parseFlags(append([]string{"-runs", "1", "-scale", "0.1", "-quiet", "-out", t.TempDir()}, args...))
	require.NoError(t, err)
	return c
}

// A small run: the four policies in order, each run finishing every job; only the
// scale-up policies run rounds, only LATE launches backups, only the one with reclaim
// shrinks batch tasks; the table and its file are written; the same seed gives the
// same results.
func TestRun(t *testing.T) {
	c := small(t)
	var out bytes.Buffer
	results, err := run(c, &out, io.Discard)
	require.NoError(t, err)
	require.Len(t, results, 4)
	names := []string{"Fair", "Fair+LATE", "Fair+ScaleUp/idle", "Fair+ScaleUp"}
	for i, r := range results {
		s := r.res.Summary
		assert.Equal(t, names[i], r.res.Policy)
		assert.Equal(t, s.Jobs, s.JobsFinished, names[i])
		assert.Positive(t, s.Mixed.LSTasks, names[i])
		assert.Equal(t, i >= 2, s.Mixed.Rounds > 0, names[i])
		if i != 1 {
			assert.Zero(t, s.Backups, names[i])
		}
		if i != 3 {
			assert.Zero(t, s.Mixed.Reclaimed+s.Mixed.Preempted+s.Mixed.Restored+s.Mixed.ShrinkKills, names[i])
		}
	}
	text := out.String()
	for _, want := range append(names, "SLO met", "batch slow", "SLO attainment by seed", "scale-up above no action on") {
		assert.Contains(t, text, want)
	}
	for _, line := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 120, line)
	}
	f, err := os.Open(filepath.Join(c.out, "table.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	assert.Len(t, rows, 1+4+4, "a header, a row per seed and policy, a row per policy")
	assert.Equal(t, "slo_attainment", rows[0][4])

	again, err := run(c, io.Discard, io.Discard)
	require.NoError(t, err)
	for i := range results {
		assert.Equal(t, results[i].res.Summary, again[i].res.Summary)
	}
}

// By default the scale-up policies reclaim no memory, so no batch task is killed for
// outgrowing a reclaim; -reclaim-memory keeps their names; -cloud=false runs without
// the background; -resize and -period reach the simulator.
func TestVariants(t *testing.T) {
	c := small(t, "-cloud=false", "-resize", "capped-shrink", "-period", "2s")
	assert.False(t, c.reclaimMemory)
	assert.Equal(t, sim.CappedShrink, c.resize)
	assert.Equal(t, 2*time.Second, c.period)
	var out bytes.Buffer
	results, err := run(c, &out, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "Fair+ScaleUp/idle", results[2].res.Policy)
	assert.Equal(t, "Fair+ScaleUp", results[3].res.Policy)
	assert.Zero(t, results[3].res.Summary.Mixed.ShrinkKills)
	assert.False(t, results[0].res.Cloud)
	assert.Contains(t, out.String(), "dedicated")
	assert.Contains(t, out.String(), "capped-shrink resizes, memory reclaimed: false")
}

// Flags out of range are refused with a usage error naming them.
func TestFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, config{seed: 1, runs: 3, period: sim.DefaultScaleUpEvery, scale: 1, ls: 0.3, slo: 1.5, cloud: true, resize: sim.Elastic,
		out: defaultOut, workers: c.workers}, c)
	c, err = parseFlags([]string{"-trace", "openb:n.csv,p.csv", "-nodes", "20"})
	require.NoError(t, err)
	assert.Equal(t, []string{"n.csv", "p.csv"}, c.trace)
	assert.Equal(t, 0.001, c.scale)
	assert.Equal(t, 20, c.nodes)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-runs", "0"}, "-runs"},
		{[]string{"-period", "0s"}, "-period"},
		{[]string{"-period", "-1s"}, "-period"},
		{[]string{"-scale", "-1"}, "-scale"},
		{[]string{"-scale", "NaN"}, "-scale"},
		{[]string{"-trace", "openb:n,p", "-scale", "2"}, "-scale"},
		{[]string{"-ls", "0"}, "-ls"},
		{[]string{"-ls", "1.5"}, "-ls"},
		{[]string{"-slo", "0.5"}, "-slo"},
		{[]string{"-slo", "+Inf"}, "-slo"},
		{[]string{"-resize", "rubber"}, "-resize"},
		{[]string{"-trace", "swim:x"}, "-trace"},
		{[]string{"-trace", "openb:n"}, "-trace"},
		{[]string{"-trace", "openb:,p"}, "-trace"},
		{[]string{"-nodes", "5"}, "-nodes"},
		{[]string{"-trace", "openb:n,p", "-nodes", "-1"}, "-nodes"},
	} {
		_, err := parseFlags(tc.args)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.flag, "%v", tc.args)
	}
}

// A sample of the openb trace replays on the head of its node list: its LS pods are
// the latency-sensitive tasks, the seeds share the workload.
func TestRunOpenB(t *testing.T) {
	dir := t.TempDir()
	nodes := clitest.HeadFile(t, dir, "alibaba/gpu-v2023/openb_node_list_gpu_node.csv", 40, 30)
	pods := clitest.HeadFile(t, dir, "alibaba/gpu-v2023/openb_pod_list_gpushare40.csv", 300, 27)
	c, err := parseFlags([]string{"-trace", "openb:" + nodes + "," + pods, "-nodes", "10", "-runs", "2", "-quiet", "-out", dir})
	require.NoError(t, err)
	var out bytes.Buffer
	results, err := run(c, &out, io.Discard)
	require.NoError(t, err)
	require.Len(t, results, 8)
	assert.Same(t, results[0].sc.w, results[4].sc.w)
	assert.Positive(t, results[0].res.Summary.Mixed.LSTasks)
	assert.Contains(t, out.String(), "openb-gpushare40")
	assert.Contains(t, out.String(), "10 openb nodes")
}
