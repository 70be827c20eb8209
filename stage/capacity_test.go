package stage_test

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// segments lists a timeline's constant segments from its origin on.
func segments(tl *stage.Timeline) []stage.Segment {
	return tl.AppendSegments(nil, 0, stage.Forever)
}

// TestSetCapacity: a capacity change moves every free amount by the difference and
// keeps the reservations: the timeline reads as one built with the new capacity and
// the same reservations, and releasing them leaves it as a new one of that capacity.
func TestSetCapacity(t *testing.T) {
	a := stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: tup(3, 6)}, stage.Stage{Duration: 3 * time.Second, Demand: tup(1, 2)})
	b := stage.MustProfile(schema, stage.Stage{Duration: stage.Forever, Demand: tup(2, 1)})
	build := func(c resource.Tuple) (*stage.Timeline, []stage.Handle) {
		tl, err := stage.NewTimeline(schema, c)
		require.NoError(t, err)
		ha, err := tl.Reserve(time.Second, a, resource.Tuple{})
		require.NoError(t, err)
		hb, err := tl.Reserve(0, b, resource.Tuple{})
		require.NoError(t, err)
		return tl, []stage.Handle{ha, hb}
	}
	for _, c := range []resource.Tuple{tup(20, 16), tup(8, 9), tup(12, 7), tup(10, 10)} {
		tl, hs := build(tup(10, 10))
		v := tl.Version()
		require.NoError(t, tl.SetCapacity(c))
		want, _ := build(c)
		assert.Equal(t, segments(want), segments(tl), "capacity %v", c)
		assert.Equal(t, c, tl.Capacity())
		assert.Equal(t, 2, tl.Reservations())
		if c != tup(10, 10) {
			assert.Greater(t, tl.Version(), v, "the free amounts changed")
		}
		for _, h := range hs {
			require.NoError(t, tl.Release(h))
		}
		empty, err := stage.NewTimeline(schema, c)
		require.NoError(t, err)
		assert.Equal(t, segments(empty), segments(tl), "capacity %v, all released", c)
	}
}

// TestSetCapacityOverCommits: a capacity below what is reserved leaves the free
// amount below zero, non-compressible ones too, and nothing more fits there until
// the reservations end.
func TestSetCapacityOverCommits(t *testing.T) {
	tl, err := stage.NewTimeline(schema, tup(10, 10))
	require.NoError(t, err)
	p := stage.MustProfile(schema, stage.Stage{Duration: 4 * time.Second, Demand: tup(6, 8)})
	h, err := tl.Reserve(0, p, resource.Tuple{})
	require.NoError(t, err)
	require.NoError(t, tl.SetCapacity(tup(5, 6)))
	assert.Equal(t, tup(-1, -2), tl.FreeAt(time.Second))
	assert.Equal(t, tup(5, 6), tl.FreeAt(5*time.Second))
	one := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(0, 1)})
	assert.ErrorIs(t, tl.Check(0, one, resource.Tuple{}), stage.ErrNoRoom)
	assert.NoError(t, tl.Check(4*time.Second, one, resource.Tuple{}))
	require.NoError(t, tl.Release(h))
	assert.Equal(t, []stage.Segment{{Start: 0, End: stage.Forever, Free: tup(5, 6)}}, segments(tl))
}

// TestSetCapacityRefused: an invalid capacity changes nothing.
func TestSetCapacityRefused(t *testing.T) {
	tl, err := stage.NewTimeline(schema, tup(10, 10))
	require.NoError(t, err)
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)}), resource.Tuple{})
	require.NoError(t, err)
	before, v := segments(tl), tl.Version()
	for _, c := range []resource.Tuple{tup(-1, 10), {10, 10, 1}} {
		assert.Error(t, tl.SetCapacity(c), "%v", c)
		assert.Equal(t, before, segments(tl))
		assert.Equal(t, tup(10, 10), tl.Capacity())
		assert.Equal(t, v, tl.Version())
	}
	// An unlimited capacity and back stay exact.
	require.NoError(t, tl.SetCapacity(tup(math.MaxInt64, math.MaxInt64)))
	assert.Equal(t, tup(math.MaxInt64-1, math.MaxInt64-1), tl.FreeAt(0))
	require.NoError(t, tl.SetCapacity(tup(10, 10)))
	assert.Equal(t, before, segments(tl))
}

// TestSetCapacityProperty: with random reservations (compressed ones among them) and
// a random trim, changing the capacity and changing it back restores every segment,
// and the segments in between are the brute-force model's moved by the difference.
func TestSetCapacityProperty(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("capacity round trip", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(seed))
		tl, err := stage.NewTimeline(schema, capacity)
		if err != nil {
			return false
		}
		m := newModel()
		for range 1 + r.Intn(12) {
			p, start, allow := randProfile(r), r.Intn(horizon-20), randAllow(r)
			if _, err := tl.Reserve(time.Duration(start)*time.Second, p, allow); err == nil {
				m.apply(start, p, -1)
			}
		}
		trim := r.Intn(8)
		tl.Trim(time.Duration(trim) * time.Second)
		before := segments(tl)
		c := tup(int64(r.Intn(20)), int64(r.Intn(20)))
		if tl.SetCapacity(c) != nil {
			return false
		}
		d := c.Sub(capacity)
		for s := trim; s < horizon; s++ {
			if tl.FreeAt(time.Duration(s)*time.Second) != m[s].Add(d) {
				t.Logf("seed %d: at %ds: free %v, want %v", seed, s, tl.FreeAt(time.Duration(s)*time.Second), m[s].Add(d))
				return false
			}
		}
		if tl.SetCapacity(capacity) != nil {
			return false
		}
		after := segments(tl)
		if len(after) != len(before) {
			t.Logf("seed %d: %d segments, want %d", seed, len(after), len(before))
			return false
		}
		for i := range before {
			if before[i] != after[i] {
				t.Logf("seed %d: segment %d: %v, want %v", seed, i, after[i], before[i])
				return false
			}
		}
		return true
	}, gen.Int64()))
	props.TestingRun(t)
}
