package cluster_test

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
)

func TestWithRetentionErrors(t *testing.T) {
	for name, r := range map[string]cluster.Retention{
		"negative tasks": {Tasks: -1, Jobs: 1},
		"negative jobs":  {Tasks: 1, Jobs: -1},
		"negative age":   {Tasks: 1, Jobs: 1, Age: -time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := cluster.New(schema, cluster.WithRetention(r))
			require.ErrorIs(t, err, cluster.ErrInvalid)
			assert.Nil(t, s)
			assert.ErrorContains(t, err, fmt.Sprintf("retention tasks %d, jobs %d, age %v", r.Tasks, r.Jobs, r.Age))
		})
	}
	assert.Equal(t, cluster.DefaultRetention, newState(t).Retention(), "bounded by default")
}

func TestRetentionForgetsTasksOldestFirst(t *testing.T) {
	s := newState(t, cluster.WithRetention(cluster.Retention{Tasks: 2, Jobs: math.MaxInt}))
	n := addNode(t, s, "n1", "")
	addJob(t, s, "j")
	ts := submit(t, s, task("a", "j", 1, 1), task("b", "j", 1, 1), task("c", "j", 1, 1), task("d", "j", 1, 1))
	for _, tk := range ts[:3] {
		place(t, s, tk, n, 0)
	}
	require.NoError(t, s.Finish(ts[0], time.Second))
	require.NoError(t, s.Cancel(ts[3], 0))
	require.NoError(t, s.Finish(ts[1], 2*time.Second))

	_, ok := s.Task("a")
	assert.False(t, ok, "the oldest ended task is forgotten once more than 2 are remembered")
	for _, id := range []string{"b", "d"} {
		_, ok := s.Task(id)
		assert.True(t, ok, id)
	}
	tasks, jobs := s.Remembered()
	assert.Equal(t, 2, tasks)
	assert.Equal(t, 0, jobs, "c still runs: the job is not complete")
	assert.Equal(t, 2, s.Count(cluster.Finished), "counts cover forgotten tasks")
	assert.Equal(t, 1, s.Count(cluster.Cancelled))

	assert.ErrorIs(t, s.Finish(ts[0], 3*time.Second), cluster.ErrUnknownTask, "an event for a forgotten task")
	require.NoError(t, s.Submit(task("a", "j", 1, 1)), "a forgotten ID may be submitted again")
	again, _ := s.Task("a")
	assert.Equal(t, cluster.Pending, again.State())
}

func TestRetentionForgetsCompletedJobs(t *testing.T) {
	s := newState(t, cluster.WithRetention(cluster.Retention{Tasks: 10, Jobs: 1}))
	var forgotten []string
	s.OnForget(func(j *cluster.JobInfo) {
		forgotten = append(forgotten, j.ID())
		_, ok := s.Job(j.ID())
		assert.True(t, ok, "the job is still readable while its forgetters are told")
	})
	n := addNode(t, s, "n1", "")
	empty := addJob(t, s, "empty")
	a, b, c := addJob(t, s, "a"), addJob(t, s, "b"), addJob(t, s, "c")
	ts := submit(t, s, task("a1", "a", 1, 1), task("b1", "b", 1, 1), task("c1", "c", 1, 1))
	place(t, s, ts[0], n, 0)
	require.NoError(t, s.Finish(ts[0], time.Second))
	assert.Empty(t, forgotten, "one completed job is remembered")

	// a is given more work: it is live again and leaves the completed list.
	more := submit(t, s, task("a2", "a", 1, 1))[0]
	require.NoError(t, s.Cancel(ts[1], 0))
	assert.Empty(t, forgotten)
	require.NoError(t, s.Cancel(ts[2], 0))
	assert.Equal(t, []string{"b"}, forgotten, "b completed before c")

	_, ok := s.Job("b")
	assert.False(t, ok)
	_, err := s.JobEntry("b")
	assert.Error(t, err, "its fairness entry went too")
	assert.ErrorIs(t, s.Submit(task("b2", "b", 1, 1)), cluster.ErrUnknownJob)
	assert.Nil(t, s.JobAt(b.Index()))
	assert.Equal(t, 3, s.NumJobs())
	assert.Equal(t, 4, s.JobSlots(), "empty, a, b, c")

	// A new job takes the forgotten job's index; b may be added again.
	d := addJob(t, s, "d")
	assert.Equal(t, b.Index(), d.Index())
	assert.Same(t, d, s.JobAt(d.Index()))
	b2 := addJob(t, s, "b")
	assert.Equal(t, 4, b2.Index())

	require.NoError(t, s.Cancel(more, 0))
	assert.Equal(t, []string{"b", "c"}, forgotten)
	for _, j := range []*cluster.JobInfo{empty, a} {
		got, ok := s.Job(j.ID())
		assert.True(t, ok, "%s: a job that never had a task, and the one completed job remembered, stay", j.ID())
		assert.Same(t, j, got)
	}
	_, ok = s.Job(c.ID())
	assert.False(t, ok)
}

