package fairness_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

func TestTreeLifecycle(t *testing.T) {
	tree := sampleTree(t)
	empty, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(100, 100))
	require.NoError(t, err)

	root, err := tree.Queue("")
	require.NoError(t, err)
	assert.Equal(t, 2, root.Running)
	assert.Equal(t, 5, root.Pending)
	assert.Equal(t, cpuMem.MustTuple(6, 3), root.Usage)
	assert.Equal(t, cpuMem.MustTuple(5, 8), root.Demand)

	p, err := tree.Parent(fairness.KindJob, "k")
	require.NoError(t, err)
	assert.Equal(t, "sub", p)
	p, err = tree.Parent(fairness.KindQueue, "q")
	require.NoError(t, err)
	assert.Equal(t, "", p)

	// j: usage ⟨1,2⟩, ds 0.02, weight 2 → 0.01; sub: usage ⟨5,1⟩ ds 0.05. j first.
	assert.Equal(t, []string{"j", "k"}, collect(tree))
	var kids []string
	require.NoError(t, tree.WalkChildren("q", func(id string, k fairness.Kind) bool {
		kids = append(kids, k.String()+":"+id)
		return true
	}))
	assert.Equal(t, []string{"job:j", "queue:sub"}, kids)

	require.NoError(t, tree.UpdateJob("j", fairness.Weight(0.1))) // 0.02/0.1 = 0.2 > 0.05
	assert.Equal(t, []string{"k", "j"}, collect(tree))

	// A queue at its max share is offered nothing: q's max is 0.5.
	require.NoError(t, tree.Allocate("j", cpuMem.MustTuple(50, 0)))
	assert.Empty(t, collect(tree))
	_, ok := tree.Next()
	assert.False(t, ok)
	require.NoError(t, tree.Release("j", cpuMem.MustTuple(50, 0)))
	assert.Equal(t, []string{"k", "j"}, collect(tree))

	// Changing capacity re-keys: with 20 CPUs, j's ⟨1,2⟩ is 0.05/0.1 = 0.5 and sub's
	// ⟨5,1⟩ 0.25; q's ⟨6,3⟩ is 0.3, still under its max 0.5. With 10 CPUs q would be at
	// 0.6, over its max, and offered nothing.
	require.NoError(t, tree.SetCapacity(cpuMem.MustTuple(10, 100)))
	assert.Empty(t, collect(tree))
	require.NoError(t, tree.SetCapacity(cpuMem.MustTuple(20, 100)))
	assert.Equal(t, []string{"k", "j"}, collect(tree))
	require.NoError(t, tree.UpdateJob("j", fairness.Weight(100)))
	assert.Equal(t, []string{"j", "k"}, collect(tree))

	// Changing a queue's policy re-orders its children: under FIFO, k's priority wins.
	require.NoError(t, tree.AddJob("sub", "k2", fairness.Priority(5)))
	require.NoError(t, tree.AddPending("k2", 1, resource.Tuple{}))
	require.NoError(t, tree.UpdateQueue("sub", fairness.OrderedBy(fairness.FIFO{})))
	require.NoError(t, tree.WalkChildren("sub", func(id string, _ fairness.Kind) bool {
		assert.Equal(t, "k2", id)
		return false
	}))

	// Remove everything: the tree is empty again.
	for _, j := range []string{"j", "k", "k2"} {
		require.NoError(t, tree.RemoveJob(j))
	}
	require.NoError(t, tree.RemoveQueue("sub"))
	require.NoError(t, tree.RemoveQueue("q"))
	require.NoError(t, tree.SetCapacity(cpuMem.MustTuple(100, 100)))
	assert.Equal(t, dump(t, empty), dump(t, tree))
	assert.Equal(t, 0, tree.Len())
}

