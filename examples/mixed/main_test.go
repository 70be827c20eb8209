package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The example's flow end to end: the detectors find stragglers, the plan serves every
// one of them within its SLO at the speed model the example assumes, Planner.Apply
// accepts the plan (no memory over capacity), the plan takes something from batch
// tasks, and recovery gives all of it back.
func TestRun(t *testing.T) {
	o, err := run(io.Discard)
	require.NoError(t, err)
	require.Positive(t, o.stragglers)
	assert.Equal(t, o.stragglers, o.served)
	assert.False(t, o.taken.IsZero())
	assert.True(t, o.owed.IsZero(), "still owed: %v", o.owed)
}
