package cluster_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// capacity is the nodes' capacity in these tests: cpu 8, memory 10, disk-io 8, net-io
// 8, disk 8, gpu 1.
var capacity = tup(8, 10, 8, 8, 8, 1)

func newState(t *testing.T, opts ...cluster.Option) *cluster.State {
	t.Helper()
	s, err := cluster.New(schema, opts...)
	require.NoError(t, err)
	return s
}

func addNode(t *testing.T, s *cluster.State, id, rack string) *cluster.NodeInfo {
	t.Helper()
	require.NoError(t, s.AddNode(cluster.NodeSpec{ID: id, Rack: rack, Capacity: capacity}))
	n, ok := s.Node(id)
	require.True(t, ok)
	return n
}

func addJob(t *testing.T, s *cluster.State, id string) *cluster.JobInfo {
	t.Helper()
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: id}))
	j, ok := s.Job(id)
	require.True(t, ok)
	return j
}

// submit adds tasks and returns them in the order given.
func submit(t *testing.T, s *cluster.State, specs ...cluster.TaskSpec) []*cluster.TaskInfo {
	t.Helper()
	require.NoError(t, s.Submit(specs...))
	out := make([]*cluster.TaskInfo, len(specs))
	for i, sp := range specs {
		var ok bool
		out[i], ok = s.Task(sp.ID)
		require.True(t, ok)
	}
	return out
}

// task is a task of job j asking for cpu and memory.
func task(id, job string, cpu, mem int64) cluster.TaskSpec {
	return cluster.TaskSpec{ID: id, Job: job, Key: predict.Key{Logic: "map"}, Request: tup(cpu, mem)}
}

// held is a reservation of t's request (held until it finishes) from start.
func held(t *cluster.TaskInfo, start time.Duration) cluster.Reservation {
	return cluster.Reservation{Start: start, Hold: t.RequestProfile(schema)}
}

func constant(t *testing.T, demand resource.Tuple, d time.Duration) stage.Profile {
	t.Helper()
	p, err := stage.Constant(schema, demand, d)
	require.NoError(t, err)
	return p
}

// place reserves and commits t on n from start.
func place(t *testing.T, s *cluster.State, tk *cluster.TaskInfo, n *cluster.NodeInfo, start time.Duration) {
	t.Helper()
	require.NoError(t, s.Reserve(tk, n, held(tk, start)))
	require.NoError(t, s.Commit(tk))
	want := cluster.Running
	if start > s.Clock() {
		want = cluster.Booked
	}
	require.Equal(t, want, tk.State())
}

func byFree(s *cluster.State, need int64) []string {
	var ids []string
	s.ByFree(need, func(n *cluster.NodeInfo) bool {
		ids = append(ids, n.ID())
		return true
	})
	return ids
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *resource.Schema
		opts   []cluster.Option
		want   error
	}{
		{"nil schema", nil, nil, resource.ErrSchemaMismatch},
		{"nil option", schema, []cluster.Option{nil}, cluster.ErrInvalid},
		{"nil ordering", schema, []cluster.Option{cluster.WithOrdering(nil)}, cluster.ErrInvalid},
		{"nil ordering after a good option", schema, []cluster.Option{cluster.WithJobProgress(true), cluster.WithOrdering(nil)}, cluster.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := cluster.New(tc.schema, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, s)
		})
	}
}

func TestNewOptions(t *testing.T) {
	s := newState(t)
	assert.Equal(t, fairness.DRF{}, s.Ordering(), "DRF by default")
	assert.Same(t, schema, s.Schema())
	assert.Equal(t, 1, s.IndexDim(), "memory is the standard schema's first non-compressible dimension")

	s = newState(t, cluster.WithOrdering(fairness.FIFO{}), cluster.WithJobProgress(true))
	assert.Equal(t, fairness.FIFO{}, s.Ordering())
	n := addNode(t, s, "n1", "")
	j := addJob(t, s, "j")
	tk := submit(t, s, task("t", "j", 1, 1))[0]
	assert.Nil(t, j.Progress(), "no job tracker before a task runs")
	place(t, s, tk, n, 0)
	require.NotNil(t, j.Progress(), "WithJobProgress keeps a tracker per job")
	assert.Equal(t, 1, j.Progress().Len())
	assert.Equal(t, 1, s.Progress().Len())

	s = newState(t, cluster.WithJobProgress(false))
	n = addNode(t, s, "n1", "")
	j = addJob(t, s, "j")
	place(t, s, submit(t, s, task("t", "j", 1, 1))[0], n, 0)
	assert.Nil(t, j.Progress(), "no per-job tracker without WithJobProgress")
}

func TestAddNodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec cluster.NodeSpec
		want error
	}{
		{"empty ID", cluster.NodeSpec{Capacity: capacity}, cluster.ErrInvalid},
		{"duplicate", cluster.NodeSpec{ID: "n1", Capacity: capacity}, cluster.ErrDuplicate},
		{"negative capacity", cluster.NodeSpec{ID: "n2", Capacity: resource.Tuple{-1}}, resource.ErrNegative},
		{"capacity outside the schema", cluster.NodeSpec{ID: "n2", Capacity: resource.Tuple{7: 1}}, resource.ErrOutsideSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t)
			addNode(t, s, "n1", "r")
			err := s.AddNode(tc.spec)
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, 1, s.NumNodes())
			assert.Equal(t, capacity, s.Capacity(), "a refused node adds no capacity")
			assert.Equal(t, []string{"n1"}, byFree(s, math.MinInt64))
			n, _ := s.Node("n1")
			assert.Equal(t, "r", n.Rack(), "a refused duplicate does not replace the node")
		})
	}
}

func TestAddJobErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec cluster.JobSpec
		want []error
	}{
		{"empty ID", cluster.JobSpec{}, []error{cluster.ErrInvalid}},
		{"duplicate", cluster.JobSpec{ID: "j1"}, []error{cluster.ErrDuplicate}},
		{"unknown queue", cluster.JobSpec{ID: "j2", Queue: "nope"}, []error{cluster.ErrUnknownQueue, fairness.ErrUnknownQueue}},
		{"negative weight", cluster.JobSpec{ID: "j2", Weight: -1}, []error{cluster.ErrInvalid}},
		{"NaN weight", cluster.JobSpec{ID: "j2", Weight: math.NaN()}, []error{cluster.ErrInvalid}},
		{"infinite weight", cluster.JobSpec{ID: "j2", Weight: math.Inf(1)}, []error{fairness.ErrInvalidWeight}},
		{"negative submitted", cluster.JobSpec{ID: "j2", Submitted: -time.Second}, []error{cluster.ErrInvalid}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t)
			require.NoError(t, s.AddQueue("", "q"))
			require.NoError(t, s.AddJob(cluster.JobSpec{ID: "j1", Queue: "q", Priority: 3}))
			err := s.AddJob(tc.spec)
			for _, want := range tc.want {
				require.ErrorIs(t, err, want)
			}
			assert.Equal(t, 1, s.NumJobs())
			_, ok := s.Job("j2")
			assert.False(t, ok)
			_, err = s.JobEntry("j2")
			assert.Error(t, err, "the fairness tree holds no refused job")
			j, _ := s.Job("j1")
			assert.Equal(t, 3, j.Spec().Priority, "a refused duplicate does not replace the job")
		})
	}
}

func TestAddQueueErrors(t *testing.T) {
	s := newState(t)
	require.ErrorIs(t, s.AddQueue("nope", "q"), cluster.ErrUnknownQueue)
	require.NoError(t, s.AddQueue("", "q"))
	require.ErrorIs(t, s.AddQueue("", "q"), fairness.ErrDuplicate)
	require.ErrorIs(t, s.AddQueue("", "w", fairness.Weight(-1)), fairness.ErrInvalidWeight)
	assert.False(t, s.HasMaxShare())
	require.NoError(t, s.AddQueue("q", "capped", fairness.MaxShare(0.5)))
	assert.True(t, s.HasMaxShare())
}

