package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	metricsclientset "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// Name is the plugin's name in a scheduler profile and in its statuses.
const Name = "FineGrain"

// Plugin is finegrain on the Kubernetes scheduling framework's extension points (see
// the package documentation for what each does). It keeps a finegrain Scheduler in
// step with the cluster through the scheduler's informers. Filter and Score run
// concurrently for many nodes; every method is safe for concurrent use.
type Plugin struct {
	handle     fwk.Handle
	args       Args
	scheme     *scheme
	sched      *finegrain.Scheduler
	usage      UsageSource
	gpuScorer  gpu.DeviceScorer // Args.GPUScorer's; nil for None or without Args.GPUDevices
	metric     *sampler         // nil without Args.UsageSource MetricsAPI
	ticks      clock.WithTicker // the sampler's and the checkpoints' ticks: the clock's, else the wall clock's
	profile    string           // the scheduler profile's name: the metrics' label, the checkpoint's name
	activation sync.Once        // activate
	active     atomic.Bool      // activate has run: the replica schedules
	clock      clock.PassiveClock
	epoch      time.Time
	ctx        context.Context
	logger     klog.Logger

	mu          sync.Mutex
	pods        map[string]*podRecord     // the pods this plugin submitted, by task ID
	foreign     map[string]foreignPod     // bound pods it did not place, by task ID
	load        map[string]resource.Tuple // by node: the requests of its foreign pods
	gangs       map[string]*gangRecord    // by "namespace/gang"
	refused     map[string]*v1.Pod        // pods of ours PostFilter saw unplaced, by task ID
	unresolved  map[string]*v1.Pod        // pods no node could hold (submit), by task ID
	nodes       map[string]nodeMeta       // the nodes the Scheduler holds
	terminating map[string]string         // preempted pods not yet gone: victim task ID → preemptor task ID
	awaiting    map[string]int            // by preemptor task ID: how many of its victims are not yet gone
	victims     map[string][]string       // by preemptor task ID: its victims\' UIDs, until it is bound or gives up
	// retryAtCommit: preemptors to activate when a pod is committed (preemptretry.go).
	retryAtCommit map[string]struct{}
	queues        *queueBook // nil without Args.Queues (queues.go)
	scale         *scaler    // nil without Args.ScaleUp (scaleup.go)

	binderOnce sync.Once // bindsFirst (gpu.go)
	binder     bool      // FineGrain's Bind runs before the profile's other bind plugins
}

// podRecord is what the plugin remembers of a pod it submitted.
type podRecord struct {
	namespace, name string
	uid             string
	gang            string // "" for none
	request         resource.Tuple
	node            string         // where PostBind committed it; "" before
	declared        bool           // its stages were declared (StagesAnnotation)
	predicted       bool           // PostBind committed it on a predicted profile (not declared, not its request)
	planned         resource.Tuple // the peak of what PostBind committed it on
	gpu             gpu.Demand     // its GPU demand (Args.GPUDevices)
	devices         gpu.Allocation // the GPU devices PreBind wrote on it
	progress        string         // the ProgressAnnotation value last reported (mixed.go)
	progressWarned  bool           // a progress value refused was logged
}

// nodeMeta is what the plugin keeps of a node the Scheduler holds.
type nodeMeta struct {
	uid      types.UID
	capacity resource.Tuple
	gpu      gpu.Spec // its GPU devices (Args.GPUDevices)
}

// foreignPod is a bound pod the plugin did not place: its requests are held on its
// node as external load.
type foreignPod struct {
	node    string
	request resource.Tuple
	devices gpu.Allocation // its GPU devices (Args.GPUDevices), held as external shares
	guess   gpu.Demand     // its GPU demand when its devices are not known: guessDevices chooses them
}

// gangRecord counts a gang's members.
type gangRecord struct {
	members  int  // pods of the gang the plugin holds a record of
	running  int  // bound and not ended
	done     int  // ended successfully
	gathered bool // MinMember have been bound at once; later members start as they fit
}

