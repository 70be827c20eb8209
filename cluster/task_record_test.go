package cluster_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
)

// The tasks of a job that ask the same request and duration share
// one demand record, whose request profile is built on first use. Scheduler.Filter and
// Score call RequestProfile from many goroutines under a read lock, so the first build
// can happen on several goroutines at once, on different tasks sharing the record. No
// existing test does that (TestProbesConcurrent's first build happens in the heartbeat,
// under the write lock): replacing the atomic.Pointer by a plain pointer passed
// `go test -race ./...`. Run this with -race. Each task must read its own request and
// duration, whatever its job-mates asked.
func TestRequestProfileConcurrentFirstBuild(t *testing.T) {
	for round := 0; round < 20; round++ {
		s := newState(t)
		addJob(t, s, "j")
		var specs []cluster.TaskSpec
		for i := 0; i < 16; i++ {
			// Two demands, interleaved: tasks 0, 2, 4… share one, 1, 3, 5… the other.
			sp := task(fmt.Sprintf("t%d", i), "j", 1+int64(i%2), 2)
			sp.Duration = time.Duration(1+i%2) * time.Second
			specs = append(specs, sp)
		}
		tasks := submit(t, s, specs...)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, tk := range tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				p := tk.RequestProfile(schema)
				if !assert.Equal(t, 1, p.Len(), "task %d", i) {
					return
				}
				assert.Equal(t, tk.Request(), p.Stage(0).Demand, "task %d", i)
				assert.Equal(t, time.Duration(1+i%2)*time.Second, p.Duration(), "task %d", i)
			}()
		}
		close(start)
		wg.Wait()
		require.Equal(t, tup(1, 2), tasks[0].Request())
		require.Equal(t, tup(2, 2), tasks[1].Request())
	}
}

// What Spec returns is the caller's: changing its inputs changes nothing in the state
// (the pending index looks the task up by the inputs it holds).
func TestSpecInputsAreACopy(t *testing.T) {
	s := newState(t)
	a, b := addNode(t, s, "a", "r1"), addNode(t, s, "b", "r2")
	addJob(t, s, "j")
	sp := task("t", "j", 1, 1)
	sp.Inputs = []string{"a"}
	tk := submit(t, s, sp)[0]
	got := tk.Spec()
	got.Inputs[0] = "b"
	assert.Equal(t, []string{"a"}, tk.Inputs())
	assert.Equal(t, []string{"a"}, tk.Spec().Inputs)
	assert.Equal(t, "node-local", s.Locality(tk, a).String())
	assert.Equal(t, "off-switch", s.Locality(tk, b).String())
	j, _ := s.Job("j")
	first, _, ok := s.FirstPending(j, a, fairness.NodeLocal)
	require.True(t, ok)
	assert.Same(t, tk, first)
	require.NoError(t, s.Cancel(tk, 0)) // takes it out of the index by the inputs it holds
	assert.Equal(t, 0, s.Count(cluster.Pending))
}
