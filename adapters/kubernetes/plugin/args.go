package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	yamlv2 "go.yaml.in/yaml/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// Args are the plugin's arguments, set in a KubeSchedulerConfiguration profile's
// pluginConfig (deploy/scheduler-config.yaml):
//
//	pluginConfig:
//	- name: FineGrain
//	  args:
//	    compressionLimit: 0.1
//	    matcher: FineGrained
//	    scorers: [{name: LeastAllocated, weight: 1}, {name: BalancedAllocation, weight: 1}]
//	    similarityLabels: [app.kubernetes.io/name]
//	    inputSizeLabel: finegrain.io/input-size
//	    preemption: true
//	    gangTimeout: 60s
//	    usageSource: MetricsAPI
//	    sampleInterval: 15s
//	    maxSamplesPerPod: 240
//	    usageWindow: 1m
//	    gpuDevices: true
//	    gpuScorer: FGD
//	    scaleUp: {interval: 30s}
//
// Every field is optional; DefaultArgs holds the defaults. Validate says what is wrong
// with each field, as the scheduler's own argument checks do.
type Args struct {
	// CompressionLimit is how far a compressible resource (CPU) may be squeezed below
	// a stage's demand when the node is short, as a share of the node's capacity, in
	// [0, 1). 0 never compresses. Default 0.1.
	CompressionLimit *float64 `json:"compressionLimit,omitempty"`
	// Matcher is how a pod's stages are matched against a node's timeline:
	// FineGrained (stage by stage, with compression; the default), CoarseGrained (the
	// peak of every stage against the least free over the pod's run) or
	// RequestQuantity (the pod's requests held throughout, as Kubernetes does).
	Matcher string `json:"matcher,omitempty"`
	// Scorers rank the nodes a pod fits, each a match scorer by name —
	// LeastAllocated, MostAllocated, BalancedAllocation, BestFit or Alignment — with a
	// positive weight. A node's score is the weighted mean, from the least free over
	// the pod's run, scaled to 0..100. Default LeastAllocated and BalancedAllocation,
	// weight 1 each, as the scheduler's defaults weigh them.
	Scorers []ScorerArg `json:"scorers,omitempty"`
	// SimilarityLabels name the pod labels whose values, with the pod's namespace,
	// make its similarity key: pods with the same values are taken to run the same
	// logic, and each finished one teaches the profile predicted for the next. A pod
	// with none of these labels is keyed by its controller (a Job, a ReplicaSet);
	// one with neither is placed by its requests. Default [finegrain.io/logic].
	SimilarityLabels []string `json:"similarityLabels,omitempty"`
	// InputSizeLabel names the label holding the size of a pod's input (a quantity:
	// "20Gi", "3000"), the second half of the similarity key. Default
	// finegrain.io/input-size.
	InputSizeLabel string `json:"inputSizeLabel,omitempty"`
	// ExtendedResources names the extended resources (nvidia.com/gpu) scheduled on the
	// timelines beside CPU and memory, non-compressible, at most six. Default none:
	// Filter checks the others by request, as NodeResourcesFit does.
	ExtendedResources []string `json:"extendedResources,omitempty"`
	// Preemption turns on PostFilter: when a pod fits no node, pods of lower priority
	// are evicted where that makes room on the timeline, fewest and least important
	// first. Default off.
	Preemption bool `json:"preemption,omitempty"`
	// GangTimeout is how long a gang's pods wait at Permit for the rest of the gang
	// before they all give their reservations back. Default 60s.
	GangTimeout *metav1.Duration `json:"gangTimeout,omitempty"`
	// UsageSource is where the plugin learns what its pods used: MetricsAPI (the
	// default) samples metrics.k8s.io — what metrics-server serves — every
	// SampleInterval, keeping a usage series for each pod it placed, and also reports
	// each node's usage every UsageWindow, from which the library sets the node's mode
	// (Alg. 3); Annotation reads the finegrain.io/observed-stages annotation a pod or a
	// pipeline writes, calls no metrics API, and leaves every node in its first mode.
	// Without metrics-server, MetricsAPI learns nothing and the plugin schedules on.
	// A source given with WithUsageSource replaces the pods' source; MetricsAPI then
	// still samples the nodes.
	UsageSource string `json:"usageSource,omitempty"`
	// SampleInterval is how often MetricsAPI reads metrics.k8s.io, at least 1s.
	// Default 15s, metrics-server's resolution: a shorter interval finds the same
	// readings again.
	SampleInterval *metav1.Duration `json:"sampleInterval,omitempty"`
	// MaxSamplesPerPod bounds the usage series kept of a pod, in [4, 1048576]: when it
	// is full, adjacent samples are merged in pairs (CPU averaged over their time,
	// memory at its peak), so that the whole run stays covered at half the
	// resolution. Default 240 (an hour at 15s before the first merge); each sample
	// costs 24 bytes.
	MaxSamplesPerPod *int `json:"maxSamplesPerPod,omitempty"`
	// UsageWindow is how often each node's usage is reported to the library's
	// per-node policy (MetricsAPI), at least SampleInterval. Default 1m (4 readings).
	UsageWindow *metav1.Duration `json:"usageWindow,omitempty"`
	// MaxLearnedKeys bounds the similarity keys the estimator remembers, in [1,
	// 65536]: past it, the least recently used key is forgotten. It bounds the
	// estimator's memory and its checkpoint, which a ConfigMap must hold (at most
	// 1 MiB: about 80 bytes a key compressed, measured with two-stage profiles).
	// Default 8192.
	MaxLearnedKeys *int `json:"maxLearnedKeys,omitempty"`
	// CheckpointInterval is how often the replica that schedules saves what the
	// estimator learned to a ConfigMap (checkpoint.go), which a replica restores when
	// it starts to schedule — after a restart, an upgrade or a leader failover, which
	// so lose at most one interval of learning. It is saved once more when the
	// scheduler stops. 0 turns checkpoints off (nothing is read or written). Default
	// 1m; at least 1s otherwise.
	CheckpointInterval *metav1.Duration `json:"checkpointInterval,omitempty"`
	// CheckpointNamespace is the namespace of the checkpoint's ConfigMap. Default
	// kube-system, where deploy/kube-scheduler.yaml runs the scheduler and grants it
	// the ConfigMap.
	CheckpointNamespace string `json:"checkpointNamespace,omitempty"`
	// CheckpointName is the checkpoint ConfigMap's name. Default
	// finegrain-estimates-PROFILE, PROFILE the scheduler profile's schedulerName; a
	// profile whose name is not a valid ConfigMap name needs one set here.
	CheckpointName string `json:"checkpointName,omitempty"`
	// Queues turns on fairness across queues (QueueArgs): each pod's job goes in its
	// queue — its namespace, or a label's value — with the queue's weight, min and max
	// share; the plugin sorts the scheduling queue by the queues' standings under the
	// policy (the factory returns a *Sorting, a queue-sort plugin: disable
	// PrioritySort at queueSort, deploy/scheduler-config-queues.yaml) and refuses a
	// pod beyond its queue's max share. Default off (nil): every pod is a job in one
	// root queue, and the profile's PrioritySort orders them.
	Queues *QueueArgs `json:"queues,omitempty"`
	// GPUDevices schedules GPUs device by device (gpu.go and the README's "GPU
	// sharing"): a pod asks whole GPUs (GPUResource) or a share of one
	// (GPUShareResource, in thousandths), of the models GPUModelAnnotation lists; a
	// node has as many devices as its capacity of GPUResource, of the model its label
	// GPUModelLabel names; the library's device fit and GPUScorer choose the devices,
	// and PreBind writes them on the pod (GPUDevicesAnnotation) for the device plugin.
	// Neither resource may then be in ExtendedResources. Default off: GPUs are
	// extended resources like any other.
	GPUDevices bool `json:"gpuDevices,omitempty"`
	// GPUResource is the extended resource counting whole GPUs, on pods and nodes.
	// Default nvidia.com/gpu.
	GPUResource string `json:"gpuResource,omitempty"`
	// GPUShareResource is the extended resource a pod requests a share of one GPU
	// with, in thousandths (1 to 1000), and a share device plugin advertises, 1000 a
	// device. Default finegrain.io/gpu-milli.
	GPUShareResource string `json:"gpuShareResource,omitempty"`
	// GPUModelLabel is the node label naming its GPUs' model. Default
	// nvidia.com/gpu.product, which NVIDIA's GPU feature discovery sets.
	GPUModelLabel string `json:"gpuModelLabel,omitempty"`
	// GPUScorer ranks the nodes a pod fits and chooses its devices there, beside
	// Scorers and with the same weight: FGD (Fragmentation Gradient Descent, over the
	// task shapes of the last 1,000 pods; the default), DeviceBestFit, DotProduct or
	// Packing (the library's gpu scorers), or None (the best-fit devices, the nodes
	// ranked by Scorers alone).
	GPUScorer string `json:"gpuScorer,omitempty"`
	// ScaleUp turns on scale-up rounds for mixed workloads (ScaleUpArgs, scaleup.go
	// and the README's "Mixed workloads: scale-up in place"): every Interval the
	// library's straggler test runs on the latency-sensitive pods' progress
	// (ClassAnnotation, SLOAnnotation, ProgressAnnotation), batch pods that hold more
	// than they use are shrunk and stragglers grown, each change carried out on the
	// pod through its resize subresource where the cluster supports it. Default off
	// (nil): no round runs, and the plugin never resizes a pod.
	ScaleUp *ScaleUpArgs `json:"scaleUp,omitempty"`
}

