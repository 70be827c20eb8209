package plugin_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
)

// The plugin's hot path, alone: PreFilter, Filter, Score and PostBind called as the
// scheduling framework calls them, over a populated cluster of hotNodes nodes held by
// the scheduler's own NodeInfo type, without a scheduler, a clientset or informers.
//
//	go test -run '^$' -bench 'Plugin(PreFilter|Filter|Score|PostBind)' -benchtime 2s ./plugin/

const (
	hotNodes       = 5000
	hotPodsPerNode = 8
)

// hotCluster is a plugin holding hotNodes nodes with hotPodsPerNode pods bound on each
// (two or three declared stages, started at different times), and the scheduler's
// NodeInfo of each node with those pods.
type hotCluster struct {
	plugin *plugin.Plugin
	clock  *clocktesting.FakeClock
	nodes  []fwk.NodeInfo
	serial atomic.Int64
}

var (
	hotOnce   sync.Once
	hotShared *hotCluster
)

// hot returns the populated cluster, built once for every benchmark of this file.
func hot(b *testing.B) *hotCluster {
	hotOnce.Do(func() {
		hotShared = newHotCluster(b)
		// Building the cluster leaves garbage behind: collect it now, not during the
		// first benchmark timed.
		goruntime.GC()
	})
	if hotShared == nil {
		b.Fatal("the populated cluster could not be built")
	}
	return hotShared
}

func newHotCluster(b *testing.B) *hotCluster {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	args := &runtime.Unknown{ContentType: runtime.ContentTypeJSON, Raw: []byte(`{"usageSource":"Annotation","checkpointInterval":"0s"}`)}
	pl, err := plugin.NewFactory(plugin.WithClock(clk))(context.Background(), args, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := &hotCluster{plugin: pl.(*plugin.Plugin), clock: clk}
	ctx := context.Background()
	for i := 0; i < hotNodes; i++ {
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i), UID: types.UID(fmt.Sprintf("node-uid-%04d", i))},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{
				v1.ResourceCPU:    apiresource.MustParse("32"),
				v1.ResourceMemory: apiresource.MustParse("128Gi"),
				v1.ResourcePods:   apiresource.MustParse("110"),
			}},
		}
		ni := schedframework.NewNodeInfo()
		ni.SetNode(node)
		c.nodes = append(c.nodes, ni)
		// The plugin adds a node it does not hold yet when Filter first sees it.
		probe := c.pod("probe", "100m", "128Mi", "")
		cs := c.preFilter(b, probe)
		if st := c.plugin.Filter(ctx, cs, probe, ni); !st.IsSuccess() {
			b.Fatalf("Filter on a new node: %v", st)
		}
	}
	// Pods bound in rounds, a second apart, so that the nodes' timelines have steps
	// at many times.
	for k := 0; k < hotPodsPerNode; k++ {
		for i, ni := range c.nodes {
			stages := fmt.Sprintf(`[{"duration":"%ds","cpu":"%dm","memory":"%dMi"},{"duration":"%ds","cpu":"1","memory":"2Gi"},{"duration":"0","cpu":"500m","memory":"1Gi"}]`,
				30+(i*7+k*13)%600, 500+(i+k)%8*250, 1024+(i*3+k)%16*256, 60+(i+k*5)%900)
			if k%3 == 2 {
				stages = ""
			}
			pod := c.pod("bound", "1", "2Gi", stages)
			c.bind(b, pod, ni)
		}
		c.clock.Step(time.Second)
	}
	return c
}

// pod returns a new pod asking cpu and memory, with stages declared ("" for none).
func (c *hotCluster) pod(prefix, cpu, mem, stages string) *v1.Pod {
	n := c.serial.Add(1)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("%s-%d", prefix, n), UID: types.UID(fmt.Sprintf("%s-uid-%d", prefix, n))},
		Spec: v1.PodSpec{SchedulerName: "finegrain-scheduler", Containers: []v1.Container{{
			Name: "c", Image: "busybox",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU: apiresource.MustParse(cpu), v1.ResourceMemory: apiresource.MustParse(mem),
			}},
		}}},
	}
	if stages != "" {
		pod.Annotations = map[string]string{plugin.StagesAnnotation: stages}
	}
	return pod
}

