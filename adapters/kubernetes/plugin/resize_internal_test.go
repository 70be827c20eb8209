package plugin

import (
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// resizePod is a running pod of containers, each "name": requests and limits as
// Kubernetes quantities ("" none).
type testContainer struct {
	name                       string
	cpu, cpuLimit, mem, memLim string
}

func resizePod(cs ...testContainer) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	for _, c := range cs {
		res := v1.ResourceRequirements{Requests: v1.ResourceList{}, Limits: v1.ResourceList{}}
		for _, q := range []struct {
			list v1.ResourceList
			name v1.ResourceName
			text string
		}{{res.Requests, v1.ResourceCPU, c.cpu}, {res.Limits, v1.ResourceCPU, c.cpuLimit}, {res.Requests, v1.ResourceMemory, c.mem}, {res.Limits, v1.ResourceMemory, c.memLim}} {
			if q.text != "" {
				q.list[q.name] = apiresource.MustParse(q.text)
			}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c.name, Resources: res})
	}
	return pod
}

// The resize built for each kind of action: the patch of pods/resize, exactly.
func TestResizeOf(t *testing.T) {
	sc, err := newScheme([]string{"nvidia.com/gpu"})
	require.NoError(t, err)
	gib := int64(1) << 30
	tuple := func(cpu, mem int64) resource.Tuple { return resource.Tuple{cpu, mem} }
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		kind   speculate.StepKind
		amount resource.Tuple
		patch  string // the patch, without a resourceVersion
		err    string
	}{
		{"expand a straggler's one container, its limit too", resizePod(testContainer{"main", "2", "4", "2Gi", ""}),
			speculate.Expand, tuple(2667, 0),
			`{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"4667m"},"limits":{"cpu":"6667m"}}}]}}`, ""},
		{"expand a Guaranteed pod: requests and limits stay equal", resizePod(testContainer{"main", "1", "1", "1Gi", "1Gi"}),
			speculate.Expand, tuple(500, 0),
			`{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1500m"},"limits":{"cpu":"1500m"}}}]}}`, ""},
		{"reclaim CPU and memory from two containers, in proportion to their requests; a memory limit stays", resizePod(testContainer{"app", "3", "4", "6Gi", "8Gi"}, testContainer{"log", "1", "", "2Gi", ""}),
			speculate.Reclaim, tuple(1000, 2*gib),
			`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"2250m","memory":"4608Mi"},"limits":{"cpu":"3250m"}}},{"name":"log","resources":{"requests":{"cpu":"750m","memory":"1536Mi"}}}]}}`, ""},
		{"restore memory under its limit", resizePod(testContainer{"app", "1", "", "4608Mi", "8Gi"}),
			speculate.Restore, tuple(0, 1536<<20),
			`{"spec":{"containers":[{"name":"app","resources":{"requests":{"memory":"6Gi"}}}]}}`, ""},
		{"a memory request above its limit", resizePod(testContainer{"app", "1", "", "7Gi", "8Gi"}),
			speculate.Restore, tuple(0, 2*gib), "", `container "app": its memory request would rise to 9Gi, above its limit 8Gi`},
		{"a Guaranteed pod's memory: its limit would have to move", resizePod(testContainer{"app", "1", "1", "8Gi", "8Gi"}),
			speculate.Reclaim, tuple(0, gib), "", "QoS class from Guaranteed to Burstable"},
		{"preempt CPU, shares by largest remainder", resizePod(testContainer{"a", "1", "", "", ""}, testContainer{"b", "1", "", "", ""}, testContainer{"c", "1", "", "", ""}),
			speculate.Preempt, tuple(100, 0),
			`{"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"966m"}}},{"name":"b","resources":{"requests":{"cpu":"967m"}}},{"name":"c","resources":{"requests":{"cpu":"967m"}}}]}}`, ""},
		{"restore to a container that requests, none to one that does not", resizePod(testContainer{"app", "2", "", "1Gi", ""}, testContainer{"side", "", "", "64Mi", ""}),
			speculate.Restore, tuple(500, 0),
			`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"2500m"}}}]}}`, ""},
		{"grow a resource no container requests: the first container", resizePod(testContainer{"app", "", "", "1Gi", ""}, testContainer{"side", "", "", "64Mi", ""}),
			speculate.Expand, tuple(250, 0),
			`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"250m"}}}]}}`, ""},
		{"shrink a resource no container requests", resizePod(testContainer{"app", "", "", "1Gi", ""}),
			speculate.Preempt, tuple(250, 0), "", "no container requests cpu"},
		{"shrink below the least request", resizePod(testContainer{"app", "100m", "", "1Gi", ""}),
			speculate.Reclaim, tuple(100, 0), "", `container "app": its cpu request 100m less 100m would be below 1m`},
		{"shrink memory below 1Mi", resizePod(testContainer{"app", "1", "", "2Mi", ""}),
			speculate.Reclaim, tuple(0, 3<<19), "", "below 1Mi"},
		{"a BestEffort pod would become Burstable", resizePod(testContainer{"app", "", "", "", ""}),
			speculate.Expand, tuple(500, 0), "", "QoS class from BestEffort to Burstable"},
		{"an extended resource", resizePod(testContainer{"app", "1", "", "1Gi", ""}),
			speculate.Expand, resource.Tuple{100, 0, 1}, "", "only cpu and memory are resized in place, and the change is of nvidia.com/gpu too"},
		{"no containers", &v1.Pod{}, speculate.Expand, tuple(1, 0), "", "no containers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changes, err := resizeOf(tc.pod, tc.amount, growing(tc.kind), sc)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			patch, err := resizePatch("", changes)
			require.NoError(t, err)
			assert.JSONEq(t, tc.patch, string(patch))
			assert.Equal(t, v1qos.GetPodQOS(tc.pod), v1qos.ComputePodQOS(resized(tc.pod, changes)), "the QoS class is kept")
			withRV, err := resizePatch("42", changes)
			require.NoError(t, err)
			assert.Contains(t, string(withRV), `"metadata":{"resourceVersion":"42"}`, "the pod as read is a precondition")
			// Written back, the pod is as it was.
			back := resized(resized(tc.pod, changes), undone(changes))
			for i, c := range back.Spec.Containers {
				for _, n := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
					want, had := tc.pod.Spec.Containers[i].Resources.Requests[n]
					got := c.Resources.Requests[n]
					if had {
						assert.Zero(t, want.Cmp(got), "%s %s written back", c.Name, n)
					}
				}
			}
		})
	}
}

