package resource_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
)

// Known answers: amounts as a Kubernetes user writes them, in each standard dimension's
// base unit.
func TestParseQuantities(t *testing.T) {
	const gi = int64(1) << 30
	tests := []struct {
		text string
		want resource.Tuple // cpu, memory, disk-io, net-io, disk, gpu
	}{
		{"cpu=500m", resource.Tuple{500}},
		{"cpu=2", resource.Tuple{2000}},
		{"cpu=1.5", resource.Tuple{1500}},
		{"cpu=0.25", resource.Tuple{250}},
		{"cpu=.5", resource.Tuple{500}},
		{"cpu=1.", resource.Tuple{1000}},
		{"cpu=+3", resource.Tuple{3000}},
		{"cpu=2500m", resource.Tuple{2500}},
		{"cpu=1e3", resource.Tuple{1000000}},
		{"cpu=1E3", resource.Tuple{1000000}},
		{"cpu=25e-1", resource.Tuple{2500}},
		{"cpu=2k", resource.Tuple{2000000}},
		{"cpu=1500000u", resource.Tuple{1500}},
		{"cpu=1000000n", resource.Tuple{1}},
		{"memory=16Gi", resource.Tuple{0, 16 * gi}},
		{"memory=0.5Gi", resource.Tuple{0, gi / 2}},
		{"memory=1536Mi", resource.Tuple{0, 1536 << 20}},
		{"memory=1e3", resource.Tuple{0, 1000}},
		{"memory=1E3", resource.Tuple{0, 1000}},
		{"memory=4G", resource.Tuple{0, 4e9}},
		{"memory=128974848", resource.Tuple{0, 128974848}},
		{"memory=129e6", resource.Tuple{0, 129000000}},
		{"memory=123Mi", resource.Tuple{0, 123 << 20}},
		{"memory=1E", resource.Tuple{0, 1e18}}, // E alone is the suffix exa
		{"memory=7Ei", resource.Tuple{0, 7 << 60}},
		{"disk-io=100Mi, net-io=10M", resource.Tuple{0, 0, 100 << 20, 10e6}},
		{"disk=1T,gpu=2", resource.Tuple{0, 0, 0, 0, 1e12, 2}},
		{"cpu=0,memory=0Gi,gpu=-0", resource.Tuple{}},
		{"cpu=007", resource.Tuple{7000}},
		{"cpu=0e99999999999999999999", resource.Tuple{}},
	}
	s := resource.Standard()
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got, err := s.Parse(tc.text)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// An amount finer than the base unit is rounded up to the next base unit, as
// Kubernetes' Quantity.MilliValue and Value round.
func TestParseRoundsUp(t *testing.T) {
	tests := []struct {
		dim  resource.Dimension
		text string
		want int64
	}{
		{resource.CPU, "0.1m", 1},
		{resource.CPU, "1n", 1},
		{resource.CPU, "1001u", 2},
		{resource.CPU, "1.0001", 1001},
		{resource.CPU, "0.0005", 1},
		{resource.CPU, "1e-400", 1},
		{resource.CPU, "123456789012345678901234567890e-20", 1234567890124},
		{resource.Memory, "0.3", 1},
		{resource.Memory, "1.1Gi", 1181116007}, // 1181116006.4
		{resource.Memory, "2.5", 3},
		{resource.Memory, "999m", 1},
		{resource.Memory, "1000m", 1},
		{resource.Memory, "1001m", 2},
		{resource.GPU, "0.5", 1},
	}
	for _, tc := range tests {
		t.Run(tc.dim.Name+"="+tc.text, func(t *testing.T) {
			got, err := tc.dim.ParseAmount(tc.text)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseQuantityErrors(t *testing.T) {
	tests := []struct {
		text string
		want error
		dim  string
	}{
		{"cpu=", resource.ErrSyntax, "cpu"},
		{"cpu=lots", resource.ErrSyntax, "cpu"},
		{"cpu=NaN", resource.ErrSyntax, "cpu"},
		{"cpu=nan", resource.ErrSyntax, "cpu"},
		{"cpu=Inf", resource.ErrSyntax, "cpu"},
		{"cpu=+Inf", resource.ErrSyntax, "cpu"},
		{"cpu=0x10", resource.ErrSyntax, "cpu"},
		{"cpu=1_000", resource.ErrSyntax, "cpu"},
		{"cpu=1,5", resource.ErrSyntax, ""}, // "5" is not name=amount
		{"cpu=2 cores", resource.ErrSyntax, "cpu"},
		{"cpu=2 m", resource.ErrSyntax, "cpu"},
		{"cpu=.", resource.ErrSyntax, "cpu"},
		{"cpu=+", resource.ErrSyntax, "cpu"},
		{"cpu=-", resource.ErrSyntax, "cpu"},
		{"cpu=--1", resource.ErrSyntax, "cpu"},
		{"cpu=1.2.3", resource.ErrSyntax, "cpu"},
		{"cpu=1e", resource.ErrSyntax, "cpu"},
		{"cpu=1e+", resource.ErrSyntax, "cpu"},
		{"cpu=1e3.5", resource.ErrSyntax, "cpu"},
		{"cpu=25E+2m", resource.ErrSyntax, "cpu"},
		{"cpu=1K", resource.ErrSyntax, "cpu"}, // Kubernetes' kilo is k
		{"memory=1KB", resource.ErrSyntax, "memory"},
		{"memory=1GiB", resource.ErrSyntax, "memory"},
		{"memory=1gi", resource.ErrSyntax, "memory"},
		{"memory=Gi", resource.ErrSyntax, "memory"},
		{"memory=1Gi1", resource.ErrSyntax, "memory"},
		{"memory=-1", resource.ErrNegative, "memory"},
		{"memory=-0.5Gi", resource.ErrNegative, "memory"},
		{"cpu=-1m", resource.ErrNegative, "cpu"},
		{"cpu=-1e-400", resource.ErrNegative, "cpu"},
		{"cpu=9223372036854776", resource.ErrOverflow, "cpu"}, // cores: × 1000 overflows
		{"cpu=9223372036854775808m", resource.ErrOverflow, "cpu"},
		{"cpu=1E", resource.ErrOverflow, "cpu"},
		{"cpu=1e16", resource.ErrOverflow, "cpu"}, // 10^19 millicores
		{"cpu=1e19m", resource.ErrSyntax, "cpu"},  // an exponent takes no suffix
		{"cpu=1e99999999999999999999", resource.ErrOverflow, "cpu"},
		{"memory=8Ei", resource.ErrOverflow, "memory"},
		{"memory=9223372036854775808", resource.ErrOverflow, "memory"},
		{"memory=99999999999999999999999999k", resource.ErrOverflow, "memory"},
		{"gpu=1,gpu=1", resource.ErrDuplicateDimension, "gpu"},
		{"cpu=1, cpu=500m", resource.ErrDuplicateDimension, "cpu"},
		{"cores=2", resource.ErrUnknownDimension, "cores"},
		{"CPU=2", resource.ErrUnknownDimension, "CPU"},
	}
	s := resource.Standard()
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got, err := s.Parse(tc.text)
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, resource.Tuple{}, got)
			if tc.dim == "" {
				return
			}
			var de *resource.DimensionError
			require.True(t, errors.As(err, &de), "%v", err)
			assert.Equal(t, tc.dim, de.Dim)
			assert.Contains(t, err.Error(), `"`+tc.dim+`"`)
			if errors.Is(err, resource.ErrSyntax) {
				assert.Contains(t, err.Error(), "want a quantity such as 500m, 2, 1.5, 16Gi or 1e3")
			}
		})
	}
}

func TestParseQuantityMessages(t *testing.T) {
	s := resource.Standard()
	for _, tc := range []struct{ text, want string }{
		{"cpu=lots", `resource: dimension "cpu": syntax error ("lots": want a quantity such as 500m, 2, 1.5, 16Gi or 1e3)`},
		{"memory=", `resource: dimension "memory": syntax error ("": want a quantity such as 500m, 2, 1.5, 16Gi or 1e3)`},
		{"memory=-1", `resource: dimension "memory": negative amount: -1`},
		{"cpu=10000000000000000P", `resource: dimension "cpu": amount overflows int64 (10000000000000000P is too large: at most 9223372036854775807m)`},
		{"memory=8Ei", `resource: dimension "memory": amount overflows int64 (8Ei is too large: at most 9223372036854775807)`},
		{"cpu=2,cpu=3", `resource: dimension "cpu": duplicate dimension (given twice in "cpu=2,cpu=3")`},
	} {
		_, err := s.Parse(tc.text)
		assert.EqualError(t, err, tc.want, tc.text)
	}
}

// The largest amount each standard scale reads, and the next one.
func TestParseQuantityBoundaries(t *testing.T) {
	tests := []struct {
		dim        resource.Dimension
		most       string
		want       int64
		overflowed string
	}{
		{resource.CPU, "9223372036854775807m", math.MaxInt64, "9223372036854775808m"},
		{resource.CPU, "9223372036854775.807", math.MaxInt64, "9223372036854775.8071"}, // rounds up past it
		{resource.CPU, "9223372036854775", 9223372036854775000, "9223372036854776"},
		{resource.Memory, "9223372036854775807", math.MaxInt64, "9223372036854775808"},
		{resource.Memory, "9223372036854775807000m", math.MaxInt64, "9223372036854775807001m"},
		{resource.Memory, "8589934591Gi", 8589934591 << 30, "8589934592Gi"},
		{resource.Memory, "9.223372036854775807E", math.MaxInt64, "9.223372036854775808E"},
	}
	for _, tc := range tests {
		t.Run(tc.dim.Name+"="+tc.most, func(t *testing.T) {
			v, err := tc.dim.ParseAmount(tc.most)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
			_, err = tc.dim.ParseAmount(tc.overflowed)
			assert.ErrorIs(t, err, resource.ErrOverflow)
		})
	}
}

func TestFormatQuantities(t *testing.T) {
	const gi = int64(1) << 30
	tests := []struct {
		dim  resource.Dimension
		v    int64
		want string
	}{
		{resource.CPU, 2000, "2"},
		{resource.CPU, 2500, "2500m"},
		{resource.CPU, 500, "500m"},
		{resource.CPU, 1, "1m"},
		{resource.CPU, 64000, "64"},
		{resource.CPU, 1000000, "1000"},
		{resource.CPU, 0, "0"},
		{resource.CPU, math.MaxInt64, "9223372036854775807m"},
		{resource.CPU, -2500, "-2500m"},
		{resource.CPU, math.MinInt64, "-9223372036854775808m"},
		{resource.Memory, 16 * gi, "16Gi"},
		{resource.Memory, 1536 << 20, "1536Mi"},
		{resource.Memory, gi / 2, "512Mi"},
		{resource.Memory, 1024, "1Ki"},
		{resource.Memory, 1000, "1k"},
		{resource.Memory, 4e9, "4G"},                // not 3906250Ki: the shorter
		{resource.Memory, 1e12, "1T"},               // not 976562500Ki
		{resource.Memory, 1000 << 20, "1000Mi"},     // not 1048576k
		{resource.Memory, 8192000, "8192k"},         // 8000Ki is longer
		{resource.Memory, 1000 << 10, "1024k"},      // 1000Ki is longer
		{resource.Memory, 3 << 10, "3Ki"},           // 3072 plain is longer
		{resource.Memory, 2048 << 10, "2Mi"},        // the largest binary suffix
		{resource.Memory, 1181116007, "1181116007"}, // neither divides
		{resource.Memory, 7 << 60, "7Ei"},           //
		{resource.Memory, 1e18, "1E"},               // read back as exa
		{resource.Memory, math.MaxInt64, "9223372036854775807"},
		{resource.Memory, math.MinInt64, "-8Ei"},
		{resource.Memory, -1536 << 20, "-1536Mi"},
		{resource.Memory, 1, "1"},
		{resource.DiskIO, 100 << 20, "100Mi"},
		{resource.NetIO, 125e6, "125M"},
		{resource.Disk, 47632564, "47632564"},
		{resource.GPU, 1, "1"},
		{resource.GPU, 1024, "1024"}, // counts have no suffix
		{resource.GPU, 1000, "1000"},
		{resource.Dimension{Name: "slots"}, 4096, "4096"},
		{resource.Dimension{Name: "c", BaseUnitsPerQuantity: 100}, 150, "1.5"},
		{resource.Dimension{Name: "c", BaseUnitsPerQuantity: 100}, 5, "0.05"},
		{resource.Dimension{Name: "c", BaseUnitsPerQuantity: 100}, 300, "3"},
		{resource.Dimension{Name: "n", BaseUnitsPerQuantity: 1e9}, 1500000000, "1500m"},
		{resource.Dimension{Name: "n", BaseUnitsPerQuantity: 1e9}, 1500000, "1500u"},
		{resource.Dimension{Name: "n", BaseUnitsPerQuantity: 1e9}, 1500001, "1500001n"},
		{resource.Dimension{Name: "a", BaseUnitsPerQuantity: 1e18}, 1, "0.000000000000000001"},
		{resource.Dimension{Name: "a", BaseUnitsPerQuantity: 1e18}, 1e9, "1n"},
		{resource.Dimension{Name: "a", BaseUnitsPerQuantity: 1e18}, math.MaxInt64, "9.223372036854775807"},
		{resource.Dimension{Name: "bad", BaseUnitsPerQuantity: 7}, 14, "14"}, // refused by NewSchema: base units
	}
	for _, tc := range tests {
		t.Run(tc.dim.Name+"/"+tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.dim.FormatAmount(tc.v))
			if tc.v < 0 || tc.dim.Name == "bad" {
				return
			}
			back, err := tc.dim.ParseAmount(tc.want)
			require.NoError(t, err)
			assert.Equal(t, tc.v, back, "read back")
		})
	}
}

