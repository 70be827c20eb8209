package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// This file is GPU sharing (Args.GPUDevices): a pod's GPU demand from its requests
// and annotations, a node's devices from its capacity and labels, the devices the
// library chose written on the pod with its binding (Bind) or at PreBind for a device
// plugin to read, the devices of pods the plugin did not place held as external
// shares, and FGD's task shapes learned from the pods seen.

// The annotations of GPU sharing.
const (
	// GPUModelAnnotation restricts a pod's GPUs to the models it lists, separated by
	// commas: the values of the node label Args.GPUModelLabel (NVIDIA's GPU feature
	// discovery sets nvidia.com/gpu.product, as in "Tesla-V100-SXM2-32GB").
	GPUModelAnnotation = "finegrain.io/gpu-model"
	// GPUDevicesAnnotation is where the devices the pod was given on its node are
	// written, with its binding (Bind) or just before it (PreBind): their indices,
	// separated by commas ("0,1"), in the order a device plugin enumerates them
	// (NVML's). A pod asking a share of one GPU has one index; its share is its
	// request of Args.GPUShareResource. A device plugin reads it when it allocates
	// the pod's devices.
	GPUDevicesAnnotation = "finegrain.io/gpu-devices"
)

// The defaults of the GPU arguments.
const (
	defaultGPUResource      = "nvidia.com/gpu"
	defaultGPUShareResource = "finegrain.io/gpu-milli"
	defaultGPUModelLabel    = "nvidia.com/gpu.product"
	defaultGPUScorer        = "FGD"
)

// The values of Args.GPUScorer, each a gpu.DeviceScorer of the library's but None.
var gpuScorers = map[string]func() gpu.DeviceScorer{
	"FGD":           func() gpu.DeviceScorer { return &learnedFGD{} },
	"DeviceBestFit": func() gpu.DeviceScorer { return gpu.DeviceBestFit{} },
	"DotProduct":    func() gpu.DeviceScorer { return gpu.DotProduct{} },
	"Packing":       func() gpu.DeviceScorer { return gpu.Packing{} },
	"None":          nil,
}

// gpuDemand is what pod asks of a node's GPU devices: a share of one device, its
// request of Args.GPUShareResource in thousandths (1 to 1000), or whole devices, its
// request of Args.GPUResource; of the models GPUModelAnnotation lists, if it does.
// The zero demand without GPU devices (Args.GPUDevices off) or without either request.
func (p *Plugin) gpuDemand(pod *v1.Pod, requests v1.ResourceList) (gpu.Demand, error) {
	if !p.args.GPUDevices {
		return gpu.Demand{}, nil
	}
	whole, err := wholeAmount(requests, v1.ResourceName(p.args.GPUResource))
	if err != nil {
		return gpu.Demand{}, err
	}
	share, err := wholeAmount(requests, v1.ResourceName(p.args.GPUShareResource))
	if err != nil {
		return gpu.Demand{}, err
	}
	var d gpu.Demand
	switch {
	case whole > 0 && share > 0:
		return gpu.Demand{}, fmt.Errorf("requests %s %d and %s %d: ask whole GPUs or a share of one, not both", p.args.GPUResource, whole, p.args.GPUShareResource, share)
	case share > gpu.Milli:
		return gpu.Demand{}, fmt.Errorf("request %s %d: a share of one GPU is at most %d thousandths; ask %s for whole GPUs", p.args.GPUShareResource, share, gpu.Milli, p.args.GPUResource)
	case whole > gpu.MaxDevices:
		return gpu.Demand{}, fmt.Errorf("request %s %d: at most %d GPUs", p.args.GPUResource, whole, gpu.MaxDevices)
	case share > 0:
		d = gpu.Share(share)
	case whole > 0:
		d = gpu.Whole(int(whole))
	}
	if text, ok := pod.Annotations[GPUModelAnnotation]; ok {
		if d.IsZero() {
			return gpu.Demand{}, fmt.Errorf("annotation %s without a request of %s or %s", GPUModelAnnotation, p.args.GPUResource, p.args.GPUShareResource)
		}
		for m := range strings.SplitSeq(text, ",") {
			m = strings.TrimSpace(m)
			if m == "" {
				return gpu.Demand{}, fmt.Errorf("annotation %s=%q: an empty model name", GPUModelAnnotation, text)
			}
			d.Models = append(d.Models, m)
		}
	}
	return d, d.Validate()
}

