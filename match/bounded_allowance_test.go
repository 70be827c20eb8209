package match_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// A timeline never takes a compressible dimension below its capacity − MaxInt64
// (stage.Timeline.Check), so an unlimited one (MaxInt64) is never compressed, and a
// capacity above half the int64 range is compressed by less than a large ratio of it.
// FineGrained allows the same: a task it fits, compressed, reserves with the result's
// allowance; one the timeline would refuse does not fit.
func TestFineGrainedAllowanceWithinTimelineBound(t *testing.T) {
	for name, c := range map[string]struct {
		cpu, held, demand int64
		ratio             float64
	}{
		"unlimited, fully held": {cpu: math.MaxInt64, held: math.MaxInt64, demand: 10, ratio: 0.1},
		"near the range":        {cpu: 9e18, held: 9e18, demand: 5e17, ratio: 0.1},
		"half the range, rc 1":  {cpu: 5e18, held: 5e18, demand: 45e17, ratio: 1},
	} {
		fixed, err := match.NewFixed(schema3, resource.Vector{c.ratio, 0, 0})
		require.NoError(t, err)
		tl := timeline(t, tup(c.cpu, 1000, 1000))
		_, err = tl.Reserve(0, prof(st(100, c.held, 0, 0)), resource.Tuple{})
		require.NoError(t, err, name)
		task := prof(st(10, c.demand, 1, 1))
		r := match.FineGrained{}.Match(match.Server{ID: "s", Timeline: tl, Allowance: fixed}, 0, task)
		if r.Code.OK() {
			assert.NoError(t, tl.Check(0, task, r.Allowance), "%s: %v with allowance %d, but the timeline refuses it", name, r.Code, r.Allowance[0])
		} else {
			all := resource.Tuple{int64(float64(c.cpu) * c.ratio)}
			assert.ErrorIs(t, tl.Check(0, task, all), stage.ErrNoRoom, "%s: %v, but the timeline takes it", name, r.Code)
		}
	}
}