var (
	_ fwk.PreFilterPlugin  = (*Plugin)(nil)
	_ fwk.FilterPlugin     = (*Plugin)(nil)
	_ fwk.PostFilterPlugin = (*Plugin)(nil)
	_ fwk.ScorePlugin      = (*Plugin)(nil)
	_ fwk.ReservePlugin    = (*Plugin)(nil)
	_ fwk.PermitPlugin     = (*Plugin)(nil)
	_ fwk.PreBindPlugin    = (*Plugin)(nil)
	_ fwk.BindPlugin       = (*Plugin)(nil)
	_ fwk.PostBindPlugin   = (*Plugin)(nil)
	_ io.Closer            = (*Plugin)(nil)
)

// Option configures the plugin beyond its Args (which come from the scheduler
// configuration): what a program that builds a scheduler binary chooses.
type Option func(*options) error

type options struct {
	usage   UsageSource // nil: as Args.UsageSource says
	metrics metricsclientset.Interface
	clock   clock.PassiveClock
}

// WithUsageSource sets where the plugin reads what its pods used, to teach the
// estimator, in place of the one Args.UsageSource names (which, as MetricsAPI, then
// still samples the nodes' usage).
func WithUsageSource(u UsageSource) Option {
	return func(o *options) error {
		if u == nil {
			return errors.New("nil usage source")
		}
		o.usage = u
		return nil
	}
}

// WithMetricsClient sets the client of metrics.k8s.io that Args.UsageSource
// MetricsAPI reads (a fake one in tests, or an embedder's own). Default one built from
// the scheduler's kubeconfig (fwk.Handle.KubeConfig).
func WithMetricsClient(c metricsclientset.Interface) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("nil metrics client")
		}
		o.metrics = c
		return nil
	}
}

// WithClock sets the clock the plugin reads times from. Default the wall clock. The
// MetricsAPI sampler ticks on it when it is a clock.WithTicker, else on the wall
// clock.
func WithClock(c clock.PassiveClock) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("nil clock")
		}
		o.clock = c
		return nil
	}
}

// New is the plugin's factory with the default options, to register with
// app.WithPlugin(plugin.Name, plugin.New) or a framework Registry.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewFactory()(ctx, obj, h)
}

// NewFactory returns the plugin's factory with opts.
func NewFactory(opts ...Option) frameworkruntime.PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		o := options{clock: clock.RealClock{}}
		for _, opt := range opts {
			if opt == nil {
				return nil, fmt.Errorf("%s: nil option", Name)
			}
			if err := opt(&o); err != nil {
				return nil, fmt.Errorf("%s: %w", Name, err)
			}
		}
		args, err := decodeArgs(obj)
		if err != nil {
			return nil, err
		}
		p, err := newPlugin(ctx, args, h, o)
		if err != nil || p.queues == nil {
			return p, err
		}
		return &Sorting{Plugin: p}, nil // queues.go
	}
}

// activate runs once, at the first scheduling cycle (PreFilter). kube-scheduler
// builds its plugins and starts its informers before leader election, and only the
// leader schedules: what only the scheduling replica should do starts here, so that a
// standby makes no API calls of the plugin's own and writes nothing. With checkpoints
// (Args.CheckpointInterval), the estimator is restored from the last checkpoint — what
// the previous leader, or this replica before a restart, had learned — and written
// from then on until the plugin's context ends; the first cycle waits for that read
// (at most 10 s). A checkpoint that cannot be read or is refused leaves the estimator
// empty, with the error logged: the pods are placed on their requests and it learns
// again. Then the MetricsAPI sampler starts, and the scale-up rounds (Args.ScaleUp).
func (p *Plugin) activate() {
	p.activation.Do(func() {
		p.active.Store(true)
		if p.args.CheckpointInterval.Duration > 0 && p.handle != nil && p.handle.ClientSet() != nil {
			ref := klog.KRef(p.args.CheckpointNamespace, p.checkpointName())
			switch ok, err := p.restoreCheckpoint(p.ctx); {
			case err != nil:
				p.logger.Error(err, "estimates not restored: the estimator starts empty", "configMap", ref)
			case ok:
				keys, _ := p.estimatorKeys()
				p.logger.Info("estimates restored", "configMap", ref, "keys", keys)
			default:
				p.logger.V(2).Info("no checkpoint of the estimates yet", "configMap", ref)
			}
			go p.checkpoints(p.ctx, p.ticks.NewTicker(p.args.CheckpointInterval.Duration))
		}
		if p.metric != nil {
			p.metric.start(p.ctx)
		}
		p.startScaleUps(p.ctx) // with Args.ScaleUp (scaleup.go)
	})
}

