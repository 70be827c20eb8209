package workload_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/sim/workload"
)

func openBNodes() []workload.OpenBNode {
	return []workload.OpenBNode{
		{Name: "cpu", CPUMilli: 32000, MemoryMiB: 262144},
		{Name: "t4", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 2, Model: "T4"},
		{Name: "v100", CPUMilli: 96000, MemoryMiB: 786432, GPUs: 8, Model: "V100M32"},
	}
}

func TestOpenBCluster(t *testing.T) {
	cl, err := workload.OpenBCluster("", openBNodes())
	require.NoError(t, err)
	assert.Equal(t, "openb", cl.Name)
	require.Len(t, cl.Nodes, 3)
	v := cl.Nodes[2]
	assert.Equal(t, "v100", v.ID)
	assert.Equal(t, workload.OpenBRack, v.Rack)
	assert.Equal(t, int64(96000), v.Capacity[workload.SlotCPU])
	assert.Equal(t, int64(786432)*workload.MiB, v.Capacity[workload.SlotMemory])
	assert.Equal(t, gpu.Spec{Model: "V100M32", Count: 8}, v.GPU)
	assert.Equal(t, gpu.Spec{}, cl.Nodes[0].GPU)

	_, err = workload.OpenBCluster("x", nil)
	assert.ErrorIs(t, err, workload.ErrEmpty)
	dup := append(openBNodes(), workload.OpenBNode{Name: "t4", CPUMilli: 1})
	_, err = workload.OpenBCluster("x", dup)
	assert.ErrorIs(t, err, workload.ErrDuplicateID)
	bad := openBNodes()
	bad[1].GPUs = gpu.MaxDevices + 1
	_, err = workload.OpenBCluster("x", bad)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorIs(t, err, gpu.ErrInvalid)
	for _, tc := range []struct {
		name string
		mib  int64
	}{
		{"memory wraps to 0 bytes", 1 << 44},
		{"memory overflows", 1 << 43},
		{"memory maximum", math.MaxInt64},
		{"memory negative", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := openBNodes()
			bad[1].MemoryMiB = tc.mib
			_, err := workload.OpenBCluster("x", bad)
			assert.ErrorIs(t, err, workload.ErrInvalidValue)
			assert.ErrorContains(t, err, "nodes[1](t4).MemoryMiB")
		})
	}
	ok := openBNodes()
	ok[1].MemoryMiB = 1<<43 - 1
	_, err = workload.OpenBCluster("x", ok)
	assert.NoError(t, err, "the largest memory_mib ParseOpenBNodes accepts")
}

func TestOpenBTask(t *testing.T) {
	share := workload.OpenBPod{Name: "p", CPUMilli: 4000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 460, GPUSpec: []string{"T4"}}
	tk, err := workload.OpenBTask(&share, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "p", tk.ID)
	assert.Equal(t, gpu.Demand{Count: 1, Milli: 460, Models: []string{"T4"}}, tk.GPU)
	assert.Equal(t, int64(4000), tk.Request[workload.SlotCPU])
	assert.Equal(t, 1024*workload.MiB, tk.Request[workload.SlotMemory])
	assert.Equal(t, time.Minute, tk.True.Duration())
	assert.Equal(t, tk.Request, tk.True.Peak(), "the pod uses its request throughout")
	share.GPUSpec[0] = "P100"
	assert.Equal(t, []string{"T4"}, tk.GPU.Models, "the task does not share the pod's slice")

	cpu := workload.OpenBPod{Name: "c", CPUMilli: 1000, MemoryMiB: 1}
	tk, err = workload.OpenBTask(&cpu, 0)
	require.NoError(t, err)
	assert.True(t, tk.GPU.IsZero())
	assert.Equal(t, workload.MinStageDuration, tk.True.Duration())

	for _, p := range []workload.OpenBPod{
		{Name: "several-shares", CPUMilli: 1, NumGPU: 2, GPUMilli: 500},
		{Name: "zero-share", CPUMilli: 1, NumGPU: 1},
		{Name: "negative", CPUMilli: -1},
		{Name: "memory-wraps", CPUMilli: 1, MemoryMiB: 1 << 44},
		{Name: "memory-overflows", CPUMilli: 1, MemoryMiB: 1 << 43},
		{Name: "memory-negative", CPUMilli: 1, MemoryMiB: -1},
	} {
		_, err := workload.OpenBTask(&p, time.Second)
		assert.Error(t, err, p.Name)
		var fe *workload.FieldError
		assert.True(t, errors.As(err, &fe), p.Name)
		assert.ErrorContains(t, err, "pod "+p.Name, p.Name)
	}
	_, err = workload.OpenBTask(nil, time.Second)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorContains(t, err, "pod")
}

