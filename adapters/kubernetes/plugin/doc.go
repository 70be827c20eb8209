// Package plugin is finegrain as a Kubernetes scheduling-framework plugin, FineGrain,
// compiled into a kube-scheduler binary (cmd/kube-scheduler) the way out-of-tree
// plugins are. It keeps a finegrain Scheduler (in host mode: the kube-scheduler runs
// the cycle, finegrain answers each step) in step with the cluster and puts it on the
// framework's extension points:
//
//	QueueSort   with Args.Queues (Sorting): pending pods by their queues' fairness
//	            (DRF, Fair or Capacity over namespaces or a label's values), then
//	            priority and arrival; PreFilter refuses a pod whose queue holds its
//	            max share
//	PreFilter   the pod becomes a finegrain task: its declared stages
//	            (finegrain.io/stages), else the profile learned from similar pods
//	            (Args.SimilarityLabels, Args.InputSizeLabel), else its requests
//	Filter      the stage match on the node's timeline, compressing CPU by at most
//	            Args.CompressionLimit (Scheduler.Filter); by request, the pod count
//	            and the resources not on the timelines, as NodeResourcesFit does
//	Score       finegrain's scorers over the least free during the pod's run,
//	            scaled to 0..100 (Scheduler.Score)
//	Reserve     the stages held on the node's timeline, tentatively
//	            (Scheduler.Reserve); Unreserve gives them back
//	Permit      gangs (finegrain.io/gang, finegrain.io/min-member): all or nothing
//	PreBind     with Args.GPUDevices: the GPU devices held for the pod written on
//	            it (finegrain.io/gpu-devices) before it is bound, unless Bind does
//	Bind        with Args.GPUDevices, when enabled at bind before DefaultBinder: a
//	            pod given GPU devices bound with them in the binding's annotations,
//	            one API call; other pods skipped, for DefaultBinder
//	PostBind    the hold committed: the pod runs (Scheduler.Commit)
//	PostFilter  with Args.Preemption: lower-priority pods evicted where that frees
//	            the pod's stages on a timeline (Scheduler.PostFilter); the pod is
//	            held there and bound once they are gone
//
// From the scheduler's informers it adds, updates (Scheduler.UpdateNode) and removes
// nodes (capacity: allocatable CPU, memory and Args.ExtendedResources; with
// Args.GPUDevices, the GPU devices), ends pods that succeed, fail or are deleted, and
// holds pods bound by other schedulers, or before the plugin started, on their nodes
// as their requests, and their GPU devices (Scheduler.SetExternalDevices).
//
// GPU sharing (Args.GPUDevices, gpu.go): a pod asks whole GPUs (nvidia.com/gpu) or a
// share of one in thousandths (finegrain.io/gpu-milli), of the models
// finegrain.io/gpu-model lists; a node has the devices its nvidia.com/gpu capacity
// counts, of the model its nvidia.com/gpu.product label names; the library's device
// fit and GPU scorer (Args.GPUScorer, FGD by default) choose the devices, which Bind
// (or PreBind) writes on the pod for the node's device plugin to read. What its pods used, from a UsageSource, teaches
// the estimator: by default (Args.UsageSource MetricsAPI) the usage series a sampler
// keeps of each pod it placed from metrics.k8s.io (metrics-server), reported while
// the pod runs (Scheduler.ReportRunning) and when it ends; or the
// finegrain.io/observed-stages annotation (AnnotationUsage); or a source of one's
// own (WithUsageSource). The same sampler reports each node's usage
// (Scheduler.ReportUsage), from which the library sets the node's mode (Alg. 3):
// a change is logged and recorded as an Event on the Node. The sampler starts with
// the first scheduling cycle, so that a standby replica calls no metrics API.
//
// Mixed workloads (Args.ScaleUp, scaleup.go; off by default): a pod's class and
// objective come from finegrain.io/class (else Koordinator's koordinator.sh/qosClass)
// and finegrain.io/slo, its progress from finegrain.io/progress (mixed.go). Every
// ScaleUpArgs.Interval the scheduling replica runs the library's scale-up round
// (Scheduler.ScaleUp): stragglers grown, batch pods shrunk and given back, each change
// a resize of the pod's containers through the pods/resize subresource (resize.go),
// feature-detected through discovery, the node and the pod; a change that cannot be
// made (and every move: Kubernetes has none) is not, is said (an Event, a log line, a
// metric), and is taken back in the books (Scheduler.UndoScale).
//
// The plugin replaces request-based fitting: a profile that enables it disables
// NodeResourcesFit (else a pod whose requests do not fit is refused before finegrain
// is asked; the plugin's Filter checks what else NodeResourcesFit checked) and the
// default preemption when Args.Preemption is on. See
// deploy/scheduler-config.yaml and the module's README.
package plugin