func newPlugin(ctx context.Context, args Args, h fwk.Handle, o options) (*Plugin, error) {
	sc, err := newScheme(args.ExtendedResources)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	est, err := predict.NewSimilarTask(sc.schema, predict.WithMaxKeys(*args.MaxLearnedKeys))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	gs := newGPUScorer(args)
	sched, err := finegrain.New(sc.schema, append(schedulerOptions(args), finegrain.WithEstimator(est), finegrain.WithGPUScorer(gs))...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	p := &Plugin{
		handle: h, args: args, scheme: sc, sched: sched, usage: o.usage, gpuScorer: gs,
		clock: o.clock, ticks: clock.RealClock{}, epoch: o.clock.Now(), ctx: ctx, logger: klog.FromContext(ctx).WithName(Name),
		pods: map[string]*podRecord{}, foreign: map[string]foreignPod{}, load: map[string]resource.Tuple{},
		gangs: map[string]*gangRecord{}, refused: map[string]*v1.Pod{}, unresolved: map[string]*v1.Pod{}, nodes: map[string]nodeMeta{}, terminating: map[string]string{}, awaiting: map[string]int{}, victims: map[string][]string{},
	}
	p.queues = newQueueBook(args.Queues, sched)
	p.scale = newScaler(args.ScaleUp)
	if ticks, ok := o.clock.(clock.WithTicker); ok {
		p.ticks = ticks
	}
	if named, ok := h.(interface{ ProfileName() string }); ok {
		p.profile = named.ProfileName()
	}
	if args.CheckpointInterval.Duration > 0 && h != nil { // without a handle there is no API to checkpoint to
		for _, msg := range validation.IsDNS1123Subdomain(p.checkpointName()) {
			return nil, fmt.Errorf("%s args: checkpointName: the default %q is not a ConfigMap name (%s): set one", Name, p.checkpointName(), msg)
		}
	}
	register()
	if args.UsageSource == UsageSourceMetricsAPI {
		client, err := metricsClient(o.metrics, h)
		p.metric = newSampler(p, client, err, p.ticks, o.usage == nil)
		if o.usage == nil {
			p.usage = p.metric
		}
	}
	if p.usage == nil {
		p.usage = AnnotationUsage{}
	}
	if h != nil && h.SharedInformerFactory() != nil {
		if err := p.watch(h.SharedInformerFactory()); err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
	}
	p.logStart() // version.go
	return p, nil
}

// schedulerOptions configures the finegrain Scheduler from checked args.
func schedulerOptions(a Args) []finegrain.Option {
	scs := make([]match.Scorer, len(a.Scorers))
	ws := make([]float64, len(a.Scorers))
	for i, s := range a.Scorers {
		scs[i], ws[i] = scorers[s.Name], s.Weight
	}
	weighted, _ := match.NewWeighted(scs, ws) // Validate checked names and weights
	m := matchers[a.Matcher]
	opts := []finegrain.Option{
		finegrain.WithCompressionLimit(*a.CompressionLimit),
		finegrain.WithMatcherFor(policy.ModeFineGrained, m),
		finegrain.WithMatcherFor(policy.ModeFineGrainedNoCompression, m),
		finegrain.WithScorer(weighted),
		finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		// Informer events and scheduling cycles reach the plugin from several
		// goroutines, a little out of order.
		finegrain.WithClockSkew(10 * time.Second),
	}
	if a.Preemption {
		opts = append(opts, finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	}
	if a.Queues != nil {
		opts = append(opts, finegrain.WithOrdering(queuePolicies[a.Queues.withDefaults().Policy]))
	}
	if a.ScaleUp != nil {
		opts = append(opts, finegrain.WithScaleUp(a.ScaleUp.withDefaults().config()))
	}
	return opts
}

// Name implements fwk.Plugin.
func (p *Plugin) Name() string { return Name }

// Scheduler is the finegrain Scheduler the plugin keeps: read it (NodeFree,
// FreeSegments, State, Counts) to see what the plugin sees. Calls that change it
// would put it out of step with the cluster.
func (p *Plugin) Scheduler() *finegrain.Scheduler { return p.sched }

// now is the plugin's time: how long since it started.
func (p *Plugin) now() time.Duration { return max(p.clock.Since(p.epoch), 0) }

// Units are the plugin's units, in which a UsageSource writes a series: the ones the
// plugin passes to UsageSource.Usage.
func (p *Plugin) Units() Units { return Units{scheme: p.scheme, epoch: p.epoch} }

// PreFilter submits the pod to finegrain (once): its demand is its declared stages
// (StagesAnnotation), else the profile learned from similar pods, else its requests.
// A pod held on a node by PostFilter (preemption) may only go there.
//
// Everything of the cycle that depends on the pod alone is worked out here, once, and
// kept in the cycle state, as NodeResourcesFit keeps the pod's request: the pod's
// requests of the resources not on the timelines (podFit), and a snapshot of its
// finegrain task (finegrain.Scheduler.Snapshot) — its demand and the PreFilter
// verdict, with views of the nodes as they are now — which Filter and Score read
// without the Scheduler's lock, as kube-scheduler reads its own NodeInfo snapshot.
//
// The first PreFilter activates the plugin (activate): it restores the estimator from
// the last checkpoint, then starts the checkpoints and the MetricsAPI sampler.
func (p *Plugin) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	p.activate()
	p.noteCycleStart(cs, pod) // giveway.go
	id, err := p.submit(pod)
	if err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	d := &cycleData{id: id, fit: p.fitOf(pod)}
	if as, ok := p.sched.Held(id); ok {
		d.held = as.Node
	} else if d.snap, err = p.sched.Snapshot(id, p.now()); err != nil {
		if st, _ := p.sched.TaskState(id); st != finegrain.Pending {
			return nil, fwk.NewStatus(fwk.Error, fmt.Sprintf("finegrain holds the pod as %v", st))
		}
		return nil, fwk.AsStatus(err)
	}
	cs.Write(cycleKey, d)
	if d.held == "" {
		return nil, p.overMaxShare(pod) // queues.go
	}
	if n := p.victimsLeft(id); n > 0 {
		d.waiting = true
		// As Kubernetes' own preemption does, the preemptor waits for its victims to
		// be gone before it is bound; its hold keeps the room meanwhile.
		return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("finegrain: waiting for %d preempted pod(s) to terminate on node %s", n, d.held))
	}
	return &fwk.PreFilterResult{NodeNames: sets.New(d.held)}, nil
}

