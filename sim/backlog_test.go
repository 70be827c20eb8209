package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// The backlogged Jain index looks only at the queues with pending tasks: a queue
// holding all it asks for does not count against fairness.
func TestBackloggedJainKnownAnswer(t *testing.T) {
	req := tuple(1000, gib, 0, 0)
	long := oneStage(100*time.Second, req)
	for _, tc := range []struct {
		name               string
		a, b               int // tasks of the jobs of queues a and b; the node holds 4
		jain, blJain       float64
		active, backlogged int
	}{
		{"a satisfied, b backlogged", 1, 8, 0.8, 1, 2, 1},
		{"both backlogged, equal", 4, 4, 1, 1, 2, 2},
		{"a satisfied, b holds the rest", 1, 3, 0.8, 1, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
			pa, pb := make([]stage.Profile, tc.a), make([]stage.Profile, tc.b)
			for i := range pa {
				pa[i] = long
			}
			for i := range pb {
				pb[i] = long
			}
			w := workload.Workload{Name: "two", Jobs: []workload.Job{handJob("a", "qa", 0, req, pa...), handJob("b", "qb", 0, req, pb...)}}
			r, err := Run(&w, &cl, DRF(), WithSampleEvery(10*time.Second))
			require.NoError(t, err)
			var sm *Sample
			for i := range r.Samples {
				if r.Samples[i].At == 10*time.Second {
					sm = &r.Samples[i]
				}
			}
			require.NotNil(t, sm)
			assert.Equal(t, tc.active, sm.ActiveQueues)
			assert.Equal(t, tc.backlogged, sm.Backlogged)
			assert.InDelta(t, tc.jain, sm.Jain, 1e-9)
			assert.InDelta(t, tc.blJain, sm.BackloggedJain, 1e-9)
		})
	}
}

// Invariants of the samples and the summary on a paper-like workload.
func TestBackloggedJainInvariants(t *testing.T) {
	w, cl := smallFGM(t, 3, 0.05, workload.WithOnline(workload.DefaultMeanInterarrival))
	for _, p := range []Policy{DRF(), FGM()} {
		r, err := Run(&w, &cl, p, WithSampleEvery(time.Second))
		require.NoError(t, err)
		n, total := 0, 0.0
		for _, sm := range r.Samples {
			require.LessOrEqual(t, sm.Backlogged, sm.ActiveQueues)
			require.GreaterOrEqual(t, sm.Backlogged, 0)
			if sm.Pending == 0 {
				require.Zero(t, sm.Backlogged, "nothing pending, no queue backlogged")
			}
			require.Greater(t, sm.BackloggedJain, 0.0)
			require.LessOrEqual(t, sm.BackloggedJain, 1+1e-12)
			if sm.Backlogged < 2 {
				require.Equal(t, 1.0, sm.BackloggedJain)
			} else {
				n++
				total += sm.BackloggedJain
			}
		}
		assert.Equal(t, n, r.Summary.BackloggedJainSamples, p.Name)
		if n > 0 {
			assert.InDelta(t, total/float64(n), r.Summary.BackloggedJain, 1e-9, p.Name)
		}
	}
}
