package sim_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// One node of 10 cores under Koordinator's defaults (cpu threshold 65%, scaling factor
// 85%): a task requesting 4 cores counts 3.4 cores until a usage report has seen it
// for a whole report span; after that, only what the node measures counts, and the
// requests on the node may add up to more than its capacity.
func ExampleLoadAwareScheduler() {
	schema := workload.Schema()
	s, err := sim.NewLoadAwareScheduler(schema)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = s.AddNode(finegrain.Node{ID: "n0", Capacity: schema.MustTuple(10000, 10<<30, 0, 0)})
	_ = s.AddQueue("", "q")
	_ = s.SubmitJob(finegrain.Job{ID: "j", Queue: "q"})
	for _, id := range []string{"a", "b", "c"} {
		_ = s.Submit(finegrain.Task{ID: id, Job: "j", Request: schema.MustTuple(4000, 1<<30, 0, 0)})
	}
	place := func(id string, now time.Duration) {
		if _, err := s.Place(id, now); err != nil {
			fmt.Printf("%v: %s waits\n", now, id)
			return
		}
		fmt.Printf("%v: %s placed\n", now, id)
	}
	measured := func(now time.Duration, cpu int64) {
		w := []predict.Interval{{Duration: 10 * time.Second, Actual: schema.MustTuple(cpu, 2<<30, 0, 0)}}
		if _, err := s.ReportUsage("n0", now, w); err != nil {
			fmt.Println(err)
		}
	}
	place("a", 0) // 3.4 cores estimated
	place("b", 0) // 3.4 + 3.4 > 6.5
	measured(10*time.Second, 1000)
	place("b", 10*time.Second) // 1 measured + 3.4
	place("c", 10*time.Second) // 1 + 3.4 + 3.4 > 6.5
	measured(20*time.Second, 2000)
	place("c", 20*time.Second) // 2 measured + 3.4: 12 cores requested on 10
	// Output:
	// 0s: a placed
	// 0s: b waits
	// 10s: b placed
	// 10s: c waits
	// 20s: c placed
}