func TestTreeFairMinShares(t *testing.T) {
	// The thesis's fair rule over queues, in tasks: p1 (min 4) is below its min share
	// until it runs 4 tasks, and is served first; then by running/weight.
	tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(100, 100), fairness.WithPolicy(fairness.Fair{}))
	require.NoError(t, err)
	require.NoError(t, tree.AddQueue("", "p1", fairness.MinShare(4)))
	require.NoError(t, tree.AddQueue("", "p2", fairness.Weight(3)))
	require.NoError(t, tree.AddJob("p1", "a"))
	require.NoError(t, tree.AddJob("p2", "b"))
	require.NoError(t, tree.AddPending("a", 10, resource.Tuple{}))
	require.NoError(t, tree.AddPending("b", 10, resource.Tuple{}))
	var got []string
	for range 12 {
		j, ok := tree.Next()
		require.True(t, ok)
		got = append(got, j)
		require.NoError(t, tree.Start(j, resource.Tuple{}, resource.Tuple{}))
	}
	// a×4 while p1 is below its min share; then p1's key is 4/1 and p2's running/3, so
	// b runs until 12/3 = 4 (a tie, broken by ID p1 < p2) — beyond these 12 steps.
	assert.Equal(t, []string{"a", "a", "a", "a", "b", "b", "b", "b", "b", "b", "b", "b"}, got)
}

func TestWaterFill(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name   string
		cap    float64
		claims []fairness.Claim
		want   []float64
	}{
		{"empty", 10, nil, []float64{}},
		{"equal split", 9, []fairness.Claim{{Weight: 1, Demand: inf}, {Weight: 1, Demand: inf}, {Weight: 1, Demand: inf}}, []float64{3, 3, 3}},
		{"weights", 12, []fairness.Claim{{Weight: 1, Demand: inf}, {Weight: 2, Demand: inf}, {Weight: 3, Demand: inf}}, []float64{2, 4, 6}},
		{"demand fits", 10, []fairness.Claim{{Weight: 1, Demand: 2}, {Weight: 1, Demand: 3}}, []float64{2, 3}},
		{"small demand frees capacity", 10, []fairness.Claim{{Weight: 1, Demand: 2}, {Weight: 1, Demand: 20}, {Weight: 1, Demand: 20}}, []float64{2, 4, 4}},
		{"max share", 10, []fairness.Claim{{Weight: 1, Max: 1, Demand: inf}, {Weight: 1, Demand: inf}}, []float64{1, 9}},
		// Min share: A min 6 of 10 with B weight 1 — R·1 would be 5 each; A held at 6, B 4.
		{"min share", 10, []fairness.Claim{{Weight: 1, Min: 6, Demand: inf}, {Weight: 1, Demand: inf}}, []float64{6, 4}},
		// Min share above demand: min(6, 2) = 2.
		{"min capped by demand", 10, []fairness.Claim{{Weight: 1, Min: 6, Demand: 2}, {Weight: 1, Demand: inf}}, []float64{2, 8}},
		// Reading: mins 6 + 9 = 15 > 10: scaled to 4 + 6.
		{"mins do not fit", 10, []fairness.Claim{{Weight: 1, Min: 6, Demand: inf}, {Weight: 5, Min: 9, Demand: inf}}, []float64{4, 6}},
		{"zero capacity", 0, []fairness.Claim{{Weight: 1, Demand: 3}}, []float64{0}},
		// Hadoop-style mix: pools of demand 1, 50, 50 weights 1, 1, 2 and min 10 on the
		// second: R with 1 + max(R, 10) + 2R = 40 → R = 13: 1, 13, 26.
		{"mix", 40, []fairness.Claim{{Weight: 1, Demand: 1}, {Weight: 1, Min: 10, Demand: 50}, {Weight: 2, Demand: 50}}, []float64{1, 13, 26}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := fairness.WaterFill(c.cap, c.claims)
			require.NoError(t, err)
			require.Len(t, got, len(c.want))
			for i := range got {
				assert.InDelta(t, c.want[i], got[i], 1e-9, "claim %d", i)
			}
		})
	}
}