func TestSubmitErrors(t *testing.T) {
	other := resource.MustSchema(resource.CPU, resource.Memory)
	otherProfile, err := stage.Constant(other, other.MustTuple(1, 1), time.Second)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		bad  cluster.TaskSpec
		want error
	}{
		{"empty ID", cluster.TaskSpec{Job: "j"}, cluster.ErrInvalid},
		{"duplicate within the batch", task("ok", "j", 1, 1), cluster.ErrDuplicate},
		{"duplicate of an existing task", task("old", "j", 1, 1), cluster.ErrDuplicate},
		{"unknown job", task("t", "nope", 1, 1), cluster.ErrUnknownJob},
		{"negative duration", cluster.TaskSpec{ID: "t", Job: "j", Duration: -1}, cluster.ErrInvalid},
		{"negative deadline", cluster.TaskSpec{ID: "t", Job: "j", Deadline: -1}, cluster.ErrInvalid},
		{"negative submitted", cluster.TaskSpec{ID: "t", Job: "j", Submitted: -1}, cluster.ErrInvalid},
		{"negative key input size", cluster.TaskSpec{ID: "t", Job: "j", Key: predict.Key{Logic: "map", InputSize: -1}}, cluster.ErrInvalid},
		{"profile of another schema", cluster.TaskSpec{ID: "t", Job: "j", Profile: otherProfile}, resource.ErrSchemaMismatch},
		{"negative request", cluster.TaskSpec{ID: "t", Job: "j", Request: resource.Tuple{0, -1}}, resource.ErrNegative},
		{"request outside the schema", cluster.TaskSpec{ID: "t", Job: "j", Request: resource.Tuple{7: 1}}, resource.ErrOutsideSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newState(t)
			addNode(t, s, "n1", "")
			addJob(t, s, "j")
			old := submit(t, s, task("old", "j", 2, 2))
			before := fingerprint(s, old)
			err := s.Submit(task("ok", "j", 1, 1), tc.bad, task("after", "j", 1, 1))
			require.ErrorIs(t, err, tc.want)
			assert.Equal(t, 1, s.Count(cluster.Pending), "a failing Submit adds none of the batch")
			for _, id := range []string{"ok", "after", "t"} {
				_, ok := s.Task(id)
				assert.False(t, ok, "task %s", id)
			}
			assert.Empty(t, diff(before, fingerprint(s, old)))
			e, err := s.JobEntry("j")
			require.NoError(t, err)
			assert.Equal(t, 1, e.Pending)
			assert.Equal(t, tup(2, 2), e.Demand)
		})
	}
}

func TestSubmitCopiesInputs(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "")
	addNode(t, s, "n2", "")
	j := addJob(t, s, "j")
	inputs := []string{"n1"}
	spec := task("t", "j", 1, 1)
	spec.Inputs = inputs
	tk := submit(t, s, spec)[0]
	inputs[0] = "n2"
	assert.Equal(t, []string{"n1"}, tk.Spec().Inputs, "the state keeps its own copy of the inputs")
	got, l, ok := s.FirstPending(j, n1, fairness.NodeLocal)
	require.True(t, ok)
	assert.Same(t, tk, got)
	assert.Equal(t, fairness.NodeLocal, l)
}

// refusal is a call that must fail with want and change nothing.
type refusal struct {
	name string
	call func() error
	want error
}

// checkRefusals runs each call and checks its error and that the state is unchanged.
func checkRefusals(t *testing.T, s *cluster.State, tasks []*cluster.TaskInfo, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := fingerprint(s, tasks)
			err := tc.call()
			require.ErrorIs(t, err, tc.want)
			assert.Empty(t, diff(before, fingerprint(s, tasks)), "a refused call changes nothing")
		})
	}
}

func TestReserveErrors(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "")
	n2 := addNode(t, s, "n2", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("pending", "j", 1, 1), task("reserved", "j", 1, 1), task("running", "j", 1, 1), task("done", "j", 1, 1), task("gone", "j", 1, 1))
	pending, reserved, running, done, gone := ts[0], ts[1], ts[2], ts[3], ts[4]
	require.NoError(t, s.Reserve(reserved, n1, held(reserved, 0)))
	place(t, s, running, n1, 0)
	place(t, s, done, n2, 0)
	require.NoError(t, s.Finish(done, time.Second))
	require.NoError(t, s.Cancel(gone, 0))

	// The same IDs in another state: its task and node are not this state's.
	o := newState(t)
	on1 := addNode(t, o, "n1", "")
	addJob(t, o, "j")
	opending := submit(t, o, task("pending", "j", 1, 1))[0]

	other := resource.MustSchema(resource.CPU, resource.Memory)
	otherProfile, err := stage.Constant(other, other.MustTuple(1, 1), time.Second)
	require.NoError(t, err)
	tooBig := constant(t, tup(1, 11), time.Second)
	r := held(pending, 0)
	checkRefusals(t, s, ts, []refusal{
		{"reserved task", func() error { return s.Reserve(reserved, n2, held(reserved, 0)) }, cluster.ErrState},
		{"running task", func() error { return s.Reserve(running, n2, held(running, 0)) }, cluster.ErrState},
		{"finished task", func() error { return s.Reserve(done, n2, held(done, 0)) }, cluster.ErrState},
		{"cancelled task", func() error { return s.Reserve(gone, n2, held(gone, 0)) }, cluster.ErrState},
		{"nil task", func() error { return s.Reserve(nil, n2, r) }, cluster.ErrUnknownTask},
		{"task of another state", func() error { return s.Reserve(opending, n2, r) }, cluster.ErrUnknownTask},
		{"node of another state", func() error { return s.Reserve(pending, on1, r) }, cluster.ErrUnknownNode},
		{"nil node", func() error { return s.Reserve(pending, nil, r) }, cluster.ErrUnknownNode},
		{"negative start", func() error { return s.Reserve(pending, n2, cluster.Reservation{Start: -1, Hold: r.Hold}) }, cluster.ErrInvalid},
		{"empty profile", func() error { return s.Reserve(pending, n2, cluster.Reservation{}) }, cluster.ErrInvalid},
		{"profile of another schema", func() error { return s.Reserve(pending, n2, cluster.Reservation{Hold: otherProfile}) }, resource.ErrSchemaMismatch},
		{"allowance on memory", func() error {
			return s.Reserve(pending, n2, cluster.Reservation{Hold: r.Hold, Allowance: tup(0, 1)})
		}, resource.ErrNotCompressible},
		{"does not fit", func() error { return s.Reserve(pending, n2, cluster.Reservation{Hold: tooBig}) }, stage.ErrNoRoom},
	})

	err = s.Reserve(pending, n2, cluster.Reservation{Hold: tooBig})
	var fe *stage.FitError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "memory", fe.DimName)
	assert.Equal(t, cluster.Pending, pending.State())
	assert.Nil(t, pending.Node())
}

