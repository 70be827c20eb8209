package plugin_test

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/gpu"
)

// GPU sharing through the real kube-scheduler: pods ask a share of one GPU
// (finegrain.io/gpu-milli) or whole GPUs (nvidia.com/gpu), of given models
// (finegrain.io/gpu-model); nodes have the devices their capacity and
// nvidia.com/gpu.product label say; the devices the library chose are on the pod
// (finegrain.io/gpu-devices) when it is bound.

const (
	gpuConfigFile = "../deploy/scheduler-config-gpu.yaml"
	gpuResource   = "nvidia.com/gpu"
	shareResource = "finegrain.io/gpu-milli"
	modelLabel    = "nvidia.com/gpu.product"
)

// gpuArgs turns GPU sharing on with scorer; the pods' usage from annotations, no
// checkpoints.
func gpuArgs(scorer string) map[string]any {
	return map[string]any{"usageSource": plugin.UsageSourceAnnotation, "checkpointInterval": "0s", "gpuDevices": true, "gpuScorer": scorer}
}

// gpuNode creates a node of 16 cores and 64 GiB with count GPUs of model (the label
// unset when ""), as NVIDIA's device plugin and a share device plugin advertise them.
func (c *cluster) gpuNode(name, model string, count int) {
	c.t.Helper()
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name), Labels: map[string]string{}},
		Status:     v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
	if model != "" {
		n.Labels[modelLabel] = model
	}
	n.Status.Capacity = gpuCapacity("16", "64Gi", count)
	n.Status.Allocatable = gpuCapacity("16", "64Gi", count)
	created, err := c.client.CoreV1().Nodes().Create(c.ctx, n, metav1.CreateOptions{})
	require.NoError(c.t, err)
	created.Status = n.Status
	_, err = c.client.CoreV1().Nodes().UpdateStatus(c.ctx, created, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	// As nodeWith does: a pod created before the scheduler's cache holds the node
	// would be found unschedulable against no node at all.
	c.waitFor("node "+name+" in the scheduler's cache", func() bool { return c.cached(name) })
}

// gpuCapacity is a node's resources: cpu, mem, 110 pods and count GPUs, whole and in
// thousandths (none of either when count is 0).
func gpuCapacity(cpu, mem string, count int) v1.ResourceList {
	rl := v1.ResourceList{v1.ResourceCPU: apiresource.MustParse(cpu), v1.ResourceMemory: apiresource.MustParse(mem), v1.ResourcePods: apiresource.MustParse("110")}
	if count > 0 {
		rl[gpuResource] = *apiresource.NewQuantity(int64(count), apiresource.DecimalSI)
		rl[shareResource] = *apiresource.NewQuantity(int64(count)*gpu.Milli, apiresource.DecimalSI)
	}
	return rl
}