func TestFromOpenB(t *testing.T) {
	cl, err := workload.OpenBCluster("openb", openBNodes())
	require.NoError(t, err)
	s := time.Second
	pods := []workload.OpenBPod{
		{Name: "late", CPUMilli: 8000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 500, HasCreated: true, HasDeleted: true, Created: 5000 * s, Deleted: 9000 * s},
		{Name: "early", CPUMilli: 8000, MemoryMiB: 1024, HasCreated: true, HasDeleted: true, Created: 1000 * s, Deleted: 3000 * s},
		{Name: "pending", CPUMilli: 1000, MemoryMiB: 1, HasCreated: true, Created: 2000 * s},
		{Name: "untimed", CPUMilli: 1000, MemoryMiB: 1},
		{Name: "too-many-gpus", CPUMilli: 1000, MemoryMiB: 1, NumGPU: 16, GPUMilli: 1000, HasCreated: true, HasDeleted: true},
		{Name: "no-such-model", CPUMilli: 1000, MemoryMiB: 1, NumGPU: 1, GPUMilli: 1000, GPUSpec: []string{"A100"}, HasCreated: true, HasDeleted: true},
		{Name: "too-much-cpu", CPUMilli: 200000, MemoryMiB: 1, HasCreated: true, HasDeleted: true},
		{Name: "whole", CPUMilli: 1000, MemoryMiB: 1, NumGPU: 2, GPUMilli: 1000, GPUSpec: []string{"T4"}, HasCreated: true, HasDeleted: true, Created: 3000 * s, Deleted: 3000 * s},
	}
	w, st, err := workload.FromOpenB("", pods, &cl, 0.01)
	require.NoError(t, err)
	assert.Equal(t, workload.OpenBStats{Used: 3, Untimed: 2, Unplaceable: 3}, st)
	require.NoError(t, w.Validate())
	assert.Equal(t, "openb", w.Name)
	var ids []string
	var at []time.Duration
	for _, j := range w.Jobs {
		ids = append(ids, j.ID)
		at = append(at, j.Submit)
		require.Len(t, j.Tasks, 1)
	}
	assert.Equal(t, []string{"early", "whole", "late"}, ids, "by creation")
	assert.Equal(t, []time.Duration{0, 20 * s, 40 * s}, at, "rebased and scaled by 0.01")
	assert.Equal(t, 20*s, w.Jobs[0].Tasks[0].True.Duration())
	assert.Equal(t, workload.MinStageDuration, w.Jobs[1].Tasks[0].True.Duration(), "a pod deleted at creation runs the shortest stage")
	assert.Equal(t, "gpu-share", w.Jobs[2].App)
	assert.Equal(t, "gpu-2", w.Jobs[1].App)
	assert.Equal(t, "cpu", w.Jobs[0].App)

	for _, scale := range []float64{0, -1, 1.5} {
		_, _, err := workload.FromOpenB("x", pods, &cl, scale)
		assert.ErrorIs(t, err, workload.ErrInvalidOption, scale)
	}
	_, _, err = workload.FromOpenB("x", pods[3:7], &cl, 1)
	assert.ErrorIs(t, err, workload.ErrEmpty)
	_, _, err = workload.FromOpenB("x", pods, &workload.Cluster{}, 1)
	assert.ErrorIs(t, err, workload.ErrEmpty)
	_, _, err = workload.FromOpenB("x", pods, nil, 1)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorContains(t, err, "cluster")

	// Pods built by hand that ParseOpenBPods would refuse.
	pod := func(name string, created, deleted time.Duration) workload.OpenBPod {
		return workload.OpenBPod{Name: name, CPUMilli: 100, MemoryMiB: 1, Created: created, Deleted: deleted, HasCreated: true, HasDeleted: true}
	}
	for _, tc := range []struct {
		name  string
		pods  []workload.OpenBPod
		want  error
		field string
	}{
		// With -1 as "no first arrival yet", b's 5 s became the base and a arrived at -15 s.
		{"negative creation", []workload.OpenBPod{pod("a", -10*s, 0), pod("b", 5*s, 10*s)}, workload.ErrInvalidValue, "pods[0](a).Created"},
		{"negative creation first found", []workload.OpenBPod{pod("b", 5*s, 10*s), pod("a", -1, 0)}, workload.ErrInvalidValue, "pods[1](a).Created"},
		{"negative deletion", []workload.OpenBPod{pod("a", 0, -s)}, workload.ErrInvalidValue, "pods[0](a).Deleted"},
		{"duplicate name", []workload.OpenBPod{pod("a", 0, s), pod("b", 0, s), pod("a", 0, s)}, workload.ErrDuplicateID, "pods[2](a).Name"},
		{"duplicate of an untimed pod", []workload.OpenBPod{{Name: "a"}, pod("a", 0, s)}, workload.ErrDuplicateID, "pods[1](a).Name"},
		{"empty name", []workload.OpenBPod{pod("", 0, s)}, workload.ErrEmpty, "pods[0]().Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _, err := workload.FromOpenB("x", tc.pods, &cl, 1)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
			assert.Zero(t, w)
		})
	}
	// The first arrival is found without a sentinel: a pod created at 0 is the base.
	w, _, err = workload.FromOpenB("x", []workload.OpenBPod{pod("b", 5*s, 10*s), pod("a", 0, s)}, &cl, 1)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{0, 5 * s}, []time.Duration{w.Jobs[0].Submit, w.Jobs[1].Submit})
}

