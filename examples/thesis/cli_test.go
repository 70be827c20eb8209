package main

import (
	"os"
	"testing"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "thesis") }

// -workers is taken in [1, simrun.MaxWorkers] and refused beyond.
func TestWorkersFlag(t *testing.T) {
	clitest.WorkersFlag(t, func(args []string) (int, error) {
		c, err := parseFlags(args)
		return c.workers, err
	}, "-exp", "1", "-scale", "0.01")
}

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message, not a success.
func TestStdoutFull(t *testing.T) { clitest.StdoutFull(t, "-exp", "1", "-scale", "0.01", "-quiet") }
