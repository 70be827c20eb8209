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