// victimsLeft is how many of preemptor id's victims are not yet gone.
func (p *Plugin) victimsLeft(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.awaiting[id]
}

// cycleData is what PreFilter found, for the steps after it in the same cycle: the
// pod's task ID, the node PostFilter holds it on ("" for none), whether it waits for
// its victims, its requests of the resources not on the timelines, and the snapshot of
// its task that Filter and Score read (nil for a held pod).
type cycleData struct {
	id, held string
	waiting  bool // PreFilter refused the pod: its victims are still terminating
	fit      *podFit
	snap     *finegrain.Snapshot
}

const cycleKey fwk.StateKey = Name + "/pod"

// Clone implements fwk.StateData; cycleData is not changed once written (nor is the
// snapshot it holds).
func (d *cycleData) Clone() fwk.StateData { return d }

// cycle reads what PreFilter wrote, or works it out when PreFilter did not run.
func (p *Plugin) cycle(cs fwk.CycleState, pod *v1.Pod) *cycleData {
	if cs != nil {
		if v, err := cs.Read(cycleKey); err == nil {
			if d, ok := v.(*cycleData); ok {
				return d
			}
		}
	}
	d := &cycleData{id: taskID(pod), fit: p.fitOf(pod)}
	if as, ok := p.sched.Held(d.id); ok {
		d.held = as.Node
	}
	return d
}

