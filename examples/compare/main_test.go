package main

import (
	"bytes"
	"encoding/csv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"dedicated", "cloud"}, c.envs)
	assert.Equal(t, []string{"offline", "online"}, c.modes)
	assert.Equal(t, 1.0, c.scale)
	assert.Equal(t, filepath.Join("out", "compare"), c.out, "compare's own folder under out/")
	assert.False(t, c.wide)
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

// -queues writes every queue at every sample of the first seed, one row per queue
// and sample, the policies' rows one after another; without it there is no such file.
func TestCompareQueues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queues bool
	}{{"without -queues", false}, {"with -queues", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"-scale", "0.01", "-runs", "2", "-series=false", "-env", "dedicated", "-mode", "online", "-policies", "DRF,FGM", "-out", dir, "-quiet"}
			if tc.queues {
				args = append(args, "-queues")
			}
			c, err := parseFlags(args)
			require.NoError(t, err)
			var out, errOut bytes.Buffer
			require.NoError(t, compare(c, &out, &errOut))
			b, err := os.ReadFile(filepath.Join(dir, "queues-online-dedicated.csv"))
			if !tc.queues {
				require.ErrorIs(t, err, os.ErrNotExist)
				return
			}
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			require.Equal(t, "policy,t_s,queue,active,pending,running,share,oldest_pending_s", lines[0])
			samples, err := os.ReadFile(filepath.Join(dir, "samples-online-dedicated.csv"))
			require.NoError(t, err)
			perPolicy := map[string]int{}
			for _, l := range strings.Split(strings.TrimSpace(string(samples)), "\n")[1:] {
				perPolicy[strings.SplitN(l, ",", 2)[0]]++
			}
			rows := map[string]int{}
			queues := map[string]bool{}
			for _, l := range lines[1:] {
				f := strings.Split(l, ",")
				require.Len(t, f, 8, l)
				rows[f[0]]++
				queues[f[2]] = true
			}
			require.NotEmpty(t, queues)
			for _, p := range []string{"DRF", "FGM"} {
				require.Positive(t, perPolicy[p], p)
				assert.Equal(t, perPolicy[p]*len(queues), rows[p], "%s: one row per queue and sample of the first seed", p)
			}
		})
	}
}

// -held adds Jain's indices over what is held at each sample instant: a table per
// scenario and two last columns of table.csv, equal to the peak-based ones for a
// request-based policy; every other cell is as without it.
func TestCompareHeld(t *testing.T) {
	run := func(held bool) (string, [][]string) {
		dir := t.TempDir()
		args := []string{"-scale", "0.01", "-runs", "2", "-series=false", "-env", "dedicated", "-mode", "online", "-policies", "DRF,FGM", "-out", dir, "-quiet"}
		if held {
			args = append(args, "-held")
		}
		c, err := parseFlags(args)
		require.NoError(t, err)
		require.Equal(t, held, c.held)
		var out, errOut bytes.Buffer
		require.NoError(t, compare(c, &out, &errOut))
		f, err := os.Open(filepath.Join(dir, "table.csv"))
		require.NoError(t, err)
		defer f.Close()
		table, err := csv.NewReader(f).ReadAll()
		require.NoError(t, err)
		return out.String(), table
	}
	out, table := run(false)
	heldOut, heldTable := run(true)
	assert.NotContains(t, out, "Jain held")
	assert.Contains(t, heldOut, "Jain all held")
	require.Len(t, heldTable, len(table))
	n := len(table[0])
	assert.Equal(t, []string{"held_backlogged_jain", "held_jain"}, heldTable[0][n:])
	jain, bl := slices.Index(table[0], "jain"), slices.Index(table[0], "backlogged_jain")
	for i := range table {
		require.Len(t, heldTable[i], n+2)
		assert.Equal(t, table[i], heldTable[i][:n], "row %d: the other cells as without -held", i)
		if i > 0 && heldTable[i][1] == "DRF" {
			assert.Equal(t, heldTable[i][bl], heldTable[i][n], "DRF holds its requests whole")
			assert.Equal(t, heldTable[i][jain], heldTable[i][n+1])
		}
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
		"jct-cdf-offline-dedicated.svg", "compare-offline-dedicated.svg", "compare-online-cloud.svg", "util-cpu-online-cloud.svg", "util-memory-offline-cloud.svg", "series-gain-dedicated.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		assert.NotEmpty(t, b, f)
		if strings.HasSuffix(f, ".svg") {
			assert.Contains(t, string(b), "<svg", f)
		}
	}
	assertFits(t, out.String())
	// 4 table scenarios of the 8 policies of sim.Comparison, 2 × 7 series volumes of
	// the 5 of sim.Policies, plus the header.
	runs, err := os.ReadFile(filepath.Join(dir, "runs.csv"))
	require.NoError(t, err)
	assert.Equal(t, 4*8+14*5+1, strings.Count(string(runs), "\n"))
}

