package stage

import (
	"math"
	"math/rand"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
)

// The step tree's unrolled sum and diff saturate exactly as resource.Tuple's Add and
// Sub do, on amounts drawn near the ends of the int64 range as well as small ones.
func TestSumDiffSaturateAsTupleDoes(t *testing.T) {
	edge := []int64{0, 1, -1, 2, -2, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, math.MaxInt64 / 2, math.MinInt64 / 2}
	draw := func(r *rand.Rand) resource.Tuple {
		var x resource.Tuple
		for k := range x {
			if r.Intn(2) == 0 {
				x[k] = edge[r.Intn(len(edge))]
			} else {
				x[k] = r.Int63() - r.Int63()
			}
		}
		return x
	}
	props := gopter.NewProperties(gopter.DefaultTestParameters())
	props.Property("sum = Add, diff = Sub", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(seed))
		for range 100 {
			a, b := draw(r), draw(r)
			var s, d resource.Tuple
			sum(&s, &a, &b)
			diff(&d, &a, &b)
			if s != a.Add(b) || d != a.Sub(b) {
				t.Logf("a %v b %v: sum %v (Add %v), diff %v (Sub %v)", a, b, s, a.Add(b), d, a.Sub(b))
				return false
			}
			sum(&a, &a, &b) // in place, as the tree uses them
			if a != s {
				return false
			}
		}
		return true
	}, gen.Int64()))
	props.TestingRun(t)
}
