package workload_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
)

func TestParseSWIM(t *testing.T) {
	in := "job0\t49\t49\t740773\t2339561\t627471\n" +
		"\n# a comment\r\n" +
		"job1 101 52 0 0 9838062 /extra/path/column\r\n" +
		"job2\t122.5\t21.5\t+7\t42\t37\n"
	jobs, err := workload.ParseSWIM(strings.NewReader(in), "t.tsv")
	require.NoError(t, err)
	assert.Equal(t, []workload.SWIMJob{
		{ID: "job0", Submit: 49 * time.Second, Gap: 49 * time.Second, InputBytes: 740773, ShuffleBytes: 2339561, OutputBytes: 627471, Line: 1},
		{ID: "job1", Submit: 101 * time.Second, Gap: 52 * time.Second, OutputBytes: 9838062, Line: 4},
		{ID: "job2", Submit: 122500 * time.Millisecond, Gap: 21500 * time.Millisecond, InputBytes: 7, ShuffleBytes: 42, OutputBytes: 37, Line: 5},
	}, jobs)
	assert.Equal(t, 1, jobs[0].MapTasks(workload.DefaultBlockSize))
	assert.Equal(t, 1, jobs[0].ReduceTasks(workload.DefaultBytesPerReduce))
	assert.Equal(t, 1, jobs[1].MapTasks(workload.DefaultBlockSize), "a job without input still gets one map task")
	assert.Equal(t, 0, jobs[1].ReduceTasks(workload.DefaultBytesPerReduce), "no shuffle, no reduce")
	bom, err := workload.ParseSWIM(strings.NewReader("\uFEFF"+in), "t.tsv")
	require.NoError(t, err, "a UTF-8 byte-order mark at the start is skipped")
	assert.Equal(t, jobs, bom, "a UTF-8 byte-order mark is not part of the first job's ID")
	big := workload.SWIMJob{InputBytes: 2*workload.DefaultBlockSize + 1, ShuffleBytes: 3 * workload.GiB}
	assert.Equal(t, 3, big.MapTasks(workload.DefaultBlockSize))
	assert.Equal(t, 3, big.ReduceTasks(workload.DefaultBytesPerReduce))
}