// preFilter runs PreFilter for pod in a new cycle state, which it returns; the
// benchmark fails when PreFilter does not succeed.
func (c *hotCluster) preFilter(b *testing.B, pod *v1.Pod) fwk.CycleState {
	b.Helper()
	cs := schedframework.NewCycleState()
	if _, st := c.plugin.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
		b.Fatalf("PreFilter: %v", st)
	}
	return cs
}

// bind runs pod through PreFilter, Reserve and PostBind on ni's node, and adds it to
// ni as the scheduler's cache would.
func (c *hotCluster) bind(b *testing.B, pod *v1.Pod, ni fwk.NodeInfo) {
	ctx := context.Background()
	cs := c.preFilter(b, pod)
	name := ni.Node().Name
	if st := c.plugin.Reserve(ctx, cs, pod, name); !st.IsSuccess() {
		b.Fatalf("Reserve on %s: %v", name, st)
	}
	bound := pod.DeepCopy()
	bound.Spec.NodeName = name
	c.plugin.PostBind(ctx, cs, bound, name)
	ni.(*schedframework.NodeInfo).AddPod(bound)
}

// cpuMeter reports a benchmark's CPU time per operation ("cpu-ns/op"), read from the
// benchmark goroutine's thread, which it locks (threadCPU): start it after the
// setup, stop it after the loop.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) *cpuMeter {
	goruntime.LockOSThread()
	b.Cleanup(goruntime.UnlockOSThread)
	return &cpuMeter{b: b, start: threadCPU()}
}

func (m *cpuMeter) stop() {
	if end := threadCPU(); m.start >= 0 && end >= 0 && m.b.N > 0 {
		m.b.ReportMetric(float64(end-m.start)/float64(m.b.N), "cpu-ns/op")
	}
}

// eightStages is an eight-stage declared profile.
func eightStages() string {
	var sb strings.Builder
	sb.WriteString("[")
	for i := 0; i < 8; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		d := fmt.Sprintf("%ds", 20+i*10)
		if i == 7 {
			d = "0"
		}
		fmt.Fprintf(&sb, `{"duration":%q,"cpu":"%dm","memory":"%dMi"}`, d, 500+i%4*500, 1024+i%3*1024)
	}
	sb.WriteString("]")
	return sb.String()
}

// hotPods are the pods the Filter and Score benchmarks ask about.
func hotPods() []struct{ name, stages string } {
	return []struct{ name, stages string }{
		{"request-only", ""},
		{"8-stage", eightStages()},
	}
}

// BenchmarkPluginFilter is the plugin's Filter on one node of the populated cluster,
// node after node, after one PreFilter: ns/op is the time a node.
func BenchmarkPluginFilter(b *testing.B) {
	c := hot(b)
	ctx := context.Background()
	for _, tc := range hotPods() {
		b.Run(tc.name, func(b *testing.B) {
			pod := c.pod("filter", "2", "4Gi", tc.stages)
			cs := c.preFilter(b, pod)
			passed := 0
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				if c.plugin.Filter(ctx, cs, pod, c.nodes[i%hotNodes]).IsSuccess() {
					passed++
				}
			}
			cpu.stop()
			b.StopTimer()
			if passed == 0 {
				b.Fatal("no node passed")
			}
		})
	}
}

// BenchmarkPluginFilterParallel is Filter on every node of the populated cluster from
// as many goroutines as GOMAXPROCS, as the scheduler runs it (parallelism 16 over the
// machine's cores).
func BenchmarkPluginFilterParallel(b *testing.B) {
	c := hot(b)
	ctx := context.Background()
	for _, tc := range hotPods() {
		b.Run(tc.name, func(b *testing.B) {
			pod := c.pod("filter", "2", "4Gi", tc.stages)
			cs := c.preFilter(b, pod)
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1)
					_ = c.plugin.Filter(ctx, cs, pod, c.nodes[i%hotNodes])
				}
			})
		})
	}
}

