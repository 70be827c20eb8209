package resource_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
)

func TestNewSchemaErrors(t *testing.T) {
	nine := make([]resource.Dimension, 9)
	for i := range nine {
		nine[i] = resource.Dimension{Name: string(rune('a' + i))}
	}
	tests := []struct {
		name string
		dims []resource.Dimension
		want error
		dim  string
	}{
		{"too many", nine, resource.ErrTooManyDimensions, "#8"},
		{"empty name", []resource.Dimension{resource.CPU, {Name: ""}}, resource.ErrInvalidName, "#1"},
		{"name with =", []resource.Dimension{{Name: "a=b"}}, resource.ErrInvalidName, "#0"},
		{"name with space", []resource.Dimension{{Name: "a b"}}, resource.ErrInvalidName, "#0"},
		{"duplicate", []resource.Dimension{resource.CPU, resource.Memory, {Name: "cpu"}}, resource.ErrDuplicateDimension, "cpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resource.NewSchema(tc.dims...)
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, s)
			var de *resource.DimensionError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, tc.dim, de.Dim)
			assert.Contains(t, err.Error(), tc.dim)
		})
	}
}

func TestStandardSchema(t *testing.T) {
	s := resource.Standard()
	require.Equal(t, 6, s.Len())
	names := []string{"cpu", "memory", "disk-io", "net-io", "disk", "gpu"}
	comp := []bool{true, false, true, true, false, false}
	for i, n := range names {
		assert.Equal(t, n, s.Dim(i).Name)
		assert.Equal(t, comp[i], s.Dim(i).Compressible, n)
		j, ok := s.Index(n)
		assert.True(t, ok)
		assert.Equal(t, i, j)
	}
	assert.Equal(t, resource.Mask(0b001101), s.Compressible())
	assert.Equal(t, resource.Mask(0b110010), s.NonCompressible())
	assert.Equal(t, resource.Mask(0b111111), s.All())
	_, ok := s.Index("bogus")
	assert.False(t, ok)
	assert.True(t, s.Equal(resource.MustSchema(s.Dims()...)))
	assert.False(t, s.Equal(resource.MustSchema(resource.CPU, resource.Memory)))
	assert.False(t, s.Equal(nil))
	assert.Equal(t, "cpu[millicore,c] memory[byte]", resource.MustSchema(resource.CPU, resource.Memory).String())
}

func TestTupleConstructorErrors(t *testing.T) {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	tests := []struct {
		name string
		make func() (resource.Tuple, error)
		want error
		dim  string
	}{
		{"Make unknown", func() (resource.Tuple, error) { return s.Make(map[string]int64{"cpu": 1, "gpu": 1}) }, resource.ErrUnknownDimension, "gpu"},
		{"Make negative", func() (resource.Tuple, error) { return s.Make(map[string]int64{"memory": -5}) }, resource.ErrNegative, "memory"},
		{"FromSlice negative", func() (resource.Tuple, error) { return s.FromSlice(1, -2) }, resource.ErrNegative, "memory"},
		{"FromSlice too long", func() (resource.Tuple, error) { return s.FromSlice(1, 2, 3) }, resource.ErrOutsideSchema, "#2"},
		{"Parse unknown", func() (resource.Tuple, error) { return s.Parse("cpu=1,gpu=2") }, resource.ErrUnknownDimension, "gpu"},
		{"Parse negative", func() (resource.Tuple, error) { return s.Parse("memory=-1") }, resource.ErrNegative, "memory"},
		{"Parse duplicate", func() (resource.Tuple, error) { return s.Parse("cpu=1,cpu=2") }, resource.ErrDuplicateDimension, "cpu"},
		{"Parse garbage amount", func() (resource.Tuple, error) { return s.Parse("cpu=lots") }, resource.ErrSyntax, "cpu"},
		{"Parse overflow", func() (resource.Tuple, error) { return s.Parse("memory=9000000Pi") }, resource.ErrOverflow, "memory"},
		{"Parse overflow by a decimal suffix", func() (resource.Tuple, error) { return s.Parse("cpu=10000000000000000P") }, resource.ErrOverflow, "cpu"},
		{"Parse overflow without a suffix", func() (resource.Tuple, error) { return s.Parse("cpu=9223372036854775808m") }, resource.ErrOverflow, "cpu"},
		{"Parse overflow in whole cores", func() (resource.Tuple, error) { return s.Parse("cpu=9223372036854776") }, resource.ErrOverflow, "cpu"},
		{"Parse overflow of many digits", func() (resource.Tuple, error) { return s.Parse("memory=99999999999999999999999999k") }, resource.ErrOverflow, "memory"},
		{"Parse garbage after many digits", func() (resource.Tuple, error) { return s.Parse("cpu=99999999999999999999999999x") }, resource.ErrSyntax, "cpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.make()
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, resource.Tuple{}, v)
			var de *resource.DimensionError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, tc.dim, de.Dim)
		})
	}
	_, err := s.Parse("cpu=10000000000000000P")
	assert.EqualError(t, err, `resource: dimension "cpu": amount overflows int64 (10000000000000000P is too large: at most 9223372036854775807m)`)
	_, err = s.Parse("cpu")
	assert.ErrorIs(t, err, resource.ErrSyntax)
	_, err = s.Parse("=3")
	assert.ErrorIs(t, err, resource.ErrSyntax)
}