// wholeAmount is rl's amount of name, a whole number.
func wholeAmount(rl v1.ResourceList, name v1.ResourceName) (int64, error) {
	q, ok := rl[name]
	if !ok {
		return 0, nil
	}
	v, err := amount(q, false)
	if err != nil {
		return 0, fmt.Errorf("request %s: %w", name, err)
	}
	if q.CmpInt64(v) != 0 {
		return 0, fmt.Errorf("request %s %s: want a whole number", name, q.String())
	}
	return v, nil
}

// nodeGPU is node n's GPU devices: as many as its capacity of Args.GPUResource (every
// device, healthy or not, so that the indices a device plugin reads stay the same;
// allocatable when the capacity does not say), else its capacity of
// Args.GPUShareResource in whole thousands; of the model its label
// Args.GPUModelLabel names. None without Args.GPUDevices.
func (p *Plugin) nodeGPU(n *v1.Node) (gpu.Spec, error) {
	if !p.args.GPUDevices {
		return gpu.Spec{}, nil
	}
	count := int64(0)
	for _, c := range []struct {
		name v1.ResourceName
		per  int64
	}{{v1.ResourceName(p.args.GPUResource), 1}, {v1.ResourceName(p.args.GPUShareResource), gpu.Milli}} {
		for _, rl := range []v1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
			if q, ok := rl[c.name]; ok && count == 0 {
				v, err := amount(q, false)
				if err != nil {
					return gpu.Spec{}, fmt.Errorf("%s: %w", c.name, err)
				}
				count = v / c.per
			}
		}
	}
	if count > gpu.MaxDevices {
		return gpu.Spec{}, fmt.Errorf("%d GPUs: at most %d", count, gpu.MaxDevices)
	}
	return gpu.Spec{Model: n.Labels[p.args.GPUModelLabel], Count: int(count)}, nil
}

// formatDevices is the value of GPUDevicesAnnotation for devices.
func formatDevices(devices []int) string {
	s := make([]string, len(devices))
	for i, d := range devices {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, ",")
}

// parseDevices reads GPUDevicesAnnotation's value: distinct device indices.
func parseDevices(text string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(text, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= gpu.MaxDevices || slices.Contains(out, i) {
			return nil, fmt.Errorf("annotation %s=%q: want distinct device indices 0 to %d, separated by commas", GPUDevicesAnnotation, text, gpu.MaxDevices-1)
		}
		out = append(out, i)
	}
	return out, nil
}

// PreBindPreFlight implements fwk.PreBindPlugin: PreBind has work only for a pod with
// a GPU demand, and may run beside the other PreBind plugins'.
func (p *Plugin) PreBindPreFlight(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	p.mu.Lock()
	r := p.pods[taskID(pod)]
	p.mu.Unlock()
	if r == nil || r.gpu.IsZero() {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind makes sure the pod carries the GPU devices finegrain holds for it on
// nodeName (GPUDevicesAnnotation) when it is bound, so that the node's device plugin
// can read them. When FineGrain binds first (bindsFirst: it is enabled at the bind
// extension point, before DefaultBinder, as deploy/scheduler-config-gpu.yaml does),
// Bind writes them with the binding, in the same API call; otherwise PreBind patches
// the pod, one more call. A failed write fails the binding: the pod's hold is given
// back and it is tried again.
func (p *Plugin) PreBind(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	id := taskID(pod)
	as, ok := p.sched.Held(id)
	if !ok || as.Node != nodeName {
		return fwk.NewStatus(fwk.Error, fmt.Sprintf("finegrain holds no GPU devices for the pod on node %s", nodeName))
	}
	if as.Devices.IsZero() {
		return nil
	}
	value := formatDevices(as.Devices.Devices)
	if pod.Annotations[GPUDevicesAnnotation] != value && !p.bindsFirst() {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{GPUDevicesAnnotation: value}}})
		if err != nil {
			return fwk.AsStatus(err)
		}
		if _, err := p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fwk.AsStatus(fmt.Errorf("annotation %s: %w", GPUDevicesAnnotation, err))
		}
		p.logger.V(4).Info("GPU devices written", "pod", klog.KObj(pod), "node", nodeName, "devices", value, "milli", as.Devices.Milli)
	}
	p.mu.Lock()
	if r := p.pods[id]; r != nil {
		r.devices = as.Devices.Clone()
	}
	p.mu.Unlock()
	return nil
}

