package finegrain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/speculate"
)

// stragglerCluster is five one-task nodes running job j's four tasks t0–t3 on n0–n3
// from 0 s (n4 is free): t0–t2 finished at 50, 55 and 60 s, t3 has reported 20%
// progress at 100 s — a straggler by eq. 3.3 that has run longer than LATE's minimum.
func stragglerCluster(t *testing.T, sp speculate.Speculator) *finegrain.Scheduler {
	t.Helper()
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSpeculation(sp),
		finegrain.WithUnresolvableAccepted(true))
	for i := 0; i < 5; i++ {
		require.NoError(t, s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Rack: "r", Capacity: schema.MustTuple(1000, gib)}))
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	for i := 0; i < 4; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("t%d", i), Job: "j", Request: schema.MustTuple(1000, gib)}))
	}
	for i := 0; i < 4; i++ {
		d, err := s.Heartbeat(fmt.Sprintf("n%d", i), 0)
		require.NoError(t, err)
		require.Len(t, d.Assignments, 1)
		require.Equal(t, fmt.Sprintf("t%d", i), d.Assignments[0].Task)
	}
	for i, at := range []time.Duration{50, 55, 60} {
		require.NoError(t, s.Finished(fmt.Sprintf("t%d", i), at*time.Second, nil))
	}
	require.NoError(t, s.Progress("t3", 0.2, 100*time.Second))
	return s
}

// backupOnN4 runs the heartbeat of free node n4 at 100 s and returns its one backup.
func backupOnN4(t *testing.T, s *finegrain.Scheduler) finegrain.Assignment {
	t.Helper()
	d, err := s.Heartbeat("n4", 100*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	return d.Assignments[0]
}

func TestSpeculationBacksUpTheStraggler(t *testing.T) {
	for _, name := range []string{"LATE", "PRRL"} {
		t.Run(name, func(t *testing.T) {
			var sp speculate.Speculator
			var err error
			if name == "LATE" {
				sp, err = speculate.NewLATE()
			} else {
				sp, err = speculate.NewPRRL()
			}
			require.NoError(t, err)
			s := stragglerCluster(t, sp)
			a := backupOnN4(t, s)
			assert.Equal(t, "t3#backup", a.Task)
			assert.Equal(t, finegrain.BackupID("t3"), a.Task)
			assert.Equal(t, "t3", a.BackupOf)
			assert.Equal(t, "n4", a.Node)
			st, ok := s.TaskState(a.Task)
			assert.True(t, ok)
			assert.Equal(t, finegrain.Running, st)
			_, running, _, _ := s.Counts()
			assert.Equal(t, 1, running, "the task and its backup count once")
			// A task has one backup at a time: the free n0 gets none.
			d, err := s.Heartbeat("n0", 101*time.Second)
			require.NoError(t, err)
			assert.Empty(t, d.Assignments)
		})
	}
}

func TestSpeculationOutcomes(t *testing.T) {
	late, err := speculate.NewLATE()
	require.NoError(t, err)
	at := 150 * time.Second
	for _, tc := range []struct {
		name string
		act  func(s *finegrain.Scheduler) error
		// state of t3 after, and whether n3 (the task's node) and n4 (the backup's)
		// are empty.
		state          finegrain.TaskState
		n3Free, n4Free bool
		backupGone     bool
	}{
		{"backup wins", func(s *finegrain.Scheduler) error { return s.Finished("t3#backup", at, nil) }, finegrain.Finished, true, true, true},
		{"task wins", func(s *finegrain.Scheduler) error { return s.Finished("t3", at, nil) }, finegrain.Finished, true, true, true},
		{"backup fails", func(s *finegrain.Scheduler) error { return s.Failed("t3#backup", at) }, finegrain.Running, false, true, true},
		{"backup cancelled", func(s *finegrain.Scheduler) error { return s.Cancel("t3#backup", at) }, finegrain.Running, false, true, true},
		{"backup progress ignored", func(s *finegrain.Scheduler) error { return s.Progress("t3#backup", 0.5, at) }, finegrain.Running, false, false, false},
		{"task fails", func(s *finegrain.Scheduler) error { return s.Failed("t3", at) }, finegrain.Pending, true, true, true},
		{"task cancelled", func(s *finegrain.Scheduler) error { return s.Cancel("t3", at) }, finegrain.Cancelled, true, true, true},
		{"backup's node removed", func(s *finegrain.Scheduler) error {
			ids, err := s.RemoveNode("n4", at)
			if len(ids) != 0 {
				return fmt.Errorf("requeued %v", ids)
			}
			return err
		}, finegrain.Running, false, true, true},
		{"task's node removed", func(s *finegrain.Scheduler) error {
			ids, err := s.RemoveNode("n3", at)
			if len(ids) != 1 || ids[0] != "t3" {
				return fmt.Errorf("requeued %v", ids)
			}
			return err
		}, finegrain.Pending, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stragglerCluster(t, late)
			backupOnN4(t, s)
			require.NoError(t, tc.act(s))
			st, ok := s.TaskState("t3")
			require.True(t, ok)
			assert.Equal(t, tc.state, st)
			_, gone := s.TaskState("t3#backup")
			assert.Equal(t, tc.backupGone, !gone)
			for node, want := range map[string]bool{"n3": tc.n3Free, "n4": tc.n4Free} {
				free, err := s.NodeFree(node, at)
				if err != nil {
					continue // removed
				}
				assert.Equal(t, want, free == schema.MustTuple(1000, gib), node)
			}
			p, r, f, c := s.Counts()
			assert.Equal(t, 4, p+r+f+c)
		})
	}
}

// A backup that wins counts on its node's rate (eq. 3.5).
func TestSpeculationBackupWinCountsOnItsNode(t *testing.T) {
	late, err := speculate.NewLATE()
	require.NoError(t, err)
	s := stragglerCluster(t, late)
	backupOnN4(t, s)
	_, ok := s.Runtime().NodeRate("n4")
	assert.False(t, ok)
	require.NoError(t, s.Finished("t3#backup", 140*time.Second, nil))
	r, ok := s.Runtime().NodeRate("n4")
	require.True(t, ok)
	assert.InDelta(t, 1.0/40, r.Mean, 1e-12)
	_, ok = s.Runtime().NodeRate("n3")
	assert.False(t, ok, "the losing run does not count")
}

// A backup that failed on a node is not tried there again; a job with pending tasks
// gets no backup (a new task comes first).
func TestSpeculationRules(t *testing.T) {
	late, err := speculate.NewLATE()
	require.NoError(t, err)
	s := stragglerCluster(t, late)
	backupOnN4(t, s)
	require.NoError(t, s.Failed("t3#backup", 120*time.Second))
	d, err := s.Heartbeat("n4", 121*time.Second)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments, "not again where it failed")
	d, err = s.Heartbeat("n0", 121*time.Second)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, "t3", d.Assignments[0].BackupOf)

	s = stragglerCluster(t, late)
	require.NoError(t, s.Submit(finegrain.Task{ID: "big", Job: "j", Request: schema.MustTuple(1000, 2*gib)}))
	d, err = s.Heartbeat("n4", 100*time.Second)
	require.NoError(t, err)
	assert.Empty(t, d.Assignments, "the job has an unstarted task")

	// nil switches speculation off, like the nil pointer of a speculator.
	for _, sp := range []speculate.Speculator{nil, (*speculate.LATE)(nil)} {
		s, err := finegrain.New(schema, finegrain.WithSpeculation(late), finegrain.WithSpeculation(sp))
		require.NoError(t, err)
		assert.NotContains(t, s.Plugins()["Pass"], "Speculation")
	}
}
