package speculate_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// cm is a tuple of millicores and GiB of memory.
func cm(cpu, memGi int64) resource.Tuple { return std.MustTuple(cpu, memGi<<30) }

func newPlanner(t testing.TB, opts ...speculate.PlannerOption) *speculate.Planner {
	t.Helper()
	p, err := speculate.NewPlanner(std, opts...)
	require.NoError(t, err)
	return p
}

// Enough idle resources (step 2 → 3): s2's node is full, so it moves to the node that
// keeps the most room (n3, not n1); s1 expands in place; then recovery gives b1 back
// the CPU an earlier plan preempted.
func TestPlanIdleSuffices(t *testing.T) {
	in := speculate.PlanInput{
		Nodes: []speculate.Node{
			{ID: "n1", Capacity: cm(8000, 16), Allocated: cm(4000, 8)},
			{ID: "n2", Capacity: cm(8000, 16), Allocated: cm(7000, 15)},
			{ID: "n3", Capacity: cm(8000, 16)},
		},
		Stragglers: []speculate.Straggler{
			{Task: "s1", Node: "n1", Allocated: cm(2000, 2), Extra: cm(1000, 0)},
			{Task: "s2", Node: "n2", Allocated: cm(2000, 4), Extra: cm(2000, 1)},
		},
		NewDemand: cm(1000, 0),
		Shrunk:    []speculate.Shrunk{{Task: "b1", Node: "n1", Taken: cm(500, 0), Preempted: true}},
	}
	plan, err := newPlanner(t).Plan(in)
	require.NoError(t, err)
	assert.Equal(t, []speculate.Step{
		{Kind: speculate.Move, Task: "s2", Node: "n3", From: "n2", Amount: cm(4000, 5), Released: cm(2000, 4)},
		{Kind: speculate.Expand, Task: "s1", Node: "n1", Amount: cm(1000, 0)},
		{Kind: speculate.Restore, Task: "b1", Node: "n1", Amount: cm(500, 0)},
	}, plan.Steps)
	assert.Equal(t, cm(13000, 25), plan.Idle)
	assert.Equal(t, cm(4000, 1), plan.Need)
	assert.Equal(t, plan.Idle, plan.Available)
	assert.True(t, plan.Covered())
	assert.Empty(t, plan.Unserved)

	nodes, err := newPlanner(t).Apply(in.Nodes, plan.Steps)
	require.NoError(t, err)
	assert.Equal(t, cm(5500, 8), nodes[0].Allocated)
	assert.Equal(t, cm(5000, 11), nodes[1].Allocated)
	assert.Equal(t, cm(4000, 5), nodes[2].Allocated)
	assert.Equal(t, cm(4000, 8), in.Nodes[0].Allocated, "input unchanged")

	plan, err = newPlanner(t, speculate.WithRecovery(false)).Plan(in)
	require.NoError(t, err)
	assert.Len(t, plan.Steps, 2)

	plan, err = newPlanner(t, speculate.WithMoves(false)).Plan(in)
	require.NoError(t, err)
	assert.Equal(t, []speculate.Unserved{{Task: "s2", Node: "n2", Extra: cm(2000, 1)}}, plan.Unserved)
}

