package main

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "mixed") }

// -workers is taken in [1, simrun.MaxWorkers] and refused beyond.
func TestWorkersFlag(t *testing.T) {
	clitest.WorkersFlag(t, func(args []string) (int, error) {
		c, err := parseFlags(args)
		return c.workers, err
	})
}

// A bad flag value exits with status 2 and names the flag.
func TestRefused(t *testing.T) { clitest.Refused(t, "-period", "-period", "0s") }

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message, not a success: the walk-through's and the comparison's.
func TestStdoutFull(t *testing.T) {
	clitest.StdoutFull(t, "-walkthrough")
	out := t.TempDir()
	clitest.StdoutFull(t, "-runs", "1", "-scale", "0.05", "-quiet", "-out", out)
	_, err := run(config{seed: 1, runs: 1, period: 5e9, scale: 0.05, ls: 0.3, slo: 1.5, out: out, workers: 1, quiet: true}, clitest.Full{}, io.Discard)
	assert.ErrorIs(t, err, clitest.ErrFull)
}
