package finegrain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
)

// TestUpdateNode: a node's capacity grows and shrinks under its running tasks, which
// keep their reservations, devices and state; the node keeps its mode; its free
// resources move by the difference, over-committed when the tasks hold more than the
// new capacity, so that nothing more is placed there until they end.
func TestUpdateNode(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	node := finegrain.Node{ID: "n", Rack: "r", Capacity: schema.MustTuple(4000, 8*gib), GPU: gpu.Spec{Model: "T4", Count: 2}}
	require.NoError(t, s.AddNode(node))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	task := func(id string, cpu, mem int64, dem gpu.Demand) finegrain.Task {
		return finegrain.Task{ID: id, Job: "j", Request: schema.MustTuple(cpu, mem), GPU: dem}
	}
	require.NoError(t, s.Submit(task("a", 2000, 4*gib, gpu.Share(600)), task("b", 2000, 4*gib, gpu.Whole(1))))
	a, err := s.Place("a", 0)
	require.NoError(t, err)
	b, err := s.Place("b", 0)
	require.NoError(t, err)
	require.NoError(t, s.Adjuster().SetMode("n", policy.ModeCoarseGrained))
	devices := func() []int64 {
		d, err := s.NodeDevices("n")
		require.NoError(t, err)
		return gpuFrees(&d)
	}
	assert.Equal(t, []int64{400, 0}, devices())

	// The node is full; a task asking a whole GPU finds none.
	require.NoError(t, s.Submit(task("c", 1000, gib, gpu.Whole(1))))
	_, err = s.Place("c", time.Second)
	require.Error(t, err)

	// It grows: CPU, memory and two more V100s (the model labelled late).
	grown := node
	grown.Capacity = schema.MustTuple(8000, 16*gib)
	grown.GPU = gpu.Spec{Model: "V100", Count: 4}
	require.NoError(t, s.UpdateNode(grown, 2*time.Second))
	free, err := s.NodeFree("n", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(4000, 8*gib), free)
	assert.Equal(t, []int64{400, 0, 1000, 1000}, devices(), "the tasks keep their devices")
	d, err := s.NodeDevices("n")
	require.NoError(t, err)
	assert.Equal(t, "V100", d.Model())
	for _, want := range []finegrain.Assignment{a, b} {
		st, _ := s.TaskState(want.Task)
		assert.Equal(t, finegrain.Running, st, want.Task)
	}
	assert.Equal(t, policy.ModeCoarseGrained, s.Adjuster().Mode("n"), "the node keeps its mode")
	c, err := s.Place("c", 3*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []int{2}, c.Devices.Devices)

	// It shrinks below what its tasks hold: over-committed, it takes nothing more.
	shrunk := grown
	shrunk.Capacity = schema.MustTuple(4000, 6*gib)
	require.NoError(t, s.UpdateNode(shrunk, 4*time.Second))
	free, err = s.NodeFree("n", 4*time.Second)
	require.NoError(t, err)
	assert.Equal(t, resource.Tuple{-1000, -3 * gib}, free)
	require.NoError(t, s.Submit(task("d", 100, 1<<20, gpu.Demand{})))
	_, err = s.Place("d", 5*time.Second)
	require.Error(t, err)
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, s.Finished(id, 6*time.Second, nil))
	}
	free, err = s.NodeFree("n", 6*time.Second)
	require.NoError(t, err)
	assert.Equal(t, shrunk.Capacity, free, "all ended: the new capacity is free")
	assert.Equal(t, []int64{1000, 1000, 1000, 1000}, devices())
	_, err = s.Place("d", 7*time.Second)
	require.NoError(t, err)
}

