package plugin

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// This file checks, by request, what NodeResourcesFit would check besides the
// resources on finegrain's timelines — the node's pod count, ephemeral storage, huge
// pages and extended resources not named in Args.ExtendedResources — since a profile
// that enables the plugin disables NodeResourcesFit. As NodeResourcesFit does, the
// pod's request is worked out once, at PreFilter (podFit), and each Filter compares it
// with the node's Requested and Allocatable.

// podFit is what a pod asks of the resources not on the timelines, worked out once.
type podFit struct {
	// ephemeral is the pod's ephemeral storage request, 0 when there is none or it is
	// on the timelines.
	ephemeral int64
	// scalars are its requests of scalar resources (extended resources, huge pages,
	// attachable volumes) not on the timelines, by name.
	scalars []scalarFit
}

// scalarFit is a pod's request of one scalar resource, and the reason of a node that
// cannot hold it.
type scalarFit struct {
	name    v1.ResourceName
	request int64
	reason  string
}

// fitOf works out pod's podFit: its request as NodeResourcesFit's PreFilter computes
// it with the options the plugin's Filter has always used (noderesources.Fits with
// zero ResourceRequestsOptions: pod-level resources skipped, no DRA), less the
// resources on the timelines.
func (p *Plugin) fitOf(pod *v1.Pod) *podFit {
	var req schedframework.Resource
	req.SetMaxResource(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true}))
	f := &podFit{}
	if req.EphemeralStorage > 0 && p.scheme.slot(v1.ResourceEphemeralStorage) < 0 {
		f.ephemeral = req.EphemeralStorage
	}
	for name, q := range req.ScalarResources {
		if q > 0 && p.scheme.slot(name) < 0 {
			f.scalars = append(f.scalars, scalarFit{name: name, request: q, reason: "Insufficient " + string(name)})
		}
	}
	// NodeResourcesFit reports every resource short and the plugin the first: in
	// name order here, where NodeResourcesFit's map has none.
	slices.SortFunc(f.scalars, func(a, b scalarFit) int { return strings.Compare(string(a.name), string(b.name)) })
	return f
}

// fits checks node ni for the pod of f as noderesources.Fits does, and reports the
// first resource short, as NodeResourcesFit would (Unresolvable where the node is
// smaller than the request); nil when it holds the pod. CPU and memory, and the
// extended resources named in Args.ExtendedResources, are finegrain's: Filter matches
// them on the timelines.
func (f *podFit) fits(ni fwk.NodeInfo) *fwk.Status {
	alloc, used := ni.GetAllocatable(), ni.GetRequested()
	if len(ni.GetPods())+1 > alloc.GetAllowedPodNumber() {
		return fwk.NewStatus(fwk.Unschedulable, "Too many pods")
	}
	if f.ephemeral > 0 && f.ephemeral > alloc.GetEphemeralStorage()-used.GetEphemeralStorage() {
		return shortOf(f.ephemeral > alloc.GetEphemeralStorage(), "Insufficient ephemeral-storage")
	}
	if len(f.scalars) == 0 {
		return nil
	}
	have, held := alloc.GetScalarResources(), used.GetScalarResources()
	for _, s := range f.scalars {
		if s.request > have[s.name]-held[s.name] {
			return shortOf(s.request > have[s.name], s.reason)
		}
	}
	return nil
}

// shortOf is the status of a node short of a resource: UnschedulableAndUnresolvable
// when it is smaller than the request.
func shortOf(unresolvable bool, reason string) *fwk.Status {
	if unresolvable {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reason)
	}
	return fwk.NewStatus(fwk.Unschedulable, reason)
}