func TestValidate(t *testing.T) {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	assert.NoError(t, s.Validate(resource.Tuple{1, 2}))
	assert.ErrorIs(t, s.Validate(resource.Tuple{1, 2, 3}), resource.ErrOutsideSchema)
	assert.ErrorIs(t, s.Validate(resource.Tuple{-1}), resource.ErrNegative)
	assert.NoError(t, s.ValidateAllowance(resource.Tuple{100}))
	err := s.ValidateAllowance(resource.Tuple{100, 1})
	assert.ErrorIs(t, err, resource.ErrNotCompressible)
	assert.Contains(t, err.Error(), "memory")
	assert.NoError(t, s.ValidateRatios(resource.Vector{0.1, 0.2}, 1, false))
	assert.ErrorIs(t, s.ValidateRatios(resource.Vector{0.1, 0.2}, 1, true), resource.ErrNotCompressible)
	assert.ErrorIs(t, s.ValidateRatios(resource.Vector{math.NaN()}, 1, false), resource.ErrInvalidRatio)
	assert.ErrorIs(t, s.ValidateRatios(resource.Vector{1.5}, 1, false), resource.ErrInvalidRatio)
	assert.ErrorIs(t, s.ValidateRatios(resource.Vector{0, 0, 0.5}, 1, false), resource.ErrOutsideSchema)
}

func TestParseFormat(t *testing.T) {
	s := resource.Standard()
	v, err := s.Parse(" cpu = 2.5 , memory=4Gi, disk=1T,net-io=10Mi,gpu=1")
	require.NoError(t, err)
	assert.Equal(t, resource.Tuple{2500, 4 << 30, 0, 10 << 20, 1e12, 1}, v)
	assert.Equal(t, "cpu=2500m,memory=4Gi,net-io=10Mi,disk=1T,gpu=1", s.Format(v))
	back, err := s.Parse(s.Format(v))
	require.NoError(t, err)
	assert.Equal(t, v, back)
	zero, err := s.Parse("  ")
	require.NoError(t, err)
	assert.True(t, zero.IsZero())
	assert.Equal(t, "", s.Format(zero))
	k, err := s.Parse("cpu=2k")
	require.NoError(t, err)
	assert.Equal(t, int64(2000000), k[0], "2k cores")
	m, err := s.Parse("cpu=2500m")
	require.NoError(t, err)
	assert.Equal(t, int64(2500), m[0])
}

func TestTupleAlgebra(t *testing.T) {
	a := resource.Tuple{4000, 8 << 30}
	b := resource.Tuple{1500, 2 << 30}
	assert.Equal(t, resource.Tuple{5500, 10 << 30}, a.Add(b))
	assert.Equal(t, resource.Tuple{2500, 6 << 30}, a.Sub(b))
	assert.Equal(t, resource.Tuple{6, 12}, resource.Tuple{2, 3}.Mul(resource.Tuple{3, 4}))
	assert.Equal(t, resource.Tuple{1500, 8 << 30}, a.Min(resource.Tuple{1500, 9 << 30}))
	assert.Equal(t, resource.Tuple{4000, 9 << 30}, a.Max(resource.Tuple{1500, 9 << 30}))
	assert.Equal(t, resource.Tuple{5500, 10 << 30}, resource.Sum(a, b))

	// Scale: nearest, halves away from zero, saturating; NaN gives zero.
	assert.Equal(t, resource.Tuple{2, -2, 3, 1}, resource.Tuple{3, -3, 5, 1}.Scale(0.5))
	assert.Equal(t, resource.Tuple{math.MaxInt64, math.MinInt64}, resource.Tuple{1 << 62, -(1 << 62)}.Scale(8))
	assert.Equal(t, resource.Tuple{}, resource.Tuple{5, 7}.Scale(math.NaN()))
	assert.Equal(t, resource.Tuple{400, 0}, resource.Tuple{4000, 8 << 30}.ScaleEach(resource.Vector{0.1}))

	// eq. 13: Less is "any slot smaller", not an order.
	x, y := resource.Tuple{1, 5}, resource.Tuple{2, 3}
	assert.True(t, x.AnyLess(y))
	assert.True(t, y.AnyLess(x), "both directions can hold: not antisymmetric")
	assert.False(t, x.Covers(y))
	assert.True(t, a.Covers(b))
	assert.True(t, b.FitsIn(a))
	assert.False(t, a.FitsIn(b))
	assert.True(t, resource.Tuple{0, -1}.HasNegative())
	assert.False(t, resource.Tuple{0, 1}.HasNegative())

	s := resource.Standard()
	c, n := s.Split(resource.Tuple{1, 2, 3, 4, 5, 6})
	assert.Equal(t, resource.Tuple{1, 0, 3, 4}, c)
	assert.Equal(t, resource.Tuple{0, 2, 0, 0, 5, 6}, n)
	assert.Equal(t, "<1 0 3>", resource.Tuple{1, 0, 3}.String())
	assert.Equal(t, "<>", resource.Tuple{}.String())
}

