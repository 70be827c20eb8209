package resource_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/resource"
)

func TestCoversOn(t *testing.T) {
	free := resource.Tuple{4, 1, -2}
	for _, tc := range []struct {
		need resource.Tuple
		m    resource.Mask
		want bool
	}{
		{resource.Tuple{4, 1}, 1<<0 | 1<<1, true},
		{resource.Tuple{5, 1}, 1<<0 | 1<<1, false},
		{resource.Tuple{5, 1}, 1 << 1, true}, // slot 0 not looked at
		{resource.Tuple{}, 1 << 2, false},    // a negative free amount covers no zero
		{resource.Tuple{9, 9, 9}, 0, true},   // no slot looked at
		{resource.Tuple{0, 0, -2}, ^resource.Mask(0), true},
		{resource.Tuple{0, 2, -2}, ^resource.Mask(0), false},
	} {
		assert.Equal(t, tc.want, free.CoversOn(tc.need, tc.m), "%v on %b", tc.need, tc.m)
	}
	// On every slot it is Covers.
	assert.Equal(t, free.Covers(resource.Tuple{4, 1, -3}), free.CoversOn(resource.Tuple{4, 1, -3}, ^resource.Mask(0)))
}
