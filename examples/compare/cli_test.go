package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
	"github.com/finegrain/finegrain/examples/internal/simrun"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "compare") }

// -workers is taken in [1, simrun.MaxWorkers] and refused beyond, with exit status 2
// and a message naming the flag (a billion workers ran out of memory).
func TestWorkersFlag(t *testing.T) {
	for _, tc := range []struct {
		workers int
		ok      bool
	}{{1, true}, {simrun.MaxWorkers, true}, {0, false}, {-3, false}, {simrun.MaxWorkers + 1, false}, {1000000000, false}} {
		w := strconv.Itoa(tc.workers)
		c, err := parseFlags([]string{"-workers", w})
		if tc.ok {
			require.NoError(t, err, w)
			assert.Equal(t, tc.workers, c.workers)
			continue
		}
		assert.Equal(t, 2, cli.Status(err), "-workers %s: %v", w, err)
		clitest.Refused(t, "-workers "+w, "-workers", w)
	}
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
