package plugin

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Room freed during a cycle goes first to the queue that stands first (Args.Queues).
//
// When a pod ends, kube-scheduler's own handler of the event moves the waiting pods
// back to be tried, and the plugin's handler frees the pod's room in finegrain and
// its queue's share; the two run concurrently. The scheduler may pop a pod P by the
// order of before (by backoff, by the standings before the room was freed) and P's
// Filter may then find the room, freed meanwhile: P would take it ahead of a pod of
// a poorer queue that the plugin has just activated. So the plugin counts the times
// it frees room (roomFreed: a pod of its own or of another scheduler ends, a node is
// added), notes the count when a pod's cycle begins (PreFilter), and at Reserve a pod
// whose cycle saw room freed gives way when a pod the plugin refused, of a queue that
// now stands before the pod's own, waits: the pod is refused this once and activated
// again at once, to be sorted behind that queue's pods (Sorting.Less), which are
// activated when the room is freed. A gang's pod and a pod held by preemption never
// give way.

// cycleReleasesKey is where PreFilter notes how many times room had been freed.
const cycleReleasesKey fwk.StateKey = Name + "/releases"

// releasesSeen is the count of rooms freed when a pod's cycle began.
type releasesSeen uint64

// Clone implements fwk.StateData.
func (r releasesSeen) Clone() fwk.StateData { return r }

// roomFreed counts room freed in finegrain; p.mu is held, and the room is freed in
// the same critical section, after it.
func (p *Plugin) roomFreed() {
	if p.queues != nil {
		p.queues.releases.Add(1)
	}
}

// noteCycleStart notes, at the start of pod's cycle, how many times room had been
// freed (under p.mu, so that a release is wholly before or wholly after).
func (p *Plugin) noteCycleStart(cs fwk.CycleState) {
	if p.queues == nil || cs == nil {
		return
	}
	p.mu.Lock()
	n := p.queues.releases.Load()
	p.mu.Unlock()
	cs.Write(cycleReleasesKey, releasesSeen(n))
}

// giveWay is Reserve's check for pod, not held by preemption: nil, or a refusal when
// room was freed during its cycle and a refused pod of a queue that stands before
// the pod's own waits; pod is then activated again.
func (p *Plugin) giveWay(cs fwk.CycleState, pod *v1.Pod) *fwk.Status {
	if p.queues == nil || cs == nil {
		return nil
	}
	v, err := cs.Read(cycleReleasesKey)
	if err != nil {
		return nil
	}
	seen, ok := v.(releasesSeen)
	if !ok || p.queues.releases.Load() == uint64(seen) {
		return nil
	}
	if gang, _, _ := gangOf(pod); gang != "" {
		return nil
	}
	mine := p.queues.queueOf(pod)
	var others []string
	p.mu.Lock()
	for _, w := range p.refused {
		if q := p.queues.queueOf(w); q != mine && !slices.Contains(others, q) {
			others = append(others, q)
		}
	}
	p.mu.Unlock()
	slices.Sort(others)
	best := ""
	for _, q := range others {
		if p.queues.compare(q, mine) < 0 && (best == "" || p.queues.compare(q, best) < 0) {
			best = q
		}
	}
	if best == "" {
		return nil
	}
	if p.handle != nil {
		// In flight: the scheduler requeues it as soon as this cycle ends.
		p.handle.Activate(p.logger, map[string]*v1.Pod{taskID(pod): pod})
	}
	return fwk.NewStatus(fwk.Unschedulable, "finegrain: room freed during this pod's cycle goes first to queue "+best+", which stands before queue "+mine)
}
