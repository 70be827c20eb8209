package plugin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
)

// This file turns a pod into a finegrain task: its ID, demand, similarity key, gang,
// and class and objective (mixed.go).

// taskID is the pod's task ID: its UID, or namespace/name for a pod without one.
func taskID(pod *v1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}

// podRequests is what the pod asks for, as the scheduler's resource fit reads it
// (containers, init containers, sidecars, overhead).
func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// submit gives the pod to finegrain as a task of a job of its own (the job carries
// the pod's priority), in its queue with Args.Queues, once; it returns the task ID.
func (p *Plugin) submit(pod *v1.Pod) (string, error) {
	id := taskID(pod)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pods[id]; ok {
		return id, nil
	}
	task, rec, err := p.task(pod, id)
	if err != nil {
		return id, err
	}
	now := p.now()
	prio := 0
	if pod.Spec.Priority != nil {
		prio = int(*pod.Spec.Priority)
	}
	queue, err := p.queueFor(pod) // "" without Args.Queues (queues.go)
	if err != nil {
		return id, err
	}
	err = p.sched.SubmitJob(finegrain.Job{ID: id, Queue: queue, Priority: prio, Submitted: now})
	if err != nil && !errors.Is(err, finegrain.ErrDuplicate) {
		return id, err
	}
	task.Submitted = now
	if err := p.sched.Submit(task); err != nil {
		if errors.Is(err, finegrain.ErrUnresolvable) {
			// No node could hold it: it is tried again when a node is added or changes
			// (activateUnresolved), which may come before the scheduler's own retry.
			p.unresolved[id] = pod
		}
		return id, err
	}
	delete(p.unresolved, id)
	p.observeShape(task)
	p.pods[id] = rec
	if rec.gang != "" {
		p.gang(rec.gang).members++
	}
	return id, nil
}

// task builds the pod's task and record.
func (p *Plugin) task(pod *v1.Pod, id string) (finegrain.Task, *podRecord, error) {
	requests := podRequests(pod)
	req, err := p.scheme.tuple(requests, true)
	if err != nil {
		return finegrain.Task{}, nil, fmt.Errorf("requests: %w", err)
	}
	if req.IsZero() {
		req = p.scheme.bestEffort()
	}
	dem, err := p.gpuDemand(pod, requests)
	if err != nil {
		return finegrain.Task{}, nil, fmt.Errorf("GPU: %w", err)
	}
	t := finegrain.Task{ID: id, Job: id, Request: req, GPU: dem}
	if text, ok := pod.Annotations[StagesAnnotation]; ok {
		stages, err := ParseStages(text)
		if err != nil {
			return finegrain.Task{}, nil, fmt.Errorf("annotation %s: %w", StagesAnnotation, err)
		}
		if t.Profile, err = p.scheme.profile(stages); err != nil {
			return finegrain.Task{}, nil, fmt.Errorf("annotation %s: %w", StagesAnnotation, err)
		}
	}
	if t.Key, err = p.similarityKey(pod); err != nil {
		return finegrain.Task{}, nil, err
	}
	gang, _, err := gangOf(pod)
	if err != nil {
		return finegrain.Task{}, nil, err
	}
	if t.Class, t.SLO, err = classOf(pod); err != nil { // mixed.go
		return finegrain.Task{}, nil, err
	}
	rec := &podRecord{namespace: pod.Namespace, name: pod.Name, uid: string(pod.UID), gang: gang, request: req, declared: t.Profile.Len() > 0, gpu: dem}
	return t, rec, nil
}

// similarityKey is the pod's similarity key: its namespace and the values of
// Args.SimilarityLabels (or, with none of them, its controller) as the logic, and
// Args.InputSizeLabel as the input size. A pod with neither labels nor controller has
// no key: it is placed by its requests.
func (p *Plugin) similarityKey(pod *v1.Pod) (predict.Key, error) {
	var parts []string
	for _, l := range p.args.SimilarityLabels {
		if v, ok := pod.Labels[l]; ok {
			parts = append(parts, l+"="+v)
		}
	}
	if len(parts) == 0 {
		if ref := metav1.GetControllerOf(pod); ref != nil {
			parts = append(parts, ref.Kind+"/"+ref.Name)
		}
	}
	if len(parts) == 0 {
		return predict.Key{}, nil
	}
	k := predict.Key{Logic: pod.Namespace + "/" + strings.Join(parts, ",")}
	if v, ok := pod.Labels[p.args.InputSizeLabel]; ok {
		q, err := apiresource.ParseQuantity(v)
		if err != nil {
			return predict.Key{}, fmt.Errorf("label %s: %w", p.args.InputSizeLabel, err)
		}
		n, err := amount(q, false)
		if err != nil {
			return predict.Key{}, fmt.Errorf("label %s: %w", p.args.InputSizeLabel, err)
		}
		k.InputSize = n
	}
	return k, nil
}

// gangOf is the pod's gang ("namespace/name", "" for none) and its MinMember.
func gangOf(pod *v1.Pod) (string, int, error) {
	name, ok := pod.Labels[GangLabel]
	if !ok {
		return "", 0, nil
	}
	v, ok := pod.Labels[MinMemberLabel]
	if !ok {
		return "", 0, fmt.Errorf("label %s=%s without %s", GangLabel, name, MinMemberLabel)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("label %s=%q: want a positive integer", MinMemberLabel, v)
	}
	return pod.Namespace + "/" + name, n, nil
}
