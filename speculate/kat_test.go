package speculate_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/speculate"
)

// The thesis' Table 4.1 example (§4.2.3.2): one queue; Job1, Job2 and Job3 have their
// data on Slot1, Slot2 and Slot3; priority Job1 > Job2 > Job3 (and submission in that
// order); Slot3 is free now and asks for work, then Slot2 frees, then Slot1 (the order
// the walk-through and the table use). Each slot is on its own node in its own rack, a
// task takes 60 s on any node, and a non-local task must first fetch its 128 MiB block
// across racks (25.6 s). At t = 0 Slot1 has 10 s left and Slot2 5 s.
//
// table41 is the scenario as data: the slots in the order they free, and when.
var table41 = struct {
	nodes  []string
	frees  []time.Duration
	jobs   []string
	locals map[string]string // job → node holding its data
}{
	nodes:  []string{"slot3", "slot2", "slot1"},
	frees:  []time.Duration{0, 5 * sec, 10 * sec},
	jobs:   []string{"job1", "job2", "job3"},
	locals: map[string]string{"job1": "slot1", "job2": "slot2", "job3": "slot3"},
}

const taskTime = 60 * time.Second

// table41Run drives a placement policy through the example: at each slot's turn it asks
// assign for the job to run there, starts that job's task, and returns the assignments
// as "SlotX→JobY" and the number that were node-local.
func table41Run(t *testing.T, assign func(state speculate.FairState, node string, now time.Duration) string) (string, int) {
	t.Helper()
	pending := map[string]bool{"job1": true, "job2": true, "job3": true}
	busyUntil := map[string]time.Duration{"slot1": 10 * sec, "slot2": 5 * sec} // held by earlier work
	runningTask := map[string]string{"slot1": "old1", "slot2": "old2"}
	running := map[string]int{}
	var out []string
	local := 0
	for i, node := range table41.nodes {
		now := table41.frees[i]
		delete(busyUntil, node)
		state := speculate.FairState{Racks: map[string]string{"slot1": "rack1", "slot2": "rack2", "slot3": "rack3"}}
		pool := speculate.Pool{ID: "default", Order: speculate.FIFOJobs}
		for k, j := range table41.jobs {
			job := speculate.PoolJob{ID: j, Priority: 3 - k, Submitted: time.Duration(k) * sec, Running: running[j], TaskTime: speculate.NodeTimes{Default: taskTime}}
			if pending[j] {
				home := table41.locals[j]
				job.Pending = []speculate.PendingTask{{ID: "task-of-" + j, Locations: []speculate.Location{{Node: home, Rack: state.Racks[home]}}}}
			}
			pool.Jobs = append(pool.Jobs, job)
		}
		state.Pools = []speculate.Pool{pool}
		for _, n := range []string{"slot1", "slot2", "slot3"} {
			if until, ok := busyUntil[n]; ok {
				state.Busy = append(state.Busy, speculate.BusySlot{Task: runningTask[n], Node: n, TimeLeft: until - now})
			}
		}
		j := assign(state, node, now)
		require.NotEmpty(t, j, "%s got no job", node)
		pending[j] = false
		running[j]++
		busyUntil[node] = now + taskTime
		runningTask[node] = "task-of-" + j
		out = append(out, fmt.Sprintf("%s→%s", strings.Replace(node, "slot", "Slot", 1), strings.Replace(j, "job", "Job", 1)))
		if table41.locals[j] == node {
			local++
		}
	}
	return strings.Join(out, " "), local
}

// Pre-release list scheduling (Alg. 4.2): Slot3→Job3, Slot2→Job2, Slot1→Job1, all
// node-local, under both job orders. At Slot3's turn Job1 is promised Slot1 and Job2
// Slot2 before Job3 takes Slot3, as the thesis' Figure 4.2 walks through.
func TestTable41PreReleaseList(t *testing.T) {
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	for _, order := range []speculate.JobOrder{speculate.FIFOJobs, speculate.FairJobs} {
		t.Run(order.String(), func(t *testing.T) {
			first := true
			got, local := table41Run(t, func(state speculate.FairState, node string, now time.Duration) string {
				state.Pools[0].Order = order
				p, err := placer.Place(state, node)
				require.NoError(t, err)
				require.True(t, p.Assigned)
				assert.Equal(t, fairness.NodeLocal, p.Locality)
				assert.Equal(t, "task-of-"+p.Job, p.Task)
				if first {
					first = false
					require.Len(t, p.PreAssigned, 2)
					assert.Equal(t, speculate.PreAssignment{Pool: "default", Job: "job1", Slot: speculate.BusySlot{Task: "old1", Node: "slot1", TimeLeft: 10 * sec}, Finish: 70 * sec}, p.PreAssigned[0])
					assert.Equal(t, speculate.PreAssignment{Pool: "default", Job: "job2", Slot: speculate.BusySlot{Task: "old2", Node: "slot2", TimeLeft: 5 * sec}, Finish: 65 * sec}, p.PreAssigned[1])
					assert.Equal(t, 60*sec, p.Finish)
				}
				return p.Job
			})
			assert.Equal(t, "Slot3→Job3 Slot2→Job2 Slot1→Job1", got)
			assert.Equal(t, 3, local)
		})
	}
}

