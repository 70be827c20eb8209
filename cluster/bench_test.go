package cluster_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// BenchmarkReserveCommit is the state's bookkeeping of one start and its hand-back,
// without a placement decision: on 1,000 nodes in 20 racks, with 1,000 jobs and
// 100,000 pending tasks (each with its input on one or three nodes), each op reserves a
// pending task's request on a node, commits it (Running) and evicts it back to
// pending, all timed. The tasks are taken in a fixed shuffled order and the nodes in
// turn, so that the indexes see starts spread over jobs, nodes and racks.
func BenchmarkReserveCommit(b *testing.B) {
	for _, inputs := range []int{1, 3} {
		b.Run(fmt.Sprintf("inputs=%d", inputs), func(b *testing.B) {
			const nodes, jobs, perJob = 1000, 1000, 100
			r := rand.New(rand.NewSource(1))
			s, err := cluster.New(schema)
			if err != nil {
				b.Fatal(err)
			}
			capacity := tup(32000, 64<<30, 0, 0, 0, 0)
			for i := 0; i < nodes; i++ {
				if err := s.AddNode(cluster.NodeSpec{ID: fmt.Sprintf("n%06d", i), Rack: fmt.Sprintf("r%d", i%20), Capacity: capacity}); err != nil {
					b.Fatal(err)
				}
			}
			request := tup(1000, 2<<30, 0, 0, 0, 0)
			var tasks []*cluster.TaskInfo
			for j := 0; j < jobs; j++ {
				jid := fmt.Sprintf("j%04d", j)
				if err := s.AddJob(cluster.JobSpec{ID: jid, Submitted: time.Duration(j)}); err != nil {
					b.Fatal(err)
				}
				batch := make([]cluster.TaskSpec, perJob)
				for i := range batch {
					in := make([]string, inputs)
					for k := range in {
						in[k] = fmt.Sprintf("n%06d", r.Intn(nodes))
					}
					batch[i] = cluster.TaskSpec{ID: fmt.Sprintf("%s-t%d", jid, i), Job: jid, Request: request, Inputs: in}
				}
				if err := s.Submit(batch...); err != nil {
					b.Fatal(err)
				}
				for _, sp := range batch {
					t, _ := s.Task(sp.ID)
					tasks = append(tasks, t)
				}
			}
			r.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
			ns := make([]*cluster.NodeInfo, nodes)
			for i := range ns {
				ns[i], _ = s.Node(fmt.Sprintf("n%06d", i))
			}
			hold := stage.MustProfile(schema, stage.Stage{Duration: stage.Forever, Demand: request})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t, n := tasks[i%len(tasks)], ns[i%nodes]
				if err := s.Reserve(t, n, cluster.Reservation{Hold: hold, Allowance: resource.Tuple{}}); err != nil {
					b.Fatal(err)
				}
				if err := s.Commit(t); err != nil {
					b.Fatal(err)
				}
				if err := s.Evict(t); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
