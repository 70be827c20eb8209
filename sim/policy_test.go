package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// policyScheduler builds p's scheduler as the simulator does, with queues and one node
// of capacity c.
func policyScheduler(t *testing.T, p Policy, c [4]int64, queues ...string) Scheduler {
	t.Helper()
	s, err := p.build(workload.Schema())
	require.NoError(t, err)
	for _, q := range queues {
		if p.Queue == nil {
			require.NoError(t, s.AddQueue("", q))
		} else {
			require.NoError(t, s.AddQueue("", q, p.Queue(q, len(queues))...))
		}
	}
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n0", Rack: "r0", Capacity: tuple(c[0], c[1], c[2], c[3])}))
	return s
}

// submit adds job id to queue q with n tasks like task (its ID and Job set for each).
func submit(t *testing.T, s Scheduler, q, id string, n int, task finegrain.Task) {
	t.Helper()
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: id, Queue: q}))
	for i := range n {
		task.ID, task.Job = fmt.Sprintf("%s/t%d", id, i), id
		require.NoError(t, s.Submit(task))
	}
}

// A queue alone with work may not take more than the whole cluster in DRF's charges:
// tasks whose short disk stages take turns on the node are each charged their disk
// peak, 40% of the cluster's, and FGM stops the queue before a third one; without the
// max share it piles them up, heartbeat after heartbeat.
func TestFGMQueueMaxShare(t *testing.T) {
	burst := stage.MustProfile(workload.Schema(),
		stage.Stage{Duration: time.Second, Demand: tuple(100, 64<<20, 40<<20, 0)},
		stage.Stage{Duration: 100 * time.Second, Demand: tuple(100, 64<<20, 0, 0)})
	uncapped := FGM()
	uncapped.Queue = nil
	placed := func(p Policy) int {
		s := policyScheduler(t, p, [4]int64{16000, 32 * gib, 100 << 20, 100 << 20}, "qa", "qb")
		submit(t, s, "qa", "a", 10, finegrain.Task{Request: tuple(1000, gib, 0, 0), Profile: burst})
		n := 0
		for beat := range 5 {
			d, err := s.Heartbeat("n0", time.Duration(beat)*time.Second)
			require.NoError(t, err)
			n += len(d.Assignments)
		}
		return n
	}
	const charge = 0.4 // each task's dominant share: its disk peak
	assert.Greater(t, float64(placed(uncapped))*charge, 1.0, "the scenario lets a queue pass the whole cluster")
	n := placed(FGM())
	assert.LessOrEqual(t, float64(n)*charge, FGMMaxShare)
	assert.Equal(t, 2, n, "as many as fit within the whole cluster")
}

// One heartbeat's tasks go by the queues' shares as they start: an empty node with
// room for four tasks, queue qa with four jobs and qb with one, all pending. Taking
// the order once for the pass would give one task to each of qa's jobs, the whole
// node, before qb is looked at.
func TestFGMHeartbeatTakesTheOrderAfterEachStart(t *testing.T) {
	s := policyScheduler(t, FGM(), [4]int64{16000, 32 * gib, 100 << 20, 100 << 20}, "qa", "qb")
	req := finegrain.Task{Request: tuple(4000, 4*gib, 0, 0)} // no key: held by its request
	for i := range 4 {
		submit(t, s, "qa", fmt.Sprintf("a%d", i), 2, req)
	}
	submit(t, s, "qb", "b", 8, req)
	d, err := s.Heartbeat("n0", 0)
	require.NoError(t, err)
	byQueue := map[string]int{}
	for _, a := range d.Assignments {
		byQueue[a.Job[:1]]++
	}
	assert.Equal(t, map[string]int{"a": 2, "b": 2}, byQueue)
}
