// Package promusage is a plugin.UsageSource that learns what a pod used from
// Prometheus: when one of the FineGrain plugin's pods ends, two range queries over
// Prometheus' HTTP API (client_golang's api/prometheus/v1) read the pod's CPU and
// memory from cAdvisor's metrics as the kubelets expose them, from when the pod
// started to when it ended, and the answer becomes a predict.Series in the plugin's
// units, which the library divides into stages.
//
// The queries, for a pod POD of namespace NS, with STEP the query's step and W its
// rate window (the larger of the step and WithRateWindow's):
//
//	sum(rate(container_cpu_usage_seconds_total{namespace="NS",pod="POD",container!="",container!="POD"}[W]))
//	sum(max_over_time(container_memory_working_set_bytes{namespace="NS",pod="POD",container!="",container!="POD"}[STEP]))
//
// CPU in cores, the average rate over the window; memory in bytes, the most held over
// each step (memory is not compressible: a pod given less than its peak is killed).
// container!="" leaves out the pod's own cgroup and container!="POD" the pause
// container; WithLabels adds matchers, for a Prometheus that scrapes these names from
// more than one endpoint (the kubelet's /metrics/resource exposes both as well as its
// /metrics/cadvisor).
//
// Prometheus needs the kubelets' cAdvisor metrics scraped (kube-prometheus and the
// kube-prometheus-stack chart do); the source needs no Kubernetes permission of its
// own, only a route to Prometheus. cmd/kube-scheduler-prometheus is kube-scheduler
// with the plugin learning from this source.
package promusage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/predict"
)

// Defaults of the options.
const (
	// DefaultStep is the range queries' step: a scrape interval of the kubelets' usual.
	DefaultStep = 15 * time.Second
	// DefaultRateWindow is the CPU rate's shortest window: four scrapes 15s apart,
	// so that a missed scrape still leaves two samples to take a rate over.
	DefaultRateWindow = time.Minute
	// DefaultTimeout bounds each query.
	DefaultTimeout = 10 * time.Second
)

// MaxPoints is the most points a query asks of a series: Prometheus refuses a range
// query of more than 11,000 steps. A pod that ran longer than MaxPoints steps is
// queried at a wider step, in whole seconds.
const MaxPoints = 11000

// Source is a plugin.UsageSource reading cAdvisor's metrics from Prometheus. It is
// safe for concurrent use.
type Source struct {
	client  promv1.API
	step    time.Duration
	window  time.Duration
	timeout time.Duration
	labels  string // extra matchers, each `,name="value"`, sorted by name
	clock   clock.PassiveClock
}

var _ plugin.UsageSource = (*Source)(nil)

// Option configures a Source.
type Option func(*Source) error

// WithStep sets the range queries' step (default DefaultStep), at least a second and
// in whole milliseconds: each sample of the series the source learns covers a step.
// Set it to the kubelets' scrape interval; a pod that ran longer than MaxPoints steps
// is queried at a wider one.
func WithStep(d time.Duration) Option {
	return func(s *Source) error {
		if d < time.Second || d%time.Millisecond != 0 {
			return fmt.Errorf("step %v: want at least 1s, in whole milliseconds", d)
		}
		s.step = d
		return nil
	}
}

// WithRateWindow sets the shortest window of the CPU query's rate (default
// DefaultRateWindow), at least a second and in whole milliseconds: the window is the
// larger of this and the step. Make it at least four scrape intervals, so that a rate
// has two samples to go on when a scrape is missed.
func WithRateWindow(d time.Duration) Option {
	return func(s *Source) error {
		if d < time.Second || d%time.Millisecond != 0 {
			return fmt.Errorf("rate window %v: want at least 1s, in whole milliseconds", d)
		}
		s.window = d
		return nil
	}
}

// WithTimeout bounds each query (default DefaultTimeout): the context of the call is
// given that deadline, and Prometheus is asked (its timeout parameter) to give up by
// then too. The two queries run at once, so a call lasts about one timeout at most.
func WithTimeout(d time.Duration) Option {
	return func(s *Source) error {
		if d <= 0 {
			return fmt.Errorf("timeout %v: want a positive duration", d)
		}
		s.timeout = d
		return nil
	}
}

