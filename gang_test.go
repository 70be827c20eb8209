package finegrain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
)

// gangCluster has nodes of 4 CPU and 4 GiB, and gang jobs of members tasks of 1 GiB
// each, MinMember = members.
func gangCluster(t *testing.T, nodes int, gangs map[string]int, opts ...finegrain.Option) *finegrain.Scheduler {
	t.Helper()
	opts = append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithGangTimeout(10 * time.Second)}, opts...)
	s := newScheduler(t, opts...)
	addNodes(t, s, nodes, schema.MustTuple(4000, 4*gib))
	for g, members := range gangs {
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: g, MinMember: members}))
		var tasks []finegrain.Task
		for i := 0; i < members; i++ {
			tasks = append(tasks, finegrain.Task{ID: fmt.Sprintf("%s-%d", g, i), Job: g, Request: schema.MustTuple(500, 1*gib), Duration: time.Minute})
		}
		require.NoError(t, s.Submit(tasks...))
	}
	return s
}

func TestGangCommitsTogetherInPush(t *testing.T) {
	s := gangCluster(t, 1, map[string]int{"g": 3})
	for i := 0; i < 2; i++ {
		_, err := s.Place(fmt.Sprintf("g-%d", i), 0)
		var pe *finegrain.PlacementError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, finegrain.PermitWaiting, pe.Reason)
		st, _ := s.TaskState(fmt.Sprintf("g-%d", i))
		assert.Equal(t, finegrain.Reserved, st, "a member waits, reserved")
	}
	assert.Zero(t, s.Count(finegrain.Running), "nothing of the gang runs before all of it can")
	a, err := s.Place("g-2", time.Second)
	require.NoError(t, err)
	assert.Equal(t, "g-2", a.Task)
	others := s.Permitted()
	assert.Len(t, others, 2, "the waiting members are committed with the last")
	assert.Equal(t, 3, s.Count(finegrain.Running))
	assert.Zero(t, s.Count(finegrain.Reserved))
}

func TestGangRollsBackAfterTimeout(t *testing.T) {
	s := gangCluster(t, 1, map[string]int{"g": 5}) // 5 GiB on a 4 GiB node: never fits
	for i := 0; i < 4; i++ {
		_, err := s.Place(fmt.Sprintf("g-%d", i), time.Duration(i)*time.Second)
		require.ErrorIs(t, err, finegrain.ErrNotPlaced)
	}
	assert.Equal(t, 4, s.Count(finegrain.Reserved))
	_, err := s.Place("g-4", 5*time.Second)
	require.ErrorIs(t, err, finegrain.ErrNotPlaced, "the node is full of its own gang")

	// The wait ends 10 s after the first member waited: every member is pending again.
	free, err := s.NodeFree("n0", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(2000, 0), free)
	_, err = s.Heartbeat("n0", 10*time.Second)
	require.NoError(t, err)
	assert.Zero(t, s.Count(finegrain.Reserved))
	assert.Equal(t, 5, s.Count(finegrain.Pending))
	free, err = s.NodeFree("n0", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(4000, 4*gib), free, "the rollback gives everything back")

	// The gang backs off one timeout before it gathers again.
	_, err = s.Place("g-0", 11*time.Second)
	var pe *finegrain.PlacementError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, finegrain.GangWaiting, pe.Reason)
}

// Two gangs that each fit the cluster alone but not together: one gathers at a time,
// so they never each hold half of it.
func TestTwoGangsDoNotDeadlockInPull(t *testing.T) {
	s := gangCluster(t, 2, map[string]int{"a": 6, "b": 6}) // 8 GiB in all; 6 each
	var started []finegrain.Assignment
	for beat := 0; beat < 40 && len(started) < 6; beat++ {
		d, err := s.Heartbeat(fmt.Sprintf("n%d", beat%2), time.Duration(beat)*time.Second)
		require.NoError(t, err)
		started = append(started, d.Assignments...)
	}
	require.Len(t, started, 6, "one gang runs")
	job := started[0].Job
	for _, a := range started {
		assert.Equal(t, job, a.Job, "all of one gang, none of the other")
	}
	assert.Zero(t, s.Count(finegrain.Reserved), "the other gang holds nothing")
	assert.Equal(t, 6, s.Count(finegrain.Pending))
}

