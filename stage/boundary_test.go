package stage_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Boundaries a mutation-testing pass showed untested: moving them by one changed no
// test's outcome.
func TestBoundaries(t *testing.T) {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	t.Run("exactly MaxStages stages", func(t *testing.T) {
		st := make([]stage.Stage, stage.MaxStages)
		for i := range st {
			st[i] = stage.Stage{Duration: time.Second, Demand: s.MustTuple(1, 1)}
		}
		p, err := stage.NewProfile(s, st...)
		require.NoError(t, err)
		assert.Equal(t, stage.MaxStages, p.Len())
		_, err = stage.NewProfile(s, append(st, st[0])...)
		assert.ErrorIs(t, err, stage.ErrTooManyStages)
	})
	t.Run("shortfall is demand minus free minus allowance", func(t *testing.T) {
		e := stage.FitError{Demand: 10, Free: 3, Allowance: 2}
		assert.Equal(t, int64(5), e.Shortfall())
	})
	t.Run("a stage is checked only against the segments it overlaps", func(t *testing.T) {
		// 2 cpu free over [0, 10 s), 10 after; a stage of 5 cpu starting exactly at 10 s
		// fits, one starting a nanosecond earlier does not.
		tl, err := stage.NewTimeline(s, s.MustTuple(10, 10))
		require.NoError(t, err)
		_, err = tl.Reserve(0, stage.MustProfile(s, stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(8, 0)}), resource.Tuple{})
		require.NoError(t, err)
		fits := stage.MustProfile(s,
			stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(1, 1)},
			stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(5, 1)})
		assert.NoError(t, tl.Check(0, fits, resource.Tuple{}))
		early := stage.MustProfile(s,
			stage.Stage{Duration: 10*time.Second - 1, Demand: s.MustTuple(1, 1)},
			stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(5, 1)})
		err = tl.Check(0, early, resource.Tuple{})
		var fe *stage.FitError
		require.True(t, errors.As(err, &fe))
		assert.Equal(t, 1, fe.Stage)
		assert.Equal(t, int64(3), fe.Shortfall())
	})
}