// Not enough idle CPU (step 2 → 5): reclaim every redundant task's spare CPU (r1 on the
// straggler's node first), then preempt the lowest priority task only for what is still
// missing; the cluster-wide R_M now covers R_NE, but the straggler's node is 600 m
// short, so the local top-up preempts p2 for exactly that, and s expands in place. p1
// is never touched.
func TestPlanReclaimThenPreempt(t *testing.T) {
	in := speculate.PlanInput{
		Nodes: []speculate.Node{
			{ID: "n1", Capacity: cm(8000, 16), Allocated: cm(8000, 12)},
			{ID: "n2", Capacity: cm(8000, 16), Allocated: cm(7800, 4)},
		},
		Stragglers: []speculate.Straggler{{Task: "s", Node: "n1", Allocated: cm(2000, 2), Extra: cm(1500, 0)}},
		Batch: []speculate.BatchTask{
			{Task: "r1", Node: "n1", Allocated: cm(2000, 4), Reclaimable: cm(500, 1)},
			{Task: "r2", Node: "n2", Allocated: cm(3000, 2), Reclaimable: cm(400, 0)},
			{Task: "p1", Node: "n1", Allocated: cm(3000, 4), Preemptible: cm(2000, 2), Priority: 1},
			{Task: "p2", Node: "n1", Allocated: cm(1000, 2), Preemptible: cm(1000, 1)},
		},
		Shrunk: []speculate.Shrunk{{Task: "old", Node: "n2", Taken: cm(100, 0)}},
	}
	plan, err := newPlanner(t).Plan(in)
	require.NoError(t, err)
	assert.Equal(t, []speculate.Step{
		{Kind: speculate.Reclaim, Task: "r1", Node: "n1", Amount: cm(500, 0)},
		{Kind: speculate.Reclaim, Task: "r2", Node: "n2", Amount: cm(400, 0)},
		{Kind: speculate.Preempt, Task: "p2", Node: "n1", Amount: cm(400, 0)},
		{Kind: speculate.Preempt, Task: "p2", Node: "n1", For: "s", Amount: cm(600, 0)},
		{Kind: speculate.Expand, Task: "s", Node: "n1", Amount: cm(1500, 0)},
	}, plan.Steps)
	assert.Equal(t, cm(200, 16), plan.Idle)
	assert.Equal(t, cm(1500, 0), plan.Need)
	assert.Equal(t, cm(900, 0), plan.Reclaimed)
	assert.Equal(t, cm(1000, 0), plan.Preempted)
	assert.Equal(t, cm(2100, 16), plan.Available)

	// Without the local top-up the cluster-wide steps are the same and s is unserved.
	plan, err = newPlanner(t, speculate.WithLocalTopUp(false)).Plan(in)
	require.NoError(t, err)
	assert.Len(t, plan.Steps, 3)
	assert.Equal(t, []speculate.Unserved{{Task: "s", Node: "n1", Extra: cm(1500, 0)}}, plan.Unserved)
}

// Nothing can be taken: the straggler is unserved, nothing is shrunk for it, and the
// plan reports that R_NE is not covered.
func TestPlanUnserved(t *testing.T) {
	in := speculate.PlanInput{
		Nodes:      []speculate.Node{{ID: "n1", Capacity: cm(4000, 8), Allocated: cm(4000, 8)}},
		Stragglers: []speculate.Straggler{{Task: "s", Node: "n1", Allocated: cm(1000, 1), Extra: cm(2000, 0)}},
		Batch:      []speculate.BatchTask{{Task: "b", Node: "n1", Allocated: cm(3000, 7), Preemptible: cm(500, 0)}},
	}
	plan, err := newPlanner(t).Plan(in)
	require.NoError(t, err)
	assert.False(t, plan.Covered())
	// the cluster-wide pass still preempts toward R_NE (step 7) ...
	assert.Equal(t, []speculate.Step{{Kind: speculate.Preempt, Task: "b", Node: "n1", Amount: cm(500, 0)}}, plan.Steps)
	// ... but no local top-up is attempted when the node cannot cover the deficit
	assert.Equal(t, []speculate.Unserved{{Task: "s", Node: "n1", Extra: cm(2000, 0)}}, plan.Unserved)
}

// Non-compressible dimensions are never over-committed: a straggler that needs memory
// the node does not have moves, even when CPU (compressible) is over-committed there.
func TestPlanOvercommittedCPU(t *testing.T) {
	in := speculate.PlanInput{
		Nodes: []speculate.Node{
			{ID: "hot", Capacity: cm(4000, 8), Allocated: cm(4400, 7)}, // CPU compressed by 10%
			{ID: "cold", Capacity: cm(4000, 8), Allocated: cm(0, 0)},
		},
		Stragglers: []speculate.Straggler{{Task: "s", Node: "hot", Allocated: cm(1000, 2), Extra: cm(0, 2)}},
	}
	plan, err := newPlanner(t).Plan(in)
	require.NoError(t, err)
	assert.Equal(t, cm(4000, 9), plan.Idle, "negative free CPU counts as none")
	require.Len(t, plan.Steps, 1)
	assert.Equal(t, speculate.Move, plan.Steps[0].Kind)
	assert.Equal(t, "cold", plan.Steps[0].Node)
}