// WithLabels adds label matchers, name="value", to both queries' selectors: for
// instance job="kubelet" and metrics_path="/metrics/cadvisor" where the same metric
// names are scraped from more than one endpoint, which would otherwise be summed
// twice. Names are Prometheus' classic label names; namespace, pod and container are
// the source's own and refused.
func WithLabels(labels map[string]string) Option {
	return func(s *Source) error {
		names := make([]string, 0, len(labels))
		for name := range labels {
			switch {
			case !labelName.MatchString(name):
				return fmt.Errorf("label %q: not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", name)
			case name == "namespace" || name == "pod" || name == "container":
				return fmt.Errorf("label %q: the source matches it itself", name)
			}
			names = append(names, name)
		}
		slices.Sort(names)
		var b strings.Builder
		for _, name := range names {
			fmt.Fprintf(&b, ",%s=%s", name, quote(labels[name]))
		}
		s.labels = b.String()
		return nil
	}
}

// WithClock sets the clock that says when a pod that has no container terminated
// ended: now (default the wall clock).
func WithClock(c clock.PassiveClock) Option {
	return func(s *Source) error {
		if c == nil {
			return errors.New("nil clock")
		}
		s.clock = c
		return nil
	}
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// New is a Source that queries Prometheus through client.
func New(client promv1.API, opts ...Option) (*Source, error) {
	if client == nil {
		return nil, errors.New("promusage: nil Prometheus API")
	}
	s := &Source{client: client, step: DefaultStep, window: DefaultRateWindow, timeout: DefaultTimeout, clock: clock.RealClock{}}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("promusage: nil option")
		}
		if err := opt(s); err != nil {
			return nil, fmt.Errorf("promusage: %w", err)
		}
	}
	return s, nil
}

