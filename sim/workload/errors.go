package workload

import (
	"errors"
	"fmt"

	"github.com/finegrain/finegrain/internal/field"
)

// Sentinel errors. Every error this package returns for bad input wraps one of them (or a
// sentinel of package resource or stage, for problems with tuples and profiles), so
// callers can test with errors.Is. Most arrive inside a *FieldError naming the field and
// value, or a *ParseError naming the file, line and column.
var (
	// ErrInvalidOption reports an option value out of its range, or a nil option: a
	// scale that is not a positive finite number, an empty queue name, a block size
	// below one byte.
	ErrInvalidOption = errors.New("invalid option")
	// ErrInvalidValue reports a field of a workload, job, task, cluster or node that is
	// out of range: a negative size or time, a NaN speed, a block index past the table;
	// or a nil pointer given for one.
	ErrInvalidValue = errors.New("invalid value")
	// ErrDuplicateID reports a job, task, node or trace-job ID given twice.
	ErrDuplicateID = errors.New("duplicate ID")
	// ErrEmpty reports something that must not be empty and is: an ID, a workload
	// without jobs, a cluster without nodes, a trace without lines.
	ErrEmpty = errors.New("empty")
	// ErrSyntax reports a malformed line of a trace file; it arrives inside a
	// *ParseError that says where.
	ErrSyntax = errors.New("syntax error")
	// ErrTooLarge reports a workload that would have more tasks than the configured
	// limit (WithMaxTasks); scale it down with WithScale.
	ErrTooLarge = errors.New("workload too large")
	// ErrNilRand reports a nil random source given to a generator.
	ErrNilRand = errors.New("nil random source")
)

// FieldError is the error returned for bad input other than a trace line: it names the
// field (or option, or argument), the offending value, and wraps a sentinel error. Its
// Field names what was wrong, e.g. "jobs[3].Tasks[0].InputBytes" or "scale"; its Value
// is the offending value, as given; its Err is the sentinel (or wrapped lower-level
// error) describing what is wrong. Its message reads "workload: Field = Value: Err".
type FieldError = field.Error[pkg]

// pkg is this package, for package field: its name starts the messages of FieldError.
type pkg struct{}

func (pkg) Name() string { return "workload" }

func fieldErr(name string, value any, err error) error { return field.Err[pkg](name, value, err) }

// ParseError is the error returned for a malformed line of a trace file. Its message has
// the conventional "file:line:column: " prefix, so editors and terminals can jump to it.
type ParseError struct {
	// File is the name the caller gave the input (a path for the Load functions).
	File string
	// Line is the 1-based line number.
	Line int
	// Column is the 1-based column (field) number, or 0 when the whole line is at fault.
	Column int
	// Field names the column's meaning, e.g. "input bytes"; empty when Column is 0.
	Field string
	// Text is the offending text: the field's, or the line's when Column is 0
	// (truncated to 64 bytes).
	Text string
	// Err is the sentinel (ErrSyntax, ErrInvalidValue, ErrDuplicateID, ErrEmpty) or the
	// underlying read error.
	Err error
}

func (e *ParseError) Error() string {
	if e.Column == 0 {
		if e.Text == "" {
			return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
		}
		return fmt.Sprintf("%s:%d: %v: %q", e.File, e.Line, e.Err, e.Text)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %v: %q", e.File, e.Line, e.Column, e.Field, e.Err, e.Text)
}

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *ParseError) Unwrap() error { return e.Err }

func lineErr(file string, line int, text string, err error) error {
	return &ParseError{File: file, Line: line, Text: clip(text), Err: err}
}

func colErr(file string, line, col int, field, text string, err error) error {
	return &ParseError{File: file, Line: line, Column: col, Field: field, Text: clip(text), Err: err}
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
