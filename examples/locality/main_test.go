package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The program's wiring of fairness.Delay and speculate.FairPlacer reproduces the
// thesis' Table 4.1: direct 1/3, delay 3/3 with W1 = 5 s and W2 = 20 s and 1/3 with
// small waits, pre-release list 3/3 — and each run's locality count agrees with its
// assignments.
func TestTable41(t *testing.T) {
	outs, err := outcomes()
	require.NoError(t, err)
	want := []struct {
		result string
		local  int
	}{
		{"Slot3→Job1 Slot2→Job2 Slot1→Job3", 1},
		{"Slot3→Job3 Slot2→Job2 Slot1→Job1", 3},
		{"Slot3→Job3 Slot2→Job1 Slot1→Job2", 1},
		{"Slot3→Job3 Slot2→Job2 Slot1→Job1", 3},
	}
	require.Len(t, outs, len(want))
	for i, w := range want {
		assert.Equal(t, w.result, outs[i].Result(), outs[i].Name)
		assert.Equal(t, w.local, outs[i].Local, outs[i].Name)
		jobs := map[string]bool{}
		for _, a := range outs[i].Assign {
			assert.False(t, jobs[a.Job], "%s: %s placed twice", outs[i].Name, a.Job)
			jobs[a.Job] = true
			assert.GreaterOrEqual(t, a.Start, a.FreeAt, "%s: %s starts before its slot frees", outs[i].Name, a.Job)
		}
	}
}
