package finegrain

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// This file keeps the scale-up round as it was first written, step by step and
// without regard to its cost — every task looked up and copied, every change held
// and then committed through the state's two-phase calls — as the reference that the
// round of mixed.go is checked against (TestPropertyScaleUpMatchesReference): it
// must decide, and leave the state, exactly as this does. It shares nothing with
// mixed.go but the scheduler's bookkeeping (scaleUp's fields) and the planner, which
// package speculate checks against a reference planner of its own.

// ReferenceScaleUp is Scheduler.ScaleUp computed the plain way, for tests only.
func (s *Scheduler) ReferenceScaleUp(now time.Duration) (ScaleUpRound, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.eventTime("scale-up round", "", now)
	if err != nil {
		return ScaleUpRound{}, err
	}
	s.fw.Advance(at)
	u := s.scale
	round := ScaleUpRound{At: at}
	in, tasks := s.refPlanInput(u, &round)
	plan, err := u.planner.Plan(in)
	if err != nil { // the input is the state's own: a planner refusal is a bug of ours
		return round, fmt.Errorf("finegrain: scale-up round at %v: %w", at, err)
	}
	round.Plan = plan
	s.refCarryOut(u, plan, tasks, &round)
	return round, nil
}

// refPlanInput is planInput as first written: node IDs listed and sorted, each node's
// tasks gathered and sorted, every listed task kept in a map by ID.
func (s *Scheduler) refPlanInput(u *scaleUp, round *ScaleUpRound) (speculate.PlanInput, map[string]*cluster.TaskInfo) {
	st, at, schema := s.state, round.At, s.schema
	for t, r := range u.shrunk {
		if t.State() != Running || t.RunID() != r.run {
			// Its run ended — finished, failed, evicted, its node lost — and perhaps
			// it runs again, placed anew on all it asks for: nothing to give back.
			delete(u.shrunk, t)
		}
	}
	running := st.Count(Running)
	in := speculate.PlanInput{Batch: make([]speculate.BatchTask, 0, running)}
	tasks := make(map[string]*cluster.TaskInfo, running)
	nodeIDs := make([]string, 0, st.NumNodes())
	for n := range st.Nodes() {
		nodeIDs = append(nodeIDs, n.ID())
	}
	slices.Sort(nodeIDs)
	nc := schema.NonCompressible()
	var samples []predict.ProgressSample
	var onNode []*cluster.TaskInfo
	for _, id := range nodeIDs {
		n, _ := st.Node(id)
		capacity := n.Capacity()
		allocated := capacity.Sub(n.Timeline().FreeAt(at)).Max(resource.Tuple{})
		// A node whose capacity shrank below what it holds (UpdateNode) is full, not
		// over: the planner refuses a non-compressible dimension over capacity.
		for d := range allocated {
			if nc.Has(d) {
				allocated[d] = min(allocated[d], capacity[d])
			}
		}
		in.Nodes = append(in.Nodes, speculate.Node{ID: id, Capacity: capacity, Allocated: allocated})
		var listed resource.Tuple
		onNode = onNode[:0]
		n.RangeTasks(func(t *cluster.TaskInfo) bool {
			onNode = append(onNode, t)
			return true
		})
		slices.SortFunc(onNode, func(a, b *cluster.TaskInfo) int { return strings.Compare(a.ID(), b.ID()) })
		for _, t := range onNode {
			if t.State() != Running || t.BackupOf() != nil || t.Backup() != nil {
				continue
			}
			if k, _ := t.Change(); k != cluster.NoChange {
				continue
			}
			held := t.HeldAt(at)
			if !allocated.Covers(listed.Add(held)) {
				continue // what the node holds is not all the tasks': leave the rest out
			}
			switch t.Class() {
			case cluster.LatencySensitive:
				if t.SLO() <= 0 {
					continue
				}
				samples = t.ProgressSamples(samples[:0])
				if len(samples) < 4 {
					continue
				}
				v, err := predict.DetectStraggler(samples, t.Start(), t.SLO())
				if err != nil || !v.Straggler {
					continue
				}
				extra, err := speculate.ScaleUp(schema, v, at, t.Start(), t.SLO(), held)
				if err != nil {
					round.Skipped = append(round.Skipped, ScaleSkip{Task: t.ID(), Kind: speculate.Expand, Err: err})
					continue
				}
				if extra.IsZero() {
					continue
				}
				round.Stragglers = append(round.Stragglers, StragglerFound{Task: t.ID(), Verdict: v, Extra: extra})
				in.Stragglers = append(in.Stragglers, speculate.Straggler{Task: t.ID(), Node: id, Allocated: held, Extra: extra})
			default:
				if u.idleOnly {
					continue
				}
				j, _ := st.Job(t.Job())
				in.Batch = append(in.Batch, speculate.BatchTask{})
				u.refBatch(&in.Batch[len(in.Batch)-1], schema, t, id, held, j.Spec().Priority)
			}
			listed = listed.Add(held)
			tasks[t.ID()] = t
		}
	}
	// The new latency-sensitive demand: what arrived since the last round and still
	// waits. A backlog that waits on is not made room for again round after round.
	in.NewDemand = u.newDemand.Min(st.PendingLatencySensitive())
	u.newDemand = resource.Tuple{}
	for _, t := range slices.SortedFunc(maps.Keys(u.shrunk), byTaskID) {
		r, id := u.shrunk[t], t.ID()
		if k, _ := t.Change(); k != cluster.NoChange {
			continue
		}
		in.Shrunk = append(in.Shrunk, speculate.Shrunk{Task: id, Node: t.Node().ID(), Taken: r.taken, Preempted: r.preempted})
		tasks[id] = t
	}
	slices.SortFunc(round.Stragglers, func(a, b StragglerFound) int { return strings.Compare(a.Task, b.Task) })
	return in, tasks
}

