package fairness

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Claim is one entity's part in a fair-share computation: its weight, min and max share
// and demand, all in one unit (tasks, slots, cores, a dominant share).
type Claim struct {
	// Weight is the claim's weight; positive and finite.
	Weight float64
	// Min is the min share; finite and non-negative (0 for none).
	Min float64
	// Max is the max share; non-negative, 0 or +Inf for none, not below Min.
	Max float64
	// Demand is how much the entity could use; non-negative, +Inf for unbounded.
	Demand float64
}

// WaterFill is the classic weighted max-min fair-share computation with min and max
// shares (Hadoop's Fair Scheduler, the fair shares behind the fair rule of
// docs/methods.md §10): it finds the water level R at which the claims' shares
// clamp(R × weight, lo, hi) add up to capacity, where hi = min(demand, max) and
// lo = min(min share, hi). So
//
//   - nobody gets more than its demand or max share;
//   - when the demands fit, everybody gets its demand (capped by its max), and the rest
//     of the capacity stays unallocated;
//   - otherwise the shares add up to capacity, every min share is honoured when the min
//     shares fit, and the shares strictly between their bounds are proportional to
//     weight.
//
// Reading: when even the min shares do not fit (Σ lo > capacity), the sources say
// nothing; we scale the min shares down in proportion, so the shares still add up to
// capacity.
//
// The result is exact up to rounding, computed in O(n log n) by sweeping the points
// where claims start and stop growing, and written to a new slice in claim order.
// Amounts and weights may lie anywhere in the float range, also where their sums do not
// (min shares or weights adding up past the largest float): they are then scaled by a
// power of two for the computation, and the shares back. When weights are so far apart
// (a ratio beyond about 1e300) that the water level leaves the float range, the rest of
// the capacity above the lower bounds is handed out in proportion to weight instead;
// bounds and sum still hold. It fails on a capacity that is negative, NaN or infinite,
// and on a bad claim.
func WaterFill(capacity float64, claims []Claim) ([]float64, error) {
	if !(capacity >= 0) || math.IsInf(capacity, 1) {
		return nil, fieldErr("capacity", capacity, ErrInvalidShare)
	}
	weight := make([]float64, len(claims))
	lo := make([]float64, len(claims))
	hi := make([]float64, len(claims))
	var sumLo, sumHi float64
	for i, c := range claims {
		err := (Share{Weight: c.Weight, Min: c.Min, Max: c.Max}).validate()
		if err == nil && !(c.Demand >= 0) {
			err = fieldErr("demand", c.Demand, ErrInvalidShare)
		}
		if err != nil {
			return nil, within(fmt.Sprintf("claim %d", i), err)
		}
		weight[i] = c.Weight
		hi[i] = c.Demand
		if c.Max > 0 {
			hi[i] = min(hi[i], c.Max)
		}
		lo[i] = min(c.Min, hi[i])
		sumLo += lo[i]
		sumHi += hi[i]
	}
	if sumHi <= capacity {
		// The demands fit: everybody gets its demand, as waterFill answers, before any
		// scaling could round the smallest amounts.
		return hi, nil
	}
	// Large amounts or weights can overflow: Σ lo = +Inf would scale every share to 0, a
	// capacity within 1e-9 of the largest float leaves no room to check the shares' sum,
	// Σ weight = +Inf would make the sweep's slope +Inf, and an amount over a weight below
	// 1 can put a breakpoint past the float range. Then the amounts, or the weights, are
	// scaled by a power of two, exactly, and the shares back at the end. Other inputs are
	// not scaled, so they are computed as they always were.
	n := bits.Len(uint(len(claims)))
	amounts, whole := 0, capacity
	var bottom, top []float64 // the unscaled bounds, when the amounts are scaled
	minsFit := sumLo < capacity
	if math.IsInf(sumLo, 1) || math.IsInf(capacity*(1+1e-9), 1) {
		amounts = n + 2 // Σ of n + 1 amounts below a quarter of the float range
		bottom, top = slices.Clone(lo), slices.Clone(hi)
		capacity = math.Ldexp(capacity, -amounts)
		for i := range claims {
			lo[i] = math.Ldexp(lo[i], -amounts)
			hi[i] = math.Ldexp(hi[i], -amounts)
		}
	}
	if j := weightShift(capacity, weight, lo, hi, n); j != 0 {
		for i := range weight {
			// A weight that would underflow to 0 is kept at the smallest float: such
			// ratios (beyond 1e300) are handed out in proportion to weight anyway.
			weight[i] = max(math.Ldexp(weight[i], j), math.SmallestNonzeroFloat64)
		}
	}
	out := waterFill(capacity, weight, lo, hi)
	if amounts != 0 {
		for i := range out {
			// No share exceeds the capacity, though rounding may say so by an ulp: near
			// the top of the float range, that ulp scaled back would be +Inf. Nor its
			// bounds, which amounts scaled into the subnormal range may have lost bits
			// of: a share is held to them unscaled (to its min share only while the min
			// shares fit, as they are scaled down otherwise).
			share := min(math.Ldexp(out[i], amounts), whole, top[i])
			if minsFit {
				share = max(share, bottom[i])
			}
			out[i] = share
		}
	}
	return out, nil
}

