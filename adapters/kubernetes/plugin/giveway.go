package plugin

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// Room freed goes first to the queue that stands first (Args.Queues).
//
// When a pod ends, kube-scheduler's own handler of the event moves the waiting pods
// back to be tried, and the plugin's handler frees the pod's room in finegrain and
// its queue's share; the two run concurrently. The scheduler may pop a pod P by the
// order of before (by backoff, by the standings before the room was freed) and P's
// Filter may then find the room, freed meanwhile: P would take it ahead of a pod of
// a poorer queue that the plugin has just activated. So the plugin counts the times
// it frees room (roomFreed: a pod of its own or of another scheduler ends, a node is
// added) and, for each pod, the count when its previous cycle began (noteCycleStart,
// at PreFilter). At Reserve, a pod retried since room was freed gives way when a pod
// the plugin refused, of a queue that now stands before the pod's own, waits: it is
// refused, once for that room, and activated again at once, to be sorted behind
// that queue's pods (Sorting.Less), which were activated when the room was freed. It
// gives way at most once for each room freed, so that a waiting pod that does not fit
// the room cannot hold it back. A pod's first cycle, a gang's pod and a pod held by
// preemption never give way.

// cycleReleasesKey is where PreFilter notes the rooms freed before the pod's
// previous cycle.
const cycleReleasesKey fwk.StateKey = Name + "/releases"

// releasesSeen is the count of rooms freed when a pod's previous cycle began.
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

// forgetCycles forgets pod id's cycles (it ended); p.mu is held.
func (p *Plugin) forgetCycles(id string) {
	if p.queues != nil {
		delete(p.queues.cycles, id)
		delete(p.queues.gaveWay, id)
	}
}

// noteCycleStart notes, at the start of pod's cycle, the rooms freed before its
// previous cycle began, and remembers the count now for its next (under p.mu, so
// that a release is wholly before or wholly after). A first cycle notes nothing.
func (p *Plugin) noteCycleStart(cs fwk.CycleState, pod *v1.Pod) {
	if p.queues == nil || cs == nil {
		return
	}
	id := taskID(pod)
	p.mu.Lock()
	prev, ok := p.queues.cycles[id]
	p.queues.cycles[id] = p.queues.releases.Load()
	p.mu.Unlock()
	if ok {
		cs.Write(cycleReleasesKey, releasesSeen(prev))
	}
}

// giveWay is Reserve's check for pod, not held by preemption: nil, or a refusal when
// room was freed since its previous cycle began, it has not given way for that room
// yet, and a refused pod of a queue that stands before the pod's own waits; pod is
// then activated again.
func (p *Plugin) giveWay(cs fwk.CycleState, pod *v1.Pod) *fwk.Status {
	if p.queues == nil || cs == nil {
		return nil
	}
	v, err := cs.Read(cycleReleasesKey)
	if err != nil {
		return nil
	}
	seen, ok := v.(releasesSeen)
	if !ok {
		return nil
	}
	if gang, _, _ := gangOf(pod); gang != "" {
		return nil
	}
	id, mine := taskID(pod), p.queues.queueOf(pod)
	var others []string
	p.mu.Lock()
	now := p.queues.releases.Load()
	if now == uint64(seen) || p.queues.gaveWay[id] == now {
		p.mu.Unlock()
		return nil // no room freed since its previous cycle, or it gave way for this one
	}
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
	p.mu.Lock()
	p.queues.gaveWay[id] = now
	p.mu.Unlock()
	if p.handle != nil {
		// In flight: the scheduler requeues it as soon as this cycle ends.
		p.handle.Activate(p.logger, map[string]*v1.Pod{taskID(pod): pod})
	}
	return fwk.NewStatus(fwk.Unschedulable, "finegrain: room freed goes first to queue "+best+", which stands before queue "+mine)
}
