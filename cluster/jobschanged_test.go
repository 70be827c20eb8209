package cluster_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
)

// JobsChanged names the job of each change to the fairness tree since a version, and
// cannot tell across a change of no single job (a queue added, the capacity) or more
// changes than it remembers.
func TestJobsChanged(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n", "r")
	require.NoError(t, s.AddQueue("", "q"))
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: "a", Queue: "q"}))
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: "b"}))
	v := s.QueuesVersion()
	ids, ok := s.JobsChanged(v, nil)
	assert.True(t, ok)
	assert.Empty(t, ids, "nothing changed")
	require.NoError(t, s.Submit(cluster.TaskSpec{ID: "a0", Job: "a", Request: tup(1, 1, 0, 0, 0, 0)}, cluster.TaskSpec{ID: "b0", Job: "b", Request: tup(1, 1, 0, 0, 0, 0)}))
	a0, _ := s.Task("a0")
	place(t, s, a0, n, 0)
	ids, ok = s.JobsChanged(v, nil)
	assert.True(t, ok)
	assert.Equal(t, []string{"a", "b", "a"}, ids, "submitted, submitted, started")
	w := s.QueuesVersion()
	require.NoError(t, s.AddQueue("", "r"))
	_, ok = s.JobsChanged(w, nil)
	assert.False(t, ok, "a queue added")
	w = s.QueuesVersion()
	addNode(t, s, "m", "r")
	_, ok = s.JobsChanged(w, nil)
	assert.False(t, ok, "the capacity changed")
	w = s.QueuesVersion()
	for i := range 17 {
		require.NoError(t, s.Submit(cluster.TaskSpec{ID: fmt.Sprint("b", i+1), Job: "b", Request: tup(1, 1, 0, 0, 0, 0)}))
	}
	_, ok = s.JobsChanged(w, nil)
	assert.False(t, ok, "17 changes: more than it remembers")
	ids, ok = s.JobsChanged(w+1, nil)
	assert.True(t, ok)
	assert.Len(t, ids, 16)
}

// Resettle keeps a subset of the walk's jobs in the walk's order as tasks of one of
// them start: the job moves within its queue, and its queue among the others.
func TestResettleFollowsStarts(t *testing.T) {
	s := newState(t, cluster.WithOrdering(fairness.DRF{}))
	nodes := []*cluster.NodeInfo{addNode(t, s, "n0", "r"), addNode(t, s, "n1", "r"), addNode(t, s, "n2", "r")}
	for _, q := range []string{"q0", "q1"} {
		require.NoError(t, s.AddQueue("", q))
	}
	for i := range 6 {
		id := fmt.Sprint("j", i)
		require.NoError(t, s.AddJob(cluster.JobSpec{ID: id, Queue: fmt.Sprint("q", i%2), Submitted: 0}))
		for k := range 3 {
			require.NoError(t, s.Submit(cluster.TaskSpec{ID: fmt.Sprint(id, "-", k), Job: id, Request: tup(1, 1, 0, 0, 0, 0)}))
		}
	}
	var order []*cluster.JobInfo
	s.Walk(func(j *cluster.JobInfo) bool { order = append(order, j); return true })
	index := func(j *cluster.JobInfo) int { return j.Index() }
	for step := range 12 {
		j := order[0]
		n := nodes[step%3]
		task, _, ok := s.FirstPending(j, n, fairness.OffSwitch)
		require.True(t, ok)
		place(t, s, task, n, 0)
		order = cluster.Resettle(s, order, 0, index)
		var want []*cluster.JobInfo
		s.Walk(func(j *cluster.JobInfo) bool { want = append(want, j); return true })
		require.Equal(t, ids(want), ids(order), "step %d", step)
		if len(order) == 0 {
			break
		}
	}
}

func ids(jobs []*cluster.JobInfo) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.ID())
	}
	return out
}
