package output_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/output"
)

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
		947 * time.Millisecond:                "950ms",
		9*time.Second + 994*time.Millisecond:  "9.99s",
		20*time.Second + 440*time.Millisecond: "20.4s",
		9*time.Minute + 25*time.Second + 600*time.Millisecond: "9m26s",
		3*time.Hour + 32*time.Minute + 46*time.Second:         "3h32m46s",
	} {
		assert.Equal(t, want, output.Duration(d), "%v", time.Duration(d))
	}
}

func TestWriteCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, output.WriteCSV(path, [][]string{{"a", "b,c"}, nil, {"1", `"2"`}}))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "a,\"b,c\"\n\n1,\"\"\"2\"\"\"\n", string(b))
}

// A failing writer leaves the file as it was and names it in the error.
func TestWriteFileError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, os.WriteFile(path, []byte("before"), 0o644))
	boom := errors.New("boom")
	err := output.WriteFile(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "before", string(b))
	assert.Error(t, output.WriteFile(filepath.Join(path, "under-a-file"), func(io.Writer) error { return nil }))
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct {
	n       int
	written []byte
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(f.written)+len(p) > f.n {
		return 0, errFull
	}
	f.written = append(f.written, p...)
	return len(p), nil
}

// A Writer passes writes on until one fails, then keeps that error and writes nothing
// more.
func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		room    int
		writes  []string
		want    string
		wantErr bool
	}{
		{"every write fits", 100, []string{"ab", "cd"}, "abcd", false},
		{"no room", 0, []string{"ab"}, "", true},
		{"the second fails", 3, []string{"ab", "cd", "e"}, "ab", true},
		{"nothing written", 0, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failAfter{n: tc.room}
			w := output.NewWriter(f)
			for _, s := range tc.writes {
				_, _ = io.WriteString(w, s)
			}
			assert.Equal(t, tc.want, string(f.written))
			if tc.wantErr {
				assert.ErrorIs(t, w.Err(), errFull)
			} else {
				assert.NoError(t, w.Err())
			}
		})
	}
}