// Bind implements fwk.BindPlugin for pods given GPU devices: the binding carries
// GPUDevicesAnnotation, which the API server merges into the pod as it sets its node
// (the pods/binding subresource copies a binding's annotations), so that the node and
// the devices are written at once, in one call. Any other pod is skipped (Skip), for
// the next bind plugin, DefaultBinder, to bind as it does. It is called only when
// FineGrain is enabled at the bind extension point before DefaultBinder (multiPoint
// alone puts it after, where DefaultBinder has bound every pod first); PreBind then
// leaves the devices to it (bindsFirst).
func (p *Plugin) Bind(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if !p.args.GPUDevices {
		return fwk.NewStatus(fwk.Skip)
	}
	as, ok := p.sched.Held(taskID(pod))
	if !ok || as.Node != nodeName || as.Devices.IsZero() {
		return fwk.NewStatus(fwk.Skip)
	}
	value := formatDevices(as.Devices.Devices)
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			Annotations: map[string]string{GPUDevicesAnnotation: value}},
		Target: v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("binding with annotation %s: %w", GPUDevicesAnnotation, err))
	}
	p.logger.V(4).Info("GPU devices written with the binding", "pod", klog.KObj(pod), "node", nodeName, "devices", value, "milli", as.Devices.Milli)
	return nil
}

// pluginLister is what kube-scheduler's framework (the Handle it gives plugins)
// answers: the plugins of the profile at each extension point, in the order they run.
type pluginLister interface {
	ListPlugins() *config.Plugins
}

// bindsFirst reports whether FineGrain's Bind runs before every other bind plugin of
// its profile, so that Bind writes the GPU devices with the binding. It asks the
// framework once, at the first PreBind (the profile is complete by then); a Handle
// that cannot say (not kube-scheduler's) counts as no, and PreBind patches.
func (p *Plugin) bindsFirst() bool {
	p.binderOnce.Do(func() {
		l, ok := p.handle.(pluginLister)
		if !ok {
			return
		}
		if ps := l.ListPlugins(); ps != nil && len(ps.Bind.Enabled) > 0 {
			p.binder = ps.Bind.Enabled[0].Name == Name
		}
		p.logger.V(2).Info("GPU devices", "writtenWithTheBinding", p.binder)
	})
	return p.binder
}

// foreignDevices is the GPU devices that pod, bound to node by another scheduler or
// before the plugin started, uses: those its GPUDevicesAnnotation names (a
// finegrain scheduler placed it). Without it, which devices its device plugin gave
// it is not known: guess is its demand, for guessDevices to choose them. Both zero
// when it asks no GPU; p.mu is held.
func (p *Plugin) foreignDevices(pod *v1.Pod) (devices gpu.Allocation, guess gpu.Demand) {
	d, err := p.gpuDemand(pod, podRequests(pod))
	if err != nil {
		p.logger.Error(err, "GPU demand of a pod placed by another scheduler", "pod", klog.KObj(pod))
		return gpu.Allocation{}, gpu.Demand{}
	}
	if d.IsZero() {
		return gpu.Allocation{}, gpu.Demand{}
	}
	if text, ok := pod.Annotations[GPUDevicesAnnotation]; ok {
		devs, err := parseDevices(text)
		if err == nil && len(devs) != d.Count {
			err = fmt.Errorf("annotation %s=%q: %d devices for a demand of %v", GPUDevicesAnnotation, text, len(devs), d)
		}
		if err == nil {
			return gpu.Allocation{Devices: devs, Milli: d.Milli}, gpu.Demand{}
		}
		p.logger.Error(err, "GPU devices of a pod placed by another scheduler: guessed", "pod", klog.KObj(pod))
	}
	d.Models = nil // it runs there, whatever the model
	return gpu.Allocation{}, d
}

