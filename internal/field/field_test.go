package field_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/internal/field"
)

// Two packages' worth of field errors, declared as the library's packages declare theirs.
type (
	alpha struct{}
	beta  struct{}

	alphaError = field.Error[alpha]
	betaError  = field.Error[beta]
)

func (alpha) Name() string { return "alpha" }
func (beta) Name() string  { return "beta" }

var (
	errBad   = errors.New("bad value")
	errOther = errors.New("other")
)

type stringer struct{}

func (stringer) String() string { return "shown by String" }

func TestErrorMessage(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"int", field.Err[alpha]("count", 3, errBad), "alpha: count = 3: bad value"},
		{"negative float", field.Err[alpha]("weight", -0.5, errBad), "alpha: weight = -0.5: bad value"},
		{"NaN", field.Err[alpha]("weight", math.NaN(), errBad), "alpha: weight = NaN: bad value"},
		{"infinity", field.Err[alpha]("weight", math.Inf(-1), errBad), "alpha: weight = -Inf: bad value"},
		{"string, unquoted", field.Err[alpha]("ID", "j1", errBad), "alpha: ID = j1: bad value"},
		{"empty string, quoted", field.Err[alpha]("ID", "", errBad), `alpha: ID = "": bad value`},
		{"nil value", field.Err[alpha]("matcher", nil, errBad), "alpha: matcher = <nil>: bad value"},
		{"slice", field.Err[alpha]("weights", []float64{0.5, 0.6}, errBad), "alpha: weights = [0.5 0.6]: bad value"},
		{"Stringer", field.Err[alpha]("x", stringer{}, errBad), "alpha: x = shown by String: bad value"},
		{"duration", field.Err[alpha]("W1", -time.Second, errBad), "alpha: W1 = -1s: bad value"},
		{"field with quotes", field.Err[alpha](`job "j1" weight`, -3.0, errBad), `alpha: job "j1" weight = -3: bad value`},
		{"value with a percent sign", field.Err[alpha]("name", "50%", errBad), "alpha: name = 50%: bad value"},
		{"empty field", field.Err[alpha]("", 1, errBad), "alpha:  = 1: bad value"},
		{"another package's name", field.Err[beta]("count", 3, errBad), "beta: count = 3: bad value"},
		{"wrapping a chain", field.Err[alpha]("capacity", 1, fmt.Errorf("%w: %w", errBad, errOther)), "alpha: capacity = 1: bad value: other"},
		{"nil error", field.Err[alpha]("x", 1, nil), "alpha: x = 1: <nil>"},
		{"composite literal", &alphaError{Field: "count", Value: 3, Err: errBad}, "alpha: count = 3: bad value"},
		{"zero value", &betaError{}, "beta:  = <nil>: <nil>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Error())
		})
	}
}

func TestErrMakesAnError(t *testing.T) {
	err := field.Err[alpha]("count", 3, errBad)
	require.IsType(t, &alphaError{}, err)
	assert.Equal(t, &alphaError{Field: "count", Value: 3, Err: errBad}, err)
}

func TestUnwrap(t *testing.T) {
	chain := fmt.Errorf("%w: %w", errBad, errOther)
	for _, c := range []struct {
		name string
		err  *alphaError
		want error
	}{
		{"sentinel", &alphaError{Field: "x", Value: 1, Err: errBad}, errBad},
		{"chain", &alphaError{Field: "x", Value: 1, Err: chain}, chain},
		{"nil", &alphaError{Field: "x", Value: 1}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Unwrap())
			assert.Equal(t, c.want, errors.Unwrap(c.err))
		})
	}
}

