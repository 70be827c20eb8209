package finegrain_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/stage"
)

// Known answers for priority preemption. The cases follow the behaviour documented and
// tested for the Kubernetes scheduler's default preemption (its DryRunPreemption and
// SelectCandidate cases, with its small/medium/large requests as 1, 2 and 3 GiB of
// memory on nodes of 5 GiB): on a node, every lower-priority pod is removed, then
// put back most important first (higher priority, then earlier start) while the pod
// still fits; across nodes, the lowest highest victim priority wins, then the
// smallest sum of priorities, then the fewest victims, then the latest start.

const (
	lowPrio  = 0
	midPrio  = 100
	highPrio = 1000
)

// running places a task of mem GiB (and a little CPU), held until it finishes, of the
// job of priority prio, on node (which Place must choose) at time at.
type running struct {
	id, node string
	prio     int
	mem      int64
	at       time.Duration
}

// preemptionCluster builds nodes of 5 GiB (in the order they first appear in tasks,
// each added just before its tasks are placed, so that Place chooses it), with the
// tasks running on them, and jobs "p<prio>" for each priority.
func preemptionCluster(t *testing.T, tasks []running, opts ...finegrain.Option) *finegrain.Scheduler {
	t.Helper()
	opts = append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true})}, opts...)
	s := newScheduler(t, opts...)
	jobs := map[int]bool{}
	nodes := map[string]bool{}
	for _, r := range tasks {
		if !nodes[r.node] {
			require.NoError(t, s.AddNode(finegrain.Node{ID: r.node, Capacity: schema.MustTuple(10000, 5*gib)}))
			nodes[r.node] = true
		}
		job := fmt.Sprintf("p%d", r.prio)
		if !jobs[r.prio] {
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: job, Priority: r.prio}))
			jobs[r.prio] = true
		}
		require.NoError(t, s.Submit(finegrain.Task{ID: r.id, Job: job, Request: schema.MustTuple(100, r.mem*gib)}))
		a, err := s.Place(r.id, r.at)
		require.NoError(t, err)
		require.Equal(t, r.node, a.Node, "set-up: %s", r.id)
	}
	return s
}

// preempt submits a task of mem GiB for a new job of priority prio and places it at
// now.
func preempt(t *testing.T, s *finegrain.Scheduler, prio int, mem int64, now time.Duration) (finegrain.Assignment, error) {
	t.Helper()
	job := fmt.Sprintf("preemptor%d", prio)
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: job, Priority: prio}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "p", Job: job, Request: schema.MustTuple(100, mem*gib)}))
	return s.Place("p", now)
}

func evictedIDs(es []finegrain.Eviction) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Task)
	}
	slices.Sort(out)
	return out
}

func TestPriorityPreemptionKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		name    string
		tasks   []running
		prio    int
		mem     int64
		node    string
		victims []string
	}{{
		name: "mixed priority pods are preempted: the fewest, lowest first",
		tasks: []running{
			{"p1.1", "node1", midPrio, 1, 0}, {"p1.2", "node1", lowPrio, 1, 0}, {"p1.3", "node1", midPrio, 2, 0}, {"p1.4", "node1", highPrio, 1, 0},
			{"p2", "node2", highPrio, 3, 0},
		},
		prio: highPrio, mem: 3, node: "node1", victims: []string{"p1.2", "p1.3"},
	}, {
		name: "equal priorities: the later start is evicted",
		tasks: []running{
			{"p1.2", "node1", lowPrio, 1, 4}, {"p1.1", "node1", lowPrio, 1, 5}, {"p1.3", "node1", midPrio, 2, 3}, {"p1.4", "node1", highPrio, 1, 2},
			{"p2", "node2", highPrio, 3, 1},
		},
		prio: highPrio, mem: 3, node: "node1", victims: []string{"p1.1", "p1.3"},
	}, {
		name: "node choice: the lowest highest victim priority",
		tasks: []running{
			{"a", "node1", midPrio, 5, 0},
			{"b1", "node2", lowPrio, 3, 0}, {"b2", "node2", lowPrio, 2, 0},
		},
		prio: highPrio, mem: 4, node: "node2", victims: []string{"b1", "b2"},
	}, {
		name: "node choice: equal highest priority, the fewest victims",
		tasks: []running{
			{"a1", "node1", midPrio, 2, 0}, {"a2", "node1", midPrio, 2, 0}, {"a3", "node1", midPrio, 1, 0},
			{"b1", "node2", midPrio, 4, 0}, {"b2", "node2", highPrio, 1, 0},
		},
		prio: highPrio, mem: 4, node: "node2", victims: []string{"b1"},
	}, {
		name: "node choice: same priority and count, the latest start (least run time lost)",
		tasks: []running{
			{"a", "node1", lowPrio, 5, 1},
			{"b", "node2", lowPrio, 5, 2},
		},
		prio: highPrio, mem: 5, node: "node2", victims: []string{"b"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			s := preemptionCluster(t, c.tasks)
			a, err := preempt(t, s, c.prio, c.mem, 10)
			require.NoError(t, err)
			assert.Equal(t, c.node, a.Node)
			assert.Equal(t, c.victims, evictedIDs(a.Evicted))
			for _, e := range a.Evicted {
				assert.Equal(t, finegrain.Preempted, e.Reason)
				assert.Equal(t, "p", e.For)
				assert.Equal(t, c.node, e.Node)
				st, _ := s.TaskState(e.Task)
				assert.Equal(t, finegrain.Pending, st, "an evicted task is pending again, not lost")
			}
		})
	}
}

