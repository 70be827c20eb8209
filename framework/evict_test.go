package framework_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
)

// Cycle.Evict checks everything before it evicts anything: a nil or foreign preemptor
// or victim, a victim not running or listed twice, is refused and nothing changes.
func TestEvictRefusesBadInputAndChangesNothing(t *testing.T) {
	f := threeNodes(t)
	run := f.submit(t, "low", "run", 1000, 1)
	other := f.submit(t, "low", "other", 1000, 1)
	pend := f.submit(t, "high", "pend", 1000, 1)
	fw := f.framework(t, f.base(t))
	_, err := fw.Place(run, 0)
	require.NoError(t, err)
	_, err = fw.Place(other, 0)
	require.NoError(t, err)

	g := threeNodes(t) // another state: its tasks are foreign here
	foreign := g.submit(t, "low", "run", 1000, 1)
	_, err = g.framework(t, g.base(t)).Place(foreign, 0)
	require.NoError(t, err)

	before := takeSnapshot(t, f.st, "run", "other", "pend")
	calls := 0
	errs := map[string]error{}
	post := postFilterFunc{named{"Evicts"}, &calls, func(c *framework.Cycle, _ *framework.Attempt) framework.Status {
		v := func(t *cluster.TaskInfo) framework.Victim {
			return framework.Victim{Task: t, Reason: framework.Preempted}
		}
		errs["nil preemptor"] = c.Evict(nil, []framework.Victim{v(run)})
		errs["foreign victim"] = c.Evict(pend, []framework.Victim{v(run), v(foreign)})
		errs["nil victim"] = c.Evict(pend, []framework.Victim{v(run), {}})
		errs["pending victim"] = c.Evict(pend, []framework.Victim{v(run), v(pend)})
		errs["listed twice"] = c.Evict(pend, []framework.Victim{v(run), v(run)})
		return framework.Refuse(framework.NoRoom)
	}}
	fw = f.framework(t, with(f.base(t), notBefore(time.Hour), post))
	_, err = fw.Place(pend, time.Second)
	require.ErrorIs(t, err, framework.ErrNotPlaced)
	require.Equal(t, 1, calls)
	for name, err := range errs {
		assert.Error(t, err, name)
	}
	after := takeSnapshot(t, f.st, "run", "other", "pend")
	before.Clock = after.Clock // the placement's time; nothing else changed
	assert.Equal(t, before, after)
	assert.Equal(t, cluster.Running, run.State())
}

// Cycle.Moves counts every change to the heartbeat's assignments: a task started and
// then withdrawn (evicted in the same heartbeat), and another started, leave as many
// assignments as before, not the same moves.
func TestMovesCountStartsAndWithdrawals(t *testing.T) {
	f := threeNodes(t)
	first := f.submit(t, "low", "first", 1000, 1)
	second := f.submit(t, "low", "second", 1000, 1)
	pre := f.submit(t, "high", "pre", 1000, 1)
	var counts, moves []int
	note := func(c *framework.Cycle) {
		counts = append(counts, len(c.Decision().Assignments))
		moves = append(moves, int(c.Moves()))
	}
	pass := &passFunc{named{"StartsAndWithdraws"}, func(c *framework.Cycle, n *cluster.NodeInfo) error {
		note(c)
		j, _ := c.State().Job("low")
		if s := c.Try(j, first, 0); !s.OK() {
			return fmt.Errorf("first: %v", s)
		}
		note(c)
		if err := c.Evict(pre, []framework.Victim{{Task: first, Reason: framework.Preempted}}); err != nil {
			return err
		}
		note(c)
		if s := c.Try(j, second, 0); !s.OK() {
			return fmt.Errorf("second: %v", s)
		}
		note(c)
		return nil
	}}
	fw := f.framework(t, with(f.base(t), pass))
	_, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 0, 1}, counts)
	assert.Equal(t, []int{0, 1, 2, 3}, moves)
}
