package sim

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// This file runs the scale-up rounds of a policy with ScaleUp (docs/methods.md §11)
// and carries their actions out on the running tasks: the execution model of a resize
// (package doc, "Scale-up").

// DefaultScaleUpEvery is how often a policy with ScaleUp runs a scale-up round: every
// 5 s of simulated time (WithScaleUpEvery), the first at 5 s.
const DefaultScaleUpEvery = 5 * time.Second

// WithScaleUpEvery sets how often a policy with ScaleUp runs a scale-up round;
// positive, at most MaxPeriod. Default DefaultScaleUpEvery. Policies without ScaleUp
// ignore it.
func WithScaleUpEvery(d time.Duration) Option {
	return func(c *config) error {
		if err := period("scale-up every", d); err != nil {
			return err
		}
		c.scaleUpEvery = d
		return nil
	}
}

// ResizeModel is how a run's speed follows the allocation a scale-up round resized
// (package doc, "Scale-up"). Both grow a straggler the same way; they differ on a
// shrunk batch task.
type ResizeModel uint8

const (
	// Elastic (the default): on a compressible dimension a run's speed follows its
	// allocation relative to what it held before the first change, f = held now /
	// held then, both ways — the reading speculate.ScaleUp sizes growth by (work
	// conserved, eq. 4). Shrunk, a run is compressed by rc = 1 − f (eq. 5) whatever it
	// used of the allocation it lost.
	Elastic ResizeModel = iota
	// CappedShrink grows a run as Elastic does, but takes a shrunk allocation as a cap
	// on what the run gets (a CPU quota): it is compressed only while it uses more
	// than it holds, by rc = 1 − held/use (eq. 1), so a reclaim of what it did not
	// use costs it nothing. An ablation of Elastic.
	CappedShrink
)

func (m ResizeModel) String() string {
	switch m {
	case Elastic:
		return "elastic"
	case CappedShrink:
		return "capped-shrink"
	}
	return fmt.Sprintf("ResizeModel(%d)", uint8(m))
}

// ParseResizeModel is the inverse of ResizeModel.String.
func ParseResizeModel(s string) (ResizeModel, error) {
	switch s {
	case "elastic":
		return Elastic, nil
	case "capped-shrink":
		return CappedShrink, nil
	}
	return 0, fieldErr("resize model", s, ErrInvalidOption)
}

// WithResizeModel sets how a resized run's speed follows its allocation (policies
// with ScaleUp); default Elastic.
func WithResizeModel(m ResizeModel) Option {
	return func(c *config) error {
		if m != Elastic && m != CappedShrink {
			return fieldErr("resize model", m, ErrInvalidOption)
		}
		c.resizeModel = m
		return nil
	}
}

// resize is what the scale-up rounds changed of a run's allocation: what the task held
// before the first change, and what it holds now. A run without one was never resized
// and runs by the rest of the execution model alone.
type resize struct {
	orig, held resource.Tuple
}

