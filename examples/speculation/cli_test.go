package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/clitest"
)

func TestMain(m *testing.M) {
	cli.AsProgram(main)
	os.Exit(m.Run())
}

func TestCommandLine(t *testing.T) { clitest.CommandLine(t, "speculation") }

// Standard output that cannot be written (a full disk) is a failure, exit status 1
// with a message, not a success.
func TestStdoutFull(t *testing.T) { clitest.StdoutFull(t) }

// By default every line fits 120 columns, the sensitivity table split in one table per
// speculator; -wide prints it side by side. The rest is the same.
func TestWide(t *testing.T) {
	out, wide := clitest.Wide(t)
	assert.Contains(t, wide, "job completion  PRRL won/launched")
	const sens = "Sensitivity:"
	require.Contains(t, out, sens)
	assert.Equal(t, out[:strings.Index(out, sens)], wide[:strings.Index(wide, sens)])
	for _, s := range []string{"scenario  LATE won/launched  success  job completion    none", "scenario  PRRL won/launched  success  job completion    none"} {
		assert.Contains(t, out, s)
	}
}
