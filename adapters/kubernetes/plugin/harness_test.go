package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/predict"
)

// The tests run the real kube-scheduler: its scheduling queue, framework runtime,
// cache and informers, over a fake clientset (TestRealAPIServer over a real API
// server, when it finds one to start). Pods are created through the clientset,
// scheduled by the profile of deploy/scheduler-config.yaml and bound by the default
// binder; the binding is applied to the stored pod so that the informers see it.

const (
	configFile    = "../deploy/scheduler-config.yaml"
	schedulerName = "finegrain-scheduler"
	ns            = "default"
)

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// cluster is a running kube-scheduler with the FineGrain plugin over a fake clientset.
type cluster struct {
	t          testing.TB
	ctx        context.Context
	client     kubernetes.Interface
	metrics    *metricsfake.Clientset // metrics.k8s.io, as the plugin reads it
	logs       *logRecord             // what the scheduler and the plugin logged, at level 0
	plugin     *plugin.Plugin
	bound      atomic.Int64
	clock      *manualClock
	uids       sync.Map                   // pod name → UID, as created
	nodes      func() int                 // how many nodes the scheduler's informer holds
	cached     func(node string) bool     // the scheduler's cache holds node, with its allocatable resources
	cachedNode func(node string) *v1.Node // node as the scheduler's cache holds it (nil: not)
	close      func()                     // stops the scheduler (also at the test's end)
}

type setup struct {
	args     map[string]any               // replaces the configuration file's FineGrain args
	extra    []extraPlugin                // test plugins enabled in the profile
	noPlugin bool                         // the default profile, without FineGrain (benchmark baseline)
	client   func(*fake.Clientset)        // adds reactors to the fake clientset
	metrics  func(*metricsfake.Clientset) // adds reactors to the fake metrics clientset
	real     kubernetes.Interface         // a real API server's client instead of the fake clientset
	ticking  bool                         // the clock's tickers fire as it steps (manualClock)
	config   string                       // the scheduler configuration file; default configFile
}

type extraPlugin struct {
	name    string
	factory frameworkruntime.PluginFactory
}

// loadProfile reads the shipped scheduler configuration's profile.
func loadProfile(t testing.TB) config.KubeSchedulerProfile { return loadProfileFrom(t, configFile) }

// loadProfileFrom reads the profile of scheduler configuration file.
func loadProfileFrom(t testing.TB, file string) config.KubeSchedulerProfile {
	cfg, err := options.LoadConfigFromFile(klog.Background(), file)
	require.NoError(t, err)
	require.Len(t, cfg.Profiles, 1)
	return cfg.Profiles[0]
}

