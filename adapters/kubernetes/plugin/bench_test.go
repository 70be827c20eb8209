package plugin_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSchedule1000PodsOn500Nodes schedules 1,000 pods onto 500 nodes through the
// real kube-scheduler, with the profile of deploy/scheduler-config.yaml (finegrain)
// and with the scheduler's default profile (default), and reports pods/s: the time
// from the first pod's creation to the last binding. The pods declare two stages
// (finegrain matches them on the timelines; the default profile fits their
// requests). Setting up the cluster is not timed.
//
//	go test -run '^$' -bench Schedule1000 -benchtime 3x ./plugin/
func BenchmarkSchedule1000PodsOn500Nodes(b *testing.B) {
	const nodes, pods = 500, 1000
	for _, tc := range []struct {
		name string
		s    setup
	}{
		{"default", setup{noPlugin: true}},
		{"finegrain", setup{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c := startCluster(b, tc.s)
				for n := 0; n < nodes; n++ {
					c.node(fmt.Sprintf("n%03d", n), "8", "32Gi")
				}
				c.waitFor("the scheduler to see every node", func() bool { return c.nodes() == nodes })
				if c.plugin != nil {
					c.waitFor("the plugin to hold every node", func() bool {
						_, err := c.plugin.Scheduler().NodeFree(fmt.Sprintf("n%03d", nodes-1), 0)
						return err == nil
					})
				}
				b.StartTimer()
				start := time.Now()
				for p := 0; p < pods; p++ {
					c.create(pod{name: fmt.Sprintf("p%04d", p), cpu: "1", mem: "2Gi",
						stages: `[{"duration":"60s","cpu":"1","memory":"2Gi"},{"duration":"0","cpu":"500m","memory":"1Gi"}]`})
				}
				c.waitFor("every pod to be bound", func() bool { return c.bound.Load() == pods })
				elapsed += time.Since(start)
				b.StopTimer()
				c.close()
			}
			b.ReportMetric(float64(pods*b.N)/elapsed.Seconds(), "pods/s")
		})
	}
}
