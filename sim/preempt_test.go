package sim

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// preemptPolicy is DRF by request with the preemption cfg turns on and the gang
// timeout (0: the default), every queue guaranteed minShare.
func preemptPolicy(cfg *finegrain.PreemptionConfig, minShare float64, gangTimeout time.Duration) Policy {
	opts := []finegrain.Option{finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.DRF{})}
	if cfg != nil {
		opts = append(opts, finegrain.WithPreemption(*cfg))
	}
	if gangTimeout > 0 {
		opts = append(opts, finegrain.WithGangTimeout(gangTimeout))
	}
	p := Policy{Name: "preempt", Options: opts}
	if minShare > 0 {
		p.Queue = func(string, int) []fairness.Option { return []fairness.Option{fairness.MinShare(minShare)} }
	}
	return p
}

// memJob is a job of map tasks that each use, and declare, 100 milli-cores and mem for
// d, at priority prio.
func memJob(id, queue string, submit time.Duration, prio int, mem int64, d ...time.Duration) workload.Job {
	var ps []stage.Profile
	for _, x := range d {
		ps = append(ps, oneStage(x, tuple(100, mem, 0, 0)))
	}
	j := handJob(id, queue, submit, tuple(100, mem, 0, 0), ps...)
	j.Priority = prio
	return j
}

