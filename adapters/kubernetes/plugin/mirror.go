package plugin

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file keeps the finegrain Scheduler in step with the cluster, from the
// scheduler's informers: nodes come, change and go; the plugin's own pods finish (teaching
// the estimator what they used) or are deleted; bound pods the plugin did not place
// are held on their nodes as their requests.

// watch registers the plugin's informer handlers.
func (p *Plugin) watch(f informers.SharedInformerFactory) error {
	_, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*v1.Node); ok {
				p.addNode(n)
				p.activateRefused()
				p.activateUnresolved()
			}
		},
		UpdateFunc: func(_, obj any) {
			if n, ok := obj.(*v1.Node); ok && p.updateNode(n) {
				p.activateRefused()
				p.activateUnresolved()
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if n, ok := obj.(*v1.Node); ok {
				p.removeNode(n.Name)
			}
		},
	})
	if err != nil {
		return err
	}
	_, err = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*v1.Pod); ok {
				p.podChanged(pod)
			}
		},
		UpdateFunc: func(_, obj any) {
			if pod, ok := obj.(*v1.Pod); ok {
				p.podChanged(pod)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				p.podGone(pod)
			}
		},
	})
	return err
}

// podGone ends a pod the pod informer no longer holds. kube-scheduler's pod informer
// (scheduler.NewInformerFactory) watches only pods that have not ended: a pod that
// succeeds or fails leaves it, and the event that says so carries the pod as it was
// before — still running, without its final status or the usage annotation written
// as it ended. So for a pod of the plugin's the API is asked for the pod as it is
// now: one that succeeded or failed ends as its phase says; one that is gone (or
// another pod by that name, or still not ended: deleted while it ran) ends deleted.
// The API answering nothing (an error) counts the pod deleted: it teaches nothing
// rather than something wrong.
func (p *Plugin) podGone(pod *v1.Pod) {
	final := pod
	if p.ours(pod) && p.handle != nil && p.handle.ClientSet() != nil {
		ctx, cancel := context.WithTimeout(p.ctx, finalStateTimeout)
		got, err := p.handle.ClientSet().CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		cancel()
		switch {
		case err == nil && got.UID == pod.UID:
			final = got
		case err != nil && !apierrors.IsNotFound(err):
			p.logger.V(2).Info("final state of an ended pod not read: taken as deleted", "pod", klog.KObj(pod), "err", err)
		}
	}
	switch final.Status.Phase {
	case v1.PodSucceeded:
		p.podEnded(final, true)
	default:
		p.podEnded(final, false)
	}
}

// finalStateTimeout bounds podGone's read of a pod's final state.
const finalStateTimeout = 10 * time.Second

// ours reports whether pod is one the plugin submitted.
func (p *Plugin) ours(pod *v1.Pod) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pods[taskID(pod)]
	return ok
}

// addNode adds node n to the Scheduler, its capacity its allocatable resources, its
// GPU devices as nodeGPU reads them.
func (p *Plugin) addNode(n *v1.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.addNodeLocked(n)
}

// addNodeLocked is addNode; p.mu is held.
func (p *Plugin) addNodeLocked(n *v1.Node) {
	if _, ok := p.nodes[n.Name]; ok {
		return
	}
	capacity, spec, err := p.nodeSpec(n)
	p.roomFreed() // giveway.go
	if err == nil {
		err = p.sched.AddNode(finegrain.Node{ID: n.Name, Capacity: capacity, GPU: spec})
	}
	if err != nil && !errors.Is(err, finegrain.ErrDuplicate) {
		p.logger.Error(err, "add node", "node", klog.KObj(n))
		return
	}
	p.nodes[n.Name] = nodeMeta{uid: n.UID, capacity: capacity, gpu: spec}
	p.nodeCounted(p.sched.Adjuster().Mode(n.Name), 1)
	if !p.load[n.Name].IsZero() {
		p.applyLoad(n.Name)
	}
	p.guessDevices(n.Name)
	p.applyDevices(n.Name)
}

// nodeSpec is what the Scheduler holds of node n: its allocatable resources and its
// GPU devices.
func (p *Plugin) nodeSpec(n *v1.Node) (resource.Tuple, gpu.Spec, error) {
	capacity, err := p.scheme.tuple(n.Status.Allocatable, true)
	if err != nil {
		return capacity, gpu.Spec{}, err
	}
	spec, err := p.nodeGPU(n)
	return capacity, spec, err
}

