package cluster

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

// TestPendingThroughJobRefs: FirstPending and AscendPending, which reach a job's
// pending tasks through the reference its JobInfo keeps (fairness.JobRef), answer as
// the pending index's First and Ascend by the job's ID do, on random sequences that
// start, cancel and put back tasks, remove and add nodes (which moves the pending
// tasks to new entries), and let jobs be forgotten as soon as they complete and then
// added again under the same ID (a new JobInfo). Every JobInfo ever handed out is
// asked, stale ones included.
func TestPendingThroughJobRefs(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 200
	props := gopter.NewProperties(params)
	props.Property("by reference as by ID", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		schema := resource.MustSchema(resource.CPU, resource.Memory)
		s, err := New(schema, WithRetention(Retention{}))
		if err != nil {
			return err.Error()
		}
		nodeIDs := []string{"n0", "n1", "n2", "n3"}
		addNode := func(id string) {
			_ = s.AddNode(NodeSpec{ID: id, Rack: fmt.Sprint("r", (id[1]-'0')%2), Capacity: schema.MustTuple(8000, 16<<30)})
		}
		for _, id := range nodeIDs[:3] {
			addNode(id)
		}
		var infos []*JobInfo // every JobInfo handed out
		var tasks []*TaskInfo
		seq := 0
		check := func(op int) string {
			for n := range s.Nodes() {
				for _, j := range infos {
					for _, worst := range []fairness.Level{fairness.NodeLocal, fairness.RackLocal, fairness.OffSwitch} {
						t1, l1, ok1 := s.FirstPending(j, n, worst)
						e, l2, ok2 := s.pending.First(j.spec.ID, n.spec.ID, n.spec.Rack, worst)
						if ok1 != ok2 || ok1 && (t1 != e.Owner || l1 != l2) {
							return fmt.Sprintf("op %d: job %s on %s up to %v: first %v %v, by ID %v %v", op, j.spec.ID, n.spec.ID, worst, ok1, l1, ok2, l2)
						}
						var a, b []string
						stop := r.Intn(4)
						s.AscendPending(j, n, worst, func(t *TaskInfo, l fairness.Level) bool {
							a = append(a, fmt.Sprint(t.ID(), l))
							return stop == 0 || len(a) < stop
						})
						s.pending.Ascend(j.spec.ID, n.spec.ID, n.spec.Rack, worst, func(e *fairness.PendingEntry[*TaskInfo], l fairness.Level) bool {
							b = append(b, fmt.Sprint(e.Owner.ID(), l))
							return stop == 0 || len(b) < stop
						})
						if !slices.Equal(a, b) {
							return fmt.Sprintf("op %d: job %s on %s up to %v: ascend %v, by ID %v", op, j.spec.ID, n.spec.ID, worst, a, b)
						}
					}
				}
			}
			return ""
		}
		now := time.Duration(0)
		for op := 0; op < 150; op++ {
			now += time.Millisecond
			switch k := r.Intn(10); {
			case k < 2:
				id := fmt.Sprint("j", r.Intn(3))
				if s.AddJob(JobSpec{ID: id}) == nil {
					j, _ := s.Job(id)
					infos = append(infos, j)
				}
			case k < 5:
				seq++
				spec := TaskSpec{ID: fmt.Sprint("t", seq), Job: fmt.Sprint("j", r.Intn(3)), Request: schema.MustTuple(1000, 1<<30), Submitted: now}
				for range r.Intn(3) {
					spec.Inputs = append(spec.Inputs, nodeIDs[r.Intn(len(nodeIDs))])
				}
				if s.Submit(spec) == nil {
					t, _ := s.Task(spec.ID)
					tasks = append(tasks, t)
				}
			case k < 8 && len(tasks) > 0:
				t := tasks[r.Intn(len(tasks))]
				switch t.State() {
				case Pending:
					var nodes []*NodeInfo
					for n := range s.Nodes() {
						nodes = append(nodes, n)
					}
					if len(nodes) == 0 {
						break
					}
					if r.Intn(3) == 0 {
						_ = s.Cancel(t, now)
						break
					}
					_ = s.Reserve(t, nodes[r.Intn(len(nodes))], Reservation{Start: now, Hold: t.RequestProfile(schema)})
				case Reserved:
					if r.Intn(2) == 0 {
						_ = s.Unreserve(t)
					} else {
						_ = s.Commit(t)
					}
				case Running:
					switch r.Intn(3) {
					case 0:
						_ = s.Fail(t)
					default:
						_ = s.Finish(t, now)
					}
				}
			case k < 9:
				id := nodeIDs[r.Intn(len(nodeIDs))]
				if _, ok := s.Node(id); ok {
					_, _ = s.RemoveNode(id)
				} else {
					addNode(id)
				}
			default:
				s.Advance(now)
			}
			if msg := check(op); msg != "" {
				return msg
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}