func startCluster(t testing.TB, s setup) *cluster {
	logs := &logRecord{}
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.New(&logSink{rec: logs})))
	defer func() {
		if t.Failed() {
			cancel()
		}
	}()
	c := &cluster{t: t, ctx: ctx, client: s.real, clock: newManualClock(), metrics: metricsfake.NewSimpleClientset(), logs: logs}
	c.clock.ticking = s.ticking
	if s.metrics != nil {
		s.metrics(c.metrics)
	}
	if s.real == nil {
		fc := fake.NewClientset()
		fc.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
			if action.GetSubresource() != "binding" {
				return false, nil, nil
			}
			b := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
			obj, err := fc.Tracker().Get(podsGVR, b.Namespace, b.Name)
			if err != nil {
				return true, nil, err
			}
			pod := obj.(*v1.Pod).DeepCopy()
			pod.Spec.NodeName = b.Target.Name
			// As the API server's pods/binding does: the binding's annotations and
			// labels are merged into the pod's.
			for k, v := range b.Annotations {
				if pod.Annotations == nil {
					pod.Annotations = map[string]string{}
				}
				pod.Annotations[k] = v
			}
			for k, v := range b.Labels {
				if pod.Labels == nil {
					pod.Labels = map[string]string{}
				}
				pod.Labels[k] = v
			}
			if err := fc.Tracker().Update(podsGVR, pod, b.Namespace); err != nil {
				return true, nil, err
			}
			c.bound.Add(1)
			return true, b, nil
		})
		if s.client != nil {
			s.client(fc)
		}
		c.client = fc
	}
	if s.config == "" {
		s.config = configFile
	}
	prof := loadProfileFrom(t, s.config)
	registry := frameworkruntime.Registry{}
	if s.noPlugin {
		prof = defaultProfile(t)
	} else {
		if s.args != nil {
			raw, err := json.Marshal(s.args)
			require.NoError(t, err)
			for i := range prof.PluginConfig {
				if prof.PluginConfig[i].Name == plugin.Name {
					prof.PluginConfig[i].Args = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
				}
			}
		}
		var mu sync.Mutex
		factory := plugin.NewFactory(plugin.WithClock(c.clock), plugin.WithMetricsClient(c.metrics))
		registry[plugin.Name] = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := factory(ctx, obj, h)
			if err == nil {
				mu.Lock()
				switch v := p.(type) {
				case *plugin.Plugin:
					c.plugin = v
				case *plugin.Sorting: // with args.queues
					c.plugin = v.Plugin
				}
				mu.Unlock()
			}
			return p, err
		}
	}
	for _, e := range s.extra {
		// Before FineGrain, which must be the last Filter plugin (see PostFilter).
		registry[e.name] = e.factory
		prof.Plugins.MultiPoint.Enabled = append([]config.Plugin{{Name: e.name}}, prof.Plugins.MultiPoint.Enabled...)
	}

	// The binary's informers: its pod informer watches only pods that have not ended,
	// so that a pod ending reaches the plugin as a deletion (podGone).
	informerFactory := scheduler.NewInformerFactory(c.client, 0, nil)
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: c.client.EventsV1()})
	sched, err := scheduler.New(ctx, c.client, informerFactory, nil,
		profile.NewRecorderFactory(broadcaster),
		scheduler.WithProfiles(prof),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodInitialBackoffSeconds(1),
		scheduler.WithPodMaxBackoffSeconds(1),
	)
	require.NoError(t, err)
	if !s.noPlugin {
		require.NotNil(t, c.plugin, "the profile built the FineGrain plugin")
	}
	nodeLister := informerFactory.Core().V1().Nodes().Lister()
	c.cached = func(node string) bool {
		ni, ok := sched.Cache.Dump().Nodes[node]
		return ok && ni.Node() != nil && !ni.Node().Status.Allocatable.Cpu().IsZero()
	}
	c.cachedNode = func(node string) *v1.Node {
		if ni, ok := sched.Cache.Dump().Nodes[node]; ok {
			return ni.Node()
		}
		return nil
	}
	c.nodes = func() int {
		l, _ := nodeLister.List(labels.Everything())
		return len(l)
	}
	broadcaster.StartRecordingToSink(ctx.Done())
	informerFactory.Start(ctx.Done())
	informerFactory.WaitForCacheSync(ctx.Done())
	go sched.Run(ctx)
	var once sync.Once
	c.close = func() {
		once.Do(func() {
			// The informers stop once the context is done; Shutdown waits for them.
			cancel()
			broadcaster.Shutdown()
			informerFactory.Shutdown()
		})
	}
	t.Cleanup(c.close)
	return c
}

// defaultProfile is the scheduler's default profile under the test scheduler name.
func defaultProfile(t testing.TB) config.KubeSchedulerProfile {
	v := configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: ptr.To(schedulerName)}}}
	scheme.Scheme.Default(&v)
	var cfg config.KubeSchedulerConfiguration
	require.NoError(t, scheme.Scheme.Convert(&v, &cfg, nil))
	return cfg.Profiles[0]
}

// node creates a node of cpu cores and mem of memory.
func (c *cluster) node(name, cpu, mem string) { c.nodeWith(name, cpu, mem, "110", nil) }