func TestPreemptionRefusals(t *testing.T) {
	full := []running{{"a", "node1", lowPrio, 5, 0}}
	t.Run("tied priority: still unschedulable, nothing evicted", func(t *testing.T) {
		s := preemptionCluster(t, full)
		_, err := preempt(t, s, lowPrio, 5, 1)
		assert.ErrorIs(t, err, finegrain.ErrNotPlaced)
		st, _ := s.TaskState("a")
		assert.Equal(t, finegrain.Running, st)
	})
	t.Run("no preemption configured", func(t *testing.T) {
		s := newScheduler(t, finegrain.WithPrediction(false))
		require.NoError(t, s.AddNode(finegrain.Node{ID: "node1", Capacity: schema.MustTuple(10000, 5*gib)}))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low"}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "a", Job: "low", Request: schema.MustTuple(100, 5*gib)}))
		_, err := s.Place("a", 0)
		require.NoError(t, err)
		_, err = preempt(t, s, highPrio, 5, 1)
		assert.ErrorIs(t, err, finegrain.ErrNotPlaced)
	})
	t.Run("non-preemptible task", func(t *testing.T) {
		s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
		require.NoError(t, s.AddNode(finegrain.Node{ID: "node1", Capacity: schema.MustTuple(10000, 5*gib)}))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low"}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "a", Job: "low", Request: schema.MustTuple(100, 5*gib), NonPreemptible: true}))
		_, err := s.Place("a", 0)
		require.NoError(t, err)
		_, err = preempt(t, s, highPrio, 5, 1)
		assert.ErrorIs(t, err, finegrain.ErrNotPlaced)
		st, _ := s.TaskState("a")
		assert.Equal(t, finegrain.Running, st)
	})
	t.Run("disruption budget", func(t *testing.T) {
		s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
		require.NoError(t, s.AddNode(finegrain.Node{ID: "node1", Capacity: schema.MustTuple(10000, 4*gib)}))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low", MaxDisrupted: 1}))
		for i := 0; i < 4; i++ {
			id := fmt.Sprintf("a%d", i)
			require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "low", Request: schema.MustTuple(100, 1*gib)}))
			_, err := s.Place(id, 0)
			require.NoError(t, err)
		}
		_, err := preempt(t, s, highPrio, 2, 1)
		assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "two evictions needed, the budget allows one")
		pending, running, _, _ := s.Counts()
		assert.Equal(t, 1, pending)
		assert.Equal(t, 4, running)

		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "one", Priority: highPrio}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "q", Job: "one", Request: schema.MustTuple(100, 1*gib)}))
		a, err := s.Place("q", 2)
		require.NoError(t, err)
		require.Len(t, a.Evicted, 1, "one eviction is within the budget")
		require.NoError(t, s.Submit(finegrain.Task{ID: "r", Job: "one", Request: schema.MustTuple(100, 1*gib)}))
		_, err = s.Place("r", 3)
		assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "the budget is used until the evicted task is placed again")
	})
}

