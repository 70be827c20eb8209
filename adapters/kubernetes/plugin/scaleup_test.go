package plugin_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/speculate"
)

// Mixed workloads in the real kube-scheduler loop over the fake clientset: classes and
// objectives from the pods' annotations, progress from theirs, scale-up rounds run
// when the test says so (Plugin.ScaleUpNow) at the time its clock says, and their
// actions carried out through pods/resize — or not, said, and the books set back.

// scaleUpArgs turn the rounds on (and learn from annotations, so that no metrics call
// is made but where a test samples).
var scaleUpArgs = map[string]any{"usageSource": plugin.UsageSourceAnnotation, "scaleUp": map[string]any{"interval": "30s"}}

// servesResize makes the fake clientset's discovery list pods/resize, as an API server
// of v1.33 or later does.
func servesResize(fc *fake.Clientset) {
	fc.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Name: "pods/resize", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "patch", "update"}},
	}}}
}

// servesNoResize makes the fake clientset's discovery list the core resources of an API
// server older than v1.33: pods, without pods/resize.
func servesNoResize(fc *fake.Clientset) {
	fc.Resources = []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
	}}}
}

// lsPod is a latency-sensitive pod with an objective of 10s, asking 2 cores (limit 4)
// and 2 GiB.
func lsPod(name string) pod {
	return pod{name: name, cpu: "2", mem: "2Gi",
		limits:      v1.ResourceList{v1.ResourceCPU: apiresource.MustParse("4")},
		annotations: map[string]string{plugin.ClassAnnotation: "latency-sensitive", plugin.SLOAnnotation: "10s"}}
}

// slowDown has pod name report its progress slowing down, one report a second from
// its binding: 0.1, 0.2, 0.25, 0.3. Its speed halves (0.1/s, then 0.05/s): due 18s
// after it started, past an objective of 10s, it needs 7/3 of its CPU (the library's
// TestScaleUpKnownAnswer), 2667m more for 2 cores.
func (c *cluster) slowDown(name string) {
	c.t.Helper()
	for _, x := range []string{"0.1", "0.2", "0.25", "0.3"} {
		c.clock.step(time.Second)
		c.annotate(name, plugin.ProgressAnnotation, x)
		c.waitFor(name+"'s progress "+x+" reported", func() bool { return c.plugin.ReportedProgress(ns, name) == x })
	}
}

// held is what finegrain holds for pod name now.
func (c *cluster) held(name string) string {
	c.t.Helper()
	a, err := c.plugin.Scheduler().Allocation(c.uid(name), c.plugin.Now())
	require.NoError(c.t, err)
	return c.plugin.Scheduler().Schema().Format(a.Held)
}

// resizes are the patches the fake clientset saw of pods' resize subresource.
func (c *cluster) resizes() []clienttesting.PatchAction {
	var out []clienttesting.PatchAction
	for _, a := range c.client.(*fake.Clientset).Actions() {
		if pa, ok := a.(clienttesting.PatchAction); ok && a.GetResource().Resource == "pods" && a.GetSubresource() == "resize" {
			out = append(out, pa)
		}
	}
	return out
}

// discoveries counts the fake clientset's discovery calls.
func (c *cluster) discoveries() int {
	n := 0
	for _, a := range c.client.(*fake.Clientset).Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "resource" {
			n++
		}
	}
	return n
}

// requests is pod name's main container's requests and limits of CPU, as the API
// holds them: "2/4".
func (c *cluster) cpuOf(name string) string {
	r := c.get(name).Spec.Containers[0].Resources
	return r.Requests.Cpu().String() + "/" + r.Limits.Cpu().String()
}

// scaleActions is finegrain_scale_actions_total of kind and result.
func scaleActions(t *testing.T, kind, result string) float64 {
	t.Helper()
	return gather(t).value(t, "finegrain_scale_actions_total", map[string]string{"profile": schedulerName, "kind": kind, "result": result})
}