// nodeWith creates a node of cpu cores, mem of memory, room for pods pods and extra.
func (c *cluster) nodeWith(name, cpu, mem, pods string, extra v1.ResourceList) {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)},
		Status: v1.NodeStatus{
			Capacity:    v1.ResourceList{v1.ResourceCPU: apiresource.MustParse(cpu), v1.ResourceMemory: apiresource.MustParse(mem), v1.ResourcePods: apiresource.MustParse(pods)},
			Allocatable: v1.ResourceList{v1.ResourceCPU: apiresource.MustParse(cpu), v1.ResourceMemory: apiresource.MustParse(mem), v1.ResourcePods: apiresource.MustParse(pods)},
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	for name, q := range extra {
		n.Status.Capacity[name] = q
		n.Status.Allocatable[name] = q
	}
	created, err := c.client.CoreV1().Nodes().Create(c.ctx, n, metav1.CreateOptions{})
	require.NoError(c.t, err)
	// An API server drops the status of a created object; it is set apart.
	created.Status = n.Status
	_, err = c.client.CoreV1().Nodes().UpdateStatus(c.ctx, created, metav1.UpdateOptions{})
	require.NoError(c.t, err)
	// A pod created before the scheduler's cache holds the node would be tried
	// against no node ("no nodes available to schedule pods"), and its PodScheduled
	// condition would say so until its next attempt.
	c.waitFor("node "+name+" in the scheduler's cache", func() bool { return c.cached(name) })
}

// pod is a pod to create: requests of cpu and mem, optional stages and labels.
type pod struct {
	name, cpu, mem string
	stages         string
	labels         map[string]string
	priority       int32
	scheduler      string // default: finegrain-scheduler
	node           string // already bound (a pod of another scheduler)
	extra          v1.ResourceList
	never          bool              // preemptionPolicy: Never
	namespace      string            // default: default (ns)
	annotations    map[string]string // beside the stages
	limits         v1.ResourceList   // the container's limits
}

func (c *cluster) create(p pod) {
	if p.namespace == "" {
		p.namespace = ns
	}
	obj := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.namespace, UID: types.UID("uid-" + p.name), Labels: p.labels, Annotations: map[string]string{}},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			NodeName:      p.node,
			Priority:      &p.priority,
			Containers: []v1.Container{{Name: "main", Image: "busybox", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{},
			}}},
		},
	}
	// An empty amount requests none of it (a BestEffort pod requests nothing).
	if p.cpu != "" {
		obj.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = apiresource.MustParse(p.cpu)
	}
	if p.mem != "" {
		obj.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = apiresource.MustParse(p.mem)
	}
	if p.scheduler != "" {
		obj.Spec.SchedulerName = p.scheduler
	}
	for name, q := range p.extra {
		// Extended resources are asked in limits too, equal: the API server refuses
		// them in requests alone.
		res := &obj.Spec.Containers[0].Resources
		res.Requests[name] = q
		if res.Limits == nil {
			res.Limits = v1.ResourceList{}
		}
		res.Limits[name] = q
	}
	for name, q := range p.limits {
		res := &obj.Spec.Containers[0].Resources
		if res.Limits == nil {
			res.Limits = v1.ResourceList{}
		}
		res.Limits[name] = q
	}
	if p.never {
		never := v1.PreemptNever
		obj.Spec.PreemptionPolicy = &never
	}
	if p.stages != "" {
		obj.Annotations[plugin.StagesAnnotation] = p.stages
	}
	for k, v := range p.annotations {
		obj.Annotations[k] = v
	}
	created, err := c.client.CoreV1().Pods(p.namespace).Create(c.ctx, obj, metav1.CreateOptions{})
	require.NoError(c.t, err)
	c.uids.Store(p.name, string(created.UID))
}

func (c *cluster) get(name string) *v1.Pod {
	p, err := c.client.CoreV1().Pods(ns).Get(c.ctx, name, metav1.GetOptions{})
	require.NoError(c.t, err)
	return p
}

// waitFor polls cond until it holds, failing the test after a generous deadline: the
// scheduler works asynchronously, and the deadline only bounds a test that went wrong.
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitBound waits until pod name is bound and returns its node.
func (c *cluster) waitBound(name string) string {
	c.t.Helper()
	var node string
	c.waitFor(name+" to be bound", func() bool {
		node = c.get(name).Spec.NodeName
		if node == "" || c.plugin == nil {
			return node != ""
		}
		// Bound in the API, and committed in finegrain: PostBind runs after the
		// binding, and a test that went on at once (ending the pod, preempting it)
		// would race it. A pod finegrain does not hold is bound as it is.
		st, ok := c.plugin.Scheduler().TaskState(c.uid(name))
		return !ok || st != finegrain.Reserved
	})
	return node
}