// updateNode changes node name through its status and labels, as a kubelet, a device
// plugin or GPU feature discovery would.
func (c *cluster) updateNode(name string, change func(*v1.Node)) {
	c.t.Helper()
	n, err := c.client.CoreV1().Nodes().Get(c.ctx, name, metav1.GetOptions{})
	require.NoError(c.t, err)
	n = n.DeepCopy()
	change(n)
	_, err = c.client.CoreV1().Nodes().UpdateStatus(c.ctx, n, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// gpuPod is a pod of 100m and 100Mi asking d: a share of one GPU, whole GPUs, or
// none, of d's models.
func gpuPod(name string, d gpu.Demand) pod {
	p := pod{name: name, cpu: "100m", mem: "100Mi", extra: v1.ResourceList{}, annotations: map[string]string{}}
	switch {
	case d.Shared():
		p.extra[shareResource] = *apiresource.NewQuantity(d.Milli, apiresource.DecimalSI)
	case d.Count > 0:
		p.extra[gpuResource] = *apiresource.NewQuantity(int64(d.Count), apiresource.DecimalSI)
	}
	if len(d.Models) > 0 {
		p.annotations[plugin.GPUModelAnnotation] = strings.Join(d.Models, ",")
	}
	return p
}

// devicesOf is the devices written on pod name, nil when none are.
func (c *cluster) devicesOf(name string) []int {
	c.t.Helper()
	text, ok := c.get(name).Annotations[plugin.GPUDevicesAnnotation]
	if !ok {
		return nil
	}
	var out []int
	for f := range strings.SplitSeq(text, ",") {
		i, err := strconv.Atoi(f)
		require.NoError(c.t, err, "annotation %q", text)
		out = append(out, i)
	}
	return out
}

// frees is node's devices' free shares as the plugin's Scheduler holds them.
func (c *cluster) frees(node string) []int64 {
	d, err := c.plugin.Scheduler().NodeDevices(node)
	if err != nil {
		return nil
	}
	out := make([]int64, d.Len())
	for i := range out {
		out[i] = d.Free(i)
	}
	return out
}

// waitFrees waits until node's devices have want free.
func (c *cluster) waitFrees(node string, want ...int64) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%s's devices to have %v free", node, want), func() bool { return slices.Equal(c.frees(node), want) })
}

// Shares of one GPU and whole GPUs, of given models, are placed device by device,
// and each pod carries its devices when it is bound: two V100 shares of 0.6 take a
// device each, a third finds 0.4 free on each and waits, although 0.8 is free in sum;
// a whole T4 goes to the T4 node; when a share ends, the waiting one takes its device.
func TestGPUSharesAndWholeGPUs(t *testing.T) {
	c := startCluster(t, setup{args: gpuArgs("Packing")})
	c.gpuNode("v100", "V100", 2)
	c.gpuNode("t4", "T4", 1)
	onV100 := gpu.Demand{Count: 1, Milli: 600, Models: []string{"V100"}}
	c.create(gpuPod("a", onV100))
	assert.Equal(t, "v100", c.waitBound("a"))
	c.create(gpuPod("b", onV100))
	assert.Equal(t, "v100", c.waitBound("b"))
	assert.ElementsMatch(t, []int{0, 1}, append(c.devicesOf("a"), c.devicesOf("b")...), "a device each")
	c.waitFrees("v100", 400, 400)
	c.create(gpuPod("c", onV100))
	assert.Contains(t, c.waitUnschedulable("c"), "no GPU device fits")
	c.create(gpuPod("d", gpu.Demand{Count: 1, Milli: 1000, Models: []string{"T4"}}))
	assert.Equal(t, "t4", c.waitBound("d"))
	assert.Equal(t, []int{0}, c.devicesOf("d"))
	c.create(gpuPod("cpu-only", gpu.Demand{}))
	c.waitBound("cpu-only")
	assert.NotContains(t, c.get("cpu-only").Annotations, plugin.GPUDevicesAnnotation, "no GPU, no devices")

	aDevice := c.devicesOf("a")
	c.finish("a", "")
	assert.Equal(t, "v100", c.waitBound("c"))
	assert.Equal(t, aDevice, c.devicesOf("c"), "c takes the device a gave back")
	c.waitFrees("v100", 400, 400)
	c.waitFrees("t4", 0)
}

// With deploy/scheduler-config-gpu.yaml FineGrain binds the pods it gave devices,
// and the binding carries them: the pod has its node and its devices from one API
// call, and no pod is patched; a pod without a GPU is bound by DefaultBinder. With
// the shipped configuration (FineGrain after DefaultBinder at bind) PreBind patches
// each GPU pod before its binding instead. Either way the pod carries its devices.
func TestGPUDevicesGoWithTheBinding(t *testing.T) {
	for _, tc := range []struct {
		config  string
		patches int64
	}{
		{gpuConfigFile, 0},
		{configFile, 2},
	} {
		t.Run(tc.config, func(t *testing.T) {
			var patches, bindings atomic.Int64
			withDevices := map[string]bool{}
			var mu sync.Mutex
			c := startCluster(t, setup{config: tc.config, args: gpuArgs("FGD"), client: func(cs *fake.Clientset) {
				cs.PrependReactor("patch", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
					if strings.Contains(string(action.(clienttesting.PatchAction).GetPatch()), plugin.GPUDevicesAnnotation) {
						patches.Add(1)
					}
					return false, nil, nil
				})
				cs.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
					if action.GetSubresource() == "binding" {
						b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
						bindings.Add(1)
						mu.Lock()
						withDevices[b.Name] = b.Annotations[plugin.GPUDevicesAnnotation] != ""
						mu.Unlock()
					}
					return false, nil, nil
				})
			}})
			c.gpuNode("n1", "T4", 3)
			c.create(gpuPod("share", gpu.Demand{Count: 1, Milli: 500}))
			c.create(gpuPod("whole", gpu.Demand{Count: 2, Milli: 1000}))
			c.create(gpuPod("cpu-only", gpu.Demand{}))
			for _, name := range []string{"share", "whole", "cpu-only"} {
				assert.Equal(t, "n1", c.waitBound(name))
			}
			assert.Len(t, c.devicesOf("share"), 1)
			assert.Len(t, c.devicesOf("whole"), 2)
			assert.NotContains(t, c.devicesOf("whole"), c.devicesOf("share")[0], "a whole GPU is not shared")
			assert.Nil(t, c.devicesOf("cpu-only"))
			assert.Equal(t, tc.patches, patches.Load(), "patches of pods' devices")
			assert.Equal(t, int64(3), bindings.Load())
			mu.Lock()
			defer mu.Unlock()
			byBinding := tc.patches == 0
			assert.Equal(t, map[string]bool{"share": byBinding, "whole": byBinding, "cpu-only": false}, withDevices, "bindings that carried devices")
		})
	}
}