// TestWaterFillHugeAmounts pins inputs whose sums leave the float range: min shares or
// weights summing to +Inf, a capacity at the top of the range, an amount over a weight
// past it. Once, Σ min = +Inf scaled every share to 0, and Σ weight = +Inf or a
// breakpoint at +Inf lost the weighted split.
func TestWaterFillHugeAmounts(t *testing.T) {
	inf, top := math.Inf(1), math.MaxFloat64
	for _, c := range []struct {
		name   string
		cap    float64
		claims []fairness.Claim
		want   []float64
	}{
		// Mins 1e308 + 1e308 do not fit 1: scaled down in proportion, half each.
		{"mins sum past the range", 1, []fairness.Claim{{Weight: 1, Min: 1e308, Demand: inf}, {Weight: 1, Min: 1e308, Demand: inf}}, []float64{0.5, 0.5}},
		{"mins sum past the range, largest capacity", top, []fairness.Claim{{Weight: 1, Min: top * 0.75, Demand: inf}, {Weight: 1, Min: top * 0.75, Demand: inf}, {Weight: 1, Demand: inf}}, []float64{top / 2, top / 2, 0}},
		// Mins fit; the third claim, weight 1, rises to the level top/4 of the second.
		{"mins fit the largest capacity", top, []fairness.Claim{{Weight: 1, Min: top / 2, Demand: inf}, {Weight: 1, Min: top / 4, Demand: inf}, {Weight: 1, Demand: inf}}, []float64{top / 2, top / 4, top / 4}},
		{"demands sum past the range", 1e308, []fairness.Claim{{Weight: 1, Demand: 1e308}, {Weight: 3, Demand: 1e308}}, []float64{2.5e307, 7.5e307}},
		// Weights 4:4:1 split 10 as 40/9, 40/9, 10/9; the first claim's min 3 is met.
		{"weights sum past the range", 10, []fairness.Claim{{Weight: top, Min: 3, Demand: inf}, {Weight: top, Demand: inf}, {Weight: top / 4, Demand: 4}}, []float64{40.0 / 9, 40.0 / 9, 10.0 / 9}},
		// Equal weights 0.1: the breakpoint 3e307/0.1 is past the float range.
		{"breakpoints past the range", 5.6e307, []fairness.Claim{{Weight: 0.1, Min: 1e307, Max: 3e307, Demand: 4e307}, {Weight: 0.1, Demand: inf}}, []float64{2.8e307, 2.8e307}},
		{"weights and mins past the range", 1, []fairness.Claim{{Weight: top, Min: 1e308, Demand: inf}, {Weight: top, Min: 3e308 / 2, Demand: inf}}, []float64{0.4, 0.6}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := fairness.WaterFill(c.cap, c.claims)
			require.NoError(t, err)
			require.Len(t, got, len(c.want))
			half := 0.0 // half the sum, which may not fit a float whole
			for i := range got {
				assert.InDelta(t, c.want[i], got[i], 1e-12*max(1, c.want[i]), "claim %d", i)
				half += got[i] / 2
			}
			assert.InDelta(t, c.cap/2, half, 1e-12*max(1, c.cap), "sum of %v", got)
		})
	}
}

// Tiny amounts beside a capacity at the top of the float range, where WaterFill scales
// the amounts down and subnormal ones would lose bits: the bounds hold exactly, and
// demands that fit are met exactly.
func TestWaterFillTinyAmountsBesideHugeCapacity(t *testing.T) {
	top := math.MaxFloat64
	for _, c := range []struct {
		name   string
		cap    float64
		claims []fairness.Claim
		want   []float64
	}{
		{"a subnormal demand among others", top, []fairness.Claim{{Weight: 1, Demand: 3e-320}, {Weight: 1, Demand: 1}, {Weight: 1, Demand: 1}, {Weight: 1, Demand: 1}}, []float64{3e-320, 1, 1, 1}},
		{"the smallest float", top, []fairness.Claim{{Weight: 1, Demand: 5e-324}}, []float64{5e-324}},
		{"the smallest normal float", top, []fairness.Claim{{Weight: 1, Demand: 2.2e-308}}, []float64{2.2e-308}},
		{"capped beside an unbounded claim", top, []fairness.Claim{{Weight: 1, Max: 3e-320, Demand: math.Inf(1)}, {Weight: 1, Demand: math.Inf(1)}}, []float64{3e-320, top}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := fairness.WaterFill(c.cap, c.claims)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{1}, 1},
		{[]float64{0, 0, 0}, 1},
		{[]float64{5, 5, 5, 5}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{1, 2}, 9.0 / 10},     // 3² / (2 × 5)
		{[]float64{1, 2, 3}, 36.0 / 42}, // 6² / (3 × 14)
		{[]float64{1e300, 1e300}, 1},    // no overflow
	} {
		got, err := fairness.Jain(c.x)
		require.NoError(t, err)
		assert.InDelta(t, c.want, got, 1e-12, "%v", c.x)
	}
}