func TestRetentionAge(t *testing.T) {
	s := newState(t, cluster.WithRetention(cluster.Retention{Tasks: 100, Jobs: 100, Age: 10 * time.Second}))
	n := addNode(t, s, "n1", "")
	addJob(t, s, "j")
	addJob(t, s, "k")
	ts := submit(t, s, task("a", "j", 1, 1), task("b", "k", 1, 1))
	place(t, s, ts[0], n, 0)
	place(t, s, ts[1], n, 0)
	s.Advance(time.Second)
	require.NoError(t, s.Finish(ts[0], time.Second))
	s.Advance(5 * time.Second)
	require.NoError(t, s.Finish(ts[1], 5*time.Second))

	s.Advance(11 * time.Second)
	_, ok := s.Task("a")
	assert.True(t, ok, "done for exactly 10 s: still remembered")
	s.Advance(11*time.Second + 1)
	_, ok = s.Task("a")
	assert.False(t, ok, "done for more than 10 s")
	_, ok = s.Job("j")
	assert.False(t, ok)
	_, ok = s.Task("b")
	assert.True(t, ok)
	_, ok = s.Job("k")
	assert.True(t, ok)
	s.Advance(time.Minute)
	tasks, jobs := s.Remembered()
	assert.Equal(t, [2]int{0, 0}, [2]int{tasks, jobs})
}

// A job that completes during a Walk is forgotten when the walk ends, not under it.
func TestRetentionWaitsForWalk(t *testing.T) {
	s := newState(t, cluster.WithRetention(cluster.Retention{Tasks: 0, Jobs: 0}))
	addNode(t, s, "n1", "")
	addJob(t, s, "a")
	addJob(t, s, "b")
	ts := submit(t, s, task("a1", "a", 1, 1), task("b1", "b", 1, 1))
	var seen []string
	s.Walk(func(j *cluster.JobInfo) bool {
		seen = append(seen, j.ID())
		for _, tk := range ts {
			if tk.Job() == j.ID() {
				require.NoError(t, s.Cancel(tk, 0))
			}
		}
		_, ok := s.Job(j.ID())
		assert.True(t, ok, "no job is forgotten during a walk")
		return true
	})
	assert.ElementsMatch(t, []string{"a", "b"}, seen)
	for _, id := range []string{"a", "b", "a1", "b1"} {
		_, okJ := s.Job(id)
		_, okT := s.Task(id)
		assert.False(t, okJ || okT, "%s is forgotten once the walk ends", id)
	}
}

// retentionModel is what the state should remember, given the events so far.
type retentionModel struct {
	keep     cluster.Retention
	clock    time.Duration
	ended    []string // ended tasks, oldest first
	endedAt  map[string]time.Duration
	idle     []string // completed jobs, oldest first
	doneAt   map[string]time.Duration
	live     map[string]int  // held jobs: their pending and running tasks
	tasks    map[string]bool // remembered tasks
	finished int
	forgot   []string // jobs forgotten, in order
}

