package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxColumns is how wide the default output may be.
const maxColumns = 120

// assertFits checks that every line of out fits maxColumns, in characters and in
// bytes (a tool that counts bytes, as awk may, finds it as narrow).
func assertFits(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), maxColumns, "%q", line)
		assert.LessOrEqual(t, len(line), maxColumns, "bytes: %q", line)
	}
}

// tableRows are a scenario's rows as aggregate makes them: FGM with gains of 0 and
// predictions, the others with gains and no prediction; in the cloud or not; with
// unfinished jobs under Tetris or not.
func tableRows(cloud, unfinished bool) []row {
	var rows []row
	for i, p := range []string{"FIFO", "Capacity", "Fair", "DRF", "Kubernetes", "Tetris", "LoadAware", "FGM"} {
		r := row{policy: p, makespan: 500 + 10*float64(i), jct: 20 + float64(i), p95: 130 + float64(i), resp: 0.5 + float64(i),
			jain: 0.5 + 0.01*float64(i), blJain: 0.9 - 0.01*float64(i), cpu: 0.3, mem: 0.25, allocCPU: 0.7, allocMem: 0.6,
			kills: float64(i % 2), cloud: cloud, coloCPU: 0.01 * float64(i), coloSqueezed: 0.02, coloSlow: 0.03}
		if p == reference {
			r.compressed, r.predicted, r.predRuns = 297, 300, 290
			r.mae, r.under = [2]float64{0.2, 0.17}, [2]float64{0.1, 0.22}
		} else {
			r.gainMakespan, r.gainJCT, r.gainP95 = 19.5, -2.7, 60.8
			r.pairedJain, r.pairedN = 0.045*float64(i-3), i
		}
		if p == "Tetris" && unfinished {
			r.unfinished = 2
		}
		rows = append(rows, r)
	}
	return rows
}

// cells is a table's cells, line by line, without the first cell of each line (the
// policy) and without the headers, the order kept.
func cells(text string) map[string][]string {
	out := map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "policy" {
			continue
		}
		out[f[0]] = append(out[f[0]], f[1:]...)
	}
	return out
}

// The default tables fit 120 columns and show every value of the wide one, the
// same text, each table led by the policy; in the dedicated environment, the
// co-located applications' columns ("—" throughout) are left out. (A makespan that
// says how many jobs did not finish, "9m10s (2 unfinished)", widens the first table
// beyond 120 columns.)
func TestPrintTablesSplit(t *testing.T) {
	for _, tc := range []struct{ cloud, unfinished bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("cloud=%v,unfinished=%v", tc.cloud, tc.unfinished), func(t *testing.T) {
			cloud := tc.cloud
			rows := tableRows(cloud, tc.unfinished)
			var wide, split bytes.Buffer
			require.NoError(t, printTable(&wide, rows))
			require.NoError(t, printTables(&split, rows))
			assert.Greater(t, maxLine(wide.String()), 200)
			if !tc.unfinished {
				assertFits(t, split.String())
			} else {
				assert.Contains(t, split.String(), "(2 unfinished)")
			}
			tables := strings.Count(split.String(), "      policy")
			w, s := cells(wide.String()), cells(split.String())
			require.Len(t, s, len(rows))
			for _, r := range rows {
				want := w[r.policy]
				if !cloud {
					assert.Equal(t, 2, tables)
					// The wide row: … pred err, mem under, 3 × colo, 4 × gain.
					want = slices.Delete(slices.Clone(want), len(want)-7, len(want)-4)
				} else {
					assert.Equal(t, 3, tables)
				}
				slices.Sort(want)
				got := slices.Clone(s[r.policy])
				slices.Sort(got)
				assert.Equal(t, want, got, r.policy)
			}
			for _, h := range []string{"makespan", "JCT mean", "Jain all", "FGM gain: makespan", "Jain paired", "kills", "pred err", "mem under"} {
				assert.Contains(t, split.String(), h)
			}
			assert.Equal(t, cloud, strings.Contains(split.String(), "colo lost"))
		})
	}
}

func maxLine(s string) int {
	m := 0
	for _, line := range strings.Split(s, "\n") {
		m = max(m, utf8.RuneCountInString(line))
	}
	return m
}

// printColumns prints all the columns in one table as the series always did, and
// splits them into tables of n columns, each led by the first.
func TestPrintColumns(t *testing.T) {
	table := [][]string{{"GiB"}}
	for p := range 8 {
		table[0] = append(table[0], fmt.Sprintf("policy-%d", p))
	}
	for g := 50; g <= 400; g += 50 {
		line := []string{fmt.Sprint(g)}
		for p := range 8 {
			line = append(line, fmt.Sprintf("%+.1f%% (%+.1f%%)", -100+float64(g*p)/30, float64(p)-100))
		}
		table = append(table, line)
	}
	// One table, as the series was printed before it could be split.
	var want bytes.Buffer
	tw := tabwriterFor(&want)
	for _, line := range table {
		for _, cell := range line {
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	require.NoError(t, tw.Flush())
	var got bytes.Buffer
	require.NoError(t, printColumns(&got, table, 0))
	assert.Equal(t, want.String(), got.String())
	got.Reset()
	require.NoError(t, printColumns(&got, table, 8))
	assert.Equal(t, want.String(), got.String())

	got.Reset()
	require.NoError(t, printColumns(&got, table, seriesColumns))
	assertFits(t, got.String())
	parts := strings.Split(got.String(), "\n\n")
	require.Len(t, parts, 2)
	for k, part := range parts {
		lines := strings.Split(strings.TrimSuffix(part, "\n"), "\n")
		require.Len(t, lines, len(table))
		for i, line := range lines {
			f := strings.Fields(line)
			assert.Equal(t, table[i][0], f[0], "every table led by the volume")
		}
		n := map[int]int{0: seriesColumns, 1: 8 - seriesColumns}[k]
		assert.Len(t, strings.Fields(lines[0]), 1+n)
	}
}

// -wide prints one table per scenario, every column side by side; by default the
// output fits 120 columns. The files are the same either way.
func TestWideFlag(t *testing.T) {
	run := func(wide bool) (string, string) {
		dir := t.TempDir()
		args := []string{"-scale", "0.01", "-runs", "1", "-mode", "offline", "-env", "cloud", "-policies", "FIFO,FGM", "-quiet", "-out", dir}
		if wide {
			args = append(args, "-wide")
		}
		c, err := parseFlags(args)
		require.NoError(t, err)
		var out, errOut bytes.Buffer
		require.NoError(t, compare(c, &out, &errOut))
		table, err := os.ReadFile(filepath.Join(dir, "table.csv"))
		require.NoError(t, err)
		return out.String(), string(table)
	}
	narrow, narrowCSV := run(false)
	wide, wideCSV := run(true)
	assertFits(t, narrow)
	assert.Greater(t, maxLine(wide), 200)
	assert.Contains(t, wide, "colo slow  FGM gain: makespan")
	assert.Equal(t, wideCSV, narrowCSV)
}
