package fairness_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

var cpuMem = resource.MustSchema(resource.CPU, resource.Memory)

// The DRF paper's example (Ghodsi et al. 2011, §4): cluster ⟨9 CPU, 18 GB⟩, user A's
// tasks ⟨1 CPU, 4 GB⟩ (dominant: memory, 2/9 a task), user B's ⟨3 CPU, 1 GB⟩ (dominant:
// CPU, 1/3 a task). DRF gives A 3 tasks ⟨3 CPU, 12 GB⟩ and B 2 tasks ⟨6 CPU, 2 GB⟩,
// equalising their dominant shares at 2/3.
func TestDRFPaperExample(t *testing.T) {
	capacity := cpuMem.MustTuple(9, 18)
	a, b := cpuMem.MustTuple(1, 4), cpuMem.MustTuple(3, 1)

	got, err := fairness.ProgressiveFilling(cpuMem, capacity, []fairness.User{{Task: a, Weight: 1}, {Task: b, Weight: 1}})
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, got)

	// The same through the incremental Tree: offer to Next until nobody's task fits.
	tree, err := fairness.NewTree(cpuMem, capacity)
	require.NoError(t, err)
	require.NoError(t, tree.AddJob("", "A", fairness.SubmittedAt(0)))
	require.NoError(t, tree.AddJob("", "B", fairness.SubmittedAt(1)))
	require.NoError(t, tree.AddPending("A", 100, a.Scale(100)))
	require.NoError(t, tree.AddPending("B", 100, b.Scale(100)))
	task := map[string]resource.Tuple{"A": a, "B": b}
	free := capacity
	var order []string
	for {
		job, ok := tree.Next()
		if !ok {
			break
		}
		e, err := tree.Job(job)
		require.NoError(t, err)
		if !free.Covers(task[job]) { // saturated: withdraw its demand
			require.NoError(t, tree.RemovePending(job, e.Pending, e.Demand))
			continue
		}
		free = free.Sub(task[job])
		order = append(order, job)
		require.NoError(t, tree.Start(job, task[job], task[job]))
	}
	assert.Equal(t, []string{"A", "B", "A", "B", "A"}, order)
	for job, n := range map[string]int{"A": 3, "B": 2} {
		e, err := tree.Job(job)
		require.NoError(t, err)
		assert.Equal(t, n, e.Running, job)
		assert.InDelta(t, 2.0/3, e.Usage.DominantShare(capacity), 1e-12, job)
	}
}

// Weighted DRF, hand-checked. Cluster ⟨9, 18⟩, A ⟨1, 4⟩ (dominant share 2/9 a task),
// B ⟨3, 1⟩ weight 2 (1/3 a task, weighted 1/6). A (tie at 0, next share tie, user
// order), B (0 < 2/9), B (1/6 < 2/9), A (2/9 < 1/3), B's third needs CPU 7 + 3 > 9:
// saturated; A's third fits (CPU 9, memory 14), a fourth does not. A 3, B 2.
//
// Cluster ⟨30, 18⟩, B weight 4: B's dominant share is CPU, 0.1 a task, weighted 0.025.
// A takes one task (2/9), then B runs while 0.025k < 2/9: 9 tasks (0.225). A's second
// (4/9); B's tenth needs CPU 1 + 27 + 1 + 3 = 32 > 30: saturated; A's third needs memory
// 8 + 9 + 4 = 21 > 18: saturated. A 2, B 9 — where unweighted DRF gives each about the
// same dominant share.
func TestWeightedDRF(t *testing.T) {
	capacity := cpuMem.MustTuple(9, 18)
	got, err := fairness.ProgressiveFilling(cpuMem, capacity, []fairness.User{
		{Task: cpuMem.MustTuple(1, 4), Weight: 1},
		{Task: cpuMem.MustTuple(3, 1), Weight: 2},
	})
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, got)

	capacity = cpuMem.MustTuple(30, 18)
	users := []fairness.User{
		{Task: cpuMem.MustTuple(1, 4), Weight: 1},
		{Task: cpuMem.MustTuple(3, 1), Weight: 4},
	}
	got, err = fairness.ProgressiveFilling(cpuMem, capacity, users)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 9}, got)

	// Unweighted on the same cluster: A1 (2/9), B1–B3 (0.1, 0.2, 0.3), A2 (4/9), B4, B5
	// (0.5), A3 (2/3; CPU 18, memory 17), B6 (0.6; memory 18), then B7 and A4 both need
	// memory that is gone. A 3, B 6.
	users[1].Weight = 1
	got, err = fairness.ProgressiveFilling(cpuMem, capacity, users)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 6}, got)
}

