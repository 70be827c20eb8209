// Package output writes what an example produces: result files, CSV tables, and
// durations formatted for the tables it prints.
package output

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"time"
)

// Duration formats d compactly, to about three significant digits: "9m26s", "20.4s",
// "950ms", "0s".
func Duration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// WriteFile writes what fn writes into the file path (mode 0644), replacing it. fn
// writes to memory first, so a failing fn leaves the file as it was; its error is
// returned prefixed with path.
func WriteFile(path string, fn func(io.Writer) error) error {
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// WriteCSV writes rows into the file path as CSV (see WriteFile); a nil row is an
// empty line.
func WriteCSV(path string, rows [][]string) error {
	return WriteFile(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		return cw.Error()
	})
}

// Writer is an io.Writer that remembers the first error a write to the writer it
// wraps returned, so that a program that prints with fmt.Fprintf (whose errors it does
// not check one by one) can still end with a failure when its output was lost — a
// full disk, a closed pipe — instead of exiting 0. After an error it writes nothing
// more and returns that error again.
type Writer struct {
	w   io.Writer
	err error
}

// NewWriter is a Writer on w (os.Stdout, typically).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p to the wrapped writer unless an earlier write failed.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// Err is the first error a write returned, nil if none.
func (w *Writer) Err() error { return w.err }