func TestLifeCycleErrors(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("pending", "j", 1, 1), task("reserved", "j", 1, 1), task("running", "j", 1, 1), task("later", "j", 1, 1), task("done", "j", 1, 1), task("gone", "j", 1, 1))
	pending, reserved, running, later, done, gone := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5]
	require.NoError(t, s.Reserve(reserved, n1, held(reserved, 0)))
	place(t, s, running, n1, 0)
	place(t, s, later, n1, 5*time.Second)
	place(t, s, done, n1, 0)
	require.NoError(t, s.Finish(done, time.Second))
	require.NoError(t, s.Cancel(gone, 0))

	o := newState(t)
	addJob(t, o, "j")
	foreign := submit(t, o, task("running", "j", 1, 1))[0]

	checkRefusals(t, s, ts, []refusal{
		{"commit pending", func() error { return s.Commit(pending) }, cluster.ErrState},
		{"commit running", func() error { return s.Commit(running) }, cluster.ErrState},
		{"commit finished", func() error { return s.Commit(done) }, cluster.ErrState},
		{"commit foreign", func() error { return s.Commit(foreign) }, cluster.ErrUnknownTask},
		{"commit nil", func() error { return s.Commit(nil) }, cluster.ErrUnknownTask},
		{"unreserve pending", func() error { return s.Unreserve(pending) }, cluster.ErrState},
		{"unreserve running", func() error { return s.Unreserve(running) }, cluster.ErrState},
		{"unreserve foreign", func() error { return s.Unreserve(foreign) }, cluster.ErrUnknownTask},
		{"evict pending", func() error { return s.Evict(pending) }, cluster.ErrState},
		{"evict reserved", func() error { return s.Evict(reserved) }, cluster.ErrState},
		{"evict foreign", func() error { return s.Evict(foreign) }, cluster.ErrUnknownTask},
		{"fail pending", func() error { return s.Fail(pending) }, cluster.ErrState},
		{"fail reserved", func() error { return s.Fail(reserved) }, cluster.ErrState},
		{"fail finished", func() error { return s.Fail(done) }, cluster.ErrState},
		{"finish pending", func() error { return s.Finish(pending, time.Second) }, cluster.ErrState},
		{"finish reserved", func() error { return s.Finish(reserved, time.Second) }, cluster.ErrState},
		{"finish before start", func() error { return s.Finish(later, 4*time.Second) }, cluster.ErrState},
		{"fail booked", func() error { return s.Fail(later) }, cluster.ErrState},
		{"preempt booked", func() error { return s.Preempt(later) }, cluster.ErrState},
		{"finish twice", func() error { return s.Finish(done, 2*time.Second) }, cluster.ErrState},
		{"finish foreign", func() error { return s.Finish(foreign, time.Second) }, cluster.ErrUnknownTask},
		{"cancel finished", func() error { return s.Cancel(done, 0) }, cluster.ErrState},
		{"cancel twice", func() error { return s.Cancel(gone, 0) }, cluster.ErrState},
		{"cancel foreign", func() error { return s.Cancel(foreign, 0) }, cluster.ErrUnknownTask},
		{"started pending", func() error { return s.Started(pending, time.Second) }, cluster.ErrState},
		{"progress of reserved", func() error { return s.ReportProgress(reserved, 0.5, time.Second) }, cluster.ErrState},
		{"started at a negative time", func() error { return s.Started(running, -time.Second) }, cluster.ErrInvalid},
		{"progress at a negative time", func() error { return s.ReportProgress(running, 0.5, -time.Second) }, cluster.ErrInvalid},
	})

	// A booked task runs once the clock reaches its start, and finishing at its start
	// is not before it.
	s.Advance(5 * time.Second)
	require.Equal(t, cluster.Running, later.State())
	require.NoError(t, s.Finish(later, 5*time.Second))
	assert.Equal(t, cluster.Finished, later.State())
}

func TestReserveBackupErrors(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "")
	n2 := addNode(t, s, "n2", "")
	n3 := addNode(t, s, "n3", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("pending", "j", 1, 1), task("reserved", "j", 1, 1), task("running", "j", 1, 1), task("x"+cluster.BackupSuffix, "j", 1, 1), task("big", "j", 1, 6))
	pending, reserved, running, named, big := ts[0], ts[1], ts[2], ts[3], ts[4]
	require.NoError(t, s.Reserve(reserved, n1, held(reserved, 0)))
	place(t, s, running, n1, 0)
	place(t, s, named, n1, 0)
	place(t, s, big, n2, 0)
	b, err := s.ReserveBackup(running, n2, held(running, 0))
	require.NoError(t, err)
	assert.Equal(t, cluster.BackupID("running"), b.ID())
	assert.Same(t, running, b.BackupOf())
	assert.Same(t, b, running.Backup())
	assert.Equal(t, cluster.Reserved, b.State())
	assert.Equal(t, 3, s.Count(cluster.Running))
	assert.Equal(t, 1, s.Count(cluster.Reserved), "a reserved backup is not counted")

	o := newState(t)
	addJob(t, o, "j")
	foreign := submit(t, o, task("running", "j", 1, 1))[0]
	tooBig := constant(t, tup(1, 10), time.Second) // n1 holds 3 memory already

	checkRefusals(t, s, ts, []refusal{
		{"pending task", func() error { _, err := s.ReserveBackup(pending, n2, held(pending, 0)); return err }, cluster.ErrState},
		{"reserved task", func() error { _, err := s.ReserveBackup(reserved, n2, held(reserved, 0)); return err }, cluster.ErrState},
		{"twice", func() error { _, err := s.ReserveBackup(running, n3, held(running, 0)); return err }, cluster.ErrState},
		{"a backup", func() error { _, err := s.ReserveBackup(b, n3, held(running, 0)); return err }, cluster.ErrState},
		{"own node", func() error { _, err := s.ReserveBackup(big, n2, held(big, 0)); return err }, cluster.ErrInvalid},
		{"named like a backup", func() error { _, err := s.ReserveBackup(named, n2, held(named, 0)); return err }, cluster.ErrDuplicate},
		{"does not fit", func() error { _, err := s.ReserveBackup(big, n1, cluster.Reservation{Hold: tooBig}); return err }, stage.ErrNoRoom},
		{"foreign task", func() error { _, err := s.ReserveBackup(foreign, n2, held(foreign, 0)); return err }, cluster.ErrUnknownTask},
		{"nil node", func() error { _, err := s.ReserveBackup(big, nil, held(big, 0)); return err }, cluster.ErrUnknownNode},
		{"empty profile", func() error { _, err := s.ReserveBackup(big, n1, cluster.Reservation{}); return err }, cluster.ErrInvalid},
		{"finish a reserved backup", func() error { return s.Finish(b, time.Second) }, cluster.ErrState},
		{"evict a reserved backup", func() error { return s.Evict(b) }, cluster.ErrState},
		{"fail a reserved backup", func() error { return s.Fail(b) }, cluster.ErrState},
	})

	require.NoError(t, s.Commit(b))
	assert.Equal(t, cluster.Running, b.State())
	checkRefusals(t, s, ts, []refusal{
		{"commit a running backup", func() error { return s.Commit(b) }, cluster.ErrState},
		{"unreserve a running backup", func() error { return s.Unreserve(b) }, cluster.ErrState},
	})

	// A dropped backup is unknown to the state.
	require.NoError(t, s.Cancel(b, 0))
	assert.Nil(t, running.Backup())
	assert.Equal(t, cluster.Running, running.State(), "cancelling a backup leaves its task running")
	checkRefusals(t, s, ts, []refusal{
		{"commit a dropped backup", func() error { return s.Commit(b) }, cluster.ErrUnknownTask},
		{"cancel a dropped backup", func() error { return s.Cancel(b, 0) }, cluster.ErrUnknownTask},
	})
}