// NewFromAddress is a Source that queries the Prometheus at address, an http or
// https URL such as http://prometheus.monitoring:9090 (a path prefix is kept, for a
// Prometheus served under one), with client_golang's default transport.
func NewFromAddress(address string, opts ...Option) (*Source, error) {
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("promusage: Prometheus address: not a URL: %w", urlReason(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("promusage: Prometheus address %q: want an http or https URL with a host, such as http://prometheus.monitoring:9090", u.Redacted())
	}
	c, err := api.NewClient(api.Config{Address: address})
	if err != nil {
		return nil, fmt.Errorf("promusage: Prometheus client: %w", err)
	}
	return New(promv1.NewAPI(c), opts...)
}

// urlReason is why url.Parse failed, without the URL, which may hold a password.
func urlReason(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Usage implements plugin.UsageSource. A pod that never started (no
// Status.StartTime) teaches nothing; otherwise the two queries run at once over the
// steps from its start to its end (its containers' latest termination, else now),
// the last step rounded up so that it covers the end.
//
// A point at time t summarises the step before it — the memory query's peak over
// (t−step, t], the CPU's rate over a window ending at t — so it becomes the sample
// that starts one step earlier, at t−step; the point at the start itself, about the
// step before the pod ran, is left out. The series' End is left zero: the plugin sets
// it to when the pod ended.
//
// The two answers are joined by timestamp. At a timestamp one has and the other
// lacks (a missed scrape; the first step, where a rate has one sample still; the
// last, where a rate's window outlasts the memory's), the lacking resource holds the
// value it last had, or before its first value that first value: a sample of the
// series lasts until the next one, so a missing value is an unknown, not a zero, and
// dropping the timestamp instead would stretch the previous sample over it and lose
// the other resource's reading there, which for memory may be the peak.
//
// Nothing is learned (the zero Usage, no error) when both answers are empty, or one
// is — a pod too short for the CPU rate's two samples, say; that is logged at
// verbosity 2. An error — the query failed, timed out or was answered with warnings,
// or a value is NaN, infinite, negative or too large — teaches nothing either, and
// the plugin logs it: a warning means the answer may be incomplete (a failed remote
// read, a partial response), and an incomplete series would teach too little.
func (s *Source) Usage(ctx context.Context, pod *corev1.Pod, u plugin.Units) (plugin.Usage, error) {
	if pod.Status.StartTime == nil {
		return plugin.Usage{}, nil
	}
	start := pod.Status.StartTime.Time
	end := endOf(pod, s.clock.Now())
	if !end.After(start) {
		return plugin.Usage{}, nil
	}
	step := s.stepFor(end.Sub(start))
	steps := (end.Sub(start) + step - 1) / step
	r := promv1.Range{Start: start, End: start.Add(steps * step), Step: step}
	queries := [2]string{
		cpuQuery(pod.Namespace, pod.Name, s.labels, max(step, s.window)),
		memoryQuery(pod.Namespace, pod.Name, s.labels, step),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		points  [2][]point
		mu      sync.Mutex
		first   error // the first query to fail: the other is then cancelled
		convert = [2]func(float64) (resource.Quantity, error){cores, bytes}
	)
	for i, q := range queries {
		wg.Go(func() {
			pts, err := s.query(ctx, q, r, convert[i])
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
			}
			points[i] = pts
		})
	}
	wg.Wait()
	if first != nil {
		return plugin.Usage{}, first
	}
	cpu, mem := after(points[0], start), after(points[1], start)
	if len(cpu) == 0 || len(mem) == 0 {
		if len(cpu) > 0 || len(mem) > 0 {
			empty := queries[0]
			if len(mem) == 0 {
				empty = queries[1]
			}
			klog.FromContext(ctx).V(2).Info("Nothing learned from Prometheus: one of the pod's queries has no points", "pod", klog.KObj(pod), "query", empty)
		}
		return plugin.Usage{}, nil
	}
	var sr predict.Series
	for _, j := range join(cpu, mem) {
		usage, err := u.Tuple(corev1.ResourceList{corev1.ResourceCPU: j.cpu, corev1.ResourceMemory: j.mem})
		if err != nil {
			return plugin.Usage{}, fmt.Errorf("usage at %s from Prometheus: %w", j.t.UTC().Format(time.RFC3339), err)
		}
		sr.Samples = append(sr.Samples, predict.Sample{At: u.At(j.t.Add(-step)), Usage: usage})
	}
	return plugin.Usage{Series: sr}, nil
}

// stepFor is the step for a pod that ran d: the configured one, or the least whole
// number of seconds that keeps d within MaxPoints steps.
func (s *Source) stepFor(d time.Duration) time.Duration {
	if d <= MaxPoints*s.step {
		return s.step
	}
	perPoint := (d + MaxPoints - 1) / MaxPoints
	return (perPoint + time.Second - 1) / time.Second * time.Second
}

// endOf is when pod ended: its containers' latest termination, else now.
func endOf(pod *corev1.Pod, now time.Time) time.Time {
	var latest time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(latest) {
			latest = t.FinishedAt.Time
		}
	}
	if latest.IsZero() {
		return now
	}
	return latest
}

// cpuQuery is the PromQL of a pod's CPU, in cores, averaged over window.
func cpuQuery(namespace, pod, labels string, window time.Duration) string {
	return fmt.Sprintf("sum(rate(container_cpu_usage_seconds_total%s[%s]))", selector(namespace, pod, labels), model.Duration(window))
}

// memoryQuery is the PromQL of a pod's memory, in bytes, the most held over each step.
func memoryQuery(namespace, pod, labels string, step time.Duration) string {
	return fmt.Sprintf("sum(max_over_time(container_memory_working_set_bytes%s[%s]))", selector(namespace, pod, labels), model.Duration(step))
}

// selector matches a pod's containers (not the pod's own cgroup, nor its pause
// container), and labels.
func selector(namespace, pod, labels string) string {
	return fmt.Sprintf(`{namespace=%s,pod=%s,container!="",container!="POD"%s}`, quote(namespace), quote(pod), labels)
}

// quote is s as a PromQL string literal: double-quoted, with Go's escapes (a quote or a
// backslash escaped by a backslash), as Prometheus writes label matchers itself.
func quote(s string) string { return strconv.Quote(s) }

// point is a value of an answer, converted.
type point struct {
	t time.Time
	q resource.Quantity
}

// query runs one range query, and converts its points with convert; an empty answer
// is no points.
func (s *Source) query(ctx context.Context, q string, r promv1.Range, convert func(float64) (resource.Quantity, error)) ([]point, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	val, warnings, err := s.client.QueryRange(ctx, q, r, promv1.WithTimeout(s.timeout))
	what := fmt.Sprintf("Prometheus query %s from %s to %s step %s", q,
		r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), model.Duration(r.Step))
	switch {
	case err != nil && len(warnings) > 0:
		return nil, fmt.Errorf("%s: %w (warnings: %s)", what, err, strings.Join(warnings, "; "))
	case err != nil:
		return nil, fmt.Errorf("%s: %w", what, err)
	case len(warnings) > 0:
		return nil, fmt.Errorf("%s: answered with warnings, so perhaps incompletely: %s", what, strings.Join(warnings, "; "))
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("%s: answered a %v, want a matrix", what, typeOf(val))
	}
	switch {
	case len(m) == 0:
		return nil, nil
	case len(m) > 1:
		return nil, fmt.Errorf("%s: answered %d series, want one (the sum)", what, len(m))
	case len(m[0].Histograms) > 0:
		return nil, fmt.Errorf("%s: answered native histograms, want floats", what)
	}
	pts := make([]point, 0, len(m[0].Values))
	for i, sp := range m[0].Values {
		t := sp.Timestamp.Time()
		if i > 0 && !t.After(pts[i-1].t) {
			return nil, fmt.Errorf("%s: point %d at %s is not after the one before", what, i, t.UTC().Format(time.RFC3339Nano))
		}
		qty, err := convert(float64(sp.Value))
		if err != nil {
			return nil, fmt.Errorf("%s: point %d at %s: %w", what, i, t.UTC().Format(time.RFC3339Nano), err)
		}
		pts = append(pts, point{t, qty})
	}
	return pts, nil
}