// -policies names the lineup of the tables and the series; names are checked.
func TestPoliciesFlag(t *testing.T) {
	c, err := parseFlags([]string{"-policies", "drf, FGM,fgm+tetris"})
	require.NoError(t, err)
	names := func(ps []sim.Policy) (out []string) {
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	assert.Equal(t, []string{"DRF", "FGM", "FGM+Tetris"}, names(c.lineup))
	assert.Equal(t, names(c.lineup), names(c.seriesOf), "the series runs the same lineup")
	c, err = parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, names(sim.Comparison()), names(c.lineup))
	assert.Equal(t, names(sim.Policies()), names(c.seriesOf))
	for _, args := range [][]string{{"-policies", "DRF,LIFO"}, {"-policies", "DRF,drf"}, {"-policies", ","}} {
		_, err := parseFlags(args)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), "-policies", args)
		assert.Equal(t, 2, cli.Status(err), args)
	}
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

// The head of the Alibaba 2017 batch sample replays on the FGM cluster.
func TestCompareAlibaba2017(t *testing.T) {
	dir := t.TempDir()
	head := clitest.HeadFile(t, dir, "alibaba/v2017/batch_task_sample.csv", 300, 1)
	c, err := parseFlags([]string{"-trace", "alibaba2017:" + head, "-scale", "0.001", "-runs", "1", "-env", "dedicated", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	assert.Contains(t, out.String(), "alibaba2017-batch_task_sample-dedicated")
	assert.Contains(t, out.String(), "23 node(s)")
	assert.NotContains(t, out.String(), "submissions ÷")
	// Compressed onto a smaller cluster: busier.
	c, err = parseFlags([]string{"-trace", "alibaba2017:" + head, "-scale", "0.001", "-runs", "1", "-env", "dedicated",
		"-compress", "4", "-nodes", "5", "-out", dir})
	require.NoError(t, err)
	out.Reset()
	require.NoError(t, compare(c, &out, &errOut))
	assert.Contains(t, out.String(), "submissions ÷4, ")
	assert.Contains(t, out.String(), "5 node(s)")
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
	nodes := clitest.HeadFile(t, dir, "alibaba/gpu-v2023/openb_node_list_gpu_node.csv", 40, 30)
	list := clitest.HeadFile(t, dir, "alibaba/gpu-v2023/"+pods, 300, 27)
	c, err := parseFlags([]string{"-trace", "openb:" + nodes + "," + list, "-runs", "1", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	return &out
}

// -compress and -nodes: accepted in range for the traces they apply to, rejected with
// a usage error (exit status 2) naming the flag otherwise.
func TestCompressNodesFlags(t *testing.T) {
	c, err := parseFlags([]string{"-trace", "swim:a.tsv", "-compress", "8", "-nodes", "10"})
	require.NoError(t, err)
	assert.Equal(t, 8.0, c.compress)
	assert.Equal(t, 10, c.size)
	c, err = parseFlags([]string{"-trace", "alibaba2017:b.csv", "-compress", "0.5"})
	require.NoError(t, err)
	assert.Equal(t, 0.5, c.compress)
	c, err = parseFlags([]string{"-nodes", "46"})
	require.NoError(t, err, "-nodes sizes the generated workload's cluster too")
	assert.Equal(t, 46, c.size)
	c, err = parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, c.compress)
	assert.Equal(t, 0, c.size)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-trace", "swim:a", "-compress", "0"}, "-compress"},
		{[]string{"-trace", "swim:a", "-compress", "-2"}, "-compress"},
		{[]string{"-trace", "swim:a", "-compress", "NaN"}, "-compress"},
		{[]string{"-trace", "swim:a", "-compress", "+Inf"}, "-compress"},
		{[]string{"-trace", "swim:a", "-compress", "0.001"}, "-compress"},
		{[]string{"-trace", "swim:a", "-compress", "20000"}, "-compress"},
		{[]string{"-trace", "swim:a", "-compress", "x"}, "-compress"},
		{[]string{"-compress", "2"}, "-compress"},
		{[]string{"-trace", "openb:n,p", "-compress", "2"}, "-compress"},
		{[]string{"-trace", "swim:a", "-nodes", "-1"}, "-nodes"},
		{[]string{"-trace", "swim:a", "-nodes", "20000"}, "-nodes"},
		{[]string{"-trace", "openb:n,p", "-nodes", "5"}, "-nodes"},
	} {
		_, err := parseFlags(tc.args)
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.flag, tc.args)
		assert.Equal(t, 2, cli.Status(err), tc.args)
	}
}

// compressSubmits divides every submission time and changes nothing else.
func TestCompressSubmits(t *testing.T) {
	task := func(id string) []workload.Task { return []workload.Task{{ID: id + "/m0"}} }
	w := &workload.Workload{Name: "tiny", Blocks: []int64{7}, Jobs: []workload.Job{
		{ID: "a", Queue: "q", Submit: 0, Tasks: task("a"), InputBytes: 1},
		{ID: "b", Queue: "q", Submit: 10 * time.Second, Tasks: task("b")},
		{ID: "c", Queue: "r", Submit: 10 * time.Second, Tasks: task("c"), Priority: 3},
		{ID: "d", Queue: "q", Submit: 25 * time.Second, Tasks: task("d")},
		{ID: "e", Queue: "q", Submit: time.Minute + 1, Tasks: task("e")},
	}}
	before := *w
	before.Jobs = slices.Clone(w.Jobs)
	got, err := compressSubmits(w, 4)
	require.NoError(t, err)
	assert.Equal(t, before, *w, "the input is not modified")
	want := []time.Duration{0, 2500 * time.Millisecond, 2500 * time.Millisecond, 6250 * time.Millisecond, 15 * time.Second}
	require.Len(t, got.Jobs, len(w.Jobs))
	for i, j := range got.Jobs {
		assert.Equal(t, want[i], j.Submit, j.ID)
		j.Submit = w.Jobs[i].Submit
		assert.Equal(t, w.Jobs[i], j, "only Submit changes")
	}
	assert.Equal(t, w.Name, got.Name)
	assert.Equal(t, w.Blocks, got.Blocks)
	same, err := compressSubmits(w, 1)
	require.NoError(t, err)
	for i, j := range same.Jobs {
		assert.Equal(t, w.Jobs[i].Submit, j.Submit, "a factor of 1 keeps the times")
	}
	// Stretching works alike.
	slow, err := compressSubmits(w, 0.5)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Minute+2, slow.Jobs[4].Submit)
}