func TestRemoveNode(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "r")
	n2 := addNode(t, s, "n2", "r")
	j := addJob(t, s, "j")
	ts := submit(t, s, task("b", "j", 1, 1), task("a", "j", 1, 1), task("c", "j", 1, 1), task("x", "j", 1, 1), task("y", "j", 1, 1), task("p", "j", 1, 1))
	tb, ta, tc, tx, ty, tp := ts[0], ts[1], ts[2], ts[3], ts[4], ts[5]
	place(t, s, tb, n1, 0)
	place(t, s, ta, n1, 0)
	require.NoError(t, s.Reserve(tc, n1, held(tc, 0)))
	place(t, s, tx, n2, 0)
	bx, err := s.ReserveBackup(tx, n1, held(tx, 0)) // x's backup on n1
	require.NoError(t, err)
	require.NoError(t, s.Commit(bx))
	place(t, s, ty, n1, 0)
	by, err := s.ReserveBackup(ty, n2, held(ty, 0)) // y's backup on n2
	require.NoError(t, err)
	assert.Equal(t, 5, n1.NumTasks(), "b, a, c, y and x's backup")

	_, err = s.RemoveNode("nope")
	require.ErrorIs(t, err, cluster.ErrUnknownNode)

	ids, err := s.RemoveNode("n1")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "y"}, ids, "the running tasks, in ID order")
	for _, tk := range []*cluster.TaskInfo{ta, tb, tc, ty, tp} {
		assert.Equal(t, cluster.Pending, tk.State(), tk.ID())
		assert.Nil(t, tk.Node(), tk.ID())
	}
	assert.Equal(t, cluster.Running, tx.State(), "x runs on n2; only its backup was on n1")
	assert.Nil(t, tx.Backup())
	assert.Equal(t, []string{"n1"}, tx.FailedOn(), "a backup lost with its node counts as failed there")
	assert.Nil(t, ty.Backup(), "the backup of a task returned to pending ends")
	assert.Empty(t, ty.FailedOn())
	for _, b := range []*cluster.TaskInfo{bx, by} {
		_, ok := s.Task(b.ID())
		assert.False(t, ok, b.ID())
	}

	assert.Equal(t, 1, s.NumNodes())
	_, ok := s.Node("n1")
	assert.False(t, ok)
	assert.Equal(t, capacity, s.Capacity())
	assert.Equal(t, []string{"n2"}, byFree(s, math.MinInt64))
	assert.Equal(t, []*cluster.TaskInfo{tx}, n2.Tasks(), "y's backup is gone from n2")
	assert.Equal(t, 1, n2.Timeline().Reservations())
	assert.Equal(t, capacity.Sub(tup(1, 1)), n2.Timeline().FreeAt(0))

	assert.Equal(t, 5, s.Count(cluster.Pending))
	assert.Equal(t, 1, s.Count(cluster.Running))
	assert.Equal(t, 0, s.Count(cluster.Reserved))
	assert.Equal(t, 1, j.NumRunning())
	assert.Equal(t, []*cluster.TaskInfo{tx}, j.Running())
	e, err := s.JobEntry("j")
	require.NoError(t, err)
	assert.Equal(t, 1, e.Running)
	assert.Equal(t, 5, e.Pending)
	assert.Equal(t, tup(1, 1), e.Usage)
	assert.Equal(t, tup(5, 5), e.Demand)
	sum := 0
	for _, c := range j.Classes() {
		sum += c.N
	}
	assert.Equal(t, 5, sum)

	// The removed node is no longer this state's.
	require.ErrorIs(t, s.Reserve(ta, n1, held(ta, 0)), cluster.ErrUnknownNode)
	_, err = s.RemoveNode("n1")
	require.ErrorIs(t, err, cluster.ErrUnknownNode)
	// A node of the same ID may join again.
	n1b := addNode(t, s, "n1", "r")
	require.NoError(t, s.Reserve(ta, n1b, held(ta, 0)))
	require.ErrorIs(t, s.Reserve(tb, n1, held(tb, 0)), cluster.ErrUnknownNode, "the old view stays foreign")
}

func TestBackupWins(t *testing.T) {
	s := newState(t, cluster.WithJobProgress(true))
	n1 := addNode(t, s, "n1", "")
	n2 := addNode(t, s, "n2", "")
	j := addJob(t, s, "j")
	tk := submit(t, s, task("t", "j", 2, 3))[0]
	place(t, s, tk, n1, 0)
	b, err := s.ReserveBackup(tk, n2, held(tk, time.Second))
	require.NoError(t, err)
	e, err := s.JobEntry("j")
	require.NoError(t, err)
	assert.Equal(t, 2, e.Running, "a backup counts in its job's fairness usage")
	assert.Equal(t, tup(4, 6), e.Usage)
	require.NoError(t, s.Commit(b))
	assert.Equal(t, 1, s.Count(cluster.Running), "a backup is not counted")
	assert.Equal(t, 1, j.NumRunning())

	require.ErrorIs(t, s.Finish(b, 500*time.Millisecond), cluster.ErrState, "before the backup's start")
	require.NoError(t, s.Finish(b, 3*time.Second))
	assert.Equal(t, cluster.Finished, tk.State(), "the backup won: its task finished")
	assert.Nil(t, tk.Node())
	assert.Nil(t, tk.Backup())
	_, ok := s.Task(b.ID())
	assert.False(t, ok)
	for _, n := range []*cluster.NodeInfo{n1, n2} {
		assert.Equal(t, 0, n.NumTasks(), n.ID())
		assert.Equal(t, 0, n.Timeline().Reservations(), n.ID())
		assert.Equal(t, capacity, n.Timeline().FreeAt(0), n.ID())
		assert.Equal(t, capacity, n.Timeline().FreeAt(2*time.Second), n.ID())
	}
	e, err = s.JobEntry("j")
	require.NoError(t, err)
	assert.Equal(t, 0, e.Running)
	assert.Equal(t, resource.Tuple{}, e.Usage)
	assert.Equal(t, 0, j.NumRunning())
	assert.Equal(t, 1, s.Count(cluster.Finished))
	assert.Equal(t, 0, s.Count(cluster.Running))
	busy := 0
	for range s.BusyJobs() {
		busy++
	}
	assert.Equal(t, 0, busy)
	rate, ok := s.Progress().NodeRate("n2")
	require.True(t, ok, "the run counts on the backup's node")
	assert.Equal(t, 1, rate.N)
	_, ok = s.Progress().NodeRate("n1")
	assert.False(t, ok, "not on the original's")
	assert.Equal(t, 0, s.Progress().Len(), "nothing left running in the tracker")
	assert.Equal(t, 0, j.Progress().Len())
}

func TestBackupFailRecordsFailedOn(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "")
	n2 := addNode(t, s, "n2", "")
	n3 := addNode(t, s, "n3", "")
	addJob(t, s, "j")
	tk := submit(t, s, task("t", "j", 1, 2))[0]
	place(t, s, tk, n1, 0)

	b, err := s.ReserveBackup(tk, n2, held(tk, 0))
	require.NoError(t, err)
	require.NoError(t, s.Commit(b))
	require.NoError(t, s.Fail(b))
	assert.Equal(t, []string{"n2"}, tk.FailedOn())
	assert.Equal(t, cluster.Running, tk.State(), "a failed backup leaves its task running")
	assert.Same(t, n1, tk.Node())
	assert.Nil(t, tk.Backup())
	assert.Equal(t, capacity, n2.Timeline().FreeAt(0))

	// An evicted, cancelled or unreserved backup is not a failure.
	b, err = s.ReserveBackup(tk, n3, held(tk, 0))
	require.NoError(t, err)
	require.NoError(t, s.Unreserve(b))
	b, err = s.ReserveBackup(tk, n3, held(tk, 0))
	require.NoError(t, err)
	require.NoError(t, s.Commit(b))
	require.NoError(t, s.Evict(b))
	assert.Equal(t, []string{"n2"}, tk.FailedOn())

	b, err = s.ReserveBackup(tk, n3, held(tk, 0))
	require.NoError(t, err)
	require.NoError(t, s.Commit(b))
	require.NoError(t, s.Fail(b))
	assert.Equal(t, []string{"n2", "n3"}, tk.FailedOn())

	// The task failing drops its backup without blaming the backup's node.
	b, err = s.ReserveBackup(tk, n2, held(tk, 0))
	require.NoError(t, err)
	require.NoError(t, s.Commit(b))
	require.NoError(t, s.Fail(tk))
	assert.Equal(t, cluster.Pending, tk.State())
	assert.Equal(t, []string{"n2", "n3"}, tk.FailedOn())
	for _, n := range []*cluster.NodeInfo{n1, n2, n3} {
		assert.Equal(t, capacity, n.Timeline().FreeAt(0), n.ID())
	}
}

