package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// The workload has every class, in its queue at its priority; a gang job's MinMember
// is its map count; jobs arrive in order; and the same seed draws the same jobs.
func TestWorkload(t *testing.T) {
	w, err := buildWorkload(1, 1)
	require.NoError(t, err)
	again, err := buildWorkload(1, 1)
	require.NoError(t, err)
	assert.Equal(t, w, again)
	seen := map[string]int{}
	for _, j := range w.Jobs {
		c, ok := classOf(j.Queue)
		require.True(t, ok, j.Queue)
		seen[c.name]++
		assert.Equal(t, c.priority, j.Priority, j.ID)
		if c.gang {
			assert.Equal(t, j.NumTasks(workload.Map), j.MinMember, j.ID)
		} else {
			assert.Zero(t, j.MinMember, j.ID)
		}
		assert.Positive(t, j.NumTasks(workload.Reduce), j.ID)
	}
	for _, c := range classes {
		assert.Equal(t, arrivals[c.name].count, seen[c.name], c.name)
	}
	small, err := buildWorkload(1, 0.01)
	require.NoError(t, err)
	assert.Len(t, small.Jobs, len(classes), "at least one job of each class")
}

// A small run in each mode: the three configurations differ as they should — no
// eviction without preemption, no reclaim without guarantees, some with them — the
// high-priority jobs finish sooner with priority preemption, no gang ever starts short
// of its MinMember, and the files are written.
func TestRun(t *testing.T) {
	for _, mode := range []sim.Mode{sim.Pull, sim.Push} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			results, err := run(config{seed: 1, runs: 1, scale: 0.5, mode: mode, out: dir, workers: 2, quiet: true}, &out, io.Discard)
			require.NoError(t, err)
			require.Len(t, results, len(configurations))
			byName := map[string]*sim.Result{}
			for _, r := range results {
				byName[configurations[r.conf].name] = r.res
				assert.Zero(t, r.res.Summary.PartialGangs, configurations[r.conf].name)
			}
			none, prio, both := byName["none"].Summary, byName["priority"].Summary, byName["priority+guarantees"].Summary
			assert.Zero(t, none.Preemptions+none.Reclaims)
			assert.Zero(t, none.PreemptedWork)
			assert.Positive(t, prio.Preemptions)
			assert.Zero(t, prio.Reclaims)
			assert.Positive(t, prio.PreemptedWork)
			assert.Positive(t, both.Reclaims)
			assert.Less(t, highMean(t, byName["priority"]), highMean(t, byName["none"]))

			assert.Contains(t, out.String(), "configuration  class  queue  priority")
			assert.Contains(t, out.String(), "partial gang runs")
			assert.Contains(t, out.String(), "\nfirst seed: ")
			for _, line := range strings.Split(out.String(), "\n") {
				assert.LessOrEqual(t, len(line), 120, "%q", line)
			}
			for _, f := range []string{"table.csv", "jct-cdf-high.svg", "jobs-none.csv", "evictions-priority.csv", "evictions-priority+guarantees.csv"} {
				st, err := os.Stat(filepath.Join(dir, f))
				require.NoError(t, err, f)
				assert.Positive(t, st.Size(), f)
			}
			svg, err := os.ReadFile(filepath.Join(dir, "jct-cdf-high.svg"))
			require.NoError(t, err)
			for _, c := range configurations {
				assert.Contains(t, string(svg), c.name, "the legend names every configuration")
			}
		})
	}
}

// highMean is the mean completion time of r's high-priority jobs, which must all
// have finished.
func highMean(t *testing.T, r *sim.Result) float64 {
	t.Helper()
	var total float64
	n := 0
	for _, j := range r.Jobs {
		if c, _ := classOf(j.Queue); c.name == "high" {
			require.True(t, j.Finished, j.ID)
			total += j.Completion().Seconds()
			n++
		}
	}
	require.Positive(t, n)
	return total / float64(n)
}

// -wide prints the heading on one line, as wide as it comes; the rest of the output
// and the files are the same.
func TestWide(t *testing.T) {
	var outs, tables [2]string
	for i, wide := range []bool{false, true} {
		dir := t.TempDir()
		var out bytes.Buffer
		_, err := run(config{seed: 1, runs: 1, scale: 0.25, mode: sim.Pull, out: dir, wide: wide, workers: 2, quiet: true}, &out, io.Discard)
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "table.csv"))
		require.NoError(t, err)
		outs[i], tables[i] = out.String(), string(b)
	}
	assert.Equal(t, tables[0], tables[1])
	narrow, wide := strings.SplitN(outs[0], "\n", 3), strings.SplitN(outs[1], "\n", 2)
	head, workload := strings.TrimSuffix(narrow[0], " ==")[3:], strings.TrimPrefix(narrow[1], "first seed: ")
	assert.True(t, strings.HasPrefix(wide[0], "== fgm-10: 10 nodes of 16 cores and 32 GiB; first seed: "+workload+"; "), wide[0])
	assert.True(t, strings.HasSuffix(wide[0], strings.SplitN(head, "; ", 2)[1]+" =="), wide[0])
	// After the heading, the same lines, but for the last (wall time and folder).
	rest := func(s string) string { return s[:strings.LastIndex(s, " simulations in ")] }
	assert.Equal(t, rest(narrow[2]), rest(wide[1]))
}

// The same seed gives the same tables.
func TestDeterministic(t *testing.T) {
	tables := make([][]byte, 2)
	for i := range tables {
		dir := t.TempDir()
		_, err := run(config{seed: 3, runs: 1, scale: 0.25, mode: sim.Pull, out: dir, workers: 2, quiet: true}, io.Discard, io.Discard)
		require.NoError(t, err)
		tables[i], err = os.ReadFile(filepath.Join(dir, "table.csv"))
		require.NoError(t, err)
	}
	assert.Equal(t, string(tables[0]), string(tables[1]))
}

func TestFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, config{seed: 1, runs: 3, scale: 1, mode: sim.Pull, out: filepath.Join("out", "preempt"), workers: c.workers}, c)
	c, err = parseFlags([]string{"-wide"})
	require.NoError(t, err)
	assert.True(t, c.wide)
	c, err = parseFlags([]string{"-mode", "push", "-runs", "2", "-scale", "0.5"})
	require.NoError(t, err)
	assert.Equal(t, sim.Push, c.mode)
	for _, args := range [][]string{{"-runs", "0"}, {"-runs", "101"}, {"-scale", "0"}, {"-scale", "NaN"}, {"-workers", "0"}, {"-mode", "sideways"}} {
		_, err := parseFlags(args)
		assert.Equal(t, 2, cli.Status(err), "%v: %v", args, err)
	}
}