// The stage timeline lets preemption spare a task that is out of the way in time: the
// preemptor needs the whole node only from 6 s, and one low-priority task ends at 5 s.
// A scheduler that sees only peak requests would evict both.
func TestPreemptionSparesATaskThatEndsInTime(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "ends", Job: "low", Request: schema.MustTuple(100, 4*gib), Duration: 5 * time.Second},
		finegrain.Task{ID: "stays", Job: "low", Request: schema.MustTuple(100, 4*gib)},
	))
	for _, id := range []string{"ends", "stays"} {
		_, err := s.Place(id, 0)
		require.NoError(t, err)
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "high", Priority: highPrio}))
	profile := stage.MustProfile(schema,
		stage.Stage{Duration: 6 * time.Second, Demand: schema.MustTuple(100, 4*gib)},
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(100, 8*gib)})
	require.NoError(t, s.Submit(finegrain.Task{ID: "p", Job: "high", Request: schema.MustTuple(100, 8*gib), Profile: profile}))
	a, err := s.Place("p", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"stays"}, evictedIDs(a.Evicted))
	st, _ := s.TaskState("ends")
	assert.Equal(t, finegrain.Running, st)
}

// fillQueues places, on s's nodes from time 0, n tasks of 1 CPU and 1 GiB for each
// queue of runs, each queue's tasks in a job named after it ("default" for the
// default queue, "").
func fillQueues(t *testing.T, s *finegrain.Scheduler, runs map[string]int) {
	t.Helper()
	for _, q := range slices.Sorted(maps.Keys(runs)) {
		job := cmp.Or(q, "default")
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: job, Queue: q}))
		for i := 0; i < runs[q]; i++ {
			id := fmt.Sprintf("%s-%d", job, i)
			require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: job, Request: schema.MustTuple(1000, 1*gib)}))
			_, err := s.Place(id, 0)
			require.NoError(t, err)
		}
	}
}

// YARN's capacity preemption takes from the queue most over its guarantee first, and
// never takes a queue below its guarantee.
func TestGuaranteePreemptionKnownAnswer(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Guarantees: true, ReclaimDelay: 10 * time.Second}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	require.NoError(t, s.AddQueue("", "A", fairness.MinShare(0.5)))
	require.NoError(t, s.AddQueue("", "B", fairness.MinShare(0.25)))
	require.NoError(t, s.AddQueue("", "C", fairness.MinShare(0.25)))
	fillQueues(t, s, map[string]int{"B": 5, "C": 3})
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "A", Queue: "A"}))
	for i := 0; i < 4; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("A%d", i), Job: "A", Request: schema.MustTuple(1000, 1*gib)}))
	}
	_, err := s.Place("A0", time.Second)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "A is owed its guarantee, but only from 1 s: it waits the reclaim delay")

	from := map[string]int{}
	for i, at := range []time.Duration{11 * time.Second, 12 * time.Second, 13 * time.Second, 14 * time.Second} {
		a, err := s.Place(fmt.Sprintf("A%d", i), at)
		require.NoError(t, err, "A%d", i)
		require.Len(t, a.Evicted, 1)
		assert.Equal(t, finegrain.Reclaimed, a.Evicted[0].Reason)
		from[a.Evicted[0].Job]++
	}
	// B (5 of 8, guarantee 2) gives until it is no more over than C (3 of 8, guarantee
	// 2); then both give one more; neither goes below its guarantee.
	assert.Equal(t, map[string]int{"B": 3, "C": 1}, from)

	require.NoError(t, s.Submit(finegrain.Task{ID: "A4", Job: "A", Request: schema.MustTuple(1000, 1*gib)}))
	_, err = s.Place("A4", 15*time.Second)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "A holds its guarantee: it reclaims no more")
}

