package sim

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// submitRecorder wraps the reference scheduler and keeps every task submitted to it.
type submitRecorder struct {
	*finegrain.Scheduler
	tasks map[string]finegrain.Task
}

func (r *submitRecorder) Submit(tasks ...finegrain.Task) error {
	for _, t := range tasks {
		r.tasks[t.ID] = t
	}
	return r.Scheduler.Submit(tasks...)
}

func submitRecorderPolicy(into map[string]finegrain.Task) Policy {
	return Policy{Name: "FGM", New: func(schema *resource.Schema) (Scheduler, error) {
		s, err := finegrain.New(schema)
		return &submitRecorder{s, into}, err
	}}
}

// The simulator tells the scheduler each task's class and SLO as the workload gives
// them, and they change no decision: a run of the workload with latency-sensitive jobs
// is the run without them, byte for byte.
func TestRunPassesClassAndSLO(t *testing.T) {
	plain, cl := smallFGM(t, 3, 0.02)
	mixed, _ := smallFGM(t, 3, 0.02, workload.WithLatencySensitive(0.5))
	seen := map[string]finegrain.Task{}
	r, err := Run(&mixed, &cl, submitRecorderPolicy(seen))
	require.NoError(t, err)
	ls := 0
	for _, j := range mixed.Jobs {
		for _, wt := range j.Tasks {
			ft, ok := seen[wt.ID]
			require.True(t, ok, "task %s submitted", wt.ID)
			want := finegrain.Batch
			if wt.LatencySensitive {
				want = finegrain.LatencySensitive
				ls++
			}
			assert.Equal(t, want, ft.Class, wt.ID)
			assert.Equal(t, wt.SLO, ft.SLO, wt.ID)
		}
	}
	require.Positive(t, ls, "some tasks are latency-sensitive")
	require.Less(t, ls, mixed.NumTasks(), "some tasks are batch")

	base, err := Run(&plain, &cl, submitRecorderPolicy(map[string]finegrain.Task{}))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(csvOf(t, base), csvOf(t, r)), "classes and SLOs change no decision")
}

// Fill passes the pool's classes and SLOs on too.
func TestFillPassesClassAndSLO(t *testing.T) {
	cl := gpuCluster(1, gpu.Spec{Model: "T4", Count: 2})
	ls := gpuTask("ls", 1000, gpu.Share(600))
	ls.LatencySensitive, ls.SLO = true, 3*time.Second
	seen := map[string]finegrain.Task{}
	_, err := Fill([]workload.Task{ls}, &cl, submitRecorderPolicy(seen), rand.New(rand.NewPCG(1, 2)), 1, 0.3)
	require.NoError(t, err)
	require.NotEmpty(t, seen)
	for id, ft := range seen {
		assert.Equal(t, finegrain.LatencySensitive, ft.Class, id)
		assert.Equal(t, 3*time.Second, ft.SLO, id)
	}
}