// guessDevices chooses devices for node's foreign pods whose devices are not known
// (foreignDevices), in the order of their task IDs: the best fit of each demand on
// the node's devices as finegrain holds them, the known foreign shares and the
// earlier guesses taken. A pod none fits is held on none. p.mu is held; node is
// held by the Scheduler.
func (p *Plugin) guessDevices(node string) {
	var ids []string
	for id, f := range p.foreign {
		if f.node == node && !f.guess.IsZero() && f.devices.IsZero() {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	p.applyDevices(node) // the known shares first
	devices, err := p.sched.NodeDevices(node)
	if err != nil {
		return
	}
	for _, id := range ids {
		f := p.foreign[id]
		if a, ok := devices.BestFit(f.guess); ok && devices.Take(a) == nil {
			f.devices = a
			p.foreign[id] = f
		}
	}
}

// applyDevices tells the Scheduler the GPU shares node's foreign pods use, device by
// device; p.mu is held. A node not yet added gets them when it is.
func (p *Plugin) applyDevices(node string) {
	if !p.args.GPUDevices {
		return
	}
	if _, ok := p.nodes[node]; !ok {
		return
	}
	var used []int64
	for _, f := range p.foreign {
		if f.node != node || f.devices.IsZero() {
			continue
		}
		for _, i := range f.devices.Devices {
			for len(used) <= i {
				used = append(used, 0)
			}
			used[i] = min(used[i]+f.devices.Milli, gpu.Milli)
		}
	}
	if _, err := p.sched.SetExternalDevices(node, p.now(), used); err != nil {
		p.logger.Error(err, "GPU devices of pods placed by other schedulers", "node", node)
	}
}

// learnedFGD is Fragmentation Gradient Descent (gpu.FGD) over the shapes of the last
// fgdWindow pods the plugin was given: the most frequent ones that make up fgdCoverage
// of them, at most fgdMaxShapes, read on CPU alone (the study's "can host") and the
// GPU. It is rebuilt as pods arrive (observe); Score reads the latest without a lock.
type learnedFGD struct {
	cur atomic.Pointer[gpu.FGD]

	mu     sync.Mutex
	window []gpu.Shape // a ring of the last fgdWindow shapes
	next   int         // where the next shape goes once the ring is full
	since  int         // shapes observed since the last rebuild
}

// The window FGD's task shapes are learned over.
const (
	fgdWindow   = 1000
	fgdCoverage = 0.6 // the ATC'23 study simulator's default
	// fgdMaxShapes bounds the shapes scored (FGD.Score costs O(shapes) a device).
	fgdMaxShapes = 32
	// fgdRebuild is how many pods arrive between rebuilds once the window holds as
	// many; before, every pod rebuilds it.
	fgdRebuild = 50
)

// fgdDims is the dimensions FGD reads a shape's request on: CPU.
const fgdDims = resource.Mask(1)

// Score implements gpu.DeviceScorer: FGD over the shapes learned so far, or the best
// fit before any pod was seen.
func (f *learnedFGD) Score(n gpu.Node, t gpu.Shape) (float64, gpu.Allocation, bool) {
	if s := f.cur.Load(); s != nil {
		return s.Score(n, t)
	}
	return gpu.DeviceBestFit{Dims: fgdDims}.Score(n, t)
}

// observe adds a pod's shape to the window and rebuilds the scorer when it is due.
func (f *learnedFGD) observe(s gpu.Shape) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.Request = s.Request.Only(fgdDims)
	if len(f.window) < fgdWindow {
		f.window = append(f.window, s)
	} else {
		f.window[f.next] = s
		f.next = (f.next + 1) % fgdWindow
	}
	if f.since++; f.since < fgdRebuild && len(f.window) >= fgdRebuild {
		return
	}
	f.since = 0
	// Every shape is a task's the library accepted: neither call fails on them.
	if shapes, err := gpu.TypicalShapes(f.window, fgdDims, fgdCoverage); err == nil {
		if fgd, err := gpu.NewFGD(shapes[:min(len(shapes), fgdMaxShapes)], fgdDims); err == nil {
			f.cur.Store(fgd)
		}
	}
}

// observeShape feeds FGD the shape of task t, when FGD is the GPU scorer.
func (p *Plugin) observeShape(t finegrain.Task) {
	if f, ok := p.gpuScorer.(*learnedFGD); ok {
		f.observe(gpu.Shape{Request: t.Request, GPU: t.GPU})
	}
}

// scoreShare scales finegrain's score of a node, the sum of its scorer's (in [0, 1])
// and, with a GPU scorer, the GPU scorer's (also in [0, 1]), to [0, 1].
func (p *Plugin) scoreShare(x float64) float64 {
	if p.gpuScorer != nil {
		x /= 2
	}
	return min(max(x, 0), 1)
}

// newGPUScorer is args' GPU scorer: nil for None, or without GPU devices.
func newGPUScorer(args Args) gpu.DeviceScorer {
	if !args.GPUDevices || gpuScorers[args.GPUScorer] == nil {
		return nil
	}
	return gpuScorers[args.GPUScorer]()
}
