package speculate_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// TestPropPlanMatchesReference: on random inputs (a fresh seed every run; gopter
// prints it when the property fails) and with random planner options, Plan plans —
// or refuses — exactly as the reference planner (Planner.ReferencePlan, the planner as
// first written) does: the same Plan, nil slices where it has them, or the same error.
// The inputs are randomPlanInput's small clusters, larger clusters of equal nodes and
// amounts in coarse steps (tasks tie on every key but their IDs, nodes on their room),
// and either kind with one field broken.
func TestPropPlanMatchesReference(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("Plan plans as the reference does", prop.ForAll(func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 11))
		var opts []speculate.PlannerOption
		if r.IntN(2) == 0 {
			opts = append(opts, speculate.WithMoves(r.IntN(2) == 0), speculate.WithLocalTopUp(r.IntN(2) == 0), speculate.WithRecovery(r.IntN(2) == 0))
		}
		p, err := speculate.NewPlanner(std, opts...)
		if err != nil {
			return err.Error()
		}
		var in speculate.PlanInput
		if r.IntN(2) == 0 {
			in = randomPlanInput(seed)
		} else {
			in = tiedPlanInput(r)
		}
		if r.IntN(8) == 0 {
			breakPlanInput(r, &in)
		}
		got, gotErr := p.Plan(in)
		want, wantErr := p.ReferencePlan(in)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			return fmt.Sprintf("error %v, the reference %v", gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("plan\n%+v\nthe reference\n%+v", got, want)
		}
		return ""
	}, gen.UInt64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// tiedPlanInput is a cluster of 2–120 nodes of one size, each holding batch tasks
// and stragglers up to what it has, with amounts in steps of 250 millicores and 1 GiB:
// many tasks tie on their shortfall score and priority, many stragglers on their
// share, many nodes on the room a move leaves — the orders' last tie-breaks decide.
// Some plans have enough idle room (recovery, moves), most do not (reclaim, preempt,
// local top-ups).
func tiedPlanInput(r *rand.Rand) speculate.PlanInput {
	var in speculate.PlanInput
	capa := std.MustTuple(8000, 16<<30)
	step := func(n int) resource.Tuple { return std.MustTuple(int64(r.IntN(n))*250, int64(r.IntN(n/4+1))<<30) }
	task, most := 0, 5 // tasks a node may hold: a few (room to spare), or many
	if r.IntN(3) > 0 {
		most = 14
	}
	for n := range 2 + r.IntN(119) {
		node := speculate.Node{ID: fmt.Sprintf("n%03d", n), Capacity: capa}
		for range r.IntN(most) {
			alloc := std.MustTuple(int64(1+r.IntN(4))*500, int64(1+r.IntN(2))<<30)
			if !capa.Covers(node.Allocated.Add(alloc)) {
				break
			}
			id := fmt.Sprintf("t%04d", task)
			task++
			node.Allocated = node.Allocated.Add(alloc)
			if r.IntN(5) == 0 {
				in.Stragglers = append(in.Stragglers, speculate.Straggler{Task: id, Node: node.ID, Allocated: alloc, Extra: step(12).Only(std.Compressible())})
				continue
			}
			b := speculate.BatchTask{Task: id, Node: node.ID, Allocated: alloc, Priority: r.IntN(2)}
			b.Reclaimable = step(3).Min(alloc)
			b.Preemptible = step(3).Min(alloc.Sub(b.Reclaimable)).Only(std.Compressible())
			in.Batch = append(in.Batch, b)
			if r.IntN(6) == 0 {
				in.Shrunk = append(in.Shrunk, speculate.Shrunk{Task: id, Node: node.ID, Taken: step(4), Preempted: r.IntN(2) == 0})
			}
		}
		in.Nodes = append(in.Nodes, node)
	}
	if r.IntN(3) == 0 {
		in.NewDemand = step(40 * len(in.Nodes))
	}
	r.Shuffle(len(in.Batch), func(i, j int) { in.Batch[i], in.Batch[j] = in.Batch[j], in.Batch[i] })
	r.Shuffle(len(in.Stragglers), func(i, j int) { in.Stragglers[i], in.Stragglers[j] = in.Stragglers[j], in.Stragglers[i] })
	return in
}

// breakPlanInput breaks one field of in: an ID emptied or repeated, a task's node
// unknown, an amount negative, a batch task shrinkable beyond its allocation.
func breakPlanInput(r *rand.Rand, in *speculate.PlanInput) {
	switch r.IntN(6) {
	case 0:
		if len(in.Batch) > 1 {
			in.Batch[r.IntN(len(in.Batch))].Task = in.Batch[r.IntN(len(in.Batch))].Task
		}
	case 1:
		if len(in.Stragglers) > 0 && len(in.Batch) > 0 {
			in.Batch[r.IntN(len(in.Batch))].Task = in.Stragglers[r.IntN(len(in.Stragglers))].Task
		}
	case 2:
		if len(in.Batch) > 0 {
			in.Batch[r.IntN(len(in.Batch))].Node = "nowhere"
		}
	case 3:
		in.Nodes[r.IntN(len(in.Nodes))].ID = ""
	case 4:
		if len(in.Batch) > 0 {
			b := &in.Batch[r.IntN(len(in.Batch))]
			b.Preemptible = b.Allocated
			b.Reclaimable = std.MustTuple(1, 0)
		}
	case 5:
		if len(in.Shrunk) > 0 {
			in.Shrunk[r.IntN(len(in.Shrunk))].Taken = resource.Tuple{-1}
		}
	}
}