// A stretch (a factor below 1) past the longest time.Duration is refused, naming the
// job, not wrapped round to a negative time.
func TestCompressSubmitsOverflow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		submit time.Duration
		f      float64
		ok     bool
	}{
		{"far, stretched 100 times", 1e8 * time.Second, 0.01, false},
		{"the longest time, stretched twice", math.MaxInt64, 0.5, false},
		{"just past the longest time", math.MaxInt64/2 + 1e6, 0.5, false},
		{"within the longest time", math.MaxInt64 / 4, 0.5, true},
		{"the longest time, kept", math.MaxInt64, 1, true},
		{"the longest time, compressed", math.MaxInt64, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &workload.Workload{Jobs: []workload.Job{{ID: "j0"}, {ID: "far", Submit: tc.submit}}}
			got, err := compressSubmits(w, tc.f)
			if !tc.ok {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "job far")
				return
			}
			require.NoError(t, err)
			assert.GreaterOrEqual(t, got.Jobs[1].Submit, time.Duration(0))
		})
	}
}

// Any list of policies: the tables, gains and charts follow the list's order and find
// FGM by name, wherever it is.
func TestComparePolicyList(t *testing.T) {
	saved := policies
	t.Cleanup(func() { policies = saved })
	drf2 := sim.DRF()
	drf2.Name = "DRF-2"
	policies = func() []sim.Policy { return []sim.Policy{sim.FGM(), sim.FIFO(), sim.DRF(), drf2} }
	dir := t.TempDir()
	c, err := parseFlags([]string{"-scale", "0.01", "-runs", "1", "-mode", "offline", "-env", "dedicated", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	text := out.String()
	assert.Less(t, strings.Index(text, "  FGM "), strings.Index(text, "  FIFO "), "FGM first, as listed")
	assert.Contains(t, text, "DRF-2")
	table, err := os.ReadFile(filepath.Join(dir, "table.csv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(table)), "\n")
	require.Len(t, rows, 1+4)
	// DRF and DRF-2 are the same policy: the same gain.
	gains := func(r string) string { f := strings.Split(r, ","); return strings.Join(f[len(f)-5:len(f)-2], ",") }
	assert.Equal(t, gains(rows[3]), gains(rows[4]))
	assert.Equal(t, "0.000,0.000,0.000", gains(rows[1]), "no gain of FGM over itself")
	svg, err := os.ReadFile(filepath.Join(dir, "compare-offline-dedicated.svg"))
	require.NoError(t, err)
	for _, p := range []string{">FGM<", ">FIFO<", ">DRF<", ">DRF-2<"} {
		assert.Contains(t, string(svg), p)
	}
}

// Without FGM in the lineup there are no gains to show: the tables print none, the
// CSV leaves them empty and the series says why it is left out.
func TestCompareWithoutFGM(t *testing.T) {
	dir := t.TempDir()
	c, err := parseFlags([]string{"-policies", "DRF,Fair", "-scale", "0.01", "-runs", "1", "-mode", "online", "-env", "dedicated", "-out", dir})
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	require.NoError(t, compare(c, &out, &errOut))
	assert.Contains(t, out.String(), "FGM is not among -policies")
	assert.NotContains(t, out.String(), "+0.0%")
	table, err := os.ReadFile(filepath.Join(dir, "table.csv"))
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(table)), "\n")
	require.Len(t, rows, 3)
	for _, r := range rows[1:] {
		assert.True(t, strings.HasSuffix(r, ",,,"), r)
	}
}

// A trace whose jobs never finish (a task wider than any node) or all finish in the
// same time under a second (one short pod) runs to the end: tables, files and charts.
func TestCompareDegenerateTraces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		trace string // -trace, the files' names relative to the test's folder
		want  string
	}{
		{"no job finishes", map[string]string{"wide.csv": "0,10,1,1,1,Terminated,2000,0.01\n"},
			"alibaba2017:wide.csv", "(1 unfinished)"},
		{"one pod of 0.1 s", map[string]string{
			"n.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,32000,65536,1,V100\n",
			"p.csv": "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\np1,1000,1024,1,500,0,100\n"},
			"openb:n.csv,p.csv", "GPU fragmentation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
			}
			tr := strings.NewReplacer("wide.csv", filepath.Join(dir, "wide.csv"), "n.csv", filepath.Join(dir, "n.csv"),
				"p.csv", filepath.Join(dir, "p.csv")).Replace(tc.trace)
			out := filepath.Join(dir, "out")
			c, err := parseFlags([]string{"-trace", tr, "-policies", "FIFO", "-runs", "1", "-quiet", "-out", out})
			require.NoError(t, err)
			var stdout, stderr bytes.Buffer
			require.NotPanics(t, func() { require.NoError(t, compare(c, &stdout, &stderr)) })
			assert.Contains(t, stdout.String(), tc.want)
			svgs, err := filepath.Glob(filepath.Join(out, "*.svg"))
			require.NoError(t, err)
			for _, name := range []string{"jct-cdf-", "compare-"} {
				assert.True(t, slices.ContainsFunc(svgs, func(p string) bool { return strings.HasPrefix(filepath.Base(p), name) }),
					"%s*.svg in %v", name, svgs)
			}
		})
	}
}

