package plugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclientset "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file is the MetricsAPI usage source: a sampler that reads metrics.k8s.io (what
// metrics-server serves) every Args.SampleInterval, keeps a bounded usage series for
// each pod the plugin placed, reports running pods' series to the library as they
// grow, and gathers each node's usage for the per-node policy (nodeusage.go).
//
// Locking: a sampling round holds s.round, and never p.mu, while it calls the API. The
// tracked pods and the nodes' windows are under s.mu, which may be taken while p.mu is
// held (endPod forgets a pod under p.mu) but never the other way round: a round reads
// what it needs of the plugin under p.mu first, then releases it.

// sample is one usage reading of a tracked pod, kept compact (24 bytes): when, in the
// plugin's time, and the pod's CPU (millicores) and memory (bytes) summed over its
// containers. The metrics API reports nothing else.
type sample struct {
	at       time.Duration
	cpu, mem int64
}

// podSeries is what the sampler keeps of a tracked pod.
type podSeries struct {
	id       string        // the pod's task ID
	uid      string        // its UID: a pod of the same name created later is another
	start    time.Duration // when it was bound; earlier readings are not its own
	last     time.Duration // the timestamp of the last sample taken
	samples  []sample      // at most maxSamples, At strictly increasing
	total    int           // samples taken since it was tracked, halvings aside
	reported int           // total at the last running report
	warned   bool          // a refused reading was logged
}

// add appends x, halving the series' resolution first when it holds max samples
// already, so that the whole run stays covered.
func (ps *podSeries) add(x sample, max int) {
	if len(ps.samples) >= max {
		ps.samples = halve(ps.samples, x.at)
	}
	ps.samples = append(ps.samples, x)
	ps.last = x.at
	ps.total++
}

// halve merges xs's samples in adjacent pairs, in place: the pair's CPU is its
// time-weighted mean (the CPU time it stands for is kept), its memory the larger of
// the two (the peak is kept: memory is not compressible, and a pod given less than
// its peak is killed). next is when the last sample's interval ends. An odd last
// sample stays as it is.
func halve(xs []sample, next time.Duration) []sample {
	n := len(xs)
	out := xs[:0]
	for i := 0; i < n; i += 2 {
		if i+1 == n {
			out = append(out, xs[i])
			break
		}
		a, b := xs[i], xs[i+1]
		end := next
		if i+2 < n {
			end = xs[i+2].at
		}
		da, db := float64(b.at-a.at), float64(end-b.at)
		cpu := max(a.cpu, b.cpu)
		if da > 0 && db > 0 {
			cpu = int64(math.Round((float64(a.cpu)*da + float64(b.cpu)*db) / (da + db)))
		}
		out = append(out, sample{at: a.at, cpu: cpu, mem: max(a.mem, b.mem)})
	}
	return out
}

// series is ps's samples as a library series (End zero: the caller sets it).
func (ps *podSeries) series() predict.Series {
	out := make([]predict.Sample, len(ps.samples))
	for i, x := range ps.samples {
		out[i].At = x.at
		out[i].Usage[cpuSlot] = x.cpu
		out[i].Usage[memSlot] = x.mem
	}
	return predict.Series{Samples: out}
}

// The scheme's slots of CPU and memory (newScheme puts them first).
const (
	cpuSlot = 0
	memSlot = 1
)

// sampler reads metrics.k8s.io. It is the MetricsAPI UsageSource when pods is set;
// it always gathers the nodes' usage for the per-node policy.
type sampler struct {
	p          *Plugin
	client     metricsclientset.Interface // nil: none could be had (clientErr says why)
	clientErr  error
	interval   time.Duration
	maxSamples int
	window     time.Duration // how often the nodes' usage is reported
	pods       bool          // sample the pods the plugin placed (the pods' usage source)
	ticks      clock.WithTicker

	once    sync.Once
	started atomic.Bool
	done    chan struct{} // closed when the sampling loop ends

	round      sync.Mutex // one round at a time; held while calling the API
	down       bool       // the last round could not list: logged once, until it can again
	lastReport time.Duration
	begun      bool // a round has run: lastReport is set

	mu      sync.Mutex
	tracked map[types.NamespacedName]*podSeries
	nodes   map[string]*nodeSeries // by node name

	dropped atomic.Int64 // readings refused: time going backwards, bad quantities
}