// waitUnschedulable waits until the scheduler has tried pod name and found it
// unschedulable (its PodScheduled condition), and returns the condition's message.
func (c *cluster) waitUnschedulable(name string) string {
	c.t.Helper()
	var msg string
	c.waitFor(name+" to be found unschedulable", func() bool {
		for _, cond := range c.get(name).Status.Conditions {
			if cond.Type == v1.PodScheduled && cond.Status == v1.ConditionFalse {
				msg = cond.Message
				return true
			}
		}
		return false
	})
	return msg
}

// finish marks pod name succeeded, with observed stages when given.
func (c *cluster) finish(name, observed string) {
	p := c.get(name).DeepCopy()
	if observed != "" {
		// A pod read back may have no annotations map (an empty one does not survive
		// every copy the API makes).
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[plugin.ObservedStagesAnnotation] = observed
		var err error
		p, err = c.client.CoreV1().Pods(ns).Update(c.ctx, p, metav1.UpdateOptions{})
		require.NoError(c.t, err)
	}
	p.Status.Phase = v1.PodSucceeded
	_, err := c.client.CoreV1().Pods(ns).UpdateStatus(c.ctx, p, metav1.UpdateOptions{})
	require.NoError(c.t, err)
}

// uid is pod name's UID: the plugin's task ID for it.
// uid is the UID of pod name as created (a real API server gives its own): the pod
// may be gone since.
func (c *cluster) uid(name string) string {
	if u, ok := c.uids.Load(name); ok {
		return u.(string)
	}
	return string(c.get(name).UID)
}

func (c *cluster) delete(name string) {
	require.NoError(c.t, c.client.CoreV1().Pods(ns).Delete(c.ctx, name, metav1.DeleteOptions{}))
}

// manualClock is a clock the test moves: the plugin's time. Its timers never fire,
// and its tickers fire only when it ticks (setup.ticking), as step passes their
// period; otherwise they never do, so that the plugin's metrics sampler samples only
// when a test says so (Plugin.SampleNow): time passes when the test steps it, and
// nothing happens in the background meanwhile.
type manualClock struct {
	mu      sync.Mutex
	now     time.Time
	ticking bool
	tickers []*manualTicker
}

func newManualClock() *manualClock { return &manualClock{now: time.Unix(1_700_000_000, 0)} }

func (m *manualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualClock) Since(t time.Time) time.Duration { return m.Now().Sub(t) }

// step moves the clock by d; a ticking clock's tickers whose period has passed
// fire, once each (a ticker's channel holds one tick, as time.Ticker's).
func (m *manualClock) step(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	for _, t := range m.tickers {
		if t.stopped || m.now.Before(t.next) {
			continue
		}
		for !m.now.Before(t.next) {
			t.next = t.next.Add(t.period)
		}
		select {
		case t.ch <- m.now:
		default:
		}
	}
}

func (m *manualClock) After(time.Duration) <-chan time.Time { return nil }

func (m *manualClock) Tick(time.Duration) <-chan time.Time { return nil }

func (m *manualClock) Sleep(time.Duration) {}

func (m *manualClock) NewTimer(time.Duration) clock.Timer { return stoppedTimer{} }

func (m *manualClock) NewTicker(d time.Duration) clock.Ticker {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ticking {
		return stoppedTicker{}
	}
	t := &manualTicker{clock: m, period: d, next: m.now.Add(d), ch: make(chan time.Time, 1)}
	m.tickers = append(m.tickers, t)
	return t
}

// manualTicker is a ticking manualClock's ticker.
type manualTicker struct {
	clock   *manualClock
	period  time.Duration
	next    time.Time
	ch      chan time.Time
	stopped bool // under clock.mu
}

func (t *manualTicker) C() <-chan time.Time { return t.ch }

func (t *manualTicker) Stop() {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	t.stopped = true
}

// stoppedTimer and stoppedTicker never fire.
type (
	stoppedTimer  struct{}
	stoppedTicker struct{}
)