func validPlanInput() speculate.PlanInput {
	return speculate.PlanInput{
		Nodes:      []speculate.Node{{ID: "n1", Capacity: cm(8000, 16), Allocated: cm(6000, 8)}, {ID: "n2", Capacity: cm(8000, 16)}},
		Stragglers: []speculate.Straggler{{Task: "s", Node: "n1", Allocated: cm(1000, 1), Extra: cm(500, 0)}},
		Batch:      []speculate.BatchTask{{Task: "b", Node: "n1", Allocated: cm(4000, 4), Reclaimable: cm(1000, 1), Preemptible: cm(1000, 1)}},
		Shrunk:     []speculate.Shrunk{{Task: "b", Node: "n1", Taken: cm(100, 0)}},
	}
}

func TestPlanErrors(t *testing.T) {
	huge := resource.Tuple{math.MaxInt64 / 2}
	cases := []struct {
		name   string
		mutate func(*speculate.PlanInput)
		err    error
	}{
		{"node empty ID", func(in *speculate.PlanInput) { in.Nodes[0].ID = "" }, speculate.ErrEmptyID},
		{"node duplicate", func(in *speculate.PlanInput) { in.Nodes[1].ID = "n1" }, speculate.ErrDuplicate},
		{"negative capacity", func(in *speculate.PlanInput) { in.Nodes[1].Capacity[0] = -1 }, resource.ErrNegative},
		{"capacity outside schema", func(in *speculate.PlanInput) { in.Nodes[1].Capacity[7] = 1 }, resource.ErrOutsideSchema},
		{"negative allocation", func(in *speculate.PlanInput) { in.Nodes[1].Allocated[1] = -1 }, resource.ErrNegative},
		{"memory over capacity", func(in *speculate.PlanInput) { in.Nodes[1].Allocated = cm(0, 17) }, speculate.ErrOverCapacity},
		{"free sum overflows", func(in *speculate.PlanInput) {
			in.Nodes[0].Capacity, in.Nodes[0].Allocated = huge, resource.Tuple{}
			in.Nodes[1].Capacity = huge.Add(huge)
			in.Stragglers, in.Batch = nil, nil
		}, speculate.ErrInvalidValue},
		{"straggler empty task", func(in *speculate.PlanInput) { in.Stragglers[0].Task = "" }, speculate.ErrEmptyID},
		{"straggler empty node", func(in *speculate.PlanInput) { in.Stragglers[0].Node = "" }, speculate.ErrEmptyID},
		{"straggler unknown node", func(in *speculate.PlanInput) { in.Stragglers[0].Node = "n9" }, speculate.ErrUnknownNode},
		{"straggler negative extra", func(in *speculate.PlanInput) { in.Stragglers[0].Extra[0] = -5 }, resource.ErrNegative},
		{"straggler negative allocation", func(in *speculate.PlanInput) { in.Stragglers[0].Allocated[0] = -5 }, resource.ErrNegative},
		{"straggler sums overflow", func(in *speculate.PlanInput) {
			in.Stragglers[0].Extra, in.Stragglers[0].Allocated = huge, huge.Add(huge)
		}, speculate.ErrInvalidValue},
		{"task in both lists", func(in *speculate.PlanInput) { in.Batch[0].Task = "s" }, speculate.ErrDuplicate},
		{"batch unknown node", func(in *speculate.PlanInput) { in.Batch[0].Node = "n9" }, speculate.ErrUnknownNode},
		{"batch negative reclaimable", func(in *speculate.PlanInput) { in.Batch[0].Reclaimable[1] = -1 }, resource.ErrNegative},
		{"batch shrinks more than it has", func(in *speculate.PlanInput) { in.Batch[0].Preemptible = cm(3500, 0) }, speculate.ErrInconsistent},
		{"tasks hold more than the node", func(in *speculate.PlanInput) { in.Batch[0].Allocated = cm(5500, 4) }, speculate.ErrInconsistent},
		{"negative new demand", func(in *speculate.PlanInput) { in.NewDemand[0] = -1 }, resource.ErrNegative},
		{"shrunk empty task", func(in *speculate.PlanInput) { in.Shrunk[0].Task = "" }, speculate.ErrEmptyID},
		{"shrunk duplicate", func(in *speculate.PlanInput) { in.Shrunk = append(in.Shrunk, in.Shrunk[0]) }, speculate.ErrDuplicate},
		{"shrunk empty node", func(in *speculate.PlanInput) { in.Shrunk[0].Node = "" }, speculate.ErrEmptyID},
		{"shrunk unknown node", func(in *speculate.PlanInput) { in.Shrunk[0].Node = "n9" }, speculate.ErrUnknownNode},
		{"shrunk negative", func(in *speculate.PlanInput) { in.Shrunk[0].Taken[0] = -1 }, resource.ErrNegative},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := validPlanInput()
			c.mutate(&in)
			before := fmt.Sprintf("%+v", in)
			plan, err := newPlanner(t).Plan(in)
			require.ErrorIs(t, err, c.err)
			assert.Empty(t, plan.Steps)
			assert.Contains(t, err.Error(), "speculate: ")
			assert.Equal(t, before, fmt.Sprintf("%+v", in), "input unchanged")
		})
	}
	_, err := newPlanner(t).Plan(validPlanInput())
	require.NoError(t, err)
	_, err = speculate.NewPlanner(nil)
	require.ErrorIs(t, err, resource.ErrSchemaMismatch)
}