// The values of Args.UsageSource.
const (
	// UsageSourceMetricsAPI samples metrics.k8s.io (metrics-server).
	UsageSourceMetricsAPI = "MetricsAPI"
	// UsageSourceAnnotation reads ObservedStagesAnnotation (AnnotationUsage).
	UsageSourceAnnotation = "Annotation"
)

// The bounds of Args.SampleInterval and Args.MaxSamplesPerPod.
const (
	minSampleInterval = time.Second
	// minCheckpointInterval is the shortest CheckpointInterval but 0.
	minCheckpointInterval = time.Second
	// defaultLearnedKeys and maxLearnedKeys are MaxLearnedKeys' default and bound (the
	// library's own default).
	defaultLearnedKeys = 8192
	maxLearnedKeys     = predict.DefaultMaxKeys
	minSamplesPerPod   = 4
	maxSamplesPerPod   = predict.MaxSeriesSamples
)

// ScorerArg is one scorer and its weight.
type ScorerArg struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}

// DefaultArgs are the defaults of every field.
func DefaultArgs() Args {
	keys := defaultLearnedKeys
	limit, samples := 0.1, 240
	return Args{
		CompressionLimit:    &limit,
		Matcher:             "FineGrained",
		Scorers:             []ScorerArg{{Name: "LeastAllocated", Weight: 1}, {Name: "BalancedAllocation", Weight: 1}},
		SimilarityLabels:    []string{"finegrain.io/logic"},
		InputSizeLabel:      "finegrain.io/input-size",
		GangTimeout:         &metav1.Duration{Duration: 60 * time.Second},
		UsageSource:         UsageSourceMetricsAPI,
		SampleInterval:      &metav1.Duration{Duration: 15 * time.Second},
		MaxSamplesPerPod:    &samples,
		UsageWindow:         &metav1.Duration{Duration: time.Minute},
		MaxLearnedKeys:      &keys,
		CheckpointInterval:  &metav1.Duration{Duration: time.Minute},
		CheckpointNamespace: metav1.NamespaceSystem,
		GPUResource:         defaultGPUResource,
		GPUShareResource:    defaultGPUShareResource,
		GPUModelLabel:       defaultGPUModelLabel,
		GPUScorer:           defaultGPUScorer,
	}
}