func TestParseSWIMErrors(t *testing.T) {
	good := "job0\t1\t1\t1\t1\t1\n"
	for _, tc := range []struct {
		name, in string
		want     error
		msg      string // expected prefix of the message: file:line:column
		line     int
		col      int
	}{
		{"too few fields", good + "job1\t2\t1\t5\n", workload.ErrSyntax, "f.tsv:2:5: shuffle bytes:", 2, 5},
		{"one field", "job9\n", workload.ErrSyntax, "f.tsv:1:2: submit time:", 1, 2},
		{"submit not a number", "job0\tabc\t1\t1\t1\t1\n", workload.ErrSyntax, "f.tsv:1:2: submit time:", 1, 2},
		{"submit negative", "job0\t-3\t1\t1\t1\t1\n", workload.ErrInvalidValue, "f.tsv:1:2: submit time:", 1, 2},
		{"submit NaN", "job0\tNaN\t1\t1\t1\t1\n", workload.ErrSyntax, "f.tsv:1:2:", 1, 2},
		{"submit too large", "job0\t1e300\t1\t1\t1\t1\n", workload.ErrInvalidValue, "f.tsv:1:2:", 1, 2},
		{"submit integer too large", "job0\t99999999999999\t1\t1\t1\t1\n", workload.ErrInvalidValue, "f.tsv:1:2:", 1, 2},
		{"gap not a number", "job0\t1\tx\t1\t1\t1\n", workload.ErrSyntax, "f.tsv:1:3: gap:", 1, 3},
		{"input decimal", good + "job1\t1\t1\t1.5\t1\t1\n", workload.ErrSyntax, "f.tsv:2:4: input bytes:", 2, 4},
		{"input negative", "job0\t1\t1\t-1\t1\t1\n", workload.ErrInvalidValue, "f.tsv:1:4: input bytes:", 1, 4},
		{"input overflow", "job0\t1\t1\t9223372036854775808\t1\t1\n", workload.ErrInvalidValue, "f.tsv:1:4:", 1, 4},
		{"shuffle junk", "job0\t1\t1\t1\t1x\t1\n", workload.ErrSyntax, "f.tsv:1:5: shuffle bytes:", 1, 5},
		{"output junk", "job0\t1\t1\t1\t1\t+\n", workload.ErrSyntax, "f.tsv:1:6: output bytes:", 1, 6},
		{"duplicate id", good + good, workload.ErrDuplicateID, "f.tsv:2:1: job id:", 2, 1},
		{"empty", "", workload.ErrEmpty, "f.tsv:0:", 0, 0},
		{"only comments", "# x\n\n", workload.ErrEmpty, "f.tsv:2:", 2, 0},
		{"line too long", good + strings.Repeat("x", 1<<20+1) + "\n", workload.ErrSyntax, "f.tsv:2:", 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := workload.ParseSWIM(strings.NewReader(tc.in), "f.tsv")
			require.Error(t, err)
			assert.Nil(t, jobs)
			assert.ErrorIs(t, err, tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), tc.msg), "message %q, want prefix %q", err.Error(), tc.msg)
			var pe *workload.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "f.tsv", pe.File)
			assert.Equal(t, tc.line, pe.Line)
			assert.Equal(t, tc.col, pe.Column)
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestLoadersReadErrors(t *testing.T) {
	_, err := workload.ParseSWIM(failingReader{}, "r")
	assert.ErrorContains(t, err, "r:1: disk on fire")
	_, err = workload.ParsePlanetLab(failingReader{}, "p")
	assert.ErrorContains(t, err, "p:1: disk on fire")
	_, err = workload.LoadSWIM(filepath.Join(t.TempDir(), "missing.tsv"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	s, err := workload.LoadPlanetLab(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Zero(t, s, "no series, not even a name, alongside an error")
	_, err = workload.LoadPlanetLabDir(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestLoadSWIMNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.tsv")
	require.NoError(t, os.WriteFile(path, []byte("job0\t1\t1\t1\t1\t1\njob1\t1\t1\tzz\t1\t1\n"), 0o600))
	_, err := workload.LoadSWIM(path)
	assert.ErrorIs(t, err, workload.ErrSyntax)
	assert.True(t, strings.HasPrefix(err.Error(), path+":2:4: input bytes:"), err.Error())

	good := filepath.Join(t.TempDir(), "good.tsv")
	require.NoError(t, os.WriteFile(good, []byte("a\t0\t0\t1\t2\t3\n"), 0o600))
	jobs, err := workload.LoadSWIM(good)
	require.NoError(t, err)
	assert.Equal(t, []workload.SWIMJob{{ID: "a", InputBytes: 1, ShuffleBytes: 2, OutputBytes: 3, Line: 1}}, jobs)
}

func TestParsePlanetLab(t *testing.T) {
	s, err := workload.ParsePlanetLab(strings.NewReader("# joined\n24\n 34 \r\n\n0\n100\n12.5\n"), "vm1")
	require.NoError(t, err)
	assert.Equal(t, "vm1", s.Name)
	assert.Equal(t, workload.PlanetLabStep, s.Step)
	assert.Equal(t, []float64{0.24, 0.34, 0, 1, 0.125}, s.Values)
	assert.Equal(t, 25*time.Minute, s.Period())
	assert.InDelta(t, (0.24+0.34+1+0.125)/5, s.Mean(), 1e-12)
	assert.Equal(t, 0.24, s.At(0))
	assert.Equal(t, 0.24, s.At(-time.Hour))
	assert.Equal(t, 0.34, s.At(5*time.Minute))
	assert.Equal(t, 0.125, s.At(24*time.Minute+59*time.Second))
	assert.Equal(t, 0.24, s.At(25*time.Minute), "repeats after its period")
	bom, err := workload.ParsePlanetLab(strings.NewReader("\uFEFF24\n34\n"), "vm1")
	require.NoError(t, err, "a UTF-8 byte-order mark at the start is skipped")
	assert.Equal(t, []float64{0.24, 0.34}, bom.Values)
	assert.Equal(t, 0.0, workload.Series{}.At(time.Hour))
	assert.Equal(t, 0.0, workload.Series{}.Mean())
}

func TestParsePlanetLabErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     error
		msg      string
		line     int
	}{
		{"not a number", "24\nabc\n", workload.ErrSyntax, "vm:2: syntax error: not a number: \"abc\"", 2},
		{"two numbers", "24 25\n", workload.ErrSyntax, "vm:1:", 1},
		{"negative", "1\n2\n-4\n", workload.ErrInvalidValue, "vm:3:", 3},
		{"above 100", "101\n", workload.ErrInvalidValue, "vm:1: invalid value: CPU % outside [0, 100]: \"101\"", 1},
		{"infinite", "inf\n", workload.ErrInvalidValue, "vm:1:", 1},
		{"NaN", "NaN\n", workload.ErrSyntax, "vm:1:", 1},
		{"empty", "", workload.ErrEmpty, "vm:0:", 0},
		{"only comments", "#\n\n#\n", workload.ErrEmpty, "vm:3:", 3},
		{"line too long", "1\n" + strings.Repeat("1", 1<<20+1), workload.ErrSyntax, "vm:2:", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.ParsePlanetLab(strings.NewReader(tc.in), "vm")
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), tc.msg), "message %q, want prefix %q", err.Error(), tc.msg)
			var pe *workload.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.line, pe.Line)
			assert.Equal(t, 0, pe.Column)
		})
	}
}

func TestLoadPlanetLabDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600))
	}
	write("b-vm", "10\n20\n")
	write("a-vm", "30\n")
	write(".hidden", "junk\n")
	write("README.md", "# not a trace\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	series, err := workload.LoadPlanetLabDir(dir)
	require.NoError(t, err)
	require.Len(t, series, 2)
	assert.Equal(t, "a-vm", series[0].Name)
	assert.Equal(t, []float64{0.3}, series[0].Values)
	assert.Equal(t, "b-vm", series[1].Name)
	assert.Equal(t, []float64{0.1, 0.2}, series[1].Values)

	write("c-vm", "10\n200\n")
	s, err := workload.LoadPlanetLab(filepath.Join(dir, "c-vm"))
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.Zero(t, s, "no series, not even a name, alongside an error")
	_, err = workload.LoadPlanetLabDir(dir)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.True(t, strings.HasPrefix(err.Error(), filepath.Join(dir, "c-vm")+":2:"), err.Error())

	_, err = workload.LoadPlanetLabDir(t.TempDir())
	assert.ErrorIs(t, err, workload.ErrEmpty)
}