// refBatch is batch as first written.
func (u *scaleUp) refBatch(b *speculate.BatchTask, schema *resource.Schema, t *cluster.TaskInfo, node string, held resource.Tuple, priority int) {
	*b = speculate.BatchTask{Task: t.ID(), Node: node, Allocated: held, Priority: priority}
	if peak, ok := t.UsedPeak(); ok {
		peak1 := [1]resource.Tuple{peak}
		if r, err := predict.DetectRedundant(schema, peak1[:], held, u.expected); err == nil {
			b.Reclaimable = r.Reclaimable
		}
		if t.Failures() > 0 {
			// A run of it was lost — perhaps for using more memory than a reclaim
			// had left it, its peak so far not its peak —, and this run's peak so far
			// says no more: reclaiming its memory again could kill it again, round
			// after round. Only the compressible dimensions are reclaimed.
			for d := range b.Reclaimable {
				if !schema.Compressible().Has(d) {
					b.Reclaimable[d] = 0
				}
			}
		}
	}
	taken := u.shrunk[t].taken
	before := held.Add(taken) // its allocation before any round shrank it
	for d := range before {
		if schema.Compressible().Has(d) {
			// Rounds take at most share of it in all: a peak measured near zero (a
			// task between stages) would otherwise reclaim it to a standstill.
			b.Reclaimable[d] = max(0, min(b.Reclaimable[d], int64(u.share*float64(before[d]))-taken[d]))
		}
	}
	if t.Preemptible() {
		for d := range before {
			if !schema.Compressible().Has(d) {
				continue
			}
			// Reclaim and preemption together, in this round and the earlier ones,
			// leave it at least 1 − share of its allocation (or what reclaim alone
			// leaves): what this round reclaims counts as what earlier rounds took.
			left := held[d] - b.Reclaimable[d]
			allowed := int64(u.share*float64(before[d])) - taken[d] - b.Reclaimable[d]
			b.Preemptible[d] = max(0, min(left, allowed))
		}
	}
}

// refCarryOut is carryOut as first written: steps merged per task through a map,
// each change made by refChange.
func (s *Scheduler) refCarryOut(u *scaleUp, plan speculate.Plan, tasks map[string]*cluster.TaskInfo, round *ScaleUpRound) {
	type merged struct {
		step  speculate.Step
		order int
	}
	byTask := map[string]*merged{}
	var order []string
	for _, st := range plan.Steps {
		m := byTask[st.Task]
		if m == nil {
			m = &merged{step: st}
			byTask[st.Task] = m
			order = append(order, st.Task)
			switch st.Kind {
			case speculate.Reclaim, speculate.Preempt:
				m.order = 0
			case speculate.Expand, speculate.Move:
				m.order = 1
			default:
				m.order = 2
			}
			continue
		}
		// A batch task reclaimed from and preempted in one plan: one shrink of the sum.
		m.step.Amount = m.step.Amount.Add(st.Amount)
		if st.Kind == speculate.Preempt {
			m.step.Kind = speculate.Preempt
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return byTask[a].order - byTask[b].order })
	for _, id := range order {
		st := byTask[id].step
		t := tasks[id]
		a, err := s.refChange(t, st, round.At)
		if err != nil {
			round.Skipped = append(round.Skipped, ScaleSkip{Task: id, Kind: st.Kind, Err: err})
			continue
		}
		round.Actions = append(round.Actions, a)
		u.refRecord(t, st)
	}
}

