package resource_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/resource"
)

// clamp is the exact result x saturated to the int64 range.
func clamp(x *big.Int) int64 {
	switch {
	case x.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxInt64
	case x.Cmp(big.NewInt(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return x.Int64()
}

// extremes generates amounts anywhere in int64, often at or near its ends.
func extremes() gopter.Gen {
	return gen.OneGenOf(gen.Int64(), gen.Int64Range(math.MaxInt64-4, math.MaxInt64),
		gen.Int64Range(math.MinInt64, math.MinInt64+4), gen.Int64Range(-3, 3))
}

// Add, Sub and Mul are the exact results saturated to the int64 range; CheckedAdd
// reports exactly when Add saturated.
func TestSaturatingArithmetic(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("Add, Sub, Mul saturate; CheckedAdd reports overflow", prop.ForAll(func(a, b int64) bool {
		x, y := resource.Tuple{a}, resource.Tuple{b}
		A, B := big.NewInt(a), big.NewInt(b)
		sum := new(big.Int).Add(A, B)
		c, ok := x.CheckedAdd(y)
		return x.Add(y)[0] == clamp(sum) &&
			x.Sub(y)[0] == clamp(new(big.Int).Sub(A, B)) &&
			x.Mul(y)[0] == clamp(new(big.Int).Mul(A, B)) &&
			c[0] == clamp(sum) && ok == sum.IsInt64()
	}, extremes(), extremes()))
	props.TestingRun(t)

	var huge resource.Tuple
	huge[0] = math.MaxInt64
	assert.Equal(t, int64(math.MaxInt64), huge.Add(huge)[0], "MaxInt64 + MaxInt64 saturates, not -2")
}
