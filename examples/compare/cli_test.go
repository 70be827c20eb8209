package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "compare") }

// -workers is taken in [1, simrun.MaxWorkers] and refused beyond.
func TestWorkersFlag(t *testing.T) {
	clitest.WorkersFlag(t, func(args []string) (int, error) {
		c, err := parseFlags(args)
		return c.workers, err
	})
}

// -compress below 1 that stretches a trace's submission times past the longest time
// is refused, naming the flag and the file, not replayed with times wrapped round.
func TestCompressOverflow(t *testing.T) {
	dir := t.TempDir()
	far := filepath.Join(dir, "far.tsv")
	require.NoError(t, os.WriteFile(far, []byte("job0\t100000000\t0\t100\t0\t100\njob1\t200000000\t0\t100\t0\t100\n"), 0o644))
	out := clitest.Refused(t, "-compress 0.01", "-swim", far, "-compress", "0.01", "-policies", "FIFO", "-runs", "1",
		"-quiet", "-out", filepath.Join(dir, "out"))
	assert.Contains(t, out, far)
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %s", out)
}

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message naming it, whether the program runs as a command or is called.
func TestStdoutFull(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "one.csv")
	require.NoError(t, os.WriteFile(tr, []byte("0,10,1,1,1,Terminated,200,0.01\n"), 0o644))
	args := []string{"-trace", "alibaba2017:" + tr, "-policies", "FIFO", "-runs", "1", "-quiet", "-out", filepath.Join(dir, "out")}
	clitest.StdoutFull(t, args...)
	c, err := parseFlags(args)
	require.NoError(t, err)
	assert.ErrorIs(t, compare(c, clitest.Full{}, io.Discard), clitest.ErrFull)
}

// -observe takes measured or oracle, and nothing else.
func TestObserveFlag(t *testing.T) {
	c, err := parseFlags([]string{"-observe", "oracle"})
	require.NoError(t, err)
	assert.Equal(t, sim.Oracle, c.observe)
	c, err = parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, sim.Measured, c.observe, "measured by default")
	_, err = parseFlags([]string{"-observe", "truth"})
	assert.ErrorContains(t, err, `-observe "truth"`)
}

// -yield takes colocated-first (the default) or proportional; -penalty a number in
// [0, 10].
func TestYieldAndPenaltyFlags(t *testing.T) {
	c, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, sim.ColocatedFirst, c.yield)
	assert.Equal(t, sim.DefaultPenalty, c.penalty)
	c, err = parseFlags([]string{"-yield", "proportional", "-penalty", "0.25"})
	require.NoError(t, err)
	assert.Equal(t, sim.Proportional, c.yield)
	assert.Equal(t, 0.25, c.penalty)
	for _, args := range [][]string{{"-yield", "fair"}, {"-penalty", "-0.1"}, {"-penalty", "11"}, {"-penalty", "NaN"}} {
		_, err := parseFlags(args)
		assert.ErrorContains(t, err, args[0], "%v", args)
	}
}

// -max-share caps FGM's queues at another share (sim.FGMMaxShare by default), in
// [0, 100]; the other policies keep their own queues.
func TestMaxShareFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{nil, sim.FGMMaxShare},
		{[]string{"-max-share", "1"}, 1},
		{[]string{"-max-share", "0.75", "-policies", "DRF,FGM"}, 0.75},
	} {
		c, err := parseFlags(tc.args)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, c.maxShare)
		n := 0
		for _, p := range append(c.lineup, c.seriesOf...) {
			if p.Name != "FGM" {
				if p.Queue != nil {
					assert.NotEqual(t, tc.want, queueMax(t, p), "%s keeps its own queues", p.Name)
				}
				continue
			}
			n++
			assert.Equal(t, tc.want, queueMax(t, p), "%v", tc.args)
		}
		assert.Equal(t, 2, n, "FGM in the tables and the series: %v", tc.args)
	}
	for _, args := range [][]string{{"-max-share", "-0.1"}, {"-max-share", "101"}, {"-max-share", "NaN"}, {"-max-share", "+Inf"}} {
		_, err := parseFlags(args)
		assert.ErrorContains(t, err, "-max-share", "%v", args)
	}
}

// queueMax is the max share p's queues are given.
func queueMax(t *testing.T, p sim.Policy) float64 {
	t.Helper()
	tree, err := fairness.NewTree(workload.Schema(), workload.Schema().MustTuple(100, 100, 100, 100))
	require.NoError(t, err)
	require.NoError(t, tree.AddQueue("", "q", p.Queue("q", 2)...))
	q, err := tree.Queue("q")
	require.NoError(t, err)
	return q.Share.Max
}