// Direct scheduling (the FIFO scheduler): the free slot goes to the highest-priority job
// that has a task waiting, local or not. Slot3→Job1, Slot2→Job2, Slot1→Job3: 1/3.
func TestTable41Direct(t *testing.T) {
	got, local := table41Run(t, func(state speculate.FairState, _ string, _ time.Duration) string {
		best := ""
		bestPrio := 0
		for _, j := range state.Pools[0].Jobs {
			if len(j.Pending) > 0 && (best == "" || j.Priority > bestPrio) {
				best, bestPrio = j.ID, j.Priority
			}
		}
		return best
	})
	assert.Equal(t, "Slot3→Job1 Slot2→Job2 Slot1→Job3", got)
	assert.Equal(t, 1, local)
}

// delayModel is two-level delay scheduling as the thesis' Alg. 2.1 states it, for one
// FIFO queue, kept here as a small self-contained model (the library's own
// implementation lives in package fairness). Each job has level (0 node-local, 1
// rack-local, 2 off-switch), wait and skipped. At a heartbeat, every job that was
// skipped since the previous one has its wait grown by the time between them (lines
// 2–7); then the jobs are tried in priority order (lines 12–26): a node-local task is
// taken at once; a rack-local one once the job's level is ≥ 1 or it has waited W1; any
// task once its level is 2, or it is at level 1 and has waited W2, or at level 0 and
// has waited W1 + W2; otherwise the job is skipped.
type delayModel struct {
	w1, w2 time.Duration
	last   time.Duration
	state  map[string]*delayJob
}

type delayJob struct {
	level   int
	wait    time.Duration
	skipped bool
}

func (m *delayModel) assign(state speculate.FairState, node string, now time.Duration) string {
	if m.state == nil {
		m.state = map[string]*delayJob{}
	}
	jobs := state.Pools[0].Jobs
	for _, j := range jobs {
		js := m.state[j.ID]
		if js == nil {
			js = &delayJob{}
			m.state[j.ID] = js
		}
		if js.skipped {
			js.wait += now - m.last
			js.skipped = false
		}
	}
	m.last = now
	rack := state.Racks[node]
	for _, j := range jobs { // already in priority order
		if len(j.Pending) == 0 {
			continue
		}
		js := m.state[j.ID]
		loc := j.Pending[0].Locations[0]
		switch {
		case loc.Node == node:
			js.wait, js.level = 0, 0
			return j.ID
		case loc.Rack == rack && (js.level >= 1 || js.wait >= m.w1):
			js.wait, js.level = 0, 1
			return j.ID
		case js.level == 2 || js.level == 1 && js.wait >= m.w2 || js.level == 0 && js.wait >= m.w1+m.w2:
			js.wait, js.level = 0, 2
			return j.ID
		default:
			js.skipped = true
		}
	}
	return ""
}

// Delay scheduling: 3/3 or 1/3 depending on W1 and W2. With the thesis' W1 = 5 s, W2 =
// 20 s Job1 passes Slot2 up (it has waited 5 s < W1 + W2) and gets Slot1 later; with
// W1 = 1 s, W2 = 2 s it has waited long enough and takes Slot2 off-switch, leaving
// Slot1 to Job2.
func TestTable41DelayScheduling(t *testing.T) {
	cases := []struct {
		w1, w2 time.Duration
		want   string
		local  int
	}{
		{5 * sec, 20 * sec, "Slot3→Job3 Slot2→Job2 Slot1→Job1", 3},
		{1 * sec, 2 * sec, "Slot3→Job3 Slot2→Job1 Slot1→Job2", 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("W1=%v,W2=%v", c.w1, c.w2), func(t *testing.T) {
			m := &delayModel{w1: c.w1, w2: c.w2}
			got, local := table41Run(t, m.assign)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.local, local)
		})
	}
}
