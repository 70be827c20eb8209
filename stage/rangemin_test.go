package stage_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// piece is what WalkShort reports.
type piece struct {
	Stage int
	stage.Segment
}

func shortPieces(tl *stage.Timeline, start time.Duration, p stage.Profile, slack resource.Tuple) []piece {
	var ps []piece
	tl.WalkShort(start, p, slack, func(i int, s stage.Segment) bool {
		ps = append(ps, piece{i, s})
		return true
	})
	return ps
}

func TestWalkBelowAndShort(t *testing.T) {
	// Free cpu: 10 over [0, 2 s), 4 over [2 s, 5 s), 7 over [5 s, 6 s), 10 after.
	tl := newTimeline(t, tup(10, 10))
	_, err := tl.Reserve(2*time.Second, stage.MustProfile(schema, stage.Stage{Duration: 3 * time.Second, Demand: tup(6, 1)}), resource.Tuple{})
	require.NoError(t, err)
	_, err = tl.Reserve(5*time.Second, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(3, 1)}), resource.Tuple{})
	require.NoError(t, err)

	var below []stage.Segment
	tl.WalkBelow(time.Second, 8*time.Second, tup(8, math.MinInt64), func(s stage.Segment) bool {
		below = append(below, s)
		return true
	})
	assert.Equal(t, []stage.Segment{
		{Start: 2 * time.Second, End: 5 * time.Second, Free: tup(4, 9)},
		{Start: 5 * time.Second, End: 6 * time.Second, Free: tup(7, 9)},
	}, below)

	// Two stages from 1 s: 5 cpu for 3 s (short over [2 s, 4 s)), then 8 cpu for 3 s
	// (short over [4 s, 5 s) and [5 s, 6 s), each clipped to the stage).
	p := stage.MustProfile(schema,
		stage.Stage{Duration: 3 * time.Second, Demand: tup(5, 0)},
		stage.Stage{Duration: 3 * time.Second, Demand: tup(8, 0)})
	assert.Equal(t, []piece{
		{0, stage.Segment{Start: 2 * time.Second, End: 4 * time.Second, Free: tup(4, 9)}},
		{1, stage.Segment{Start: 4 * time.Second, End: 5 * time.Second, Free: tup(4, 9)}},
		{1, stage.Segment{Start: 5 * time.Second, End: 6 * time.Second, Free: tup(7, 9)}},
	}, shortPieces(tl, time.Second, p, resource.Tuple{}))
	assert.Equal(t, []piece{
		{1, stage.Segment{Start: 4 * time.Second, End: 5 * time.Second, Free: tup(4, 9)}},
	}, shortPieces(tl, time.Second, p, tup(2, 0)), "a slack of 2 cpu: 4 and 7 free cover 5, 7 covers 8, 4 does not")
	assert.Empty(t, shortPieces(tl, 6*time.Second, p, resource.Tuple{}), "after 6 s everything fits")
	n := 0
	tl.WalkShort(time.Second, p, resource.Tuple{}, func(int, stage.Segment) bool { n++; return false })
	assert.Equal(t, 1, n, "the walk stops when fn says so")
	tl.WalkShort(time.Second, stage.Profile{}, resource.Tuple{}, func(int, stage.Segment) bool { n++; return true })
	assert.Equal(t, 1, n, "a profile without stages has no pieces")
}