// A latency-sensitive pod that slows down is grown in place: its container's CPU
// request and limit rise by the 2667m the round planned, through pods/resize, the
// books hold what the pod does, and an Event says so. When the kubelet then finds the
// resize infeasible, the next round writes the pod's resources back and sets the
// books back, and does not resize the pod again for five minutes.
func TestScaleUpGrowsAStragglerThroughResize(t *testing.T) {
	resized := scaleActions(t, "expand", "resized")
	infeasible := scaleActions(t, "expand", "infeasible")
	c := startCluster(t, setup{args: scaleUpArgs, client: servesResize})
	c.node("n1", "8", "16Gi")
	c.create(lsPod("web"))
	c.waitBound("web")
	c.waitState("web", finegrain.Running)
	require.True(t, c.plugin.ScaleUpNow())
	assert.Empty(t, c.resizes(), "no progress reported: nothing to do")
	c.slowDown("web")

	require.True(t, c.plugin.ScaleUpNow())
	require.Len(t, c.resizes(), 1)
	patch := string(c.resizes()[0].GetPatch())
	assert.Contains(t, patch, `"name":"main"`)
	assert.Equal(t, "4667m/6667m", c.cpuOf("web"), "request and limit up by 2667m")
	assert.Equal(t, "cpu=4667m,memory=2Gi", c.held("web"), "the books hold what the pod does")
	e := c.podEvent("web", plugin.ResizedReason, "expand by cpu=2667m through pods/resize: container main: cpu requests 2 → 4667m, limits 4 → 6667m")
	assert.Equal(t, v1.EventTypeNormal, e.Type)
	assert.Equal(t, 1.0, scaleActions(t, "expand", "resized")-resized)
	awaited, _ := c.plugin.ResizeAwaited(c.uid("web"))
	assert.True(t, awaited, "until the kubelet reports it")

	// The kubelet refuses it.
	p := c.get("web").DeepCopy()
	p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible, Message: "Node didn't have enough capacity: cpu, requested: 4667, capacity: 4000"})
	_, err := c.client.CoreV1().Pods(ns).UpdateStatus(c.ctx, p, metav1.UpdateOptions{})
	require.NoError(t, err)
	c.waitFor("the kubelet's verdict seen", func() bool {
		_, msg := c.plugin.ResizeAwaited(c.uid("web"))
		return msg != ""
	})
	c.clock.step(time.Second)
	require.True(t, c.plugin.ScaleUpNow())
	require.GreaterOrEqual(t, len(c.resizes()), 2)
	assert.Equal(t, "2/4", c.cpuOf("web"), "written back")
	assert.Equal(t, "cpu=2,memory=2Gi", c.held("web"), "the books set back")
	assert.Equal(t, 1.0, scaleActions(t, "expand", "infeasible")-infeasible)
	e = c.podEvent("web", plugin.ResizeInfeasibleReason, "the kubelet found the resize infeasible: Node didn't have enough capacity")
	assert.Equal(t, v1.EventTypeWarning, e.Type)
	// The same round planned the growth again (3200m, a second later): it is not
	// tried while the backoff lasts.
	c.podEvent("web", plugin.ResizeUnsupportedReason, "planned expand by cpu=3200m not carried out: the kubelet found the pod's last resize infeasible: it is not resized again for 5m0s")
	assert.Equal(t, "2/4", c.cpuOf("web"))
	assert.Equal(t, "cpu=2,memory=2Gi", c.held("web"))
}

// Where the API server does not serve pods/resize, the round plans the same growth,
// the pod is not touched, an Event, a log line and the metrics say why, and the books
// are set back: the next round plans it again. Discovery is asked once for both
// rounds, and again once its answer is ten minutes old.
func TestScaleUpWithoutResizeChangesNothing(t *testing.T) {
	unsupported := scaleActions(t, "expand", "unsupported")
	c := startCluster(t, setup{args: scaleUpArgs, client: servesNoResize})
	c.node("n1", "8", "16Gi")
	c.create(lsPod("web"))
	c.waitBound("web")
	c.waitState("web", finegrain.Running)
	c.slowDown("web")
	free, err := c.plugin.Scheduler().NodeFree("n1", c.plugin.Now())
	require.NoError(t, err)

	require.True(t, c.plugin.ScaleUpNow())
	assert.Empty(t, c.resizes(), "the pod is not touched")
	assert.Equal(t, "2/4", c.cpuOf("web"))
	assert.Equal(t, "cpu=2,memory=2Gi", c.held("web"), "the books set back")
	after, err := c.plugin.Scheduler().NodeFree("n1", c.plugin.Now())
	require.NoError(t, err)
	assert.Equal(t, free, after)
	e := c.podEvent("web", plugin.ResizeUnsupportedReason, "planned expand by cpu=2667m not carried out: the API server does not serve pods/resize")
	assert.Equal(t, v1.EventTypeWarning, e.Type)
	assert.Contains(t, e.Note, "books set back")
	assert.Equal(t, 1.0, scaleActions(t, "expand", "unsupported")-unsupported)
	assert.Equal(t, 0.0, gather(t).value(t, "finegrain_pod_resize_served", map[string]string{"profile": schedulerName}))
	logged := c.logs.infos(plugin.Name, "planned action not carried out")
	require.Len(t, logged, 1)
	assert.Contains(t, fmt.Sprint(logged[0].kv), "the API server does not serve pods/resize")
	assert.Len(t, c.logs.infos(plugin.Name, "in-place pod resize not available"), 1)

	c.clock.step(time.Second)
	require.True(t, c.plugin.ScaleUpNow())
	assert.Equal(t, 2.0, scaleActions(t, "expand", "unsupported")-unsupported, "planned again: the books were set back")
	assert.Len(t, c.logs.infos(plugin.Name, "planned action not carried out"), 1, "said once at level 0")
	assert.Equal(t, 1, c.discoveries(), "discovery's answer is kept")
	c.clock.step(10 * time.Minute)
	require.True(t, c.plugin.ScaleUpNow())
	assert.Equal(t, 2, c.discoveries(), "and asked again after ten minutes")
	assert.Empty(t, c.resizes())
}

