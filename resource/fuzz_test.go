package resource_test

import (
	"errors"
	"math"
	"testing"

	"github.com/finegrain/finegrain/resource"
)

// FuzzParse checks that Parse never panics, that what it accepts is a valid tuple, and
// that Format writes it back to text that parses to the same tuple. The seeds are
// Kubernetes quantities and near misses.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"cpu=2,memory=4Gi", "", "cpu=", "gpu=1,gpu=1", "memory=-1", "disk=9999999999Pi", " net-io = 10Mi ", "cpu=10000000000000000P", "cpu=9223372036854775808",
		"cpu=500m", "cpu=1.5", "memory=0.5Gi", "cpu=1e3", "memory=1E3", "cpu=0.1m", "cpu=+.5", "cpu=1.", "cpu=-0", "cpu=-1m", "memory=7.99Ei", "memory=8Ei",
		"cpu=9223372036854775.807", "cpu=1e-400", "cpu=2e+2", "disk-io=1.5k,net-io=3u", "cpu=1n", "cpu=NaN", "cpu=Inf", "cpu=0x10", "cpu=1_000", "cpu=1e", "cpu=1K", "memory=1GiB"} {
		f.Add(s)
	}
	s := resource.Standard()
	f.Fuzz(func(t *testing.T, text string) {
		v, err := s.Parse(text)
		if err != nil {
			var de *resource.DimensionError
			if !errors.As(err, &de) && !errors.Is(err, resource.ErrSyntax) {
				t.Fatalf("Parse(%q) error %v is neither a DimensionError nor a syntax error", text, err)
			}
			return
		}
		if err := s.Validate(v); err != nil {
			t.Fatalf("Parse(%q) = %v, invalid: %v", text, v, err)
		}
		back, err := s.Parse(s.Format(v))
		if err != nil || back != v {
			t.Fatalf("round trip of %v through %q gave %v, %v", v, s.Format(v), back, err)
		}
	})
}

// FuzzParseAmount checks ParseAmount on a dimension of any valid scale: it never
// panics, fails only with a *DimensionError wrapping ErrSyntax, ErrNegative or
// ErrOverflow, and what it accepts is non-negative and written back by FormatAmount to
// text that reads the same.
func FuzzParseAmount(f *testing.F) {
	for _, c := range []struct {
		text   string
		p      uint8
		binary bool
	}{{"500m", 3, false}, {"16Gi", 0, true}, {"1.5", 2, false}, {"1e3", 9, true}, {"0.1m", 18, false}, {"-0", 0, false}, {"1E", 1, true}, {"9.2E", 0, false}, {"1e-99999", 4, false}} {
		f.Add(c.text, c.p, c.binary)
	}
	f.Fuzz(func(t *testing.T, text string, p uint8, binary bool) {
		scale := int64(1)
		for range p % 19 {
			scale *= 10
		}
		d := resource.Dimension{Name: "d", BaseUnitsPerQuantity: scale, BinarySI: binary}
		v, err := d.ParseAmount(text)
		if err != nil {
			var de *resource.DimensionError
			if !errors.As(err, &de) || de.Dim != "d" ||
				!(errors.Is(err, resource.ErrSyntax) || errors.Is(err, resource.ErrNegative) || errors.Is(err, resource.ErrOverflow)) {
				t.Fatalf("ParseAmount(%q) at scale %d: error %v", text, scale, err)
			}
			return
		}
		if v < 0 {
			t.Fatalf("ParseAmount(%q) at scale %d = %d", text, scale, v)
		}
		out := d.FormatAmount(v)
		if back, err := d.ParseAmount(out); err != nil || back != v {
			t.Fatalf("%q at scale %d: %d written %q, read back %d, %v", text, scale, v, out, back, err)
		}
	})
}

// FuzzNewSchema checks that NewSchema never panics and that a schema it accepts indexes
// every dimension by name.
func FuzzNewSchema(f *testing.F) {
	f.Add("cpu", "memory", "gpu", true, 3)
	f.Add("a", "a", "", false, 9)
	f.Fuzz(func(t *testing.T, a, b, c string, comp bool, n int) {
		names := []string{a, b, c}
		var dims []resource.Dimension
		for i := 0; i < n%12; i++ {
			dims = append(dims, resource.Dimension{Name: names[i%3] + string(rune('0'+i/3)), Compressible: comp && i%2 == 0})
		}
		s, err := resource.NewSchema(dims...)
		if err != nil {
			return
		}
		for i, d := range dims {
			j, ok := s.Index(d.Name)
			if !ok || j != i || s.Compressible().Has(i) != d.Compressible {
				t.Fatalf("schema %v: dimension %d %q indexed at %d, %v", s, i, d.Name, j, ok)
			}
		}
	})
}

// FuzzFromSlice checks that FromSlice accepts exactly the non-negative amounts that fit
// the schema.
func FuzzFromSlice(f *testing.F) {
	f.Add(int64(1), int64(2), int64(3), int64(0))
	f.Add(int64(-1), int64(2), int64(0), int64(7))
	s := resource.MustSchema(resource.CPU, resource.Memory, resource.GPU)
	f.Fuzz(func(t *testing.T, a, b, c, d int64) {
		in := []int64{a, b, c, d}[:3+int(uint64(d)%2)]
		v, err := s.FromSlice(in...)
		ok := len(in) <= 3 && a >= 0 && b >= 0 && c >= 0
		if (err == nil) != ok {
			t.Fatalf("FromSlice(%v) = %v, %v", in, v, err)
		}
	})
}

// FuzzCompressionBound checks that CompressionBound never panics, that it refuses
// exactly the weights and penalties its doc comment names (a weight or penalty that is
// not a finite number ≥ 0, or weights summing to zero) with an error wrapping
// ErrInvalidRatio, and that what it returns otherwise is a finite bound of at most 1.
func FuzzCompressionBound(f *testing.F) {
	for _, c := range [][3]float64{{1, 3, 0.05}, {0, 0, 0}, {1, 0, 0}, {-1, 1, 0}, {1, 1, math.Inf(1)}, {math.NaN(), 1, 0}, {math.MaxFloat64, math.MaxFloat64, 1e300}, {1e-320, 0, 0}} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, wNew, wRunning, p float64) {
		b, err := resource.CompressionBound(wNew, wRunning, p)
		ok := func(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
		valid := ok(wNew) && ok(wRunning) && ok(p) && wNew+wRunning != 0
		if valid != (err == nil) {
			t.Fatalf("CompressionBound(%v, %v, %v) = %v, %v", wNew, wRunning, p, b, err)
		}
		if err != nil {
			if !errors.Is(err, resource.ErrInvalidRatio) || b != 0 {
				t.Fatalf("CompressionBound(%v, %v, %v): %v, error %v", wNew, wRunning, p, b, err)
			}
			return
		}
		if math.IsNaN(b) || math.IsInf(b, 0) || b > 1 {
			t.Fatalf("CompressionBound(%v, %v, %v) = %v", wNew, wRunning, p, b)
		}
	})
}
