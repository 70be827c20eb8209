package finegrain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
)

// The limits preemption keeps when several things happen in one heartbeat, or a queue
// or gang is shared: each case once took a queue below its guarantee, a job past its
// budget or a gang apart.

func runningOf(s *finegrain.Scheduler, ids ...string) int {
	n := 0
	for _, id := range ids {
		if st, _ := s.TaskState(id); st == finegrain.Running {
			n++
		}
	}
	return n
}

// A task the locality pass started and the preemption pass withdraws still leaves its
// queue: the queue's guarantee counts it.
func TestWithdrawnVictimCountsForItsQueuesGuarantee(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Guarantees: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	for q, min := range map[string]float64{"A": 0.5, "B": 0.5, "D": 0} {
		require.NoError(t, s.AddQueue("", q, fairness.MinShare(min)))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: q, Queue: q}))
	}
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "b0", Job: "B", Request: schema.MustTuple(100, gib)},
		finegrain.Task{ID: "b1", Job: "B", Request: schema.MustTuple(100, gib)},
		finegrain.Task{ID: "d0", Job: "D", Request: schema.MustTuple(100, gib), NonPreemptible: true}))
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 3)
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "a0", Job: "A", Request: schema.MustTuple(100, 2*gib)},
		finegrain.Task{ID: "b2", Job: "B", Request: schema.MustTuple(100, gib)}))
	_, err = s.Heartbeat("n", time.Second)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, runningOf(s, "b0", "b1", "b2"), 2, "B keeps its guarantee of 2 GiB")
}

// Victims from two queues under one guaranteed parent are counted together against
// the parent's guarantee.
func TestParentGuaranteeCountsVictimsOfAllItsQueues(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Guarantees: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	require.NoError(t, s.AddQueue("", "A", fairness.MinShare(0.5)))
	require.NoError(t, s.AddQueue("", "P", fairness.MinShare(0.25)))
	require.NoError(t, s.AddQueue("P", "P1"))
	require.NoError(t, s.AddQueue("P", "P2"))
	require.NoError(t, s.AddQueue("", "D"))
	for _, j := range []string{"P1", "P2", "D", "A"} {
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: j, Queue: j}))
	}
	for _, tk := range []finegrain.Task{
		{ID: "d", Job: "D", Request: schema.MustTuple(100, 5*gib), NonPreemptible: true},
		{ID: "p2a", Job: "P2", Request: schema.MustTuple(100, gib)},
		{ID: "p2b", Job: "P2", Request: schema.MustTuple(100, gib)},
		{ID: "p1a", Job: "P1", Request: schema.MustTuple(100, gib)},
	} {
		require.NoError(t, s.Submit(tk))
		_, err := s.Place(tk.ID, 0)
		require.NoError(t, err)
	}
	require.NoError(t, s.Submit(finegrain.Task{ID: "a0", Job: "A", Request: schema.MustTuple(100, 2*gib)}))
	_, err := s.Place("a0", time.Second)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "two victims would leave P (guarantee 2 GiB) with 1")
	assert.Equal(t, 3, runningOf(s, "p1a", "p2a", "p2b"))
}

// A gang whose finished tasks keep it at MinMember loses only the victim, not its other
// running members.
func TestGangVictimsCountFinishedMembers(t *testing.T) {
	for _, nonPreemptible := range []bool{false, true} {
		s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
			finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
		require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "g", MinMember: 2}))
		require.NoError(t, s.Submit(
			finegrain.Task{ID: "m0", Job: "g", Request: schema.MustTuple(500, gib)},
			finegrain.Task{ID: "m1", Job: "g", Request: schema.MustTuple(500, gib), NonPreemptible: nonPreemptible}))
		_, err := s.Heartbeat("n", 0)
		require.NoError(t, err)
		require.NoError(t, s.Finished("m0", time.Second, nil))
		require.NoError(t, s.Submit(finegrain.Task{ID: "r", Job: "g", Request: schema.MustTuple(500, 3*gib)}))
		d, err := s.Heartbeat("n", 2*time.Second)
		require.NoError(t, err)
		require.Len(t, d.Assignments, 1)
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "h", Priority: 10}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "hi", Job: "h", Request: schema.MustTuple(500, 3*gib)}))
		a, err := s.Place("hi", 3*time.Second)
		require.NoError(t, err, "non-preemptible m1: %v", nonPreemptible)
		assert.Equal(t, []string{"r"}, evictedIDs(a.Evicted))
	}
}

// A task preempted and started again in a heartbeat is still down for its job's
// budget until the embedder has started it: the same heartbeat evicts no other task
// of the job beyond MaxDisrupted.
func TestRestartInAHeartbeatDoesNotFundAnEviction(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "L", MaxDisrupted: 1}))
	for i, mem := range []int64{gib, gib, gib, gib / 2} {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("l%d", i), Job: "L", Request: schema.MustTuple(500, mem)}))
	}
	_, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "H", Priority: 10}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "h1", Job: "H", Request: schema.MustTuple(500, gib)}))
	a, err := s.Place("h1", time.Second)
	require.NoError(t, err)
	require.Len(t, a.Evicted, 1)
	require.NoError(t, s.Finished("h1", 2*time.Second, nil))
	require.NoError(t, s.Submit(finegrain.Task{ID: "h2", Job: "H", Request: schema.MustTuple(500, 3*gib/2)}))
	d, err := s.Heartbeat("n", 3*time.Second)
	require.NoError(t, err)
	restarted, evicted := 0, len(d.Evicted)
	for _, a := range d.Assignments {
		if a.Job == "L" {
			restarted++
		}
		evicted += len(a.Evicted)
	}
	assert.False(t, restarted > 0 && evicted > 0, "one decision restarts a down L task and evicts another (MaxDisrupted 1)")
}

// closedGate closes every heartbeat (a node being drained).
type closedGate struct{}

func (closedGate) Name() string { return "Drain" }
func (closedGate) Gate(*framework.Cycle, *cluster.NodeInfo) framework.Status {
	return framework.Close(framework.PolicyStop)
}

// The preemption pass asks every node gate; only the idle gate's "node busy" is no
// reason not to preempt.
func TestPreemptionPassAsksEveryGate(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithPlugin(closedGate{}),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "L"}))
	for i := 0; i < 4; i++ {
		id := fmt.Sprintf("l%d", i)
		require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "L", Request: schema.MustTuple(1000, gib)}))
		_, err := s.Place(id, 0)
		require.NoError(t, err)
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "H", Priority: 10}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "h", Job: "H", Request: schema.MustTuple(1000, gib)}))
	d, err := s.Heartbeat("n", time.Second)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments, "a closed node takes nothing, preemption or not")
	assert.Empty(t, d.Evicted)
	assert.Equal(t, 4, runningOf(s, "l0", "l1", "l2", "l3"))
}