// On random pods and amounts, a resize either fails or changes the containers'
// requests by exactly the amount, keeps every limit at or above its request and every
// request at or above the least, and keeps the pod's QoS class.
func TestResizeOfRandom(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	r := rand.New(rand.NewSource(seed))
	sc, err := newScheme(nil)
	require.NoError(t, err)
	qty := func(x int64, milli bool) string {
		if milli {
			return apiresource.NewMilliQuantity(x, apiresource.DecimalSI).String()
		}
		return apiresource.NewQuantity(x, apiresource.BinarySI).String()
	}
	changed := 0
	for range 2000 {
		var cs []testContainer
		for i := range 1 + r.Intn(4) {
			c := testContainer{name: string(rune('a' + i))}
			if r.Intn(4) > 0 {
				cpu := int64(1 + r.Intn(8000))
				c.cpu = qty(cpu, true)
				if r.Intn(2) == 0 {
					c.cpuLimit = qty(cpu+int64(r.Intn(2))*int64(r.Intn(4000)), true)
				}
			}
			if r.Intn(4) > 0 {
				mem := int64(1+r.Intn(16<<10)) << 20
				c.mem = qty(mem, false)
				if r.Intn(2) == 0 {
					c.memLim = qty(mem+int64(r.Intn(2))*int64(r.Intn(4<<10))<<20, false)
				}
			}
			cs = append(cs, c)
		}
		pod := resizePod(cs...)
		grow := r.Intn(2) == 0
		amount := resource.Tuple{int64(r.Intn(3000)), int64(r.Intn(4<<10)) << 20}
		changes, err := resizeOf(pod, amount, grow, sc)
		if err != nil {
			continue
		}
		changed++
		after := resized(pod, changes)
		require.Equal(t, v1qos.GetPodQOS(pod), v1qos.ComputePodQOS(after))
		for _, rr := range resizedResources {
			var before, now int64
			for i := range pod.Spec.Containers {
				b, a := pod.Spec.Containers[i].Resources, after.Spec.Containers[i].Resources
				before += rr.value(b.Requests[rr.name])
				now += rr.value(a.Requests[rr.name])
				if q, ok := a.Requests[rr.name]; ok && rr.value(q) != rr.value(b.Requests[rr.name]) {
					require.GreaterOrEqual(t, rr.value(q), rr.least)
				}
				if l, ok := a.Limits[rr.name]; ok {
					require.GreaterOrEqual(t, rr.value(l), rr.value(a.Requests[rr.name]), "%s's %s limit", pod.Spec.Containers[i].Name, rr.name)
					if !rr.limits {
						require.Zero(t, l.Cmp(b.Limits[rr.name]), "a memory limit never moves")
					}
				}
			}
			want := amount[rr.slot]
			if !grow {
				want = -want
			}
			require.Equal(t, want, now-before, "%s: %+v %v grow=%v", rr.name, cs, amount, grow)
		}
	}
	require.Greater(t, changed, 100, "most random resizes are possible")
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		amount  int64
		weights []int64
		want    []int64
	}{
		{100, []int64{1, 1, 1}, []int64{34, 33, 33}},
		{1000, []int64{3000, 1000}, []int64{750, 250}},
		{5, []int64{0, 2, 0, 3}, []int64{0, 2, 0, 3}},
		{7, []int64{0, 5}, []int64{0, 7}},
		{1 << 40, []int64{1 << 40, 1 << 41}, []int64{366503875925, 733007751851}},
		{0, []int64{1, 2}, []int64{0, 0}},
	} {
		got := split(tc.amount, tc.weights)
		assert.Equal(t, tc.want, got, "%d over %v", tc.amount, tc.weights)
		var sum int64
		for _, x := range got {
			sum += x
		}
		assert.Equal(t, tc.amount, sum)
	}
}

