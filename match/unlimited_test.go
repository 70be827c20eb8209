package match_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// A server may declare a compressible dimension unlimited
// (capacity MaxInt64). A task short of room on another compressible dimension, which
// the allowance makes up, fits compressed. FineGrained's squeeze checked free +
// allowance < demand on every dimension, and free + allowance wraps on the unlimited
// one: the task was refused, NoRoom on cpu with MaxInt64 free.
func TestFineGrainedUnlimitedDimension(t *testing.T) {
	fixed, err := match.NewFixed(schema3, resource.Vector{0.1, 0, 0.1})
	require.NoError(t, err)
	task := prof(st(1, 10, 10, 1050))
	for name, cpu := range map[string]int64{"limited": 1000, "unlimited": math.MaxInt64} {
		tl := timeline(t, tup(cpu, 1000, 1000))
		r := match.FineGrained{}.Match(match.Server{ID: "s", Timeline: tl, Allowance: fixed}, 0, task)
		assert.Equal(t, match.FitCompressed, r.Code, "%s cpu: %v on %s, %d free", name, r.Code, r.DimName, r.Free)
		assert.Equal(t, int64(50), r.Allowance[2], name)
	}
}
