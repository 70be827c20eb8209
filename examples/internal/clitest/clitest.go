// Package clitest checks an example program's command line from the program's own
// tests: the test binary is started again as the program (see cli.AsProgram), so no
// second build is needed.
package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/simrun"
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

// Wide runs the program of the test binary with args, then with -wide added, and
// checks that both succeed and that every line of the default output fits 120
// columns; it returns both outputs, for the test to compare their cells.
func Wide(t *testing.T, args ...string) (out, wide string) {
	t.Helper()
	out, code := Run(t, args...)
	require.Equal(t, 0, code, out)
	wide, code = Run(t, append(args, "-wide")...)
	require.Equal(t, 0, code, wide)
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len(line), 120, "%q", line)
	}
	return out, wide
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

// RunToFull runs the program with args, its standard output /dev/full (every write
// fails: no space left on device), and returns what it wrote to standard error and its
// exit status. It skips the test where there is no /dev/full.
func RunToFull(t *testing.T, args ...string) (string, int) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cli.ChildEnv())
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = full, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stderr.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return stderr.String(), 0
}

// StdoutFull checks that the program run with args and its standard output on
// /dev/full exits with status 1 and says on one line that it could not write its
// standard output, without a panic (see RunToFull).
func StdoutFull(t *testing.T, args ...string) {
	t.Helper()
	out, code := RunToFull(t, args...)
	assert.Equal(t, 1, code, "%v > /dev/full: %s", args, out)
	assert.Contains(t, out, "/dev/stdout", "%v > /dev/full", args)
	assert.NotContains(t, out, "panic", "%v > /dev/full", args)
	assert.Equal(t, 1, bytes.Count([]byte(out), []byte("\n")), "one line: %q", out)
}

// Full is a writer on which every write fails, as on a full disk.
type Full struct{}

// Write fails.
func (Full) Write([]byte) (int, error) { return 0, ErrFull }

// ErrFull is the error of every write on Full.
var ErrFull = errors.New("write full: no space left on device")

// WorkersFlag checks a program's -workers flag: taken in [1, simrun.MaxWorkers] (parse
// parses the flags and returns the workers it got), refused beyond with exit status 2
// and a message naming the flag, also when the program runs as a command with extra
// arguments before it (a billion workers once ran out of memory).
func WorkersFlag(t *testing.T, parse func(args []string) (int, error), extra ...string) {
	t.Helper()
	for _, tc := range []struct {
		workers int
		ok      bool
	}{{1, true}, {simrun.MaxWorkers, true}, {0, false}, {-3, false}, {simrun.MaxWorkers + 1, false}, {1000000000, false}} {
		w := strconv.Itoa(tc.workers)
		got, err := parse([]string{"-workers", w})
		if tc.ok {
			require.NoError(t, err, w)
			assert.Equal(t, tc.workers, got)
			continue
		}
		assert.Equal(t, 2, cli.Status(err), "-workers %s: %v", w, err)
		Refused(t, "-workers "+w, append(append([]string(nil), extra...), "-workers", w)...)
	}
}

// HeadFile writes into dir the header and n rows of the shared data file rel (a path
// under ../shared/data, beside the repository), every stride-th row from the first,
// and returns the copy's path: a small sample of a trace for a test. It skips the test
// when the data is absent.
func HeadFile(t *testing.T, dir, rel string, n, stride int) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "data", rel)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("trace not found at %s: %v", path, err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	keep := lines[:1]
	for i := 1; i < len(lines) && len(keep) <= n; i += stride {
		keep = append(keep, lines[i])
	}
	out := filepath.Join(dir, filepath.Base(rel))
	require.NoError(t, os.WriteFile(out, []byte(strings.Join(keep, "")), 0o644))
	return out
}