// withDefaults fills the fields left unset.
func (a Args) withDefaults() Args {
	d := DefaultArgs()
	if a.CompressionLimit == nil {
		a.CompressionLimit = d.CompressionLimit
	}
	if a.Matcher == "" {
		a.Matcher = d.Matcher
	}
	if a.Scorers == nil {
		a.Scorers = d.Scorers
	}
	if a.SimilarityLabels == nil {
		a.SimilarityLabels = d.SimilarityLabels
	}
	if a.InputSizeLabel == "" {
		a.InputSizeLabel = d.InputSizeLabel
	}
	if a.GangTimeout == nil {
		a.GangTimeout = d.GangTimeout
	}
	if a.UsageSource == "" {
		a.UsageSource = d.UsageSource
	}
	if a.SampleInterval == nil {
		a.SampleInterval = d.SampleInterval
	}
	if a.MaxSamplesPerPod == nil {
		a.MaxSamplesPerPod = d.MaxSamplesPerPod
	}
	if a.UsageWindow == nil {
		a.UsageWindow = d.UsageWindow
	}
	if a.MaxLearnedKeys == nil {
		a.MaxLearnedKeys = d.MaxLearnedKeys
	}
	if a.CheckpointInterval == nil {
		a.CheckpointInterval = d.CheckpointInterval
	}
	if a.CheckpointNamespace == "" {
		a.CheckpointNamespace = d.CheckpointNamespace
	}
	if a.Queues != nil {
		q := a.Queues.withDefaults()
		a.Queues = &q
	}
	if a.GPUResource == "" {
		a.GPUResource = d.GPUResource
	}
	if a.GPUShareResource == "" {
		a.GPUShareResource = d.GPUShareResource
	}
	if a.GPUModelLabel == "" {
		a.GPUModelLabel = d.GPUModelLabel
	}
	if a.GPUScorer == "" {
		a.GPUScorer = d.GPUScorer
	}
	if a.ScaleUp != nil {
		u := a.ScaleUp.withDefaults()
		a.ScaleUp = &u
	}
	return a
}

