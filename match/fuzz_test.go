package match_test

import (
	"errors"
	"math"
	"testing"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// FuzzNewQoSVector checks that NewQoSVector never panics, accepts exactly the vectors
// of QoSLen values in [1, 10], and otherwise returns a *FieldError wrapping
// ErrBadVector and the zero vector.
func FuzzNewQoSVector(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 4.0, 10.0, uint8(5))
	f.Add(0.0, 2.0, 3.0, 4.0, 5.0, uint8(5))
	f.Add(1.0, 2.0, 3.0, 4.0, 5.0, uint8(3))
	f.Add(math.NaN(), 2.0, 3.0, 4.0, 5.0, uint8(5))
	f.Fuzz(func(t *testing.T, a, b, c, d, e float64, n uint8) {
		all := []float64{a, b, c, d, e, a}
		vals := all[:min(int(n%7), len(all))]
		v, err := match.NewQoSVector(vals...)
		valid := len(vals) == match.QoSLen
		for _, x := range vals {
			valid = valid && x >= match.QoSMin && x <= match.QoSMax
		}
		if valid != (err == nil) {
			t.Fatalf("NewQoSVector(%v) = %v, %v", vals, v, err)
		}
		if err != nil {
			var fe *match.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, match.ErrBadVector) || v != (match.QoSVector{}) {
				t.Fatalf("NewQoSVector(%v): error %v, vector %v", vals, err, v)
			}
			return
		}
		if v.Validate() != nil {
			t.Fatalf("accepted %v does not validate", v)
		}
	})
}

// FuzzNewWeights checks that NewWeights never panics, that what it accepts sums to 1
// within WeightTolerance with no negative weight, and that its errors wrap
// ErrBadWeights.
func FuzzNewWeights(f *testing.F) {
	f.Add(0.2, 0.2, 0.2, 0.2, 0.2, uint8(5))
	f.Add(1.0, 0.0, 0.0, 0.0, 0.0, uint8(5))
	f.Add(0.5, 0.6, -0.1, 0.0, 0.0, uint8(5))
	f.Add(0.5, 0.5, 0.0, 0.0, 0.0, uint8(2))
	f.Fuzz(func(t *testing.T, a, b, c, d, e float64, n uint8) {
		all := []float64{a, b, c, d, e, a}
		vals := all[:min(int(n%7), len(all))]
		w, err := match.NewWeights(vals...)
		if err != nil {
			if !errors.Is(err, match.ErrBadWeights) || w != (match.Weights{}) {
				t.Fatalf("NewWeights(%v): error %v, weights %v", vals, err, w)
			}
			return
		}
		sum := 0.0
		for _, x := range w {
			if !(x >= 0) {
				t.Fatalf("accepted a negative weight: %v", w)
			}
			sum += x
		}
		if math.Abs(sum-1) > match.WeightTolerance || len(vals) != match.QoSLen {
			t.Fatalf("accepted %v summing to %v", vals, sum)
		}
		if c := w.Class(); w[c] != max(w[0], w[1], w[2], w[3], w[4]) {
			t.Fatalf("class %v of %v is not the largest weight", c, w)
		}
	})
}

// FuzzUniformAllowance checks that UniformAllowance accepts exactly the ratios in
// [0, 1] and puts them on the compressible dimensions only.
func FuzzUniformAllowance(f *testing.F) {
	for _, x := range []float64{0, 0.1, 1, 1.0000001, math.Copysign(0, -1), -1e-300, math.NaN(), math.Inf(1)} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		a, err := match.UniformAllowance(schema3, x)
		if (x >= 0 && x <= 1) != (err == nil) {
			t.Fatalf("UniformAllowance(%v) = %v, %v", x, a, err)
		}
		if err != nil {
			if !errors.Is(err, resource.ErrInvalidRatio) {
				t.Fatalf("UniformAllowance(%v): %v", x, err)
			}
			return
		}
		if a != (match.Fixed{x, 0, x}) {
			t.Fatalf("UniformAllowance(%v) = %v", x, a)
		}
	})
}

// FuzzFineGrained checks the fine-grained matcher against the brute-force reading of
// Alg. 2 on random scenarios, and that a fit can be reserved with its allowance.
func FuzzFineGrained(f *testing.F) {
	for _, s := range []int64{0, 1, 42, -7, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		sc := newScenario(seed)
		r := match.FineGrained{}.Match(sc.server(sc.allow), sc.start, sc.p)
		if r.Code.OK() != bruteForce(sc, allowTuple(sc.rc)) {
			t.Fatalf("seed %d: %v disagrees with brute force", seed, r)
		}
		if r.Code.OK() {
			if _, err := sc.tl.Reserve(sc.start, sc.p, r.Allowance); err != nil {
				t.Fatalf("seed %d: reserve after %v: %v", seed, r, err)
			}
		}
	})
}
