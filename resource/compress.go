package resource

import (
	"fmt"
	"math"
	"time"
)

// DefaultCompressionLimit is the largest compression ratio FGM allows on a compressible
// resource: 10%, the paper's measured limit (docs/methods.md §1, FGM §2.1). Re-measure it
// when the environment changes.
const DefaultCompressionLimit = 0.10

// CompressionRatio is eq. 1 (Def. 2): the fraction of its demand a task does not get on
// one dimension over a period, (demand − alloc)/demand when demand > alloc, else 0. A
// negative allocation counts as zero, so the ratio lies in [0, 1]. The ratio is
// meaningful for compressible dimensions only; Schema.CompressionRatios applies it per
// dimension and keeps non-compressible ones at 0.
func CompressionRatio(demand, alloc int64) float64 {
	alloc = max(alloc, 0)
	if demand <= alloc {
		return 0
	}
	return float64(demand-alloc) / float64(demand)
}

// CompressionRatios applies eq. 1 to every compressible dimension; non-compressible
// dimensions are 0 by definition (Def. 2).
func (s *Schema) CompressionRatios(demand, alloc Tuple) Vector {
	var v Vector
	for i := 0; i < s.n; i++ {
		if s.compressible.Has(i) {
			v[i] = CompressionRatio(demand[i], alloc[i])
		}
	}
	return v
}

// Slowdown is the factor by which compression rc stretches a task's duration, with
// contention penalty p: (1 + p)/(1 − rc), eq. 5 (eq. 4 is the case p = 0). Work is
// conserved: a task given (1 − rc) of its demand runs 1/(1 − rc) times as long. It fails
// unless rc is in [0, 1) and p ≥ 0, both finite.
func Slowdown(rc, p float64) (float64, error) {
	if !(rc >= 0 && rc < 1) {
		return 0, fmt.Errorf("resource: compression ratio %v not in [0, 1): %w", rc, ErrInvalidRatio)
	}
	if !(p >= 0) || math.IsInf(p, 1) {
		return 0, fmt.Errorf("resource: contention penalty %v not a finite value ≥ 0: %w", p, ErrInvalidRatio)
	}
	return (1 + p) / (1 - rc), nil
}

// IdealDuration is eq. 4: the duration under compression rc of work that takes d
// uncompressed, d/(1 − rc), with no contention penalty. It rounds to the nearest
// nanosecond and saturates at the largest Duration.
func IdealDuration(d time.Duration, rc float64) (time.Duration, error) {
	return CompressedDuration(d, rc, 0)
}

// CompressedDuration is eq. 5: the real duration under compression rc and contention
// penalty p of work that takes d uncompressed, (1 + p) × d/(1 − rc). It fails on a
// negative d and on the inputs Slowdown rejects; it rounds to the nearest nanosecond and
// saturates at the largest Duration.
func CompressedDuration(d time.Duration, rc, p float64) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("resource: negative duration %v: %w", d, ErrNegative)
	}
	f, err := Slowdown(rc, p)
	if err != nil {
		return 0, err
	}
	return time.Duration(roundSat(float64(d) * f)), nil
}

// CompressionBound is eq. 6: admitting a new task by compressing the running ones raises
// throughput only while the compression ratio stays below
//
//	(wNew − p × wRunning) / (wRunning + wNew)
//
// where wRunning is the summed weight (work) of the n running tasks, wNew the weight of
// the task n+1 being admitted and p the contention penalty. The bound may be negative:
// then no compression pays. Weights must be finite and ≥ 0 with a positive sum, and
// p ≥ 0 and finite; the bound is then a finite number, also for weights whose sum or
// product with p overflows the float range (it depends on their ratio only). Use
// MaxCompression to turn the bound into the allowed ratio (eq. 7).
func CompressionBound(wNew, wRunning, p float64) (float64, error) {
	for _, w := range [...]struct {
		name string
		v    float64
	}{{"new task weight", wNew}, {"running weight", wRunning}, {"contention penalty", p}} {
		if !(w.v >= 0) || math.IsInf(w.v, 1) {
			return 0, fmt.Errorf("resource: %s %v not a finite value ≥ 0: %w", w.name, w.v, ErrInvalidRatio)
		}
	}
	if wNew+wRunning == 0 {
		return 0, fmt.Errorf("resource: weights sum to zero: %w", ErrInvalidRatio)
	}
	n, r := wNew, wRunning
	cost, sum := p*r, r+n
	if math.IsInf(cost, 1) || math.IsInf(sum, 1) {
		// The weights' sum or p × wRunning overflowed (1e308 + 1e308 = +Inf, and the
		// bound would read 0 or NaN): the bound depends on the weights' ratio only, so
		// scale them by a power of two, exactly, until both are below 1; then neither
		// the sum nor the product overflows.
		_, e := math.Frexp(max(wNew, wRunning))
		n, r = math.Ldexp(n, -e), math.Ldexp(r, -e)
		cost, sum = p*r, r+n
	}
	b := (n - cost) / sum
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return 0, fmt.Errorf("resource: compression bound of new task weight %v, running weight %v and contention penalty %v is %v: %w", wNew, wRunning, p, b, ErrInvalidRatio)
	}
	return b, nil
}

// MaxCompression is eq. 7 under the library's Reading (docs/methods.md §1): the
// compression ratio allowed is the eq. 6 bound clamped to [0, limitation]. The paper
// prints min(max(limitation, bound), 10%), whose max would allow at least limitation even
// when compression loses throughput; we read it as a clamp, so a negative bound means "do
// not compress" and limitation (DefaultCompressionLimit unless measured) is the ceiling.
// It fails unless bound is a number and limitation is in [0, 1).
func MaxCompression(bound, limitation float64) (float64, error) {
	if bound != bound {
		return 0, fmt.Errorf("resource: compression bound is NaN: %w", ErrInvalidRatio)
	}
	if !(limitation >= 0 && limitation < 1) {
		return 0, fmt.Errorf("resource: compression limitation %v not in [0, 1): %w", limitation, ErrInvalidRatio)
	}
	return min(max(bound, 0), limitation), nil
}