// The shared openb lists become workloads whose every pod fits the cluster.
func TestRealFromOpenB(t *testing.T) {
	nodes, err := workload.LoadOpenBNodes(dataFile(t, openBDir+"openb_node_list_all_node.csv"))
	require.NoError(t, err)
	cl, err := workload.OpenBCluster("openb", nodes)
	require.NoError(t, err)
	pods, err := workload.LoadOpenBPods(dataFile(t, openBDir+"openb_pod_list_gpushare40.csv"))
	require.NoError(t, err)
	w, st, err := workload.FromOpenB("gpushare40", pods, &cl, 0.001)
	require.NoError(t, err)
	require.NoError(t, w.Validate())
	assert.Equal(t, len(pods), st.Used+st.Untimed+st.Unplaceable)
	assert.Equal(t, st.Used, w.NumTasks())
	assert.Greater(t, st.Used, 8000)
	// The pods' own mix: every LS pod used is a latency-sensitive task, with an SLO.
	ls := 0
	for _, j := range w.Jobs {
		if tk := &j.Tasks[0]; tk.LatencySensitive {
			ls++
			assert.Equal(t, time.Duration(math.Ceil(1.5*float64(tk.True.Duration()))), tk.SLO, tk.ID)
		}
	}
	lsPods := 0
	for i := range pods {
		if pods[i].QoS == "LS" && pods[i].HasDeleted {
			lsPods++
		}
	}
	assert.Greater(t, ls, 3000, "the list is about half LS")
	assert.LessOrEqual(t, ls, lsPods)
	multi, err := workload.LoadOpenBPods(dataFile(t, openBDir+"openb_pod_list_multigpu20.csv"))
	require.NoError(t, err)
	_, st, err = workload.FromOpenB("multigpu20", multi, &cl, 0.001)
	assert.ErrorIs(t, err, workload.ErrEmpty, "the multigpu20 list has no times")
	assert.Equal(t, len(multi), st.Untimed)
}
