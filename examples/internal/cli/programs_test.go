package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every example program answers -h with its usage and exit status 0, and refuses an
// unknown flag and a stray argument with exit status 2.
func TestPrograms(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the programs with")
	}
	entries, err := os.ReadDir("../..")
	require.NoError(t, err)
	bin := t.TempDir()
	args := append([]string{"build"}, raceFlags...)
	build := exec.Command(goTool, append(args, "-o", bin+string(filepath.Separator), "./...")...)
	build.Dir = "../.."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var programs int
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "internal" {
			continue
		}
		name := e.Name()
		programs++
		path := filepath.Join(bin, name)
		t.Run(name, func(t *testing.T) {
			out, code := runProgram(t, path, "-h")
			assert.Equal(t, 0, code, "%s", out)
			assert.Contains(t, out, "usage: go run ./examples/"+name)
			for _, args := range [][]string{{"-no-such-flag"}, {"stray"}} {
				out, code := runProgram(t, path, args...)
				assert.Equal(t, 2, code, "%v: %s", args, out)
				assert.Contains(t, out, "usage:", "%v", args)
			}
		})
	}
	assert.GreaterOrEqual(t, programs, 8, "example programs found")
}

func runProgram(t *testing.T, path string, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command(path, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	require.NoError(t, err)
	return strings.TrimSpace(string(out)), 0
}