func TestPreemptionInPullMode(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low"}))
	for i := 0; i < 4; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("l%d", i), Job: "low", Request: schema.MustTuple(1000, 1*gib)}))
	}
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 4)

	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "high", Priority: highPrio}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "h", Job: "high", Request: schema.MustTuple(2000, 2*gib)}))
	d, err = s.Heartbeat("n", 5*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "h", d.Assignments[0].Task)
	assert.Len(t, d.Assignments[0].Evicted, 2)
	pending, running, _, _ := s.Counts()
	assert.Equal(t, 2, pending)
	assert.Equal(t, 3, running)

	d, err = s.Heartbeat("n", 6*time.Second)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments, "the evicted tasks wait; they do not preempt back")
}

func TestPreemptionOptionErrors(t *testing.T) {
	for name, cfg := range map[string]finegrain.PreemptionConfig{
		"negative delay":          {Guarantees: true, ReclaimDelay: -time.Second},
		"negative per heartbeat":  {Priority: true, PerHeartbeat: -1},
		"delay without guarantee": {ReclaimDelay: time.Second},
	} {
		_, err := finegrain.New(schema, finegrain.WithPreemption(cfg))
		assert.ErrorIs(t, err, finegrain.ErrInvalid, name)
	}
	_, err := finegrain.New(schema, finegrain.WithGangTimeout(0))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	// The zero config switches preemption off.
	s, err := finegrain.New(schema, finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}), finegrain.WithPreemption(finegrain.PreemptionConfig{}))
	require.NoError(t, err)
	assert.NotContains(t, s.Plugins()["Pass"], "Preemption")
}

// Guarantees are hierarchical: a queue below its guarantee reclaims for any queue
// under it, from queues outside it that are above theirs, never from its own
// children.
func TestGuaranteePreemptionHierarchical(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Guarantees: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	require.NoError(t, s.AddQueue("", "A", fairness.MinShare(0.5)))
	require.NoError(t, s.AddQueue("A", "A1"))
	require.NoError(t, s.AddQueue("A", "A2"))
	require.NoError(t, s.AddQueue("", "B", fairness.MinShare(0.5)))
	fillQueues(t, s, map[string]int{"A2": 2, "B": 6})
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "A1", Queue: "A1"}))
	for i := 0; i < 3; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("A1-%d", i), Job: "A1", Request: schema.MustTuple(1000, 1*gib)}))
	}
	for i := 0; i < 2; i++ {
		a, err := s.Place(fmt.Sprintf("A1-%d", i), time.Second)
		require.NoError(t, err)
		require.Len(t, a.Evicted, 1)
		assert.Equal(t, "B", a.Evicted[0].Job, "from the queue above its guarantee, not from A's own child")
		assert.Equal(t, finegrain.Reclaimed, a.Evicted[0].Reason)
	}
	_, err := s.Place("A1-2", time.Second)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "A holds its guarantee (4 of 8) and B is down to its own")
}

// A queue without a min share is guaranteed nothing: a queue owed its guarantee
// reclaims from it, as from the default queue.
func TestGuaranteeReclaimsFromQueuesWithoutMinShare(t *testing.T) {
	for _, queue := range []string{"B", ""} {
		s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Guarantees: true}))
		require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
		require.NoError(t, s.AddQueue("", "A", fairness.MinShare(0.5)))
		if queue != "" {
			require.NoError(t, s.AddQueue("", queue))
		}
		fillQueues(t, s, map[string]int{queue: 8})
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a", Queue: "A"}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "a0", Job: "a", Request: schema.MustTuple(1000, gib)}))
		a, err := s.Place("a0", time.Second)
		require.NoError(t, err, "queue %q", queue)
		require.Len(t, a.Evicted, 1)
		assert.Equal(t, finegrain.Reclaimed, a.Evicted[0].Reason)
	}
}