// A discovery that fails resizes nothing, is logged once, and is asked again at the
// next round rather than kept.
func TestScaleUpDiscoveryFails(t *testing.T) {
	c := startCluster(t, setup{args: scaleUpArgs, client: func(fc *fake.Clientset) {
		servesResize(fc)
		fc.PrependReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, errors.New("connection refused")
		})
	}})
	c.node("n1", "8", "16Gi")
	c.create(lsPod("web"))
	c.waitBound("web")
	c.waitState("web", finegrain.Running)
	c.slowDown("web")
	require.True(t, c.plugin.ScaleUpNow())
	c.clock.step(time.Second)
	require.True(t, c.plugin.ScaleUpNow())
	assert.Equal(t, 2, c.discoveries(), "a failure is not kept")
	assert.Empty(t, c.resizes())
	assert.Equal(t, "cpu=2,memory=2Gi", c.held("web"))
	c.podEvent("web", plugin.ResizeUnsupportedReason, "API discovery failed: connection refused")
	assert.Len(t, c.logs.errors(plugin.Name, "API discovery failed"), 1)
}

// Feature detection per node and per pod: a kubelet older than v1.33, and a pod whose
// running container reports no resources (its kubelet has in-place resize off), are
// not resized though the API server serves pods/resize; the books are set back.
func TestScaleUpNodeAndPodSupport(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(c *cluster)
		want    string
	}{
		{"an old kubelet", func(c *cluster) {
			n, err := c.client.CoreV1().Nodes().Get(c.ctx, "n1", metav1.GetOptions{})
			require.NoError(c.t, err)
			n.Status.NodeInfo.KubeletVersion = "v1.32.4"
			_, err = c.client.CoreV1().Nodes().UpdateStatus(c.ctx, n, metav1.UpdateOptions{})
			require.NoError(c.t, err)
			// The informer that updates the scheduler's cache updates the plugin's lister first.
			c.waitFor("the node's kubelet version seen", func() bool {
				n := c.cachedNode("n1")
				return n != nil && n.Status.NodeInfo.KubeletVersion == "v1.32.4"
			})
		}, "node n1's kubelet v1.32.4 predates in-place pod resize"},
		{"a kubelet with resize off", func(c *cluster) {
			p := c.get("web").DeepCopy()
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}
			_, err := c.client.CoreV1().Pods(ns).UpdateStatus(c.ctx, p, metav1.UpdateOptions{})
			require.NoError(c.t, err)
		}, `its running container "main" reports no resources`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCluster(t, setup{args: scaleUpArgs, client: servesResize})
			c.node("n1", "8", "16Gi")
			c.create(lsPod("web"))
			c.waitBound("web")
			c.waitState("web", finegrain.Running)
			tc.prepare(c) // the pod itself is read from the API when it is resized
			c.slowDown("web")
			require.True(t, c.plugin.ScaleUpNow())
			assert.Empty(t, c.resizes())
			assert.Equal(t, "cpu=2,memory=2Gi", c.held("web"))
			c.podEvent("web", plugin.ResizeUnsupportedReason, tc.want)
		})
	}
}