// docs/methods.md §10 / PRRL Table 4.1: one queue, Job1..Job3 with data on Slot1..Slot3
// (each its own node and rack), priority Job1 > Job2 > Job3. Slot3 asks for work first,
// then Slot2, then Slot1. FIFO's direct scheduling gets 1/3 locality; delay scheduling
// 3/3 or 1/3 depending on W1 and W2 against the gaps between the offers.
func TestTable41DelayScheduling(t *testing.T) {
	run := func(t *testing.T, opts []fairness.DelayOption, times [3]time.Duration) (map[string]string, int) {
		tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(3, 3), fairness.WithPolicy(fairness.FIFO{}))
		require.NoError(t, err)
		pending := fairness.NewPending()
		for i, job := range []string{"Job1", "Job2", "Job3"} {
			require.NoError(t, tree.AddJob("", job, fairness.Priority(3-i)))
			require.NoError(t, tree.AddPending(job, 1, cpuMem.MustTuple(1, 1)))
			slot := []string{"Slot1", "Slot2", "Slot3"}[i]
			require.NoError(t, pending.Add(fairness.PendingTask{ID: job + "/t", Job: job,
				Locations: []fairness.Location{{Node: slot, Rack: "rack-" + slot}}}))
		}
		delay, err := fairness.NewDelay(opts...)
		require.NoError(t, err)
		got, local := map[string]string{}, 0
		for i, slot := range []string{"Slot3", "Slot2", "Slot1"} {
			require.NoError(t, delay.Heartbeat(times[i]))
			var job, task string
			var level fairness.Level
			tree.Walk(func(j string) bool {
				best, ok := pending.Best(j, slot, "rack-"+slot)
				require.True(t, ok)
				l, launch, err := delay.Offer(j, best)
				require.NoError(t, err)
				if !launch {
					return true
				}
				id, lv, ok := pending.First(j, slot, "rack-"+slot, l)
				require.True(t, ok)
				job, task, level = j, id, lv
				return false
			})
			require.NotEmpty(t, job, "%s got no job", slot)
			require.NoError(t, pending.Remove(task))
			require.NoError(t, tree.Start(job, cpuMem.MustTuple(1, 1), cpuMem.MustTuple(1, 1)))
			got[slot] = job
			if level == fairness.NodeLocal {
				local++
			}
		}
		return got, local
	}
	beats := [3]time.Duration{0, 10 * time.Second, 20 * time.Second}

	direct, local := run(t, []fairness.DelayOption{fairness.WithWaits(0, 0)}, beats)
	assert.Equal(t, map[string]string{"Slot3": "Job1", "Slot2": "Job2", "Slot1": "Job3"}, direct)
	assert.Equal(t, 1, local, "direct scheduling: 1/3")

	// Defaults W1 = 5 s, W2 = 20 s: at Slot2 (t = 10 s) Job1 has waited 10 s < 25 s and
	// Slot2 is not in its rack, so it passes; Job2 is node-local there.
	delayed, local := run(t, nil, beats)
	assert.Equal(t, map[string]string{"Slot3": "Job3", "Slot2": "Job2", "Slot1": "Job1"}, delayed)
	assert.Equal(t, 3, local, "delay scheduling, long waits: 3/3")

	// W1 + W2 = 6 s ≤ 10 s: Job1 gives up on locality and takes Slot2; Job2 then takes
	// Slot1 off-switch as well.
	impatient, local := run(t, []fairness.DelayOption{fairness.WithWaits(2*time.Second, 4*time.Second)}, beats)
	assert.Equal(t, map[string]string{"Slot3": "Job3", "Slot2": "Job1", "Slot1": "Job2"}, impatient)
	assert.Equal(t, 1, local, "delay scheduling, short waits: 1/3")

	// The skip-count variant with D1 + D2 = 1: Job1 passes Slot3 (1 skip) and takes
	// Slot2; Job2 passed Slot3 once and takes Slot1.
	skips, local := run(t, []fairness.DelayOption{fairness.WithSkips(1, 0)}, beats)
	assert.Equal(t, map[string]string{"Slot3": "Job3", "Slot2": "Job1", "Slot1": "Job2"}, skips)
	assert.Equal(t, 1, local)
}

