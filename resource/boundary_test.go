package resource_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
)

// The boundaries of every check: the largest valid input is accepted and the next one
// refused. (A mutation-testing pass showed these untested: moving any of these
// bounds by one changed no test's outcome.)
func TestBoundaries(t *testing.T) {
	t.Run("a zero duration compresses to zero", func(t *testing.T) {
		d, err := resource.CompressedDuration(0, 0.5, 0.1)
		require.NoError(t, err)
		assert.Zero(t, d)
	})
	t.Run("a zero weight is a weight", func(t *testing.T) {
		b, err := resource.CompressionBound(0, 1, 0)
		require.NoError(t, err)
		assert.Equal(t, 0.0, b)
		b, err = resource.CompressionBound(1, 0, 0)
		require.NoError(t, err)
		assert.Equal(t, 1.0, b)
		b, err = resource.CompressionBound(1, 1, 0) // equal weights: their sum, not their difference, is checked
		require.NoError(t, err)
		assert.Equal(t, 0.5, b)
		b, err = resource.CompressionBound(1, 0, 0.5) // a penalty with nothing running costs nothing
		require.NoError(t, err)
		assert.Equal(t, 1.0, b)
	})
	// The sum 1e308 + 1e308 and the product 2 × 1e308 overflow; the bound, a function of
	// the weights' ratio, does not. It once came out NaN with no error.
	t.Run("weights whose sum overflows", func(t *testing.T) {
		top := math.MaxFloat64
		for _, c := range []struct{ wNew, wRunning, p, want float64 }{
			{1e308, 1e308, 2, -0.5},        // (1 − 2)/2
			{1e308, 1e308, 0, 0.5},         // (1 − 0)/2
			{top, top, top, (1 - top) / 2}, // p × wRunning overflows too
			{top, top / 2, 1, 1.0 / 3},     // (1 − 1/2)/(3/2)
			{1, 1e308, top, -top},          // p × wRunning alone overflows: ≈ −p
			{top / 2, top, 3, -5.0 / 3},    // (1/2 − 3)/(3/2)
			{5e-324, top, 1, -1},           // a subnormal against the largest float
			{1e300, 3e300, 0.1, 0.175},     // no overflow: computed as ever
		} {
			b, err := resource.CompressionBound(c.wNew, c.wRunning, c.p)
			require.NoError(t, err, "%v", c)
			assert.InEpsilon(t, c.want, b, 1e-12, "%v", c)
		}
	})
	t.Run("a schema of exactly MaxDims dimensions", func(t *testing.T) {
		dims := make([]resource.Dimension, resource.MaxDims)
		for i := range dims {
			dims[i] = resource.Dimension{Name: fmt.Sprintf("d%d", i)}
		}
		s, err := resource.NewSchema(dims...)
		require.NoError(t, err)
		assert.Equal(t, resource.MaxDims, s.Len())
		i, ok := s.Index("d7")
		assert.Equal(t, 7, i)
		assert.True(t, ok)
		_, err = resource.NewSchema(append(dims, resource.Dimension{Name: "one-more"})...)
		assert.ErrorIs(t, err, resource.ErrTooManyDimensions)
	})
	t.Run("an unknown name has index -1", func(t *testing.T) {
		s := resource.MustSchema(resource.CPU, resource.Memory)
		for _, name := range []string{"", "gpu"} {
			i, ok := s.Index(name)
			assert.Equal(t, -1, i, "%q", name)
			assert.False(t, ok, "%q", name)
		}
	})
	t.Run("a zero amount by name", func(t *testing.T) {
		s := resource.MustSchema(resource.CPU, resource.Memory)
		got, err := s.Make(map[string]int64{"cpu": 0, "memory": 1})
		require.NoError(t, err)
		assert.Equal(t, resource.Tuple{0, 1}, got)
	})
	t.Run("the largest amount a suffix can scale", func(t *testing.T) {
		s := resource.MustSchema(resource.CPU, resource.Memory)
		most := int64(math.MaxInt64 >> 30) // 8589934591 Gi fits in int64, 8589934592 Gi does not
		got, err := s.Parse(fmt.Sprintf("memory=%dGi", most))
		require.NoError(t, err)
		assert.Equal(t, most<<30, got[1])
		_, err = s.Parse(fmt.Sprintf("memory=%dGi", most+1))
		assert.ErrorIs(t, err, resource.ErrOverflow)
		got, err = s.Parse("memory=9223372036854775807")
		require.NoError(t, err)
		assert.Equal(t, int64(math.MaxInt64), got[1])
		_, err = s.Parse("memory=9223372036854775808")
		assert.ErrorIs(t, err, resource.ErrOverflow)
	})
	t.Run("durations saturate", func(t *testing.T) {
		d, err := resource.CompressedDuration(time.Duration(math.MaxInt64), 0.5, 0)
		require.NoError(t, err)
		assert.Equal(t, time.Duration(math.MaxInt64), d)
	})
	t.Run("shares of an empty capacity", func(t *testing.T) {
		sh := resource.Tuple{0, 5, -5}.Shares(resource.Tuple{})
		assert.Equal(t, 0.0, sh[0])
		assert.True(t, math.IsInf(sh[1], 1))
		assert.True(t, math.IsInf(sh[2], -1))
	})
	t.Run("NaN and huge factors", func(t *testing.T) {
		assert.Equal(t, resource.Tuple{}, resource.Tuple{5, 7}.Scale(math.NaN()))
		assert.Equal(t, resource.Tuple{math.MaxInt64, math.MinInt64}, resource.Tuple{5, -7}.Scale(1e300))
	})
}
