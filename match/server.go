package match

import (
	"fmt"
	"math"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Server is the view of one server that matchers read: its identity, its timeline of
// free resources (capacity N = Timeline.Capacity()) and the compression its policy
// allows. It is a small value; building one costs nothing. A matcher only reads the
// timeline; the caller reserves on it after a successful match.
type Server struct {
	// ID names the server; it is passed to the Allowance.
	ID string
	// Timeline holds the server's capacity and free resources over time (Alg. 2's ns).
	Timeline *stage.Timeline
	// Allowance says how much compression the server's policy allows where; nil
	// allows none (as when the policy forbids compression).
	Allowance Allowance
}

// Allowance is the seam through which a server's compression policy reaches the
// fine-grained matcher: Alg. 2's rc. The policy package's compression manager
// implements it from eq. 6/7; Fixed is a constant one.
type Allowance interface {
	// Allowed returns, per dimension, the largest compression ratio allowed when the
	// task stage demanding q.Demand is placed over q.Segment of server q.Server: free
	// amounts may then go down to −ratio × capacity. Ratios are read as clamped to
	// [0, 1] (NaN counts as 0) and only compressible dimensions are used; an
	// implementation returns zero where its policy forbids compression.
	Allowed(q AllowanceQuery) resource.Vector
}

// MonotoneAllowance is an Allowance that makes two promises about its answers, so
// that FineGrained can settle each stage of a task by the least free amount over the
// stage's window, as it does for a Fixed allowance, instead of asking about every
// piece of timeline short of the stage's demand:
//
//   - its ratio on a dimension depends on the query's Server and on that dimension's
//     Capacity, Segment.Free and Demand alone: not on the segment's times, nor on
//     another dimension;
//   - that ratio never falls as the free amount grows, all else the same.
//
// Then free + ⌊ratio × N⌋ grows with free, so a stage is short of room somewhere in
// its window exactly when it is short at the window's least free amount, and eq. 1's
// compression is largest there. FineGrained asks such an allowance once about each
// stage whose least free amount is short of its demand on a compressible dimension,
// with Segment the stage's window and Segment.Free its least free amount on each
// dimension (the minima may come from different segments). For a stage that fails, it
// then asks about that stage's pieces below its demand less that answer, in time order
// (those short on a compressible dimension, as the walk would), up to the first that
// fails, to report it as the walk does. The Result is the walk's, field for field; the
// questions asked are fewer.
//
// MonotoneInFree reports whether the promises hold for this value (a wrapper may
// pass on its inner allowance's answer); false, or an Allowance without the method,
// makes FineGrained ask about every piece short of its stage's demand. The policy
// package's compression manager (eq. 6/7) is one: its eq. 6 bound does not fall as
// the free amount grows.
type MonotoneAllowance interface {
	Allowance
	MonotoneInFree() bool
}

// AllowanceQuery is what a matcher tells an Allowance about the placement being
// considered: eq. 7 depends on the tasks already allocated over the segment and on the
// task being matched.
type AllowanceQuery struct {
	// Server is the server's ID.
	Server string
	// Capacity is the server's total resources, N.
	Capacity resource.Tuple
	// Segment is the piece of the server's timeline, with its free amounts; capacity
	// minus free is what the tasks already allocated there demand.
	Segment stage.Segment
	// Demand is the demand of the task's stage that overlaps Segment.
	Demand resource.Tuple
}

// Fixed is an Allowance that allows the same compression ratio per dimension
// everywhere: Alg. 2 with a constant rc, e.g. the paper's 10% limit on every
// compressible resource. Build one with NewFixed or UniformAllowance.
type Fixed resource.Vector

// NewFixed returns the constant allowance of ratios, which must be numbers in [0, 1],
// zero on non-compressible dimensions and outside the schema.
func NewFixed(schema *resource.Schema, ratios resource.Vector) (Fixed, error) {
	if schema == nil {
		return Fixed{}, fmt.Errorf("match: nil schema: %w", resource.ErrSchemaMismatch)
	}
	if err := schema.ValidateRatios(ratios, 1, true); err != nil {
		return Fixed{}, fmt.Errorf("match: compression allowance: %w", err)
	}
	return Fixed(ratios), nil
}

// UniformAllowance returns the constant allowance of ratio on every compressible
// dimension of schema; UniformAllowance(s, resource.DefaultCompressionLimit) is the
// paper's 10% limit. ratio must be a number in [0, 1].
func UniformAllowance(schema *resource.Schema, ratio float64) (Fixed, error) {
	if schema == nil {
		return Fixed{}, fmt.Errorf("match: nil schema: %w", resource.ErrSchemaMismatch)
	}
	return NewFixed(schema, resource.Uniform(schema.Compressible(), ratio))
}

// Allowed returns the constant ratios, whatever the query.
func (f Fixed) Allowed(AllowanceQuery) resource.Vector { return resource.Vector(f) }

// allowance returns Alg. 2's rc × N for the compressible dimensions: the amount by
// which free resources may go below zero over seg for a stage demanding d.
func allowance(a Allowance, id string, capacity, compCap resource.Tuple, seg stage.Segment, d resource.Tuple) resource.Tuple {
	if a == nil {
		return resource.Tuple{}
	}
	return scaleAllowance(compCap, a.Allowed(AllowanceQuery{Server: id, Capacity: capacity, Segment: seg, Demand: d}))
}

// scaleAllowance returns rc × compCap with each ratio clamped to [0, 1] (NaN as 0);
// compCap is zero outside the compressible dimensions. Amounts are integers, so Alg. 2's
// free + rc × N ≥ demand holds exactly when demand − free ≤ ⌊rc × N⌋: the product is
// rounded down, after a relative nudge of 1e-12 that keeps a product like 0.29 × 100
// (28.999999999999996 in floating point) at 29. As the timeline applies it
// (stage.Timeline.Check), it is at most MaxInt64 − N: no dimension goes below its
// capacity − MaxInt64, and an unlimited one (MaxInt64) is never compressed.
func scaleAllowance(compCap resource.Tuple, rc resource.Vector) resource.Tuple {
	var t resource.Tuple
	for k, x := range rc {
		if compCap[k] == 0 || !(x > 0) {
			continue
		}
		v := math.Floor(float64(compCap[k]) * min(x, 1) * (1 + 1e-12))
		if v >= math.MaxInt64 {
			t[k] = math.MaxInt64
		} else {
			t[k] = int64(v)
		}
		t[k] = min(t[k], math.MaxInt64-compCap[k])
	}
	return t
}
