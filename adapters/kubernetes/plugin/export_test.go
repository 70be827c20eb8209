package plugin

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/finegrain/finegrain/predict"
)

// What the external tests reach of the MetricsAPI sampler.

// SampleNow runs one sampling round, as the sampler's ticker would, and reports
// whether it ran: not before the sampler has started (the first PreFilter), nor
// without a metrics client.
func (p *Plugin) SampleNow() bool {
	if p.metric == nil {
		return false
	}
	return p.metric.tick(p.ctx)
}

// DroppedSamples counts the metrics readings the sampler refused.
func (p *Plugin) DroppedSamples() int64 {
	if p.metric == nil {
		return 0
	}
	return p.metric.dropped.Load()
}

// TrackedSeries is the series the sampler keeps of pod namespace/name, and whether it
// follows the pod.
func (p *Plugin) TrackedSeries(namespace, name string) (predict.Series, bool) {
	if p.metric == nil {
		return predict.Series{}, false
	}
	p.metric.mu.Lock()
	defer p.metric.mu.Unlock()
	ps := p.metric.tracked[types.NamespacedName{Namespace: namespace, Name: name}]
	if ps == nil {
		return predict.Series{}, false
	}
	return ps.series(), true
}

// DecodeArgs is decodeArgs: the arguments as the factory reads them, defaults filled
// in.
func DecodeArgs(obj runtime.Object) (Args, error) { return decodeArgs(obj) }

// What the external tests reach of the scale-up rounds and the progress reports.

// ScaleUpNow runs one scale-up round, as the rounds' ticker would, and reports
// whether it ran: not before the rounds have started (the first PreFilter), nor
// without Args.ScaleUp.
func (p *Plugin) ScaleUpNow() bool {
	if p.scale == nil || !p.scale.started.Load() {
		return false
	}
	p.scaleRound(p.ctx)
	return true
}

// ReportedProgress is the ProgressAnnotation value the plugin last reported of pod
// namespace/name ("" for none).
func (p *Plugin) ReportedProgress(namespace, name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.pods {
		if r.namespace == namespace && r.name == name {
			return r.progress
		}
	}
	return ""
}

// ResizeAwaited reports whether the plugin waits for the kubelet to carry out a
// resize of task id, and the kubelet's message once it found it infeasible.
func (p *Plugin) ResizeAwaited(id string) (bool, string) {
	if p.scale == nil {
		return false, ""
	}
	p.scale.mu.Lock()
	defer p.scale.mu.Unlock()
	pr := p.scale.pending[id]
	if pr == nil {
		return false, ""
	}
	return true, pr.infeasible
}

// Now is the plugin's time: how long since it started, by its clock.
func (p *Plugin) Now() time.Duration { return p.now() }