func TestEvictKeepsPlace(t *testing.T) {
	for _, back := range []struct {
		name string
		fn   func(*cluster.State, *cluster.TaskInfo) error
	}{
		{"evict", (*cluster.State).Evict},
		{"fail", (*cluster.State).Fail},
		{"unreserve", nil},
	} {
		t.Run(back.name, func(t *testing.T) {
			s := newState(t)
			n := addNode(t, s, "n1", "")
			j := addJob(t, s, "j")
			// Task order is priority, then submission, then ID: z, a, m.
			z, a, m := task("z", "j", 1, 1), task("a", "j", 1, 1), task("m", "j", 1, 1)
			a.Submitted, m.Submitted = time.Second, time.Second
			ts := submit(t, s, a, m, z)
			tz := ts[2]
			first := func() string {
				tk, _, ok := s.FirstPending(j, n, fairness.OffSwitch)
				require.True(t, ok)
				return tk.ID()
			}
			require.Equal(t, "z", first())
			require.NoError(t, s.Reserve(tz, n, held(tz, 0)))
			require.Equal(t, "a", first())
			if back.fn == nil {
				require.NoError(t, s.Unreserve(tz))
			} else {
				require.NoError(t, s.Commit(tz))
				require.Equal(t, "a", first())
				require.NoError(t, back.fn(s, tz))
			}
			assert.Equal(t, cluster.Pending, tz.State())
			assert.Equal(t, "z", first(), "the task is first again")
			var order []string
			s.AscendPending(j, n, fairness.OffSwitch, func(tk *cluster.TaskInfo, _ fairness.Level) bool {
				order = append(order, tk.ID())
				return true
			})
			assert.Equal(t, []string{"z", "a", "m"}, order)
		})
	}
}

func TestWalkDefersTreeChanges(t *testing.T) {
	s := newState(t, cluster.WithOrdering(fairness.FIFO{}))
	n := addNode(t, s, "n1", "")
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: "j1", Priority: 2}))
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: "j2", Priority: 1}))
	ts := submit(t, s, task("a", "j1", 1, 1), task("b", "j1", 1, 1), task("c", "j2", 1, 1))

	var visited []string
	s.Walk(func(j *cluster.JobInfo) bool {
		visited = append(visited, j.ID())
		if j.ID() != "j1" {
			return true
		}
		place(t, s, ts[0], n, 0)
		e, err := s.JobEntry("j1")
		require.NoError(t, err)
		assert.Equal(t, 0, e.Running, "inside the walk the tree is unchanged")
		assert.Equal(t, 2, e.Pending)
		assert.Equal(t, cluster.Running, ts[0].State(), "the task itself changed at once")
		assert.Equal(t, 1, s.Count(cluster.Running))
		// A nested walk does not apply the outer walk's changes when it ends.
		s.Walk(func(*cluster.JobInfo) bool { return false })
		e, err = s.JobEntry("j1")
		require.NoError(t, err)
		assert.Equal(t, 0, e.Running, "after a nested walk the changes still wait")
		return true
	})
	assert.Equal(t, []string{"j1", "j2"}, visited, "the order is taken once")
	e, err := s.JobEntry("j1")
	require.NoError(t, err)
	assert.Equal(t, 1, e.Running, "after the walk the tree sees the change")
	assert.Equal(t, 1, e.Pending)
	assert.Equal(t, tup(1, 1), e.Usage)
	assert.Equal(t, tup(1, 1), e.Demand)
	q, err := s.QueueEntry("")
	require.NoError(t, err)
	assert.Equal(t, 1, q.Running)
	assert.Equal(t, 2, q.Pending)

	// Changes outside a walk apply at once.
	require.NoError(t, s.Evict(ts[0]))
	e, err = s.JobEntry("j1")
	require.NoError(t, err)
	assert.Equal(t, 0, e.Running)
	assert.Equal(t, 2, e.Pending)
}

func TestWalkOrderAndStop(t *testing.T) {
	s := newState(t, cluster.WithOrdering(fairness.FIFO{}))
	for _, id := range []string{"j1", "j2", "j3"} {
		require.NoError(t, s.AddJob(cluster.JobSpec{ID: id, Submitted: time.Duration(id[1]-'0') * time.Second}))
	}
	submit(t, s, task("a", "j3", 1, 1), task("b", "j1", 1, 1))
	var visited []string
	s.Walk(func(j *cluster.JobInfo) bool {
		visited = append(visited, j.ID())
		return true
	})
	assert.Equal(t, []string{"j1", "j3"}, visited, "jobs with pending tasks, earliest first; j2 has none")
	visited = nil
	s.Walk(func(j *cluster.JobInfo) bool {
		visited = append(visited, j.ID())
		return false
	})
	assert.Equal(t, []string{"j1"}, visited)
}

// The outermost walk takes jobs from the tree in batches (more than three here): fn
// still sees every job once, in order, and the walk stops exactly where fn says, at a
// batch's edge or inside one; a walk nested in it sees the same order.
func TestWalkStopsWhereTold(t *testing.T) {
	s := newState(t, cluster.WithOrdering(fairness.FIFO{}))
	var want []string
	for i := range 100 {
		id := fmt.Sprintf("j%03d", i)
		require.NoError(t, s.AddJob(cluster.JobSpec{ID: id, Submitted: time.Duration(i) * time.Second}))
		submit(t, s, task("t"+id, id, 1, 1))
		want = append(want, id)
	}
	for _, stop := range []int{1, 2, 31, 32, 33, 63, 64, 65, 99, 100, 101} {
		var visited, nested []string
		s.Walk(func(j *cluster.JobInfo) bool {
			visited = append(visited, j.ID())
			if len(visited) == 40 {
				s.Walk(func(j *cluster.JobInfo) bool { nested = append(nested, j.ID()); return true })
			}
			return len(visited) < stop
		})
		assert.Equal(t, want[:min(stop, len(want))], visited, "stop after %d", stop)
		if stop > 40 {
			assert.Equal(t, want, nested, "the nested walk, stop after %d", stop)
		}
	}
}

func TestSetExternalLoad(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "")
	m := addNode(t, s, "n2", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("now", "j", 2, 6), task("later", "j", 0, 3))
	place(t, s, ts[0], n, 0)
	// "later" holds 3 more memory over [5s, 7s): the least free memory from now on is 1.
	require.NoError(t, s.Reserve(ts[1], n, cluster.Reservation{Start: 5 * time.Second, Hold: constant(t, tup(0, 3), 2*time.Second)}))

	got, err := s.SetExternalLoad(n, 0, tup(4, 8))
	require.NoError(t, err)
	assert.Equal(t, tup(4, 1), got, "at most what is free, from now on")
	assert.Equal(t, tup(2, 3, 8, 8, 8, 1), n.Timeline().FreeAt(0))
	assert.Equal(t, tup(2, 0, 8, 8, 8, 1), n.Timeline().FreeAt(6*time.Second))
	assert.Equal(t, 3, n.Timeline().Reservations())
	assert.Equal(t, []string{"n2", "n1"}, byFree(s, math.MinInt64), "the free index sees the load")

	got, err = s.SetExternalLoad(n, 0, tup(1))
	require.NoError(t, err)
	assert.Equal(t, tup(1), got)
	assert.Equal(t, tup(5, 4, 8, 8, 8, 1), n.Timeline().FreeAt(0), "a new report replaces the last")
	assert.Equal(t, 3, n.Timeline().Reservations())

	before := fingerprint(s, ts)
	_, err = s.SetExternalLoad(n, 0, resource.Tuple{-1})
	require.ErrorIs(t, err, resource.ErrNegative)
	assert.Empty(t, diff(before, fingerprint(s, ts)), "a refused report keeps the last")

	got, err = s.SetExternalLoad(n, 0, resource.Tuple{})
	require.NoError(t, err)
	assert.True(t, got.IsZero())
	assert.Equal(t, capacity.Sub(tup(2, 6)), n.Timeline().FreeAt(0), "a zero load clears the report")
	assert.Equal(t, 2, n.Timeline().Reservations())

	// On an idle node the whole load is held, from now until forever.
	got, err = s.SetExternalLoad(m, 3*time.Second, tup(1, 2))
	require.NoError(t, err)
	assert.Equal(t, tup(1, 2), got)
	assert.Equal(t, capacity, m.Timeline().FreeAt(2*time.Second))
	assert.Equal(t, capacity.Sub(tup(1, 2)), m.Timeline().FreeAt(time.Hour))
}