var matchers = map[string]match.Matcher{
	"FineGrained":     match.FineGrained{},
	"CoarseGrained":   match.CoarseGrained{},
	"RequestQuantity": match.RequestQuantity{},
}

var scorers = map[string]match.Scorer{
	"LeastAllocated":     match.LeastAllocated{},
	"MostAllocated":      match.MostAllocated{},
	"BalancedAllocation": match.BalancedAllocation{},
	"BestFit":            match.BestFit{},
	"Alignment":          match.Alignment{},
}

// Validate checks every field of a (defaults filled in) and returns all that is
// wrong, each error naming its field.
func (a Args) Validate() error {
	a = a.withDefaults()
	var errs field.ErrorList
	if x := *a.CompressionLimit; !(x >= 0 && x < 1) {
		errs = append(errs, field.Invalid(field.NewPath("compressionLimit"), x, "must be in [0, 1)"))
	}
	if _, ok := matchers[a.Matcher]; !ok {
		errs = append(errs, field.NotSupported(field.NewPath("matcher"), a.Matcher, sortedKeys(matchers)))
	}
	if len(a.Scorers) == 0 {
		errs = append(errs, field.Required(field.NewPath("scorers"), "at least one scorer"))
	}
	seen := map[string]bool{}
	for i, s := range a.Scorers {
		p := field.NewPath("scorers").Index(i)
		if _, ok := scorers[s.Name]; !ok {
			errs = append(errs, field.NotSupported(p.Child("name"), s.Name, sortedKeys(scorers)))
		} else if seen[s.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), s.Name))
		}
		seen[s.Name] = true
		if !(s.Weight > 0) || math.IsInf(s.Weight, 1) {
			errs = append(errs, field.Invalid(p.Child("weight"), s.Weight, "must be positive and finite"))
		}
	}
	for i, l := range a.SimilarityLabels {
		for _, msg := range validation.IsQualifiedName(l) {
			errs = append(errs, field.Invalid(field.NewPath("similarityLabels").Index(i), l, msg))
		}
	}
	for _, msg := range validation.IsQualifiedName(a.InputSizeLabel) {
		errs = append(errs, field.Invalid(field.NewPath("inputSizeLabel"), a.InputSizeLabel, msg))
	}
	if n := len(a.ExtendedResources); n > resource.MaxDims-2 {
		errs = append(errs, field.TooMany(field.NewPath("extendedResources"), n, resource.MaxDims-2))
	}
	ext := map[string]bool{}
	for i, r := range a.ExtendedResources {
		p := field.NewPath("extendedResources").Index(i)
		switch {
		case r == string(v1.ResourceCPU) || r == string(v1.ResourceMemory):
			errs = append(errs, field.Invalid(p, r, "cpu and memory are always scheduled"))
		case ext[r]:
			errs = append(errs, field.Duplicate(p, r))
		default:
			for _, msg := range validation.IsQualifiedName(r) {
				errs = append(errs, field.Invalid(p, r, msg))
			}
			if !strings.Contains(r, "/") {
				errs = append(errs, field.Invalid(p, r, "an extended resource name has a domain, as in nvidia.com/gpu"))
			}
		}
		ext[r] = true
	}
	if d := a.GangTimeout.Duration; d <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("gangTimeout"), d.String(), "must be positive"))
	}
	if a.UsageSource != UsageSourceMetricsAPI && a.UsageSource != UsageSourceAnnotation {
		errs = append(errs, field.NotSupported(field.NewPath("usageSource"), a.UsageSource, []string{UsageSourceAnnotation, UsageSourceMetricsAPI}))
	}
	if d := a.SampleInterval.Duration; d < minSampleInterval {
		errs = append(errs, field.Invalid(field.NewPath("sampleInterval"), d.String(), "must be at least "+minSampleInterval.String()))
	}
	if n := *a.MaxSamplesPerPod; n < minSamplesPerPod || n > maxSamplesPerPod {
		errs = append(errs, field.Invalid(field.NewPath("maxSamplesPerPod"), n, fmt.Sprintf("must be in [%d, %d]", minSamplesPerPod, maxSamplesPerPod)))
	}
	if d := a.UsageWindow.Duration; d < a.SampleInterval.Duration || d <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("usageWindow"), d.String(), "must be at least sampleInterval ("+a.SampleInterval.Duration.String()+")"))
	}
	if n := *a.MaxLearnedKeys; n < 1 || n > maxLearnedKeys {
		errs = append(errs, field.Invalid(field.NewPath("maxLearnedKeys"), n, fmt.Sprintf("must be in [1, %d]", maxLearnedKeys)))
	}
	if d := a.CheckpointInterval.Duration; d != 0 && d < minCheckpointInterval {
		errs = append(errs, field.Invalid(field.NewPath("checkpointInterval"), d.String(), "must be 0 (off) or at least "+minCheckpointInterval.String()))
	}
	for _, msg := range validation.IsDNS1123Label(a.CheckpointNamespace) {
		errs = append(errs, field.Invalid(field.NewPath("checkpointNamespace"), a.CheckpointNamespace, msg))
	}
	if a.CheckpointName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(a.CheckpointName) {
			errs = append(errs, field.Invalid(field.NewPath("checkpointName"), a.CheckpointName, msg))
		}
	}
	if a.Queues != nil {
		errs = append(errs, a.Queues.validate(field.NewPath("queues"))...)
	}
	errs = append(errs, a.validateGPU()...)
	if a.ScaleUp != nil {
		errs = append(errs, a.ScaleUp.validate(field.NewPath("scaleUp"))...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s args: %w", Name, errs.ToAggregate())
	}
	return nil
}

