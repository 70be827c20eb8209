package speculate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
)

// addChecked adds tuples and says when a dimension's sum leaves int64, whatever the
// signs; past the first overflow the sum is not used.
func TestAddChecked(t *testing.T) {
	big := resource.Tuple{math.MaxInt64 - 1}
	for _, c := range []struct {
		name string
		a, b resource.Tuple
		want resource.Tuple
		ok   bool
	}{
		{"small", resource.Tuple{1, 2, 3}, resource.Tuple{4, 5, 6}, resource.Tuple{5, 7, 9}, true},
		{"up to the top", big, resource.Tuple{1}, resource.Tuple{math.MaxInt64}, true},
		{"past the top", big, resource.Tuple{2}, resource.Tuple{}, false},
		{"past the top on the last slot", resource.Tuple{7: math.MaxInt64}, resource.Tuple{7: 1}, resource.Tuple{}, false},
		{"a negative addend", resource.Tuple{-5, 3}, resource.Tuple{2, -4}, resource.Tuple{-3, -1}, true},
		{"past the bottom", resource.Tuple{math.MinInt64 + 1}, resource.Tuple{-2}, resource.Tuple{}, false},
		{"both extremes", resource.Tuple{math.MaxInt64, math.MinInt64}, resource.Tuple{math.MinInt64, math.MaxInt64}, resource.Tuple{-1, -1}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := addChecked(c.a, c.b)
			require.Equal(t, c.ok, ok)
			if ok {
				assert.Equal(t, c.want, got)
			}
		})
	}
}