func TestDelayTransitions(t *testing.T) {
	d, err := fairness.NewDelay()
	require.NoError(t, err)
	assert.False(t, d.SkipCount())
	w1, w2 := d.Waits()
	assert.Equal(t, fairness.DefaultW1, w1)
	assert.Equal(t, fairness.DefaultW2, w2)
	s1, s2 := d.Skips()
	assert.Zero(t, s1+s2)

	beat := func(at time.Duration) { require.NoError(t, d.Heartbeat(at)) }
	offer := func(job string, best fairness.Level) (fairness.Level, bool) {
		l, ok, err := d.Offer(job, best)
		require.NoError(t, err)
		return l, ok
	}
	sec := time.Second

	beat(0)
	assert.Equal(t, fairness.NodeLocal, d.Allowed("j"))
	_, ok := offer("j", fairness.OffSwitch)
	assert.False(t, ok)
	assert.Equal(t, fairness.JobWait{Skipped: true}, d.State("j"))
	beat(3 * sec) // credited 3 s
	assert.Equal(t, fairness.JobWait{Wait: 3 * sec}, d.State("j"))
	_, ok = offer("j", fairness.RackLocal) // 3 s < W1
	assert.False(t, ok)
	beat(4 * sec)
	beat(100 * sec) // not skipped between 4 s and 100 s: no credit
	assert.Equal(t, 4*sec, d.State("j").Wait)
	_, ok = offer("j", fairness.RackLocal)
	assert.False(t, ok)
	beat(6 * sec * 20) // 120 s: +20 s
	assert.Equal(t, fairness.RackLocal, d.Allowed("j"))
	l, ok := offer("j", fairness.RackLocal)
	assert.True(t, ok)
	assert.Equal(t, fairness.RackLocal, l)
	assert.Equal(t, fairness.JobWait{Level: fairness.RackLocal}, d.State("j"))
	// At level 1 the job takes rack-local at once, off-switch after W2.
	l, ok = offer("j", fairness.RackLocal)
	assert.True(t, ok)
	assert.Equal(t, fairness.RackLocal, l)
	_, ok = offer("j", fairness.OffSwitch)
	assert.False(t, ok)
	beat(140 * sec)
	assert.Equal(t, fairness.OffSwitch, d.Allowed("j"))
	l, ok = offer("j", fairness.OffSwitch)
	assert.True(t, ok)
	assert.Equal(t, fairness.OffSwitch, l)
	// At level 2, everything goes at once; a rack-local launch sets level 1 (Alg. 2.1
	// line 17), from which off-switch needs W2 again.
	l, ok = offer("j", fairness.OffSwitch)
	assert.True(t, ok)
	assert.Equal(t, fairness.OffSwitch, l)
	l, ok = offer("j", fairness.RackLocal)
	assert.True(t, ok)
	assert.Equal(t, fairness.RackLocal, l)
	assert.Equal(t, fairness.RackLocal, d.State("j").Level)
	_, ok = offer("j", fairness.OffSwitch)
	assert.False(t, ok)
	// A node-local launch resets to level 0.
	l, ok = offer("j", fairness.NodeLocal)
	assert.True(t, ok)
	assert.Equal(t, fairness.NodeLocal, l)
	assert.Equal(t, fairness.JobWait{}, d.State("j"))

	// A launch clears skipped: no credit at the next heartbeat (our Reading).
	_, ok = offer("j", fairness.OffSwitch)
	assert.False(t, ok)
	_, ok = offer("j", fairness.NodeLocal)
	assert.True(t, ok)
	beat(200 * sec)
	assert.Equal(t, fairness.JobWait{}, d.State("j"))

	// Forget drops the state, and a forgotten skip is not credited.
	_, ok = offer("k", fairness.OffSwitch)
	assert.False(t, ok)
	assert.Equal(t, 2, d.Len())
	d.Forget("k")
	d.Forget("never")
	beat(300 * sec)
	assert.Equal(t, fairness.JobWait{}, d.State("k"))
	assert.Equal(t, 1, d.Len())
}

