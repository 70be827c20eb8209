package plugin_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/finegrain/finegrain/adapters/kubernetes/plugin"
	"github.com/finegrain/finegrain/predict"
)

// A kube-scheduler binary with the plugin registered: what cmd/kube-scheduler runs.
// Enable the plugin in a profile of the configuration given with --config.
func Example() {
	cmd := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.New))
	fmt.Println(cmd.Use, "with", plugin.Name)
	// Output: kube-scheduler with FineGrain
}

// A pod's declared stages, as the finegrain.io/stages annotation holds them.
func ExampleParseStages() {
	stages, err := plugin.ParseStages(`[{"duration":"2m","cpu":"4","memory":"6Gi"},{"cpu":"1","memory":"2Gi"}]`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, s := range stages {
		cpu, mem := s.Resources["cpu"], s.Resources["memory"]
		fmt.Printf("stage %d: %v, cpu %s, memory %s\n", i, s.Duration, cpu.String(), mem.String())
	}
	_, err = plugin.ParseStages(`[{"duration":"2m","memory":"-6Gi"}]`)
	fmt.Println(err)
	// Output:
	// stage 0: 2m0s, cpu 4, memory 6Gi
	// stage 1: 0s, cpu 1, memory 2Gi
	// stage 0: "memory": negative quantity -6Gi
}

// promUsage is a UsageSource of one's own: what a pod used, from a time-series
// database such as Prometheus, asked when the pod ends. query stands for the
// database's client: the pod's CPU (cores, a rate over each step) and memory (bytes,
// the most held over each step) from its start to now. Package promusage is a
// complete source of this kind, over Prometheus' HTTP API.
type promUsage struct {
	query func(ctx context.Context, namespace, pod string, from time.Time) ([]point, error)
}

type point struct {
	at       time.Time
	cpuCores float64
	memBytes int64
}

// Usage implements plugin.UsageSource: the points become a series in the plugin's
// units (u), which the library divides into stages. End is left to the plugin (when
// the pod ended).
func (s promUsage) Usage(ctx context.Context, pod *v1.Pod, u plugin.Units) (plugin.Usage, error) {
	if pod.Status.StartTime == nil {
		return plugin.Usage{}, nil // never started: nothing to learn
	}
	points, err := s.query(ctx, pod.Namespace, pod.Name, pod.Status.StartTime.Time)
	if err != nil {
		return plugin.Usage{}, err
	}
	var sr predict.Series
	for _, pt := range points {
		usage, err := u.Tuple(v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(int64(pt.cpuCores*1000), resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(pt.memBytes, resource.BinarySI),
		})
		if err != nil {
			return plugin.Usage{}, err
		}
		sr.Samples = append(sr.Samples, predict.Sample{At: u.At(pt.at), Usage: usage})
	}
	return plugin.Usage{Series: sr}, nil
}

// A usage source of one's own, given to the plugin's factory: the scheduler binary
// registers plugin.NewFactory(plugin.WithUsageSource(src)) instead of plugin.New.
func ExampleUsageSource() {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	src := promUsage{query: func(context.Context, string, string, time.Time) ([]point, error) {
		return []point{{start, 1.5, 4 << 30}, {start.Add(time.Minute), 0.25, 1 << 30}}, nil
	}}
	cmd := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.NewFactory(plugin.WithUsageSource(src))))
	fmt.Println(cmd.Use, "with", plugin.Name, "learning from a source of its own")

	// What the plugin asks when a pod ends, in its units.
	p, err := plugin.NewFactory(plugin.WithUsageSource(src), plugin.WithClock(clocktesting.NewFakePassiveClock(start)))(context.Background(), nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	pod := &v1.Pod{Status: v1.PodStatus{StartTime: &metav1.Time{Time: start}}}
	usage, err := src.Usage(context.Background(), pod, p.(*plugin.Plugin).Units())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range usage.Series.Samples {
		fmt.Printf("at %v: %d millicores, %d MiB\n", s.At, s.Usage[0], s.Usage[1]>>20)
	}
	// Output:
	// kube-scheduler with FineGrain learning from a source of its own
	// at 0s: 1500 millicores, 4096 MiB
	// at 1m0s: 250 millicores, 1024 MiB
}
