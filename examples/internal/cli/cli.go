// Package cli gives the example programs one command-line behaviour: flags parsed the
// same way (-h prints the usage and exits 0, an unknown flag or a bad value exits 2,
// a failure exits 1) and a progress bar that only draws on a terminal.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// UsageError is a command line the program cannot run: an unknown flag, a value out of
// range, an argument it does not take. Exit reports it with exit status 2.
type UsageError struct {
	Err   error
	shown bool // printed already, with the usage, by Parse
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message, for a program's own checks of its
// flags ("-runs 0: must be at least 1").
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// NewFlags is a flag set for the example NAME whose usage starts with the synopsis
// (one or more lines: what the program does) and then lists the flags. Parse errors are
// returned, never handled by exiting, so that tests can drive the parser.
func NewFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {
		w := fs.Output()
		var flags bool
		fs.VisitAll(func(*flag.Flag) { flags = true })
		if flags {
			fmt.Fprintf(w, "usage: go run ./examples/%s [flags]\n\n", name)
		} else {
			fmt.Fprintf(w, "usage: go run ./examples/%s\n\n", name)
		}
		fmt.Fprintln(w, strings.TrimSpace(synopsis))
		if flags {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		} else {
			fmt.Fprintln(w, "\nIt takes no flags but -h.")
		}
	}
	return fs
}

// Parse parses args with fs and refuses positional arguments. A request for help comes
// back as flag.ErrHelp (the usage is printed); anything else wrong as a *UsageError.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Err: err, shown: true} // the flag package printed it and the usage
	}
	if fs.NArg() > 0 {
		err := &UsageError{Err: fmt.Errorf("unexpected arguments %q", fs.Args()), shown: true}
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
		return err
	}
	return nil
}

// Status is the exit status for err: 0 for nil and for a request for help, 2 for a
// UsageError, 1 for anything else.
func Status(err error) int {
	var ue *UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	default:
		return 1
	}
}

// Exit ends the program NAME with err's exit status, after printing err (prefixed by
// the name) to stderr unless it is nil, a request for help or already printed.
func Exit(name string, err error) {
	Report(os.Stderr, name, err)
	os.Exit(Status(err))
}

// Report writes err, prefixed by the program's name, unless it is nil, a request for
// help, or a command-line error Parse has printed already.
func Report(w io.Writer, name string, err error) {
	var ue *UsageError
	if err == nil || errors.Is(err, flag.ErrHelp) || (errors.As(err, &ue) && ue.shown) {
		return
	}
	fmt.Fprintf(w, "%s: %v\n", name, err)
}

// childEnv marks a test binary started by package clitest to stand in for its
// example program.
const childEnv = "FINEGRAIN_EXAMPLE_AS_PROGRAM"

// AsProgram runs main and exits when the process is a test binary that package clitest
// started to stand in for the example program (so that the program's command line is
// tested without building it again); otherwise it returns at once. Call it first in
// the example's TestMain.
func AsProgram(main func()) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
}

// ChildEnv is the environment entry that makes AsProgram run the program, for package
// clitest.
func ChildEnv() string { return childEnv + "=1" }
