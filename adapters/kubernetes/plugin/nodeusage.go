package plugin

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file turns the nodes' metrics into usage reports (Scheduler.ReportUsage): the
// library computes each report's prediction conformity (eq. 16) and lets its adjuster
// re-decide the node's mode (Alg. 3), which the next placements on the node follow.

// ModeChangedReason is the reason of the Event recorded on a Node whose mode a usage
// report changed.
const ModeChangedReason = "FineGrainModeChanged"

// nodeSeries is what the sampler keeps of a node: its usage since the last report.
type nodeSeries struct {
	last   time.Duration // the timestamp of its last reading
	seen   bool          // a reading was taken: last is set
	warned bool          // a refused reading was logged
	window []predict.Interval
}

// maxWindow bounds a node's window between two reports (one interval a reading).
const maxWindow = 1024

// addNodeSamples turns each node's metrics into an interval of its window, from its
// previous reading to this one (a node's first reading starts its window): Actual is
// the node's usage clamped to its capacity as finegrain holds it (metrics can exceed
// allocatable: the system's own daemons count, and ReportUsage refuses usage beyond
// capacity), Predicted what finegrain holds on it now (capacity less NodeFree: the
// plugin's pods by their plans, other schedulers' pods by their requests), Idle the
// capacity less Actual. capacities are the nodes the plugin holds.
func (s *sampler) addNodeSamples(items []metricsv1beta1.NodeMetrics, capacities map[string]resource.Tuple, now time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.nodes {
		if _, ok := capacities[name]; !ok {
			delete(s.nodes, name)
		}
	}
	for i := range items {
		m := &items[i]
		capacity, ok := capacities[m.Name]
		if !ok {
			continue
		}
		ns := s.nodes[m.Name]
		if ns == nil {
			ns = &nodeSeries{}
			s.nodes[m.Name] = ns
		}
		if m.Timestamp.IsZero() {
			s.refuse(&ns.warned, "node", klog.KRef("", m.Name), errors.New("no timestamp"))
			continue
		}
		at := s.p.Units().At(m.Timestamp.Time)
		switch {
		case ns.seen && at == ns.last:
			continue
		case ns.seen && at < ns.last:
			s.refuse(&ns.warned, "node", klog.KRef("", m.Name), fmt.Errorf("timestamp %s is before the previous one's", m.Timestamp.UTC().Format(time.RFC3339Nano)))
			continue
		}
		used, err := s.p.scheme.tuple(m.Usage, true)
		if err != nil {
			s.refuse(&ns.warned, "node", klog.KRef("", m.Name), err)
			continue
		}
		if ns.seen {
			free, err := s.p.sched.NodeFree(m.Name, now)
			if err != nil {
				continue // removed meanwhile
			}
			actual := used.Min(capacity)
			held := capacity.Sub(free).Max(resource.Tuple{}).Min(capacity)
			if len(ns.window) >= maxWindow {
				ns.window = slices.Delete(ns.window, 0, 1)
			}
			ns.window = append(ns.window, predict.Interval{Duration: at - ns.last, Actual: actual, Predicted: held, Idle: capacity.Sub(actual)})
		}
		ns.last, ns.seen = at, true
	}
}

// reportNodes reports each node's window (Scheduler.ReportUsage) and starts a new
// one; a report that moves a node's mode goes to nodeModeChanged.
func (s *sampler) reportNodes(now time.Duration) {
	type report struct {
		node   string
		window []predict.Interval
	}
	var reports []report
	s.mu.Lock()
	for name, ns := range s.nodes {
		if len(ns.window) > 0 {
			reports = append(reports, report{name, ns.window})
			ns.window = nil
		}
	}
	s.mu.Unlock()
	slices.SortFunc(reports, func(a, b report) int { return strings.Compare(a.node, b.node) })
	for _, r := range reports {
		c, err := s.p.sched.ReportUsage(r.node, now, r.window)
		if err != nil {
			s.p.logger.V(2).Info("usage report refused", "node", r.node, "err", err)
			continue
		}
		if c.From != c.To {
			s.p.nodeModeChanged(r.node, c)
			continue
		}
		s.p.logger.V(4).Info("usage reported", "node", r.node, "mode", c.To, "score", c.Score)
	}
}

// nodeRef is node's reference, for an Event on it.
func (p *Plugin) nodeRef(node string) *v1.ObjectReference {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &v1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node, UID: p.nodes[node].uid}
}

// nodeCapacities are the capacities of the nodes the plugin holds, by name.
func (p *Plugin) nodeCapacities() map[string]resource.Tuple {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]resource.Tuple, len(p.nodes))
	for name, n := range p.nodes {
		out[name] = n.capacity
	}
	return out
}
