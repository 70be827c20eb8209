package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
	v1qos "k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// This file is what the plugin knows of Kubernetes' in-place pod resize
// (InPlacePodVerticalScaling; the pods/resize subresource, beta and on by default
// from v1.33, GA from v1.35): whether a node and a pod can take one, and the resize of
// a pod's containers that carries out a change of what finegrain holds for it.

// ResizeSubresource is the pods' subresource an in-place resize is written through.
const ResizeSubresource = "resize"

// minResizeKubelet is the first kubelet version with in-place resize on by default
// (InPlacePodVerticalScaling beta); older ones have it only behind an alpha gate.
var minResizeKubelet = version.MajorMinor(1, 33)

// The least request a shrink may leave a container: 1 millicore of CPU, 1 MiB of
// memory. A shrink that would go below is not carried out.
const (
	minCPURequest    = 1       // millicores
	minMemoryRequest = 1 << 20 // bytes
)

// nodeResizable says why node n cannot resize its pods in place ("" when it can, or
// when that is not known): a Windows node (Kubernetes does not resize Windows pods),
// or a kubelet older than v1.33. A node whose kubelet version is not reported (or not
// read) is not refused here: its pods' own status tells (podResizable).
func nodeResizable(n *v1.Node) string {
	if n == nil {
		return ""
	}
	info := n.Status.NodeInfo
	if strings.EqualFold(info.OperatingSystem, string(v1.Windows)) {
		return fmt.Sprintf("node %s runs Windows, whose pods Kubernetes does not resize in place", n.Name)
	}
	if v, err := version.ParseGeneric(info.KubeletVersion); err == nil && v.LessThan(minResizeKubelet) {
		return fmt.Sprintf("node %s's kubelet %s predates in-place pod resize (on by default from v1.33)", n.Name, info.KubeletVersion)
	}
	return ""
}

// podResizable says why pod cannot be resized in place ("" when it can): a Windows or
// static pod, one with pod-level resources (this plugin resizes containers), or one
// whose running containers report no resources in their status — what the API server
// itself checks: the node's kubelet runs without InPlacePodVerticalScaling, and the
// API server refuses the resize ("Pod running on node without support for resize").
func podResizable(pod *v1.Pod) string {
	switch {
	case pod.Spec.OS != nil && pod.Spec.OS.Name == v1.Windows:
		return "Kubernetes does not resize Windows pods in place"
	case pod.Annotations[v1.MirrorPodAnnotationKey] != "":
		return "a static pod cannot be resized"
	case pod.Spec.Resources != nil && len(pod.Spec.Resources.Requests)+len(pod.Spec.Resources.Limits) > 0:
		return "the pod sets pod-level resources; the plugin resizes containers only"
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			if cs.Resources == nil {
				return fmt.Sprintf("its running container %q reports no resources: the kubelet of node %s has in-place resize (InPlacePodVerticalScaling) off", cs.Name, pod.Spec.NodeName)
			}
			break
		}
	}
	return ""
}

// containerResize is how one container's resources change in a resize: the new
// requests and limits of the resources that change, and what they were.
type containerResize struct {
	name                   string
	requests, limits       v1.ResourceList // new values, of the resources changed
	oldRequests, oldLimits v1.ResourceList // their values before
}