// TestUpdateNodeRefused: an unknown node, another rack, a bad capacity or GPU spec,
// a time going backwards, or fewer devices than a task holds is refused, and nothing
// changes.
func TestUpdateNodeRefused(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	node := finegrain.Node{ID: "n", Rack: "r", Capacity: schema.MustTuple(4000, 8*gib), GPU: gpu.Spec{Model: "T4", Count: 3}}
	require.NoError(t, s.AddNode(node))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "a", Job: "j", Request: schema.MustTuple(1000, gib), GPU: gpu.Whole(2)}))
	_, err := s.Place("a", 10*time.Second)
	require.NoError(t, err)
	state := func() (resource.Tuple, []int64) {
		free, err := s.NodeFree("n", 10*time.Second)
		require.NoError(t, err)
		d, err := s.NodeDevices("n")
		require.NoError(t, err)
		return free, gpuFrees(&d)
	}
	free, devs := state()
	with := func(f func(*finegrain.Node)) finegrain.Node { n := node; f(&n); return n }
	for _, c := range []struct {
		name string
		node finegrain.Node
		at   time.Duration
		is   error
	}{
		{"unknown node", with(func(n *finegrain.Node) { n.ID = "m" }), 10 * time.Second, finegrain.ErrUnknownNode},
		{"another rack", with(func(n *finegrain.Node) { n.Rack = "s" }), 10 * time.Second, finegrain.ErrInvalid},
		{"zero capacity", with(func(n *finegrain.Node) { n.Capacity = resource.Tuple{} }), 10 * time.Second, finegrain.ErrInvalid},
		{"negative capacity", with(func(n *finegrain.Node) { n.Capacity = resource.Tuple{-1, 1} }), 10 * time.Second, resource.ErrNegative},
		{"too many devices", with(func(n *finegrain.Node) { n.GPU.Count = gpu.MaxDevices + 1 }), 10 * time.Second, finegrain.ErrInvalid},
		{"a held device goes", with(func(n *finegrain.Node) { n.GPU.Count = 1 }), 10 * time.Second, finegrain.ErrState},
		{"time going backwards", with(func(n *finegrain.Node) { n.Capacity[0] = 8000 }), 0, finegrain.ErrInvalid},
	} {
		err := s.UpdateNode(c.node, c.at)
		assert.ErrorIs(t, err, c.is, c.name)
		f, d := state()
		assert.Equal(t, free, f, c.name)
		assert.Equal(t, devs, d, c.name)
	}
	// Devices the task does not hold may go.
	require.NoError(t, s.UpdateNode(with(func(n *finegrain.Node) { n.GPU.Count = 2 }), 11*time.Second))
	_, d := state()
	assert.Equal(t, []int64{0, 0}, d)
}

// TestSetExternalDevices: shares of devices used by work the scheduler did not place
// are held, device by device, at most what the tasks leave free, and more as they
// give it back; a new setting replaces the last, and an update of the node holds them
// again against its new devices.
func TestSetExternalDevices(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	node := finegrain.Node{ID: "n", Capacity: schema.MustTuple(16000, 64*gib), GPU: gpu.Spec{Model: "T4", Count: 2}}
	require.NoError(t, s.AddNode(node))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	devices := func() []int64 {
		d, err := s.NodeDevices("n")
		require.NoError(t, err)
		return gpuFrees(&d)
	}
	a := gpuPlace(t, s, gpuTask("a", gpu.Share(700)), 0)
	require.Equal(t, []int{0}, a.Devices.Devices)

	held, err := s.SetExternalDevices("n", time.Second, []int64{500, 1000, 300})
	require.NoError(t, err)
	assert.Equal(t, []int64{300, 1000}, held, "what a leaves of device 0; a third device the node lacks")
	assert.Equal(t, []int64{0, 0}, devices())
	require.NoError(t, s.Submit(gpuTask("b", gpu.Share(100))))
	_, err = s.Place("b", time.Second)
	refusedNoGPU(t, err, "every device is held")

	require.NoError(t, s.Finished("a", 2*time.Second, nil))
	assert.Equal(t, []int64{500, 0}, devices(), "device 0's external share grows to what was asked")
	b, err := s.Place("b", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, b.Devices.Devices)

	// The node gets two more devices, and drops none the work holds.
	grown := node
	grown.GPU.Count = 4
	require.NoError(t, s.UpdateNode(grown, 3*time.Second))
	assert.Equal(t, []int64{400, 0, 700, 1000}, devices(), "the share set for a third device is held once the node has it")

	held, err = s.SetExternalDevices("n", 4*time.Second, []int64{0, 0, 300})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 300, 0}, held)
	assert.Equal(t, []int64{900, 1000, 700, 1000}, devices())
	held, err = s.SetExternalDevices("n", 4*time.Second, nil)
	require.NoError(t, err)
	assert.Nil(t, held)
	assert.Equal(t, []int64{900, 1000, 1000, 1000}, devices())

	for _, used := range [][]int64{{-1}, {1001}} {
		_, err := s.SetExternalDevices("n", 5*time.Second, used)
		assert.ErrorIs(t, err, finegrain.ErrInvalid, "%v", used)
	}
	_, err = s.SetExternalDevices("m", 5*time.Second, nil)
	assert.True(t, errors.Is(err, finegrain.ErrUnknownNode))
	_, err = s.NodeDevices("m")
	assert.ErrorIs(t, err, finegrain.ErrUnknownNode)
	assert.Equal(t, []int64{900, 1000, 1000, 1000}, devices(), "refused settings change nothing")
}
