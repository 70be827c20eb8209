package policy

import (
	"errors"
	"fmt"

	"github.com/finegrain/finegrain/internal/field"
)

// Sentinel errors of this package; errors.Is matches them through the wrapping.
var (
	// ErrUnknownServer reports a server ID the adjuster does not hold.
	ErrUnknownServer = errors.New("unknown server")
	// ErrDuplicateServer reports a server ID added twice.
	ErrDuplicateServer = errors.New("duplicate server")
	// ErrInvalidID reports an empty server ID.
	ErrInvalidID = errors.New("invalid server ID")
	// ErrUnknownMode reports a Mode value or name that is not one of the four modes.
	ErrUnknownMode = errors.New("unknown mode")
	// ErrThresholdOrder reports thresholds not in the order Th_sa > Th_cg > Th_fg.
	ErrThresholdOrder = errors.New("thresholds out of order")
	// ErrInvalidValue reports a setting that is NaN, infinite, negative or otherwise
	// outside its range.
	ErrInvalidValue = errors.New("invalid value")
	// ErrNilConformity reports an adjuster built without a conformity source.
	ErrNilConformity = errors.New("nil conformity source")
)

// SettingError is the error returned for a bad setting or argument: which one, the
// value given, and the sentinel describing what is wrong.
type SettingError struct {
	// Name names the setting or argument, e.g. "Th_cg" or "degradation factor".
	Name string
	// Value is the offending value, as given.
	Value any
	// Err is the sentinel (or a wrapped error from package resource).
	Err error
}

// Error describes the setting, the value and what is wrong with it.
func (e *SettingError) Error() string {
	return fmt.Sprintf("policy: %s = %s: %v", e.Name, field.Quoted(e.Value), e.Err)
}

// Unwrap returns the wrapped error, for errors.Is.
func (e *SettingError) Unwrap() error { return e.Err }

func settingErr(name string, value any, err error) error {
	return &SettingError{Name: name, Value: value, Err: err}
}
