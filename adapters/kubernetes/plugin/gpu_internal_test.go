package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// gpuPlugin is a plugin with GPU devices on, built without a scheduler handle.
func gpuPlugin(t *testing.T) *Plugin {
	t.Helper()
	a := DefaultArgs()
	a.GPUDevices = true
	a.UsageSource = UsageSourceAnnotation
	p, err := newPlugin(t.Context(), a, nil, options{clock: clock.RealClock{}})
	require.NoError(t, err)
	return p
}

// A node's devices: its capacity of nvidia.com/gpu (every device, healthy or not),
// else its allocatable, else its share resource in whole thousands; the model from
// its label; none without gpuDevices.
func TestNodeGPU(t *testing.T) {
	p := gpuPlugin(t)
	node := func(capacity, allocatable v1.ResourceList, model string) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{}}, Status: v1.NodeStatus{Capacity: capacity, Allocatable: allocatable}}
		if model != "" {
			n.Labels[defaultGPUModelLabel] = model
		}
		return n
	}
	q := apiresource.MustParse
	for _, c := range []struct {
		name        string
		capacity    v1.ResourceList
		allocatable v1.ResourceList
		model       string
		want        gpu.Spec
		err         string
	}{
		{"none", nil, nil, "", gpu.Spec{}, ""},
		{"capacity, one unhealthy", v1.ResourceList{defaultGPUResource: q("8")}, v1.ResourceList{defaultGPUResource: q("7")}, "Tesla-V100", gpu.Spec{Model: "Tesla-V100", Count: 8}, ""},
		{"allocatable only", nil, v1.ResourceList{defaultGPUResource: q("2")}, "", gpu.Spec{Count: 2}, ""},
		{"shares only", v1.ResourceList{defaultGPUShareResource: q("4000")}, nil, "T4", gpu.Spec{Model: "T4", Count: 4}, ""},
		{"shares, a part device", v1.ResourceList{defaultGPUShareResource: q("2500")}, nil, "", gpu.Spec{Count: 2}, ""},
		{"whole GPUs first", v1.ResourceList{defaultGPUResource: q("2"), defaultGPUShareResource: q("8000")}, nil, "", gpu.Spec{Count: 2}, ""},
		{"too many", v1.ResourceList{defaultGPUResource: q("65")}, nil, "", gpu.Spec{}, "at most 64"},
		{"negative", v1.ResourceList{defaultGPUResource: q("-1")}, nil, "", gpu.Spec{}, "negative"},
	} {
		got, err := p.nodeGPU(node(c.capacity, c.allocatable, c.model))
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
	p.args.GPUDevices = false
	got, err := p.nodeGPU(node(v1.ResourceList{defaultGPUResource: q("8")}, nil, "T4"))
	require.NoError(t, err)
	assert.Equal(t, gpu.Spec{}, got, "without gpuDevices")
}

// A pod's demand: a share from the share resource, whole GPUs from the GPU resource,
// models from the annotation.
func TestGPUDemand(t *testing.T) {
	p := gpuPlugin(t)
	q := apiresource.MustParse
	for _, c := range []struct {
		name        string
		requests    v1.ResourceList
		annotations map[string]string
		want        gpu.Demand
		err         string
	}{
		{"none", nil, nil, gpu.Demand{}, ""},
		{"share", v1.ResourceList{defaultGPUShareResource: q("250")}, nil, gpu.Share(250), ""},
		{"a whole device as a share", v1.ResourceList{defaultGPUShareResource: q("1000")}, nil, gpu.Demand{Count: 1, Milli: 1000}, ""},
		{"whole", v1.ResourceList{defaultGPUResource: q("4")}, nil, gpu.Whole(4), ""},
		{"models", v1.ResourceList{defaultGPUResource: q("1")}, map[string]string{GPUModelAnnotation: "A100, H100"}, gpu.Demand{Count: 1, Milli: 1000, Models: []string{"A100", "H100"}}, ""},
		{"zero requests", v1.ResourceList{defaultGPUResource: q("0")}, nil, gpu.Demand{}, ""},
		{"both", v1.ResourceList{defaultGPUResource: q("1"), defaultGPUShareResource: q("1")}, nil, gpu.Demand{}, "not both"},
		{"share over one device", v1.ResourceList{defaultGPUShareResource: q("1001")}, nil, gpu.Demand{}, "at most 1000"},
		{"fraction", v1.ResourceList{defaultGPUResource: q("0.5")}, nil, gpu.Demand{}, "whole number"},
		{"too many", v1.ResourceList{defaultGPUResource: q("65")}, nil, gpu.Demand{}, "at most 64"},
		{"models alone", nil, map[string]string{GPUModelAnnotation: "A100"}, gpu.Demand{}, "without a request"},
		{"empty model", v1.ResourceList{defaultGPUResource: q("1")}, map[string]string{GPUModelAnnotation: ""}, gpu.Demand{}, "empty model name"},
	} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: c.annotations}}
		got, err := p.gpuDemand(pod, c.requests)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, got, c.name)
	}
}

