package finegrain_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/speculate"
)

// gpuScorers are the GPU scorer settings the tests run under: none (the state's best
// fit, and WithScorer alone ranks the nodes), and each scorer of package gpu.
func gpuScorers(t testing.TB) map[string][]finegrain.Option {
	fgd, err := gpu.NewFGD([]gpu.WeightedShape{
		{Shape: gpu.Shape{GPU: gpu.Share(500)}, Weight: 3},
		{Shape: gpu.Shape{GPU: gpu.Whole(1)}, Weight: 1},
	}, 0)
	require.NoError(t, err)
	return map[string][]finegrain.Option{
		"no GPU scorer": nil,
		"BestFit":       {finegrain.WithGPUScorer(gpu.DeviceBestFit{})},
		"DotProduct":    {finegrain.WithGPUScorer(gpu.DotProduct{})},
		"Packing":       {finegrain.WithGPUScorer(gpu.Packing{})},
		"FGD":           {finegrain.WithGPUScorer(fgd)},
	}
}

// gpuTask is a task of job "j" asking for 100 mCPU, 1 GiB and dem.
func gpuTask(id string, dem gpu.Demand) finegrain.Task {
	return finegrain.Task{ID: id, Job: "j", Request: schema.MustTuple(100, gib), GPU: dem}
}

// gpuScheduler is a scheduler using requests as they are, with job "j" and the given
// nodes: <16 cores, 64 GiB> each, with their GPUs.
func gpuScheduler(t testing.TB, opts []finegrain.Option, nodes map[string]gpu.Spec) *finegrain.Scheduler {
	s := newScheduler(t, append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}, opts...)...)
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		require.NoError(t, s.AddNode(finegrain.Node{ID: id, Rack: "r", Capacity: schema.MustTuple(16000, 64*gib), GPU: nodes[id]}))
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	return s
}

// gpuPlace submits task and places it (push), failing the test on an error.
func gpuPlace(t *testing.T, s *finegrain.Scheduler, task finegrain.Task, now time.Duration) finegrain.Assignment {
	t.Helper()
	require.NoError(t, s.Submit(task))
	a, err := s.Place(task.ID, now)
	require.NoError(t, err, "place %s", task.ID)
	return a
}

// refusedNoGPU checks that err is a *PlacementError for want of a GPU device.
func refusedNoGPU(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	var pe *finegrain.PlacementError
	require.True(t, errors.As(err, &pe), "error %v is not a *PlacementError", err)
	assert.Equal(t, framework.NoGPU, pe.Reason, msgAndArgs...)
	assert.Equal(t, "GPUFit", pe.Plugin, msgAndArgs...)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, msgAndArgs...)
}

// The devices a task holds come back in its Assignment, best fit without a GPU
// scorer: a share on the tightest device that holds it (ties to the lowest index),
// whole devices on the first free ones. Changing the returned devices changes nothing
// in the scheduler.
func TestGPUAssignmentDevices(t *testing.T) {
	s := gpuScheduler(t, nil, map[string]gpu.Spec{"n": {Model: "V100", Count: 4}})
	for _, c := range []struct {
		id   string
		dem  gpu.Demand
		want []int
	}{
		{"a", gpu.Share(300), []int{0}},   // [700, 1000, 1000, 1000]
		{"b", gpu.Whole(2), []int{1, 2}},  // [700, 0, 0, 1000]
		{"c", gpu.Share(800), []int{3}},   // [700, 0, 0, 200]
		{"d", gpu.Share(700), []int{0}},   // [0, 0, 0, 200]
		{"e", gpu.Share(1), []int{3}},     // [0, 0, 0, 199]
		{"cpu", gpu.Demand{}, []int(nil)}, // no GPU demand: no devices
	} {
		a := gpuPlace(t, s, gpuTask(c.id, c.dem), 0)
		assert.Equal(t, "n", a.Node)
		if c.want == nil {
			assert.True(t, a.Devices.IsZero(), "%s holds %v", c.id, a.Devices)
			continue
		}
		assert.Equal(t, gpu.Allocation{Devices: c.want, Milli: c.dem.Milli}, a.Devices, c.id)
		a.Devices.Devices[0] = 3 // the embedder's copy
	}
	require.NoError(t, s.Submit(gpuTask("f", gpu.Share(200))))
	_, err := s.Place("f", time.Second)
	refusedNoGPU(t, err, "199 free at most")
	st, _ := s.TaskState("f")
	assert.Equal(t, finegrain.Pending, st)

	require.NoError(t, s.Finished("b", 2*time.Second, nil))
	a, err := s.Place("f", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, gpu.Allocation{Devices: []int{1}, Milli: 200}, a.Devices, "b's devices are free again; 199 is too little")
}

