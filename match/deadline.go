package match

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Work is a task as the QoS checks see it: an ID, its (predicted) demand over time and
// an optional deadline.
type Work struct {
	// ID names the task in explanations.
	ID string
	// Profile is the task's demand over time, stages laid end to end from its start.
	Profile stage.Profile
	// Deadline is the time (on the timeline's clock) by which the task must finish;
	// 0 means no deadline. Negative deadlines are invalid.
	Deadline time.Duration
}

// Running is a task already placed on a server, started (or reserved to start) at
// Start; its profile is on the server's timeline.
type Running struct {
	Work
	// Start is when the task's first stage starts.
	Start time.Duration
}

// QoSCheck is Alg. 1's checkQoS: a constraint an allocation must pass besides fitting.
// Given server s, the task t about to start at start and the match result r, it
// returns r when the allocation may go ahead and otherwise a result saying why not
// (DeadlineMissed, or Invalid for malformed input). It is called only with results
// whose Code is OK; implementations may return r untouched when no check applies.
type QoSCheck interface {
	CheckQoS(s Server, start time.Duration, t Work, r Result) Result
}

// DeadlineCheck is FGM's default QoS check (docs/methods.md §3, eq. 15): assuming the
// allocation is in effect, every task on the server — those Running reports and the new
// one — must still meet its deadline under the resulting compression. It runs only when
// the new task would be compressed (r.Code == FitCompressed); otherwise nothing changes
// for the tasks already there and the check passes at once.
//
// A task's duration under compression is eq. 15, D = Σ Di/(1 − rci), where Di is stage
// i's uncompressed duration and rci the largest compression ratio over the
// compressible dimensions the stage demands, anywhere in its planned interval, with
// the new task's stages added to the timeline: on a dimension where demand D exceeds
// capacity C every task gets C/D of its demand, rc = (D − C)/D. Like the paper, the
// estimate keeps the planned stage intervals (it does not shift later stages by the
// stretch of earlier ones). Tasks are checked in the order Running returns them, the
// new task last; the first late one is reported.
type DeadlineCheck struct {
	// Running returns the tasks running or reserved on a server, whose profiles are on
	// its timeline. Tasks without a deadline may be left out. Nil means none.
	Running func(server string) []Running
}

// CheckQoS implements QoSCheck.
func (c DeadlineCheck) CheckQoS(s Server, start time.Duration, t Work, r Result) Result {
	if r.Code != FitCompressed {
		return r
	}
	if err := check(&s, start, &t.Profile); err != nil {
		return invalid(err)
	}
	if t.Deadline < 0 {
		return invalid(fieldErr("task "+t.ID+" deadline", t.Deadline, ErrBadTask))
	}
	var running []Running
	if c.Running != nil {
		running = c.Running(s.ID)
	}
	for _, rt := range running {
		if rt.Deadline < 0 {
			return invalid(fieldErr("task "+rt.ID+" deadline", rt.Deadline, ErrBadTask))
		}
		if rt.Deadline > 0 && rt.Profile.Len() == 0 {
			return invalid(fmt.Errorf("match: running task %q: %w", rt.ID, stage.ErrEmptyProfile))
		}
		if rt.Deadline > 0 && !s.Timeline.Schema().Equal(rt.Profile.Schema()) {
			return invalid(fmt.Errorf("match: running task %q: profile schema %v, server %q schema %v: %w",
				rt.ID, rt.Profile.Schema(), s.ID, s.Timeline.Schema(), resource.ErrSchemaMismatch))
		}
	}
	cand := placed{start: start, p: t.Profile}
	for _, rt := range running {
		if late, ok := lateness(s.Timeline, cand, rt); !ok {
			return late
		}
	}
	if late, ok := lateness(s.Timeline, cand, Running{Work: t, Start: start}); !ok {
		return late
	}
	return r
}

// placed is the new task: profile p from start.
type placed struct {
	start time.Duration
	p     stage.Profile
}

