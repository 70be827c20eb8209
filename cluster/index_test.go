package cluster

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

func indexParams(t *testing.T) *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	seed := time.Now().UnixNano()
	p.SetSeed(seed)
	p.MinSuccessfulTests = 300
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gopter seed %d (set it in indexParams to replay)", seed)
		}
	})
	return p
}

// The index breaks ties between equal keys by the IDs' first eight bytes before the
// IDs themselves: that must order any two IDs as comparing the strings does, whatever
// their lengths and bytes (shared prefixes, zero and high bytes included).
func TestByFreeTiesInIDOrder(t *testing.T) {
	props := gopter.NewProperties(indexParams(t))
	alphabet := gen.OneConstOf(byte(0), byte(1), byte('a'), byte('b'), byte(0x7f), byte(0x80), byte(0xff))
	id := gen.SliceOfN(12, alphabet).FlatMap(func(v any) gopter.Gen {
		b := v.([]byte)
		return gen.IntRange(0, len(b)).Map(func(n int) string { return string(b[:n]) })
	}, nil)
	props.Property("ties compare as the IDs do", prop.ForAll(func(a, b, common string, key int64) bool {
		a, b = common+a, common+b
		na := &NodeInfo{spec: NodeSpec{ID: a}, key: key, idKey: idPrefix(a)}
		nb := &NodeInfo{spec: NodeSpec{ID: b}, key: key, idKey: idPrefix(b)}
		return byFreeLess(na.item(), nb.item()) == (a < b) && byFreeLess(nb.item(), na.item()) == (b < a)
	}, id, id, gen.OneConstOf("", "n", "node-000", "node-0000001"), gen.Int64Range(-2, 2)))
	props.TestingRun(t)
}

// The B-tree is brought up to date lazily (ByFree), yet it must visit the nodes in the
// order an eager index would: by each node's free amount of the index dimension at the
// clock of its latest change (or of the latest refresh, Advance), roomiest first, ties
// in ID order. The model below records those amounts as the changes happen.
func TestByFreeLazyIsEager(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	props := gopter.NewProperties(indexParams(t))
	props.Property("ByFree visits the nodes in the eager order", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		s, err := New(schema)
		if err != nil {
			return err.Error()
		}
		if err := s.AddJob(JobSpec{ID: "j"}); err != nil {
			return err.Error()
		}
		model := map[*NodeInfo]int64{}
		var nodes []*NodeInfo
		addNode := func() {
			id := fmt.Sprintf("n%d", r.Intn(1000))
			if s.AddNode(NodeSpec{ID: id, Capacity: schema.MustTuple(8000, 16<<30)}) == nil {
				n := s.nodes[id]
				nodes = append(nodes, n)
				model[n] = n.tl.FreeAt(s.clock)[s.keyDim]
			}
		}
		for range 4 {
			addNode()
		}
		refreshed := s.refreshed
		var tasks []*TaskInfo
		for step := range 60 {
			switch op := r.Intn(10); {
			case op < 4 && len(nodes) > 0: // place a task on a node
				n := nodes[r.Intn(len(nodes))]
				id := fmt.Sprintf("t%d", step)
				if err := s.Submit(TaskSpec{ID: id, Job: "j", Request: schema.MustTuple(1000, 1<<30)}); err != nil {
					return err.Error()
				}
				t := s.tasks[id]
				d := time.Duration(1+r.Intn(3000)) * time.Millisecond
				hold := stage.MustProfile(schema,
					stage.Stage{Duration: d, Demand: schema.MustTuple(int64(r.Intn(2000)), int64(1+r.Intn(4))<<30)},
					stage.Stage{Duration: d, Demand: schema.MustTuple(int64(r.Intn(2000)), int64(1+r.Intn(4))<<30)})
				if s.Reserve(t, n, Reservation{Start: s.clock, Hold: hold}) != nil {
					continue
				}
				model[n] = n.tl.FreeAt(s.clock)[s.keyDim]
				if r.Intn(4) == 0 { // rolled back
					_ = s.Unreserve(t)
				} else {
					_ = s.Commit(t)
					tasks = append(tasks, t)
				}
				model[n] = n.tl.FreeAt(s.clock)[s.keyDim]
			case op < 7 && len(tasks) > 0: // a placed task fails or finishes
				i := r.Intn(len(tasks))
				t := tasks[i]
				tasks = slices.Delete(tasks, i, i+1)
				n := t.Node()
				if t.state != Running {
					continue
				}
				var err error
				if r.Intn(2) == 0 {
					err = s.Fail(t)
				} else {
					err = s.Finish(t, s.clock)
				}
				if err != nil {
					return err.Error()
				}
				model[n] = n.tl.FreeAt(s.clock)[s.keyDim]
			case op < 8: // time passes, sometimes past a refresh
				s.Advance(s.clock + time.Duration(r.Intn(700))*time.Millisecond)
				if s.refreshed != refreshed {
					refreshed = s.refreshed
					for _, n := range nodes {
						model[n] = n.tl.FreeAt(s.clock)[s.keyDim]
					}
				}
			case op < 9 && len(nodes) > 1: // a node leaves
				i := r.Intn(len(nodes))
				n := nodes[i]
				if _, err := s.RemoveNode(n.spec.ID); err != nil {
					return err.Error()
				}
				nodes = slices.Delete(nodes, i, i+1)
				delete(model, n)
				tasks = slices.DeleteFunc(tasks, func(t *TaskInfo) bool { return t.Node() == nil })
			default:
				addNode()
			}
			if r.Intn(3) > 0 {
				continue // several changes between reads
			}
			want := slices.Clone(nodes)
			slices.SortFunc(want, func(a, b *NodeInfo) int {
				if model[a] != model[b] {
					if model[a] > model[b] {
						return -1
					}
					return 1
				}
				return strings.Compare(a.spec.ID, b.spec.ID)
			})
			var got []*NodeInfo
			s.ByFree(math.MinInt64, func(n *NodeInfo) bool {
				got = append(got, n)
				return true
			})
			if !slices.Equal(got, want) {
				return fmt.Sprintf("step %d: ByFree visits %v, the eager order is %v", step, ids(got), ids(want))
			}
			for _, n := range nodes {
				if n.key != model[n] {
					return fmt.Sprintf("step %d: node %s indexed at %d, the eager key is %d", step, n.spec.ID, n.key, model[n])
				}
			}
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

func ids(nodes []*NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.spec.ID
	}
	return out
}