// 8 × 0.6 free is not 4.8 free: with each of eight devices 40% used, a task that
// needs one whole device is refused (push) or passed over (pull), and gets the first
// device that frees up.
func TestGPUWholeRefusedOnEightPartlyUsedDevices(t *testing.T) {
	for name, opts := range gpuScorers(t) {
		for _, pull := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pull %v", name, pull), func(t *testing.T) {
				s := gpuScheduler(t, opts, map[string]gpu.Spec{"n": {Model: "V100", Count: 8}})
				// Pads of 600 take a device each (400 left is too little for the next);
				// then shares of 400 fill each device's 400; then the pads finish.
				for i := 0; i < 8; i++ {
					a := gpuPlace(t, s, gpuTask(fmt.Sprintf("pad%d", i), gpu.Share(600)), 0)
					require.Len(t, a.Devices.Devices, 1)
				}
				held := map[int]string{}
				for i := 0; i < 8; i++ {
					id := fmt.Sprintf("keep%d", i)
					a := gpuPlace(t, s, gpuTask(id, gpu.Share(400)), 0)
					require.Len(t, a.Devices.Devices, 1)
					require.NotContains(t, held, a.Devices.Devices[0], "two shares of 400 on one device with 400 free")
					held[a.Devices.Devices[0]] = id
				}
				for i := 0; i < 8; i++ {
					require.NoError(t, s.Finished(fmt.Sprintf("pad%d", i), time.Second, nil))
				}
				require.NoError(t, s.Submit(gpuTask("whole", gpu.Whole(1))))
				if pull {
					d, err := s.Heartbeat("n", 2*time.Second)
					require.NoError(t, err)
					assert.Empty(t, d.Assignments, "4.8 GPU free in sum, no device whole")
				} else {
					_, err := s.Place("whole", 2*time.Second)
					refusedNoGPU(t, err, "4.8 GPU free in sum, no device whole")
				}
				st, _ := s.TaskState("whole")
				require.Equal(t, finegrain.Pending, st)

				require.NoError(t, s.Finished(held[5], 3*time.Second, nil))
				var a finegrain.Assignment
				if pull {
					d, err := s.Heartbeat("n", 3*time.Second)
					require.NoError(t, err)
					require.Len(t, d.Assignments, 1)
					a = d.Assignments[0]
				} else {
					var err error
					a, err = s.Place("whole", 3*time.Second)
					require.NoError(t, err)
				}
				assert.Equal(t, "whole", a.Task)
				assert.Equal(t, gpu.Allocation{Devices: []int{5}, Milli: gpu.Milli}, a.Devices, "the device its share left")
			})
		}
	}
}

// A task runs only on devices of a model it allows, in push and pull mode.
func TestGPUModelConstraints(t *testing.T) {
	nodes := map[string]gpu.Spec{"t4": {Model: "T4", Count: 2}, "v100": {Model: "V100", Count: 2}, "cpu": {}}
	for name, opts := range gpuScorers(t) {
		t.Run(name, func(t *testing.T) {
			s := gpuScheduler(t, opts, nodes)
			a := gpuPlace(t, s, gpuTask("v", gpu.Demand{Count: 1, Milli: 500, Models: []string{"V100"}}), 0)
			assert.Equal(t, "v100", a.Node)
			assert.Len(t, a.Devices.Devices, 1)
			a = gpuPlace(t, s, gpuTask("t", gpu.Demand{Count: 1, Milli: gpu.Milli, Models: []string{"P100", "T4"}}), 0)
			assert.Equal(t, "t4", a.Node)
			// Each GPU node has one whole device left: two whole devices of allowed
			// models exist, but not on one node.
			require.NoError(t, s.Submit(gpuTask("w", gpu.Demand{Count: 2, Milli: gpu.Milli, Models: []string{"V100", "T4"}})))
			_, err := s.Place("w", 0)
			refusedNoGPU(t, err)
			// A model no node has: refused at Submit.
			err = s.Submit(gpuTask("a100", gpu.Demand{Count: 1, Milli: 10, Models: []string{"A100"}}))
			require.ErrorIs(t, err, finegrain.ErrUnresolvable)
			assert.Contains(t, err.Error(), "no node has the GPU devices it asks")
			// Any model: a GPU node, never the node without GPUs.
			a = gpuPlace(t, s, gpuTask("any", gpu.Share(100)), 0)
			assert.Contains(t, []string{"t4", "v100"}, a.Node)
			assert.Len(t, a.Devices.Devices, 1)
			// No GPU demand: the node without GPUs is fine.
			for i := 0; i < 6; i++ {
				a = gpuPlace(t, s, gpuTask(fmt.Sprintf("cpu%d", i), gpu.Demand{}), 0)
				assert.True(t, a.Devices.IsZero())
			}
		})
	}
	t.Run("pull", func(t *testing.T) {
		s := gpuScheduler(t, nil, nodes)
		require.NoError(t, s.Submit(gpuTask("v", gpu.Demand{Count: 1, Milli: 500, Models: []string{"V100"}})))
		for _, n := range []string{"t4", "cpu"} {
			d, err := s.Heartbeat(n, 0)
			require.NoError(t, err)
			assert.Empty(t, d.Assignments, "a V100 task on %s", n)
		}
		d, err := s.Heartbeat("v100", 0)
		require.NoError(t, err)
		require.Len(t, d.Assignments, 1)
		assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 500}, d.Assignments[0].Devices)
	})
}

// Whatever ends a placement — the task finishes, fails, is cancelled, or its node is
// removed — frees its devices: the next task gets them.
func TestGPUDevicesFreedWhenPlacementEnds(t *testing.T) {
	for _, end := range []string{"finish", "fail", "cancel", "remove node"} {
		for name, opts := range gpuScorers(t) {
			t.Run(end+"/"+name, func(t *testing.T) {
				s := gpuScheduler(t, opts, map[string]gpu.Spec{"n": {Model: "V100", Count: 1}})
				a := gpuPlace(t, s, gpuTask("first", gpu.Whole(1)), 0)
				require.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: gpu.Milli}, a.Devices)
				require.NoError(t, s.Submit(gpuTask("second", gpu.Share(1))))
				_, err := s.Place("second", 0)
				refusedNoGPU(t, err, "a whole-device task shares nothing")

				now := time.Second
				wantFirst := finegrain.Pending
				switch end {
				case "finish":
					require.NoError(t, s.Finished("first", now, nil))
					wantFirst = finegrain.Finished
				case "fail":
					require.NoError(t, s.Failed("first", now))
				case "cancel":
					require.NoError(t, s.Cancel("first", now))
					wantFirst = finegrain.Cancelled
				case "remove node":
					ids, err := s.RemoveNode("n", now)
					require.NoError(t, err)
					assert.Equal(t, []string{"first"}, ids)
					require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(16000, 64*gib), GPU: gpu.Spec{Model: "T4", Count: 1}}))
				}
				st, _ := s.TaskState("first")
				require.Equal(t, wantFirst, st)
				a, err = s.Place("second", now)
				require.NoError(t, err)
				assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 1}, a.Devices)
				if wantFirst == finegrain.Pending {
					_, err := s.Place("first", now)
					refusedNoGPU(t, err, "the share holds part of the only device")
				}
			})
		}
	}
}

