package plugin

import (
	"math"
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// The plugin's metrics, on the scheduler's own metrics endpoint (/metrics, port 10259)
// beside kube-scheduler's: they are component-base metrics in its legacy registry, as
// the in-tree plugins' are. Every series carries the scheduler profile's name
// ("profile"), so that several profiles of one binary are told apart. All are ALPHA:
// their names and labels may still change.
var (
	metricKeys = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "finegrain",
		Name:           "estimator_keys",
		Help:           "Similarity keys the estimator holds a learned profile of.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	metricObservations = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "observations_total",
		Help:           "What ended pods taught the estimator, by result: learned (a finished pod's usage), running (a partial series of a pod still running or one that failed), refused (implausible or malformed usage: nothing learned), none (no usage known).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "result"})
	metricPlacements = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "placements_total",
		Help:           "Pods bound, by the demand they were placed on (declared stages, a predicted profile, or their requests) and whether a stage was placed compressed.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "demand", "compressed"})
	metricEstimateError = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "finegrain",
		Name:           "estimate_error_ratio",
		Help:           "For a pod placed on a predicted profile that finished with observed usage: |predicted peak - observed peak| / observed peak, per resource.",
		Buckets:        []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 5},
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "resource"})
	metricNodeModes = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "finegrain",
		Name:           "nodes",
		Help:           "Nodes by the scheduling mode the per-node policy (Alg. 3) holds them in: fine-grained, fine-grained without compression, coarse-grained, stopped.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "mode"})
	metricModeChanges = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "node_mode_changes_total",
		Help:           "Changes of a node's scheduling mode made by the per-node policy from its usage reports.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "from", "to"})
	metricCheckpoints = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "checkpoints_total",
		Help:           "Checkpoints of the estimator, by operation (write, restore) and result (ok, failed, too_large, refused, none).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "operation", "result"})
	metricCheckpointBytes = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "finegrain",
		Name:           "checkpoint_bytes",
		Help:           "Size of the last checkpoint written, compressed, in bytes.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	metricScaleRounds = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "scale_up_rounds_total",
		Help:           "Scale-up rounds run for mixed workloads (args.scaleUp).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	metricStragglers = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "stragglers_total",
		Help:           "Latency-sensitive pods that scale-up rounds found would miss their objective, counted once a round.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	metricScaleActions = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "finegrain",
		Name:           "scale_actions_total",
		Help:           "Actions of the scale-up rounds, by kind (reclaim, preempt, expand, move, restore) and result: resized (through pods/resize), unsupported (the cluster, the node or the pod cannot; moves always), failed (the API refused or failed), infeasible (the kubelet refused a resize, set back). All but resized set finegrain's books back.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "kind", "result"})
	metricResizeServed = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      "finegrain",
		Name:           "pod_resize_served",
		Help:           "1 when the API server serves the pods/resize subresource (in-place pod resize), 0 when it does not, as discovery last said; absent before the first scale-up round.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
)

var registerMetrics sync.Once

// register adds the plugin's metrics to the legacy registry, once per process.
func register() {
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(metricKeys, metricObservations, metricPlacements, metricEstimateError,
			metricNodeModes, metricModeChanges, metricCheckpoints, metricCheckpointBytes,
			metricScaleRounds, metricStragglers, metricScaleActions, metricResizeServed)
	})
}

// The label values of observations_total's result.
const (
	observedLearned = "learned"
	observedRunning = "running"
	observedRefused = "refused"
	observedNone    = "none"
)

// observed counts what an ended pod taught the estimator.
func (p *Plugin) observed(result string) {
	metricObservations.WithLabelValues(p.profile, result).Inc()
	p.keysLearned()
}

// keysLearned sets the estimator_keys gauge to the keys the estimator holds now.
func (p *Plugin) keysLearned() {
	if n, ok := p.estimatorKeys(); ok {
		metricKeys.WithLabelValues(p.profile).Set(float64(n))
	}
}

// estimatorKeys is how many keys the estimator holds, when it can tell.
func (p *Plugin) estimatorKeys() (int, bool) {
	l, ok := p.sched.Estimator().(interface{ Len() int })
	if !ok {
		return 0, false
	}
	return l.Len(), true
}

// committed records what pod r was committed on (PostBind, or its end when that came
// first) and counts its placement.
func (p *Plugin) committed(r *podRecord, as finegrain.Assignment) {
	r.predicted, r.planned = as.Predicted && !r.declared, as.Profile.Peak()
	p.placed(r, as.Result.Compressed())
}

// placed counts a bound pod by the demand it was placed on.
func (p *Plugin) placed(r *podRecord, compressed bool) {
	demand := "request"
	switch {
	case r.declared:
		demand = "declared"
	case r.predicted:
		demand = "predicted"
	}
	c := "false"
	if compressed {
		c = "true"
	}
	metricPlacements.WithLabelValues(p.profile, demand, c).Inc()
}

// estimateError records, for a pod placed on a predicted profile whose peak was
// predicted, how far that peak was from the peak it was seen to use, per resource
// the pod used.
func (p *Plugin) estimateError(predicted, observed resource.Tuple) {
	for i := 0; i < p.scheme.schema.Len(); i++ {
		if observed[i] <= 0 {
			continue
		}
		e := math.Abs(float64(predicted[i])-float64(observed[i])) / float64(observed[i])
		metricEstimateError.WithLabelValues(p.profile, p.scheme.schema.DimName(i)).Observe(e)
	}
}

// observedPeak is the per-resource peak of what an observation saw: its profile's,
// else its series'.
func observedPeak(obs *predict.Observation) resource.Tuple {
	if obs.Profile.Len() > 0 {
		return obs.Profile.Peak()
	}
	return obs.Series.Peak()
}

// nodeModeMoved moves one node from mode from to mode to in the node-mode gauge.
func (p *Plugin) nodeModeMoved(from, to policy.NodeMode) {
	metricNodeModes.WithLabelValues(p.profile, from.String()).Dec()
	metricNodeModes.WithLabelValues(p.profile, to.String()).Inc()
	metricModeChanges.WithLabelValues(p.profile, from.String(), to.String()).Inc()
}

// nodeCounted adds (+1) or takes away (−1) a node of mode m in the node-mode gauge.
func (p *Plugin) nodeCounted(m policy.NodeMode, delta float64) {
	metricNodeModes.WithLabelValues(p.profile, m.String()).Add(delta)
}
