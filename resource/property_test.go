package resource_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

// tuples generates tuples with amounts in ±2^40, far from overflow when summed.
func tuples() gopter.Gen {
	return gen.SliceOfN(resource.MaxDims, gen.Int64Range(-1<<40, 1<<40)).Map(func(s []int64) resource.Tuple {
		var t resource.Tuple
		copy(t[:], s)
		return t
	})
}

func TestTupleLaws(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("add commutes", prop.ForAll(func(a, b resource.Tuple) bool {
		return a.Add(b) == b.Add(a)
	}, tuples(), tuples()))
	props.Property("add associates", prop.ForAll(func(a, b, c resource.Tuple) bool {
		return a.Add(b).Add(c) == a.Add(b.Add(c))
	}, tuples(), tuples(), tuples()))
	props.Property("sub inverts add", prop.ForAll(func(a, b resource.Tuple) bool {
		return a.Add(b).Sub(b) == a
	}, tuples(), tuples()))
	props.Property("zero is the identity of add", prop.ForAll(func(a resource.Tuple) bool {
		return a.Add(resource.Tuple{}) == a
	}, tuples()))
	props.Property("mul commutes", prop.ForAll(func(a, b resource.Tuple) bool {
		return a.Mul(b) == b.Mul(a)
	}, tuples(), tuples()))
	props.Property("scale by 1 is identity", prop.ForAll(func(a resource.Tuple) bool {
		return a.Scale(1) == a
	}, tuples()))
	props.Property("scale by 0 is zero", prop.ForAll(func(a resource.Tuple) bool {
		return a.Scale(0).IsZero()
	}, tuples()))
	props.Property("scale by 2 is add to self", prop.ForAll(func(a resource.Tuple) bool {
		return a.Scale(2) == a.Add(a)
	}, tuples()))
	props.Property("min and max partition the pair", prop.ForAll(func(a, b resource.Tuple) bool {
		return a.Min(b).Add(a.Max(b)) == a.Add(b) && a.Max(b).Covers(a) && a.Covers(a.Min(b))
	}, tuples(), tuples()))
	props.Property("AnyLess is exactly not Covers", prop.ForAll(func(a, b resource.Tuple) bool {
		return a.AnyLess(b) == !a.Covers(b)
	}, tuples(), tuples()))
	props.Property("Covers is reflexive, AnyLess irreflexive", prop.ForAll(func(a resource.Tuple) bool {
		return a.Covers(a) && !a.AnyLess(a)
	}, tuples()))
	props.Property("a + non-negative covers a", prop.ForAll(func(a, b resource.Tuple) bool {
		return a.Add(b.Max(resource.Tuple{})).Covers(a)
	}, tuples(), tuples()))
	props.Property("projections split a tuple", prop.ForAll(func(a resource.Tuple) bool {
		s := resource.Standard()
		c, n := s.Split(a)
		return c.Add(n) == a.Only(s.All())
	}, tuples()))
	props.Property("dominant share is the max share", prop.ForAll(func(a, c resource.Tuple) bool {
		a, c = a.Max(resource.Tuple{}), c.Max(resource.Tuple{}).Add(resource.Tuple{1, 1, 1, 1, 1, 1, 1, 1})
		d := a.DominantShare(c)
		return d == a.Shares(c).Max() && d >= 0
	}, tuples(), tuples()))
	props.TestingRun(t)
}