// validateGPU checks the GPU arguments of a, defaults filled in.
func (a Args) validateGPU() field.ErrorList {
	var errs field.ErrorList
	for _, r := range []struct {
		path, name string
	}{{"gpuResource", a.GPUResource}, {"gpuShareResource", a.GPUShareResource}} {
		p := field.NewPath(r.path)
		for _, msg := range validation.IsQualifiedName(r.name) {
			errs = append(errs, field.Invalid(p, r.name, msg))
		}
		if !strings.Contains(r.name, "/") {
			errs = append(errs, field.Invalid(p, r.name, "an extended resource name has a domain, as in nvidia.com/gpu"))
		}
		if i := slices.Index(a.ExtendedResources, r.name); i >= 0 && a.GPUDevices {
			errs = append(errs, field.Invalid(field.NewPath("extendedResources").Index(i), r.name, "scheduled device by device with gpuDevices: it cannot also be on the timelines"))
		}
	}
	if a.GPUResource == a.GPUShareResource {
		errs = append(errs, field.Invalid(field.NewPath("gpuShareResource"), a.GPUShareResource, "must differ from gpuResource"))
	}
	for _, msg := range validation.IsQualifiedName(a.GPUModelLabel) {
		errs = append(errs, field.Invalid(field.NewPath("gpuModelLabel"), a.GPUModelLabel, msg))
	}
	if _, ok := gpuScorers[a.GPUScorer]; !ok {
		errs = append(errs, field.NotSupported(field.NewPath("gpuScorer"), a.GPUScorer, sortedKeys(gpuScorers)))
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// decodeArgs reads the plugin's arguments from a scheduler profile's pluginConfig
// (nil: none given), refusing unknown fields, and checks them.
//
// JSON (and YAML, once converted) is decoded strictly, as kube-scheduler decodes its
// own configuration and the arguments of its in-tree plugins: sigs.k8s.io/json's
// UnmarshalStrict, which apimachinery's strict serializer uses, refuses anything after
// the one top-level value (a second object, a stray bracket), a key given twice and
// a key that names no field. Field names are matched case-sensitively, as there: a
// key that differs from a field's name only in case is an unknown field, not that
// field. YAML is held to one document, and sigs.k8s.io/yaml refuses a key given twice.
func decodeArgs(obj runtime.Object) (Args, error) {
	var a Args
	if obj != nil {
		u, ok := obj.(*runtime.Unknown)
		if !ok {
			return Args{}, fmt.Errorf("%s args: want the arguments as raw JSON or YAML, got %T", Name, obj)
		}
		if u == nil {
			return Args{}, fmt.Errorf("%s args: want the arguments as raw JSON or YAML, got a nil %T", Name, obj)
		}
		raw := u.Raw
		if u.ContentType == runtime.ContentTypeYAML {
			if err := oneYAMLDocument(raw); err != nil {
				return Args{}, fmt.Errorf("%s args: %w", Name, err)
			}
			var err error
			if raw, err = yaml.YAMLToJSONStrict(raw); err != nil {
				return Args{}, fmt.Errorf("%s args: %w", Name, err)
			}
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			strict, err := kjson.UnmarshalStrict(raw, &a, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
			if err == nil {
				err = utilerrors.NewAggregate(strict) // nil if none; each names its field
			}
			if err != nil {
				return Args{}, fmt.Errorf("%s args: %w", Name, err)
			}
		}
	}
	if err := a.Validate(); err != nil {
		return Args{}, err
	}
	return a.withDefaults(), nil
}

// oneYAMLDocument refuses YAML holding a second document after the first ("---" and
// more), which sigs.k8s.io/yaml would silently drop. It reads the text with the YAML
// parser sigs.k8s.io/yaml itself uses; empty documents (a trailing "---") are allowed.
func oneYAMLDocument(raw []byte) error {
	dec := yamlv2.NewDecoder(bytes.NewReader(raw))
	for n := 0; ; n++ {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if doc != nil && n > 0 {
			return fmt.Errorf("want one YAML document, got a document after the first (document %d)", n+1)
		}
	}
}