// PreFilterExtensions implements fwk.PreFilterPlugin: none; the plugin reads
// finegrain's timelines, not the node's pod list.
func (p *Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter is finegrain's Filter on the node's timeline: the pod's stages, from the
// cycle's PreFilter on, must fit what is free stage by stage, compressible resources
// squeezed by at most the compression limit. It reads the snapshot PreFilter took,
// without the Scheduler's lock; Reserve checks the node again as it is then.
func (p *Plugin) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.Error, "node not found")
	}
	d := p.cycle(cs, pod)
	id := d.id
	if d.held != "" && d.held != node.Name {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "the pod is held on node "+d.held)
	}
	if st := d.fit.fits(ni); st != nil {
		return st
	}
	if d.held != "" {
		return nil
	}
	var st finegrain.Status
	var res match.Result
	var err error
	var now time.Duration
	if d.snap != nil {
		now = d.snap.At()
		st, res, err = d.snap.Filter(node.Name)
	} else {
		now = p.now()
		st, res, err = p.sched.Filter(id, node.Name, now)
	}
	if errors.Is(err, finegrain.ErrUnknownNode) {
		// The scheduler's snapshot may show a node before the plugin's informer
		// handler has added it (or after the plugin's snapshot was taken, at
		// PreFilter): the node is added, and asked about on the live state.
		p.addNode(node)
		st, res, err = p.sched.Filter(id, node.Name, now)
	}
	if err != nil {
		return fwk.AsStatus(err)
	}
	if !st.OK() {
		return refusal(st, res)
	}
	return nil
}

// refusal is finegrain's refusal of a node as the scheduler reports it: one short
// phrase per reason and dimension ("finegrain: short of memory"), the same on every
// node refused for it, so that the pod's FailedScheduling event counts them together
// as kube-scheduler does its own ("0/5 nodes are available: 3 finegrain: short of
// memory, 2 Insufficient pods."); UnschedulableAndUnresolvable where the node is
// smaller than the pod (finegrain.OverCapacity), so that preemption does not try it.
// The stage, the amounts and the time are in the match result; the library's
// Scheduler.Explain reports them for a pending pod's task.
func refusal(st finegrain.Status, res match.Result) *fwk.Status {
	code := fwk.Unschedulable
	if st.Reason == finegrain.OverCapacity {
		code = fwk.UnschedulableAndUnresolvable
	}
	return fwk.NewStatus(code, "finegrain: "+framework.CountOf(st, res).Why())
}

// Score is finegrain's score of the node, from the least free over the pod's run,
// scaled to 0..MaxScore, on the snapshot PreFilter took.
func (p *Plugin) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	node := ni.Node()
	if node == nil {
		return 0, fwk.NewStatus(fwk.Error, "node not found")
	}
	d := p.cycle(cs, pod)
	if d.held == node.Name {
		return fwk.MaxScore, nil
	}
	var x float64
	var st finegrain.Status
	var err error
	if d.snap != nil {
		x, st, err = d.snap.Score(node.Name)
		if errors.Is(err, finegrain.ErrUnknownNode) {
			// A node the plugin's informer added after the snapshot.
			x, st, err = p.sched.Score(d.id, node.Name, d.snap.At())
		}
	} else {
		x, st, err = p.sched.Score(d.id, node.Name, p.now())
	}
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if !st.OK() {
		// The node passed Filter a moment ago; the cluster changed since.
		return 0, nil
	}
	return int64(math.Round(p.scoreShare(x) * float64(fwk.MaxScore))), nil
}