func (m *retentionModel) old(at time.Duration) bool {
	return m.keep.Age > 0 && m.clock-at > m.keep.Age
}

func (m *retentionModel) retire() {
	for len(m.ended) > 0 && (len(m.ended) > m.keep.Tasks || m.old(m.endedAt[m.ended[0]])) {
		delete(m.tasks, m.ended[0])
		m.ended = m.ended[1:]
	}
	for len(m.idle) > 0 && (len(m.idle) > m.keep.Jobs || m.old(m.doneAt[m.idle[0]])) {
		m.forgot = append(m.forgot, m.idle[0])
		delete(m.live, m.idle[0])
		m.idle = m.idle[1:]
	}
}

func (m *retentionModel) taskEnded(id, job string, at time.Duration) {
	m.ended = append(m.ended, id)
	m.endedAt[id] = at
	if m.live[job]--; m.live[job] == 0 {
		m.idle = append(m.idle, job)
		m.doneAt[job] = at
	}
	m.retire()
}

// TestPropertyRetention drives a state with random submissions, placements,
// finishes, cancellations and clock moves under a random Retention, and checks after
// every event that it remembers exactly the tasks and jobs the model says, forgets
// jobs in completion order (telling OnForget), reuses job indexes, and never loses a
// live task.
func TestPropertyRetention(t *testing.T) {
	props := gopter.NewProperties(params(t))
	props.Property("the state remembers exactly what Retention keeps", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		keep := cluster.Retention{Tasks: r.Intn(6), Jobs: r.Intn(4)}
		if r.Intn(2) == 0 {
			keep.Age = time.Duration(1+r.Intn(5)) * time.Second
		}
		s, err := cluster.New(schema, cluster.WithRetention(keep))
		if err != nil {
			return err.Error()
		}
		if err := s.AddNode(cluster.NodeSpec{ID: "n", Capacity: tup(1<<40, 1<<40)}); err != nil {
			return err.Error()
		}
		n, _ := s.Node("n")
		m := &retentionModel{keep: keep, endedAt: map[string]time.Duration{}, doneAt: map[string]time.Duration{},
			live: map[string]int{}, tasks: map[string]bool{}}
		var told []string
		s.OnForget(func(j *cluster.JobInfo) { told = append(told, j.ID()) })
		var all []*cluster.TaskInfo // every task object ever submitted
		maxHeld, nextJob, nextTask := 0, 0, 0
		for step := 0; step < 120; step++ {
			var jobs []string
			for id := range m.live {
				jobs = append(jobs, id)
			}
			slices.Sort(jobs)
			var live []*cluster.TaskInfo
			for _, tk := range all {
				if st := tk.State(); m.tasks[tk.ID()] && (st == cluster.Pending || st == cluster.Running) {
					if got, _ := s.Task(tk.ID()); got == tk {
						live = append(live, tk)
					}
				}
			}
			switch k := r.Intn(10); {
			case k < 2 || len(jobs) == 0:
				id := fmt.Sprintf("j%d", nextJob)
				if len(m.forgot) > 0 && r.Intn(3) == 0 {
					id = m.forgot[r.Intn(len(m.forgot))] // a forgotten job added again
				}
				if _, held := m.live[id]; held {
					id = fmt.Sprintf("j%d", nextJob)
				}
				nextJob++
				if err := s.AddJob(cluster.JobSpec{ID: id}); err != nil {
					return fmt.Sprintf("step %d: add job %s: %v", step, id, err)
				}
				m.live[id] = 0
			case k < 5:
				job := jobs[r.Intn(len(jobs))]
				id := fmt.Sprintf("t%d", nextTask)
				nextTask++
				if err := s.Submit(task(id, job, 1, 1)); err != nil {
					return fmt.Sprintf("step %d: submit %s to %s: %v", step, id, job, err)
				}
				tk, _ := s.Task(id)
				all = append(all, tk)
				m.tasks[id] = true
				if m.live[job]++; m.live[job] == 1 {
					if i := slices.Index(m.idle, job); i >= 0 {
						m.idle = slices.Delete(m.idle, i, i+1)
					}
				}
			case k < 7 && len(live) > 0:
				tk := live[r.Intn(len(live))]
				if tk.State() == cluster.Pending {
					if err := s.Reserve(tk, n, held(tk, m.clock)); err != nil {
						return fmt.Sprintf("step %d: reserve %s: %v", step, tk.ID(), err)
					}
					if err := s.Commit(tk); err != nil {
						return err.Error()
					}
					break
				}
				at := m.clock + time.Duration(r.Intn(2))*time.Second
				if err := s.Finish(tk, at); err != nil {
					return fmt.Sprintf("step %d: finish %s: %v", step, tk.ID(), err)
				}
				m.finished++
				m.taskEnded(tk.ID(), tk.Job(), at)
			case k < 8 && len(live) > 0:
				tk := live[r.Intn(len(live))]
				if err := s.Cancel(tk, m.clock); err != nil {
					return fmt.Sprintf("step %d: cancel %s: %v", step, tk.ID(), err)
				}
				m.taskEnded(tk.ID(), tk.Job(), m.clock)
			default:
				m.clock += time.Duration(r.Intn(3000)) * time.Millisecond
				s.Advance(m.clock)
				if keep.Age > 0 {
					m.retire()
				}
			}
			if msg := checkRetention(s, m, all, told); msg != "" {
				return fmt.Sprintf("step %d (retention %+v): %s", step, keep, msg)
			}
			maxHeld = max(maxHeld, s.NumJobs())
			if s.JobSlots() > maxHeld {
				return fmt.Sprintf("step %d: %d job slots, at most %d jobs ever held at once", step, s.JobSlots(), maxHeld)
			}
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
}

func checkRetention(s *cluster.State, m *retentionModel, all []*cluster.TaskInfo, told []string) string {
	if !slices.Equal(told, m.forgot) {
		return fmt.Sprintf("OnForget told %v, model forgot %v", told, m.forgot)
	}
	tasks, jobs := s.Remembered()
	if tasks != len(m.ended) || jobs != len(m.idle) {
		return fmt.Sprintf("remembers %d tasks and %d jobs, model %d and %d", tasks, jobs, len(m.ended), len(m.idle))
	}
	if s.Count(cluster.Finished) != m.finished {
		return fmt.Sprintf("Count(Finished) %d, model %d", s.Count(cluster.Finished), m.finished)
	}
	for _, tk := range all {
		got, ok := s.Task(tk.ID())
		known := ok && got == tk
		if known != m.tasks[tk.ID()] {
			return fmt.Sprintf("task %s (%v): known %v, model %v", tk.ID(), tk.State(), known, m.tasks[tk.ID()])
		}
	}
	if s.NumJobs() != len(m.live) {
		return fmt.Sprintf("%d jobs held, model %d", s.NumJobs(), len(m.live))
	}
	for id := range m.live {
		j, ok := s.Job(id)
		if !ok || s.JobAt(j.Index()) != j {
			return fmt.Sprintf("job %s: held %v, JobAt its index %v", id, ok, ok && s.JobAt(j.Index()) == j)
		}
		if _, err := s.JobEntry(id); err != nil {
			return fmt.Sprintf("job %s has no fairness entry: %v", id, err)
		}
	}
	for _, id := range m.forgot {
		if _, held := m.live[id]; held {
			continue // added again
		}
		if _, ok := s.Job(id); ok {
			return fmt.Sprintf("forgotten job %s is still held", id)
		}
		if _, err := s.JobEntry(id); err == nil {
			return fmt.Sprintf("forgotten job %s keeps its fairness entry", id)
		}
	}
	return ""
}