// updateNode follows node n's changes: a new allocatable capacity, GPU devices
// reported (a device plugin that registered after the node joined) or their model
// labelled, are changed in place (Scheduler.UpdateNode), the pods there keeping what
// they hold; a node not yet held (its capacity was empty when it was added) is added;
// one replaced under its name (another UID) is removed and added again. It reports
// whether the node may have more room than before. When a pod holds a device the
// update would remove, the node keeps its devices, the rest of the update is made,
// and the next update of the node tries again.
func (p *Plugin) updateNode(n *v1.Node) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	meta, ok := p.nodes[n.Name]
	switch {
	case !ok:
		p.addNodeLocked(n)
		_, ok = p.nodes[n.Name]
		return ok
	case meta.uid != n.UID:
		p.removeNodeLocked(n.Name)
		p.addNodeLocked(n)
		return true
	}
	capacity, spec, err := p.nodeSpec(n)
	if err != nil {
		p.logger.Error(err, "update node", "node", klog.KObj(n))
		return false
	}
	if capacity == meta.capacity && spec == meta.gpu {
		return false // a status change that finegrain does not hold: conditions, heartbeats
	}
	node := finegrain.Node{ID: n.Name, Capacity: capacity, GPU: spec}
	err = p.sched.UpdateNode(node, p.now())
	if errors.Is(err, finegrain.ErrState) {
		p.logger.Error(err, "GPU devices of an updated node: kept while pods hold them", "node", klog.KObj(n), "devices", spec.Count)
		node.GPU.Count = meta.gpu.Count
		err = p.sched.UpdateNode(node, p.now())
	}
	if err != nil {
		p.logger.Error(err, "update node", "node", klog.KObj(n))
		return false
	}
	p.logger.V(2).Info("node updated", "node", klog.KObj(n), "capacity", p.scheme.schema.Format(capacity), "gpus", node.GPU.Count, "model", node.GPU.Model)
	p.nodes[n.Name] = nodeMeta{uid: n.UID, capacity: capacity, gpu: node.GPU}
	// The node's foreign load and device shares are held again against its new room:
	// the library does it (UpdateNode).
	return true
}

// removeNode removes a node; its pods' deletions follow.
func (p *Plugin) removeNode(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.removeNodeLocked(name)
}

// removeNodeLocked is removeNode; p.mu is held.
func (p *Plugin) removeNodeLocked(name string) {
	if _, ok := p.nodes[name]; !ok {
		return
	}
	delete(p.nodes, name)
	p.nodeCounted(p.sched.Adjuster().Mode(name), -1)
	if _, err := p.sched.RemoveNode(name, p.now()); err != nil {
		p.logger.Error(err, "remove node", "node", name)
	}
}

// podChanged follows a pod's updates: an ended pod is done; a bound pod the plugin
// did not place is held on its node by its requests.
func (p *Plugin) podChanged(pod *v1.Pod) {
	switch {
	case pod.Status.Phase == v1.PodSucceeded:
		p.podEnded(pod, true)
	case pod.Status.Phase == v1.PodFailed:
		p.podEnded(pod, false)
	case pod.Spec.NodeName != "":
		p.followProgress(pod) // a pod of the plugin's reports its progress (mixed.go)
		p.resizeVerdict(pod)  // and the kubelet's verdict on a resize (scaleup.go)
		p.addForeign(pod)
	}
}

// addForeign holds a bound pod the plugin did not submit on its node, as its
// requests, from now until it ends. A bound pod of the plugin's that finegrain holds
// neither reserved nor running (its binding went through after the plugin gave it up)
// is held the same way; a preempted pod still terminating is not: its preemptor
// waits for it, holding the room.
func (p *Plugin) addForeign(pod *v1.Pod) {
	id := taskID(pod)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ours := p.pods[id]; ours {
		if _, victim := p.terminating[id]; victim {
			return
		}
		if st, _ := p.sched.TaskState(id); st == finegrain.Pending {
			p.holdByRequest(id, pod.Spec.NodeName)
		}
		return
	}
	if _, ok := p.foreign[id]; ok {
		return
	}
	req, err := p.scheme.tuple(podRequests(pod), true)
	if err != nil {
		p.logger.Error(err, "requests of a pod placed by another scheduler", "pod", klog.KObj(pod))
		return
	}
	node := pod.Spec.NodeName
	f := foreignPod{node: node, request: req}
	f.devices, f.guess = p.foreignDevices(pod)
	p.foreign[id] = f
	p.load[node] = p.load[node].Add(req)
	p.applyLoad(node)
	if !f.guess.IsZero() {
		p.guessDevices(node)
	}
	p.applyDevices(node)
}