func TestDelaySkipCount(t *testing.T) {
	d, err := fairness.NewDelay(fairness.WithSkips(2, 3))
	require.NoError(t, err)
	assert.True(t, d.SkipCount())
	d1, d2 := d.Skips()
	assert.Equal(t, [2]int64{2, 3}, [2]int64{d1, d2})
	w1, w2 := d.Waits()
	assert.Zero(t, w1+w2)
	require.NoError(t, d.Heartbeat(0))
	var got []bool
	for range 6 {
		_, ok, err := d.Offer("j", fairness.OffSwitch)
		require.NoError(t, err)
		got = append(got, ok)
	}
	// Passes up 5 offers (D1 + D2), takes the 6th, then stays at level 2.
	assert.Equal(t, []bool{false, false, false, false, false, true}, got)
	_, ok, err := d.Offer("j", fairness.OffSwitch)
	require.NoError(t, err)
	assert.True(t, ok)

	_, ok, _ = d.Offer("k", fairness.RackLocal)
	assert.False(t, ok)
	assert.Equal(t, int64(1), d.State("k").Skips)
	require.NoError(t, d.Heartbeat(time.Hour)) // time does not count
	assert.Equal(t, fairness.JobWait{Skips: 1}, d.State("k"))
	_, ok, _ = d.Offer("k", fairness.RackLocal)
	assert.False(t, ok)
	l, ok, _ := d.Offer("k", fairness.RackLocal)
	assert.True(t, ok)
	assert.Equal(t, fairness.RackLocal, l)
}

func TestPendingLocality(t *testing.T) {
	p := fairness.NewPending()
	add := func(id, job string, prio int, sub time.Duration, locs ...fairness.Location) {
		require.NoError(t, p.Add(fairness.PendingTask{ID: id, Job: job, Priority: prio, Submitted: sub, Locations: locs}))
	}
	n1 := fairness.Location{Node: "n1", Rack: "r1"}
	n2 := fairness.Location{Node: "n2", Rack: "r1"}
	n3 := fairness.Location{Node: "n3", Rack: "r2"}
	add("a", "J", 0, 5, n1, n2)
	add("b", "J", 0, 1, n3)
	add("c", "J", 1, 9, n2)
	add("d", "J", 0, 3)
	add("e", "J", 0, 4, n3, n3)
	add("f", "K", 9, 0, n1)
	add("g", "J", 0, 2, fairness.Location{Node: "n4"})

	visit := func(job, node, rack string, worst fairness.Level) []string {
		var out []string
		p.Ascend(job, node, rack, worst, func(id string, l fairness.Level) bool {
			out = append(out, id+"@"+l.String())
			return true
		})
		return out
	}
	// On n2 in r1: node-local c (prio 1) then a; d has no location; rack-local none left
	// (a is node-local); off-switch b (submitted 1), g (2), e (4).
	assert.Equal(t, []string{"c@node-local", "a@node-local", "d@node-local",
		"b@off-switch", "g@off-switch", "e@off-switch"}, visit("J", "n2", "r1", fairness.OffSwitch))
	// On n5 in r1: only d node-local; rack-local c, a; off-switch g, b, e.
	assert.Equal(t, []string{"d@node-local", "c@rack-local", "a@rack-local"}, visit("J", "n5", "r1", fairness.RackLocal))
	assert.Equal(t, []string{"d@node-local"}, visit("J", "n5", "r1", fairness.NodeLocal))
	// Unknown rack: no rack locality; the rest in task order.
	assert.Equal(t, []string{"d@node-local", "c@off-switch", "b@off-switch", "g@off-switch", "e@off-switch", "a@off-switch"},
		visit("J", "n5", "", fairness.OffSwitch))
	assert.Empty(t, visit("nope", "n1", "r1", fairness.OffSwitch))

	l, ok := p.Best("J", "n5", "r2")
	assert.True(t, ok)
	assert.Equal(t, fairness.NodeLocal, l, "d has no location: node-local anywhere")
	require.NoError(t, p.Remove("d"))
	l, _ = p.Best("J", "n5", "r2")
	assert.Equal(t, fairness.RackLocal, l)
	l, _ = p.Best("J", "n5", "r9")
	assert.Equal(t, fairness.OffSwitch, l)
	l, _ = p.Best("K", "n1", "r9")
	assert.Equal(t, fairness.NodeLocal, l)
	l, _ = p.Best("K", "n2", "r1")
	assert.Equal(t, fairness.RackLocal, l, "K's task is on n1, in n2's rack r1")
	_, ok = p.Best("nope", "n1", "r1")
	assert.False(t, ok)

	id, l, ok := p.First("J", "n9", "r2", fairness.OffSwitch)
	assert.True(t, ok)
	assert.Equal(t, "b", id)
	assert.Equal(t, fairness.RackLocal, l)

	task, ok := p.Task("a")
	require.True(t, ok)
	assert.Equal(t, []fairness.Location{n1, n2}, task.Locations)
	task.Locations[0].Node = "changed"
	again, _ := p.Task("a")
	assert.Equal(t, "n1", again.Locations[0].Node, "Task returns a copy")
	_, ok = p.Task("nope")
	assert.False(t, ok)

	for _, id := range []string{"a", "b", "c", "e", "f", "g"} {
		require.NoError(t, p.Remove(id))
	}
	assert.Equal(t, 0, p.Len())
	assert.Equal(t, 0, p.JobLen("J"))
}