func TestApplyErrors(t *testing.T) {
	nodes := []speculate.Node{{ID: "n1", Capacity: cm(1000, 2), Allocated: cm(500, 1)}, {ID: "n2", Capacity: cm(1000, 2)}}
	cases := []struct {
		name string
		step speculate.Step
		err  error
	}{
		{"unknown node", speculate.Step{Kind: speculate.Expand, Task: "t", Node: "n9", Amount: cm(1, 0)}, speculate.ErrUnknownNode},
		{"memory over capacity", speculate.Step{Kind: speculate.Restore, Task: "t", Node: "n1", Amount: cm(0, 2)}, speculate.ErrOverCapacity},
		{"below zero", speculate.Step{Kind: speculate.Preempt, Task: "t", Node: "n1", Amount: cm(600, 0)}, speculate.ErrInconsistent},
		{"move over capacity", speculate.Step{Kind: speculate.Move, Task: "t", Node: "n2", From: "n1", Amount: cm(0, 3), Released: cm(0, 1)}, speculate.ErrOverCapacity},
		{"move unknown source", speculate.Step{Kind: speculate.Move, Task: "t", Node: "n2", From: "n9", Amount: cm(0, 1), Released: cm(0, 1)}, speculate.ErrUnknownNode},
		{"negative amount", speculate.Step{Kind: speculate.Expand, Task: "t", Node: "n1", Amount: resource.Tuple{-1}}, resource.ErrNegative},
		{"bad kind", speculate.Step{Kind: 9, Task: "t", Node: "n1"}, speculate.ErrInvalidValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := newPlanner(t).Apply(nodes, []speculate.Step{c.step})
			require.ErrorIs(t, err, c.err)
			assert.Nil(t, out)
			assert.Equal(t, cm(500, 1), nodes[0].Allocated)
		})
	}
	// The message writes amounts as quantities of their dimension.
	_, err := newPlanner(t).Apply(nodes, []speculate.Step{{Kind: speculate.Restore, Task: "t", Node: "n1", Amount: cm(0, 2)}})
	assert.ErrorContains(t, err, "memory 3Gi > capacity 2Gi")
	// CPU may go over capacity (it is compressible); memory may not.
	out, err := newPlanner(t).Apply(nodes, []speculate.Step{{Kind: speculate.Expand, Task: "t", Node: "n1", Amount: cm(900, 1)}})
	require.NoError(t, err)
	assert.Equal(t, cm(1400, 2), out[0].Allocated)
}