// Pods asking what no device convention reads are refused with the reason.
func TestGPUMalformedPodsAreUnschedulable(t *testing.T) {
	c := startCluster(t, setup{args: gpuArgs("FGD")})
	c.gpuNode("n1", "V100", 2)
	share := func(milli int64) v1.ResourceList {
		return v1.ResourceList{shareResource: *apiresource.NewQuantity(milli, apiresource.DecimalSI)}
	}
	for _, tc := range []struct {
		name string
		p    pod
		want string
	}{
		{"both", pod{extra: v1.ResourceList{gpuResource: apiresource.MustParse("1"), shareResource: apiresource.MustParse("500")}}, "not both"},
		{"share-over-one", pod{extra: share(1500)}, "at most 1000"},
		{"share-not-whole", pod{extra: v1.ResourceList{shareResource: apiresource.MustParse("500m")}}, "whole number"},
		{"too-many", pod{extra: v1.ResourceList{gpuResource: apiresource.MustParse("65")}}, "at most 64"},
		{"model-without-gpu", pod{annotations: map[string]string{plugin.GPUModelAnnotation: "V100"}}, "without a request"},
		{"empty-model", pod{extra: share(500), annotations: map[string]string{plugin.GPUModelAnnotation: "V100,"}}, "empty model name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.name, tc.p.cpu, tc.p.mem = tc.name, "100m", "100Mi"
			c.create(tc.p)
			msg := c.waitUnschedulable(tc.name)
			assert.Contains(t, msg, tc.want)
		})
	}
	c.create(gpuPod("other-model", gpu.Demand{Count: 1, Milli: 500, Models: []string{"A100", "H100"}}))
	assert.Contains(t, c.waitUnschedulable("other-model"), "no node has the GPU devices it asks (0.5 GPU (A100|H100))")
}

