package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/stage"
)

// taken is what one TakeTouched handed: whether it started from every node, and the
// nodes with whether the state holds them.
type taken struct {
	all   bool
	nodes []string
}

func take(s *cluster.State) taken {
	var tk taken
	s.TakeTouched(func() { tk.all = true }, func(n *cluster.NodeInfo, held bool) {
		tk.nodes = append(tk.nodes, fmt.Sprintf("%s %v", n.ID(), held))
	})
	return tk
}

// TestTakeTouched: nothing is recorded before the first call, which hands every node;
// then each node changed since, once, in the order they changed, removed ones too; a
// keeper that stops asking while nodes come and go is handed every node again, and the
// list it would have had to take stays bounded.
func TestTakeTouched(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "")
	addNode(t, s, "n2", "")
	addJob(t, s, "j")
	hold := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1, 0, 0, 0, 0)})
	require.NoError(t, s.Submit(cluster.TaskSpec{ID: "t", Job: "j", Request: tup(1, 1, 0, 0, 0, 0)}))
	task, _ := s.Task("t")
	v := n1.Version()
	require.NoError(t, s.Reserve(task, n1, cluster.Reservation{Hold: hold}))
	require.NoError(t, s.Unreserve(task))
	assert.Greater(t, n1.Version(), v, "a reservation and its release are changes")

	assert.Equal(t, taken{all: true, nodes: []string{"n1 true", "n2 true"}}, take(s), "the first call hands every node")
	assert.Equal(t, taken{}, take(s))

	addNode(t, s, "n3", "")
	require.NoError(t, s.Reserve(task, n1, cluster.Reservation{Hold: hold}))
	_, err := s.RemoveNode("n2")
	require.NoError(t, err)
	assert.Equal(t, taken{nodes: []string{"n3 true", "n1 true", "n2 false"}}, take(s))

	// A keeper that stops asking while nodes come and go.
	for i := 0; i < 500; i++ {
		id := fmt.Sprintf("m%d", i)
		addNode(t, s, id, "")
		_, err := s.RemoveNode(id)
		require.NoError(t, err)
	}
	got := take(s)
	assert.True(t, got.all, "more changes than kept: every node again")
	assert.Equal(t, []string{"n1 true", "n3 true"}, got.nodes)
	assert.Equal(t, taken{}, take(s))
}

// TestNodeView: a view keeps the node as it was — timeline, task count, tasks with
// deadlines, devices — while the node changes, and is known as one.
func TestNodeView(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "r1")
	addJob(t, s, "j")
	hold := stage.MustProfile(schema, stage.Stage{Duration: time.Minute, Demand: tup(2, 3, 0, 0, 0, 0)})
	require.NoError(t, s.Submit(
		cluster.TaskSpec{ID: "a", Job: "j", Request: tup(2, 3, 0, 0, 0, 0), Deadline: time.Hour},
		cluster.TaskSpec{ID: "b", Job: "j", Request: tup(2, 3, 0, 0, 0, 0)}))
	a, _ := s.Task("a")
	b, _ := s.Task("b")
	require.NoError(t, s.Reserve(a, n, cluster.Reservation{Hold: hold}))
	view := n.View()
	assert.True(t, view.IsView())
	assert.False(t, n.IsView())
	assert.Equal(t, n.Version(), view.Version())
	assert.Equal(t, []cluster.PlacedWork{{ID: "a", Plan: hold, Deadline: time.Hour}}, view.DeadlineTasks())
	before := view.Timeline().AppendSegments(nil, 0, stage.Forever)

	require.NoError(t, s.Reserve(b, n, cluster.Reservation{Hold: hold}))
	assert.Equal(t, 2, n.NumTasks())
	assert.Equal(t, 1, view.NumTasks())
	assert.Empty(t, view.Tasks(), "a view lists no tasks")
	assert.Equal(t, before, view.Timeline().AppendSegments(nil, 0, stage.Forever))
	assert.NotEqual(t, before, n.Timeline().AppendSegments(nil, 0, stage.Forever))
	assert.Greater(t, n.Version(), view.Version())
	assert.Equal(t, "n1", view.ID())
	assert.Equal(t, "r1", view.Rack())

	// A view is not the state's: reserving on it is refused.
	require.NoError(t, s.Unreserve(b))
	assert.ErrorIs(t, s.Reserve(b, view, cluster.Reservation{Hold: hold}), cluster.ErrUnknownNode)
	tv := b.View()
	assert.Equal(t, "b", tv.ID())
	assert.ErrorIs(t, s.Reserve(tv, n, cluster.Reservation{Hold: hold}), cluster.ErrUnknownTask)
}
