package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// resizeCluster is two nodes of cpu 8, memory 8 and two GPUs each, one job, and
// running task "run" (cpu 2, memory 2, one whole GPU, held until it ends) on n1, at
// clock 1 s.
func resizeCluster(t *testing.T) (*cluster.State, *cluster.TaskInfo, *cluster.NodeInfo, *cluster.NodeInfo) {
	t.Helper()
	s, err := cluster.New(schema)
	require.NoError(t, err)
	for _, id := range []string{"n1", "n2"} {
		require.NoError(t, s.AddNode(cluster.NodeSpec{ID: id, Capacity: tup(8, 8, 8, 8, 8, 0), GPU: gpu.Spec{Count: 2}}))
	}
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: "j"}))
	require.NoError(t, s.Submit(cluster.TaskSpec{ID: "run", Job: "j", Request: tup(2, 2, 0, 0, 0, 0), GPU: gpu.Demand{Count: 1, Milli: 1000}}))
	tk, _ := s.Task("run")
	n1, _ := s.Node("n1")
	n2, _ := s.Node("n2")
	require.NoError(t, s.Reserve(tk, n1, cluster.Reservation{Start: 0, Hold: tk.RequestProfile(schema)}))
	require.NoError(t, s.Commit(tk))
	s.Advance(time.Second)
	return s, tk, n1, n2
}

// forever is demand held from the clock until the task ends.
func forever(t *testing.T, cpu, mem int64) stage.Profile {
	t.Helper()
	p, err := stage.Constant(schema, tup(cpu, mem, 0, 0, 0, 0), stage.Forever)
	require.NoError(t, err)
	return p
}

// gpusFree is how much of each of node n's devices is free.
func gpusFree(n *cluster.NodeInfo) []int64 {
	d := n.Devices()
	out := make([]int64, d.Len())
	for i := range out {
		out[i] = d.Free(i)
	}
	return out
}

// TestResizeInPlace: a grow and a shrink are seen at once by the timeline and
// fairness; a revert restores the old reservation and a commit keeps the new one,
// which the task then gives back when it finishes.
func TestResizeInPlace(t *testing.T) {
	s, tk, n1, _ := resizeCluster(t)
	free := func() (int64, int64) { f := n1.Timeline().FreeAt(time.Hour); return f[0], f[1] }
	usage := func() int64 { e, err := s.JobEntry("j"); require.NoError(t, err); return e.Usage[0] }

	require.NoError(t, s.Resize(tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 6, 3)}))
	kind, on := tk.Change()
	assert.Equal(t, cluster.Resizing, kind)
	assert.Equal(t, n1, on)
	c, m := free()
	assert.Equal(t, [2]int64{2, 5}, [2]int64{c, m}, "the grown reservation holds cpu 6, memory 3")
	assert.Equal(t, int64(6), usage())

	require.NoError(t, s.RevertChange(tk))
	c, m = free()
	assert.Equal(t, [2]int64{6, 6}, [2]int64{c, m}, "reverted: the old reservation is back")
	assert.Equal(t, int64(2), usage())
	kind, _ = tk.Change()
	assert.Equal(t, cluster.NoChange, kind)

	require.NoError(t, s.Resize(tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 1, 1)}))
	require.NoError(t, s.CommitChange(tk))
	c, m = free()
	assert.Equal(t, [2]int64{7, 7}, [2]int64{c, m}, "shrunk in place")
	assert.Equal(t, int64(1), usage())
	assert.Equal(t, time.Duration(0), tk.Start(), "the task's start does not change")
	assert.Equal(t, time.Second, tk.PlanStart(), "its plan is the resize's, from the clock")
	assert.Equal(t, []int64{0, 1000}, gpusFree(n1), "it keeps its device")

	require.NoError(t, s.Finish(tk, 2*time.Second))
	c, m = free()
	assert.Equal(t, [2]int64{8, 8}, [2]int64{c, m})
	assert.Equal(t, int64(0), usage())
	assert.Equal(t, []int64{1000, 1000}, gpusFree(n1))
}