// podEnded ends a pod: succeeded (its usage teaches the estimator), failed or
// deleted (its usage, sampled, may teach as a running pod's would: finish).
func (p *Plugin) podEnded(pod *v1.Pod, succeeded bool) {
	if p.endPod(pod, succeeded) {
		p.activateRefused()
	}
}

// endPod ends a pod and reports whether that freed room.
func (p *Plugin) endPod(pod *v1.Pod, succeeded bool) bool {
	id := taskID(pod)
	usage, uerr := p.usageOf(pod, id)
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.refused, id)
	delete(p.unresolved, id)
	delete(p.victims, id)
	p.forgetVictim(id)
	p.forgetCycles(id) // giveway.go
	if f, ok := p.foreign[id]; ok {
		delete(p.foreign, id)
		p.roomFreed() // giveway.go
		p.load[f.node] = p.load[f.node].Sub(f.request)
		if p.load[f.node].IsZero() {
			delete(p.load, f.node)
		}
		p.applyLoad(f.node)
		if !f.devices.IsZero() {
			p.applyDevices(f.node)
		}
		if !f.guess.IsZero() {
			p.guessDevices(f.node) // another pod's guess may fit now
			p.applyDevices(f.node)
		}
		return true
	}
	r, ok := p.pods[id]
	if !ok {
		return false
	}
	delete(p.pods, id)
	p.roomFreed()       // giveway.go
	p.forgetScaling(id) // scaleup.go
	p.finish(pod, r, id, succeeded, usage, uerr)
	if p.metric != nil {
		p.metric.forget(r.namespace, r.name, r.uid)
	}
	if r.gang != "" {
		p.leaveGang(r, succeeded)
	}
	if !p.load[r.node].IsZero() {
		// Foreign load that found the node full was held only in part
		// (SetExternalLoad holds what is free): hold it again now there is room.
		p.applyLoad(r.node)
	}
	return true
}

// activateRefused moves the pods this plugin found no room for back to the
// scheduler's active queue, once room has been freed. The scheduler requeues them on
// the same cluster event, but its handler may run before the plugin's has freed the
// room: retried then, they would wait for the next event.
func (p *Plugin) activateRefused() {
	p.mu.Lock()
	pods := maps.Clone(p.refused)
	p.mu.Unlock()
	if len(pods) > 0 && p.handle != nil {
		p.handle.Activate(p.logger, pods)
	}
}

// activateUnresolved moves the pods no node could hold (Scheduler.Submit refused them
// as unresolvable) back to the scheduler's active queue when a node was added or
// changed, for the reason activateRefused does; a pod that ends frees no node that
// could not hold them.
func (p *Plugin) activateUnresolved() {
	p.mu.Lock()
	pods := maps.Clone(p.unresolved)
	p.mu.Unlock()
	if len(pods) > 0 && p.handle != nil {
		p.handle.Activate(p.logger, pods)
	}
}

// leaveGang counts gang member r out; p.mu is held.
func (p *Plugin) leaveGang(r *podRecord, succeeded bool) {
	g := p.gang(r.gang)
	g.members--
	if r.node != "" {
		g.running--
		if succeeded {
			g.done++
		} else if g.running == 0 {
			g.gathered = false // it lost every running member: it gathers again
		}
	}
	if g.members <= 0 {
		delete(p.gangs, r.gang)
	}
}

// usageOf asks the usage source what pod (task id) used, if it is a pod of the
// plugin's; without p.mu, since a source may call out.
func (p *Plugin) usageOf(pod *v1.Pod, id string) (Usage, error) {
	p.mu.Lock()
	_, ours := p.pods[id]
	p.mu.Unlock()
	if !ours {
		return Usage{}, nil
	}
	return p.usage.Usage(p.ctx, pod, p.Units())
}

