package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/gpu"
)

// TestUpdateNodeShapesAndIndex: an update moves what the state knows of the node
// beyond its timeline — the cluster's total, the node shapes Holds and HoldsTask read,
// the free index — and holds the external load again against the new capacity.
func TestUpdateNodeShapesAndIndex(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "")
	addNode(t, s, "n2", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("a", "j", 2, 6))
	place(t, s, ts[0], n, 0)
	held, err := s.SetExternalLoad(n, 0, tup(0, 6))
	require.NoError(t, err)
	assert.Equal(t, tup(0, 4), held, "what a leaves")
	big := tup(8, 16)
	assert.False(t, s.Holds(big))
	assert.False(t, s.HoldsGPU(gpu.Whole(2)))

	grown := cluster.NodeSpec{ID: "n1", Capacity: tup(8, 20, 8, 8, 8, 1), GPU: gpu.Spec{Count: 2}}
	require.NoError(t, s.UpdateNode(grown, 0))
	assert.Equal(t, capacity.Add(grown.Capacity), s.Capacity())
	assert.True(t, s.Holds(big))
	assert.True(t, s.HoldsGPU(gpu.Whole(2)))
	assert.Equal(t, tup(0, 6), n.ExternalHeld(), "the whole load is held now")
	assert.Equal(t, tup(6, 8, 8, 8, 8, 1), n.Timeline().FreeAt(0))
	assert.Equal(t, []string{"n2", "n1"}, byFree(s, 0), "memory free: n2 10, n1 8")
	assert.Equal(t, grown, n.Spec())
	assert.Equal(t, cluster.Running, ts[0].State())

	shrunk := cluster.NodeSpec{ID: "n1", Capacity: tup(8, 8, 8, 8, 8, 1)}
	require.NoError(t, s.UpdateNode(shrunk, 0))
	assert.False(t, s.Holds(big))
	assert.False(t, s.HoldsGPU(gpu.Whole(1)))
	assert.Equal(t, tup(0, 2), n.ExternalHeld(), "what a leaves of the smaller node")
	assert.Equal(t, tup(6, 0, 8, 8, 8, 1), n.Timeline().FreeAt(0))
	assert.Equal(t, []string{"n2", "n1"}, byFree(s, 0))
}