// demand returns the new task's demand at time t and until when it holds.
func (c placed) demand(t time.Duration) (resource.Tuple, time.Duration) {
	if t < c.start {
		return resource.Tuple{}, c.start
	}
	i := c.p.StageAt(t - c.start)
	if i < 0 {
		return resource.Tuple{}, stage.Forever
	}
	return c.p.Stage(i).Demand, stage.AddSat(c.start, c.p.Offset(i+1))
}

// lateness applies eq. 15 to task rt with the new task added; ok is false, with the
// explaining result, when rt would miss its deadline.
func lateness(tl *stage.Timeline, cand placed, rt Running) (Result, bool) {
	if rt.Deadline == 0 || rt.Profile.Len() == 0 {
		return Result{}, true
	}
	capacity := tl.Capacity()
	comp := tl.Schema().Compressible()
	finish := rt.Start
	first := -1
	for i := 0; i < rt.Profile.Len(); i++ {
		st := rt.Profile.Stage(i)
		from := stage.AddSat(rt.Start, rt.Profile.Offset(i))
		to := stage.AddSat(rt.Start, rt.Profile.Offset(i+1))
		rc := 0.0
		tl.Walk(from, to, func(seg stage.Segment) bool {
			for t := seg.Start; t < seg.End; {
				d, until := cand.demand(t)
				free := seg.Free.Sub(d)
				for k := range free {
					if comp.Has(k) && st.Demand[k] > 0 && free[k] < 0 {
						rc = max(rc, float64(-free[k])/float64(capacity[k]-free[k]))
					}
				}
				t = min(until, seg.End)
			}
			return true
		})
		if rc > 0 && first < 0 {
			first = i
		}
		var di time.Duration
		if rc >= 1 {
			di = stage.Forever
		} else {
			di, _ = resource.IdealDuration(st.Duration, rc) // rc in [0, 1), Duration > 0: no error
		}
		finish = stage.AddSat(finish, di)
	}
	if finish <= rt.Deadline {
		return Result{}, true
	}
	return Result{Code: DeadlineMissed, Stage: first, Dim: -1, Task: rt.ID, Finish: finish, Deadline: rt.Deadline, schema: tl.Schema()}, false
}

// TheoreticalDuration is eq. 15: the duration of a task whose stage i runs under
// compression ratio ratios[i] (the largest over its compressible dimensions),
// Σ Di/(1 − rci). There must be one ratio per stage, each a number in [0, 1). The sum
// saturates at stage.Forever.
func TheoreticalDuration(p stage.Profile, ratios []float64) (time.Duration, error) {
	if p.Len() == 0 {
		return 0, fmt.Errorf("match: %w", stage.ErrEmptyProfile)
	}
	if len(ratios) != p.Len() {
		return 0, fieldErr("ratios", fmt.Sprintf("%d ratios for %d stages", len(ratios), p.Len()), resource.ErrInvalidRatio)
	}
	var total time.Duration
	for i, rc := range ratios {
		d, err := resource.IdealDuration(p.Stage(i).Duration, rc)
		if err != nil {
			return 0, fieldErr(fmt.Sprintf("ratios[%d]", i), rc, resource.ErrInvalidRatio)
		}
		total = stage.AddSat(total, d)
	}
	return total, nil
}

// ResultDuration is eq. 15 for a task matched with result r: its duration under the
// compression r reports per stage (Result.StageRatio). It fails on an empty profile,
// when r is not a fit or when it describes a different number of stages than p has.
func ResultDuration(p stage.Profile, r Result) (time.Duration, error) {
	if p.Len() == 0 {
		return 0, fmt.Errorf("match: %w", stage.ErrEmptyProfile)
	}
	if !r.Code.OK() {
		return 0, fmt.Errorf("match: result %v is not a fit: %w", r.Code, ErrNoRoom)
	}
	if r.nstages != p.Len() {
		return 0, fieldErr("result", fmt.Sprintf("%d stages for a profile of %d", r.nstages, p.Len()), ErrBadTask)
	}
	var total time.Duration
	for i := 0; i < p.Len(); i++ {
		rc := r.StageRatio(i)
		var d time.Duration
		if rc >= 1 {
			d = stage.Forever
		} else {
			d, _ = resource.IdealDuration(p.Stage(i).Duration, rc)
		}
		total = stage.AddSat(total, d)
	}
	return total, nil
}
