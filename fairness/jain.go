package fairness

import (
	"fmt"
	"math"
)

// Jain is Jain's fairness index of a set of allocations x1..xn (Jain, Chiu, Hawe 1984;
// the fairness metric of FGM's evaluation, docs/methods.md §7):
//
//	J = (Σ xi)² / (n × Σ xi²)
//
// It lies in [1/n, 1]: 1 when everybody gets the same, 1/n when one gets everything.
// Allocations are non-negative numbers in any one unit: dominant shares, tasks, a
// resource amount, or each user's allocation divided by its weight or its fair share
// for a weighted index. All zeros count as perfectly fair (1). It fails on an empty
// set and on a negative, NaN or infinite allocation.
func Jain(x []float64) (float64, error) {
	if len(x) == 0 {
		return 0, fmt.Errorf("fairness: Jain index of no allocations: %w", ErrEmpty)
	}
	top := 0.0
	for i, v := range x {
		if !(v >= 0) || math.IsInf(v, 1) {
			return 0, fieldErr(fmt.Sprintf("allocation %d", i), v, ErrInvalidShare)
		}
		top = max(top, v)
	}
	if top == 0 {
		return 1, nil
	}
	var sum, sq float64
	for _, v := range x {
		v /= top // scale into [0, 1] so neither sum overflows
		sum += v
		sq += v * v
	}
	n := float64(len(x))
	return min(max(sum*sum/(n*sq), 1/n), 1), nil
}
