package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/speculate"
)

// The simulation is deterministic (same seed, same result), finishes every job, and
// counts backups consistently: none without a speculator, never more won than
// launched.
func TestSimulate(t *testing.T) {
	cl, err := workload.ThesisCluster()
	require.NoError(t, err)
	late, err := speculate.NewLATE()
	require.NoError(t, err)
	prrl, err := speculate.NewPRRL()
	require.NoError(t, err)
	for _, e := range []experiment{experiments[0], experiments[3]} {
		for _, p := range []policy{{"none", nil, false}, {"LATE", late, false}, {"PRRL", prrl, true}} {
			for _, m := range []model{{onsetMax: 0.6}, {onsetMax: 0}} {
				a, err := simulate(&cl, e.sc, m, p.spec, p.passBusy, 7)
				require.NoError(t, err)
				b, err := simulate(&cl, e.sc, m, p.spec, p.passBusy, 7)
				require.NoError(t, err)
				assert.Equal(t, a, b, "%s %s: not deterministic", e.sc.name, p.name)
				require.Len(t, a.jobDone, len(e.sc.jobs))
				var last float64
				for _, d := range a.jobDone {
					assert.Positive(t, d)
					last = max(last, d.Seconds())
				}
				assert.Equal(t, last, a.makespan.Seconds())
				assert.LessOrEqual(t, a.won, a.launched)
				if p.spec == nil {
					assert.Zero(t, a.launched)
					assert.Zero(t, a.backupTime)
				}
			}
		}
	}
}