// refRecord is record as first written.
func (u *scaleUp) refRecord(t *cluster.TaskInfo, st speculate.Step) {
	r := u.shrunk[t]
	switch st.Kind {
	case speculate.Reclaim, speculate.Preempt:
		r.run, r.taken = t.RunID(), r.taken.Add(st.Amount)
		r.preempted = r.preempted || st.Kind == speculate.Preempt
	case speculate.Restore:
		r.taken = r.taken.Sub(st.Amount).Max(resource.Tuple{})
	default:
		return
	}
	if r.taken.IsZero() {
		delete(u.shrunk, t)
		return
	}
	u.shrunk[t] = r
}

// refChange is change as first written: the held amount read before and after,
// the new profile built by refShifted, the change held and committed.
func (s *Scheduler) refChange(t *cluster.TaskInfo, st speculate.Step, at time.Duration) (ScaleAction, error) {
	held := t.HeldAt(at)
	delta := st.Amount
	grow := true
	switch st.Kind {
	case speculate.Reclaim, speculate.Preempt:
		grow = false
	case speculate.Move:
		delta = st.Amount.Sub(st.Released).Max(resource.Tuple{})
	}
	hold, err := refShifted(s.schema, t, at, delta, grow)
	if err != nil {
		return ScaleAction{}, err
	}
	r := cluster.Reservation{Start: at, Hold: hold, Predicted: t.Planned() > 0}
	if !grow {
		// A shrink frees room, but the node may be over-committed on a compressible
		// dimension already (tasks placed with compression): allow the new reservation
		// what the node lacks there now, which it held before the shrink.
		least := t.Node().Timeline().MinFree(at, stage.Forever)
		for d := range least {
			if s.schema.Compressible().Has(d) && least[d] < 0 {
				r.Allowance[d] = -least[d]
			}
		}
	}
	a := ScaleAction{Kind: st.Kind, Task: t.ID(), Node: st.Node, Amount: st.Amount}
	if st.Kind == speculate.Move {
		to, ok := s.state.Node(st.Node)
		if !ok {
			return ScaleAction{}, fmt.Errorf("finegrain: move task %q to node %q: %w", t.ID(), st.Node, ErrUnknownNode)
		}
		a.From, a.Amount = t.Node().ID(), delta
		err = s.refApplyChange(t, to, r)
	} else {
		err = s.refApplyChange(t, nil, r)
	}
	if err != nil {
		return ScaleAction{}, err
	}
	if !grow {
		a.Amount = held.Sub(t.HeldAt(at)) // what was taken, once floored at zero
	}
	a.Allocation = t.HeldAt(at)
	return a, nil
}

// refApplyChange holds the change (cluster.State.Resize or Migrate) and commits it.
func (s *Scheduler) refApplyChange(t *cluster.TaskInfo, to *cluster.NodeInfo, r cluster.Reservation) error {
	var err error
	if to == nil {
		err = s.state.Resize(t, r)
	} else {
		err = s.state.Migrate(t, to, r)
	}
	if err != nil {
		return err
	}
	if err := s.state.CommitChange(t); err != nil { // held just now: cannot fail
		return errors.Join(err, s.state.RevertChange(t))
	}
	return nil
}

// refShifted is shifted as first written: the stages left (TaskInfo.HeldFrom) copied
// and shifted.
func refShifted(schema *resource.Schema, t *cluster.TaskInfo, at time.Duration, delta resource.Tuple, grow bool) (stage.Profile, error) {
	stages := []stage.Stage{{Duration: stage.Forever}}
	if left := t.HeldFrom(at); left.Len() > 0 {
		stages = left.Stages()
	}
	for i := range stages {
		d := &stages[i].Demand
		if grow {
			*d = d.Add(delta)
		} else {
			*d = d.Sub(delta).Max(resource.Tuple{})
		}
	}
	p, err := stage.NewProfile(schema, stages...)
	if err != nil {
		return stage.Profile{}, fmt.Errorf("finegrain: resize task %q: %w: %w", t.ID(), ErrInvalid, err)
	}
	return p, nil
}
