package cluster_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// A pending task's demand class is found through what its demand record remembers
// (State.pendingClass) as by its ClassID: tasks of two jobs sharing two requests, four
// keys and a declared profile fail over and over (a task's failures are part of its
// class, past the size of the record's memory) or start and come back, and after each
// event every job's classes and the cluster's hold what a recount of the pending tasks'
// ClassOf gives.
func TestPendingClassMemoryProperties(t *testing.T) {
	props := gopter.NewProperties(params(t))
	props.Property("demand classes equal a recount through failures, starts and returns", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		s, err := cluster.New(schema)
		if err != nil {
			return err.Error()
		}
		if err := s.AddNode(cluster.NodeSpec{ID: "n0", Capacity: tup(1000, 1000, 1000, 1000, 1000, 1)}); err != nil {
			return err.Error()
		}
		var tasks []*cluster.TaskInfo
		declared := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 2)})
		for _, jid := range []string{"j0", "j1"} {
			if err := s.AddJob(cluster.JobSpec{ID: jid}); err != nil {
				return err.Error()
			}
			for i := range 6 {
				spec := cluster.TaskSpec{ID: fmt.Sprintf("%s-t%d", jid, i), Job: jid, Request: tup(int64(1+r.Intn(2)), 2, 0, 0, 0, 0),
					Key: predict.Key{Logic: []string{"map", "sort"}[r.Intn(2)], InputSize: int64(64 * (1 + r.Intn(2)))}}
				if r.Intn(6) == 0 {
					spec.Profile = declared
				}
				if err := s.Submit(spec); err != nil {
					return err.Error()
				}
				tk, _ := s.Task(spec.ID)
				tasks = append(tasks, tk)
			}
		}
		n, _ := s.Node("n0")
		for step := range 150 {
			tk := tasks[r.Intn(len(tasks))]
			if tk.State() == cluster.Pending {
				if err := s.Reserve(tk, n, cluster.Reservation{Hold: tk.RequestProfile(schema)}); err != nil {
					return err.Error()
				}
			}
			if tk.State() == cluster.Reserved {
				if err := s.Commit(tk); err != nil {
					return err.Error()
				}
			}
			switch r.Intn(4) {
			case 0: // stays running a while
			case 1:
				if err := s.Evict(tk); err != nil {
					return err.Error()
				}
			default: // fails: another class
				if err := s.Fail(tk); err != nil {
					return err.Error()
				}
			}
			if msg := recountClasses(s, tasks); msg != "" {
				return fmt.Sprintf("step %d, task %s (%d failures): %s", step, tk.ID(), tk.Failures(), msg)
			}
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
}

// recountClasses compares the jobs' and the cluster's demand classes with ClassOf of
// the pending tasks.
func recountClasses(s *cluster.State, tasks []*cluster.TaskInfo) string {
	want := map[string]map[cluster.ClassID]int{}
	all := map[cluster.ClassID]int{}
	for _, tk := range tasks {
		if tk.State() != cluster.Pending {
			continue
		}
		if want[tk.Job()] == nil {
			want[tk.Job()] = map[cluster.ClassID]int{}
		}
		want[tk.Job()][s.ClassOf(tk)]++
		all[s.ClassOf(tk)]++
	}
	for _, jid := range []string{"j0", "j1"} {
		j, _ := s.Job(jid)
		got := map[cluster.ClassID]int{}
		for _, c := range j.Classes() {
			got[c.ID] += c.N
		}
		if fmt.Sprint(got) != fmt.Sprint(want[jid]) && len(got)+len(want[jid]) > 0 {
			return fmt.Sprintf("job %s classes %v, recount %v", jid, got, want[jid])
		}
	}
	got := map[cluster.ClassID]int{}
	for c := range s.Classes() {
		got[c.ID] += c.N
		if s.ClassPending(c.ID) != c.N {
			return fmt.Sprintf("class %+v: ClassPending %d, N %d", c.ID, s.ClassPending(c.ID), c.N)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(all) && len(got)+len(all) > 0 {
		return fmt.Sprintf("cluster classes %v, recount %v", got, all)
	}
	return ""
}