func TestStrings(t *testing.T) {
	assert.Equal(t, "queue", fairness.KindQueue.String())
	assert.Equal(t, "job", fairness.KindJob.String())
	assert.Equal(t, "task", fairness.KindTask.String())
	assert.Equal(t, "Kind(9)", fairness.Kind(9).String())
	assert.Equal(t, "node-local", fairness.NodeLocal.String())
	assert.Equal(t, "rack-local", fairness.RackLocal.String())
	assert.Equal(t, "off-switch", fairness.OffSwitch.String())
	assert.Equal(t, "Level(7)", fairness.Level(7).String())
	assert.Equal(t, -1, fairness.OrderKey{1, 2}.Compare(fairness.OrderKey{1, 3}))
	assert.Equal(t, 0, fairness.OrderKey{1, 2}.Compare(fairness.OrderKey{1, 2}))
	assert.Equal(t, 1, fairness.OrderKey{2}.Compare(fairness.OrderKey{1, 9}))
}

func TestTasksOrderFIFOUnderEveryPolicy(t *testing.T) {
	for _, p := range []fairness.Policy{fairness.FIFO{}, fairness.Fair{}, fairness.DRF{}, fairness.Capacity{}} {
		es := []fairness.Entry{
			{ID: "t3", Kind: fairness.KindTask, Priority: 0, Submitted: 1, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(0, 0)},
			{ID: "t1", Kind: fairness.KindTask, Priority: 0, Submitted: 0, Share: fairness.DefaultShare(), Usage: cpuMem.MustTuple(9, 9)},
			{ID: "t2", Kind: fairness.KindTask, Priority: 2, Submitted: 5, Share: fairness.DefaultShare()},
		}
		require.NoError(t, fairness.Sort(cpuMem, p, cpuMem.MustTuple(10, 10), es))
		assert.Equal(t, []string{"t2", "t1", "t3"}, ids(es), "%T", p)
	}
}

