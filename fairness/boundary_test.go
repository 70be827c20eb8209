package fairness_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
)

// Cases a mutation-testing pass showed untested: changing these rules changed no
// test's outcome.

// DRF with min shares and weights (docs/methods.md §10): entries below their min share
// (min of the configured share and their dominant demand) come first, by dominant
// share over min share, then by second share over weight; the others by dominant share
// over weight, then second share over weight. Hand-checked on a cluster of ⟨100, 100⟩.
func TestDRFMinSharesAndWeights(t *testing.T) {
	capacity := cpuMem.MustTuple(100, 100)
	demand := cpuMem.MustTuple(60, 60)
	es := []fairness.Entry{
		// Needy: min(0.5, 0.8) = 0.5; 0.2/0.5 = 0.4; second 0.1/1.
		{ID: "a", Share: fairness.Share{Weight: 1, Min: 0.5}, Usage: cpuMem.MustTuple(20, 10), Demand: demand},
		// Needy: min(0.1, 0.55) = 0.1; 0.05/0.1 = 0.5.
		{ID: "b", Share: fairness.Share{Weight: 1, Min: 0.1}, Usage: cpuMem.MustTuple(5, 1), Demand: cpuMem.MustTuple(50, 0)},
		// Not needy (no min): 0.4/2 = 0.2, second 0.2/2 = 0.1.
		{ID: "c", Share: fairness.Share{Weight: 2}, Usage: cpuMem.MustTuple(40, 20)},
		// Not needy: 0.2/1 = 0.2, second 0.15/1 = 0.15.
		{ID: "d", Share: fairness.Share{Weight: 1}, Usage: cpuMem.MustTuple(20, 15)},
		// Needy as a, 0.4, but second 0.1/2 = 0.05: before a.
		{ID: "e", Share: fairness.Share{Weight: 2, Min: 0.5}, Usage: cpuMem.MustTuple(20, 10), Demand: demand},
	}
	require.NoError(t, fairness.Sort(cpuMem, fairness.DRF{}, capacity, es))
	assert.Equal(t, []string{"e", "a", "b", "c", "d"}, ids(es))
}

// Progressive filling stops a user at its task count and lets an unbounded one
// (Tasks 0) fill what is left: on the DRF paper's ⟨9, 18⟩ cluster, A wants one task of
// ⟨1, 4⟩, B as many ⟨3, 1⟩ as fit: A 1, B 2 (then 2 CPUs are left, too few for B).
func TestProgressiveFillingTaskCounts(t *testing.T) {
	got, err := fairness.ProgressiveFilling(cpuMem, cpuMem.MustTuple(9, 18), []fairness.User{
		{Task: cpuMem.MustTuple(1, 4), Weight: 1, Tasks: 1},
		{Task: cpuMem.MustTuple(3, 1), Weight: 1},
	})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, got)
}

// Release gives back a running task: the entry's running count and usage drop.
func TestTreeReleaseUndoesAllocate(t *testing.T) {
	tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(10, 10))
	require.NoError(t, err)
	require.NoError(t, tree.AddJob("", "j"))
	require.NoError(t, tree.Allocate("j", cpuMem.MustTuple(2, 3)))
	require.NoError(t, tree.Allocate("j", cpuMem.MustTuple(1, 1)))
	require.NoError(t, tree.Release("j", cpuMem.MustTuple(2, 3)))
	e, err := tree.Job("j")
	require.NoError(t, err)
	assert.Equal(t, 1, e.Running)
	assert.Equal(t, cpuMem.MustTuple(1, 1), e.Usage)
	root, err := tree.Queue("")
	require.NoError(t, err)
	assert.Equal(t, 1, root.Running)
	assert.Equal(t, cpuMem.MustTuple(1, 1), root.Usage)
}

// Resize moves a running task's usage in place: the running count stays, the usage
// of the job and its queues moves by the difference, and the order follows as after
// Allocate and Release.
func TestTreeResizeIsAllocateThenRelease(t *testing.T) {
	build := func() *fairness.Tree {
		tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(10, 10))
		require.NoError(t, err)
		require.NoError(t, tree.AddQueue("", "q"))
		for _, j := range []string{"a", "b"} {
			require.NoError(t, tree.AddJob("q", j))
			require.NoError(t, tree.AddPending(j, 2, cpuMem.MustTuple(2, 2)))
			require.NoError(t, tree.Start(j, cpuMem.MustTuple(1, 1), cpuMem.MustTuple(1, 1)))
		}
		return tree
	}
	resized, twin := build(), build()
	require.NoError(t, resized.Resize("a", cpuMem.MustTuple(1, 1), cpuMem.MustTuple(4, 0)))
	require.NoError(t, twin.Allocate("a", cpuMem.MustTuple(4, 0)))
	require.NoError(t, twin.Release("a", cpuMem.MustTuple(1, 1)))
	for _, id := range []string{"a", "b"} {
		got, err := resized.Job(id)
		require.NoError(t, err)
		want, err := twin.Job(id)
		require.NoError(t, err)
		assert.Equal(t, want, got, id)
	}
	e, err := resized.Job("a")
	require.NoError(t, err)
	assert.Equal(t, 1, e.Running)
	assert.Equal(t, cpuMem.MustTuple(4, 0), e.Usage)
	q, err := resized.Queue("q")
	require.NoError(t, err)
	assert.Equal(t, cpuMem.MustTuple(5, 1), q.Usage)
	assert.Equal(t, slices.Collect(twin.Order()), slices.Collect(resized.Order()), "b, now the poorer, comes first in both")
}

// A snapshot lists a queue's children by ID, then kind (a queue and a job may share an
// ID).
func TestSnapshotOrder(t *testing.T) {
	tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(10, 10))
	require.NoError(t, err)
	require.NoError(t, tree.AddJob("", "m"))
	require.NoError(t, tree.AddQueue("", "z"))
	require.NoError(t, tree.AddJob("", "b"))
	require.NoError(t, tree.AddQueue("", "m"))
	snap, err := tree.Snapshot("")
	require.NoError(t, err)
	var got []string
	for _, e := range snap {
		got = append(got, e.Kind.String()+":"+e.ID)
	}
	assert.Equal(t, []string{"job:b", "queue:m", "job:m", "queue:z"}, got)
}

// An error's message shows a string value as given.
func TestErrorShowsStringValue(t *testing.T) {
	p := fairness.NewPending()
	require.NoError(t, p.Add(fairness.PendingTask{ID: "t1", Job: "j"}))
	err := p.Add(fairness.PendingTask{ID: "t1", Job: "j"})
	require.ErrorIs(t, err, fairness.ErrDuplicate)
	assert.Equal(t, "fairness: task ID = t1: duplicate ID", err.Error())
	err = p.Add(fairness.PendingTask{ID: "", Job: "j"})
	assert.Equal(t, `fairness: task ID = "": empty ID`, err.Error())
}
