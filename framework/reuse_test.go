package framework_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
)

// The framework reuses its own Cycle and Decision from cycle to
// cycle, but what a call returned is the caller's: a Decision's Assignments, Skips and
// Evicted, and a PlacementError's Evicted, must not change with the calls after it.
// Every heartbeat here starts a task, records a refusal and evicts a running task for a
// task that then does not start (Decision.Evicted); every placement evicts one for a
// task it then refuses (PlacementError.Evicted). No other test fails when the reused
// Decision or Cycle keeps its slices' storage from one cycle to the next.
func TestReturnedDecisionsOutliveTheNextCycles(t *testing.T) {
	f := threeNodes(t)
	const rounds = 4
	var victims []*cluster.TaskInfo
	for i := range 2 * rounds {
		v := f.submit(t, "low", fmt.Sprint("v", i), 100, 1)
		victims = append(victims, v)
	}
	pre := f.framework(t, f.base(t))
	for _, v := range victims {
		_, err := pre.Place(v, 0)
		require.NoError(t, err)
	}
	round := 0
	pass := &passFunc{named{"Scripted"}, func(c *framework.Cycle, n *cluster.NodeInfo) error {
		j, _ := c.State().Job("high")
		fits, _ := c.State().Task(fmt.Sprint("fits", round))
		huge, _ := c.State().Task(fmt.Sprint("huge", round))
		require.True(t, c.Try(j, fits, 0).OK())
		require.False(t, c.Try(j, huge, 0).OK())
		require.NoError(t, c.Evict(huge, []framework.Victim{{Task: victims[round], Reason: framework.Preempted}}))
		return nil
	}}
	post := postFilterFunc{named{"EvictsAndRefuses"}, new(int), func(c *framework.Cycle, a *framework.Attempt) framework.Status {
		require.NoError(t, c.Evict(a.Task, []framework.Victim{{Task: victims[rounds+round], Reason: framework.Preempted}}))
		return framework.Refuse(framework.NoRoom)
	}}
	fw := f.framework(t, with(f.base(t), pass, post), framework.WithSkipDetails(4))

	type kept struct {
		d       framework.Decision
		as      []framework.Assignment
		skips   []framework.Skip
		evicted []framework.Eviction
		perr    *framework.PlacementError
		pevict  []framework.Eviction
	}
	var all []kept
	for ; round < rounds; round++ {
		f.submit(t, "high", fmt.Sprint("fits", round), 100, 1)
		f.submit(t, "high", fmt.Sprint("huge", round), 100000, 1)
		d, err := fw.Heartbeat(f.node(t, "n1"), time.Duration(round+1)*time.Second)
		require.NoError(t, err)
		require.Len(t, d.Assignments, 1)
		require.NotEmpty(t, d.Skips)
		require.Len(t, d.Evicted, 1)
		k := kept{d: d, as: slices.Clone(d.Assignments), skips: slices.Clone(d.Skips), evicted: slices.Clone(d.Evicted)}
		_, err = fw.Place(f.task(t, fmt.Sprint("huge", round)), time.Duration(round+1)*time.Second)
		perr := placementError(t, err)
		require.Len(t, perr.Evicted, 1)
		k.perr, k.pevict = perr, slices.Clone(perr.Evicted)
		all = append(all, k)
	}
	for i, k := range all {
		assert.Equal(t, k.as, k.d.Assignments, "heartbeat %d's assignments", i)
		assert.Equal(t, k.skips, k.d.Skips, "heartbeat %d's skips", i)
		assert.Equal(t, k.evicted, k.d.Evicted, "heartbeat %d's evictions", i)
		assert.Equal(t, k.pevict, k.perr.Evicted, "placement %d's evictions", i)
		assert.Equal(t, fmt.Sprint("fits", i), k.d.Assignments[0].Task)
		assert.Equal(t, victims[i].ID(), k.d.Evicted[0].Task)
		assert.Equal(t, victims[rounds+i].ID(), k.perr.Evicted[0].Task)
	}
}