func TestIsAndAs(t *testing.T) {
	a := field.Err[alpha]("count", 3, errBad)
	b := field.Err[beta]("weight", 0.5, fmt.Errorf("%w: %w", errBad, errOther))
	for _, c := range []struct {
		name          string
		err           error
		isBad, isOthr bool
		alpha, beta   string // the Field errors.As finds, "" for none
	}{
		{"alpha", a, true, false, "count", ""},
		{"beta, wrapping two sentinels", b, true, true, "", "weight"},
		{"alpha, wrapped", fmt.Errorf("context: %w", a), true, false, "count", ""},
		{"beta wrapping alpha", field.Err[beta]("outer", 1, a), true, false, "count", "outer"},
		{"alpha wrapping beta", field.Err[alpha]("outer", 1, b), true, true, "outer", "weight"},
		{"both, joined", errors.Join(a, b), true, true, "count", "weight"},
		{"beta behind alpha's Wrapf", field.Wrapf[alpha](b, "step %d", 2), true, true, "", "weight"},
		{"neither", fmt.Errorf("plain: %w", errOther), false, true, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.isBad, errors.Is(c.err, errBad), "errors.Is(errBad)")
			assert.Equal(t, c.isOthr, errors.Is(c.err, errOther), "errors.Is(errOther)")
			var ae *alphaError
			if assert.Equal(t, c.alpha != "", errors.As(c.err, &ae), "errors.As(*alphaError)") && ae != nil {
				assert.Equal(t, c.alpha, ae.Field)
			}
			var be *betaError
			if assert.Equal(t, c.beta != "", errors.As(c.err, &be), "errors.As(*betaError)") && be != nil {
				assert.Equal(t, c.beta, be.Field)
			}
		})
	}
}

func TestWrapf(t *testing.T) {
	fe := field.Err[beta]("x", 1, errBad)
	for _, c := range []struct {
		name   string
		err    error
		want   string
		unwrap error
	}{
		{"no arguments", field.Wrapf[alpha](errBad, "capacity"), "alpha: capacity: bad value", errBad},
		{"arguments", field.Wrapf[alpha](errBad, "Steps[%d].%s", 3, "Node"), "alpha: Steps[3].Node: bad value", errBad},
		{"quoted argument", field.Wrapf[alpha](errBad, "job %q", "j1"), `alpha: job "j1": bad value`, errBad},
		{"another package's name", field.Wrapf[beta](errOther, "allocated"), "beta: allocated: other", errOther},
		{"around a field error", field.Wrapf[alpha](fe, "tuple"), "alpha: tuple: beta: x = 1: bad value", fe},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Error())
			assert.Equal(t, c.unwrap, errors.Unwrap(c.err))
			assert.ErrorIs(t, c.err, c.unwrap)
		})
	}
}

func TestWrapfLeavesArgsAlone(t *testing.T) {
	args := make([]any, 1, 4)
	args[0] = "a"
	_ = field.Wrapf[alpha](errBad, "%s", args...)
	assert.Equal(t, []any{"a"}, args)
}

func TestQuoted(t *testing.T) {
	var nilPtr *int
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"empty string", "", `""`},
		{"string", "j1", "j1"},
		{"string of quotes", `""`, `""`},
		{"space", " ", " "},
		{"nil", nil, "<nil>"},
		{"nil pointer", nilPtr, "<nil>"},
		{"int", -3, "-3"},
		{"float", 0.25, "0.25"},
		{"whole float", 3.0, "3"},
		{"NaN", math.NaN(), "NaN"},
		{"+Inf", math.Inf(1), "+Inf"},
		{"bool", true, "true"},
		{"duration", 1500 * time.Millisecond, "1.5s"},
		{"empty slice", []string{}, "[]"},
		{"slice with an empty string", []string{""}, "[]"},
		{"Stringer", stringer{}, "shown by String"},
		{"error", errBad, "bad value"},
		{"named empty string", myString(""), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, field.Quoted(c.v))
		})
	}
}

// myString is not a string to Quoted: only the type string shows empty as "".
type myString string

func TestFinite(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want bool
	}{
		{0, true},
		{math.Copysign(0, -1), true},
		{1, true},
		{-1, true},
		{math.MaxFloat64, true},
		{-math.MaxFloat64, true},
		{math.SmallestNonzeroFloat64, true},
		{math.Inf(1), false},
		{math.Inf(-1), false},
		{math.NaN(), false},
		{-math.NaN(), false},
	} {
		t.Run(fmt.Sprint(c.x), func(t *testing.T) {
			assert.Equal(t, c.want, field.Finite(c.x))
			// The test the packages' copies used before: the same answer.
			const maxFloat = 1.7976931348623157e308
			assert.Equal(t, c.x == c.x && c.x <= maxFloat && c.x >= -maxFloat, field.Finite(c.x))
		})
	}
}
