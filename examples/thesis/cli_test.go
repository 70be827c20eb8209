package main

import (
	"os"
	"strconv"
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

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "thesis") }

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
		clitest.Refused(t, "-workers "+w, "-exp", "1", "-scale", "0.01", "-workers", w)
	}
}

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message, not a success.
func TestStdoutFull(t *testing.T) { clitest.StdoutFull(t, "-exp", "1", "-scale", "0.01", "-quiet") }
