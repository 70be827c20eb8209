package cluster_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/resource"
)

// A placement is two-phase: Reserve holds the task's profile on the node tentatively,
// Unreserve rolls it back exactly, Commit makes it binding.
func ExampleState_Reserve() {
	schema := resource.Standard()
	s, err := cluster.New(schema)
	if err != nil {
		panic(err)
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(s.AddNode(cluster.NodeSpec{ID: "n1", Capacity: schema.MustTuple(4000, 8<<30)}))
	must(s.AddJob(cluster.JobSpec{ID: "wordcount"}))
	must(s.Submit(cluster.TaskSpec{ID: "map-0", Job: "wordcount", Request: schema.MustTuple(1000, 2<<30), Duration: 30 * time.Second}))
	t, _ := s.Task("map-0")
	n, _ := s.Node("n1")
	mem, _ := schema.Index("memory")
	free := func() int64 { return n.Timeline().FreeAt(0)[mem] >> 30 }
	r := cluster.Reservation{Start: 0, Hold: t.RequestProfile(schema)}

	must(s.Reserve(t, n, r))
	fmt.Printf("%v, %d GiB free\n", t.State(), free())
	must(s.Unreserve(t))
	fmt.Printf("%v, %d GiB free\n", t.State(), free())
	must(s.Reserve(t, n, r))
	must(s.Commit(t))
	fmt.Printf("%v on %s, %d GiB free\n", t.State(), t.Node().ID(), free())
	// Output:
	// reserved, 6 GiB free
	// pending, 8 GiB free
	// running on n1, 6 GiB free
}