// Invalid GPU demands and specs are refused with ErrInvalid, and nothing changes.
func TestGPUInvalidRefused(t *testing.T) {
	s := gpuScheduler(t, nil, map[string]gpu.Spec{"n": {Model: "V100", Count: 2}})
	for _, dem := range []gpu.Demand{
		{Count: -1, Milli: gpu.Milli},
		gpu.Whole(gpu.MaxDevices + 1),
		{Milli: 10},
		{Models: []string{"V100"}},
		gpu.Share(0),
		gpu.Share(gpu.Milli + 1),
		{Count: 2, Milli: 500},
		{Count: 1, Milli: 100, Models: []string{"V100", ""}},
	} {
		err := s.Submit(gpuTask("bad", dem))
		assert.ErrorIs(t, err, finegrain.ErrInvalid, "%+v", dem)
		_, known := s.TaskState("bad")
		assert.False(t, known, "%+v: the task was added", dem)
		// All or none: a valid task submitted with it is not added either.
		err = s.Submit(gpuTask("good", gpu.Share(100)), gpuTask("bad", dem))
		assert.ErrorIs(t, err, finegrain.ErrInvalid, "%+v", dem)
		_, known = s.TaskState("good")
		assert.False(t, known, "%+v: the valid task of the batch was added", dem)
	}
	p, r, f, c := s.Counts()
	assert.Equal(t, [4]int{0, 0, 0, 0}, [4]int{p, r, f, c})

	for _, spec := range []gpu.Spec{{Count: -1}, {Model: "T4", Count: gpu.MaxDevices + 1}} {
		err := s.AddNode(finegrain.Node{ID: "m", Capacity: schema.MustTuple(1000, gib), GPU: spec})
		assert.ErrorIs(t, err, finegrain.ErrInvalid, "%+v", spec)
		_, err = s.NodeFree("m", 0)
		assert.ErrorIs(t, err, finegrain.ErrUnknownNode, "%+v: the node was added", spec)
	}
	require.NoError(t, s.AddNode(finegrain.Node{ID: "m", Capacity: schema.MustTuple(1000, gib), GPU: gpu.Spec{Model: "T4", Count: gpu.MaxDevices}}),
		"nothing of the refused node is left")

	// nil (or a nil pointer) switches the GPU scorer off.
	for _, sc := range []gpu.DeviceScorer{nil, (*gpu.FGD)(nil)} {
		off, err := finegrain.New(schema, finegrain.WithGPUScorer(gpu.DeviceBestFit{}), finegrain.WithGPUScorer(sc))
		require.NoError(t, err)
		assert.NotContains(t, off.Plugins()["Score"], "GPUScore")
	}
}

// Pull mode holds devices as push mode does: two whole-device tasks on a node of two
// devices, the third once one ends; shares of 600 one to a device.
func TestGPUPullRespectsDevices(t *testing.T) {
	s := gpuScheduler(t, nil, map[string]gpu.Spec{"n": {Model: "T4", Count: 2}})
	require.NoError(t, s.Submit(gpuTask("w0", gpu.Whole(1)), gpuTask("w1", gpu.Whole(1)), gpuTask("w2", gpu.Whole(1))))
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 2)
	got := map[string][]int{}
	for _, a := range d.Assignments {
		got[a.Task] = a.Devices.Devices
	}
	assert.Equal(t, map[string][]int{"w0": {0}, "w1": {1}}, got)
	d, err = s.Heartbeat("n", time.Second)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments)

	require.NoError(t, s.Finished("w1", 2*time.Second, nil))
	d, err = s.Heartbeat("n", 2*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "w2", d.Assignments[0].Task)
	assert.Equal(t, gpu.Allocation{Devices: []int{1}, Milli: gpu.Milli}, d.Assignments[0].Devices)

	s = gpuScheduler(t, nil, map[string]gpu.Spec{"n": {Model: "T4", Count: 2}})
	for i := 0; i < 4; i++ {
		require.NoError(t, s.Submit(gpuTask(fmt.Sprintf("s%d", i), gpu.Share(600))))
	}
	d, err = s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 2, "one share of 600 a device")
	assert.ElementsMatch(t, [][]int{{0}, {1}}, [][]int{d.Assignments[0].Devices.Devices, d.Assignments[1].Devices.Devices})
}

// A GPU scorer decides between nodes alike in CPU and memory: every scorer prefers
// the node with a device half used for a share of half a device (best fit, least
// aligned, packing, least fragmentation), where WithScorer's least-allocated default
// alone prefers the other node (it has 100 mCPU more free).
func TestGPUScorerChoosesNode(t *testing.T) {
	for name, opts := range gpuScorers(t) {
		t.Run(name, func(t *testing.T) {
			s := newScheduler(t, append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}, opts...)...)
			for _, id := range []string{"a", "b"} {
				require.NoError(t, s.AddNode(finegrain.Node{ID: id, Capacity: schema.MustTuple(8000, 16*gib), GPU: gpu.Spec{Model: "T4", Count: 2}}))
			}
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			// Pin a CPU task on a and a half-device task on b by pull.
			require.NoError(t, s.Submit(finegrain.Task{ID: "x", Job: "j", Request: schema.MustTuple(900, gib)}))
			d, err := s.Heartbeat("a", 0)
			require.NoError(t, err)
			require.Len(t, d.Assignments, 1)
			require.NoError(t, s.Submit(finegrain.Task{ID: "y", Job: "j", Request: schema.MustTuple(1000, gib), GPU: gpu.Share(500)}))
			d, err = s.Heartbeat("b", 0)
			require.NoError(t, err)
			require.Len(t, d.Assignments, 1)
			require.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 500}, d.Assignments[0].Devices)

			a := gpuPlace(t, s, finegrain.Task{ID: "z", Job: "j", Request: schema.MustTuple(1000, gib), GPU: gpu.Share(500)}, 0)
			if opts == nil {
				assert.Equal(t, "a", a.Node, "least allocated: a has more CPU free")
				assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 500}, a.Devices)
				return
			}
			assert.Equal(t, "b", a.Node)
			assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 500}, a.Devices, "the half-used device")
		})
	}
}