// weightShift is the power of two WaterFill scales the weights by: 0 when every
// amount over the smallest weight (a breakpoint of the sweep, or the water level) stays
// below a quarter of the float range and so does the weights' sum, n being the bit
// length of their count; else the shift that brings the heaviest weight to [1, 2) and,
// as far as the sum allows, the breakpoints into that range.
func weightShift(capacity float64, weight, lo, hi []float64, n int) int {
	if len(weight) == 0 {
		return 0
	}
	top := capacity // the largest amount
	for i := range lo {
		top = max(top, lo[i])
		if !math.IsInf(hi[i], 1) {
			top = max(top, hi[i])
		}
	}
	light, heavy := slices.Min(weight), slices.Max(weight)
	_, ea := math.Frexp(top)   // top < 2^ea
	_, el := math.Frexp(light) // light ≥ 2^(el-1)
	_, eh := math.Frexp(heavy) // heavy < 2^eh
	low := ea - el + 1 - 1022  // top / (light × 2^low) < 2^1022
	high := 1022 - eh - n      // count × heavy × 2^high < 2^1022
	if low <= 0 && high >= 0 {
		return 0
	}
	// Bring the heaviest weight to [1, 2), so that no breakpoint underflows either,
	// then lighter weights up as far as needed and allowed.
	j := 1 - eh
	if low > j {
		j = min(low, high)
	}
	return j
}

// waterFill is WaterFill on validated claims, given as their weights and lower and
// upper bounds, scaled so that Σ lo, Σ weight and the breakpoints fit the float range
// (the breakpoints as far as the weights' ratios allow).
func waterFill(capacity float64, weight, lo, hi []float64) []float64 {
	var sumLo, sumHi float64
	for i := range lo {
		sumLo += lo[i]
		sumHi += hi[i]
	}
	out := make([]float64, len(lo))
	switch {
	case sumHi <= capacity:
		copy(out, hi)
		return out
	case sumLo >= capacity:
		if sumLo > 0 {
			f := capacity / sumLo
			for i := range out {
				if f >= 0x1p-1022 {
					out[i] = lo[i] * f
				} else {
					// f is subnormal, and would lose its precision: divide first.
					out[i] = capacity * (lo[i] / sumLo)
				}
			}
		}
		return out
	}
	// Σ clamp(R·w, lo, hi) is continuous, piecewise linear and non-decreasing in R; its
	// slope grows by w where R·w reaches lo and shrinks by w where it reaches hi.
	// Breakpoints past the float range (a huge share over a tiny weight) are clamped to
	// the largest float, where the sweep stops anyway.
	type event struct{ at, dw float64 }
	events := make([]event, 0, 2*len(lo))
	for i, w := range weight {
		events = append(events, event{min(lo[i]/w, math.MaxFloat64), w})
		if !math.IsInf(hi[i], 1) {
			events = append(events, event{min(hi[i]/w, math.MaxFloat64), -w})
		}
	}
	slices.SortFunc(events, func(a, b event) int {
		switch {
		case a.at != b.at:
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(b.dw, a.dw)
	})
	r, value, slope := 0.0, sumLo, 0.0
	level := math.NaN()
	for _, e := range events {
		if slope > 0 {
			if value+slope*(e.at-r) >= capacity {
				level = r + (capacity-value)/slope
				break
			}
			value += slope * (e.at - r)
		}
		r = e.at
		slope += e.dw
	}
	if math.IsNaN(level) {
		// Past the last event only unbounded claims grow; Σ hi > capacity ensures some
		// unless the breakpoints left the float range.
		level = r
		if slope > 0 {
			level = r + (capacity-value)/slope
		}
	}
	sum := 0.0
	for i, w := range weight {
		out[i] = min(max(level*w, lo[i]), hi[i])
		sum += out[i]
	}
	if math.IsNaN(sum) || sum < capacity*(1-1e-9) || sum > capacity*(1+1e-9) {
		// The level left the float range; the sweep cannot place it.
		fillProportionally(capacity, weight, lo, hi, out)
		return out
	}
	if sum > capacity {
		// Rounding overshot: shrink the part above the lower bounds so the shares add up
		// to capacity and stay within their bounds.
		f := (capacity - sumLo) / (sum - sumLo)
		for i := range out {
			out[i] = min(max(lo[i]+(out[i]-lo[i])*f, lo[i]), hi[i])
		}
	}
	return out
}

// fillProportionally is WaterFill's fallback for weights so far apart that the water
// level leaves the float range (weight ratios beyond about 1e300): starting from the
// lower bounds, it hands out the rest of the capacity in proportion to weight, round by
// round, to the claims still below their upper bound. The shares keep their bounds and
// add up to capacity.
func fillProportionally(capacity float64, weight, lo, hi, out []float64) {
	left := capacity
	for i := range out {
		out[i] = lo[i]
		left -= lo[i]
	}
	for range weight { // each round fills at least one claim, or everything left
		top := 0.0 // weights relative to the largest still growing, so none underflows alone
		for i, w := range weight {
			if out[i] < hi[i] {
				top = max(top, w)
			}
		}
		total := 0.0
		for i, w := range weight {
			if out[i] < hi[i] {
				total += w / top
			}
		}
		if !(left > 0) || total == 0 {
			return
		}
		given := 0.0
		for i, w := range weight {
			if out[i] < hi[i] {
				before := out[i]
				out[i] = min(out[i]+left*(w/top/total), hi[i])
				given += out[i] - before
			}
		}
		left -= given
	}
}