// TestMigrate: a move holds both nodes until it is committed (the task, its devices
// and its usage go to the new node) or reverted (the new node is as it was).
func TestMigrate(t *testing.T) {
	s, tk, n1, n2 := resizeCluster(t)
	cpu := func(n *cluster.NodeInfo) int64 { return n.Timeline().FreeAt(time.Hour)[0] }
	running := func() int { e, err := s.JobEntry("j"); require.NoError(t, err); return e.Running }

	require.NoError(t, s.Migrate(tk, n2, cluster.Reservation{Start: time.Second, Hold: forever(t, 3, 2)}))
	assert.Equal(t, int64(6), cpu(n1), "the old node still holds the task")
	assert.Equal(t, int64(5), cpu(n2), "the new node holds the move")
	assert.Equal(t, []int64{0, 1000}, gpusFree(n1))
	assert.Equal(t, []int64{0, 1000}, gpusFree(n2), "a device is held on the new node too")
	assert.Equal(t, 2, running(), "fairness counts both, as for a backup")

	require.NoError(t, s.RevertChange(tk))
	assert.Equal(t, int64(8), cpu(n2))
	assert.Equal(t, []int64{1000, 1000}, gpusFree(n2))
	assert.Equal(t, 1, running())
	assert.Equal(t, n1, tk.Node())

	require.NoError(t, s.Migrate(tk, n2, cluster.Reservation{Start: time.Second, Hold: forever(t, 3, 2), Devices: gpu.Allocation{Devices: []int{1}, Milli: 1000}}))
	require.NoError(t, s.CommitChange(tk))
	assert.Equal(t, n2, tk.Node())
	assert.Equal(t, int64(8), cpu(n1))
	assert.Equal(t, int64(5), cpu(n2))
	assert.Equal(t, []int64{1000, 1000}, gpusFree(n1))
	assert.Equal(t, []int64{1000, 0}, gpusFree(n2), "the devices the move chose")
	assert.Empty(t, n1.Tasks())
	assert.Equal(t, []*cluster.TaskInfo{tk}, n2.Tasks())
	assert.Equal(t, 1, running())
	assert.Equal(t, int64(3), tk.Usage()[0])
}

// TestMoveTargetLeaves: a node that leaves takes the moves held to it back; a moving
// task whose own node leaves is pending again, its move dropped.
func TestMoveTargetLeaves(t *testing.T) {
	s, tk, n1, n2 := resizeCluster(t)
	require.NoError(t, s.Migrate(tk, n2, cluster.Reservation{Start: time.Second, Hold: forever(t, 3, 2)}))
	ids, err := s.RemoveNode("n2")
	require.NoError(t, err)
	assert.Empty(t, ids, "the moving task stays where it runs")
	kind, _ := tk.Change()
	assert.Equal(t, cluster.NoChange, kind)
	assert.Equal(t, cluster.Running, tk.State())
	assert.Equal(t, n1, tk.Node())

	require.NoError(t, s.AddNode(cluster.NodeSpec{ID: "n3", Capacity: tup(8, 8, 8, 8, 8, 0), GPU: gpu.Spec{Count: 2}}))
	n3, _ := s.Node("n3")
	require.NoError(t, s.Migrate(tk, n3, cluster.Reservation{Start: time.Second, Hold: forever(t, 3, 2)}))
	ids, err = s.RemoveNode("n1")
	require.NoError(t, err)
	assert.Equal(t, []string{"run"}, ids)
	assert.Equal(t, cluster.Pending, tk.State())
	assert.Equal(t, int64(8), n3.Timeline().FreeAt(time.Hour)[0], "the move's reservation went with it")
	assert.Equal(t, []int64{1000, 1000}, gpusFree(n3))
	e, err := s.JobEntry("j")
	require.NoError(t, err)
	assert.Equal(t, 0, e.Running)
	assert.True(t, e.Usage.IsZero())
}