func newSampler(p *Plugin, client metricsclientset.Interface, clientErr error, ticks clock.WithTicker, pods bool) *sampler {
	return &sampler{
		p: p, client: client, clientErr: clientErr,
		interval:   p.args.SampleInterval.Duration,
		maxSamples: *p.args.MaxSamplesPerPod,
		window:     p.args.UsageWindow.Duration,
		pods:       pods,
		ticks:      ticks,
		done:       make(chan struct{}),
		tracked:    map[types.NamespacedName]*podSeries{},
		nodes:      map[string]*nodeSeries{},
	}
}

// metricsClient is the client of metrics.k8s.io: the one given (WithMetricsClient),
// else one built from the scheduler's kubeconfig. Building one calls no API.
func metricsClient(given metricsclientset.Interface, h fwk.Handle) (metricsclientset.Interface, error) {
	if given != nil {
		return given, nil
	}
	if h == nil {
		return nil, errors.New("no framework handle to take a kubeconfig from")
	}
	cfg := h.KubeConfig()
	if cfg == nil {
		return nil, errors.New("the scheduler has no kubeconfig")
	}
	return metricsclientset.NewForConfig(cfg)
}

// start starts the sampling loop, once, until ctx ends: from the first scheduling
// cycle (PreFilter), so that a replica that is not the leader, which builds its
// plugins and runs its informers but schedules nothing, makes no metrics calls.
func (s *sampler) start(ctx context.Context) {
	s.once.Do(func() {
		s.started.Store(true)
		if s.client == nil {
			close(s.done)
			s.p.logger.Error(s.clientErr, "no metrics.k8s.io client: the plugin learns nothing from metrics")
			return
		}
		s.p.logger.V(2).Info("sampling metrics.k8s.io", "interval", s.interval, "pods", s.pods)
		go s.run(ctx)
	})
}

// run samples every interval until ctx ends. The first round is one interval after
// the start: metrics-server's readings are no finer.
func (s *sampler) run(ctx context.Context) {
	defer close(s.done)
	t := s.ticks.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			s.sample(ctx)
		}
	}
}

// tick is one round if the sampler has started, and reports whether it had.
func (s *sampler) tick(ctx context.Context) bool {
	if !s.started.Load() || s.client == nil {
		return false
	}
	s.sample(ctx)
	return true
}

// sample is one round: one List of PodMetrics across all namespaces (when pods are
// tracked) and one of NodeMetrics (when the plugin holds nodes) — whatever the number
// of pods — then the running pods' reports and, every window, the nodes'.
func (s *sampler) sample(ctx context.Context) {
	s.round.Lock()
	defer s.round.Unlock()
	now := s.p.now()
	if !s.begun {
		s.begun, s.lastReport = true, now
	}
	var errs []error
	if s.pods && s.trackedCount() > 0 {
		list, err := s.client.MetricsV1beta1().PodMetricses(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("list PodMetrics: %w", err))
		} else {
			s.reportRunning(s.addPodSamples(list.Items), now)
			s.p.keysLearned() // running reports teach keys too
		}
	}
	if nodes := s.p.nodeCapacities(); len(nodes) > 0 {
		list, err := s.client.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("list NodeMetrics: %w", err))
		} else {
			s.addNodeSamples(list.Items, nodes, now)
		}
	}
	s.availability(ctx, errs)
	if now-s.lastReport >= s.window {
		s.lastReport = now
		s.reportNodes(now)
	}
}

// availability logs the metrics API's failures once, until it answers again (and
// says so then): a cluster without metrics-server fails every round.
func (s *sampler) availability(ctx context.Context, errs []error) {
	switch {
	case ctx.Err() != nil:
	case len(errs) > 0 && !s.down:
		s.down = true
		s.p.logger.Error(errors.Join(errs...), "metrics.k8s.io is not available (is metrics-server running?): the plugin keeps scheduling, learning nothing from metrics until it is; logged once")
	case len(errs) > 0:
		s.p.logger.V(4).Info("metrics.k8s.io still not available", "err", errors.Join(errs...))
	case s.down:
		s.down = false
		s.p.logger.Info("metrics.k8s.io is available again")
	}
}

