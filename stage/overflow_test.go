package stage_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/stage"
)

// A demand near the int64 limit on a compressible dimension that
// earlier reservations took below zero must be refused, not accepted. The fit check
// computed free − demand, which wraps for a negative free amount and a demand near
// MaxInt64 and then reads as room to spare: Check, Reserve and EarliestFit accepted
// the profile, the free amount saturated at MinInt64, and releasing it left −1 where
// −500 had been (the timeline corrupted by bad input).
func TestFitCheckDoesNotOverflow(t *testing.T) {
	allow := tup(1000, 0)
	tl, err := stage.NewTimeline(schema, tup(8000, 1<<30))
	require.NoError(t, err)
	squeezed := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(8500, 0)})
	_, err = tl.Reserve(0, squeezed, allow)
	require.NoError(t, err)
	require.Equal(t, tup(-500, 1<<30), tl.FreeAt(0))

	huge := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(math.MaxInt64, 0)})
	// 8000 cpu is free for ever after the squeezed second: no start fits.
	at, err := tl.EarliestFit(0, huge, allow)
	assert.ErrorIs(t, err, stage.ErrNoRoom, "EarliestFit says %v", at)

	err = tl.Check(0, huge, allow)
	var fe *stage.FitError
	if assert.True(t, errors.As(err, &fe), "Check accepts it: %v", err) {
		assert.Equal(t, 0, fe.Dim)
		assert.Equal(t, int64(-500), fe.Free)
	}

	h, err := tl.Reserve(0, huge, allow)
	assert.ErrorIs(t, err, stage.ErrNoRoom)
	if err == nil {
		_ = tl.Release(h)
	}
	assert.Equal(t, tup(-500, 1<<30), tl.FreeAt(0), "the timeline is as it was")
}
