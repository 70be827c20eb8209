package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file is where the plugin learns what its pods used: the UsageSource interface,
// the form of its answer (Usage), the units a source writes a series in (Units), and
// the annotation source. The metrics.k8s.io source is in metrics.go.

// UsageSource tells what a pod of the plugin's used, so that the next pods with its
// similarity key are predicted from it. The plugin asks when the pod ends — succeeded,
// failed or deleted — from an informer's handler, without holding its own lock; a
// slow source delays the plugin's view of the cluster, never a scheduling cycle.
//
// A source answers in one of two forms: the stages the pod ran (Usage.Stages), as the
// finegrain.io/observed-stages annotation declares them, or the usage samples it
// measured (Usage.Series), which the library divides into stages itself. Neither
// (the zero Usage) means nothing is known, and teaches nothing; an error is logged
// and teaches nothing. What the plugin does with the answer:
//
//   - a pod that succeeded finishes with it (Scheduler.Finished): its key learns the
//     stages, or the stages the series divides into. A series' End left zero is set
//     to when the pod ended (its containers' latest termination, else the time the
//     plugin saw it end). An answer the library refuses — usage beyond the node, a
//     series out of time order — teaches nothing, and the pod still finishes;
//   - a pod that failed or was deleted did not finish its work: a series of at least
//     two samples says what it used while it ran, a lower bound, and is reported as a
//     running task's (Scheduler.ReportRunning, which makes a key with no finished
//     pod predictable); stages, or a shorter series, teach nothing.
//
// To plug in another source (Prometheus, a node agent of one's own), implement Usage
// and give it to the factory with WithUsageSource: package promusage is one, reading
// cAdvisor's metrics from Prometheus, and cmd/kube-scheduler-prometheus the scheduler
// binary that gives it; ExampleUsageSource is the smallest. The MetricsAPI source (Args.UsageSource) also reports running pods'
// series as they grow; a source of one's own is asked only when a pod ends.
type UsageSource interface {
	// Usage is what pod used while it ran. u converts times and resource lists into
	// the plugin's terms, for a Series.
	Usage(ctx context.Context, pod *v1.Pod, u Units) (Usage, error)
}

// Usage is what a UsageSource knows of what a pod used: the stages it ran, or the
// samples measured while it ran. At most one is set; neither means nothing is known.
type Usage struct {
	// Stages are the stages the pod ran, each with a positive duration, in the
	// ObservedStagesAnnotation's terms.
	Stages []Stage
	// Series is the pod's usage as sampled while it ran, in the plugin's units (Units):
	// each sample's At an offset from the plugin's epoch (Units.At), its Usage a tuple
	// of the plugin's schema (Units.Tuple). Compressible usage (CPU) is best the
	// average over the interval since the previous sample, non-compressible usage
	// (memory) the most held over it (predict.Series says why). End may be left zero:
	// the plugin sets it to when the pod ended.
	Series predict.Series
}

// Units are the plugin's units, in which a UsageSource writes a Series: times are
// offsets from the plugin's epoch (when it started, by its clock), and resources are
// tuples of its schema — CPU in millicores, memory in bytes, the extended resources
// of Args.ExtendedResources in whole units.
type Units struct {
	scheme *scheme
	epoch  time.Time
}

// At is time t as an offset from the plugin's epoch: a Series sample's At.
func (u Units) At(t time.Time) time.Duration { return t.Sub(u.epoch) }

// Tuple is resource list rl in the plugin's schema, ignoring the resources it does not
// schedule; negative quantities and quantities too large for the schema are refused.
func (u Units) Tuple(rl v1.ResourceList) (resource.Tuple, error) {
	if u.scheme == nil {
		return resource.Tuple{}, errors.New("units of no plugin")
	}
	return u.scheme.tuple(rl, true)
}

// Schema is the plugin's resource schema: what a Series' tuples hold, slot by slot.
func (u Units) Schema() *resource.Schema {
	if u.scheme == nil {
		return nil
	}
	return u.scheme.schema
}

// AnnotationUsage reads a pod's usage from its ObservedStagesAnnotation, written by
// the pod or by a metrics pipeline before the pod ends; a pod without it teaches
// nothing.
type AnnotationUsage struct{}

// Usage implements UsageSource.
func (AnnotationUsage) Usage(_ context.Context, pod *v1.Pod, _ Units) (Usage, error) {
	text, ok := pod.Annotations[ObservedStagesAnnotation]
	if !ok {
		return Usage{}, nil
	}
	stages, err := ParseStages(text)
	if err != nil {
		return Usage{}, fmt.Errorf("annotation %s: %w", ObservedStagesAnnotation, err)
	}
	return Usage{Stages: stages}, nil
}