func TestAdvanceRefreshesByFree(t *testing.T) {
	s := newState(t)
	a := addNode(t, s, "a", "")
	addNode(t, s, "b", "")
	addJob(t, s, "j")
	tk := submit(t, s, cluster.TaskSpec{ID: "t", Job: "j", Request: tup(1, 4), Duration: time.Second})[0]
	assert.Equal(t, []string{"a", "b"}, byFree(s, math.MinInt64), "ties in ID order")
	place(t, s, tk, a, 0)
	assert.Equal(t, []string{"b", "a"}, byFree(s, math.MinInt64), "a reservation re-indexes its node at once")
	assert.Equal(t, []string{"b"}, byFree(s, 7))

	s.Advance(2 * time.Second)
	assert.Equal(t, 2*time.Second, s.Clock())
	assert.Equal(t, []string{"a", "b"}, byFree(s, math.MinInt64), "after the reservation ended, a is as roomy as b again")
	assert.Equal(t, []string{"a", "b"}, byFree(s, 10))
	assert.Empty(t, byFree(s, 11))

	s.Advance(time.Second)
	assert.Equal(t, 2*time.Second, s.Clock(), "the clock never goes back")

	// ByFree stops when fn returns false.
	var seen []string
	s.ByFree(0, func(n *cluster.NodeInfo) bool {
		seen = append(seen, n.ID())
		return false
	})
	assert.Equal(t, []string{"a"}, seen)
}

func TestAddNodeAfterAdvanceIndexesAtClock(t *testing.T) {
	s := newState(t)
	s.Advance(5 * time.Second)
	addNode(t, s, "a", "")
	assert.Equal(t, []string{"a"}, byFree(s, 10))
	assert.Equal(t, 5*time.Second, s.Clock())
}

func TestViews(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "r1")
	assert.Equal(t, "n1", n.ID())
	assert.Equal(t, "r1", n.Rack())
	assert.Equal(t, capacity, n.Capacity())
	assert.Equal(t, cluster.NodeSpec{ID: "n1", Rack: "r1", Capacity: capacity}, n.Spec())
	assert.Equal(t, capacity, n.Timeline().Capacity())

	j0 := addJob(t, s, "j0")
	j1 := addJob(t, s, "j1")
	assert.Equal(t, 0, j0.Index())
	assert.Equal(t, 1, j1.Index())
	assert.Equal(t, 2, s.NumJobs())
	assert.Equal(t, 2, s.JobSlots())
	assert.Same(t, j1, s.JobAt(1))
	assert.Nil(t, s.JobAt(2))
	assert.Nil(t, s.JobAt(-1))
	assert.Equal(t, "j1", j1.ID())

	declared := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 2)}, stage.Stage{Duration: 2 * time.Second, Demand: tup(3, 1)})
	ts := submit(t, s,
		cluster.TaskSpec{ID: "req", Job: "j0", Key: predict.Key{Logic: "map", InputSize: 10}, Request: tup(1, 2), Duration: 3 * time.Second, Inputs: []string{"n1"}},
		cluster.TaskSpec{ID: "forever", Job: "j0", Request: tup(1, 1)},
		cluster.TaskSpec{ID: "decl", Job: "j1", Request: tup(1, 1), Profile: declared},
	)
	req, forever, decl := ts[0], ts[1], ts[2]
	assert.Equal(t, "j0", req.Job())
	assert.Equal(t, predict.Key{Logic: "map", InputSize: 10}, req.Key())
	assert.Equal(t, tup(1, 2), req.Request())
	assert.Equal(t, 3*time.Second, req.RequestProfile(schema).Duration())
	assert.Equal(t, stage.Forever, forever.RequestProfile(schema).Duration(), "no duration: held until the task finishes")
	assert.Equal(t, declared, decl.Declared())
	assert.Equal(t, 0, req.Declared().Len())

	// Demand classes: the declared task's class is its first stage's non-compressible
	// demand.
	assert.Equal(t, cluster.ClassID{Key: req.Key(), Request: tup(1, 2), Duration: 3 * time.Second}, s.ClassOf(req))
	assert.Equal(t, cluster.ClassID{Declared: true, First: tup(0, 2)}, s.ClassOf(decl))
	assert.Equal(t, 3, s.NumClasses())
	assert.Equal(t, 1, s.ClassPending(s.ClassOf(decl)))
	assert.Len(t, j0.Classes(), 2)
	assert.Len(t, j1.Classes(), 1)
	assert.LessOrEqual(t, 3, s.ClassSlots())

	// A predicted placement plans its duration; a request placement does not.
	require.NoError(t, s.Reserve(decl, n, cluster.Reservation{Start: time.Second, Hold: declared, Predicted: true}))
	require.NoError(t, s.Commit(decl))
	assert.Equal(t, cluster.Booked, decl.State(), "its start is to come")
	s.Advance(time.Second)
	assert.Equal(t, cluster.Running, decl.State(), "its start has come")
	assert.Equal(t, 3*time.Second, decl.Planned())
	assert.Equal(t, declared, decl.Plan())
	assert.Equal(t, time.Second, decl.Start())
	assert.Equal(t, tup(3, 2), decl.Usage(), "the hold's peak")
	left, ok := s.TimeLeft(decl, 2*time.Second)
	require.True(t, ok)
	assert.Equal(t, 2*time.Second, left)
	require.NoError(t, s.Reserve(forever, n, held(forever, 0)))
	assert.Equal(t, time.Duration(0), forever.Planned())
	_, ok = s.TimeLeft(forever, time.Second)
	assert.False(t, ok, "a request placement's time left is unknown")
	assert.Equal(t, []*cluster.TaskInfo{decl, forever}, n.Tasks())
	assert.True(t, j1.IsRunning("decl"))
	assert.False(t, j0.IsRunning("forever"), "reserved is not running")

	// Progress reports feed the time left.
	require.NoError(t, s.Started(decl, 2*time.Second))
	assert.Equal(t, 2*time.Second, decl.Start())
	require.NoError(t, s.ReportProgress(decl, 0.5, 4*time.Second))
	left, ok = s.TimeLeft(decl, 4*time.Second)
	require.True(t, ok)
	assert.Equal(t, 2*time.Second, left)
	require.Error(t, s.ReportProgress(decl, 2, 5*time.Second), "progress is in [0, 1]")

	// Locality.
	assert.Equal(t, fairness.NodeLocal, s.Locality(req, n))
	assert.Equal(t, []fairness.Location{{Node: "n1", Rack: "r1"}}, s.Locations(req))
	assert.Nil(t, s.Locations(forever))
}

func TestTaskStateString(t *testing.T) {
	for st, want := range map[cluster.TaskState]string{
		cluster.Pending: "pending", cluster.Running: "running", cluster.Finished: "finished",
		cluster.Cancelled: "cancelled", cluster.Reserved: "reserved", 0: "TaskState(0)", 9: "TaskState(9)",
	} {
		assert.Equal(t, want, st.String())
	}
	assert.Equal(t, "t7#backup", cluster.BackupID("t7"))
	s := newState(t)
	assert.Equal(t, 0, s.Count(0))
	assert.Equal(t, 0, s.Count(99), "an unknown state counts nothing")
}

