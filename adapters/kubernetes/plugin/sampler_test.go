package plugin

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// The sampler on its own, without a kube-scheduler: its series' halving, its loop, and
// what it costs. The scheduling-loop tests are in metrics_test.go.

var epoch = time.Unix(1_700_000_000, 0)

// newSampled is a plugin with the default arguments (usageSource MetricsAPI) reading
// m, on clock clk, with no framework handle.
func newSampled(t testing.TB, ctx context.Context, m *metricsfake.Clientset, clk clock.PassiveClock) *Plugin {
	t.Helper()
	args, err := decodeArgs(nil)
	require.NoError(t, err)
	p, err := newPlugin(ctx, args, nil, options{metrics: m, clock: clk})
	require.NoError(t, err)
	require.NotNil(t, p.metric)
	return p
}

func TestHalve(t *testing.T) {
	s := func(at time.Duration, cpu, mem int64) sample { return sample{at: at * time.Second, cpu: cpu, mem: mem} }
	for _, tc := range []struct {
		name string
		in   []sample
		next time.Duration
		want []sample
	}{
		{"pairs", []sample{s(0, 100, 1), s(10, 300, 5), s(20, 200, 2), s(50, 400, 1)}, 60 * time.Second,
			// (100×10 + 300×10)/20, then (200×30 + 400×10)/40; memory at its peak
			[]sample{s(0, 200, 5), s(20, 250, 2)}},
		{"an odd last sample stays", []sample{s(0, 100, 1), s(30, 400, 3), s(40, 50, 9)}, 45 * time.Second,
			[]sample{s(0, 175, 3), s(40, 50, 9)}},
		{"one sample", []sample{s(5, 7, 7)}, 10 * time.Second, []sample{s(5, 7, 7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, halve(append([]sample(nil), tc.in...), tc.next))
		})
	}
}

// The sampling loop starts once, ticks on the plugin's clock, and ends with the
// context the plugin was built with.
func TestSamplerLoopFollowsItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := testingclock.NewFakeClock(epoch)
	m := metricsfake.NewSimpleClientset()
	p := newSampled(t, ctx, m, clk)
	p.addNode(testNode("n1"))
	require.False(t, p.metric.tick(ctx), "not started")

	p.metric.start(ctx)
	p.metric.start(ctx) // once
	waitUntil(t, "the loop's ticker", clk.HasWaiters)
	assert.Empty(t, m.Actions(), "no round before the first tick")
	clk.Step(15 * time.Second)
	waitUntil(t, "a round", func() bool { return len(m.Actions()) == 1 })
	assert.Equal(t, "nodes", m.Actions()[0].GetResource().Resource)

	cancel()
	select {
	case <-p.metric.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the sampling loop did not end with its context")
	}
}

// Without a metrics client (no kubeconfig to build one from), the sampler starts
// nothing and never samples; the plugin is built all the same.
func TestSamplerWithoutClient(t *testing.T) {
	args, err := decodeArgs(nil)
	require.NoError(t, err)
	p, err := newPlugin(context.Background(), args, nil, options{clock: testingclock.NewFakeClock(epoch)})
	require.NoError(t, err)
	require.NotNil(t, p.metric)
	assert.ErrorContains(t, p.metric.clientErr, "no framework handle")
	assert.Same(t, p.metric, p.usage, "the pods' usage source is still the sampler, which knows nothing")
	p.metric.start(context.Background())
	select {
	case <-p.metric.done:
	default:
		t.Fatal("a sampler without a client runs no loop")
	}
	assert.False(t, p.metric.tick(context.Background()))
}

// A usage source of one's own replaces the sampler for the pods, which then samples
// only the nodes; usageSource Annotation calls no metrics API at all.
func TestUsageSourceChoice(t *testing.T) {
	args, err := decodeArgs(nil)
	require.NoError(t, err)
	m := metricsfake.NewSimpleClientset()
	p, err := newPlugin(context.Background(), args, nil, options{usage: AnnotationUsage{}, metrics: m, clock: testingclock.NewFakePassiveClock(epoch)})
	require.NoError(t, err)
	assert.Equal(t, AnnotationUsage{}, p.usage)
	require.NotNil(t, p.metric, "the nodes are still sampled")
	p.metric.track(testPod(1), "uid-0001", 0)
	assert.Zero(t, p.metric.trackedCount(), "no pod is followed")

	args.UsageSource = UsageSourceAnnotation
	p, err = newPlugin(context.Background(), args, nil, options{metrics: m, clock: testingclock.NewFakePassiveClock(epoch)})
	require.NoError(t, err)
	assert.Nil(t, p.metric)
	assert.Equal(t, AnnotationUsage{}, p.usage)
}

// waitUntil polls cond, failing after a deadline that only bounds a test gone wrong.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func testNode(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name)}, Status: v1.NodeStatus{
		Allocatable: v1.ResourceList{v1.ResourceCPU: apiresource.MustParse("32"), v1.ResourceMemory: apiresource.MustParse("128Gi")},
	}}
}