// The devices a GPU scorer chooses are the ones the task holds: with shares of half a
// device expected, FGD puts a share of 100 on the device with 600 free (leaving 500,
// still useful) where best fit would take the one with 550 (leaving 450, wasted).
func TestGPUScorerChoosesDevices(t *testing.T) {
	fgd, err := gpu.NewFGD([]gpu.WeightedShape{{Shape: gpu.Shape{GPU: gpu.Share(500)}, Weight: 1}}, 0)
	require.NoError(t, err)
	s := gpuScheduler(t, []finegrain.Option{finegrain.WithGPUScorer(fgd)}, map[string]gpu.Spec{"n": {Model: "T4", Count: 3}})
	a := gpuPlace(t, s, gpuTask("a", gpu.Share(400)), 0)
	require.Equal(t, []int{0}, a.Devices.Devices, "all alike: the first")
	// 450 on device 0 would leave 150 that no share of 500 can use; on device 1, 550.
	a = gpuPlace(t, s, gpuTask("b", gpu.Share(450)), 0)
	require.Equal(t, []int{1}, a.Devices.Devices)
	// Free [600, 550, 1000].
	a = gpuPlace(t, s, gpuTask("c", gpu.Share(100)), 0)
	assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 100}, a.Devices, "FGD's device, not the best fit (1)")
}

// A task whose GPU demand no node of the cluster can hold even empty (more devices
// than any node has, or a model none has) must not hold its job's other tasks back in
// pull mode, as a task too big in memory does not (TestUnfitHeadTaskDoesNotBlockItsJob).
// The pass looks past a task refused for want of devices no node has
// (plugins/unfit.go, unplaceable: NoGPU and !State.HoldsGPU), as for room.
func TestGPUUnplaceableHeadTaskDoesNotBlockItsJob(t *testing.T) {
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	for strategy, opts := range map[string][]finegrain.Option{
		"delay scheduling": {finegrain.WithPrediction(false), finegrain.WithSkipDetails(4)},
		"no delay":         {finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSkipDetails(4)},
		"pre-release list": {finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer)), finegrain.WithSkipDetails(4)},
	} {
		opts := append(opts[:len(opts):len(opts)], finegrain.WithUnresolvableAccepted(true))
		for name, huge := range map[string]gpu.Demand{
			"more devices than any node": gpu.Whole(2),
			"a model no node has":        {Count: 1, Milli: 100, Models: []string{"A100"}},
		} {
			t.Run(strategy+"/"+name, func(t *testing.T) {
				s := newScheduler(t, opts...)
				require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(16000, 64*gib), GPU: gpu.Spec{Model: "T4", Count: 1}}))
				require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
				require.NoError(t, s.Submit(gpuTask("huge", huge), gpuTask("small", gpu.Share(100))))
				var placed []string
				var skips []finegrain.Skip
				for beat := 0; beat < 3 && len(placed) == 0; beat++ {
					d, err := s.Heartbeat("n", time.Duration(beat)*time.Second)
					require.NoError(t, err)
					for _, a := range d.Assignments {
						placed = append(placed, a.Task)
					}
					skips = d.Skips
				}
				assert.Equal(t, []string{"small"}, placed, "the job's task that fits, in three heartbeats (skips %v; push places it: %v)", skips, gpuPushPlaces(s, "small", 3*time.Second))
			})
		}
	}
}

// gpuPushPlaces reports whether Place places pending task id at now.
func gpuPushPlaces(s *finegrain.Scheduler, id string, now time.Duration) bool {
	st, _ := s.TaskState(id)
	if st != finegrain.Pending {
		return false
	}
	_, err := s.Place(id, now)
	return err == nil
}

