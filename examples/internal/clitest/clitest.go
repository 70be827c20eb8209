// Package clitest checks an example program's command line from the program's own
// tests: the test binary is started again as the program (see cli.AsProgram), so no
// second build is needed.
package clitest

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
)

// CommandLine checks that the example NAME answers -h with its usage and exit status
// 0, and refuses an unknown flag and a stray argument with its usage and exit status 2.
func CommandLine(t *testing.T, name string) {
	t.Helper()
	out, code := Run(t, "-h")
	assert.Equal(t, 0, code, "-h: %s", out)
	assert.Contains(t, out, "usage: go run ./examples/"+name)
	for _, args := range [][]string{{"-no-such-flag"}, {"stray"}} {
		out, code := Run(t, args...)
		assert.Equal(t, 2, code, "%v: %s", args, out)
		assert.Contains(t, out, "usage: go run ./examples/"+name, "%v", args)
	}
}

// Run runs the program (the test binary standing in for it) with args and returns its
// combined output and exit status.
func Run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cli.ChildEnv())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err)
	return string(out), 0
}

// Refused checks that the program refuses args with exit status 2 and a message that
// contains want (the flag or file at fault), and no Go panic or stack trace; it
// returns the program's output.
func Refused(t *testing.T, want string, args ...string) string {
	t.Helper()
	return Fails(t, 2, want, args...)
}

// Fails checks that the program run with args exits with status code and a message
// that contains want, and no Go panic or stack trace; it returns the program's output.
func Fails(t *testing.T, code int, want string, args ...string) string {
	t.Helper()
	out, got := Run(t, args...)
	assert.Equal(t, code, got, "%v: %s", args, out)
	assert.Contains(t, out, want, "%v", args)
	assert.NotContains(t, out, "panic", "%v", args)
	assert.NotContains(t, out, "goroutine ", "%v", args)
	return out
}