func (stoppedTimer) C() <-chan time.Time      { return nil }
func (stoppedTimer) Stop() bool               { return true }
func (stoppedTimer) Reset(time.Duration) bool { return true }
func (stoppedTicker) C() <-chan time.Time     { return nil }
func (stoppedTicker) Stop()                   {}

var (
	podMetricsGVR  = metricsv1beta1.SchemeGroupVersion.WithResource("pods")
	nodeMetricsGVR = metricsv1beta1.SchemeGroupVersion.WithResource("nodes")
)

// podUsage sets pod name's metrics, as metrics-server serves them, read at the
// clock's time: one container using cpu and mem.
func (c *cluster) podUsage(name, cpu, mem string) { c.podUsageAt(name, c.clock.Now(), cpu, mem) }

// podUsageAt sets pod name's metrics, read at at.
func (c *cluster) podUsageAt(name string, at time.Time, cpu, mem string) {
	c.t.Helper()
	m := &metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Timestamp:  metav1.NewTime(at),
		Window:     metav1.Duration{Duration: 15 * time.Second},
		Containers: []metricsv1beta1.ContainerMetrics{{Name: "main", Usage: v1.ResourceList{
			v1.ResourceCPU: apiresource.MustParse(cpu), v1.ResourceMemory: apiresource.MustParse(mem),
		}}},
	}
	c.putMetrics(podMetricsGVR, m, ns)
}

// nodeUsage sets node name's metrics, read at the clock's time.
func (c *cluster) nodeUsage(name, cpu, mem string) {
	c.t.Helper()
	m := &metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Timestamp:  metav1.NewTime(c.clock.Now()),
		Window:     metav1.Duration{Duration: 15 * time.Second},
		Usage:      v1.ResourceList{v1.ResourceCPU: apiresource.MustParse(cpu), v1.ResourceMemory: apiresource.MustParse(mem)},
	}
	c.putMetrics(nodeMetricsGVR, m, "")
}

// putMetrics creates or replaces a metrics object in the fake metrics clientset's
// tracker, naming its resource (the tracker would guess "podmetricses" from the
// kind, which the client does not list).
func (c *cluster) putMetrics(gvr schema.GroupVersionResource, obj runtime.Object, namespace string) {
	c.t.Helper()
	err := c.metrics.Tracker().Update(gvr, obj, namespace)
	if apierrors.IsNotFound(err) {
		err = c.metrics.Tracker().Create(gvr, obj, namespace)
	}
	require.NoError(c.t, err)
}

// metricsLists counts the List calls made to metrics.k8s.io.
func (c *cluster) metricsLists() int {
	n := 0
	for _, a := range c.metrics.Actions() {
		if a.GetVerb() == "list" {
			n++
		}
	}
	return n
}

// sample runs one round of the plugin's metrics sampler, which must have started.
func (c *cluster) sample() {
	c.t.Helper()
	require.True(c.t, c.plugin.SampleNow(), "the sampler has started")
}

// running waits until finegrain runs pod name and the metrics sampler follows it
// (PostBind commits the pod, then hands it to the sampler).
func (c *cluster) running(name string) {
	c.t.Helper()
	c.waitFor(name+" to run in finegrain, followed by the sampler", func() bool {
		st, _ := c.plugin.Scheduler().TaskState("uid-" + name)
		_, followed := c.plugin.TrackedSeries(ns, name)
		return st == finegrain.Running && followed
	})
}

// logRecord keeps what was logged at level 0 (errors and plain Info), for the tests
// that check what the plugin says.
type logRecord struct {
	mu      sync.Mutex
	entries []logEntry
}

type logEntry struct {
	name, msg string
	err       error
	kv        []any
}

// errors returns the errors logged by loggers named name (a prefix of theirs)
// whose message contains msg.
func (r *logRecord) errors(name, msg string) []logEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []logEntry
	for _, e := range r.entries {
		if e.err != nil && strings.HasPrefix(e.name, name) && strings.Contains(e.msg, msg) {
			out = append(out, e)
		}
	}
	return out
}