// A reservation spanning thousands of steps costs what a short one does, and its
// release restores the timeline exactly.
func TestLongReservationOverManySteps(t *testing.T) {
	tl := newTimeline(t, tup(1<<40, 1<<40))
	for i := 0; i < 5000; i++ {
		_, err := tl.Reserve(time.Duration(2*i)*time.Second, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(int64(1+i%7), 1)}), resource.Tuple{})
		require.NoError(t, err)
	}
	before := tl.AppendSegments(nil, 0, stage.Forever)
	require.Len(t, before, 10000)
	service := stage.MustProfile(schema,
		stage.Stage{Duration: 3 * time.Hour, Demand: tup(1000, 1000)},
		stage.Stage{Duration: stage.Forever, Demand: tup(10, 10)})
	h, err := tl.Reserve(500*time.Millisecond, service, resource.Tuple{})
	require.NoError(t, err)
	assert.Equal(t, tup(1<<40-1000-7, 1<<40-1000-1), tl.MinFree(0, stage.Forever))
	assert.Equal(t, tup(1<<40-1000-2, 1<<40-1000-1), tl.FreeAt(2*time.Second))
	assert.Equal(t, tup(1<<40-10, 1<<40-10), tl.FreeAt(4*time.Hour))
	assert.Equal(t, 10002, tl.Len(), "two new steps: the service's start and its second stage's")
	require.NoError(t, tl.Release(h))
	assert.Equal(t, before, tl.AppendSegments(nil, 0, stage.Forever))
}

// Trimming to Forever leaves one step, at Forever, and nothing to walk; the timeline
// still answers.
func TestTrimForever(t *testing.T) {
	tl := newTimeline(t, tup(4000, 8000))
	h, err := tl.Reserve(time.Second, stage.MustProfile(schema, stage.Stage{Duration: stage.Forever, Demand: tup(1000, 1000)}), resource.Tuple{})
	require.NoError(t, err)
	tl.Trim(stage.Forever)
	assert.Equal(t, stage.Forever, tl.Origin())
	assert.Equal(t, 1, tl.Len())
	assert.Equal(t, tup(3000, 7000), tl.FreeAt(0))
	assert.Equal(t, tup(3000, 7000), tl.MinFree(0, stage.Forever))
	assert.Empty(t, segs(tl, 0, stage.Forever))
	require.NoError(t, tl.Release(h))
	assert.Equal(t, tup(3000, 7000), tl.FreeAt(stage.Forever), "what was before the origin is gone")
}

// The queries allocate nothing, and neither does a reserve/release pair once the tree
// has the nodes it needs.
func TestQueriesAllocateNothing(t *testing.T) {
	tl := newTimeline(t, tup(1<<40, 1<<40))
	for i := 0; i < 300; i++ {
		_, err := tl.Reserve(time.Duration(i)*time.Second, stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: tup(int64(1+i%5), 1)}), resource.Tuple{})
		require.NoError(t, err)
	}
	p := stage.MustProfile(schema,
		stage.Stage{Duration: 30 * time.Second, Demand: tup(1<<40-3, 0)},
		stage.Stage{Duration: 30 * time.Second, Demand: tup(1, 1)})
	small := stage.MustProfile(schema,
		stage.Stage{Duration: 3 * time.Second, Demand: tup(100, 100)},
		stage.Stage{Duration: time.Second, Demand: tup(10, 10)})
	var sink int64
	failed := false
	for name, f := range map[string]func(){
		"Walk": func() { tl.Walk(0, stage.Forever, func(s stage.Segment) bool { sink += s.Free[0]; return true }) },
		"WalkBelow": func() {
			tl.WalkBelow(0, stage.Forever, tup(1<<40-3, 0), func(s stage.Segment) bool { sink++; return true })
		},
		"WalkShort": func() {
			tl.WalkShort(time.Second, p, resource.Tuple{}, func(int, stage.Segment) bool { sink++; return true })
		},
		"MinFree": func() { sink += tl.MinFree(10*time.Second, 200*time.Second)[0] },
		"MinFreeStages": func() {
			tl.MinFreeStages(time.Second, p, func(_ int, m resource.Tuple) bool { sink += m[0]; return true })
		},
		"EarliestFit": func() {
			s, _ := tl.EarliestFit(0, p, resource.Tuple{})
			sink += int64(s)
		},
		"Reserve and Release": func() {
			h, err := tl.Reserve(100500*time.Millisecond, small, resource.Tuple{})
			if err != nil || tl.Release(h) != nil {
				failed = true
			}
		},
	} {
		f() // the first reservation may grow the tree or the map of reservations
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
	assert.False(t, failed, "the small profile fits")
}
