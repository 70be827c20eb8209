package simrun

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// tally is a counter that records what it is told.
type tally struct {
	mu       sync.Mutex
	added    int
	calls    int
	negative bool
	finished int
}

func (t *tally) Add(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.added += n
	t.calls++
	t.negative = t.negative || n < 0
}

func (t *tally) Finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished++
}

// job is one simulation: a policy on a shared workload.
type job struct {
	policy sim.Policy
	skip   bool // do not simulate, do not report progress
	calls  atomic.Int32
	res    *sim.Result
	err    error
}

// Every item is run once, whatever the number of workers; the progress option follows
// sim.Run; the bar is counted up to the total tasks exactly, an item that reports no
// progress included, and finished once.
func TestEach(t *testing.T) {
	w, err := workload.FGM(rand.New(rand.NewPCG(1, 2)), workload.WithScale(0.02))
	require.NoError(t, err)
	cl, err := workload.FGMCluster()
	require.NoError(t, err)
	for _, workers := range []int{0, 1, 3, 20} {
		var jobs []*job
		for _, p := range sim.Policies() {
			jobs = append(jobs, &job{policy: p})
		}
		jobs = append(jobs, &job{policy: sim.FIFO(), skip: true})
		var bar tally
		each(&bar, workers, jobs, func(*job) int { return w.NumTasks() }, func(j *job, progress sim.Option) {
			j.calls.Add(1)
			if !j.skip {
				j.res, j.err = sim.Run(&w, &cl, j.policy, progress)
			}
		})
		for _, j := range jobs {
			assert.EqualValues(t, 1, j.calls.Load(), "%d workers, %s", workers, j.policy.Name)
			if !j.skip {
				require.NoError(t, j.err, "%d workers, %s", workers, j.policy.Name)
				assert.Len(t, j.res.Jobs, len(w.Jobs))
			}
		}
		assert.Equal(t, len(jobs)*w.NumTasks(), bar.added, "%d workers", workers)
		assert.False(t, bar.negative, "%d workers", workers)
		// sim.Run reported progress (once at the end at least) before run returned.
		assert.GreaterOrEqual(t, bar.calls, 2*len(sim.Policies())+1, "%d workers", workers)
		assert.Equal(t, 1, bar.finished, "%d workers", workers)
	}
}

// Each with no items returns at once.
func TestEachNone(t *testing.T) {
	Each(nil, true, 4, []int(nil), func(int) int { return 1 }, func(int, sim.Option) { t.Fatal("called") })
}

// Each starts no more goroutines than there are items, however many workers it is
// given.
func TestEachWorkersBoundedByItems(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers int
		items   int
	}{
		{"more workers than items", 10000, 3},
		{"as many", 3, 3},
		{"fewer", 2, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			var mu sync.Mutex
			most := 0
			var bar tally
			each(&bar, tc.workers, make([]int, tc.items), func(int) int { return 0 }, func(int, sim.Option) {
				mu.Lock()
				defer mu.Unlock()
				most = max(most, runtime.NumGoroutine()-base)
			})
			assert.LessOrEqual(t, most, min(tc.workers, tc.items), "goroutines started beyond the test's")
			assert.Equal(t, 1, bar.finished)
		})
	}
}

// CheckWorkers accepts [1, MaxWorkers] and refuses the rest with a usage error naming
// the flag; the default is within it.
func TestCheckWorkers(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{1, true}, {8, true}, {MaxWorkers, true}, {0, false}, {-1, false}, {MaxWorkers + 1, false}, {1000000000, false}} {
		err := CheckWorkers(tc.n)
		if tc.ok {
			assert.NoError(t, err, tc.n)
			continue
		}
		require.Error(t, err, tc.n)
		assert.Equal(t, 2, cli.Status(err), tc.n)
		assert.Contains(t, err.Error(), "-workers", tc.n)
	}
	assert.NoError(t, CheckWorkers(DefaultWorkers()))
}