func TestGangInputErrors(t *testing.T) {
	s := newScheduler(t)
	for name, j := range map[string]finegrain.Job{
		"negative min member":    {ID: "a", MinMember: -1},
		"negative max disrupted": {ID: "b", MaxDisrupted: -2},
	} {
		assert.ErrorIs(t, s.SubmitJob(j), finegrain.ErrInvalid, name)
		j.MinMember, j.MaxDisrupted = 0, 0
		assert.NoError(t, s.SubmitJob(j), "nothing was added: %s", name)
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "g", MinMember: 3}))
	err := s.Submit(finegrain.Task{ID: "t1", Job: "g", Request: schema.MustTuple(1, 1)}, finegrain.Task{ID: "t2", Job: "g", Request: schema.MustTuple(1, 1)})
	assert.ErrorIs(t, err, finegrain.ErrInvalid, "a gang of 3 with 2 tasks could never run")
	assert.ErrorContains(t, err, `gang job "g": 2 live or finished tasks after this submission, MinMember 3`)
	_, ok := s.TaskState("t1")
	assert.False(t, ok, "nothing added")
	require.NoError(t, s.Submit(finegrain.Task{ID: "t1", Job: "g", Request: schema.MustTuple(1, 1)}, finegrain.Task{ID: "t2", Job: "g", Request: schema.MustTuple(1, 1)},
		finegrain.Task{ID: "t3", Job: "g", Request: schema.MustTuple(1, 1)}))
}

// A gang whose members finished count toward MinMember (Volcano's rule): one member
// finished, the other failed, and the failed one runs again alone.
func TestGangFinishedMembersCount(t *testing.T) {
	s := gangCluster(t, 1, map[string]int{"g": 2})
	d, err := s.Heartbeat("n0", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 2)
	require.NoError(t, s.Finished("g-0", time.Second, nil))
	require.NoError(t, s.Failed("g-1", 2*time.Second))
	d, err = s.Heartbeat("n0", 3*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1, "%v", d.Skips)
	assert.Equal(t, "g-1", d.Assignments[0].Task)
}

// A member kept waiting starts when its gang is complete, and its reservation moves
// with it: it holds the node for its whole duration from then.
func TestGangMemberStartsWhenAllowed(t *testing.T) {
	s := gangCluster(t, 1, map[string]int{"g": 2}) // each 1 GiB for a minute
	_, err := s.Place("g-0", 0)
	require.ErrorIs(t, err, finegrain.ErrNotPlaced)
	a, err := s.Place("g-1", 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, a.Start)
	others := s.Permitted()
	require.Len(t, others, 1)
	assert.Equal(t, "g-0", others[0].Task)
	assert.Equal(t, 5*time.Second, others[0].Start, "it starts when allowed")
	free, err := s.NodeFree("n0", time.Minute+4*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(3000, 2*gib), free, "both still hold their memory until 65 s")
	free, err = s.NodeFree("n0", time.Minute+5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(4000, 4*gib), free)
}

// A gang is not allowed while a waiting member's reservation cannot move to start now
// (a booking took the room it would need later): the members keep waiting, and nothing
// runs outside the books.
func TestGangWaitsWhileAMemberCannotStartNow(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithFutureStart(true),
		finegrain.WithGangTimeout(time.Minute))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "g", MinMember: 2}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "o"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "g1", Job: "g", Request: schema.MustTuple(500, gib), Duration: 10 * time.Second},
		finegrain.Task{ID: "g2", Job: "g", Request: schema.MustTuple(500, gib), Duration: 10 * time.Second},
		finegrain.Task{ID: "r", Job: "o", Request: schema.MustTuple(500, 2*gib), Duration: 15 * time.Second}))
	_, err := s.Place("r", 0)
	require.NoError(t, err)
	_, err = s.Place("g1", 0) // reserved over [0, 10 s), waiting for g2
	require.ErrorIs(t, err, finegrain.ErrNotPlaced)
	require.NoError(t, s.Submit(finegrain.Task{ID: "big", Job: "o", Request: schema.MustTuple(500, 3*gib), Duration: time.Minute}))
	a, err := s.Place("big", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, 15*time.Second, a.Start, "booked where r ends")

	// At 12 s g1 could not run to 22 s: the booking holds 3 of the 4 GiB from 15 s.
	_, err = s.Place("g2", 12*time.Second)
	var pe *finegrain.PlacementError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, finegrain.PermitWaiting, pe.Reason)
	assert.Empty(t, s.Permitted())
	assert.Equal(t, 1, s.Count(finegrain.Running), "only r runs")
	for _, at := range []time.Duration{12 * time.Second, 16 * time.Second, 30 * time.Second} {
		free, err := s.NodeFree("n", at)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, free[1], int64(0), "memory never over-reserved at %v", at)
	}
}