func TestLocalityLevels(t *testing.T) {
	s := newState(t)
	n1 := addNode(t, s, "n1", "r1")
	n2 := addNode(t, s, "n2", "r1")
	n3 := addNode(t, s, "n3", "r2")
	j := addJob(t, s, "j")
	spec := task("t", "j", 1, 1)
	spec.Inputs = []string{"n1"}
	tk := submit(t, s, spec)[0]
	for _, tc := range []struct {
		n    *cluster.NodeInfo
		want fairness.Level
	}{{n1, fairness.NodeLocal}, {n2, fairness.RackLocal}, {n3, fairness.OffSwitch}} {
		assert.Equal(t, tc.want, s.Locality(tk, tc.n), tc.n.ID())
		best, ok := s.BestLocality(j, tc.n)
		require.True(t, ok)
		assert.Equal(t, tc.want, best, tc.n.ID())
		for _, worst := range levels {
			got, l, ok := s.FirstPending(j, tc.n, worst)
			assert.Equal(t, worst >= tc.want, ok, "%s at worst %v", tc.n.ID(), worst)
			if ok {
				assert.Same(t, tk, got)
				assert.Equal(t, tc.want, l)
			}
		}
	}
	require.NoError(t, s.Cancel(tk, 0))
	_, ok := s.BestLocality(j, n1)
	assert.False(t, ok, "nothing pending")
}

// TestCancelPendingWithdrawsDemand: a cancelled pending task leaves the fairness tree,
// the pending index and its demand class.
func TestCancelPendingWithdrawsDemand(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "")
	j := addJob(t, s, "j")
	tk := submit(t, s, task("t", "j", 2, 3))[0]
	require.NoError(t, s.Cancel(tk, 0))
	e, err := s.JobEntry("j")
	require.NoError(t, err)
	assert.Equal(t, 0, e.Pending)
	assert.Equal(t, resource.Tuple{}, e.Demand)
	assert.Empty(t, j.Classes())
	assert.Equal(t, 0, s.NumClasses())
	_, _, ok := s.FirstPending(j, n, fairness.OffSwitch)
	assert.False(t, ok)
	assert.Equal(t, 1, s.Count(cluster.Cancelled))
	assert.Equal(t, 0, s.Count(cluster.Pending))
}

// TestAdmitMaxShare: Admit reports a job over its queue's max share.
func TestAdmitMaxShare(t *testing.T) {
	s := newState(t)
	addNode(t, s, "n1", "")
	require.NoError(t, s.AddQueue("", "q", fairness.MaxShare(0.5)))
	require.NoError(t, s.AddJob(cluster.JobSpec{ID: "j", Queue: "q"}))
	j, _ := s.Job("j")
	require.NoError(t, s.Admit(j, tup(1, 1)))
	require.ErrorIs(t, s.Admit(j, tup(1, 6)), fairness.ErrOverMax)
}

// TestSubmitEmptyInputNode: a task whose input list names the empty node is either
// refused, or pending where the scheduler can find it. (It is accepted, counted as
// pending in Count, the fairness tree and its demand class, and missing from the
// pending index, whose Add refuses a location without a node: no FirstPending or
// AscendPending ever returns it, so it is never placed.)
func TestSubmitEmptyInputNode(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "")
	j := addJob(t, s, "j")
	spec := task("t", "j", 1, 1)
	spec.Inputs = []string{""}
	err := s.Submit(spec)
	if err != nil {
		require.ErrorIs(t, err, cluster.ErrInvalid)
		assert.Equal(t, 0, s.Count(cluster.Pending))
		return
	}
	e, err := s.JobEntry("j")
	require.NoError(t, err)
	require.Equal(t, 1, e.Pending)
	var found []string
	s.AscendPending(j, n, fairness.OffSwitch, func(tk *cluster.TaskInfo, _ fairness.Level) bool {
		found = append(found, tk.ID())
		return true
	})
	assert.Equal(t, []string{"t"}, found, "a pending task the pending index does not hold is never placed")
	_, ok := s.BestLocality(j, n)
	assert.True(t, ok, "BestLocality sees no pending task of the job")
}

// TestSetExternalLoadForeignNode: SetExternalLoad, like every other call taking a
// node, refuses a node that is not the state's (removed, or another state's). It
// does not check: the foreign node's timeline is changed and the node is put into this
// state's free index, so that ByFree yields a node the state does not hold.
func TestSetExternalLoadForeignNode(t *testing.T) {
	s := newState(t)
	addNode(t, s, "n1", "")
	gone := addNode(t, s, "n2", "")
	_, err := s.RemoveNode("n2")
	require.NoError(t, err)

	o := newState(t)
	foreign := addNode(t, o, "x", "")

	for _, n := range []*cluster.NodeInfo{gone, foreign} {
		_, err := s.SetExternalLoad(n, 0, tup(1, 1))
		assert.ErrorIs(t, err, cluster.ErrUnknownNode, n.ID())
		assert.Equal(t, []string{"n1"}, byFree(s, math.MinInt64), "after a load report on %s", n.ID())
	}
	assert.Equal(t, []string{"x"}, byFree(o, math.MinInt64))
	assert.Equal(t, capacity, foreign.Timeline().FreeAt(0), "another state's node is left alone")
}

// TestErrorsWrapSentinels: every sentinel is distinct, so errors.Is tells them apart.
func TestErrorsWrapSentinels(t *testing.T) {
	all := []error{cluster.ErrUnknownNode, cluster.ErrUnknownTask, cluster.ErrUnknownJob, cluster.ErrUnknownQueue, cluster.ErrDuplicate, cluster.ErrInvalid, cluster.ErrState}
	for i, a := range all {
		for k, b := range all {
			assert.Equal(t, i == k, errors.Is(a, b), "%v / %v", a, b)
		}
	}
	assert.True(t, slices.Contains(all, cluster.ErrState))
}

// TestWalkWithNodeChanges: a node joining or leaving during a Walk does not disturb
// the walk: every job with pending tasks is visited exactly once. (AddNode and
// RemoveNode change the fairness tree's capacity at once, not when the walk ends as
// other tree changes do; fairness.Tree.SetCapacity rebuilds the B-trees the walk is
// iterating, and the walk visits a job twice.)
func TestWalkWithNodeChanges(t *testing.T) {
	for _, change := range []string{"add", "remove"} {
		t.Run(change, func(t *testing.T) {
			s := newState(t)
			n0 := addNode(t, s, "n0", "")
			for i := 0; i < 5; i++ {
				addNode(t, s, fmt.Sprintf("spare%d", i), "")
			}
			var specs []cluster.TaskSpec
			for i := 0; i < 40; i++ {
				id := fmt.Sprintf("j%02d", i)
				addJob(t, s, id)
				specs = append(specs, task("t"+id, id, int64(i%3), int64(i%4)))
			}
			ts := submit(t, s, specs...)
			for i := 0; i < len(ts); i += 3 {
				_ = s.Reserve(ts[i], n0, held(ts[i], 0)) // until n0 is full
			}
			want := map[string]bool{}
			s.Walk(func(j *cluster.JobInfo) bool {
				want[j.ID()] = true
				return true
			})
			require.Len(t, want, 31)
			seen := map[string]int{}
			k := 0
			s.Walk(func(j *cluster.JobInfo) bool {
				seen[j.ID()]++
				if k < 5 {
					if change == "add" {
						addNode(t, s, fmt.Sprintf("late%d", k), "")
					} else {
						_, err := s.RemoveNode(fmt.Sprintf("spare%d", k))
						require.NoError(t, err)
					}
				}
				k++
				return true
			})
			for id, c := range seen {
				assert.Equal(t, 1, c, "job %s visited %d times in one walk", id, c)
			}
			assert.Len(t, seen, len(want))
		})
	}
}