// A node's capacity is followed through its updates, not read once: a GPU pod waits
// while the node's device plugin has not reported, and is bound with its device once
// it has and the model is labelled; allocatable CPU that grows lets a pod larger than
// the node was be placed; a node that shrinks under its pods keeps them,
// over-committed, and takes no more until they end; GPU devices held by a pod stay
// when the node reports fewer, until the pod ends.
func TestNodeUpdatesAreFollowed(t *testing.T) {
	c := startCluster(t, setup{args: gpuArgs("FGD")})
	c.gpuNode("n1", "", 0)
	c.create(gpuPod("trainer", gpu.Demand{Count: 2, Milli: gpu.Milli, Models: []string{"A100"}}))
	c.waitUnschedulable("trainer")
	c.updateNode("n1", func(n *v1.Node) {
		n.Status.Capacity = gpuCapacity("16", "64Gi", 4)
		n.Status.Allocatable = gpuCapacity("16", "64Gi", 4)
	})
	c.waitFrees("n1", 1000, 1000, 1000, 1000)
	assert.Contains(t, c.waitUnschedulable("trainer"), "no node has the GPU devices it asks (2 GPU (A100))", "the model is not labelled yet")
	c.updateNode("n1", func(n *v1.Node) { n.Labels[modelLabel] = "A100" })
	assert.Equal(t, "n1", c.waitBound("trainer"))
	assert.Len(t, c.devicesOf("trainer"), 2)

	// CPU: a pod larger than the node (beyond what compression allows) waits for it
	// to grow.
	c.create(pod{name: "big", cpu: "24", mem: "1Gi"})
	assert.Contains(t, c.waitUnschedulable("big"), "short of cpu")
	c.updateNode("n1", func(n *v1.Node) {
		n.Status.Allocatable[v1.ResourceCPU] = apiresource.MustParse("32")
		n.Status.Capacity[v1.ResourceCPU] = apiresource.MustParse("32")
	})
	assert.Equal(t, "n1", c.waitBound("big"))
	c.waitFor("the plugin to hold big on n1", func() bool {
		st, _ := c.plugin.Scheduler().TaskState(c.uid("big"))
		return st == finegrain.Running
	})

	// It shrinks below what its pods hold: they stay, and nothing more fits.
	c.updateNode("n1", func(n *v1.Node) {
		n.Status.Allocatable[v1.ResourceCPU] = apiresource.MustParse("16")
	})
	c.waitFor("n1's capacity to shrink", func() bool {
		free, err := c.plugin.Scheduler().NodeFree("n1", 0)
		return err == nil && free[0] < 0
	})
	for _, name := range []string{"trainer", "big"} {
		st, _ := c.plugin.Scheduler().TaskState(c.uid(name))
		assert.Equal(t, finegrain.Running, st, name)
	}
	c.create(pod{name: "small", cpu: "1", mem: "1Gi"})
	assert.Contains(t, c.waitUnschedulable("small"), "cpu")
	c.finish("big", "")
	assert.Equal(t, "n1", c.waitBound("small"))

	// The device plugin reports one device: those trainer holds stay until it ends.
	held := c.devicesOf("trainer")
	c.updateNode("n1", func(n *v1.Node) {
		n.Status.Capacity[gpuResource] = apiresource.MustParse("1")
		n.Status.Capacity[shareResource] = apiresource.MustParse("1000")
	})
	c.waitFor("the update to be logged", func() bool {
		return len(c.logs.errors("FineGrain", "GPU devices of an updated node")) > 0
	})
	want := []int64{1000, 1000, 1000, 1000}
	for _, i := range held {
		want[i] = 0
	}
	c.waitFrees("n1", want...)
	c.finish("trainer", "")
	c.waitFrees("n1", 1000, 1000, 1000, 1000)
	c.updateNode("n1", func(n *v1.Node) { n.Labels["touched"] = "yes" }) // the next update
	c.waitFrees("n1", 1000)
}

// Pods bound by another scheduler, or by a finegrain leader before a failover, hold
// their GPU devices: those their annotation names, else a guess of the right number;
// the plugin's pods get others, and get them back when those pods end.
func TestForeignPodsHoldTheirDevices(t *testing.T) {
	c := startCluster(t, setup{args: gpuArgs("DeviceBestFit")})
	c.gpuNode("n1", "V100", 4)
	prev := gpuPod("placed-before", gpu.Share(700))
	prev.scheduler, prev.node = "finegrain-scheduler-previous-leader", "n1"
	prev.annotations[plugin.GPUDevicesAnnotation] = "2"
	c.create(prev)
	c.waitFrees("n1", 1000, 1000, 300, 1000)
	theirs := gpuPod("theirs", gpu.Whole(2))
	theirs.scheduler, theirs.node = "default-scheduler", "n1"
	c.create(theirs)
	c.waitFrees("n1", 0, 0, 300, 1000) // the best fit: the first two free devices

	c.create(gpuPod("whole", gpu.Whole(1)))
	assert.Equal(t, "n1", c.waitBound("whole"))
	assert.Equal(t, []int{3}, c.devicesOf("whole"))
	c.create(gpuPod("share", gpu.Share(400)))
	assert.Contains(t, c.waitUnschedulable("share"), "no GPU device fits", "device 2 has 0.3 free")
	c.delete("placed-before")
	assert.Equal(t, "n1", c.waitBound("share"))
	assert.Equal(t, []int{2}, c.devicesOf("share"))
	c.delete("theirs")
	c.waitFrees("n1", 1000, 1000, 600, 0)
}