// randomPlanInput builds 1–8 nodes (CPU, memory, GPUs), each filled by stragglers, batch
// tasks and unlisted work up to its non-compressible capacity — CPU sometimes over it,
// as compression allows — with random expansions, reclaimable and preemptible amounts,
// new demand, and tasks shrunk earlier.
func randomPlanInput(seed uint64) speculate.PlanInput {
	r := rand.New(rand.NewPCG(seed, 5))
	var in speculate.PlanInput
	task := 0
	for n := 0; n < 1+r.IntN(8); n++ {
		capa := std.MustTuple(int64(4000+r.IntN(28001)), int64(4+r.IntN(61))<<30, 0, 0, 0, int64(r.IntN(5)))
		node := speculate.Node{ID: fmt.Sprintf("n%d", n), Capacity: capa}
		left := capa
		left[0] = capa[0] * int64(100+r.IntN(25)) / 100 // CPU may be over-committed
		part := func(of resource.Tuple) resource.Tuple {
			var t resource.Tuple
			for _, d := range []int{0, 1, 5} {
				if of[d] > 0 {
					t[d] = r.Int64N(of[d]/2 + 1)
				}
			}
			return t
		}
		for k := 0; k < r.IntN(7); k++ {
			alloc := part(left.Add(left)) // up to the whole of what is left
			left = left.Sub(alloc)
			id := fmt.Sprintf("t%d", task)
			task++
			if r.IntN(3) == 0 {
				in.Stragglers = append(in.Stragglers, speculate.Straggler{Task: id, Node: node.ID, Allocated: alloc, Extra: part(capa.Scale(0.5))})
			} else {
				b := speculate.BatchTask{Task: id, Node: node.ID, Allocated: alloc, Priority: r.IntN(3)}
				if r.IntN(2) == 0 {
					b.Reclaimable = part(alloc)
				}
				if r.IntN(2) == 0 {
					b.Preemptible = part(alloc.Sub(b.Reclaimable))
				}
				in.Batch = append(in.Batch, b)
				if r.IntN(4) == 0 {
					in.Shrunk = append(in.Shrunk, speculate.Shrunk{Task: id, Node: node.ID, Taken: part(capa), Preempted: r.IntN(2) == 0})
				}
			}
			node.Allocated = node.Allocated.Add(alloc)
		}
		node.Allocated = node.Allocated.Add(part(left)) // unlisted work
		in.Nodes = append(in.Nodes, node)
	}
	if r.IntN(2) == 0 {
		in.NewDemand = std.MustTuple(int64(r.IntN(16000)), int64(r.IntN(16))<<30)
	}
	return in
}

