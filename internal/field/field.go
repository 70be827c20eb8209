// Package field makes the error the library's packages return for one bad input value:
// an *Error names the field (or option, or argument) at fault, holds the offending
// value as given, and wraps a sentinel error of the package, so that callers can test
// with errors.Is for what is wrong and errors.As for where.
//
// A package exports it as its FieldError, an alias of Error instantiated with an empty
// type of its own that names the package:
//
//	// pkg is this package, for package field: its name starts the messages of
//	// FieldError.
//	type pkg struct{}
//
//	func (pkg) Name() string { return "match" }
//
//	// FieldError is the error returned for a bad value in a named field …
//	type FieldError = field.Error[pkg]
//
// The type argument does two things. Every message starts with the package's name,
// whether the error was made by Err or by a composite literal of the package's
// FieldError:
//
//	match: rank = 0: feature rank out of range
//
// And the packages' FieldErrors stay distinct types: errors.As with a
// *match.FieldError finds match's errors only, not another package's that the same
// chain holds (such as the *workload.FieldError that package sim wraps when it refuses
// a workload).
//
// Wrapf prefixes a lower-level error with the package's name and where it happened;
// Quoted formats a value for a message, and Finite is the test for a number that most
// validations start with.
package field

import (
	"fmt"
	"math"
)

// A Package names the package whose errors an Error is: its Name, followed by ": ",
// starts every message. Implement it on an empty struct type, so that its zero value
// answers.
type Package interface {
	Name() string
}

// Error is the error returned for one bad input value: it names the field (or option,
// or argument), holds the offending value, and wraps a sentinel error. The packages
// export it as their FieldError; P is the package it belongs to.
type Error[P Package] struct {
	// Field names what was wrong, e.g. "speculative cap" or "Nodes[3].ID".
	Field string
	// Value is the offending value, as given.
	Value any
	// Err is the sentinel (or wrapped lower-level error) describing what is wrong.
	Err error
}

// Error describes the field, the value and what is wrong with it, after the package's
// name: "pkg: Field = Value: Err", the value formatted by Quoted.
func (e *Error[P]) Error() string {
	var p P
	return fmt.Sprintf("%s: %s = %s: %v", p.Name(), e.Field, Quoted(e.Value), e.Err)
}

// Unwrap returns the wrapped error, for errors.Is and errors.As.
func (e *Error[P]) Unwrap() error { return e.Err }

// Err returns an *Error[P] for the named field, the offending value and the error
// saying what is wrong with it.
func Err[P Package](name string, value any, err error) error {
	return &Error[P]{Field: name, Value: value, Err: err}
}

// Wrapf prefixes a lower-level error (from another package) with the package's name
// and where it happened, keeping it matchable with errors.Is and errors.As: it is
// fmt.Errorf(P's name + ": " + format + ": %w", args..., err).
func Wrapf[P Package](err error, format string, args ...any) error {
	var p P
	return fmt.Errorf(p.Name()+": "+format+": %w", append(args, err)...)
}

// Quoted formats an offending value for a message, as fmt.Sprint does, except that an
// empty string shows as "", so that no message ends in a bare "= :".
func Quoted(v any) string {
	if s, ok := v.(string); ok && s == "" {
		return `""`
	}
	return fmt.Sprint(v)
}

// Finite reports whether x is a number other than NaN, +Inf and -Inf.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