// TestGPUPlacementInvariants drives schedulers — with each GPU scorer or none, with
// and without prediction, delay scheduling and priority preemption — through random
// events: submissions
// of tasks with random GPU demands (none, shares, whole devices, of random models),
// push placements, heartbeats, finishes, failures, cancellations, node removals and
// additions (of random GPU specs, IDs reused), node updates (Scheduler.UpdateNode: a
// new capacity, device count and model) and external device shares
// (Scheduler.SetExternalDevices). It tracks the live placements from the Assignments
// the scheduler returned, the evictions it reported and the events it was sent, and
// checks after every event that:
//   - every task is in the state the events imply;
//   - (a) no device is allocated beyond a whole one: the shares of the live tasks
//     holding each device sum to at most 1000;
//   - (b) a whole-device task shares its devices with no other live task;
//   - (c) every task's devices are on a node of a model its demand allows;
//   - (d) every assignment's devices are exactly its demand's Count distinct indices
//     of its node's devices, with its demand's share;
//   - each node's devices as the scheduler holds them (Scheduler.NodeDevices) are the
//     model's: the live tasks' shares taken, then of each device the external share
//     set, or what the tasks leave free of it when that is less; an update is
//     refused (ErrState) exactly when a live task holds a device it would remove,
//     and changes nothing then;
//   - the scheduler's devices are the model's: a pending task passes the filters on
//     a node (Scheduler.Filter) exactly when the model's devices there hold its demand
//     (CPU and memory are plentiful, so the GPU alone decides), and a push placement
//     fails exactly when no node's devices hold the task's demand (or, with
//     preemption, succeeds there only by evicting).
func TestGPUPlacementInvariants(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with params.SetSeed(seed)).
	props := gopter.NewProperties(params)
	props.Property("devices never over-allocated, whole devices never shared, models honoured, allocations well formed, the scheduler's devices are the model's", prop.ForAll(func(seed int64) string {
		return runGPUEvents(seed, 150)
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	st := gpuStats
	t.Logf("%d placements with devices (%d whole, %d in pull mode), %d refused for want of a device, %d filter probes, %d node removals, %d evictions, %d node updates (%d refused), %d external device settings",
		st.placed, st.whole, st.pulled, st.refused, st.probes, st.removals, st.evictions, st.updates, st.updatesRefused, st.external)
	if st.placed < 500 || st.whole < 100 || st.pulled < 100 || st.refused < 100 || st.probes < 1000 || st.removals < 20 || st.evictions < 20 ||
		st.updates < 100 || st.updatesRefused < 10 || st.external < 100 {
		t.Errorf("too few events to mean much: %+v", st)
	}
}

// gpuStats counts what TestGPUPlacementInvariants exercised.
var gpuStats struct {
	placed, whole, pulled, refused, probes, removals, evictions, updates, updatesRefused, external int
}

// gpuLive is a live placement as the model sees it.
type gpuLive struct {
	node string
	devs gpu.Allocation
}

var gpuModels = []string{"T4", "V100", "A100"}

func runGPUEvents(seed int64, steps int) string {
	r := rand.New(rand.NewSource(seed))
	var opts []finegrain.Option
	switch r.Intn(5) {
	case 1:
		opts = append(opts, finegrain.WithGPUScorer(gpu.DeviceBestFit{}))
	case 2:
		opts = append(opts, finegrain.WithGPUScorer(gpu.DotProduct{}))
	case 3:
		opts = append(opts, finegrain.WithGPUScorer(gpu.Packing{}))
	case 4:
		var ws []gpu.WeightedShape
		for i := 0; i <= r.Intn(4); i++ {
			ws = append(ws, gpu.WeightedShape{Shape: gpu.Shape{Request: schema.MustTuple(int64(r.Intn(2000)), 0), GPU: randGPUDemand(r)}, Weight: 1 + float64(r.Intn(5))})
		}
		fgd, err := gpu.NewFGD(ws, 0)
		if err != nil {
			return err.Error()
		}
		opts = append(opts, finegrain.WithGPUScorer(fgd))
	}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithPrediction(false))
	}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	}
	preempt := r.Intn(3) == 0
	if preempt {
		opts = append(opts, finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	}
	// Tasks no node can hold are kept, so that pull mode must look past them.
	opts = append(opts, finegrain.WithUnresolvableAccepted(true))
	s, err := finegrain.New(schema, opts...)
	if err != nil {
		return err.Error()
	}
	specs := map[string]gpu.Spec{} // live node → its GPUs
	racks := map[string]string{}   // live node → its rack
	ext := map[string][]int64{}    // live node → the external device shares last set
	var nodeIDs []string           // live nodes, in order of addition
	nextNode := 0
	addNode := func() string {
		id := fmt.Sprintf("n%d", nextNode)
		if r.Intn(3) == 0 && nextNode > 0 {
			id = fmt.Sprintf("n%d", r.Intn(nextNode)) // reuse an ID, perhaps removed
		}
		if _, ok := specs[id]; ok {
			return ""
		}
		if id == fmt.Sprintf("n%d", nextNode) {
			nextNode++
		}
		spec := gpu.Spec{Count: r.Intn(5)}
		if r.Intn(5) > 0 {
			spec.Model = gpuModels[r.Intn(2)] // T4 or V100: A100 never
		}
		// Plenty of CPU and memory: the GPU alone decides.
		rack := fmt.Sprintf("r%d", r.Intn(2))
		if err := s.AddNode(finegrain.Node{ID: id, Rack: rack, Capacity: schema.MustTuple(256000, 1024*gib), GPU: spec}); err != nil {
			return err.Error()
		}
		specs[id], racks[id] = spec, rack
		nodeIDs = append(nodeIDs, id)
		return ""
	}
	for i := 0; i < 2+r.Intn(3); i++ {
		if msg := addNode(); msg != "" {
			return msg
		}
	}
	for p, j := range []string{"j0", "j1"} {
		if err := s.SubmitJob(finegrain.Job{ID: j, Priority: p}); err != nil { // j1 may evict j0 (WithPreemption)
			return err.Error()
		}
	}
	var ids []string
	want := map[string]finegrain.TaskState{}
	demand := map[string]gpu.Demand{}
	live := map[string]gpuLive{}
	byState := func(st finegrain.TaskState) []string {
		var out []string
		for _, id := range ids {
			if want[id] == st {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(list []string) string { return list[r.Intn(len(list))] }
	// devicesOf is node n's devices as the model sees them: (a) and (b) hold when
	// every live task's devices can be taken in turn (Take refuses a device short of
	// the share, and a whole device is a share of 1000); then the external shares,
	// each as much of what is left as was asked.
	devicesOf := func(n string) (gpu.Devices, string) {
		d, err := gpu.New(specs[n])
		if err != nil {
			return d, err.Error()
		}
		holders := map[int][]string{}
		for _, id := range ids {
			p, ok := live[id]
			if !ok || p.node != n {
				continue
			}
			if err := d.Take(p.devs); err != nil {
				return d, fmt.Sprintf("node %s %+v: the live tasks' devices overlap: task %s (%v) %v: %v; holders %v", n, specs[n], id, demand[id], p.devs, err, holders)
			}
			for _, i := range p.devs.Devices {
				holders[i] = append(holders[i], id)
			}
		}
		for i, hs := range holders { // (b), explicitly
			for _, id := range hs {
				if !demand[id].Shared() && len(hs) > 1 {
					return d, fmt.Sprintf("node %s device %d: whole-device task %s shares it with %v", n, i, id, hs)
				}
			}
		}
		for i, u := range ext[n] {
			if h := min(u, gpu.Milli); i < d.Len() && min(h, d.Free(i)) > 0 {
				_ = d.Take(gpu.Allocation{Devices: []int{i}, Milli: min(h, d.Free(i))})
			}
		}
		return d, ""
	}
	now := time.Duration(0)
	// evict makes evicted tasks pending again.
	evict := func(es []finegrain.Eviction, how string) string {
		for _, e := range es {
			p, ok := live[e.Task]
			if !preempt || !ok || p.node != e.Node || want[e.Task] != finegrain.Running {
				return fmt.Sprintf("%s: eviction %v of a task the model has %v on %q", how, e, want[e.Task], p.node)
			}
			want[e.Task] = finegrain.Pending
			delete(live, e.Task)
			gpuStats.evictions++
		}
		return ""
	}
	// record checks assignment a of a pending task and makes it live: (c), (d).
	record := func(a finegrain.Assignment, how string) string {
		id := a.Task
		if a.BackupOf != "" {
			return fmt.Sprintf("%s: unexpected backup %+v", how, a)
		}
		if want[id] != finegrain.Pending {
			return fmt.Sprintf("%s: %s placed, the model has it %v", how, id, want[id])
		}
		spec, ok := specs[a.Node]
		if !ok {
			return fmt.Sprintf("%s: %s placed on %s, not a live node", how, id, a.Node)
		}
		dem := demand[id]
		if len(a.Devices.Devices) != dem.Count || (dem.Count > 0 && a.Devices.Milli != dem.Milli) {
			return fmt.Sprintf("%s: %s (%v) on %s holds %v", how, id, dem, a.Node, a.Devices)
		}
		for k, i := range a.Devices.Devices {
			if i < 0 || i >= spec.Count || slices.Contains(a.Devices.Devices[:k], i) {
				return fmt.Sprintf("%s: %s (%v) on %s (%d devices) holds %v", how, id, dem, a.Node, spec.Count, a.Devices)
			}
		}
		if dem.Count > 0 && !dem.Allows(spec.Model) {
			return fmt.Sprintf("%s: %s (%v) on %s of model %q", how, id, dem, a.Node, spec.Model)
		}
		want[id] = finegrain.Running
		live[id] = gpuLive{node: a.Node, devs: a.Devices.Clone()}
		if dem.Count > 0 {
			gpuStats.placed++
			if !dem.Shared() {
				gpuStats.whole++
			}
		}
		return ""
	}
	// fitsSomewhere reports whether some live node's devices, as the model sees them,
	// hold dem.
	fitsSomewhere := func(dem gpu.Demand) (bool, string) {
		for _, n := range nodeIDs {
			d, msg := devicesOf(n)
			if msg != "" {
				return false, msg
			}
			if d.Fits(dem) {
				return true, n
			}
		}
		return false, ""
	}
	for step := 0; step < steps; step++ {
		now += time.Duration(r.Intn(2000)) * time.Millisecond
		event := ""
		switch op := r.Intn(17); {
		case op < 4:
			var batch []finegrain.Task
			for k := 0; k <= r.Intn(3); k++ {
				id := fmt.Sprintf("t%d", len(ids)+k)
				dem := randGPUDemand(r)
				batch = append(batch, finegrain.Task{ID: id, Job: fmt.Sprintf("j%d", r.Intn(2)), Submitted: now,
					Request: schema.MustTuple(int64(100+r.Intn(900)), int64(1+r.Intn(2))*gib), GPU: dem})
			}
			if err := s.Submit(batch...); err != nil {
				return fmt.Sprintf("step %d: submit: %v", step, err)
			}
			for _, task := range batch {
				ids = append(ids, task.ID)
				want[task.ID] = finegrain.Pending
				demand[task.ID] = task.GPU
			}
			event = fmt.Sprintf("submit %d", len(batch))
		case op < 7:
			pending := byState(finegrain.Pending)
			if len(pending) == 0 {
				continue
			}
			id := pick(pending)
			fits, where := fitsSomewhere(demand[id])
			if where != "" && !fits {
				return fmt.Sprintf("step %d: %s", step, where)
			}
			a, err := s.Place(id, now)
			event = fmt.Sprintf("place %s (%v)", id, demand[id])
			if err != nil {
				var pe *finegrain.PlacementError
				if errors.As(err, &pe) {
					if msg := evict(pe.Evicted, event); msg != "" {
						return fmt.Sprintf("step %d: %s", step, msg)
					}
				}
				switch {
				case !errors.As(err, &pe):
					return fmt.Sprintf("step %d: %s: %v is not a PlacementError", step, event, err)
				case fits:
					return fmt.Sprintf("step %d: %s refused (%v), but node %s's devices hold it", step, event, err, where)
				case len(nodeIDs) > 0 && demand[id].Count > 0 && pe.Reason != framework.NoGPU:
					return fmt.Sprintf("step %d: %s refused with reason %v, want NoGPU", step, event, pe.Reason)
				}
				if demand[id].Count > 0 {
					gpuStats.refused++
				}
				break
			}
			if msg := evict(a.Evicted, event); msg != "" {
				return fmt.Sprintf("step %d: %s", step, msg)
			}
			if !fits && len(a.Evicted) == 0 {
				return fmt.Sprintf("step %d: %s placed on %s %v, but the model's devices hold it nowhere", step, event, a.Node, a.Devices)
			}
			if a.Task != id || a.Start != now {
				return fmt.Sprintf("step %d: %s: assignment %+v", step, event, a)
			}
			if msg := record(a, event); msg != "" {
				return fmt.Sprintf("step %d: %s", step, msg)
			}
		case op < 9:
			if len(nodeIDs) == 0 {
				continue
			}
			n := pick(nodeIDs)
			d, err := s.Heartbeat(n, now)
			event = fmt.Sprintf("heartbeat %s", n)
			if err != nil {
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			}
			if msg := evict(d.Evicted, event); msg != "" {
				return fmt.Sprintf("step %d: %s", step, msg)
			}
			for _, a := range d.Assignments {
				if a.Node != n {
					return fmt.Sprintf("step %d: %s placed %s on %s", step, event, a.Task, a.Node)
				}
				if msg := evict(a.Evicted, event); msg != "" {
					return fmt.Sprintf("step %d: %s", step, msg)
				}
				if msg := record(a, event); msg != "" {
					return fmt.Sprintf("step %d: %s", step, msg)
				}
				if demand[a.Task].Count > 0 {
					gpuStats.pulled++
				}
			}
		case op < 10:
			running := byState(finegrain.Running)
			if len(running) == 0 {
				continue
			}
			id := pick(running)
			event = "finish " + id
			if err := s.Finished(id, now, nil); err != nil {
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			}
			want[id] = finegrain.Finished
			delete(live, id)
		case op < 11:
			running := byState(finegrain.Running)
			if len(running) == 0 {
				continue
			}
			id := pick(running)
			event = "fail " + id
			if err := s.Failed(id, now); err != nil {
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			}
			want[id] = finegrain.Pending
			delete(live, id)
		case op < 12:
			cand := append(byState(finegrain.Running), byState(finegrain.Pending)...)
			if len(cand) == 0 {
				continue
			}
			id := pick(cand)
			event = "cancel " + id
			if err := s.Cancel(id, now); err != nil {
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			}
			want[id] = finegrain.Cancelled
			delete(live, id)
		case op < 13:
			if len(nodeIDs) == 0 {
				continue
			}
			n := pick(nodeIDs)
			event = "remove " + n
			got, err := s.RemoveNode(n, now)
			if err != nil {
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			}
			var on []string
			for id, p := range live {
				if p.node == n {
					on = append(on, id)
				}
			}
			sort.Strings(on)
			if !slices.Equal(got, on) && !(len(got) == 0 && len(on) == 0) {
				return fmt.Sprintf("step %d: %s returned %v, the model has %v there", step, event, got, on)
			}
			for _, id := range on {
				want[id] = finegrain.Pending
				delete(live, id)
			}
			delete(specs, n)
			delete(ext, n)
			nodeIDs = slices.DeleteFunc(nodeIDs, func(x string) bool { return x == n })
			gpuStats.removals++
		case op < 15:
			if len(nodeIDs) == 0 {
				continue
			}
			n := pick(nodeIDs)
			spec := specs[n]
			spec.Count = max(0, spec.Count+r.Intn(5)-2)
			if r.Intn(4) == 0 {
				spec.Model = gpuModels[r.Intn(2)]
			}
			event = fmt.Sprintf("update %s to %+v", n, spec)
			// Plenty of CPU and memory still: the GPU alone decides.
			err := s.UpdateNode(finegrain.Node{ID: n, Rack: racks[n], Capacity: schema.MustTuple(int64(128000+r.Intn(128000)), int64(512+r.Intn(512))*gib), GPU: spec}, now)
			holds := false // a live task holds a device the update removes
			for _, p := range live {
				if p.node == n && slices.ContainsFunc(p.devs.Devices, func(i int) bool { return i >= spec.Count }) {
					holds = true
				}
			}
			switch {
			case holds && !errors.Is(err, finegrain.ErrState):
				return fmt.Sprintf("step %d: %s: %v, want ErrState: a live task holds a device that goes", step, event, err)
			case !holds && err != nil:
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			case holds:
				gpuStats.updatesRefused++
			default:
				specs[n] = spec
			}
			gpuStats.updates++
		case op < 16:
			if len(nodeIDs) == 0 {
				continue
			}
			n := pick(nodeIDs)
			var used []int64
			if r.Intn(4) > 0 {
				used = make([]int64, r.Intn(6))
				for i := range used {
					used[i] = int64(r.Intn(3)) * int64(r.Intn(11)) * 50 // 0 to 1000, zero often
				}
			}
			event = fmt.Sprintf("external devices %s %v", n, used)
			held, err := s.SetExternalDevices(n, now, used)
			if err != nil {
				return fmt.Sprintf("step %d: %s: %v", step, event, err)
			}
			ext[n] = used
			if some := slices.ContainsFunc(used, func(u int64) bool { return u > 0 }); some && len(held) != specs[n].Count || !some && held != nil {
				return fmt.Sprintf("step %d: %s: holds %v of %d devices", step, event, held, specs[n].Count)
			}
			for i, h := range held {
				if h < 0 || (i < len(used) && h > used[i]) || (i >= len(used) && h != 0) {
					return fmt.Sprintf("step %d: %s: holds %v", step, event, held)
				}
			}
			gpuStats.external++
		default:
			if len(nodeIDs) >= 5 {
				continue
			}
			event = "add node"
			if msg := addNode(); msg != "" {
				return fmt.Sprintf("step %d: %s: %s", step, event, msg)
			}
		}
		if msg := checkGPUState(s, ids, want); msg != "" {
			return fmt.Sprintf("step %d, after %s: %s", step, event, msg)
		}
		// (a), (b), and the Filter probes of a few pending GPU tasks on every node.
		var probe []string
		for _, id := range byState(finegrain.Pending) {
			if demand[id].Count > 0 && len(probe) < 3 {
				probe = append(probe, id)
			}
		}
		for _, n := range nodeIDs {
			d, msg := devicesOf(n)
			if msg != "" {
				return fmt.Sprintf("step %d, after %s: %s", step, event, msg)
			}
			got, err := s.NodeDevices(n)
			if err != nil {
				return fmt.Sprintf("step %d, after %s: devices of %s: %v", step, event, n, err)
			}
			if got.Model() != specs[n].Model || !slices.Equal(gpuFrees(&got), gpuFrees(&d)) {
				return fmt.Sprintf("step %d, after %s: node %s (%+v, external %v): the scheduler's devices %q %v, the model's %v",
					step, event, n, specs[n], ext[n], got.Model(), gpuFrees(&got), gpuFrees(&d))
			}
			for _, id := range probe {
				st, _, err := s.Filter(id, n, now)
				if err != nil {
					return fmt.Sprintf("step %d, after %s: filter %s on %s: %v", step, event, id, n, err)
				}
				if fits := d.Fits(demand[id]); st.OK() != fits || (!fits && st.Reason != framework.NoGPU) {
					return fmt.Sprintf("step %d, after %s: filter %s (%v) on %s (%+v, free %v): %+v, the model's devices hold it: %v",
						step, event, id, demand[id], n, specs[n], gpuFrees(&d), st, fits)
				}
				gpuStats.probes++
			}
		}
	}
	return ""
}

// checkGPUState reports a task whose state is not the one the events imply.
func checkGPUState(s *finegrain.Scheduler, ids []string, want map[string]finegrain.TaskState) string {
	for _, id := range ids {
		if st, _ := s.TaskState(id); st != want[id] {
			return fmt.Sprintf("task %s is %v, want %v", id, st, want[id])
		}
	}
	return ""
}

// gpuFrees lists d's free shares.
func gpuFrees(d *gpu.Devices) []int64 {
	out := make([]int64, d.Len())
	for i := range out {
		out[i] = d.Free(i)
	}
	return out
}

// randGPUDemand is a valid demand: none, a share, or whole devices, of random models.
func randGPUDemand(r *rand.Rand) gpu.Demand {
	var d gpu.Demand
	switch r.Intn(6) {
	case 0:
		return d
	case 1, 2, 3:
		d = gpu.Share(int64(1+r.Intn(10)) * 100)
		if r.Intn(3) == 0 {
			d = gpu.Share(100 + int64(r.Intn(901)))
		}
	default:
		d = gpu.Whole(1 + r.Intn(3))
	}
	switch r.Intn(5) {
	case 0:
		d.Models = []string{gpuModels[r.Intn(len(gpuModels))]}
	case 1:
		d.Models = []string{gpuModels[r.Intn(len(gpuModels))], gpuModels[r.Intn(len(gpuModels))]}
	}
	return d
}

// A task whose resources fit one node and whose devices fit another, but no one node
// both, fits no node: it must not hold its job back in pull mode either
// (cluster.State.HoldsTask checks the two on the same node).
func TestGPUSplitUnplaceableHeadTaskDoesNotBlockItsJob(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithUnresolvableAccepted(true))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "gpu", Capacity: schema.MustTuple(32000, 64*gib), GPU: gpu.Spec{Model: "V100", Count: 8}}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "cpu", Capacity: schema.MustTuple(96000, 64*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	big := finegrain.Task{ID: "big", Job: "j", Request: schema.MustTuple(64000, gib), GPU: gpu.Whole(1)}
	small := finegrain.Task{ID: "small", Job: "j", Request: schema.MustTuple(1000, gib)}
	require.NoError(t, s.Submit(big, small))
	var placed []string
	for beat := 0; beat < 4 && len(placed) == 0; beat++ {
		for _, n := range []string{"gpu", "cpu"} {
			d, err := s.Heartbeat(n, time.Duration(beat)*time.Second)
			require.NoError(t, err)
			for _, a := range d.Assignments {
				placed = append(placed, a.Task)
			}
		}
	}
	assert.Equal(t, []string{"small"}, placed)
}

// In host mode the GPU scorer chooses the devices at Reserve, as in push mode. With
// [700, 1000] free, FGD for a workload of 0.6 shares puts a 0.2 share on the whole
// device (leaving 700 and 800, both still usable), not on the 700 one as the best fit
// would (leaving 500, too little for a 0.6 share).
func TestGPUHostReserveUsesScorerDevices(t *testing.T) {
	share := func(m int64) gpu.Shape { return gpu.Shape{GPU: gpu.Share(m)} }
	fgd, err := gpu.NewFGD([]gpu.WeightedShape{{Shape: share(600), Weight: 1}}, 0)
	require.NoError(t, err)
	for _, mode := range []string{"push", "host"} {
		t.Run(mode, func(t *testing.T) {
			s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithGPUScorer(fgd))
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(16000, 64*gib), GPU: gpu.Spec{Model: "T4", Count: 2}}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			require.NoError(t, s.Submit(gpuTask("a", gpu.Share(300)), gpuTask("b", gpu.Share(200))))
			first, err := s.Place("a", 0)
			require.NoError(t, err)
			require.Equal(t, []int{0}, first.Devices.Devices)
			var b finegrain.Assignment
			if mode == "push" {
				b, err = s.Place("b", 0)
			} else {
				b, err = s.Reserve("b", "n", 0)
			}
			require.NoError(t, err)
			assert.Equal(t, []int{1}, b.Devices.Devices, "FGD's device, not the best fit (0)")
		})
	}
}
