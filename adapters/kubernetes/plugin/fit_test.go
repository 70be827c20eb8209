package plugin

import (
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
)

// fitsByNodeResourcesFit is what Filter checked by request before the pod's request was
// worked out once at PreFilter: noderesources.Fits on every call, the first resource
// short that is not on the timelines. Fits lists the scalar resources in its map's
// order; here they come in name order, the order podFit checks them in.
func fitsByNodeResourcesFit(p *Plugin, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	short := noderesources.Fits(pod, ni, nil, noderesources.ResourceRequestsOptions{})
	rank := func(r noderesources.InsufficientResource) int {
		return slices.Index([]v1.ResourceName{v1.ResourcePods, v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}, r.ResourceName)
	}
	slices.SortStableFunc(short, func(a, b noderesources.InsufficientResource) int {
		ra, rb := rank(a), rank(b)
		switch {
		case ra >= 0 && rb >= 0:
			return ra - rb
		case ra >= 0:
			return -1
		case rb >= 0:
			return 1
		}
		return strings.Compare(string(a.ResourceName), string(b.ResourceName))
	})
	for _, r := range short {
		if p.scheme.slot(r.ResourceName) >= 0 {
			continue // finegrain's own, on the timeline
		}
		if r.Unresolvable {
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, r.Reason)
		}
		return fwk.NewStatus(fwk.Unschedulable, r.Reason)
	}
	return nil
}

// TestPodFitAsNodeResourcesFit: the request worked out once (fitOf) and checked against
// each node (podFit.fits) refuses exactly the nodes noderesources.Fits refuses, with
// the same code and reason, on random pods (containers, init and sidecar containers,
// overhead; CPU, memory, ephemeral storage, huge pages, extended resources on the
// timelines or not) and random nodes with random pods. The seed is fresh on every
// run and printed when the test fails; FINEGRAIN_FIT_SEED replays one.
func TestPodFitAsNodeResourcesFit(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("FINEGRAIN_FIT_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewSource(seed))
	for _, extended := range [][]string{nil, {"example.com/fpga"}, {"example.com/fpga", "hugepages-2Mi"}} {
		sc, err := newScheme(extended)
		if err != nil {
			t.Fatal(err)
		}
		p := &Plugin{scheme: sc}
		for i := 0; i < 3000; i++ {
			pod := randomPod(r, fmt.Sprintf("p%d", i))
			ni := randomNode(r)
			want := fitsByNodeResourcesFit(p, pod, ni)
			got := p.fitOf(pod).fits(ni)
			if statusText(got) != statusText(want) {
				t.Fatalf("seed %d (FINEGRAIN_FIT_SEED=%d replays it), extended %v, case %d: got %s, NodeResourcesFit %s\npod %+v\nnode allocatable %+v requested %+v pods %d",
					seed, seed, extended, i, statusText(got), statusText(want), pod.Spec, ni.GetAllocatable(), ni.GetRequested(), len(ni.GetPods()))
			}
		}
	}
}

// statusText is a status's code and reasons (nil: Success).
func statusText(st *fwk.Status) string {
	if st == nil {
		return "Success"
	}
	return fmt.Sprintf("%v %q", st.Code(), st.Reasons())
}

// fitResources are the resources random pods and nodes have.
var fitResources = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, "hugepages-2Mi", "example.com/fpga", "nvidia.com/gpu"}

func randomList(r *rand.Rand, scale int64) v1.ResourceList {
	rl := v1.ResourceList{}
	for _, name := range fitResources {
		if r.Intn(3) != 0 {
			continue
		}
		switch name {
		case v1.ResourceCPU:
			rl[name] = *apiresource.NewMilliQuantity(int64(r.Intn(4000))*scale, apiresource.DecimalSI)
		default:
			rl[name] = *apiresource.NewQuantity(int64(r.Intn(8))*scale, apiresource.BinarySI)
		}
	}
	return rl
}

func randomPod(r *rand.Rand, name string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
	for c := 0; c < 1+r.Intn(3); c++ {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", c), Resources: v1.ResourceRequirements{Requests: randomList(r, 1)}})
	}
	if r.Intn(3) == 0 {
		init := v1.Container{Name: "init", Resources: v1.ResourceRequirements{Requests: randomList(r, 2)}}
		if r.Intn(2) == 0 {
			always := v1.ContainerRestartPolicyAlways
			init.RestartPolicy = &always // a sidecar
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, init)
	}
	if r.Intn(4) == 0 {
		pod.Spec.Overhead = randomList(r, 1)
	}
	if r.Intn(5) == 0 {
		pod.Spec.Resources = &v1.ResourceRequirements{Requests: randomList(r, 3)} // pod-level: skipped, as by Fits
	}
	return pod
}

func randomNode(r *rand.Rand) fwk.NodeInfo {
	alloc := randomList(r, 3)
	alloc[v1.ResourcePods] = *apiresource.NewQuantity(int64(1+r.Intn(4)), apiresource.DecimalSI)
	var pods []*v1.Pod
	for i := 0; i < r.Intn(4); i++ {
		pods = append(pods, randomPod(r, fmt.Sprint("bound", i)))
	}
	ni := schedframework.NewNodeInfo(pods...)
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node"}, Status: v1.NodeStatus{Allocatable: alloc}})
	return ni
}
