package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3, 4}, c.exps)
	assert.Equal(t, DefaultScale, c.scale)
	assert.Equal(t, uint64(1), c.seed)
	c, err = parseFlags([]string{"-exp", "4, 2", "-scale", "0.1", "-seed", "9", "-workers", "3"})
	require.NoError(t, err)
	assert.Equal(t, config{scale: 0.1, seed: 9, exps: []int{2, 4}, workers: 3}, c)
	for _, args := range [][]string{
		{"-exp", "5"}, {"-exp", "0"}, {"-exp", "1,1"}, {"-exp", ""}, {"-exp", "a"},
		{"-workers", "0"}, {"-scale", "0"}, {"-scale", "-1"}, {"-scale", "NaN"}, {"-scale", "1001"},
		{"stray"}, {"-nope"},
	} {
		_, err := parseFlags(args)
		assert.Error(t, err, args)
	}
}

// The comparison at a tiny size — experiment 1 at the smallest scale (one small job per
// queue, 180 tasks) on a thesis cluster of 3 racks × 6 nodes (2 slow, 2 normal, 2 fast,
// 72 slots, so that there are 2.5 waves as at full size) — run with one worker and with
// two, gives the same tables, and every run is consistent: all jobs finish; every run
// started has a locality, whose shares add up to 100%; only the speculating policies
// launch backups, and never win more than they launch.
func TestTiny(t *testing.T) {
	cl, err := workload.ThesisCluster(workload.WithNodesPerRack(6))
	require.NoError(t, err)
	var out [2]bytes.Buffer
	for i, workers := range []int{1, 2} {
		c := config{scale: 0.01, seed: 3, exps: []int{1}, workers: workers}
		ws, runs, err := simulate(&c, &cl, io.Discard)
		require.NoError(t, err)
		require.Len(t, runs, len(c.exps)*len(policies()))
		consistent(t, ws, runs)
		require.NoError(t, report(&c, &cl, ws, runs, &out[i]))
	}
	assert.Equal(t, out[0].String(), out[1].String(), "the tables depend on the number of workers")
	for _, s := range []string{"Table 1", "Table 2", "Fair+PRL", "Fair+LATE", "Fair+PRRL"} {
		assert.Contains(t, out[0].String(), s)
	}
}

func consistent(t *testing.T, ws map[int]*workload.Workload, runs []*run) {
	t.Helper()
	speculating := map[string]bool{sim.FairLATE().Name: true, sim.FairPRRL().Name: true}
	for _, r := range runs {
		s, w, name := &r.sum, ws[r.exp], r.policy.Name
		withInput := 0
		for _, j := range w.Jobs {
			for _, tk := range j.Tasks {
				if len(tk.Blocks) > 0 {
					withInput++
				}
			}
		}
		assert.Equal(t, len(w.Jobs), s.JobsFinished, name)
		assert.Equal(t, w.NumTasks(), s.Tasks, name)
		assert.GreaterOrEqual(t, s.Placements, s.Tasks, name)
		started := 0
		for _, n := range s.Locality {
			started += n
		}
		assert.Equal(t, s.Placements+s.Backups, started, name, "every placement and backup is counted once")
		if withInput == w.NumTasks() {
			assert.Zero(t, s.NoInput, name)
		}
		loc := localityShares(s)
		assert.InDelta(t, 100, loc[0]+loc[1]+loc[2], 1e-9, name)
		assert.GreaterOrEqual(t, s.BackupsWon, 0, name)
		assert.LessOrEqual(t, s.BackupsWon, s.Backups, name)
		if !speculating[name] {
			assert.Zero(t, s.Backups, name)
		}
		if rate, ok := successRate(s); ok {
			assert.GreaterOrEqual(t, rate, 0.0, name)
			assert.LessOrEqual(t, rate, 100.0, name)
		}
		assert.Positive(t, s.Makespan, name)
		assert.LessOrEqual(t, s.JobCompletion.Max, s.Makespan, name)
	}
}