func TestCompressionLaws(t *testing.T) {
	props := gopter.NewProperties(params())
	ratio := gen.Float64Range(0, 0.999)
	props.Property("eq. 1 ratio in [0,1] and zero when allocation covers demand", prop.ForAll(func(d, a int64) bool {
		r := resource.CompressionRatio(d, a)
		if a >= d {
			return r == 0
		}
		return r >= 0 && r <= 1
	}, gen.Int64Range(0, 1<<40), gen.Int64Range(-1<<20, 1<<40)))
	props.Property("eq. 5 duration grows with rc and p", prop.ForAll(func(rc1, rc2, p float64) bool {
		lo, hi := math.Min(rc1, rc2), math.Max(rc1, rc2)
		f1, err1 := resource.Slowdown(lo, p)
		f2, err2 := resource.Slowdown(hi, p)
		f0, err0 := resource.Slowdown(lo, 0)
		return err0 == nil && err1 == nil && err2 == nil && f1 <= f2 && f0 <= f1 && f0 >= 1
	}, ratio, ratio, gen.Float64Range(0, 2)))
	props.Property("eq. 7 allowed compression lies in [0, limitation]", prop.ForAll(func(wNew, wRun, p, lim float64) bool {
		b, err := resource.CompressionBound(wNew, wRun, p)
		if err != nil {
			return false
		}
		rc, err := resource.MaxCompression(b, lim)
		return err == nil && rc >= 0 && rc <= lim
	}, gen.Float64Range(0.001, 100), gen.Float64Range(0, 100), gen.Float64Range(0, 1), ratio))
	props.TestingRun(t)
}

// amounts generates valid amounts that reach every form Format writes: any int64 ≥ 0,
// small counts, and multiples of powers of 1024 and of 10 (the suffixed forms).
func amounts() gopter.Gen {
	return gen.OneGenOf(
		gen.Int64Range(0, math.MaxInt64),
		gen.Int64Range(0, 5000),
		gen.IntRange(0, 60).FlatMap(func(v any) gopter.Gen {
			shift := v.(int)
			return gen.Int64Range(0, math.MaxInt64>>shift).Map(func(k int64) int64 { return k << shift })
		}, reflect.TypeOf(int64(0))),
		gen.IntRange(0, 18).FlatMap(func(v any) gopter.Gen {
			p := int64(1)
			for range v.(int) {
				p *= 10
			}
			return gen.Int64Range(0, math.MaxInt64/p).Map(func(k int64) int64 { return k * p })
		}, reflect.TypeOf(int64(0))),
	)
}

// validTuples generates valid tuples of a schema of n dimensions.
func validTuples(n int) gopter.Gen {
	return gen.SliceOfN(n, amounts()).Map(func(s []int64) resource.Tuple {
		var t resource.Tuple
		copy(t[:], s)
		return t
	})
}

// Format then Parse gives back every valid tuple exactly, in the standard schema and in
// one whose dimensions have other scales (0 meaning 1, tenths, hundredths, micro-,
// nano-, atto-units, a binary count).
func TestFormatParseRoundTrip(t *testing.T) {
	odd := resource.MustSchema(
		resource.Dimension{Name: "plain"},
		resource.Dimension{Name: "tenths", BaseUnitsPerQuantity: 10},
		resource.Dimension{Name: "cents", BaseUnitsPerQuantity: 100, BinarySI: true},
		resource.Dimension{Name: "micro", BaseUnitsPerQuantity: 1e6},
		resource.Dimension{Name: "nano", BaseUnitsPerQuantity: 1e9, BinarySI: true},
		resource.Dimension{Name: "atto", BaseUnitsPerQuantity: 1e18},
		resource.Dimension{Name: "bytes", BinarySI: true},
		resource.Dimension{Name: "e4", BaseUnitsPerQuantity: 1e4},
	)
	props := gopter.NewProperties(params())
	for _, s := range []*resource.Schema{resource.Standard(), odd} {
		props.Property("Parse(Format(t)) == t in "+s.String(), prop.ForAll(func(v resource.Tuple) bool {
			back, err := s.Parse(s.Format(v))
			return err == nil && back == v
		}, validTuples(s.Len())))
	}
	props.Property("FormatAmount of a negative amount is the amount's with a minus sign", prop.ForAll(func(v int64) bool {
		return resource.CPU.FormatAmount(-v) == "-"+resource.CPU.FormatAmount(v) &&
			resource.Memory.FormatAmount(-v) == "-"+resource.Memory.FormatAmount(v)
	}, gen.Int64Range(1, math.MaxInt64)))
	props.TestingRun(t)
}