// A high-priority pod that needs the GPU a low-priority one holds evicts it (with
// preemption on), waits for it to go, and is bound with that device written on it.
func TestGPUPreemption(t *testing.T) {
	args := gpuArgs("FGD")
	args["preemption"] = true
	c := startCluster(t, setup{args: args})
	c.gpuNode("n1", "V100", 1)
	low := gpuPod("low", gpu.Share(600))
	c.create(low)
	assert.Equal(t, "n1", c.waitBound("low"))
	high := gpuPod("high", gpu.Whole(1))
	high.priority = 1000
	c.create(high)
	assert.Equal(t, "n1", c.waitBound("high"))
	_, err := c.client.CoreV1().Pods(ns).Get(c.ctx, "low", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the victim was deleted: %v", err)
	assert.Equal(t, []int{0}, c.devicesOf("high"))
	c.waitFrees("n1", 0)
}

// The library's device invariants hold through the real scheduler loop, over random
// pods — shares of one GPU, whole GPUs, CPU only; of random models or any — on a few
// nodes of random device counts and models, with a random GPU scorer, a pod of a
// previous leader holding a share, and half the bound pods ending half-way, when more
// come: once the
// scheduler has settled, every bound GPU pod carries as many distinct devices as it
// asks, on its node, of a model it allows; no device is given beyond 1000
// thousandths; a whole-GPU pod shares none of its devices; each node's devices as the
// plugin's Scheduler holds them are exactly what the bound pods' annotations take; and
// every pod left unbound fits on no node's devices. The seed is fresh on every run,
// printed on failure; FINEGRAIN_GPU_SEED replays one.
func TestGPUInvariantsThroughTheScheduler(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("FINEGRAIN_GPU_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "FINEGRAIN_GPU_SEED")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d: replay with FINEGRAIN_GPU_SEED=%d", seed, seed)
		}
	})
	r := rand.New(rand.NewSource(seed))
	scorers := []string{"FGD", "DeviceBestFit", "DotProduct", "Packing", "None"}
	for round := range 5 {
		scorer, sub := scorers[r.Intn(len(scorers))], r.Int63()
		t.Run(fmt.Sprintf("round %d %s", round, scorer), func(t *testing.T) {
			gpuRound(t, rand.New(rand.NewSource(sub)), scorer)
		})
	}
}

// gpuWorld is what the test knows of a round: the nodes' devices and the pods'
// demands.
type gpuWorld struct {
	c       *cluster
	nodes   map[string]gpu.Spec
	demands map[string]gpu.Demand
	ended   map[string]bool
}

func gpuRound(t *testing.T, r *rand.Rand, scorer string) {
	c := startCluster(t, setup{args: gpuArgs(scorer)})
	w := &gpuWorld{c: c, nodes: map[string]gpu.Spec{}, demands: map[string]gpu.Demand{}, ended: map[string]bool{}}
	models := []string{"T4", "V100"}
	for i := range 3 {
		spec := gpu.Spec{Model: models[r.Intn(2)], Count: 1 + r.Intn(4)}
		name := fmt.Sprintf("n%d", i)
		c.gpuNode(name, spec.Model, spec.Count)
		w.nodes[name] = spec
	}
	// A pod a previous leader placed, its device written.
	prev := gpuPod("prev", gpu.Share(500))
	prev.scheduler, prev.node = "finegrain-scheduler", "n0"
	prev.annotations[plugin.GPUDevicesAnnotation] = "0"
	c.create(prev)
	w.demands["prev"] = gpu.Share(500)
	c.waitFor("the previous leader's pod to hold its share", func() bool {
		f := c.frees("n0")
		return len(f) > 0 && f[0] == 500
	})
	wave := func(from, n int) {
		for i := from; i < from+n; i++ {
			var d gpu.Demand
			switch k := r.Intn(10); {
			case k < 5:
				d = gpu.Share(int64(1+r.Intn(9)) * 100)
			case k < 8:
				d = gpu.Whole(1 + r.Intn(2))
			}
			if !d.IsZero() && r.Intn(4) == 0 {
				d.Models = []string{models[r.Intn(2)]}
			}
			name := fmt.Sprintf("p%d", i)
			w.demands[name] = d
			c.create(gpuPod(name, d))
		}
	}
	wave(0, 16)
	w.settle()
	// Half the bound pods end — deleted: kube-scheduler's own pod informer drops a
	// pod that succeeds as if it were deleted (its field selector leaves out ended
	// pods), and the test's would keep its requests counted — and the waiting ones
	// and a second wave take their room.
	for _, name := range w.bound() {
		if name != "prev" && r.Intn(2) == 0 {
			c.delete(name)
			w.ended[name] = true
		}
	}
	wave(16, 6)
	w.settle()
}