func TestFormatTuple(t *testing.T) {
	s := resource.Standard()
	v := resource.Tuple{2500, 4 << 30, 0, 10 << 20, 1e12, 1}
	assert.Equal(t, "cpu=2500m,memory=4Gi,net-io=10Mi,disk=1T,gpu=1", s.Format(v))
	assert.Equal(t, "cpu=2,memory=1536Mi", s.Format(resource.Tuple{2000, 1536 << 20}))
	assert.Equal(t, "", s.Format(resource.Tuple{}))
	// A slot past the schema is written in base units under its slot name, and refused.
	small := resource.MustSchema(resource.CPU)
	text := small.Format(resource.Tuple{1500, 7})
	assert.Equal(t, "cpu=1500m,#1=7", text)
	_, err := small.Parse(text)
	assert.ErrorIs(t, err, resource.ErrUnknownDimension)
}

func TestBaseUnitsPerQuantity(t *testing.T) {
	for _, scale := range []int64{0, 1, 10, 100, 1000, 1e6, 1e9, 1e18} {
		_, err := resource.NewSchema(resource.Dimension{Name: "x", BaseUnitsPerQuantity: scale})
		assert.NoError(t, err, "%d", scale)
	}
	for _, scale := range []int64{-1, -1000, 2, 7, 60, 1024, 999, 1001, 5e17, math.MaxInt64} {
		s, err := resource.NewSchema(resource.CPU, resource.Dimension{Name: "x", BaseUnitsPerQuantity: scale})
		require.ErrorIs(t, err, resource.ErrInvalidScale, "%d", scale)
		assert.Nil(t, s)
		var de *resource.DimensionError
		require.True(t, errors.As(err, &de))
		assert.Equal(t, "x", de.Dim)
		assert.Contains(t, err.Error(), "power of ten")
		_, err = resource.Dimension{Name: "x", BaseUnitsPerQuantity: scale}.ParseAmount("1")
		assert.ErrorIs(t, err, resource.ErrInvalidScale, "%d", scale)
	}
	// Zero means one: a dimension defined before the field existed reads plain numbers
	// in its base unit, as it always did.
	old := resource.Dimension{Name: "slots", Unit: "slot"}
	v, err := old.ParseAmount("12")
	require.NoError(t, err)
	assert.Equal(t, int64(12), v)
	v, err = old.ParseAmount("2k")
	require.NoError(t, err)
	assert.Equal(t, int64(2000), v)
	assert.Equal(t, "12", old.FormatAmount(12))

	deci := resource.Dimension{Name: "d", BaseUnitsPerQuantity: 10}
	v, err = deci.ParseAmount("1.25")
	require.NoError(t, err)
	assert.Equal(t, int64(13), v, "rounded up to the next tenth")
	assert.Equal(t, "1.3", deci.FormatAmount(13))
}

// Long input: many digits are read exactly, without trouble.
func TestParseLongInput(t *testing.T) {
	long := "0." + strings.Repeat("0", 100000) + "1"
	v, err := resource.CPU.ParseAmount(long)
	require.NoError(t, err)
	assert.Equal(t, int64(1), v)
	v, err = resource.Memory.ParseAmount(strings.Repeat("0", 100000) + "12Ki")
	require.NoError(t, err)
	assert.Equal(t, int64(12<<10), v)
	_, err = resource.Memory.ParseAmount("1" + strings.Repeat("0", 100000))
	assert.ErrorIs(t, err, resource.ErrOverflow)
}
