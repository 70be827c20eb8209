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

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "preempt") }