// A batch pod that uses far less than it holds is shrunk to make room for a straggler
// on its node (the local top-up), and the straggler grown: two resizes. When the batch
// pod cannot be resized, the straggler's growth, planned on the room its shrink would
// free, is not carried out either, and both are set back.
func TestScaleUpShrinksBatchForAStraggler(t *testing.T) {
	for _, tc := range []struct {
		name      string
		batchOK   bool
		wantBatch string
		wantWeb   string
	}{
		{"both carried out", true, "3333m/3333m", "4667m/6667m"},
		{"the shrink cannot be", false, "4/4", "2/4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"usageSource": plugin.UsageSourceMetricsAPI, "checkpointInterval": "0s", "scaleUp": map[string]any{}}
			c := startCluster(t, setup{args: args, client: servesResize})
			c.node("n1", "8", "16Gi")
			c.create(pod{name: "etl", cpu: "4", mem: "8Gi", limits: v1.ResourceList{v1.ResourceCPU: apiresource.MustParse("4"), v1.ResourceMemory: apiresource.MustParse("8Gi")}})
			c.waitBound("etl")
			c.running("etl")
			// etl uses one core and 2 GiB of the 4 and 8 it holds: redundant.
			c.samples("etl", 4, "1", "2Gi")
			c.create(lsPod("web"))
			c.waitBound("web")
			c.waitState("web", finegrain.Running)
			if !tc.batchOK {
				p := c.get("etl").DeepCopy()
				p.Spec.OS = &v1.PodOS{Name: v1.Windows}
				_, err := c.client.CoreV1().Pods(ns).Update(c.ctx, p, metav1.UpdateOptions{})
				require.NoError(t, err)
			}
			c.slowDown("web")
			require.True(t, c.plugin.ScaleUpNow())
			assert.Equal(t, tc.wantBatch, c.cpuOf("etl"))
			assert.Equal(t, tc.wantWeb, c.cpuOf("web"))
			if tc.batchOK {
				require.Len(t, c.resizes(), 2)
				assert.Equal(t, "etl", c.resizes()[0].GetName(), "the shrink first")
				assert.Equal(t, "cpu=3333m,memory=8Gi", c.held("etl"))
				assert.Equal(t, "cpu=4667m,memory=2Gi", c.held("web"))
				c.podEvent("etl", plugin.ResizedReason, "reclaim by cpu=667m")
				return
			}
			assert.Empty(t, c.resizes())
			assert.Equal(t, "cpu=4,memory=8Gi", c.held("etl"))
			assert.Equal(t, "cpu=2,memory=2Gi", c.held("web"))
			c.podEvent("etl", plugin.ResizeUnsupportedReason, "Windows")
			c.podEvent("web", plugin.ResizeUnsupportedReason, "the room it was planned on was not freed: the shrink (or move) of pod default/etl on node n1 was not carried out")
		})
	}
}

// Kubernetes cannot move a pod: the plugin's rounds plan no move. A straggler whose
// node is full, with room only on another node, is left as it is (with idleOnly,
// nothing is taken from the batch pod beside it), and nothing is evicted.
func TestScaleUpMovesNothing(t *testing.T) {
	args := map[string]any{"usageSource": plugin.UsageSourceAnnotation, "scaleUp": map[string]any{"idleOnly": true}}
	c := startCluster(t, setup{args: args, client: servesResize})
	c.node("n1", "8", "16Gi")
	c.create(lsPod("web"))
	c.create(pod{name: "etl", cpu: "6", mem: "8Gi"})
	c.waitBound("web")
	c.waitBound("etl")
	c.node("n2", "8", "16Gi")
	c.waitState("web", finegrain.Running)
	stragglers := gather(t).value(t, "finegrain_stragglers_total", map[string]string{"profile": schedulerName})
	c.slowDown("web")
	require.True(t, c.plugin.ScaleUpNow())
	assert.Equal(t, 1.0, gather(t).value(t, "finegrain_stragglers_total", map[string]string{"profile": schedulerName})-stragglers)
	assert.Empty(t, c.resizes())
	assert.Equal(t, "n1", c.get("web").Spec.NodeName)
	a, err := c.plugin.Scheduler().Allocation(c.uid("web"), c.plugin.Now())
	require.NoError(t, err)
	assert.Equal(t, "n1", a.Node, "not moved in the books either")
	for _, act := range c.client.(*fake.Clientset).Actions() {
		assert.False(t, act.GetVerb() == "delete" && act.GetResource().Resource == "pods", "nothing evicted")
	}
	assert.Zero(t, scaleActions(t, speculate.Move.String(), "unsupported"))
}
