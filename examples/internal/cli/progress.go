package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress counts work done towards a total in a named unit. On a terminal it draws a
// bar (description, percentage, count, rate in units per second, time left); when quiet,
// or when the writer is not a terminal (a log file, a pipe, CI), it draws nothing, so
// logs hold no carriage-return frames. Safe for concurrent use, as the bar is.
type Progress struct {
	bar *progressbar.ProgressBar // nil when nothing is drawn
}

// NewProgress is a progress counter towards total units (unit in the plural, "tasks"),
// drawing to w when w is a terminal and quiet is false.
func NewProgress(w io.Writer, total int, description, unit string, quiet bool) *Progress {
	if quiet || !IsTerminal(w) {
		return &Progress{}
	}
	return &Progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))}
}

// Add counts n more units done.
func (p *Progress) Add(n int) {
	if p.bar == nil || n == 0 {
		return
	}
	_ = p.bar.Add(n)
}

// Finish completes the bar and ends its line.
func (p *Progress) Finish() {
	if p.bar == nil {
		return
	}
	_ = p.bar.Finish()
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