// infos returns the level-0 messages, not errors, like errors does.
func (r *logRecord) infos(name, msg string) []logEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []logEntry
	for _, e := range r.entries {
		if e.err == nil && strings.HasPrefix(e.name, name) && strings.Contains(e.msg, msg) {
			out = append(out, e)
		}
	}
	return out
}

// logSink is a logr sink recording level-0 messages into rec.
type logSink struct {
	rec  *logRecord
	name string
	kv   []any
}

func (s *logSink) Init(logr.RuntimeInfo)  {}
func (s *logSink) Enabled(level int) bool { return level == 0 }

func (s *logSink) Info(level int, msg string, kv ...any) {
	if level == 0 {
		s.add(msg, nil, kv)
	}
}

func (s *logSink) Error(err error, msg string, kv ...any) {
	if err == nil {
		err = errors.New("(nil error)")
	}
	s.add(msg, err, kv)
}

func (s *logSink) add(msg string, err error, kv []any) {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.rec.entries = append(s.rec.entries, logEntry{name: s.name, msg: msg, err: err, kv: append(slices.Clip(s.kv), kv...)})
}

func (s *logSink) WithValues(kv ...any) logr.LogSink {
	return &logSink{rec: s.rec, name: s.name, kv: append(slices.Clip(s.kv), kv...)}
}

func (s *logSink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	return &logSink{rec: s.rec, name: name, kv: s.kv}
}

// waitState waits until finegrain holds pod name in state st.
func (c *cluster) waitState(name string, st finegrain.TaskState) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%s to be %v in finegrain", name, st), func() bool {
		got, _ := c.plugin.Scheduler().TaskState(c.uid(name))
		return got == st
	})
}

// etlKey is the similarity key of the pods labelled etl below, and etlLabels their
// labels.
var (
	etlKey    = predict.Key{Logic: ns + "/finegrain.io/logic=etl", InputSize: 10 << 30}
	etlLabels = map[string]string{"finegrain.io/logic": "etl", "finegrain.io/input-size": "10Gi"}
)

// learnETL has a pod of the etl key run and finish having used 1 GiB of the 6 GiB it
// asked, so that the plugin learns the key.
func learnETL(c *cluster) {
	c.t.Helper()
	c.create(pod{name: "first", cpu: "1", mem: "6Gi", labels: etlLabels})
	c.waitBound("first")
	c.clock.step(90 * time.Second)
	c.finish("first", `[{"duration":"60s","cpu":"500m","memory":"1Gi"}]`)
	c.waitState("first", finegrain.Finished)
}

// learnedPlacesNext checks that c, whose node n1 of 8 GiB ran a pod of the key of
// labels that used about 1 GiB, places the key's next pod, asking 6 GiB, beside a pod
// holding 6 GiB there, and not a pod of another key asking the same.
func (c *cluster) learnedPlacesNext(labels map[string]string) {
	c.t.Helper()
	c.create(pod{name: "blocker", cpu: "1", mem: "6Gi"})
	c.waitBound("blocker")
	c.create(pod{name: "other", cpu: "1", mem: "6Gi", labels: map[string]string{"finegrain.io/logic": "report"}})
	c.waitUnschedulable("other")
	c.create(pod{name: "second", cpu: "1", mem: "6Gi", labels: labels})
	assert.Equal(c.t, "n1", c.waitBound("second"), "second is predicted from what first used")
	assert.Empty(c.t, c.get("other").Spec.NodeName, "a pod of another key is still placed by its request")
}

// requestPlacesNext checks that c, whose node n1 of 8 GiB learned nothing of the key
// of labels, places the key's next pod by its 6 GiB request: not beside a pod holding
// 6 GiB there, the refusal naming memory.
func (c *cluster) requestPlacesNext(labels map[string]string) {
	c.t.Helper()
	c.create(pod{name: "blocker", cpu: "1", mem: "6Gi"})
	c.waitBound("blocker")
	c.create(pod{name: "second", cpu: "1", mem: "6Gi", labels: labels})
	assert.Contains(c.t, c.waitUnschedulable("second"), "memory")
	assert.Empty(c.t, c.get("second").Spec.NodeName)
}