// Inputs that cannot be read or used fail before the output folder is made: none is
// left behind.
func TestCompareBadInputLeavesNoOut(t *testing.T) {
	dir := t.TempDir()
	far := filepath.Join(dir, "far.tsv")
	require.NoError(t, os.WriteFile(far, []byte("job0\t100000000\t0\t100\t0\t100\n"), 0o644))
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("not,a,trace\n"), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing SWIM trace", []string{"-swim", filepath.Join(dir, "nonexist.tsv")}, "nonexist.tsv"},
		{"malformed Alibaba trace", []string{"-trace", "alibaba2017:" + bad}, "bad.csv"},
		{"missing PlanetLab folder", []string{"-planetlab", filepath.Join(dir, "no-planetlab"), "-env", "cloud"}, "no-planetlab"},
		{"-compress past the longest time", []string{"-swim", far, "-compress", "0.01"}, "-compress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			c, err := parseFlags(append(tc.args, "-policies", "FIFO", "-runs", "1", "-quiet", "-out", out))
			require.NoError(t, err)
			err = compare(c, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NoDirExists(t, out)
		})
	}
}

// The paired Jain difference compares FGM and a policy only at the instants both had
// at least two backlogged queues in the run of the same seed.
func TestPairedJain(t *testing.T) {
	sample := func(at time.Duration, backlogged int, j float64) sim.Sample {
		return sim.Sample{At: at * time.Second, Backlogged: backlogged, BackloggedJain: j}
	}
	mk := func(policy sim.Policy, seed uint64, samples ...sim.Sample) *run {
		return &run{seed: seed, policy: policy, res: &sim.Result{Samples: samples}}
	}
	fgm, drf := sim.FGM(), sim.DRF()
	tests := []struct {
		name  string
		runs  []*run
		diff  float64
		count int
	}{
		{
			name: "only shared backlogged instants count",
			runs: []*run{
				mk(fgm, 1, sample(0, 2, 0.9), sample(10, 2, 0.5), sample(20, 1, 1)),
				// DRF is backlogged longer; its instants at 20 s and 30 s have no FGM pair.
				mk(drf, 1, sample(0, 2, 0.7), sample(10, 3, 0.5), sample(20, 2, 1), sample(30, 2, 1)),
			},
			diff: 0.1, count: 2, // ((0.9−0.7) + (0.5−0.5)) / 2
		},
		{
			name: "seeds pair with their own seed",
			runs: []*run{
				mk(fgm, 1, sample(0, 2, 1)), mk(fgm, 2, sample(0, 2, 0.6)),
				mk(drf, 2, sample(0, 2, 0.8)), mk(drf, 1, sample(0, 2, 0.6)),
			},
			diff: 0.1, count: 2, // ((1−0.6) + (0.6−0.8)) / 2
		},
		{
			name: "no shared instant",
			runs: []*run{mk(fgm, 1, sample(0, 2, 1)), mk(drf, 1, sample(10, 2, 0.5))},
		},
		{
			name: "a seed without its pair is left out",
			runs: []*run{mk(fgm, 1, sample(0, 2, 1)), mk(drf, 2, sample(0, 2, 0.5))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff, n := pairedJain(tt.runs, drf.Name)
			assert.Equal(t, tt.count, n)
			assert.InDelta(t, tt.diff, diff, 1e-12)
		})
	}
}