func TestShares(t *testing.T) {
	capacity := resource.Tuple{9000, 18 << 30}
	// The DRF paper's users: A's task <1 CPU, 4 GB> is memory-dominant (4/18),
	// B's <3 CPU, 1 GB> CPU-dominant (3/9).
	assert.InDelta(t, 4.0/18, resource.Tuple{1000, 4 << 30}.DominantShare(capacity), 1e-12)
	assert.InDelta(t, 3.0/9, resource.Tuple{3000, 1 << 30}.DominantShare(capacity), 1e-12)
	assert.Equal(t, 0.0, resource.Tuple{}.DominantShare(capacity))
	assert.True(t, math.IsInf(resource.Tuple{0, 0, 1}.DominantShare(capacity), 1))
	sh := resource.Tuple{4500, 9 << 30}.Shares(capacity)
	assert.Equal(t, resource.Vector{0.5, 0.5}, sh)
	assert.Equal(t, 0.5, sh.Max())
	assert.Equal(t, 0.3, resource.Vector{0.1, 0.9, 0.3}.MaxOver(0b101))
	assert.Equal(t, 0.0, resource.Vector{0.1}.MaxOver(0))
	assert.Equal(t, resource.Vector{0.1, 0, 0.1}, resource.Uniform(0b101, 0.1))
	assert.Equal(t, resource.Tuple{2, -2}, resource.Vector{1.5, -1.5}.Round())
}

func TestCompressionFormulas(t *testing.T) {
	// eq. 1
	assert.Equal(t, 0.25, resource.CompressionRatio(4000, 3000))
	assert.Equal(t, 0.0, resource.CompressionRatio(3000, 4000))
	assert.Equal(t, 0.0, resource.CompressionRatio(0, 0))
	assert.Equal(t, 1.0, resource.CompressionRatio(100, -5))
	s := resource.Standard()
	rc := s.CompressionRatios(resource.Tuple{4000, 100, 10}, resource.Tuple{3600, 50, 10})
	assert.InDelta(t, 0.1, rc[0], 1e-12)
	assert.Equal(t, 0.0, rc[1], "memory is not compressible: ratio is 0 by Def. 2")
	assert.Equal(t, 0.0, rc[2])

	// eq. 4: 9 units of work at 10% compression take 10 units.
	d, err := resource.IdealDuration(9*time.Second, 0.1)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, d)
	// eq. 5 with penalty 5%: 10.5 units.
	d, err = resource.CompressedDuration(9*time.Second, 0.1, 0.05)
	require.NoError(t, err)
	assert.Equal(t, 10500*time.Millisecond, d)
	f, err := resource.Slowdown(0, 0)
	require.NoError(t, err)
	assert.Equal(t, 1.0, f)

	for _, bad := range []struct{ rc, p float64 }{{1, 0}, {-0.1, 0}, {math.NaN(), 0}, {0.1, -1}, {0.1, math.Inf(1)}, {0.1, math.NaN()}} {
		_, err := resource.Slowdown(bad.rc, bad.p)
		assert.ErrorIs(t, err, resource.ErrInvalidRatio, "%v", bad)
	}
	_, err = resource.CompressedDuration(-time.Second, 0.1, 0)
	assert.ErrorIs(t, err, resource.ErrNegative)

	// eq. 6: running weight 3, new weight 1, p = 0.1 → (1 − 0.3)/4 = 0.175.
	b, err := resource.CompressionBound(1, 3, 0.1)
	require.NoError(t, err)
	assert.InDelta(t, 0.175, b, 1e-12)
	// A heavy penalty makes compression a loss: negative bound.
	b, err = resource.CompressionBound(1, 3, 0.5)
	require.NoError(t, err)
	assert.Less(t, b, 0.0)
	for _, bad := range [][3]float64{{-1, 1, 0}, {1, math.NaN(), 0}, {1, 1, -0.1}, {0, 0, 0}, {math.Inf(1), 1, 0}} {
		_, err := resource.CompressionBound(bad[0], bad[1], bad[2])
		assert.ErrorIs(t, err, resource.ErrInvalidRatio, "%v", bad)
	}

	// eq. 7 Reading: clamp(bound, 0, limitation).
	for _, tc := range []struct{ bound, lim, want float64 }{
		{0.175, 0.1, 0.1}, {0.05, 0.1, 0.05}, {-0.2, 0.1, 0}, {0.3, 0, 0},
	} {
		got, err := resource.MaxCompression(tc.bound, tc.lim)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%v", tc)
	}
	for _, bad := range [][2]float64{{math.NaN(), 0.1}, {0.1, 1}, {0.1, -0.1}, {0.1, math.NaN()}} {
		_, err := resource.MaxCompression(bad[0], bad[1])
		assert.ErrorIs(t, err, resource.ErrInvalidRatio, "%v", bad)
	}
}

func TestMustPanics(t *testing.T) {
	assert.Panics(t, func() { resource.MustSchema(resource.CPU, resource.CPU) })
	assert.Panics(t, func() { resource.Standard().MustTuple(-1) })
}
