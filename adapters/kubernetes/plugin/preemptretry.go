package plugin

import (
	"maps"

	v1 "k8s.io/api/core/v1"

	"github.com/finegrain/finegrain"
)

// A preemptor is retried when a pod is committed.
//
// finegrain evicts only running pods: a pod that kube-scheduler has bound but whose
// PostBind has not yet committed it is Reserved, and no victim. A preemptor whose
// PostFilter ran in that window found nothing to evict and waited in the
// unschedulable queue; the commit that made its victim evictable is no cluster event,
// and the binding's own event had come before the preemptor was tried, so nothing
// moved it until the queue's periodic flush (five minutes). Such a preemptor is
// remembered (preemptionDeferred) and activated once a pod is committed
// (retryPreemptors).

// preemptionDeferred remembers preemptor id, whose PostFilter found nothing to evict,
// when some pod was reserved and not yet committed as it began (reserved): a commit
// may give it a victim. p.mu is held.
func (p *Plugin) preemptionDeferred(id string, reserved bool) {
	if !reserved {
		return
	}
	if p.retryAtCommit == nil {
		p.retryAtCommit = map[string]struct{}{}
	}
	p.retryAtCommit[id] = struct{}{}
}

// reservedPods reports whether finegrain holds some pod reserved (bound, or about to
// be, and not yet committed); read before PostFilter asks finegrain for victims.
func (p *Plugin) reservedPods() bool { return p.sched.Count(finegrain.Reserved) > 0 }

// retryPreemptors activates the preemptors remembered by preemptionDeferred that are
// still waiting (PostFilter refused them and they have not ended), after a pod was
// committed. Without p.mu.
func (p *Plugin) retryPreemptors() {
	p.mu.Lock()
	if len(p.retryAtCommit) == 0 {
		p.mu.Unlock()
		return
	}
	pods := make(map[string]*v1.Pod, len(p.retryAtCommit))
	for id := range p.retryAtCommit {
		if pod, ok := p.refused[id]; ok {
			pods[id] = pod
		}
	}
	clear(p.retryAtCommit)
	p.mu.Unlock()
	if len(pods) > 0 && p.handle != nil {
		p.handle.Activate(p.logger, maps.Clone(pods))
	}
}