// The properties of the plans of docs/methods.md §11, on random clusters: applying the
// steps in order (simulated here, independently of Apply) never takes a non-compressible
// dimension over capacity, nor any dimension a step adds to; the cluster-wide preemptions
// stop as soon as R_M covers R_NE — the freed amount minus the need is less than the last
// preempted task's amount on some dimension — and likewise reclaims when nothing is
// preempted; a local top-up takes no more than its straggler lacks; no task is shrunk
// beyond its Rr or Rp; every straggler is expanded, moved or reported unserved, once;
// recovery gives back at most what was taken, within R_IDLE − R_NE, and only when nothing
// was taken.
func TestPropPlan(t *testing.T) {
	planner := newPlanner(t)
	nc := std.NonCompressible()
	props := gopter.NewProperties(params())
	props.Property("plans are safe and minimal", prop.ForAll(func(seed uint64) string {
		in := randomPlanInput(seed)
		plan, err := planner.Plan(in)
		if err != nil {
			return err.Error()
		}
		alloc := map[string]resource.Tuple{}
		capa := map[string]resource.Tuple{}
		for _, n := range in.Nodes {
			alloc[n.ID], capa[n.ID] = n.Allocated, n.Capacity
		}
		batch := map[string]speculate.BatchTask{}
		for _, b := range in.Batch {
			batch[b.Task] = b
		}
		strag := map[string]speculate.Straggler{}
		for _, s := range in.Stragglers {
			strag[s.Task] = s
		}
		taken := map[string]resource.Tuple{}
		reclaimed, preempted := map[string]resource.Tuple{}, map[string]resource.Tuple{}
		var aggReclaim, aggPreempt, lastReclaim, lastPreempt resource.Tuple
		lastLocal := map[string]resource.Tuple{}
		done := map[string]int{}
		grow := func(node string, t resource.Tuple) string {
			alloc[node] = alloc[node].Add(t)
			for d := 0; d < std.Len(); d++ {
				if t[d] > 0 && alloc[node][d] > capa[node][d] {
					return fmt.Sprintf("%s over capacity on %s: %d > %d", node, std.DimName(d), alloc[node][d], capa[node][d])
				}
			}
			return ""
		}
		for i, st := range plan.Steps {
			switch st.Kind {
			case speculate.Reclaim, speculate.Preempt:
				b, ok := batch[st.Task]
				if !ok || b.Node != st.Node {
					return fmt.Sprintf("step %d shrinks unknown task %+v", i, st)
				}
				alloc[st.Node] = alloc[st.Node].Sub(st.Amount)
				taken[st.Task] = taken[st.Task].Add(st.Amount)
				if st.Kind == speculate.Reclaim {
					reclaimed[st.Task] = reclaimed[st.Task].Add(st.Amount)
					if !b.Reclaimable.Covers(reclaimed[st.Task]) {
						return fmt.Sprintf("%s reclaimed %v of %v", st.Task, reclaimed[st.Task], b.Reclaimable)
					}
				} else {
					preempted[st.Task] = preempted[st.Task].Add(st.Amount)
					if !b.Preemptible.Covers(preempted[st.Task]) {
						return fmt.Sprintf("%s preempted %v of %v", st.Task, preempted[st.Task], b.Preemptible)
					}
				}
				switch {
				case st.For != "":
					lastLocal[st.For] = st.Amount
				case st.Kind == speculate.Reclaim:
					aggReclaim, lastReclaim = aggReclaim.Add(st.Amount), st.Amount
				default:
					aggPreempt, lastPreempt = aggPreempt.Add(st.Amount), st.Amount
				}
			case speculate.Expand:
				s := strag[st.Task]
				if s.Node != st.Node || st.Amount != s.Extra {
					return fmt.Sprintf("bad expansion %+v", st)
				}
				if last, ok := lastLocal[st.Task]; ok {
					// without the last local take the straggler would not fit
					free := capa[st.Node].Sub(alloc[st.Node]).Sub(last)
					fitsWithout := true
					for d := range free {
						if s.Extra[d] > 0 && free[d] < s.Extra[d] {
							fitsWithout = false
						}
					}
					if fitsWithout {
						return fmt.Sprintf("local top-up for %s took more than needed", st.Task)
					}
				}
				if msg := grow(st.Node, st.Amount); msg != "" {
					return msg
				}
				done[st.Task]++
			case speculate.Move:
				s := strag[st.Task]
				if s.Node != st.From || st.Node == st.From || st.Amount != s.Allocated.Add(s.Extra) || st.Released != s.Allocated {
					return fmt.Sprintf("bad move %+v", st)
				}
				if msg := grow(st.Node, st.Amount); msg != "" {
					return msg
				}
				alloc[st.From] = alloc[st.From].Sub(st.Released)
				done[st.Task]++
			case speculate.Restore:
				if !plan.Reclaimed.IsZero() || !plan.Preempted.IsZero() {
					return "restore in a plan that shrinks"
				}
				if msg := grow(st.Node, st.Amount); msg != "" {
					return msg
				}
				taken[st.Task] = taken[st.Task].Sub(st.Amount)
			}
			for id, a := range alloc {
				if !capa[id].Only(nc).Covers(a.Only(nc)) {
					return fmt.Sprintf("after step %d %s is over a non-compressible capacity: %v > %v", i, id, a, capa[id])
				}
			}
		}
		for _, u := range plan.Unserved {
			done[u.Task]++
		}
		for _, s := range in.Stragglers {
			if want := map[bool]int{true: 0, false: 1}[s.Extra.IsZero()]; done[s.Task] != want {
				return fmt.Sprintf("straggler %s handled %d times", s.Task, done[s.Task])
			}
		}
		// minimality of the cluster-wide pass (steps 5–7)
		freed := plan.Idle.Add(aggReclaim).Add(aggPreempt)
		if !aggPreempt.IsZero() {
			if ok, msg := lastWasNeeded(freed, plan.Need, lastPreempt); !ok {
				return "preempted more than needed: " + msg
			}
		} else if !aggReclaim.IsZero() {
			if ok, msg := lastWasNeeded(freed, plan.Need, lastReclaim); !ok {
				return "reclaimed more than needed: " + msg
			}
		}
		short := plan.Need.Sub(plan.Idle).Max(resource.Tuple{})
		if !short.Covers(aggReclaim.Add(aggPreempt)) {
			return fmt.Sprintf("cluster-wide pass took %v for a shortfall of %v", aggReclaim.Add(aggPreempt), short)
		}
		if plan.Available != plan.Idle.Add(plan.Reclaimed).Add(plan.Preempted) {
			return "Available ≠ Idle + Reclaimed + Preempted"
		}
		// recovery
		if !plan.Restored.IsZero() {
			if !plan.Idle.Sub(plan.Need).Covers(plan.Restored) {
				return fmt.Sprintf("restored %v beyond R_IDLE − R_NE", plan.Restored)
			}
			for _, s := range in.Shrunk {
				if taken[s.Task].Add(s.Taken).HasNegative() {
					return "restored more than was taken from " + s.Task
				}
			}
		}
		// Apply agrees with the simulation
		nodes, err := planner.Apply(in.Nodes, plan.Steps)
		if err != nil {
			return err.Error()
		}
		for _, n := range nodes {
			if n.Allocated != alloc[n.ID] {
				return fmt.Sprintf("Apply: %s allocated %v, simulation %v", n.ID, n.Allocated, alloc[n.ID])
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// lastWasNeeded checks the test: freed − need < last on some dimension the last
// take contributed to, i.e. without it R_NE was not covered.
func lastWasNeeded(freed, need, last resource.Tuple) (bool, string) {
	for d := range last {
		if last[d] > 0 && freed[d]-need[d] < last[d] {
			return true, ""
		}
	}
	return false, fmt.Sprintf("freed %v, need %v, last %v", freed, need, last)
}

func TestScaleUp(t *testing.T) {
	// 40% done at t4 = 100 s, advancing 0.002/s: 300 s more, finishing at 400 s; the
	// objective allows 250 s from the start at 0, i.e. 150 s more: twice the speed.
	v := predict.StragglerVerdict{Straggler: true, V1: 0.003, V2: 0.002, Finish: 400 * sec, Runtime: 400 * sec}
	extra, err := speculate.ScaleUp(std, v, 100*sec, 0, 250*sec, cm(1500, 4))
	require.NoError(t, err)
	assert.Equal(t, cm(1500, 0), extra, "CPU doubles; memory does not set the speed")

	extra, err = speculate.ScaleUp(std, v, 100*sec, 0, 500*sec, cm(1500, 4))
	require.NoError(t, err)
	assert.True(t, extra.IsZero(), "on track")

	cases := []struct {
		name            string
		v               predict.StragglerVerdict
		now, start, slo time.Duration
		alloc           resource.Tuple
		schema          *resource.Schema
		err             error
	}{
		{"nil schema", v, 100 * sec, 0, sec, cm(1, 0), nil, resource.ErrSchemaMismatch},
		{"negative start", v, 100 * sec, -1, sec, cm(1, 0), std, speculate.ErrBadTime},
		{"now before start", v, 0, sec, sec, cm(1, 0), std, speculate.ErrBadTime},
		{"zero slo", v, 100 * sec, 0, 0, cm(1, 0), std, speculate.ErrInvalidValue},
		{"negative finish", predict.StragglerVerdict{Finish: -1}, 100 * sec, 0, sec, cm(1, 0), std, speculate.ErrBadTime},
		{"bad allocation", v, 100 * sec, 0, sec, resource.Tuple{-1}, std, resource.ErrNegative},
		{"no progress", predict.StragglerVerdict{Finish: stage.Forever}, 100 * sec, 0, 200 * sec, cm(1, 0), std, speculate.ErrCannotMeet},
		{"deadline passed", v, 100 * sec, 0, 100 * sec, cm(1, 0), std, speculate.ErrCannotMeet},
		{"needs too much", predict.StragglerVerdict{Finish: stage.Forever - 1}, 100 * sec, 0, 100*sec + 1, cm(math.MaxInt64/2, 0), std, speculate.ErrCannotMeet},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := speculate.ScaleUp(c.schema, c.v, c.now, c.start, c.slo, c.alloc)
			require.ErrorIs(t, err, c.err)
		})
	}
}
