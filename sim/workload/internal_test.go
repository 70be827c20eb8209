package workload

import (
	"fmt"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

func TestSplitProperties(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with params.SetSeed(seed)).
	p := gopter.NewProperties(params)
	p.Property("split: shares are non-negative, full parts alike, and add up to the total", prop.ForAll(
		func(total, whole, part int64) string {
			n := numMaps(whole, part)
			var sum int64
			for i := 0; i < n; i++ {
				s := split(total, whole, part, i, n)
				if s < 0 {
					return fmt.Sprintf("part %d: %d", i, s)
				}
				if i > 0 && i < n-1 && s != split(total, whole, part, 0, n) {
					return fmt.Sprintf("part %d differs from part 0", i)
				}
				sum += s
			}
			if sum != total {
				return fmt.Sprintf("sum %d, want %d", sum, total)
			}
			return ""
		}, gen.Int64Range(0, 1<<50), gen.Int64Range(1, 1<<40), gen.Int64Range(1, 1<<30)))
	p.Property("ratioTotal is the sum of the parts' rounded outputs", prop.ForAll(
		func(total, part int64, ratio float64) bool {
			var sum int64
			for from := int64(0); from < total; from += part {
				sum += amount(float64(min(part, total-from)) * ratio)
			}
			return ratioTotal(total, part, ratio) == sum
		}, gen.Int64Range(0, 1<<20), gen.Int64Range(1, 1<<16), gen.Float64Range(0, 3)))
	p.TestingRun(t)
}