// ScoreExtensions implements fwk.ScorePlugin: scores are already in range.
func (p *Plugin) ScoreExtensions() fwk.ScoreExtensions { return nil }

// Reserve holds the pod's stages on the chosen node's timeline, tentatively, until
// PostBind commits them or Unreserve gives them back. A pod PostFilter already holds
// there keeps that hold.
func (p *Plugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	d := p.cycle(cs, pod)
	id := d.id
	if d.held != nodeName {
		if st := p.giveWay(cs, pod); st != nil { // giveway.go
			return st
		}
		if _, err := p.sched.Reserve(id, nodeName, p.now()); err != nil {
			return fwk.NewStatus(fwk.Unschedulable, err.Error())
		}
	}
	p.mu.Lock()
	delete(p.refused, id)
	p.mu.Unlock()
	return nil
}

// Unreserve gives the pod's hold back: its node's timeline is as before Reserve. For
// a gang's pod, the gang's other waiting pods are rejected too.
func (p *Plugin) Unreserve(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) {
	id := taskID(pod)
	p.release(pod, id, nodeName)
	gang, _, _ := gangOf(pod)
	if gang == "" {
		return
	}
	p.mu.Lock()
	g := p.gangs[gang]
	if g != nil && g.running == 0 {
		// Allowed members that then failed to bind leave a gang with none running:
		// it has to gather again.
		g.gathered = false
	}
	gathered := g != nil && g.gathered
	p.mu.Unlock()
	if gathered {
		return
	}
	p.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if other := wp.GetPod(); other.UID != pod.UID {
			if og, _, _ := gangOf(other); og == gang {
				wp.Reject(Name, fmt.Sprintf("gang %s: member %s was unreserved", gang, pod.Name))
			}
		}
	})
}

// release gives back what task id holds on node, and holds again the foreign load
// that found the node full while it held room there (SetExternalLoad holds only what
// is free).
func (p *Plugin) release(pod *v1.Pod, id, node string) {
	if err := p.sched.Unreserve(id, p.now()); err != nil && !errors.Is(err, finegrain.ErrState) && !errors.Is(err, finegrain.ErrUnknownTask) {
		p.logger.Error(err, "unreserve", "pod", klog.KObj(pod))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.load[node].IsZero() {
		p.applyLoad(node)
	}
}

// Permit holds a gang's pods (GangLabel, MinMemberLabel) until MinMember of them are
// reserved or bound at once, then lets them all through; a pod of no gang, or of a
// gang that has gathered, passes at once.
func (p *Plugin) Permit(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	gang, minMember, err := gangOf(pod)
	if err != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error()), 0
	}
	if gang == "" {
		return nil, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	g := p.gang(gang)
	if g.gathered {
		return nil, 0
	}
	var waiting []fwk.WaitingPod
	p.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if other := wp.GetPod(); other.UID != pod.UID {
			if og, _, _ := gangOf(other); og == gang {
				waiting = append(waiting, wp)
			}
		}
	})
	if n := 1 + len(waiting) + g.running + g.done; n < minMember {
		return fwk.NewStatus(fwk.Wait, fmt.Sprintf("gang %s: %d of %d members", gang, n, minMember)), p.args.GangTimeout.Duration
	}
	g.gathered = true
	for _, wp := range waiting {
		wp.Allow(Name)
	}
	return nil, 0
}

