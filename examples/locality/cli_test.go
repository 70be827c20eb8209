package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "locality") }

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message, not a success.
func TestStdoutFull(t *testing.T) { clitest.StdoutFull(t) }

// By default every line fits 120 columns; -wide labels the summary rows in the slot
// column alone, one column wider. The rest is the same.
func TestWide(t *testing.T) {
	out, wide := clitest.Wide(t)
	assert.Contains(t, out, "\njobs done:  mean      82.1s ")
	assert.Contains(t, wide, "\njobs done: mean            82.1s ")
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	assert.Equal(t, fields(wide), fields(out), "the same cells")
}
