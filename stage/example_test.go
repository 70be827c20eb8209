package stage_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

func Example() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	server, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30)) // 4 cores, 8 GiB

	// A task that reads (1 core, 2 GiB) for 2 s, then computes (3 cores, 1 GiB) for 3 s.
	task := stage.MustProfile(s,
		stage.Stage{Duration: 2 * time.Second, Demand: s.MustTuple(1000, 2<<30)},
		stage.Stage{Duration: 3 * time.Second, Demand: s.MustTuple(3000, 1<<30)},
	)
	h, _ := server.Reserve(time.Second, task, resource.Tuple{})
	for seg := range server.Segments(0, 8*time.Second) {
		fmt.Printf("[%v, %v) free %s\n", seg.Start, seg.End, s.Format(seg.Free))
	}
	fmt.Println("coarse Ax over [0, 8s):", s.Format(server.MinFree(0, 8*time.Second)))

	// Another task, 1.3 cores and 1 GiB for 4 s: when can it start without compression,
	// and when if CPU may be squeezed by 10% of capacity (eq. 7's default limit)?
	other := stage.MustProfile(s, stage.Stage{Duration: 4 * time.Second, Demand: s.MustTuple(1300, 1<<30)})
	start, _ := server.EarliestFit(0, other, resource.Tuple{})
	allow := server.Capacity().Only(s.Compressible()).Scale(resource.DefaultCompressionLimit)
	squeezed, _ := server.EarliestFit(0, other, allow)
	fmt.Println("earliest start:", start, "with compression:", squeezed)

	fmt.Println(server.Release(h), server.Len())
	// Output:
	// [0s, 1s) free cpu=4,memory=8Gi
	// [1s, 3s) free cpu=3,memory=6Gi
	// [3s, 6s) free cpu=1,memory=7Gi
	// [6s, 8s) free cpu=4,memory=8Gi
	// coarse Ax over [0, 8s): cpu=1,memory=6Gi
	// earliest start: 6s with compression: 0s
	// <nil> 1
}

func ExampleTimeline_Reserve_refused() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	server, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
	greedy := stage.MustProfile(s, stage.Stage{Duration: time.Minute, Demand: s.MustTuple(2000, 9<<30)})
	_, err := server.Reserve(0, greedy, resource.Tuple{})
	fmt.Println(err)
	// Output:
	// stage: stage 0 needs memory=9Gi over [0s, forever) but 8Gi is free (compression allowance 0): not enough free resources
}
