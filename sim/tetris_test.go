package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
)

// Tetris and FGM+Tetris complete a small paper-like workload, offline and online in
// the cloud environment, every task exactly once, and are found by name.
func TestTetrisPoliciesComplete(t *testing.T) {
	for _, p := range []Policy{Tetris(), FGMTetris()} {
		got, err := PolicyByName(p.Name)
		require.NoError(t, err)
		assert.Equal(t, p.Name, got.Name)
		w, cl := smallFGM(t, 4, 0.1)
		r, err := Run(&w, &cl, p, WithTaskRecords())
		require.NoError(t, err, p.Name)
		checkConservation(t, &w, r)

		w, cl = smallFGM(t, 5, 0.1, workload.WithOnline(time.Second))
		bg, err := RandomLoad(rand.New(rand.NewPCG(5, 6)), len(cl.Nodes))
		require.NoError(t, err)
		r, err = Run(&w, &cl, p, WithBackground(bg), WithTaskRecords())
		require.NoError(t, err, p.Name)
		checkConservation(t, &w, r)
	}
}