// TestLocalityAfterNodeChanges: the pending index's locality (FirstPending,
// BestLocality) agrees with Locality after the node holding a task's input joins or
// leaves. (The index records the input nodes' racks when the task becomes pending, ""
// for a node not held, and never updates them; Locality reads the racks now. A task
// submitted before its input node joins is never rack-local in the index; one whose
// input node left stays rack-local there, while Locality says off-switch.)
func TestLocalityAfterNodeChanges(t *testing.T) {
	t.Run("joins", func(t *testing.T) {
		s := newState(t)
		j := addJob(t, s, "j")
		spec := task("t", "j", 1, 1)
		spec.Inputs = []string{"n1"}
		tk := submit(t, s, spec)[0]
		addNode(t, s, "n1", "r1")
		n2 := addNode(t, s, "n2", "r1")
		require.Equal(t, fairness.RackLocal, s.Locality(tk, n2))
		best, ok := s.BestLocality(j, n2)
		require.True(t, ok)
		assert.Equal(t, fairness.RackLocal, best, "BestLocality disagrees with Locality")
		_, _, ok = s.FirstPending(j, n2, fairness.RackLocal)
		assert.True(t, ok, "FirstPending finds no rack-local task where Locality says there is one")
	})
	t.Run("leaves", func(t *testing.T) {
		s := newState(t)
		addNode(t, s, "n1", "r1")
		n2 := addNode(t, s, "n2", "r1")
		j := addJob(t, s, "j")
		spec := task("t", "j", 1, 1)
		spec.Inputs = []string{"n1"}
		tk := submit(t, s, spec)[0]
		_, err := s.RemoveNode("n1")
		require.NoError(t, err)
		require.Equal(t, fairness.OffSwitch, s.Locality(tk, n2))
		best, ok := s.BestLocality(j, n2)
		require.True(t, ok)
		assert.Equal(t, fairness.OffSwitch, best, "BestLocality disagrees with Locality")
		_, _, ok = s.FirstPending(j, n2, fairness.RackLocal)
		assert.False(t, ok, "FirstPending finds a rack-local task where Locality says it is off-switch")
	})
}

// Holds answers "could some node hold this, even empty?" as nodes of various shapes
// come and go.
func TestHolds(t *testing.T) {
	s := newState(t)
	add := func(id string, c resource.Tuple) {
		require.NoError(t, s.AddNode(cluster.NodeSpec{ID: id, Capacity: c}))
	}
	wide, tall := tup(8000, 2<<30), tup(2000, 16<<30)
	assert.False(t, s.Holds(tup(1, 1)), "no node")
	add("w1", wide)
	add("small", tup(1000, 1<<30)) // covered by wide
	add("t1", tall)
	add("w2", wide)
	assert.True(t, s.Holds(tup(8000, 2<<30)))
	assert.True(t, s.Holds(tup(2000, 16<<30)))
	assert.False(t, s.Holds(tup(8000, 16<<30)), "no single node has both")
	_, err := s.RemoveNode("w1")
	require.NoError(t, err)
	assert.True(t, s.Holds(tup(8000, 2<<30)), "w2 has the same shape")
	_, err = s.RemoveNode("w2")
	require.NoError(t, err)
	assert.False(t, s.Holds(tup(8000, 2<<30)))
	assert.True(t, s.Holds(tup(1000, 1<<30)), "covered by tall")
	_, err = s.RemoveNode("t1")
	require.NoError(t, err)
	assert.True(t, s.Holds(tup(1000, 1<<30)), "small alone")
	assert.False(t, s.Holds(tup(1001, 1)))
}

func TestMoveStarts(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("a", "j", 1, 4), task("b", "j", 1, 4), task("c", "j", 1, 1), task("d", "j", 1, 7))
	a, b, c, d := ts[0], ts[1], ts[2], ts[3]
	ten := func(mem int64) stage.Profile { return constant(t, tup(1, mem), 10*time.Second) }
	require.NoError(t, s.Reserve(a, n, cluster.Reservation{Hold: ten(4)}))
	require.NoError(t, s.Reserve(b, n, cluster.Reservation{Start: 5 * time.Second, Hold: ten(4)}))
	require.NoError(t, s.Reserve(d, n, cluster.Reservation{Start: 20 * time.Second, Hold: ten(7)}))
	mem := func(at time.Duration) int64 { return n.Timeline().FreeAt(at)[1] }

	require.NoError(t, s.MoveStarts(cluster.Move{Task: a, Start: 2 * time.Second}), "its own hold makes room for the overlap")
	assert.Equal(t, 2*time.Second, a.Start())
	assert.Equal(t, int64(2), mem(11*time.Second), "a and b hold 4 each at 11 s: a holds [2 s, 12 s)")
	assert.Equal(t, int64(6), mem(12*time.Second))
	assert.Equal(t, capacity[1], mem(time.Second), "nothing before 2 s")

	// a and b to 12 s together do not fit beside d from 20 s (4 + 4 + 7 > 10): neither
	// moves, though the first alone would be checked before the second.
	before := n.Timeline().AppendSegments(nil, 0, stage.Forever)
	checkRefusals(t, s, ts, []refusal{
		{"both do not fit at once", func() error {
			return s.MoveStarts(cluster.Move{Task: a, Start: 12 * time.Second}, cluster.Move{Task: b, Start: 12 * time.Second})
		}, stage.ErrNoRoom},
		{"no room at the new start", func() error { return s.MoveStarts(cluster.Move{Task: a, Start: 20 * time.Second}) }, stage.ErrNoRoom},
		{"negative start", func() error { return s.MoveStarts(cluster.Move{Task: a, Start: -1}) }, cluster.ErrInvalid},
		{"pending", func() error { return s.MoveStarts(cluster.Move{Task: c, Start: time.Second}) }, cluster.ErrState},
		{"listed twice", func() error {
			return s.MoveStarts(cluster.Move{Task: a, Start: 3 * time.Second}, cluster.Move{Task: a, Start: 4 * time.Second})
		}, cluster.ErrState},
		{"nil", func() error { return s.MoveStarts(cluster.Move{Start: time.Second}) }, cluster.ErrUnknownTask},
	})
	assert.Equal(t, before, n.Timeline().AppendSegments(nil, 0, stage.Forever), "a refused move changes nothing")
	assert.Equal(t, 2*time.Second, a.Start())
	assert.Equal(t, 5*time.Second, b.Start())

	require.NoError(t, s.MoveStarts(cluster.Move{Task: a, Start: 6 * time.Second}, cluster.Move{Task: b, Start: 6 * time.Second}))
	assert.Equal(t, int64(2), mem(15*time.Second))
	require.NoError(t, s.Commit(b))
	assert.ErrorIs(t, s.MoveStarts(cluster.Move{Task: b, Start: time.Second}), cluster.ErrState, "committed")
}

// A task's wait goes on through a reservation rolled back, and starts afresh after an
// eviction.
func TestPendingSince(t *testing.T) {
	s := newState(t)
	n := addNode(t, s, "n1", "")
	addJob(t, s, "j")
	s.Advance(5 * time.Second)
	tk := submit(t, s, cluster.TaskSpec{ID: "a", Job: "j", Request: tup(1, 1), Submitted: 2 * time.Second})[0]
	assert.Equal(t, 5*time.Second, tk.PendingSince(), "the later of Submitted and the clock")
	s.Advance(8 * time.Second)
	require.NoError(t, s.Reserve(tk, n, held(tk, 8*time.Second)))
	require.NoError(t, s.Unreserve(tk))
	assert.Equal(t, 5*time.Second, tk.PendingSince(), "as before the reservation")
	place(t, s, tk, n, 8*time.Second)
	s.Advance(9 * time.Second)
	require.NoError(t, s.Evict(tk))
	assert.Equal(t, 9*time.Second, tk.PendingSince(), "pending again from the eviction")
}

// A batch that leaves several gangs short is refused naming the first of them in the
// batch, the same on every call (not whichever a map yields first).
func TestShortGangsNamedInBatchOrder(t *testing.T) {
	s, err := cluster.New(schema)
	require.NoError(t, err)
	var batch []cluster.TaskSpec
	for _, id := range []string{"g5", "g1", "g9", "g3"} {
		require.NoError(t, s.AddJob(cluster.JobSpec{ID: id, MinMember: 3}))
		batch = append(batch, cluster.TaskSpec{ID: id + "-t", Job: id, Request: tup(1, 1)})
	}
	for range 20 {
		err := s.Submit(batch...)
		require.ErrorIs(t, err, cluster.ErrInvalid)
		assert.Contains(t, err.Error(), `gang job "g5"`)
	}
	assert.Zero(t, s.Count(cluster.Pending), "a refused batch changes nothing")
}