// track starts sampling pod, placed by the plugin as task id and bound at start.
func (s *sampler) track(pod *v1.Pod, id string, start time.Duration) {
	if !s.pods {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tracked[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = &podSeries{id: id, uid: string(pod.UID), start: start}
}

// forget stops sampling the pod and drops its series.
func (s *sampler) forget(namespace, name, uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if ps := s.tracked[key]; ps != nil && ps.uid == uid {
		delete(s.tracked, key)
	}
}

func (s *sampler) trackedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tracked)
}

// Usage implements UsageSource: the pod's series as sampled (End zero).
func (s *sampler) Usage(_ context.Context, pod *v1.Pod, _ Units) (Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.tracked[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]
	if ps == nil || ps.uid != string(pod.UID) || len(ps.samples) == 0 {
		return Usage{}, nil
	}
	return Usage{Series: ps.series()}, nil
}

// running is a running report to make: task id's series so far.
type running struct {
	id     string
	series predict.Series
}

// addPodSamples takes a sample from each tracked pod's metrics whose timestamp
// advanced, and returns the reports of the pods whose samples have doubled since
// their last report (from 4 samples on).
func (s *sampler) addPodSamples(items []metricsv1beta1.PodMetrics) []running {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reports []running
	for i := range items {
		m := &items[i]
		ps := s.tracked[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}]
		if ps == nil || !s.podSample(ps, m) {
			continue
		}
		if ps.total >= 4 && ps.total >= 2*ps.reported {
			ps.reported = ps.total
			reports = append(reports, running{id: ps.id, series: ps.series()})
		}
	}
	return reports
}

// podSample adds pod metrics m to ps, and reports whether it did. A reading of no
// new timestamp is skipped; one from before the pod was bound is another pod's (of
// the same name) or a skewed clock's, and is skipped too; a reading without a
// timestamp, going back in time or holding a bad quantity is refused, counted and
// logged (once a pod).
func (s *sampler) podSample(ps *podSeries, m *metricsv1beta1.PodMetrics) bool {
	if m.Timestamp.IsZero() {
		s.refuse(&ps.warned, "pod", klog.KObj(m), errors.New("no timestamp"))
		return false
	}
	at := s.p.Units().At(m.Timestamp.Time)
	switch {
	case ps.total == 0 && at < ps.start:
		return false
	case ps.total > 0 && at == ps.last:
		return false
	case ps.total > 0 && at < ps.last:
		s.refuse(&ps.warned, "pod", klog.KObj(m), fmt.Errorf("timestamp %s is before the previous one's (%v after the plugin started, now %v)", m.Timestamp.UTC().Format(time.RFC3339Nano), ps.last, at))
		return false
	}
	var total resource.Tuple
	for _, c := range m.Containers {
		t, err := s.p.scheme.tuple(c.Usage, true)
		if err == nil {
			var ok bool
			if total, ok = total.CheckedAdd(t); !ok {
				err = errors.New("the containers' usage overflows")
			}
		}
		if err != nil {
			s.refuse(&ps.warned, "pod", klog.KObj(m), fmt.Errorf("container %q: %w", c.Name, err))
			return false
		}
	}
	ps.add(sample{at: at, cpu: total[cpuSlot], mem: total[memSlot]}, s.maxSamples)
	return true
}

// refuse counts a refused reading of object obj (a "pod" or a "node") and logs it
// unless *warned says it was logged before.
func (s *sampler) refuse(warned *bool, kind string, obj klog.ObjectRef, err error) {
	s.dropped.Add(1)
	if *warned {
		return
	}
	*warned = true
	s.p.logger.Error(err, "metrics reading refused; further refusals for it are counted, not logged", kind, obj)
}

// reportRunning reports running pods' series (Scheduler.ReportRunning), End now, so
// that their keys are predictable before any of their pods has finished.
func (s *sampler) reportRunning(reports []running, now time.Duration) {
	for _, r := range reports {
		sr := r.series
		if last := sr.Samples[len(sr.Samples)-1].At; now > last {
			sr.End = now
		}
		if err := s.p.sched.ReportRunning(r.id, now, predict.Observation{Series: sr}); err != nil {
			s.p.logger.V(3).Info("running report refused", "task", r.id, "err", err)
		}
	}
}