// scaleUpRound runs one scale-up round at now and carries out its actions, each on a
// running task: a resize of its allocation (Reclaim, Preempt, Expand, Restore) or a
// move to another node (Move), on every node touched at once, after the round. An
// action on a task that is not running where the round says is a scheduler error.
func (s *Sim) scaleUpRound() error {
	r, err := s.sched.(scaleUpper).ScaleUp(s.now) // New checked it
	if err != nil {
		return fmt.Errorf("sim: scale-up round at %v: %w: %w", s.now, ErrScheduler, err)
	}
	s.m.scaleRound(&r)
	if len(r.Actions) == 0 {
		return nil
	}
	touched := make([]bool, len(s.nodes))
	for i := range r.Actions {
		a := &r.Actions[i]
		ti, ok := s.byID[a.Task]
		if !ok || s.tasks[ti].state != tRunning || s.tasks[ti].exec == nil {
			return fmt.Errorf("sim: scale-up %v of task %q at %v, which is not running: %w", a.Kind, a.Task, s.now, ErrScheduler)
		}
		t := &s.tasks[ti]
		from := s.nodes[t.node]
		at := a.Node
		if a.Kind == speculate.Move {
			at = a.From
		}
		if from.spec.ID != at {
			return fmt.Errorf("sim: scale-up %v of task %q on node %q at %v, but it runs on %q: %w", a.Kind, a.Task, at, s.now, from.spec.ID, ErrScheduler)
		}
		x := t.exec
		s.advance(from, s.now)
		touched[from.idx] = true
		if a.Kind == speculate.Move {
			ni, ok := s.nodeIdx[a.Node]
			if !ok || !s.nodes[ni].up {
				return fmt.Errorf("sim: scale-up move of task %q to node %q at %v, which is not up: %w", a.Task, a.Node, s.now, ErrScheduler)
			}
			to := s.nodes[ni]
			s.advance(to, s.now)
			s.move(t, x, from, to)
			touched[ni] = true
		}
		s.resizeRun(t, x, a)
	}
	for i, n := range s.nodes {
		if touched[i] && n.up {
			if err := s.reschedule(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// move carries run x of task t from node from to node to (both advanced to now), as a
// planned live migration: it keeps its progress, its stage and its usage, and runs at
// the new node's speed from now on.
func (s *Sim) move(t *simTask, x *exec, from, to *node) {
	for i, y := range from.running {
		if y == x {
			from.running = append(from.running[:i], from.running[i+1:]...)
			break
		}
	}
	to.running = append(to.running, x)
	x.speed = to.spec.Speed
	t.node = to.idx
}

// resizeRun records action a on run x of task t: its allocation is now a.Allocation,
// and, the first time, what it held before (a.Allocation less what a added, or plus
// what a took). The fairness metric follows what the task holds.
func (s *Sim) resizeRun(t *simTask, x *exec, a *finegrain.ScaleAction) {
	if x.resize == nil {
		orig := a.Allocation.Add(a.Amount)
		switch a.Kind {
		case speculate.Expand, speculate.Move, speculate.Restore:
			orig = a.Allocation.Sub(a.Amount).Max(resource.Tuple{})
		}
		x.resize = &resize{orig: orig}
	}
	x.resize.held = a.Allocation
	s.nodes[t.node].resized = true
	q := s.jobs[t.job].queue
	s.m.queueAlloc[q] = s.m.queueAlloc[q].Sub(t.peak).Add(a.Allocation)
	t.peak = a.Allocation
}

// resized is run x's factors under its resize at its current usage (package doc, the
// execution model of a resize): per compressible dimension k it uses and held some of
// before the first change, f_k = held now / held then. up is how much faster it runs,
// min f_k when no f_k is below 1 (1 when none is above either), and its usage on every
// compressible dimension it uses grows by up; otherwise up is 1 and each dimension with
// f_k < 1 caps its usage at shrink[k] of itself (1 elsewhere): f_k under Elastic,
// held now / its usage, if below 1, under CappedShrink.
func (s *Sim) resized(x *exec) (shrink resource.Vector, up float64) {
	comp := s.schema.Compressible()
	r := x.resize
	g, found := 0.0, false
	for k := 0; k < s.schema.Len(); k++ {
		shrink[k] = 1
		if !comp.Has(k) || r.orig[k] <= 0 || x.use[k] <= 0 {
			continue
		}
		f := float64(r.held[k]) / float64(r.orig[k])
		if !found || f < g {
			g, found = f, true
		}
		switch {
		case f >= 1:
		case s.cfg.resizeModel == CappedShrink:
			shrink[k] = min(1, float64(r.held[k])/float64(x.use[k]))
		default:
			shrink[k] = f
		}
	}
	if !found || g < 1 {
		return shrink, 1
	}
	return shrink, g
}

// effective is what run x demands of its node now: its usage, unless a resize changed
// it (resized): grown by up on every compressible dimension it uses, or capped by
// shrink.
func (s *Sim) effective(x *exec) resource.Tuple {
	if x.resize == nil {
		return x.use
	}
	shrink, up := s.resized(x)
	out := x.use
	comp := s.schema.Compressible()
	for k := 0; k < s.schema.Len(); k++ {
		if !comp.Has(k) || out[k] <= 0 {
			continue
		}
		switch {
		case up > 1:
			out[k] = int64(float64(out[k]) * up)
		case shrink[k] < 1:
			out[k] = int64(float64(out[k]) * shrink[k])
		}
	}
	return out
}

// overLimit reports whether run x uses more than it holds on a non-compressible
// dimension a resize took below what it held before: its container is killed, as one
// over its memory limit is.
func (s *Sim) overLimit(x *exec) bool {
	r := x.resize
	if r == nil {
		return false
	}
	comp := s.schema.Compressible()
	for k := 0; k < s.schema.Len(); k++ {
		if !comp.Has(k) && r.held[k] < r.orig[k] && x.use[k] > r.held[k] {
			return true
		}
	}
	return false
}