// A low-priority task fills the node from 0 for 100 s; a high-priority one that needs
// the same memory arrives at 10 s. Without preemption it waits 90 s; with priority
// preemption the low one is evicted at 10 s — 10 s of run lost, charged to it — the
// high one runs 10–20 s and the low one runs again, 20–120 s. Pull and push alike.
func TestPriorityPreemptionChargesLostWork(t *testing.T) {
	w := workload.Workload{Name: "prio", Jobs: []workload.Job{
		memJob("low", "q", 0, 0, 3*gib, 100*time.Second),
		memJob("high", "q", 10*time.Second, 10, 3*gib, 10*time.Second),
	}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	for _, mode := range []Mode{Pull, Push} {
		t.Run(mode.String(), func(t *testing.T) {
			r, err := Run(&w, &cl, preemptPolicy(nil, 0, 0), WithMode(mode), WithTaskRecords())
			require.NoError(t, err)
			assert.Equal(t, 100*time.Second, finishOf(t, r, "high/m0").Start, "without preemption the high task waits")
			assert.Zero(t, r.Summary.Preemptions)
			assert.Empty(t, r.Evictions)

			r, err = Run(&w, &cl, preemptPolicy(&finegrain.PreemptionConfig{Priority: true}, 0, 0), WithMode(mode), WithTaskRecords())
			require.NoError(t, err)
			high, low := finishOf(t, r, "high/m0"), finishOf(t, r, "low/m0")
			assert.Equal(t, 10*time.Second, high.Start)
			assert.Equal(t, 20*time.Second, high.Finish)
			assert.Equal(t, 20*time.Second, low.Start, "the evicted task runs again when the node is free")
			assert.Equal(t, 120*time.Second, low.Finish)
			assert.Equal(t, 1, low.Evictions)
			assert.Equal(t, 10*time.Second, low.Lost)
			assert.Zero(t, high.Evictions)
			assert.Zero(t, low.Kills, "an eviction is not a kill")

			s := r.Summary
			assert.Equal(t, 1, s.Preemptions)
			assert.Zero(t, s.Reclaims)
			assert.Equal(t, 10*time.Second, s.PreemptedWork)
			assert.Equal(t, 3, s.Placements, "two tasks and one rerun")
			assert.Zero(t, s.OOMKills)
			require.Len(t, r.Evictions, 1)
			assert.Equal(t, EvictionRecord{At: 10 * time.Second, Task: "low/m0", Job: "low", Node: "n0", For: "high/m0",
				Reason: finegrain.Preempted, Lost: 10 * time.Second}, r.Evictions[0])
			assert.Equal(t, 1, r.Jobs[0].Evictions)
			assert.Equal(t, 10*time.Second, r.Jobs[0].Lost)
			var b bytes.Buffer
			require.NoError(t, r.WriteEvictionsCSV(&b, true))
			assert.Equal(t, "policy,at_s,task,job,node,reason,for,lost_s\npreempt,10.000,low/m0,low,n0,preempted,high/m0,10.000\n", b.String())
			assert.Equal(t, 10, r.Jobs[1].Priority)
			assert.Equal(t, 120*time.Second, r.Summary.Makespan)
		})
	}
}

// Two queues guaranteed half the node each (DRF's dominant share). Queue a fills the
// node at 0 with two tasks; queue b's task arrives at 10 s and fits nowhere. Its
// queue is below its guarantee, so after the reclaim delay (5 s) one of a's tasks is
// evicted for it (Reclaimed), having run 15 s; a's other task is spared, as a stays at
// its guarantee.
func TestGuaranteeReclaim(t *testing.T) {
	w := workload.Workload{Name: "reclaim", Jobs: []workload.Job{
		memJob("a", "qa", 0, 0, 2*gib, 100*time.Second, 100*time.Second),
		memJob("b", "qb", 10*time.Second, 0, 2*gib, 10*time.Second),
	}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	cfg := &finegrain.PreemptionConfig{Guarantees: true, ReclaimDelay: 5 * time.Second}
	for _, mode := range []Mode{Pull, Push} {
		t.Run(mode.String(), func(t *testing.T) {
			r, err := Run(&w, &cl, preemptPolicy(cfg, 0.5, 0), WithMode(mode), WithTaskRecords())
			require.NoError(t, err)
			b := finishOf(t, r, "b/m0")
			assert.Equal(t, 15*time.Second, b.Start, "after the reclaim delay")
			assert.Equal(t, 1, r.Summary.Reclaims)
			assert.Zero(t, r.Summary.Preemptions)
			assert.Equal(t, 15*time.Second, r.Summary.PreemptedWork)
			require.Len(t, r.Evictions, 1)
			e := r.Evictions[0]
			assert.Equal(t, finegrain.Reclaimed, e.Reason)
			assert.Equal(t, "b/m0", e.For)
			victim := finishOf(t, r, e.Task)
			assert.Equal(t, 1, victim.Evictions)
			assert.Equal(t, 15*time.Second, victim.Lost)
			assert.Equal(t, b.Finish, victim.Start, "the victim runs again when b's task ends")
			assert.Equal(t, 1, r.Jobs[0].Evictions)
			assert.Equal(t, 4, r.Summary.Placements)
		})
	}
}

// A gang of two tasks that each need half the node arrives while another job holds
// half of it until 30 s. One member fits at once but must not run alone: it waits,
// reserved, and both start together at 30 s (in pull mode they come back in one
// heartbeat; in push mode one from Place, the other from Permitted).
func TestGangStartsTogether(t *testing.T) {
	g := memJob("g", "q", time.Second, 0, 2*gib, 10*time.Second, 10*time.Second)
	g.MinMember = 2
	w := workload.Workload{Name: "gang", Jobs: []workload.Job{memJob("a", "q", 0, 0, 2*gib, 30*time.Second), g}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	for _, mode := range []Mode{Pull, Push} {
		t.Run(mode.String(), func(t *testing.T) {
			r, err := Run(&w, &cl, preemptPolicy(nil, 0, 0), WithMode(mode), WithTaskRecords())
			require.NoError(t, err)
			m0, m1 := finishOf(t, r, "g/m0"), finishOf(t, r, "g/m1")
			assert.Equal(t, 30*time.Second, m0.Start)
			assert.Equal(t, 30*time.Second, m1.Start)
			assert.Equal(t, 40*time.Second, m0.Finish)
			assert.Equal(t, 1, r.Summary.GangGathers)
			assert.Zero(t, r.Summary.PartialGangs)
			assert.Equal(t, 3, r.Summary.Placements)
			assert.Equal(t, 2, r.Jobs[1].MinMember)
			assert.Equal(t, 30*time.Second, r.Jobs[1].FirstStart, "the job starts when its gang does")
		})
	}
	// Without the gang, the free half is used at once.
	w.Jobs[1].MinMember = 0
	r, err := Run(&w, &cl, preemptPolicy(nil, 0, 0), WithTaskRecords())
	require.NoError(t, err)
	assert.Equal(t, time.Second, finishOf(t, r, "g/m0").Start)
	assert.Zero(t, r.Summary.GangGathers)
}

// A gang that cannot gather before its wait times out (10 s) is rolled back by the
// scheduler, silently; the simulator sees its members pending again (push mode asks
// State), and they are placed, together, once the node frees at 100 s.
func TestGangTimeoutRollsBack(t *testing.T) {
	g := memJob("g", "q", time.Second, 0, 2*gib, 10*time.Second, 10*time.Second)
	g.MinMember = 2
	w := workload.Workload{Name: "gang", Jobs: []workload.Job{memJob("a", "q", 0, 0, 2*gib, 100*time.Second), g}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	for _, mode := range []Mode{Pull, Push} {
		t.Run(mode.String(), func(t *testing.T) {
			r, err := Run(&w, &cl, preemptPolicy(nil, 0, 10*time.Second), WithMode(mode), WithTaskRecords())
			require.NoError(t, err)
			m0, m1 := finishOf(t, r, "g/m0"), finishOf(t, r, "g/m1")
			assert.Equal(t, m0.Start, m1.Start, "together")
			assert.GreaterOrEqual(t, m0.Start, 100*time.Second, "not before the node frees")
			assert.Less(t, m0.Start, 121*time.Second, "within two timeouts of it")
			assert.Equal(t, 1, r.Summary.GangGathers)
			assert.Zero(t, r.Summary.PartialGangs)
			assert.Equal(t, 3, r.Summary.Placements)
		})
	}
}

// A high-priority gang under priority preemption, on a node that low-priority tasks
// fill: whatever the scheduler does for it (it may preempt, or wait for room), the gang
// starts whole, every task finishes once, and every eviction is charged once.
func TestGangUnderPreemptionStartsWhole(t *testing.T) {
	g := memJob("g", "q", 5*time.Second, 10, 2*gib, 10*time.Second, 10*time.Second)
	g.MinMember = 2
	w := workload.Workload{Name: "gang-prio", Jobs: []workload.Job{
		memJob("low", "q", 0, 0, 2*gib, 60*time.Second, 60*time.Second), g}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	for _, mode := range []Mode{Pull, Push} {
		t.Run(mode.String(), func(t *testing.T) {
			r, err := Run(&w, &cl, preemptPolicy(&finegrain.PreemptionConfig{Priority: true}, 0, 0), WithMode(mode), WithTaskRecords())
			require.NoError(t, err)
			m0, m1 := finishOf(t, r, "g/m0"), finishOf(t, r, "g/m1")
			assert.Equal(t, m0.Start, m1.Start, "together")
			assert.Zero(t, r.Summary.PartialGangs)
			assert.Equal(t, 1, r.Summary.GangGathers)
			var lost time.Duration
			for _, e := range r.Evictions {
				assert.Equal(t, "low", e.Job)
				lost += e.Lost
			}
			assert.Equal(t, r.Summary.PreemptedWork, lost)
			assert.Equal(t, lost, r.Jobs[0].Lost)
			require.NoError(t, conserved(&w, r))
		})
	}
}

// moving wraps the reference scheduler and reports the evictions of its heartbeat
// decisions in Decision.Evicted instead of with the assignments they were made for —
// as it does when the preemptor does not start in the heartbeat (a gang member kept
// waiting, a task refused after all).
type moving struct{ *finegrain.Scheduler }

func (m moving) Heartbeat(node string, now time.Duration) (finegrain.Decision, error) {
	d, err := m.Scheduler.Heartbeat(node, now)
	for i := range d.Assignments {
		d.Evicted = append(d.Evicted, d.Assignments[i].Evicted...)
		d.Assignments[i].Evicted = nil
	}
	return d, err
}

// Evictions reported with the Decision rather than an assignment are carried out the
// same way: the victim stops before the preemptor starts (it is not killed by the
// memory overrun the two would make together), and is charged its lost run time once.
func TestEvictionsWithTheDecision(t *testing.T) {
	w := workload.Workload{Name: "prio", Jobs: []workload.Job{
		memJob("low", "q", 0, 0, 3*gib, 100*time.Second),
		memJob("high", "q", 10*time.Second, 10, 3*gib, 10*time.Second),
	}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	p := Policy{Name: "moving", New: func(schema *resource.Schema) (Scheduler, error) {
		s, err := finegrain.New(schema, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
		return moving{s}, err
	}}
	r, err := Run(&w, &cl, p, WithTaskRecords())
	require.NoError(t, err)
	high, low := finishOf(t, r, "high/m0"), finishOf(t, r, "low/m0")
	assert.Equal(t, 10*time.Second, high.Start)
	assert.Zero(t, high.Kills, "the victim stopped before the preemptor started")
	assert.Equal(t, 20*time.Second, low.Start)
	assert.Equal(t, 1, low.Evictions)
	assert.Equal(t, 10*time.Second, low.Lost)
	assert.Equal(t, 1, r.Summary.Preemptions)
	assert.Zero(t, r.Summary.OOMKills)
	require.NoError(t, conserved(&w, r))
}

// A gang larger than its map tasks could never gather: the workload is refused.
func TestGangLargerThanItsMapsRefused(t *testing.T) {
	g := memJob("g", "q", 0, 0, gib, time.Second)
	g.MinMember = 2
	w := workload.Workload{Name: "bad", Jobs: []workload.Job{g}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	_, err := Run(&w, &cl, FIFO())
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "MinMember")
}

// lying wraps the reference scheduler and edits its heartbeat decisions, to check
// that the simulator refuses evictions that break the contract.
type lying struct {
	*finegrain.Scheduler
	edit func(d *finegrain.Decision)
}

func (l *lying) Heartbeat(node string, now time.Duration) (finegrain.Decision, error) {
	d, err := l.Scheduler.Heartbeat(node, now)
	if err == nil {
		l.edit(&d)
	}
	return d, err
}

func TestBadEvictionsRefused(t *testing.T) {
	w := workload.Workload{Name: "prio", Jobs: []workload.Job{
		memJob("low", "q", 0, 0, 3*gib, 100*time.Second),
		memJob("high", "q", 10*time.Second, 10, 3*gib, 10*time.Second),
	}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	for _, tc := range []struct {
		name, want string
		edit       func(d *finegrain.Decision)
	}{
		{"unknown task", "eviction of unknown task \"nope\"", func(d *finegrain.Decision) {
			d.Evicted = append(d.Evicted, finegrain.Eviction{Task: "nope", Node: "n0", Reason: finegrain.Preempted})
		}},
		{"not placed", "eviction of task \"high/m0\" at 0s, which is not placed", func(d *finegrain.Decision) {
			if d.At == 0 {
				d.Evicted = append(d.Evicted, finegrain.Eviction{Task: "high/m0", Node: "n0", Reason: finegrain.Preempted})
			}
		}},
		{"twice", "task \"low/m0\" evicted twice", func(d *finegrain.Decision) {
			for i := range d.Assignments {
				if ev := d.Assignments[i].Evicted; len(ev) > 0 {
					d.Evicted = append(d.Evicted, ev...)
				}
			}
		}},
		{"wrong node", "eviction of task \"low/m0\" from node \"n9\"", func(d *finegrain.Decision) {
			for i := range d.Assignments {
				for k := range d.Assignments[i].Evicted {
					d.Assignments[i].Evicted[k].Node = "n9"
				}
			}
		}},
		{"no reason", "for reason", func(d *finegrain.Decision) {
			for i := range d.Assignments {
				for k := range d.Assignments[i].Evicted {
					d.Assignments[i].Evicted[k].Reason = finegrain.NoRoom
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Name: "lying", New: func(schema *resource.Schema) (Scheduler, error) {
				s, err := finegrain.New(schema, finegrain.WithPrediction(false), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
				return &lying{Scheduler: s, edit: tc.edit}, err
			}}
			_, err := Run(&w, &cl, p)
			require.ErrorIs(t, err, ErrScheduler)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// Push mode retries pending tasks higher job priority first: when the node frees at
// 10 s, the high-priority task that arrived later goes before the low job's second
// task (it was submitted earlier).
func TestPushRetriesByPriority(t *testing.T) {
	w := workload.Workload{Name: "order", Jobs: []workload.Job{
		memJob("low", "q", 0, 0, 3*gib, 10*time.Second, 10*time.Second),
		memJob("high", "q", time.Second, 10, 3*gib, 10*time.Second),
	}}
	cl := oneNode(tuple(4000, 4*gib, 100<<20, 100<<20))
	r, err := Run(&w, &cl, FIFO(), WithMode(Push), WithTaskRecords())
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, finishOf(t, r, "high/m0").Start)
	assert.Equal(t, 20*time.Second, finishOf(t, r, "low/m1").Start)

	// With equal priorities, submission order decides.
	w.Jobs[1].Priority = 0
	r, err = Run(&w, &cl, FIFO(), WithMode(Push), WithTaskRecords())
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, finishOf(t, r, "low/m1").Start)
	assert.Equal(t, 20*time.Second, finishOf(t, r, "high/m0").Start)
}

// A scenario where priority preemption across queues took a queue below its guarantee
// and guarantee reclaim took it back, in turn, every few seconds (1,199 evictions in
// an hour, no job finished): with guarantees on, priority preemption now keeps other
// queues at their guarantee too.
func TestPreemptionKindsDoNotTakeTurns(t *testing.T) {
	sc := drawPreemptScenario(9054303205458119762)
	r, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithTaskRecords())...)
	require.NoError(t, err)
	require.NoError(t, conserved(&sc.w, r))
	assert.Less(t, r.Summary.Preemptions+r.Summary.Reclaims, 10)
}

// A push-mode run whose only pending work was a gang kept waiting stalled for good:
// nothing was placed, so the scheduler never saw the wait end (now the retry round
// lets it, Scheduler.ExpirePermits), and the gang's three waiting members could not
// all start together where the two it needed could (now those two start).
func TestPushGangWaitEndsWithTime(t *testing.T) {
	sc := drawPreemptScenario(7063967560076197784)
	r, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithTaskRecords())...)
	require.NoError(t, err)
	require.NoError(t, conserved(&sc.w, r))
}