// PostBind commits the pod's hold: finegrain counts it running from now, and the
// MetricsAPI sampler follows it.
func (p *Plugin) PostBind(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) {
	id := taskID(pod)
	as, err := p.sched.Commit(id, p.now())
	if err != nil {
		p.logger.Error(err, "commit after bind", "pod", klog.KObj(pod), "node", nodeName)
		return
	}
	defer p.retryPreemptors()   // after p.mu is released
	defer p.followProgress(pod) // a progress written before the pod ran (mixed.go); after p.mu is released
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.refused, id)
	delete(p.victims, id)
	if r := p.pods[id]; r != nil && r.node == "" {
		r.node = nodeName
		p.committed(r, as)
		if r.gang != "" {
			p.gang(r.gang).running++
		}
		if p.metric != nil {
			// Under p.mu, so that the pod's end, which forgets it under p.mu, cannot
			// come between.
			p.metric.track(pod, id, p.now())
		}
	}
}

// PostFilter, with Args.Preemption, asks finegrain to make room when no node passed:
// it evicts lower-priority pods where that frees the pod's stages on the timeline,
// deletes them through the API, holds the pod on that node and nominates it there.
func (p *Plugin) PostFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, statuses fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	id := taskID(pod)
	p.mu.Lock()
	_, ours := p.pods[id]
	if ours {
		p.refused[id] = pod
	}
	p.mu.Unlock()
	if !ours {
		return nil, fwk.NewStatus(fwk.Unschedulable, "not submitted to finegrain")
	}
	if held, ok := p.sched.Held(id); ok {
		return nil, p.stillHeld(cs, pod, id, held.Node)
	}
	if !p.args.Preemption {
		return nil, fwk.NewStatus(fwk.Unschedulable, "finegrain preemption is off")
	}
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return nil, fwk.NewStatus(fwk.Unschedulable, "finegrain: the pod's preemptionPolicy is Never")
	}
	// Preempt only where finegrain refused the pod: elsewhere another plugin refused
	// it, and making room on the timeline would not help. FineGrain must be the last
	// Filter plugin for this to hold (MultiPoint appends enabled plugins after the
	// defaults, so deploy/scheduler-config.yaml's is): the scheduler keeps the first
	// refusal of a node.
	allow := func(node string) bool {
		st := statuses.Get(node)
		return st == nil || (st.Code() == fwk.Unschedulable && st.Plugin() == Name)
	}
	// The lock is held from the evictions until every victim is recorded, so that no
	// informer event for a victim comes between (a victim's update would otherwise
	// find it pending and take it for a pod bound behind the plugin's back).
	p.mu.Lock()
	reserved := p.reservedPods()
	as, err := p.sched.PostFilter(id, p.now(), allow)
	var evicted []finegrain.Eviction
	var perr *finegrain.PlacementError
	switch {
	case err == nil:
		evicted = as.Evicted
	case errors.As(err, &perr):
		evicted = perr.Evicted
	}
	if err != nil && len(evicted) == 0 {
		p.preemptionDeferred(id, reserved)
	}
	type victim struct {
		task string
		rec  podRecord
	}
	victims := make([]victim, 0, len(evicted))
	for _, e := range evicted {
		r := p.pods[e.Task]
		if r == nil {
			continue
		}
		victims = append(victims, victim{e.Task, *r})
		p.victims[id] = append(p.victims[id], r.uid)
		// A victim runs until it has terminated: its requests stay held (beyond the
		// preemptor's hold, SetExternalLoad takes only what is free), and the
		// preemptor waits for it.
		p.holdByRequest(e.Task, e.Node)
		p.terminating[e.Task] = id
		p.awaiting[id]++
	}
	p.mu.Unlock()

	failed := 0
	for _, v := range victims {
		uid := types.UID(v.rec.uid)
		err := p.handle.ClientSet().CoreV1().Pods(v.rec.namespace).Delete(ctx, v.rec.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			// It keeps running, held by its requests; nobody waits for it.
			p.logger.Error(err, "delete preempted pod", "pod", klog.KRef(v.rec.namespace, v.rec.name), "preemptor", klog.KObj(pod))
			p.mu.Lock()
			p.forgetVictim(v.task)
			p.mu.Unlock()
			failed++
			continue
		}
		p.logger.V(2).Info("preempted", "pod", klog.KRef(v.rec.namespace, v.rec.name), "preemptor", klog.KObj(pod))
	}
	if err != nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	if failed > 0 {
		// The room is not there after all: the preemptor's hold goes, and the victims'
		// requests are held in full again.
		p.release(pod, id, as.Node)
		return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("finegrain: %d preempted pod(s) could not be deleted", failed))
	}
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: as.Node, NominatingMode: fwk.ModeOverride}}, fwk.NewStatus(fwk.Success)
}

