package resource

import (
	"errors"
	"fmt"
	"strings"
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
	// ErrOverflow reports amounts whose sum leaves the int64 range, or an amount given
	// to Parse that does.
	ErrOverflow = errors.New("amount overflows int64")
	// ErrSyntax reports malformed text given to Parse: a pair that is not name=amount,
	// or an amount that is not a quantity.
	ErrSyntax = errors.New("syntax error")
	// ErrInvalidScale reports a Dimension.BaseUnitsPerQuantity that is not 0 or a
	// power of ten up to 10^18.
	ErrInvalidScale = errors.New("invalid base units per quantity")
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
	// Detail says what Value is, where the sentinel alone does not ("positions 0 and
	// 1", "slot 2, past the schema cpu[millicore,c] memory[byte]"); empty when the
	// value speaks for itself.
	Detail string
}

// Error reads "resource: dimension "memory": negative amount: -1" or, with a
// detail, "resource: dimension "cpu": duplicate dimension (positions 0 and 1)".
func (e *DimensionError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("resource: dimension %q: %v (%s)", e.Dim, e.Err, e.Detail)
	}
	v := e.Value
	if s, ok := v.(string); ok && s == "" {
		v = `""`
	}
	return fmt.Sprintf("resource: dimension %q: %v: %v", e.Dim, e.Err, v)
}

// Unwrap returns the sentinel, for errors.Is.
func (e *DimensionError) Unwrap() error { return e.Err }

func dimErr(dim string, value any, err error) error {
	return &DimensionError{Dim: dim, Value: value, Err: err}
}

// outsideErr reports a non-zero value in slot i, past the schema's dimensions.
func (s *Schema) outsideErr(i int, value any) error {
	return &DimensionError{Dim: s.DimName(i), Value: value, Err: ErrOutsideSchema,
		Detail: fmt.Sprintf("%v in slot %d; the schema %s has %d dimension(s): was the value built for another schema?", value, i, s, s.n)}
}

// unknownErr reports an amount given for a dimension the schema does not define.
func (s *Schema) unknownErr(name string, amount any) error {
	names := make([]string, s.n)
	for i := range names {
		names[i] = s.dims[i].Name
	}
	return &DimensionError{Dim: name, Value: amount, Err: ErrUnknownDimension,
		Detail: fmt.Sprintf("amount %v; the schema's dimensions are %s", amount, strings.Join(names, ", "))}
}