// A push embedder with nothing left to place lets time pass with ExpirePermits: a
// gang that cannot gather lets go of what it holds when its wait is over.
func TestExpirePermits(t *testing.T) {
	s := gangCluster(t, 1, map[string]int{"g": 5}) // 5 GiB on a 4 GiB node: never fits
	for i := 0; i < 4; i++ {
		_, err := s.Place(fmt.Sprintf("g-%d", i), 0)
		require.ErrorIs(t, err, finegrain.ErrNotPlaced)
	}
	require.NoError(t, s.ExpirePermits(5*time.Second))
	assert.Equal(t, 4, s.Count(finegrain.Reserved), "the wait is 10 s")
	require.NoError(t, s.ExpirePermits(10*time.Second))
	assert.Zero(t, s.Count(finegrain.Reserved))
	assert.Equal(t, 5, s.Count(finegrain.Pending))
	err := s.ExpirePermits(time.Second)
	assert.ErrorIs(t, err, finegrain.ErrInvalid, "time going backwards")
	assert.ErrorContains(t, err, "finegrain: expiry of permit waits at 1s: time going backwards")
}

// submitGang submits gang job id, submitted at the given time, with members tasks of
// 500 milli-CPU and 1 GiB, MinMember = members.
func submitGang(t *testing.T, s *finegrain.Scheduler, id string, members int, submitted time.Duration) {
	t.Helper()
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: id, MinMember: members, Submitted: submitted}))
	var tasks []finegrain.Task
	for i := 0; i < members; i++ {
		tasks = append(tasks, finegrain.Task{ID: fmt.Sprintf("%s-%d", id, i), Job: id, Submitted: submitted, Request: schema.MustTuple(500, 1*gib), Duration: time.Minute})
	}
	require.NoError(t, s.Submit(tasks...))
}

// beatInStep sends both nodes' heartbeats at the same instant, every 30 s (three
// timeouts), from 0 until stop reports true or rounds run out, and returns the
// assignments by the round's time.
func beatInStep(t *testing.T, s *finegrain.Scheduler, rounds int, stop func([]finegrain.Assignment) bool) map[time.Duration][]finegrain.Assignment {
	t.Helper()
	out := map[time.Duration][]finegrain.Assignment{}
	for round := 0; round < rounds; round++ {
		now := time.Duration(round) * 30 * time.Second
		var started []finegrain.Assignment
		for _, n := range []string{"n0", "n1"} {
			d, err := s.Heartbeat(n, now)
			require.NoError(t, err)
			started = append(started, d.Assignments...)
		}
		out[now] = started
		if stop(started) {
			break
		}
	}
	return out
}

// Gangs that can never gather come first in the fairness order (FIFO here; under DRF
// because they hold nothing) and, one after another, would hold both nodes at every
// heartbeat; after a rollback each node's next cycle goes to other work, so a plain
// task behind them starts in the very round that rolled the first gang back, on the
// node that rolled it back, although the other gang's backoff has not begun and the
// heartbeats come at the same instant.
func TestRollbackGivesEachNodeATurnToOtherWork(t *testing.T) {
	s := gangCluster(t, 2, nil, finegrain.WithOrdering(fairness.FIFO{})) // 2 nodes, 8 GiB in all
	submitGang(t, s, "g1", 9, 0)                                         // 9 GiB: never
	submitGang(t, s, "g2", 9, 0)
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "plain", Submitted: time.Second}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "p", Job: "plain", Submitted: time.Second, Request: schema.MustTuple(500, 1*gib), Duration: time.Minute}))
	started := beatInStep(t, s, 20, func(as []finegrain.Assignment) bool { return len(as) > 0 })
	require.Len(t, started[30*time.Second], 1, "the plain task starts in the round of the first rollback: %v", started)
	assert.Equal(t, "p", started[30*time.Second][0].Task)
	assert.Equal(t, "n0", started[30*time.Second][0].Node)
	assert.Zero(t, s.Count(finegrain.Reserved), "no gang began in that round")
}

// The turn is per node, not per cycle: with the heartbeats at the same instant, the
// rollbacks all happen in the first node's cycle, and a gang that needs both nodes
// still gathers, beginning on the first node once its backoff and the other gang's
// attempts leave it the turn.
func TestGangNeedingEveryNodeGathersAfterRollbacks(t *testing.T) {
	s := gangCluster(t, 2, nil, finegrain.WithOrdering(fairness.FIFO{}))
	submitGang(t, s, "a", 9, 0)           // never: takes turns with its backoff
	submitGang(t, s, "b", 6, time.Second) // 4 GiB on one node and 2 on the other
	started := beatInStep(t, s, 40, func(as []finegrain.Assignment) bool { return len(as) > 0 })
	var b []finegrain.Assignment
	for _, as := range started {
		b = append(b, as...)
	}
	require.Len(t, b, 6, "gang b gathers: %v", started)
	nodes := map[string]int{}
	for _, a := range b {
		assert.Equal(t, "b", a.Job)
		nodes[a.Node]++
	}
	assert.Equal(t, map[string]int{"n0": 4, "n1": 2}, nodes)
}