// A queue's reclaim delay counts, for a task, from when the task became pending if
// that is later: an old starvation does not count for new work, and sparse retries do
// not restart it.
func TestReclaimDelayStartsAfresh(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Guarantees: true, ReclaimDelay: 15 * time.Second}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	require.NoError(t, s.AddQueue("", "A", fairness.MinShare(0.5)))
	require.NoError(t, s.AddQueue("", "B"))
	fillQueues(t, s, map[string]int{"B": 8})
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a", Queue: "A"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "a0", Job: "a", Request: schema.MustTuple(1000, gib)}))
	_, err := s.Place("a0", time.Second)
	require.ErrorIs(t, err, finegrain.ErrNotPlaced, "owed from 1 s: it waits")
	require.NoError(t, s.Cancel("a0", 2*time.Second))

	require.NoError(t, s.Submit(finegrain.Task{ID: "a1", Job: "a", Request: schema.MustTuple(1000, gib), Submitted: time.Hour}))
	_, err = s.Place("a1", time.Hour)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "a task submitted an hour later waits afresh: an old starvation does not count for it")
	_, err = s.Place("a1", time.Hour+10*time.Second)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "retried sparsely, it still counts from its submission")
	a, err := s.Place("a1", time.Hour+15*time.Second)
	require.NoError(t, err)
	assert.Len(t, a.Evicted, 1)
}

// A task started by the locality pass and withdrawn by the preemption pass of the same
// heartbeat still counts against its job's disruption budget if it was down before.
func TestWithdrawalKeepsTheDisruptionBudget(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low", MaxDisrupted: 1}))
	for i := 0; i < 4; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("l%d", i), Job: "low", Request: schema.MustTuple(1000, gib)}))
	}
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 4)
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "high", Priority: 1}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "h1", Job: "high", Request: schema.MustTuple(1000, gib)}))
	d, err = s.Heartbeat("n", time.Second) // h1 evicts one low task: the budget is used
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	require.Len(t, d.Assignments[0].Evicted, 1)
	down := d.Assignments[0].Evicted[0].Task

	// The down task would start again where h1 finished, and h2 wants that room.
	require.NoError(t, s.Finished("h1", 2*time.Second, nil))
	require.NoError(t, s.Submit(finegrain.Task{ID: "h2", Job: "high", Request: schema.MustTuple(2000, 2*gib)}))
	d, err = s.Heartbeat("n", 3*time.Second)
	require.NoError(t, err)
	for _, a := range d.Assignments {
		assert.Empty(t, a.Evicted, "withdrawing %s and evicting another would leave two down, beyond MaxDisrupted 1", down)
	}
	assert.Empty(t, d.Evicted)
}

func TestPreemptionPassRespectsTheHeartbeatCap(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithMaxPerHeartbeat(1),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "low"}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "high", Priority: 1}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "l0", Job: "low", Request: schema.MustTuple(1000, 3*gib)}))
	_, err := s.Place("l0", 0)
	require.NoError(t, err)
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "l1", Job: "low", Request: schema.MustTuple(1000, gib)},
		finegrain.Task{ID: "h", Job: "high", Request: schema.MustTuple(1000, 2*gib)}))
	d, err := s.Heartbeat("n", time.Second)
	require.NoError(t, err)
	assert.Len(t, d.Assignments, 1, "one start per heartbeat, preemption included")
	assert.Equal(t, finegrain.CapReached, d.Stop)
}

// Evictions come in the same order for the same inputs (a gang's members, say).
func TestEvictionOrderIsDeterministic(t *testing.T) {
	run := func() []string {
		s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
			finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
		require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
		for _, g := range []string{"a", "b"} {
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: g, MinMember: 2}))
			require.NoError(t, s.Submit(finegrain.Task{ID: g + "0", Job: g, Request: schema.MustTuple(1000, gib)},
				finegrain.Task{ID: g + "1", Job: g, Request: schema.MustTuple(1000, gib)}))
		}
		for beat := 0; beat < 4; beat++ {
			_, err := s.Heartbeat("n", time.Duration(beat)*time.Second)
			require.NoError(t, err)
		}
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "high", Priority: 1}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "h", Job: "high", Request: schema.MustTuple(4000, 4*gib)}))
		a, err := s.Place("h", 10*time.Second)
		require.NoError(t, err)
		var out []string
		for _, e := range a.Evicted {
			out = append(out, e.Task)
		}
		return out
	}
	first := run()
	require.Len(t, first, 4, "both gangs, whole")
	for i := 0; i < 20; i++ {
		assert.Equal(t, first, run())
	}
}
