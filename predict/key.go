package predict

import (
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/finegrain/finegrain/stage"
)

// Key identifies a class of similar tasks (docs/methods.md §2, Def. 3): tasks i and j are
// similar iff they run the same execution logic on the same amount of input, L_i = L_j ∧
// D_i = D_j. Key is a comparable value; an Estimator learns one demand profile per key.
//
// Exact matching is the paper's definition, and it is what SimilarTask does by default.
// It rarely matches in real traces: two runs of the same job seldom read the same number
// of bytes, so under exact matching most tasks stay unpredictable and fall back to their
// requested quantity. Two options trade accuracy for coverage:
//
//   - WithSizeBuckets maps sizes to buckets (LogBuckets, LinearBuckets) and learns one
//     profile per bucket. More keys become predictable sooner and memory shrinks, but tasks
//     up to a bucket's width apart are averaged together: with LogBuckets(2), durations
//     may be off by up to a factor of two for tasks whose duration grows with input.
//   - WithNearestSize predicts an unseen size from the nearest known size of the same
//     logic within a factor, scaled by a SizeScaler (ScaleDurations by default:
//     durations proportional to input, demands unchanged). It answers for sizes never
//     seen, but the answer is only as right as the scaling model; nothing is learned
//     from a scaled estimate, and the scaled profile is built per call (it allocates).
//
// Both may be combined: bucketing first, then the nearest bucket.
//
// Exact matching also learns nothing before a key's first task finishes: in replays of
// production traces about a third of the tasks are the first of their key (a job seen
// once, the last partial block of a job). A key may therefore name its Family, a coarser
// class — the same application code with other arguments, plus the task type — and
// SimilarTask learns every family too, per class of input size (WithFamily): a key
// without an estimate of its own is predicted from its family's tasks of the same size
// class, or of the nearest learned class within a factor, scaled by the SizeScaler.
// Tasks of a family are less alike than tasks of a key, so a family estimate is a
// fallback only, never mixed into a key's own.
type Key struct {
	// Logic identifies the execution logic: an opaque string the embedder chooses, e.g.
	// the MD5 of the application code and its arguments plus the task type (map,
	// reduce, ...), as FGM does. Must not be empty.
	Logic string
	// InputSize is the amount of input data the task processes, in a unit the embedder
	// chooses consistently (bytes, records). Must not be negative.
	InputSize int64
	// Family optionally names the class of logics Logic belongs to: what similar
	// logics share once their arguments are set aside, e.g. the MD5 of the
	// application code alone plus the task type ("wordcount.jar/map"), for the logics
	// of every run of that application. Empty means none is known: the key is
	// predicted from its own observations only. Family is not part of the key's
	// identity for learning: an estimator learns Logic and InputSize under one
	// estimate whatever the Family, so one logic should always name the same Family.
	Family string
}

func (k Key) validate() error {
	if k.Logic == "" {
		return fieldErr("key.Logic", k.Logic, ErrInvalidKey)
	}
	if k.InputSize < 0 {
		return fieldErr("key.InputSize", k.InputSize, ErrInvalidKey)
	}
	return nil
}

// Bucketing maps an input size (≥ 0) to the canonical size of its bucket: every size in
// a bucket maps to the same value, and the mapping is monotone (a larger size never maps
// below a smaller one's bucket). SimilarTask learns one profile per (logic, bucket).
type Bucketing func(size int64) int64

// LogBuckets returns a Bucketing of logarithmic buckets [base^i, base^(i+1)) for
// i = 0, 1, ...; a size maps to its bucket's lower bound rounded up to an integer, and 0
// maps to 0 (a bucket of its own). base must be a number greater than 1. Base 2 is
// computed exactly with integer arithmetic.
func LogBuckets(base float64) (Bucketing, error) {
	if !(base > 1) || math.IsInf(base, 1) {
		return nil, fieldErr("log bucket base", base, ErrInvalidOption)
	}
	if base == 2 {
		return func(size int64) int64 {
			if size <= 0 {
				return 0
			}
			return 1 << (bits.Len64(uint64(size)) - 1)
		}, nil
	}
	// The bucket bounds as integers, when there are few enough to tabulate: a size maps
	// to the largest bound not above it, by binary search, in exact integer arithmetic.
	if n := math.Log(math.MaxInt64) / math.Log(base); n <= maxBucketTable {
		bounds := []int64{1}
		for i := 1.0; ; i++ {
			v := math.Ceil(math.Pow(base, i))
			if v >= math.MaxInt64 {
				break
			}
			if b := int64(v); b > bounds[len(bounds)-1] {
				bounds = append(bounds, b)
			}
		}
		return func(size int64) int64 {
			if size <= 0 {
				return 0
			}
			i, found := slices.BinarySearch(bounds, size)
			if found {
				return size
			}
			return bounds[i-1] // i ≥ 1: bounds[0] = 1 ≤ size
		}, nil
	}
	lb := math.Log(base)
	return func(size int64) int64 {
		if size <= 0 {
			return 0
		}
		x := float64(size)
		i := math.Floor(math.Log(x) / lb)
		// Correct the floating-point estimate so that base^i ≤ size < base^(i+1).
		for i > 0 && math.Pow(base, i) > x {
			i--
		}
		for math.Pow(base, i+1) <= x {
			i++
		}
		// base^i ≤ size, so the rounded-up bound is ≤ size — except where float64(size)
		// rounded up (sizes past 2^53). Clamping to size keeps the mapping monotone: i
		// and the bound grow with size, and so does the minimum of the two.
		lo := math.Ceil(math.Pow(base, i))
		if lo >= math.MaxInt64 {
			return size
		}
		return min(int64(lo), size)
	}, nil
}

// maxBucketTable is the most log buckets LogBuckets tabulates (bases above ≈ 1.011);
// smaller bases compute the bucket with floating-point logarithms.
const maxBucketTable = 4096

// LinearBuckets returns a Bucketing of equal-width buckets [i×width, (i+1)×width); a
// size maps to its bucket's lower bound. width must be positive.
func LinearBuckets(width int64) (Bucketing, error) {
	if width <= 0 {
		return nil, fieldErr("linear bucket width", width, ErrInvalidOption)
	}
	return func(size int64) int64 {
		if size <= 0 {
			return 0
		}
		return size - size%width
	}, nil
}

// SizeScaler turns the profile learned for input size from into a prediction for input
// size to (both ≥ 0). It reports false when it cannot. WithNearestSize uses it.
type SizeScaler func(p stage.Profile, from, to int64) (stage.Profile, bool)

// ScaleDurations is the default SizeScaler: every stage's duration is multiplied by
// to/from (sizes below 1 count as 1), and demands are kept. It models a task that
// processes its input at a fixed rate with a fixed footprint — true of many scan- and
// map-like tasks, wrong for tasks whose memory grows with input or whose time does not.
// A stage never shrinks below one nanosecond.
func ScaleDurations(p stage.Profile, from, to int64) (stage.Profile, bool) {
	q, err := p.Stretch(float64(max(to, 1)) / float64(max(from, 1)))
	return q, err == nil
}

// durationOf rounds x nanoseconds to a Duration of at least one nanosecond, saturating at
// stage.Forever.
func durationOf(x float64) time.Duration {
	switch {
	case !(x >= 1): // also NaN
		return 1
	case x >= float64(stage.Forever):
		return stage.Forever
	}
	return time.Duration(math.Round(x))
}

// amountOf rounds x to a non-negative int64 amount, saturating at the int64 range.
func amountOf(x float64) int64 {
	switch {
	case !(x > 0): // also NaN
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(x))
}