// resizeOf works out how pod's regular containers change so that, in all, their
// requests change by amount — added when grow, taken otherwise — in the plugin's
// units (CPU in millicores, memory in bytes): the amount of each resource is shared
// among the containers in proportion to their requests of it (largest remainders,
// ties to the first container, so that the shares sum to the amount exactly); a grow
// of a resource no container requests goes to the first container. A container's CPU
// limit, if it has one, moves by its share too, keeping its headroom (and a
// Guaranteed pod's CPU request equal to its limit); its memory limit never moves
// (resizedResources). Init and sidecar containers are left as they are.
//
// It fails, saying why, when amount changes anything but CPU and memory (the only
// resources Kubernetes resizes in place), when a shrink would take a container's
// request below 1m of CPU or 1Mi of memory or take a resource no container requests,
// when a memory request would rise above its limit, and when the change would alter
// the pod's QoS class (the API server refuses that: a Guaranteed pod's memory
// request cannot move without its limit).
func resizeOf(pod *v1.Pod, amount resource.Tuple, grow bool, sc *scheme) ([]containerResize, error) {
	if len(pod.Spec.Containers) == 0 {
		return nil, errors.New("the pod has no containers")
	}
	for i, x := range amount {
		if x != 0 && i != cpuSlot && i != memSlot {
			return nil, fmt.Errorf("only cpu and memory are resized in place, and the change is of %s too", sc.names[i])
		}
		if x < 0 {
			return nil, fmt.Errorf("negative amount %d of %s", x, sc.names[i])
		}
	}
	out := make([]containerResize, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		out[i] = containerResize{name: c.Name, requests: v1.ResourceList{}, limits: v1.ResourceList{}, oldRequests: v1.ResourceList{}, oldLimits: v1.ResourceList{}}
	}
	for _, r := range resizedResources {
		x := amount[r.slot]
		if x == 0 {
			continue
		}
		weights := make([]int64, len(pod.Spec.Containers))
		var total int64
		for i, c := range pod.Spec.Containers {
			if q, ok := c.Resources.Requests[r.name]; ok {
				weights[i] = r.value(q)
				total += weights[i]
			}
		}
		var shares []int64
		switch {
		case total > 0:
			shares = split(x, weights)
		case grow:
			shares = make([]int64, len(weights))
			shares[0] = x
		default:
			return nil, fmt.Errorf("no container requests %s: there is none to take", r.name)
		}
		for i, c := range pod.Spec.Containers {
			share := shares[i]
			if share == 0 {
				continue
			}
			if !grow {
				share = -share
			}
			old := c.Resources.Requests[r.name]
			req := r.value(old) + share
			if req < r.least {
				taken, least := r.quantity(-share), r.quantity(r.least)
				return nil, fmt.Errorf("container %q: its %s request %s less %s would be below %s", c.Name, r.name, old.String(), taken.String(), least.String())
			}
			cr := &out[i]
			if _, ok := c.Resources.Requests[r.name]; ok {
				cr.oldRequests[r.name] = old.DeepCopy()
			}
			cr.requests[r.name] = r.quantity(req)
			lim, ok := c.Resources.Limits[r.name]
			switch {
			case ok && r.limits:
				cr.oldLimits[r.name] = lim.DeepCopy()
				cr.limits[r.name] = r.quantity(max(r.value(lim)+share, req))
			case ok && req > r.value(lim):
				q := r.quantity(req)
				return nil, fmt.Errorf("container %q: its %s request would rise to %s, above its limit %s, which the plugin does not change", c.Name, r.name, q.String(), lim.String())
			}
		}
	}
	changed := out[:0]
	for _, cr := range out {
		if len(cr.requests) > 0 {
			changed = append(changed, cr)
		}
	}
	after := resized(pod, changed)
	if before, now := v1qos.GetPodQOS(pod), v1qos.ComputePodQOS(after); before != now {
		return nil, fmt.Errorf("it would change the pod's QoS class from %s to %s, which Kubernetes refuses", before, now)
	}
	return changed, nil
}

// resizedResource is a resource Kubernetes resizes in place, in the plugin's units.
type resizedResource struct {
	slot   int
	name   v1.ResourceName
	milli  bool  // CPU: millicores
	least  int64 // the least request a shrink may leave
	limits bool  // a container's limit moves with its request
}

// resizedResources are CPU, whose limit moves with the request (a CPU limit
// throttles: a straggler grown needs its limit raised, a batch pod preempted is slowed
// by its lowered limit), and memory, whose limit is never changed: lowered below what
// the container uses, the kernel would kill it — the method is kill-free — and a
// memory request only comes back (Restore) to what it was, under the limit.
var resizedResources = []resizedResource{
	{slot: cpuSlot, name: v1.ResourceCPU, milli: true, least: minCPURequest, limits: true},
	{slot: memSlot, name: v1.ResourceMemory, least: minMemoryRequest},
}

// value is q in the plugin's units.
func (r resizedResource) value(q apiresource.Quantity) int64 {
	if r.milli {
		return q.MilliValue()
	}
	return q.Value()
}

// quantity is x, in the plugin's units, as a Kubernetes quantity.
func (r resizedResource) quantity(x int64) apiresource.Quantity {
	if r.milli {
		return *apiresource.NewMilliQuantity(x, apiresource.DecimalSI)
	}
	return *apiresource.NewQuantity(x, apiresource.BinarySI)
}