// stillHeld is PostFilter for a pod held on node, which did not pass there. While
// its victims terminate — or PreFilter said so in this cycle, or the scheduler's
// snapshot still shows one of them on the node — it keeps waiting. Otherwise another
// plugin refused the node: the hold goes, and the next attempt starts afresh.
func (p *Plugin) stillHeld(cs fwk.CycleState, pod *v1.Pod, id, node string) *fwk.Status {
	if n := p.victimsLeft(id); n > 0 || p.cycle(cs, pod).waiting {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("finegrain: waiting for %d preempted pod(s) to terminate on node %s", n, node))
	}
	if p.snapshotHasVictim(id, node) {
		return fwk.NewStatus(fwk.Unschedulable, "finegrain: waiting for the scheduler's cache to drop the preempted pods on node "+node)
	}
	p.release(pod, id, node)
	p.mu.Lock()
	delete(p.victims, id)
	p.mu.Unlock()
	return fwk.NewStatus(fwk.Unschedulable, "finegrain: node "+node+", where the pod was held, was refused; hold released")
}

// snapshotHasVictim reports whether the scheduler's snapshot of node still holds one
// of preemptor id's victims.
func (p *Plugin) snapshotHasVictim(id, node string) bool {
	p.mu.Lock()
	victims := p.victims[id]
	p.mu.Unlock()
	if len(victims) == 0 || p.handle == nil {
		return false
	}
	ni, err := p.handle.SnapshotSharedLister().NodeInfos().Get(node)
	if err != nil {
		return false
	}
	for _, pi := range ni.GetPods() {
		if slices.Contains(victims, string(pi.GetPod().UID)) {
			return true
		}
	}
	return false
}

// forgetVictim stops waiting for victim task id (its deletion failed, or it is
// gone); p.mu is held.
func (p *Plugin) forgetVictim(id string) {
	pre, ok := p.terminating[id]
	if !ok {
		return
	}
	delete(p.terminating, id)
	if p.awaiting[pre]--; p.awaiting[pre] <= 0 {
		delete(p.awaiting, pre)
	}
}

// holdByRequest turns pod task id of the plugin's, which finegrain no longer holds
// but which runs on node (a victim whose deletion failed, a pod bound behind the
// plugin's back), into a pod held by its requests, as a pod of another scheduler is;
// p.mu is held.
func (p *Plugin) holdByRequest(id, node string) {
	r := p.pods[id]
	if r == nil {
		return
	}
	delete(p.pods, id)
	delete(p.refused, id)
	if r.gang != "" {
		p.leaveGang(r, false)
	}
	if p.metric != nil {
		p.metric.forget(r.namespace, r.name, r.uid)
	}
	if err := p.sched.Cancel(id, p.now()); err != nil && !errors.Is(err, finegrain.ErrState) {
		p.logger.Error(err, "cancel", "pod", klog.KRef(r.namespace, r.name))
	}
	p.foreign[id] = foreignPod{node: node, request: r.request, devices: r.devices}
	p.load[node] = p.load[node].Add(r.request)
	p.applyLoad(node)
	if !r.devices.IsZero() {
		p.applyDevices(node)
	}
}

// gang returns gang key's record, creating it; p.mu is held.
func (p *Plugin) gang(key string) *gangRecord {
	g := p.gangs[key]
	if g == nil {
		g = &gangRecord{}
		p.gangs[key] = g
	}
	return g
}
