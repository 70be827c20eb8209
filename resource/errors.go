package resource

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them, so callers can
// test with errors.Is; most arrive inside a *DimensionError that also names the
// dimension and the offending value.
var (
	// ErrUnknownDimension reports a dimension name the schema does not define.
	ErrUnknownDimension = errors.New("unknown dimension")
	// ErrDuplicateDimension reports a dimension name given twice.
	ErrDuplicateDimension = errors.New("duplicate dimension")
	// ErrTooManyDimensions reports a schema of more than MaxDims dimensions.
	ErrTooManyDimensions = errors.New("too many dimensions")
	// ErrInvalidName reports an empty dimension name or one holding characters that
	// Parse and Format could not round-trip ('=', ',', spaces).
	ErrInvalidName = errors.New("invalid dimension name")
	// ErrNegative reports a negative amount where amounts must be non-negative.
	ErrNegative = errors.New("negative amount")
	// ErrOutsideSchema reports a non-zero amount in a slot past the schema's last
	// dimension.
	ErrOutsideSchema = errors.New("amount outside the schema")
	// ErrNotCompressible reports a compression amount or ratio on a dimension that is
	// not compressible.
	ErrNotCompressible = errors.New("dimension is not compressible")
	// ErrSchemaMismatch reports two values built for different schemas.
	ErrSchemaMismatch = errors.New("schema mismatch")
	// ErrInvalidRatio reports a fraction that is NaN, infinite or outside its range.
	ErrInvalidRatio = errors.New("invalid ratio")
	// ErrSyntax reports malformed text given to Parse.
	ErrSyntax = errors.New("syntax error")
)

// DimensionError is the error returned for bad input concerning one dimension. It names
// the dimension (or the slot index when the name is unknown), the offending value, and
// wraps one of the sentinel errors above.
type DimensionError struct {
	// Dim is the dimension's name, or "#i" for slot i when it has none.
	Dim string
	// Value is the offending value, as given.
	Value any
	// Err is the sentinel describing what is wrong.
	Err error
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("resource: dimension %q: %v: %v", e.Dim, e.Err, e.Value)
}

// Unwrap returns the sentinel, for errors.Is.
func (e *DimensionError) Unwrap() error { return e.Err }

func dimErr(dim string, value any, err error) error {
	return &DimensionError{Dim: dim, Value: value, Err: err}
}