func testPod(i int) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns%d", i%10), Name: fmt.Sprintf("pod-%04d", i), UID: types.UID(fmt.Sprintf("uid-%04d", i))}}
}

func podMetrics(pod *v1.Pod, at time.Time, cpuMilli, memBytes int64) *metricsv1beta1.PodMetrics {
	return &metricsv1beta1.PodMetrics{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		Timestamp:  metav1.NewTime(at),
		Window:     metav1.Duration{Duration: 15 * time.Second},
		Containers: []metricsv1beta1.ContainerMetrics{{Name: "main", Usage: v1.ResourceList{
			v1.ResourceCPU:    *apiresource.NewMilliQuantity(cpuMilli, apiresource.DecimalSI),
			v1.ResourceMemory: *apiresource.NewQuantity(memBytes, apiresource.BinarySI),
		}}},
	}
}

// The metrics API calls of a simulated minute (4 rounds at the default 15s) are the
// same whatever the number of pods followed: one List of PodMetrics and one of
// NodeMetrics a round.
//
//	go test -run TestMetricsCallsPerMinute -v ./plugin/
func TestMetricsCallsPerMinute(t *testing.T) {
	for _, pods := range []int{10, 1000} {
		t.Run(fmt.Sprintf("%d pods", pods), func(t *testing.T) {
			clk := testingclock.NewFakePassiveClock(epoch)
			m := metricsfake.NewSimpleClientset()
			p := newSampled(t, context.Background(), m, clk)
			p.metric.started.Store(true) // as PreFilter's start does, without the loop: the test ticks
			nodes := max(pods/10, 1)
			for n := range nodes {
				node := testNode(fmt.Sprintf("n%03d", n))
				p.addNode(node)
				require.NoError(t, m.Tracker().Create(metricsv1beta1.SchemeGroupVersion.WithResource("nodes"),
					&metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: node.Name}, Timestamp: metav1.NewTime(epoch),
						Usage: v1.ResourceList{v1.ResourceCPU: apiresource.MustParse("1"), v1.ResourceMemory: apiresource.MustParse("1Gi")}}, ""))
			}
			gvr := metricsv1beta1.SchemeGroupVersion.WithResource("pods")
			for i := range pods {
				pod := testPod(i)
				p.metric.track(pod, string(pod.UID), 0)
				require.NoError(t, m.Tracker().Create(gvr, podMetrics(pod, epoch, 100, 1<<30), pod.Namespace))
			}
			for round := 1; round <= 4; round++ {
				now := epoch.Add(time.Duration(round) * 15 * time.Second)
				clk.SetTime(now)
				for i := range pods {
					pod := testPod(i)
					require.NoError(t, m.Tracker().Update(gvr, podMetrics(pod, now, int64(100+round), 1<<30), pod.Namespace))
				}
				require.True(t, p.metric.tick(context.Background()))
			}
			calls := len(m.Actions())
			assert.Equal(t, 8, calls, "two lists a round")
			ps := p.metric.tracked[types.NamespacedName{Namespace: "ns0", Name: "pod-0000"}]
			require.NotNil(t, ps)
			assert.Equal(t, 4, len(ps.samples), "every pod sampled every round")
			t.Logf("%d pods followed, %d nodes: %d metrics API calls in a simulated minute", pods, nodes, calls)
		})
	}
}

// BenchmarkTrackedPodMemory follows 1,000 pods, each sampled twice the default
// bound (480 readings, so that every series has been halved and refilled to 240
// samples), and reports the heap the sampler keeps per pod (B/pod): its series, its
// record and its map entry.
//
//	go test -run '^$' -bench TrackedPodMemory -benchtime 3x ./plugin/
func BenchmarkTrackedPodMemory(b *testing.B) {
	const pods, readings = 1000, 480
	b.ReportAllocs()
	var perPod float64
	for b.Loop() {
		clk := testingclock.NewFakePassiveClock(epoch)
		p := newSampled(b, context.Background(), metricsfake.NewSimpleClientset(), clk)
		ms := make([]*metricsv1beta1.PodMetrics, pods)
		for i := range pods {
			ms[i] = podMetrics(testPod(i), epoch, 100, 1<<30)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range pods {
			pod := testPod(i)
			p.metric.track(pod, string(pod.UID), 0)
		}
		for r := 1; r <= readings; r++ {
			at := metav1.NewTime(epoch.Add(time.Duration(r) * 15 * time.Second))
			for _, m := range ms {
				m.Timestamp = at
			}
			p.metric.addPodSamples(derefs(ms))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		for _, ps := range p.metric.tracked {
			if len(ps.samples) != *p.args.MaxSamplesPerPod {
				b.Fatalf("a series of %d samples", len(ps.samples))
			}
		}
		perPod = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / pods
		runtime.KeepAlive(p)
		runtime.KeepAlive(ms)
	}
	b.ReportMetric(perPod, "B/pod")
}

// derefs is ms as the list a List returns.
func derefs(ms []*metricsv1beta1.PodMetrics) []metricsv1beta1.PodMetrics {
	out := make([]metricsv1beta1.PodMetrics, len(ms))
	for i, m := range ms {
		out[i] = *m
	}
	return out
}