// Hierarchical DRF, hand-checked: capacity ⟨100, 100⟩; queue q1 holds a ⟨30, 0⟩ and
// b ⟨0, 10⟩, so q1's usage is ⟨30, 10⟩, dominant share 0.3; queue q2 holds c ⟨0, 25⟩,
// 0.25. Hierarchically q2 goes first (0.25 < 0.3), then inside q1 b (0.1) before a
// (0.3): c, b, a — where flat DRF over the jobs would give b, c, a. With q1's weight 2,
// q1's key is 0.15 and it goes first: b, a, c.
func TestHierarchicalDRF(t *testing.T) {
	capacity := cpuMem.MustTuple(100, 100)
	build := func(q1 ...fairness.Option) *fairness.Tree {
		tree, err := fairness.NewTree(cpuMem, capacity)
		require.NoError(t, err)
		require.NoError(t, tree.AddQueue("", "q1", q1...))
		require.NoError(t, tree.AddQueue("", "q2"))
		for _, j := range []struct {
			q, id string
			use   resource.Tuple
		}{{"q1", "a", cpuMem.MustTuple(30, 0)}, {"q1", "b", cpuMem.MustTuple(0, 10)}, {"q2", "c", cpuMem.MustTuple(0, 25)}} {
			require.NoError(t, tree.AddJob(j.q, j.id))
			require.NoError(t, tree.AddPending(j.id, 1, cpuMem.MustTuple(1, 1)))
			require.NoError(t, tree.Allocate(j.id, j.use))
		}
		return tree
	}
	assert.Equal(t, []string{"c", "b", "a"}, collect(build()))
	assert.Equal(t, []string{"b", "a", "c"}, collect(build(fairness.Weight(2))))

	flat := []fairness.Entry{
		{ID: "a", Kind: fairness.KindJob, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(30, 0)},
		{ID: "b", Kind: fairness.KindJob, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(0, 10)},
		{ID: "c", Kind: fairness.KindJob, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(0, 25)},
	}
	require.NoError(t, fairness.Sort(cpuMem, fairness.DRF{}, capacity, flat))
	assert.Equal(t, []string{"b", "c", "a"}, ids(flat))
}

// DRF ties: equal dominant shares go by the next-largest share, then submission, then ID.
func TestDRFTieBreaks(t *testing.T) {
	capacity := cpuMem.MustTuple(10, 10)
	es := []fairness.Entry{
		{ID: "x", Submitted: 1, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(5, 1)},
		{ID: "w", Submitted: 2, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(5, 3)},
		{ID: "z", Submitted: 0, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(3, 5)},
		{ID: "y", Submitted: 1, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(1, 5)},
		{ID: "v", Submitted: 1, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(5, 1)},
	}
	require.NoError(t, fairness.Sort(cpuMem, fairness.DRF{}, capacity, es))
	// All dominant 0.5. Next shares: x 0.1, v 0.1, y 0.1, z 0.3, w 0.3.
	// x, v, y tie on both shares and submission (1): by ID v, x, y. Then z (sub 0), w (sub 2).
	assert.Equal(t, []string{"v", "x", "y", "z", "w"}, ids(es))
}

// The thesis's fair rule (docs/methods.md §10), hand-checked in tasks: queues below their
// min share (min(configured, demand)) first by running/minShare, then by running/weight.
func TestFairRule(t *testing.T) {
	es := []fairness.Entry{
		// min(10, 2+1) = 3: needy, 2/3.
		{ID: "p1", Kind: fairness.KindQueue, Share: fairness.Share{Weight: 1, Min: 10}, Running: 2, Pending: 1},
		// min(4, 11) = 4: needy, 1/4 — goes first.
		{ID: "p2", Kind: fairness.KindQueue, Share: fairness.Share{Weight: 1, Min: 4}, Running: 1, Pending: 10},
		// at its min (2 of 2): not needy; 2/weight 1 = 2.
		{ID: "p3", Kind: fairness.KindQueue, Share: fairness.Share{Weight: 1, Min: 2}, Running: 2, Pending: 5},
		// no min: 3/weight 2 = 1.5.
		{ID: "p4", Kind: fairness.KindQueue, Share: fairness.Share{Weight: 2}, Running: 3, Pending: 5},
		// no min: 3/weight 2 = 1.5 as p4, submitted earlier.
		{ID: "p5", Kind: fairness.KindQueue, Submitted: -1, Share: fairness.Share{Weight: 2}, Running: 3, Pending: 1},
	}
	require.NoError(t, fairness.Sort(cpuMem, fairness.Fair{}, resource.Tuple{}, es))
	assert.Equal(t, []string{"p2", "p1", "p5", "p4", "p3"}, ids(es))
}