// split shares amount among weights (non-negative, not all zero) in proportion, by
// largest remainders: each gets ⌊amount × w / Σw⌋, and what is left goes one unit each
// to the largest remainders, ties to the first. The shares sum to amount exactly.
func split(amount int64, weights []int64) []int64 {
	total := new(big.Int)
	for _, w := range weights {
		total.Add(total, big.NewInt(w))
	}
	out := make([]int64, len(weights))
	rems := make([]*big.Int, len(weights))
	left := amount
	for i, w := range weights {
		q, r := new(big.Int).QuoRem(new(big.Int).Mul(big.NewInt(amount), big.NewInt(w)), total, new(big.Int))
		out[i], rems[i] = q.Int64(), r
		left -= out[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return rems[b].Cmp(rems[a]) })
	for k := 0; left > 0; k = (k + 1) % len(order) {
		if weights[order[k]] > 0 {
			out[order[k]]++
			left--
		}
	}
	return out
}

// resized is a copy of pod with changes made to its containers.
func resized(pod *v1.Pod, changes []containerResize) *v1.Pod {
	after := pod.DeepCopy()
	after.Status.QOSClass = "" // worked out again from the resources
	for _, cr := range changes {
		for i := range after.Spec.Containers {
			c := &after.Spec.Containers[i]
			if c.Name != cr.name {
				continue
			}
			if c.Resources.Requests == nil {
				c.Resources.Requests = v1.ResourceList{}
			}
			for n, q := range cr.requests {
				c.Resources.Requests[n] = q
			}
			for n, q := range cr.limits {
				c.Resources.Limits[n] = q
			}
		}
	}
	return after
}

// resizePatch is the strategic merge patch of pods/resize that makes changes,
// with resourceVersion as a precondition when not empty: the API server refuses it
// (a conflict) if the pod changed since it was read.
func resizePatch(resourceVersion string, changes []containerResize) ([]byte, error) {
	type resources struct {
		Requests v1.ResourceList `json:"requests,omitempty"`
		Limits   v1.ResourceList `json:"limits,omitempty"`
	}
	type container struct {
		Name      string    `json:"name"`
		Resources resources `json:"resources"`
	}
	type patch struct {
		Metadata *struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata,omitempty"`
		Spec struct {
			Containers []container `json:"containers"`
		} `json:"spec"`
	}
	var pt patch
	if resourceVersion != "" {
		pt.Metadata = &struct {
			ResourceVersion string `json:"resourceVersion"`
		}{resourceVersion}
	}
	for _, cr := range changes {
		pt.Spec.Containers = append(pt.Spec.Containers, container{Name: cr.name, Resources: resources{Requests: cr.requests, Limits: cr.limits}})
	}
	return json.Marshal(pt)
}

// undone is the inverse of changes: each container's requests and limits set back to
// what they were (a request a grow added, where there was none, cannot be removed —
// the API server refuses that — and stays at the least request).
func undone(changes []containerResize) []containerResize {
	out := make([]containerResize, len(changes))
	for i, cr := range changes {
		back := containerResize{name: cr.name, requests: v1.ResourceList{}, limits: v1.ResourceList{}, oldRequests: cr.requests, oldLimits: cr.limits}
		for n := range cr.requests {
			if q, ok := cr.oldRequests[n]; ok {
				back.requests[n] = q
			} else {
				back.requests[n] = resourceOf(n).quantity(resourceOf(n).least)
			}
		}
		for n := range cr.limits {
			back.limits[n] = cr.oldLimits[n]
		}
		out[i] = back
	}
	return out
}

// resourceOf is the resized resource named n (CPU or memory).
func resourceOf(n v1.ResourceName) resizedResource {
	if n == v1.ResourceCPU {
		return resizedResources[0]
	}
	return resizedResources[1]
}

// growing reports whether a scale-up action of kind k adds to what a pod holds.
func growing(k speculate.StepKind) bool {
	return k == speculate.Expand || k == speculate.Restore || k == speculate.Move
}

// actuated reports whether pod's container statuses report the requests changes
// wrote, with no resize pending or in progress.
func actuated(pod *v1.Pod, changes []containerResize) bool {
	for _, c := range pod.Status.Conditions {
		if (c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress) && c.Status == v1.ConditionTrue {
			return false
		}
	}
	for _, cr := range changes {
		i := slices.IndexFunc(pod.Status.ContainerStatuses, func(cs v1.ContainerStatus) bool { return cs.Name == cr.name })
		if i < 0 || pod.Status.ContainerStatuses[i].Resources == nil {
			return false
		}
		got := pod.Status.ContainerStatuses[i].Resources.Requests
		for n, q := range cr.requests {
			if g, ok := got[n]; !ok || g.Cmp(q) != 0 {
				return false
			}
		}
	}
	return true
}