// The devices annotation round-trips, and anything but distinct indices in range is
// refused.
func TestDevicesAnnotation(t *testing.T) {
	for _, devs := range [][]int{{0}, {3, 1}, {0, 1, 2, 63}} {
		got, err := parseDevices(formatDevices(devs))
		require.NoError(t, err)
		assert.Equal(t, devs, got)
	}
	for _, text := range []string{"", "a", "1,1", "-1", "64", "0,,1", "1.5"} {
		_, err := parseDevices(text)
		assert.ErrorContains(t, err, GPUDevicesAnnotation, "%q", text)
	}
	got, err := parseDevices(" 2, 0")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0}, got, "spaces around indices are allowed")
}

// FGD learns the shapes of the pods seen: before any, it scores as the best fit;
// after, as FGD over the typical shapes of the window, which keeps the last fgdWindow
// pods only.
func TestLearnedFGD(t *testing.T) {
	f := &learnedFGD{}
	devices, err := gpu.New(gpu.Spec{Count: 2})
	require.NoError(t, err)
	require.NoError(t, devices.Take(gpu.Allocation{Devices: []int{0}, Milli: 500}))
	room := resource.Tuple{16000, 64 << 30}
	node := gpu.Node{Capacity: room, Free: room, Devices: &devices}
	share := gpu.Shape{Request: resource.Tuple{1000, 1 << 30}, GPU: gpu.Share(500)}
	x, a, ok := f.Score(node, share)
	bx, ba, bok := gpu.DeviceBestFit{Dims: fgdDims}.Score(node, share)
	assert.Equal(t, []any{bx, ba, bok}, []any{x, a, ok}, "no shape seen: the best fit")

	for range 3 * fgdWindow {
		f.observe(share)
	}
	f.observe(gpu.Shape{Request: resource.Tuple{2000}, GPU: gpu.Whole(1)})
	assert.Len(t, f.window, fgdWindow)
	fgd := f.cur.Load()
	require.NotNil(t, fgd)
	shapes := fgd.Shapes()
	require.Len(t, shapes, 1, "the whole-GPU pod is not typical yet")
	assert.Equal(t, gpu.Share(500), shapes[0].GPU)
	assert.Equal(t, resource.Tuple{1000}, shapes[0].Request, "read on CPU alone")
	// The half-free device takes a half share: it leaves no fragment.
	_, a, ok = f.Score(node, share)
	require.True(t, ok)
	assert.Equal(t, []int{0}, a.Devices)

	for i := range fgdWindow {
		f.observe(gpu.Shape{Request: resource.Tuple{int64(100 * (i % 100))}, GPU: gpu.Share(int64(1 + i%999))})
	}
	shapes = f.cur.Load().Shapes()
	assert.Len(t, shapes, fgdMaxShapes, "no shape is typical: the most frequent %d", fgdMaxShapes)
	for _, s := range shapes {
		assert.False(t, s.Request == resource.Tuple{1000} && s.GPU.Milli == 500, "the old shapes left the window: %v", s)
	}
}

// BenchmarkLearnedFGDObserve is what a pod's submission costs FGD's learning with a
// full window of 1,000 pods of 100 shapes: the ring's update, and every 50 pods the
// rebuild (gpu.TypicalShapes and gpu.NewFGD), averaged over the pods.
//
//	go test -run '^$' -bench LearnedFGDObserve -benchmem ./plugin/
func BenchmarkLearnedFGDObserve(b *testing.B) {
	f := &learnedFGD{}
	shape := func(i int) gpu.Shape {
		return gpu.Shape{Request: resource.Tuple{int64(500 * (i % 10))}, GPU: gpu.Share(int64(100 * (1 + i/10%10)))}
	}
	for i := range fgdWindow {
		f.observe(shape(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		f.observe(shape(i))
	}
}
