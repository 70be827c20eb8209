package fairness

import (
	"cmp"
	"fmt"
	"math"
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
// where claims start and stop growing, and written to a new slice in claim order. When
// weights are so far apart (a ratio beyond about 1e300) that the water level leaves the
// float range, the rest of the capacity above the lower bounds is handed out in
// proportion to weight instead; bounds and sum still hold. It fails on a capacity that
// is negative, NaN or infinite, and on a bad claim.
func WaterFill(capacity float64, claims []Claim) ([]float64, error) {
	if !(capacity >= 0) || math.IsInf(capacity, 1) {
		return nil, fieldErr("capacity", capacity, ErrInvalidShare)
	}
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
		hi[i] = c.Demand
		if c.Max > 0 {
			hi[i] = min(hi[i], c.Max)
		}
		lo[i] = min(c.Min, hi[i])
		sumLo += lo[i]
		sumHi += hi[i]
	}
	out := make([]float64, len(claims))
	switch {
	case sumHi <= capacity:
		copy(out, hi)
		return out, nil
	case sumLo >= capacity:
		if sumLo > 0 {
			for i := range out {
				out[i] = lo[i] * (capacity / sumLo)
			}
		}
		return out, nil
	}
	// Σ clamp(R·w, lo, hi) is continuous, piecewise linear and non-decreasing in R; its
	// slope grows by w where R·w reaches lo and shrinks by w where it reaches hi.
	// Breakpoints past the float range (a huge share over a tiny weight) are clamped to
	// the largest float, where the sweep stops anyway.
	type event struct{ at, dw float64 }
	events := make([]event, 0, 2*len(claims))
	for i, c := range claims {
		events = append(events, event{min(lo[i]/c.Weight, math.MaxFloat64), c.Weight})
		if !math.IsInf(hi[i], 1) {
			events = append(events, event{min(hi[i]/c.Weight, math.MaxFloat64), -c.Weight})
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
	for i, c := range claims {
		out[i] = min(max(level*c.Weight, lo[i]), hi[i])
		sum += out[i]
	}
	if math.IsNaN(sum) || sum < capacity*(1-1e-9) || sum > capacity*(1+1e-9) {
		// The level left the float range; the sweep cannot place it.
		fillProportionally(capacity, claims, lo, hi, out)
		return out, nil
	}
	if sum > capacity {
		// Rounding overshot: shrink the part above the lower bounds so the shares add up
		// to capacity and stay within their bounds.
		f := (capacity - sumLo) / (sum - sumLo)
		for i := range out {
			out[i] = min(max(lo[i]+(out[i]-lo[i])*f, lo[i]), hi[i])
		}
	}
	return out, nil
}

// fillProportionally is WaterFill's fallback for weights so far apart that the water
// level leaves the float range (weight ratios beyond about 1e300): starting from the
// lower bounds, it hands out the rest of the capacity in proportion to weight, round by
// round, to the claims still below their upper bound. The shares keep their bounds and
// add up to capacity.
func fillProportionally(capacity float64, claims []Claim, lo, hi, out []float64) {
	left := capacity
	for i := range out {
		out[i] = lo[i]
		left -= lo[i]
	}
	for range claims { // each round fills at least one claim, or everything left
		top := 0.0 // weights relative to the largest still growing, so none underflows alone
		for i, c := range claims {
			if out[i] < hi[i] {
				top = max(top, c.Weight)
			}
		}
		total := 0.0
		for i, c := range claims {
			if out[i] < hi[i] {
				total += c.Weight / top
			}
		}
		if !(left > 0) || total == 0 {
			return
		}
		given := 0.0
		for i, c := range claims {
			if out[i] < hi[i] {
				before := out[i]
				out[i] = min(out[i]+left*(c.Weight/top/total), hi[i])
				given += out[i] - before
			}
		}
		left -= given
	}
}