// BenchmarkPluginScore is the plugin's Score on one node, node after node, after one
// PreFilter (and, as the scheduler does, Filter on that node first, not timed).
func BenchmarkPluginScore(b *testing.B) {
	c := hot(b)
	ctx := context.Background()
	for _, tc := range hotPods() {
		b.Run(tc.name, func(b *testing.B) {
			pod := c.pod("score", "2", "4Gi", tc.stages)
			cs := c.preFilter(b, pod)
			var passing []fwk.NodeInfo
			for _, ni := range c.nodes {
				if c.plugin.Filter(ctx, cs, pod, ni).IsSuccess() {
					passing = append(passing, ni)
				}
			}
			if len(passing) == 0 {
				b.Fatal("no node passed")
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				if _, st := c.plugin.Score(ctx, cs, pod, passing[i%len(passing)]); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
			cpu.stop()
		})
	}
}

// BenchmarkPluginPreFilter is PreFilter of a new pod: its submission to finegrain and
// what the cycle works out once.
func BenchmarkPluginPreFilter(b *testing.B) {
	c := hot(b)
	ctx := context.Background()
	for _, tc := range hotPods() {
		b.Run(tc.name, func(b *testing.B) {
			pods := make([]*v1.Pod, b.N)
			for i := range pods {
				pods[i] = c.pod("prefilter", "2", "4Gi", tc.stages)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU(b)
			for i := 0; i < b.N; i++ {
				if _, st := c.plugin.PreFilter(ctx, schedframework.NewCycleState(), pods[i], nil); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
			cpu.stop()
		})
	}
}

// BenchmarkPluginPostBind is PostBind of a pod reserved on a node of the populated
// cluster a millisecond earlier (PreFilter and Reserve not timed; the plugin's clock
// moves a millisecond a pod, so that the library's once-a-second refresh of its free
// index falls in every thousandth PostBind): alone, and while as many goroutines as
// GOMAXPROCS run Filter for another pod over the nodes, as the next scheduling cycles
// do while a pod is bound. max-µs is the longest PostBind.
func BenchmarkPluginPostBind(b *testing.B) {
	c := hot(b)
	ctx := context.Background()
	for _, busy := range []bool{false, true} {
		name := "alone"
		if busy {
			name = "while-filtering"
		}
		b.Run(name, func(b *testing.B) {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			if busy {
				other := c.pod("other", "2", "4Gi", eightStages())
				cs := c.preFilter(b, other)
				for g := 0; g < 2; g++ {
					wg.Add(1)
					go func(g int) {
						defer wg.Done()
						for i := g; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							_ = c.plugin.Filter(ctx, cs, other, c.nodes[i%hotNodes])
						}
					}(g)
				}
			}
			var worst, cpu time.Duration
			goruntime.LockOSThread()
			defer goruntime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				pod := c.pod("postbind", "100m", "64Mi", `[{"duration":"30s","cpu":"100m","memory":"64Mi"},{"duration":"30s","cpu":"50m","memory":"32Mi"}]`)
				cs := c.preFilter(b, pod)
				node := c.nodes[i%hotNodes].Node().Name
				if st := c.plugin.Reserve(ctx, cs, pod, node); !st.IsSuccess() {
					b.Fatalf("Reserve: %v", st)
				}
				bound := pod.DeepCopy()
				bound.Spec.NodeName = node
				// Binding takes a millisecond: the hold moves to start then.
				c.clock.Step(time.Millisecond)
				b.StartTimer()
				start, cpu0 := time.Now(), threadCPU()
				c.plugin.PostBind(ctx, cs, bound, node)
				d := time.Since(start)
				cpu += threadCPU() - cpu0
				worst = max(worst, d)
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			b.ReportMetric(float64(worst.Microseconds()), "max-µs")
			if threadCPU() >= 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
