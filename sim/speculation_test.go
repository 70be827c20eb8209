package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
)

// stragglerRun runs one job of four 100 s tasks on five one-task nodes, the fourth of
// which runs at a quarter speed, under p.
func stragglerRun(t *testing.T, p Policy) *Result {
	t.Helper()
	cl := workload.Cluster{Name: "five", IntraRackBandwidth: 100 << 20, CrossRackBandwidth: 10 << 20}
	for i := 0; i < 5; i++ {
		speed := 1.0
		if i == 3 {
			speed = 0.25
		}
		cl.Nodes = append(cl.Nodes, workload.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: "r0", Capacity: tuple(1000, 2*gib, 100<<20, 100<<20), Speed: speed})
	}
	task := oneStage(100*time.Second, tuple(1000, gib, 0, 0))
	w := workload.Workload{Name: "straggler", Jobs: []workload.Job{handJob("j", "q", 0, tuple(1000, gib, 0, 0), task, task, task, task)}}
	r, err := Run(&w, &cl, p, WithTaskRecords())
	require.NoError(t, err)
	return r
}

// The task on the quarter-speed node would take 400 s. Once the three others have
// finished (at 100 s; it has run longer than the 60 s minimum), it is slow by eq. 3.3 and both LATE
// and PRRL back it up on a free normal node, where the backup finishes first, 100 s
// later; the original's run is stopped. Without speculation the job waits for it.
func TestSpeculationBacksUpAStraggler(t *testing.T) {
	none := stragglerRun(t, Fair())
	assert.Zero(t, none.Summary.Backups)
	assert.GreaterOrEqual(t, none.Jobs[0].Completion(), 400*time.Second)
	for _, p := range []Policy{FairLATE(), FairPRRL()} {
		t.Run(p.Name, func(t *testing.T) {
			r := stragglerRun(t, p)
			assert.Equal(t, 1, r.Summary.Backups)
			assert.Equal(t, 1, r.Summary.BackupsWon)
			// n0 heartbeats at 0 s, so its task ends at 100 s, and its heartbeat on that
			// end places the backup at once: it ends at 200 s.
			done := r.Jobs[0].Completion()
			assert.Equal(t, 200*time.Second, done)
			rec := finishOf(t, r, "j/m3")
			assert.Equal(t, done, rec.Finish)
			// The three others each ran once, node-local; the backup's run is counted too.
			assert.Equal(t, 5, r.Summary.NoInput)
		})
	}
}

// On the thesis' heterogeneous cluster, every policy of the speculation and placement
// comparisons finishes every job, deterministically; backups won never exceed those
// launched.
func TestSpeculationThesisWorkload(t *testing.T) {
	mix, err := workload.ThesisExperiment(1)
	require.NoError(t, err)
	w, err := workload.Thesis(rand.New(rand.NewPCG(1, 2)), mix, workload.WithScale(0.02))
	require.NoError(t, err)
	cl, err := workload.ThesisCluster()
	require.NoError(t, err)
	for _, p := range append(Speculations(), FairPreRelease()) {
		t.Run(p.Name, func(t *testing.T) {
			a, err := Run(&w, &cl, p)
			require.NoError(t, err)
			b, err := Run(&w, &cl, p)
			require.NoError(t, err)
			assert.Equal(t, csvOf(t, a), csvOf(t, b))
			assert.Equal(t, len(w.Jobs), a.Summary.JobsFinished)
			assert.LessOrEqual(t, a.Summary.BackupsWon, a.Summary.Backups)
			if !p.Progress {
				assert.Zero(t, a.Summary.Backups)
			}
		})
	}
}