// TestChangeRefusals: every refused resize, move, commit and revert says why, names
// the task, and changes nothing.
func TestChangeRefusals(t *testing.T) {
	big, err := stage.Constant(schema, tup(9, 1, 0, 0, 0, 0), stage.Forever)
	require.NoError(t, err)
	tooMuchMemory, err := stage.Constant(schema, tup(1, 7, 0, 0, 0, 0), stage.Forever)
	require.NoError(t, err)
	small := cluster.Reservation{Start: time.Second, Hold: forever(t, 1, 1)}
	type env struct {
		s      *cluster.State
		tk     *cluster.TaskInfo
		n1, n2 *cluster.NodeInfo
	}
	resize := func(e env) { require.NoError(t, e.s.Resize(e.tk, small)) }
	for _, tc := range []struct {
		name  string
		setup func(e env) // before the refused call
		do    func(e env) error
		want  error
		who   string // what the error names
	}{
		{"resize a pending task", func(e env) {
			require.NoError(t, e.s.Submit(cluster.TaskSpec{ID: "p", Job: "j", Request: tup(1, 1, 0, 0, 0, 0)}))
		}, func(e env) error {
			p, _ := e.s.Task("p")
			return e.s.Resize(p, small)
		}, cluster.ErrState, `"p"`},
		{"resize a task of another state", nil, func(e env) error {
			_, ot, _, _ := resizeCluster(t) // the same task, of another state
			return e.s.Resize(ot, small)
		}, cluster.ErrUnknownTask, "task"},
		{"resize twice", resize, func(e env) error {
			return e.s.Resize(e.tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 3, 1)})
		}, cluster.ErrState, `"run"`},
		{"move while resizing", resize, func(e env) error {
			return e.s.Migrate(e.tk, e.n2, small)
		}, cluster.ErrState, `"run"`},
		{"resize a backed-up task", func(e env) {
			_, err := e.s.ReserveBackup(e.tk, e.n2, small)
			require.NoError(t, err)
		}, func(e env) error { return e.s.Resize(e.tk, small) }, cluster.ErrState, `"run"`},
		{"start before the clock", nil, func(e env) error {
			return e.s.Resize(e.tk, cluster.Reservation{Start: 0, Hold: forever(t, 1, 1)})
		}, cluster.ErrInvalid, `"run"`},
		{"start after the clock", nil, func(e env) error {
			return e.s.Migrate(e.tk, e.n2, cluster.Reservation{Start: 2 * time.Second, Hold: forever(t, 1, 1)})
		}, cluster.ErrInvalid, `"run"`},
		{"empty profile", nil, func(e env) error {
			return e.s.Resize(e.tk, cluster.Reservation{Start: time.Second})
		}, cluster.ErrInvalid, `"run"`},
		{"devices for a resize", nil, func(e env) error {
			return e.s.Resize(e.tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 1, 1), Devices: gpu.Allocation{Devices: []int{1}, Milli: 1000}})
		}, cluster.ErrInvalid, `"run"`},
		{"compressing memory", nil, func(e env) error {
			return e.s.Resize(e.tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 1, 1), Allowance: tup(0, 1, 0, 0, 0, 0)})
		}, resource.ErrNotCompressible, `"run"`},
		{"grown past the node", nil, func(e env) error {
			return e.s.Resize(e.tk, cluster.Reservation{Start: time.Second, Hold: big})
		}, stage.ErrNoRoom, `"run"`},
		{"moved where memory is short", func(e env) {
			require.NoError(t, e.s.Submit(cluster.TaskSpec{ID: "o", Job: "j", Request: tup(1, 2, 0, 0, 0, 0)}))
			o, _ := e.s.Task("o")
			require.NoError(t, e.s.Reserve(o, e.n2, cluster.Reservation{Start: time.Second, Hold: o.RequestProfile(schema)}))
			require.NoError(t, e.s.Commit(o))
		}, func(e env) error {
			return e.s.Migrate(e.tk, e.n2, cluster.Reservation{Start: time.Second, Hold: tooMuchMemory})
		}, stage.ErrNoRoom, `"run"`},
		{"moved to its own node", nil, func(e env) error {
			return e.s.Migrate(e.tk, e.n1, small)
		}, cluster.ErrInvalid, `"run"`},
		{"moved to a removed node", func(e env) {
			_, err := e.s.RemoveNode("n2")
			require.NoError(t, err)
		}, func(e env) error { return e.s.Migrate(e.tk, e.n2, small) }, cluster.ErrUnknownNode, `"n2"`},
		{"no such device on the target", nil, func(e env) error {
			return e.s.Migrate(e.tk, e.n2, cluster.Reservation{Start: time.Second, Hold: forever(t, 1, 1), Devices: gpu.Allocation{Devices: []int{5}, Milli: 1000}})
		}, stage.ErrNoRoom, `"run"`},
		{"commit without a change", nil, func(e env) error { return e.s.CommitChange(e.tk) }, cluster.ErrState, `"run"`},
		{"revert without a change", nil, func(e env) error { return e.s.RevertChange(e.tk) }, cluster.ErrState, `"run"`},
		{"revert after a commit", func(e env) {
			resize(e)
			require.NoError(t, e.s.CommitChange(e.tk))
		}, func(e env) error { return e.s.RevertChange(e.tk) }, cluster.ErrState, `"run"`},
		{"suspend a changing task", resize, func(e env) error { return e.s.Suspend(e.tk) }, cluster.ErrState, `"run"`},
		{"back up a changing task", resize, func(e env) error {
			_, err := e.s.ReserveBackup(e.tk, e.n2, small)
			return err
		}, cluster.ErrState, `"run"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, tk, n1, n2 := resizeCluster(t)
			e := env{s, tk, n1, n2}
			if tc.setup != nil {
				tc.setup(e)
			}
			tasks := []*cluster.TaskInfo{tk}
			for _, id := range []string{"p", "o"} {
				if x, ok := s.Task(id); ok {
					tasks = append(tasks, x)
				}
			}
			before := changeFingerprint(s, tasks)
			err := tc.do(e)
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.who, "the error names what it refused")
			assert.Empty(t, diff(before, changeFingerprint(s, tasks)), "a refusal changes nothing")
		})
	}
}

func ExampleState_Resize() {
	s, err := cluster.New(schema)
	if err != nil {
		panic(err)
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(s.AddNode(cluster.NodeSpec{ID: "n1", Capacity: tup(8, 8, 0, 0, 0, 0)}))
	must(s.AddJob(cluster.JobSpec{ID: "batch"}))
	must(s.Submit(cluster.TaskSpec{ID: "b-0", Job: "batch", Request: tup(4, 4, 0, 0, 0, 0)}))
	t, _ := s.Task("b-0")
	n, _ := s.Node("n1")
	must(s.Reserve(t, n, cluster.Reservation{Start: 0, Hold: t.RequestProfile(schema)}))
	must(s.Commit(t))

	// Ten seconds on, take two cores back from the batch task without killing it.
	s.Advance(10 * time.Second)
	shrunk, err := stage.Constant(schema, tup(2, 4, 0, 0, 0, 0), stage.Forever)
	must(err)
	must(s.Resize(t, cluster.Reservation{Start: s.Clock(), Hold: shrunk}))
	kind, _ := t.Change()
	fmt.Println("held:", kind, "free cpu", n.Timeline().FreeAt(s.Clock())[0])
	must(s.CommitChange(t))
	kind, _ = t.Change()
	fmt.Println("committed:", kind, "free cpu", n.Timeline().FreeAt(s.Clock())[0], "usage cpu", t.Usage()[0])
	// Output:
	// held: resizing free cpu 6
	// committed: none free cpu 6 usage cpu 2
}

// TestRunID: a placement's number stays through a move and a resize, and a task
// placed again after a failure has a new one; none while pending.
func TestRunID(t *testing.T) {
	s, tk, n1, n2 := resizeCluster(t)
	first := tk.RunID()
	assert.NotZero(t, first)
	require.NoError(t, s.Migrate(tk, n2, cluster.Reservation{Start: time.Second, Hold: forever(t, 3, 2)}))
	require.NoError(t, s.CommitChange(tk))
	require.NoError(t, s.Resize(tk, cluster.Reservation{Start: time.Second, Hold: forever(t, 2, 2)}))
	require.NoError(t, s.CommitChange(tk))
	assert.Equal(t, first, tk.RunID(), "a move and a resize keep the run")

	require.NoError(t, s.Fail(tk))
	assert.Zero(t, tk.RunID(), "pending: no run")
	require.NoError(t, s.Reserve(tk, n1, cluster.Reservation{Start: time.Second, Hold: tk.RequestProfile(schema)}))
	require.NoError(t, s.Commit(tk))
	assert.NotZero(t, tk.RunID())
	assert.NotEqual(t, first, tk.RunID(), "placed again: a new run")
}