// WalkSlots walks the jobs in Walk's order, handing back the slots given them (Slot),
// kept through updates; a job given none has −1.
func TestWalkSlotsFollowsWalk(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	tree, err := fairness.NewTree(schema, schema.MustTuple(100, 100))
	require.NoError(t, err)
	require.NoError(t, tree.AddQueue("", "q"))
	slots := map[string]int{"a": 7, "b": 0, "c": -1, "d": 3}
	for _, id := range []string{"a", "b", "c", "d"} {
		var opts []fairness.Option
		if slots[id] >= 0 {
			opts = append(opts, fairness.Slot(slots[id]))
		}
		require.NoError(t, tree.AddJob("q", id, opts...))
		require.NoError(t, tree.AddPending(id, 2, schema.MustTuple(2, 2)))
	}
	require.NoError(t, tree.Start("a", schema.MustTuple(1, 1), schema.MustTuple(10, 10)))
	require.NoError(t, tree.UpdateJob("d", fairness.Weight(3)))
	var want, got []int
	tree.Walk(func(id string) bool { want = append(want, slots[id]); return true })
	tree.WalkSlots(func(s int) bool { got = append(got, s); return true })
	assert.Equal(t, want, got)
	assert.Len(t, got, 4)
	got = got[:0]
	tree.WalkSlots(func(s int) bool { got = append(got, s); return len(got) < 2 })
	assert.Equal(t, want[:2], got, "stops when fn says so")
}

// TestFirstTaskOverMax: an entity that lets its first task over its max share is
// admitted a task of any size while it has none running, and is held to the max again
// once it has one; without the option (or with it switched off by an update) the max
// is hard.
func TestFirstTaskOverMax(t *testing.T) {
	cpu := resource.MustSchema(resource.CPU)
	for _, tc := range []struct {
		name    string
		queue   []fairness.Option // queue Q's options (DRF: dominant share of 100 cpu)
		job     []fairness.Option // job j's options
		update  []fairness.Option // then UpdateQueue("Q", update...), when set
		first   int64             // the first task's cpu
		wantErr bool              // Admit of the first task refused
	}{
		{name: "hard max refuses a task above it", queue: []fairness.Option{fairness.MaxShare(0.5)}, first: 80, wantErr: true},
		{name: "first task over the max", queue: []fairness.Option{fairness.MaxShare(0.5), fairness.FirstTaskOverMax(true)}, first: 80},
		{name: "within the max either way", queue: []fairness.Option{fairness.MaxShare(0.5)}, first: 50},
		{name: "on the job, not its queue: the queue's max still applies",
			queue: []fairness.Option{fairness.MaxShare(0.5)}, job: []fairness.Option{fairness.MaxShare(0.3), fairness.FirstTaskOverMax(true)}, first: 60, wantErr: true},
		{name: "on the job and its queue", queue: []fairness.Option{fairness.MaxShare(0.5), fairness.FirstTaskOverMax(true)},
			job: []fairness.Option{fairness.MaxShare(0.3), fairness.FirstTaskOverMax(true)}, first: 60},
		{name: "switched off by an update", queue: []fairness.Option{fairness.MaxShare(0.5), fairness.FirstTaskOverMax(true)},
			update: []fairness.Option{fairness.FirstTaskOverMax(false)}, first: 80, wantErr: true},
		{name: "an update of something else keeps it", queue: []fairness.Option{fairness.MaxShare(0.5), fairness.FirstTaskOverMax(true)},
			update: []fairness.Option{fairness.Weight(2)}, first: 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := fairness.NewTree(cpu, cpu.MustTuple(100))
			require.NoError(t, err)
			require.NoError(t, tree.AddQueue("", "Q", tc.queue...))
			require.NoError(t, tree.AddJob("Q", "j", tc.job...))
			if tc.update != nil {
				require.NoError(t, tree.UpdateQueue("Q", tc.update...))
			}
			err = tree.Admit("j", cpu.MustTuple(tc.first))
			if tc.wantErr {
				require.ErrorIs(t, err, fairness.ErrOverMax)
				return
			}
			require.NoError(t, err)
			// Running one task, the entity is held to its max again: the next task is
			// refused if it takes the share over, whatever the first took.
			require.NoError(t, tree.Allocate("j", cpu.MustTuple(tc.first)))
			require.ErrorIs(t, tree.Admit("j", cpu.MustTuple(1)), fairness.ErrOverMax)
			require.NoError(t, tree.Release("j", cpu.MustTuple(tc.first)))
			require.NoError(t, tree.Admit("j", cpu.MustTuple(tc.first)), "none running again")
		})
	}
}