// Feature detection on a node and on a pod: what the API server itself checks, and
// what the node's status tells.
func TestResizableNodesAndPods(t *testing.T) {
	node := func(os, kubelet string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{NodeInfo: v1.NodeSystemInfo{OperatingSystem: os, KubeletVersion: kubelet}}}
	}
	for _, tc := range []struct {
		name string
		node *v1.Node
		want string
	}{
		{"a v1.33 kubelet", node("linux", "v1.33.0"), ""},
		{"a v1.37 kubelet", node("linux", "v1.37.2"), ""},
		{"a vendor's kubelet version", node("linux", "v1.34.3-eks-1234"), ""},
		{"a kubelet not reported", node("", ""), ""},
		{"a version not read", node("linux", "unknown"), ""},
		{"no node", nil, ""},
		{"a v1.32 kubelet", node("linux", "v1.32.9"), "node n1's kubelet v1.32.9 predates in-place pod resize"},
		{"Windows", node("windows", "v1.37.2"), "node n1 runs Windows"},
	} {
		assert.Equal(t, tc.want == "", nodeResizable(tc.node) == "", tc.name)
		assert.Contains(t, nodeResizable(tc.node), tc.want, tc.name)
	}
	running := func(res *v1.ResourceRequirements) v1.ContainerStatus {
		return v1.ContainerStatus{Name: "main", State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}, Resources: res}
	}
	for _, tc := range []struct {
		name string
		pod  func(*v1.Pod)
		want string
	}{
		{"not started yet", func(*v1.Pod) {}, ""},
		{"running, its resources reported", func(p *v1.Pod) {
			p.Status.ContainerStatuses = []v1.ContainerStatus{running(&v1.ResourceRequirements{})}
		}, ""},
		{"running, no resources reported", func(p *v1.Pod) {
			p.Status.ContainerStatuses = []v1.ContainerStatus{running(nil)}
		}, `its running container "main" reports no resources`},
		{"Windows", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} }, "Windows pods"},
		{"static", func(p *v1.Pod) { p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "x"} }, "static pod"},
		{"pod-level resources", func(p *v1.Pod) {
			p.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: apiresource.MustParse("1")}}
		}, "pod-level resources"},
	} {
		p := resizePod(testContainer{"main", "1", "", "1Gi", ""})
		tc.pod(p)
		assert.Equal(t, tc.want == "", podResizable(p) == "", tc.name)
		assert.Contains(t, podResizable(p), tc.want, tc.name)
	}
}

// A resize is carried out once the kubelet reports the requests written, with no
// resize pending or in progress.
func TestActuated(t *testing.T) {
	sc, err := newScheme(nil)
	require.NoError(t, err)
	pod := resizePod(testContainer{"main", "2", "4", "2Gi", ""})
	changes, err := resizeOf(pod, resource.Tuple{1000, 0}, true, sc)
	require.NoError(t, err)
	status := func(cpu string, conds ...v1.PodConditionType) *v1.Pod {
		p := pod.DeepCopy()
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "main", Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: apiresource.MustParse(cpu)}}}}
		for _, c := range conds {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: c, Status: v1.ConditionTrue})
		}
		return p
	}
	assert.False(t, actuated(pod, changes), "no status")
	assert.False(t, actuated(status("2"), changes), "the old request")
	assert.False(t, actuated(status("3", v1.PodResizeInProgress), changes), "in progress")
	assert.False(t, actuated(status("3", v1.PodResizePending), changes), "pending")
	assert.True(t, actuated(status("3000m"), changes))
}