// FIFO: highest priority, then earliest submission, then ID.
func TestFIFORule(t *testing.T) {
	es := []fairness.Entry{
		{ID: "c", Priority: 1, Submitted: 5, Share: fairness.DefaultShare()},
		{ID: "b", Priority: 1, Submitted: 5, Share: fairness.DefaultShare()},
		{ID: "a", Priority: 0, Submitted: 0, Share: fairness.DefaultShare()},
		{ID: "d", Priority: 1, Submitted: 3, Share: fairness.DefaultShare(), Running: 99},
		{ID: "e", Priority: 2, Submitted: 9, Share: fairness.DefaultShare()},
	}
	require.NoError(t, fairness.Sort(cpuMem, fairness.FIFO{}, resource.Tuple{}, es))
	assert.Equal(t, []string{"e", "d", "b", "c", "a"}, ids(es))
}

// Capacity, hand-checked on a 100-core cluster: A guaranteed 50% (max 80%) uses 40 →
// 0.8 of its guarantee; B guaranteed 30% uses 30 → 1.0; C has no guarantee. Order A, B,
// C; inside a queue, jobs FIFO. A may grow elastically to 80 cores and no further.
func TestCapacityRule(t *testing.T) {
	cpu := resource.MustSchema(resource.CPU)
	tree, err := fairness.NewTree(cpu, cpu.MustTuple(100), fairness.WithPolicy(fairness.Capacity{}))
	require.NoError(t, err)
	require.NoError(t, tree.AddQueue("", "A", fairness.MinShare(0.5), fairness.MaxShare(0.8)))
	require.NoError(t, tree.AddQueue("", "B", fairness.MinShare(0.3)))
	require.NoError(t, tree.AddQueue("", "C"))
	for _, j := range []struct {
		q, id    string
		prio     int
		sub      time.Duration
		use      int64
		pending  int
		wantNext bool
	}{
		{"A", "a1", 0, 2, 20, 5, false}, {"A", "a2", 0, 1, 20, 5, true}, {"A", "a3", 5, 9, 0, 0, false},
		{"B", "b1", 0, 0, 30, 5, false}, {"C", "c1", 0, 0, 0, 5, false},
	} {
		require.NoError(t, tree.AddJob(j.q, j.id, fairness.Priority(j.prio), fairness.SubmittedAt(j.sub)))
		if j.pending > 0 {
			require.NoError(t, tree.AddPending(j.id, j.pending, cpu.MustTuple(int64(j.pending))))
		}
		if j.use > 0 {
			require.NoError(t, tree.Allocate(j.id, cpu.MustTuple(j.use)))
		}
	}
	// a3 has the highest priority but nothing pending: not offered. a2 was submitted
	// before a1.
	assert.Equal(t, []string{"a2", "a1", "b1", "c1"}, collect(tree))

	require.NoError(t, tree.Admit("a2", cpu.MustTuple(40)), "40+40 = 80% is within A's max")
	err = tree.Admit("a2", cpu.MustTuple(41))
	require.ErrorIs(t, err, fairness.ErrOverMax)
	assert.Contains(t, err.Error(), `queue "A"`)

	// Grow A to its maximum: it is no longer offered anything.
	require.NoError(t, tree.Allocate("a2", cpu.MustTuple(40)))
	assert.Equal(t, []string{"b1", "c1"}, collect(tree))
	require.NoError(t, tree.Release("a2", cpu.MustTuple(1)))
	assert.Equal(t, []string{"b1", "a2", "a1", "c1"}, collect(tree), "A at 79/50 = 1.58 of its guarantee, after B's 1.0")
}

func collect(tree *fairness.Tree) []string {
	var out []string
	for j := range tree.Order() {
		out = append(out, j)
	}
	return out
}

func ids(es []fairness.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}