func typeOf(v model.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().String()
}

// cores is a CPU rate in cores as a quantity, rounded to the millicore.
func cores(v float64) (resource.Quantity, error) {
	if err := usable(v, "cores"); err != nil {
		return resource.Quantity{}, err
	}
	m := math.Round(v * 1000)
	if m >= math.MaxInt64 {
		return resource.Quantity{}, fmt.Errorf("%g cores: too large", v)
	}
	return *resource.NewMilliQuantity(int64(m), resource.DecimalSI), nil
}

// bytes is a memory size in bytes as a quantity, rounded to the byte.
func bytes(v float64) (resource.Quantity, error) {
	if err := usable(v, "bytes"); err != nil {
		return resource.Quantity{}, err
	}
	b := math.Round(v)
	if b >= math.MaxInt64 {
		return resource.Quantity{}, fmt.Errorf("%g bytes: too large", v)
	}
	return *resource.NewQuantity(int64(b), resource.BinarySI), nil
}

// usable refuses what is not a usage: NaN, an infinity, a negative value.
func usable(v float64, unit string) error {
	switch {
	case math.IsNaN(v):
		return fmt.Errorf("NaN %s: not a usage, refused", unit)
	case math.IsInf(v, 0):
		return fmt.Errorf("%g %s: not a usage, refused", v, unit)
	case v < 0:
		return fmt.Errorf("%g %s: negative, refused", v, unit)
	}
	return nil
}

// after is pts from the first after start.
func after(pts []point, start time.Time) []point {
	i := 0
	for i < len(pts) && !pts[i].t.After(start) {
		i++
	}
	return pts[i:]
}

// joined is the usage at one timestamp of either answer.
type joined struct {
	t        time.Time
	cpu, mem resource.Quantity
}

// join merges two non-empty answers, in time order, by timestamp: at a timestamp one
// lacks, its resource holds its last value, or before its first, its first.
func join(cpu, mem []point) []joined {
	out := make([]joined, 0, max(len(cpu), len(mem)))
	c, m := cpu[0].q, mem[0].q
	for i, j := 0, 0; i < len(cpu) || j < len(mem); {
		var t time.Time
		switch {
		case j == len(mem) || (i < len(cpu) && cpu[i].t.Before(mem[j].t)):
			t = cpu[i].t
		default:
			t = mem[j].t
		}
		if i < len(cpu) && cpu[i].t.Equal(t) {
			c = cpu[i].q
			i++
		}
		if j < len(mem) && mem[j].t.Equal(t) {
			m = mem[j].q
			j++
		}
		out = append(out, joined{t, c, m})
	}
	return out
}