// finish tells the Scheduler that pod (task id) ended, with what the usage source
// said it used (usage, or the error it gave); p.mu is held.
//
// A pod that succeeded finishes with its usage as the observation (an implausible or
// malformed one is refused, and the pod finishes without it). A pod that failed or
// was deleted is cancelled: it did not finish its work, and what it used says only
// what a run uses at least, for as long as it ran. When the source sampled it (a
// series of at least two samples) that is reported first as a running pod's usage
// (Scheduler.ReportRunning), which teaches a key no pod of which has finished —
// the next pods are placed on what it used rather than on their requests, holding
// at least their requests' memory until they end — and changes nothing for a key
// that a finished pod taught. Declared stages, or a single sample, teach nothing.
func (p *Plugin) finish(pod *v1.Pod, r *podRecord, id string, succeeded bool, usage Usage, uerr error) {
	now := p.now()
	st, ok := p.sched.TaskState(id)
	if !ok {
		return
	}
	if st == finegrain.Reserved {
		// Ended between its binding and PostBind: committed here, and counted as
		// PostBind would have.
		if as, err := p.sched.Commit(id, now); err == nil {
			st = finegrain.Running
			p.committed(r, as)
		}
	}
	if uerr != nil {
		p.logger.Error(uerr, "usage of an ended pod", "pod", klog.KObj(pod))
	}
	if st != finegrain.Running || !succeeded {
		if st == finegrain.Running && usage.Series.Len() < 2 {
			p.observed(observedNone)
		}
		if st == finegrain.Running && usage.Series.Len() >= 2 {
			sr := usage.Series
			p.seriesEnd(&sr, p.endedAt(pod, now))
			if err := p.sched.ReportRunning(id, now, predict.Observation{Series: sr}); err != nil {
				p.logger.V(2).Info("usage of a pod that did not succeed refused", "pod", klog.KObj(pod), "err", err)
				p.observed(observedRefused)
			} else {
				p.observed(observedRunning)
			}
		}
		if err := p.sched.Cancel(id, now); err != nil && !errors.Is(err, finegrain.ErrState) {
			p.logger.Error(err, "cancel", "pod", klog.KObj(pod))
		}
		return
	}
	obs, err := p.observation(usage, p.endedAt(pod, now))
	result := observedNone
	if err != nil {
		p.logger.Error(err, "usage of a finished pod", "pod", klog.KObj(pod))
		result = observedRefused
	}
	if err = p.sched.Finished(id, now, obs); err != nil && obs != nil {
		// An implausible observation (beyond the node) teaches nothing; the pod
		// still finished.
		p.logger.Error(err, "usage of a finished pod refused", "pod", klog.KObj(pod))
		err, obs, result = p.sched.Finished(id, now, nil), nil, observedRefused
	}
	if err != nil {
		p.logger.Error(err, "finish", "pod", klog.KObj(pod))
	}
	if obs != nil {
		result = observedLearned
		if r.predicted {
			p.estimateError(r.planned, observedPeak(obs))
		}
	}
	p.observed(result)
}

// observation is the library's observation of a finished pod's usage, ended at end;
// nil when nothing is known.
func (p *Plugin) observation(u Usage, end time.Duration) (*predict.Observation, error) {
	switch {
	case len(u.Stages) > 0 && u.Series.Len() > 0:
		return nil, errors.New("the usage source gave both stages and a series")
	case u.Series.Len() > 0:
		sr := u.Series
		p.seriesEnd(&sr, end)
		return &predict.Observation{Series: sr}, nil
	case len(u.Stages) == 0:
		return nil, nil
	}
	for i, s := range u.Stages {
		if s.Duration <= 0 {
			return nil, fmt.Errorf("observed stage %d: a finished pod's stages have positive durations", i)
		}
	}
	prof, err := p.scheme.profile(u.Stages)
	if err != nil {
		return nil, err
	}
	return &predict.Observation{Profile: prof}, nil
}

// seriesEnd sets the End of a series that has none to end, when the pod ended after
// its last sample; else a series of several samples keeps End zero (its last sample
// lasts as long as the interval before it), and one of one sample lasts one
// SampleInterval.
func (p *Plugin) seriesEnd(sr *predict.Series, end time.Duration) {
	if sr.End != 0 || len(sr.Samples) == 0 {
		return
	}
	last := sr.Samples[len(sr.Samples)-1].At
	switch {
	case end > last:
		sr.End = end
	case len(sr.Samples) == 1:
		sr.End = last + p.args.SampleInterval.Duration
	}
}

// endedAt is when pod ended, in the plugin's time: its containers' latest
// termination when its status says so, else now (and never after now).
func (p *Plugin) endedAt(pod *v1.Pod, now time.Duration) time.Duration {
	var latest time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(latest) {
			latest = t.FinishedAt.Time
		}
	}
	if latest.IsZero() {
		return now
	}
	return min(max(p.Units().At(latest), 0), now)
}

// applyLoad tells the Scheduler node's foreign load; p.mu is held. A node not yet
// added gets it when it is.
func (p *Plugin) applyLoad(node string) {
	if _, ok := p.nodes[node]; !ok {
		return
	}
	if _, err := p.sched.SetExternalLoad(node, p.now(), p.load[node]); err != nil {
		p.logger.Error(err, "load of pods placed by other schedulers", "node", node)
	}
}