// bound lists the pods bound and not ended, in name order.
func (w *gpuWorld) bound() []string {
	var out []string
	for name := range w.demands {
		if !w.ended[name] && w.c.get(name).Spec.NodeName != "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// settle waits until the invariants hold and every unbound pod fits nowhere, and
// fails the test with what is wrong when they do not within a generous deadline.
func (w *gpuWorld) settle() {
	w.c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		msg := w.check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			w.c.t.Fatalf("after 60s: %s", msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check reports what breaks the invariants now, "" when none does.
func (w *gpuWorld) check() string {
	type use struct {
		pod   string
		milli int64
		whole bool
	}
	uses := map[string][][]use{} // by node, by device
	for n, spec := range w.nodes {
		uses[n] = make([][]use, spec.Count)
	}
	pending := []string{}
	for name, d := range w.demands {
		if w.ended[name] {
			continue
		}
		p := w.c.get(name)
		node := p.Spec.NodeName
		if node == "" {
			pending = append(pending, name)
			continue
		}
		text, ok := p.Annotations[plugin.GPUDevicesAnnotation]
		if d.IsZero() {
			if ok {
				return fmt.Sprintf("pod %s asks no GPU and carries devices %q", name, text)
			}
			continue
		}
		if !ok {
			return fmt.Sprintf("pod %s (%v) is bound to %s without devices", name, d, node)
		}
		spec := w.nodes[node]
		if !d.Allows(spec.Model) {
			return fmt.Sprintf("pod %s (%v) is on %s of model %s", name, d, node, spec.Model)
		}
		var devs []int
		for f := range strings.SplitSeq(text, ",") {
			i, err := strconv.Atoi(f)
			if err != nil || i < 0 || i >= spec.Count || slices.Contains(devs, i) {
				return fmt.Sprintf("pod %s (%v) on %s (%d devices) carries devices %q", name, d, node, spec.Count, text)
			}
			devs = append(devs, i)
		}
		if len(devs) != d.Count {
			return fmt.Sprintf("pod %s (%v) carries %d devices, %q", name, d, len(devs), text)
		}
		for _, i := range devs {
			uses[node][i] = append(uses[node][i], use{name, d.Milli, !d.Shared()})
		}
	}
	free := map[string]*gpu.Devices{}
	for n, spec := range w.nodes {
		d, _ := gpu.New(spec)
		for i, us := range uses[n] {
			sum := int64(0)
			for _, u := range us {
				sum += u.milli
				if u.whole && len(us) > 1 {
					return fmt.Sprintf("node %s device %d: whole-GPU pod %s shares it: %v", n, i, u.pod, us)
				}
			}
			if sum > gpu.Milli {
				return fmt.Sprintf("node %s device %d: %d thousandths given: %v", n, i, sum, us)
			}
			if sum > 0 {
				_ = d.Take(gpu.Allocation{Devices: []int{i}, Milli: sum})
			}
		}
		want := make([]int64, d.Len())
		for i := range want {
			want[i] = d.Free(i)
		}
		if got := w.c.frees(n); !slices.Equal(got, want) {
			return fmt.Sprintf("node %s: the plugin's Scheduler has %v free, the pods' devices leave %v", n, got, want)
		}
		free[n] = &d
	}
	sort.Strings(pending)
	for _, name := range pending {
		for n, d := range free {
			if d.Fits(w.demands[name]) {
				why := ""
				for _, cond := range w.c.get(name).Status.Conditions {
					if cond.Type == v1.PodScheduled {
						why = cond.Message
					}
				}
				return fmt.Sprintf("pod %s (%v) is not bound (%q), and node %s's devices (%v) hold it", name, w.demands[name], why, n, w.c.frees(n))
			}
		}
	}
	return ""
}
