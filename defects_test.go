package finegrain_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Bad capacities are refused and change nothing: a node with no capacity at all, and
// one whose capacity would take the cluster's total out of the int64 range (once
// reported as a "negative amount", the wrapped sum).
func TestNodeCapacityRefused(t *testing.T) {
	s := newScheduler(t)
	err := s.AddNode(finegrain.Node{ID: "empty", Capacity: schema.MustTuple(0, 0)})
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "big", Capacity: schema.MustTuple(math.MaxInt64-1, 8*gib)}))
	err = s.AddNode(finegrain.Node{ID: "more", Capacity: schema.MustTuple(2, 8*gib)})
	assert.ErrorIs(t, err, resource.ErrOverflow)
	assert.NotErrorIs(t, err, resource.ErrNegative)
	_, err = s.NodeFree("empty", 0)
	assert.ErrorIs(t, err, finegrain.ErrUnknownNode, "the refused node was not added")
	_, err = s.NodeFree("more", 0)
	assert.ErrorIs(t, err, finegrain.ErrUnknownNode, "the refused node was not added")
}

// A usage report cannot claim more than the node has.
func TestUsageOverCapacityRefused(t *testing.T) {
	s := newScheduler(t)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	in := predict.Interval{Duration: time.Second, Actual: schema.MustTuple(5000, gib), Predicted: schema.MustTuple(1000, gib)}
	_, err := s.ReportUsage("n", time.Second, []predict.Interval{in})
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	assert.ErrorContains(t, err, "window[0]")
	in.Actual = schema.MustTuple(3000, gib)
	_, err = s.ReportUsage("n", time.Second, []predict.Interval{in})
	assert.NoError(t, err)
}

// A usage report racing with the node's removal either lands on the node or finds it
// gone (ErrUnknownNode); it never fails half-way with another error.
func TestUsageRacesRemoval(t *testing.T) {
	for round := 0; round < 50; round++ {
		s := newScheduler(t)
		id := fmt.Sprintf("n%d", round)
		require.NoError(t, s.AddNode(finegrain.Node{ID: id, Capacity: schema.MustTuple(4000, 8*gib)}))
		in := predict.Interval{Duration: time.Second, Actual: schema.MustTuple(1000, gib), Predicted: schema.MustTuple(1000, gib)}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.ReportUsage(id, time.Second, []predict.Interval{in})
				errs <- err
			}()
		}
		_, err := s.RemoveNode(id, time.Second)
		require.NoError(t, err)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				assert.True(t, errors.Is(err, finegrain.ErrUnknownNode), "round %d: %v", round, err)
			}
		}
	}
}

// A profile has at most stage.MaxStages stages, so no single decision walks an
// unbounded one under the scheduler's lock.
func TestProfileStagesBounded(t *testing.T) {
	stages := make([]stage.Stage, stage.MaxStages+1)
	for i := range stages {
		stages[i] = stage.Stage{Duration: time.Millisecond, Demand: schema.MustTuple(1, 1)}
	}
	_, err := stage.NewProfile(schema, stages...)
	assert.ErrorIs(t, err, stage.ErrTooManyStages)
	_, err = stage.NewProfile(schema, stages[:stage.MaxStages]...)
	assert.NoError(t, err)
}
