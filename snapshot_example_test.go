package finegrain_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// A host scheduler's cycle: one snapshot of the pending task, then Filter and Score of
// every node from several goroutines, none taking the Scheduler's lock; then Reserve
// on the best node, which checks it again under the lock.
func ExampleScheduler_Snapshot() {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	s, _ := finegrain.New(schema)
	for i, mem := range []int64{2, 8, 4} {
		_ = s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Capacity: schema.MustTuple(4000, mem<<30)})
	}
	_ = s.SubmitJob(finegrain.Job{ID: "j"})
	_ = s.Submit(finegrain.Task{ID: "t", Job: "j", Profile: stage.MustProfile(schema,
		stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(2000, 3<<30)},
		stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(500, 1<<30)})})

	sn, err := s.Snapshot("t", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	nodes := []string{"n0", "n1", "n2"}
	scores := make([]float64, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, _, err := sn.Filter(n); err == nil && st.OK() {
				scores[i], _, _ = sn.Score(n)
			} else {
				scores[i] = -1
			}
		}()
	}
	wg.Wait()
	best := 0
	for i := range nodes {
		fmt.Printf("%s: passes %v\n", nodes[i], scores[i] >= 0)
		if scores[i] > scores[best] {
			best = i
		}
	}
	as, err := s.Reserve("t", nodes[best], 0)
	fmt.Println("reserved on", as.Node, err)
	// Output:
	// n0: passes false
	// n1: passes true
	// n2: passes true
	// reserved on n1 <nil>
}
