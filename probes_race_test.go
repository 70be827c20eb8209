package finegrain_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// Run with -race. Probes (Filter, Score) share the demand
// cache, the filters' mode references and the nodes' timelines; they run concurrently
// with each other, with placements and node removals and additions (which take the
// node indexes and mode references over), and with what an embedder may call without
// the scheduler's lock: the adjuster's SetMode (read by the filters through
// policy.ModeRef) and the estimator's Observe (a new estimate: a new cached hold).
// TestProbesConcurrent runs probes beside one heartbeat only, and neither test caught
// a ModeRef whose mode is a plain field.
func TestProbesConcurrentWithPlacementsModesAndEstimates(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	addNodes(t, s, 8, schema.MustTuple(8000, 64*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	keys := []predict.Key{{Logic: "a", InputSize: 1}, {Logic: "b", InputSize: 1}}
	observe := func(k predict.Key, mem int64) {
		require.NoError(t, s.Estimator().Observe(k, predict.Observation{Profile: stage.MustProfile(schema,
			stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(500, mem*gib)},
			stage.Stage{Duration: 5 * time.Second, Demand: schema.MustTuple(100, gib)})}))
	}
	for _, k := range keys {
		observe(k, 1)
	}
	const tasks = 96
	for i := range tasks {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprint("t", i), Job: "j", Key: keys[i%2], Request: schema.MustTuple(500, gib)}))
	}
	// A first placement visits the nodes: the filters take their mode references.
	_, err := s.Place("t0", 0)
	require.NoError(t, err)
	var wg, probes sync.WaitGroup
	done := make(chan struct{})
	for g := range 4 {
		probes.Add(1)
		go func() {
			defer probes.Done()
			for i := range tasks {
				id, node := fmt.Sprint("t", i), fmt.Sprint("n", (g+i)%8)
				_, _, err := s.Filter(id, node, 0)
				// A task placed meanwhile is no longer pending; a node removed is unknown.
				if err != nil && !errors.Is(err, finegrain.ErrState) && !errors.Is(err, finegrain.ErrUnknownNode) {
					assert.NoError(t, err)
				}
				_, _, _ = s.Score(id, node, 0)
			}
		}()
	}
	wg.Add(3)
	go func() { // placements, and a node leaving and joining again
		defer wg.Done()
		for i := 3; i < tasks; i += 3 {
			_, _ = s.Place(fmt.Sprint("t", i), 0)
			if i%12 == 0 {
				_, err := s.RemoveNode("n7", 0)
				assert.NoError(t, err)
				assert.NoError(t, s.AddNode(finegrain.Node{ID: "n7", Capacity: schema.MustTuple(8000, 64*gib)}))
			}
		}
	}()
	go func() { // modes changed behind the scheduler's back
		defer wg.Done()
		modes := []policy.NodeMode{policy.ModeFineGrained, policy.ModeCoarseGrained, policy.ModeStopAllocation, policy.ModeFineGrained}
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			_ = s.Adjuster().SetMode(fmt.Sprint("n", i%7), modes[i%len(modes)])
		}
	}()
	go func() { // new estimates
		defer wg.Done()
		for i := range 50 {
			observe(keys[i%2], int64(1+i%3))
		}
	}()
	probes.Wait()
	close(done)
	wg.Wait()
	pending, running, _, _ := s.Counts()
	assert.Equal(t, tasks, pending+running, "no task lost")
}
