package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
	"github.com/finegrain/finegrain/sim"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "preempt") }

// -workers is taken in [1, simrun.MaxWorkers] and refused beyond.
func TestWorkersFlag(t *testing.T) {
	clitest.WorkersFlag(t, func(args []string) (int, error) {
		c, err := parseFlags(args)
		return c.workers, err
	})
}

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message naming it, whether the program runs as a command or is called.
func TestStdoutFull(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	clitest.StdoutFull(t, "-runs", "1", "-scale", "0.1", "-quiet", "-out", out)
	_, err := run(config{seed: 1, runs: 1, scale: 0.1, mode: sim.Pull, out: out, workers: 1, quiet: true}, clitest.Full{}, io.Discard)
	assert.ErrorIs(t, err, clitest.ErrFull)
}
