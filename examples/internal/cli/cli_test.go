package cli_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
)

func TestParseAndStatus(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
	}{
		{nil, 0},
		{[]string{"-n", "3"}, 0},
		{[]string{"-h"}, 0},
		{[]string{"-help"}, 0},
		{[]string{"-nope"}, 2},
		{[]string{"-n", "x"}, 2},
		{[]string{"stray"}, 2},
	} {
		fs := cli.NewFlags("demo", "Does nothing.")
		var out bytes.Buffer
		fs.SetOutput(&out)
		fs.Int("n", 1, "a number")
		err := cli.Parse(fs, tc.args)
		assert.Equal(t, tc.status, cli.Status(err), "%v: %v", tc.args, err)
		if err != nil {
			assert.Contains(t, out.String(), "usage: go run ./examples/demo [flags]", "%v", tc.args)
			assert.Contains(t, out.String(), "Does nothing.", "%v", tc.args)
			assert.Contains(t, out.String(), "-n int", "%v", tc.args)
		}
	}
	assert.Equal(t, 2, cli.Status(cli.Usagef("-runs %d: must be at least 1", 0)))
	assert.Equal(t, 1, cli.Status(errors.New("simulation failed")))
}

func TestReport(t *testing.T) {
	var out bytes.Buffer
	cli.Report(&out, "demo", nil)
	cli.Report(&out, "demo", flag.ErrHelp)
	assert.Empty(t, out.String(), "nothing for success and for a request for help")
	cli.Report(&out, "demo", cli.Usagef("-n %d: too small", 0))
	assert.Equal(t, "demo: -n 0: too small\n", out.String())

	// A command-line error Parse printed with the usage is not printed again.
	out.Reset()
	fs := cli.NewFlags("demo", "Does nothing.")
	fs.SetOutput(&out)
	err := cli.Parse(fs, []string{"stray"})
	require.Error(t, err)
	shown := out.Len()
	cli.Report(&out, "demo", err)
	assert.Equal(t, shown, out.Len())
	assert.Equal(t, 1, strings.Count(out.String(), "unexpected arguments"))
}

// Progress draws nothing where it would land in a log: a buffer, a file, or when quiet.
func TestProgressQuietOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := cli.NewProgress(&buf, 100, "work", "tasks", false)
	p.Add(40)
	p.Add(60)
	p.Finish()
	assert.Empty(t, buf.String())

	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, cli.IsTerminal(f))
	p = cli.NewProgress(f, 10, "work", "tasks", false)
	p.Add(10)
	p.Finish()
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, st.Size())
}
