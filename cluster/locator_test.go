package cluster_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
)

// TestLocatorAgreesWithLocality checks that a Locator, filled once for a task, answers
// as Locality for every node of the cluster: tasks whose inputs are on nodes the state
// holds, on nodes it does not (yet) hold, listed twice, in racks named or not ("");
// nodes removed and added again in another rack between submission and the question.
func TestLocatorAgreesWithLocality(t *testing.T) {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 60
	props := gopter.NewProperties(p)
	props.Property("Locator.Level equals Locality", prop.ForAll(func(seed uint64) string {
		rng := rand.New(rand.NewPCG(seed, 7))
		s, err := cluster.New(schema)
		require.NoError(t, err)
		racks := []string{"", "r0", "r1", "ŕack-ü"}
		ids := []string{"n0", "n1", "n2", "nœud-3", "n4", "a-very-long-node-identifier-" + fmt.Sprint(seed)}
		present := map[string]bool{}
		for _, id := range ids {
			if rng.IntN(3) > 0 {
				require.NoError(t, s.AddNode(cluster.NodeSpec{ID: id, Rack: racks[rng.IntN(len(racks))], Capacity: capacity}))
				present[id] = true
			}
		}
		require.NoError(t, s.AddJob(cluster.JobSpec{ID: "j"}))
		var tasks []*cluster.TaskInfo
		for i := range 20 {
			spec := task(fmt.Sprint("t", i), "j", 1, 1)
			for range rng.IntN(4) {
				spec.Inputs = append(spec.Inputs, ids[rng.IntN(len(ids))])
			}
			require.NoError(t, s.Submit(spec))
			tk, _ := s.Task(spec.ID)
			tasks = append(tasks, tk)
		}
		for range 6 {
			id := ids[rng.IntN(len(ids))]
			if present[id] {
				_, err := s.RemoveNode(id)
				require.NoError(t, err)
				delete(present, id)
			} else {
				require.NoError(t, s.AddNode(cluster.NodeSpec{ID: id, Rack: racks[rng.IntN(len(racks))], Capacity: capacity}))
				present[id] = true
			}
		}
		var l cluster.Locator
		for _, tk := range tasks {
			s.Locate(&l, tk)
			for id := range present {
				n, _ := s.Node(id)
				if got, want := l.Level(n), s.Locality(tk, n); got != want {
					return fmt.Sprintf("task %s inputs %v on node %s (rack %q): Locator %v, Locality %v", tk.ID(), tk.Inputs(), id, n.Rack(), got, want)
				}
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// TestBestLocalityAgreesWithScan checks the pending index's answer to "the best
// locality of a job's pending tasks on a node" (BestLocality, from the index's node
// and rack tables) against a scan of the job's pending tasks (EachPending, Locality),
// for every job and node, as tasks arrive, are cancelled and start: the clock rule's
// heartbeat passes jobs over on BestLocality's word alone.
func TestBestLocalityAgreesWithScan(t *testing.T) {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 100
	props := gopter.NewProperties(p)
	props.Property("BestLocality equals the scan", prop.ForAll(func(seed uint64) string {
		rng := rand.New(rand.NewPCG(seed, 11))
		s, err := cluster.New(schema)
		if err != nil {
			return err.Error()
		}
		racks := []string{"", "r0", "r1"}
		var nodes []*cluster.NodeInfo
		for i := range 6 {
			spec := cluster.NodeSpec{ID: fmt.Sprint("n", i), Rack: racks[rng.IntN(len(racks))], Capacity: capacity}
			if err := s.AddNode(spec); err != nil {
				return err.Error()
			}
			n, _ := s.Node(spec.ID)
			nodes = append(nodes, n)
		}
		var jobs []*cluster.JobInfo
		for i := range 4 {
			if err := s.AddJob(cluster.JobSpec{ID: fmt.Sprint("j", i)}); err != nil {
				return err.Error()
			}
			j, _ := s.Job(fmt.Sprint("j", i))
			jobs = append(jobs, j)
		}
		var pending []*cluster.TaskInfo
		for step := range 80 {
			switch op := rng.IntN(4); {
			case op < 2 || len(pending) == 0:
				spec := task(fmt.Sprint("t", step), jobs[rng.IntN(len(jobs))].ID(), 1, 1)
				for range rng.IntN(4) {
					spec.Inputs = append(spec.Inputs, nodes[rng.IntN(len(nodes))].ID())
				}
				if err := s.Submit(spec); err != nil {
					return err.Error()
				}
				tk, _ := s.Task(spec.ID)
				pending = append(pending, tk)
			case op == 2:
				k := rng.IntN(len(pending))
				if err := s.Cancel(pending[k], 0); err != nil {
					return err.Error()
				}
				pending = append(pending[:k], pending[k+1:]...)
			default:
				k := rng.IntN(len(pending))
				tk := pending[k]
				if err := s.Reserve(tk, nodes[rng.IntN(len(nodes))], held(tk, 0)); err != nil {
					continue // no room there: it stays pending
				}
				if err := s.Commit(tk); err != nil {
					return err.Error()
				}
				pending = append(pending[:k], pending[k+1:]...)
			}
			for _, j := range jobs {
				for _, n := range nodes {
					want, wantOK := fairness.OffSwitch, false
					s.EachPending(j, func(tk *cluster.TaskInfo) bool {
						want, wantOK = min(want, s.Locality(tk, n)), true
						return true
					})
					got, ok := s.BestLocality(j, n)
					if ok != wantOK || (ok && got != want) {
						return fmt.Sprintf("step %d, job %s, node %s: index %v (%v), scan %v (%v)", step, j.ID(), n.ID(), got, ok, want, wantOK)
					}
				}
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}
