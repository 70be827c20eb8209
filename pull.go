package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

// Heartbeat is pull mode, FGM's Algorithm 1 (SPEC §3): node id reports at now, and the
// scheduler returns the tasks to start there.
//
//  1. If the node's free resources are below the idle threshold, or its mode is
//     StopAllocation, nothing starts (line 1).
//  2. Jobs are visited in the fairness order (line 4; DRF by default). As in Alg. 1 the
//     order is taken once per pass over the jobs. A job keeps taking tasks while the
//     ordering's key for it does not change (FIFO); otherwise (DRF, Fair) the pass
//     moves on to the next job after one task, and passes repeat, re-ordered, while
//     tasks start.
//  3. For each job, delay scheduling decides whether the job takes the node at the
//     locality of its best task there (line 6); the job's first task at that level is
//     chosen.
//  4. The task is matched: by its request when it is unpredictable (line 8), by stages
//     (Alg. 2) in the FineGrained modes, by its peak in CoarseGrained (line 12); when
//     the match compresses anything, the QoS check runs (line 17, eq. 15 deadlines).
//  5. An accepted task is reserved on the node's timeline and becomes Running; the
//     heartbeat ends when the node is used up (below the idle threshold) or a pass
//     starts nothing.
//
// A job whose chosen task does not fit, or that waits for locality, is passed over for
// the rest of this heartbeat. When a queue has a max share, the order is re-taken
// after every start, so that the max share is checked against up-to-date usage. The
// Decision says what started, why the heartbeat ended, and which jobs were passed over
// and why.
func (s *Scheduler) Heartbeat(id string, now time.Duration) (Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[id]
	if !ok {
		return Decision{}, fmt.Errorf("finegrain: heartbeat of node %q: %w", id, ErrUnknownNode)
	}
	if now < 0 {
		return Decision{}, fmt.Errorf("finegrain: heartbeat of node %q at %v: %w", id, now, ErrInvalid)
	}
	if s.delay != nil && s.cfg.prerelease == nil && (now < s.delayTick || now-s.delayTick >= DelayUpdate) {
		if err := s.delay.Heartbeat(now); err != nil {
			return Decision{}, fmt.Errorf("finegrain: heartbeat of node %q: %w", id, err)
		}
		s.delayTick = now
	}
	s.advance(now)
	s.beat++
	clear(s.refused)
	d := Decision{Node: id, At: now, Stop: NoPending, details: s.cfg.skipDetails}
	if s.cfg.prerelease != nil {
		s.pullPreRelease(n, now, &d)
		if s.cfg.speculator != nil {
			s.speculatePass(n, now, &d)
		}
		s.logDebug("heartbeat", "node", id, "at", now, "started", len(d.Assignments), "stop", d.Stop, "skipped", d.Skipped)
		return d, nil
	}
	for {
		started := len(d.Assignments)
		if !s.pass(n, now, &d) || len(d.Assignments) == started {
			break
		}
	}
	if s.cfg.speculator != nil {
		s.speculatePass(n, now, &d)
	}
	s.logDebug("heartbeat", "node", id, "at", now, "started", len(d.Assignments), "stop", d.Stop, "skipped", d.Skipped)
	return d, nil
}

// pass walks the jobs once in fairness order, offering each at most one task on node
// n, and reports whether the heartbeat may go on (false once it must stop, with d.Stop
// set). The tree must not change during the walk, so the fairness bookkeeping of the
// tasks started is applied when the walk ends.
func (s *Scheduler) pass(n *node, now time.Duration, d *Decision) bool {
	id, rack := n.spec.ID, n.spec.Rack
	s.started = s.started[:0]
	// Alg. 1 line 1, and the "resources used up" test of line 17: the node's free
	// resources change only when a task starts, so the test runs then.
	goOn := s.roomFor(n, now, d)
	if !goOn {
		return false
	}
	free := n.tl.FreeAt(now)
	if !s.cfg.noQuickCheck && s.cfg.skipDetails == 0 && s.noneCanStart(free) {
		return false // as a walk passing every job over would end: NoPending
	}
	s.tree.Walk(func(jid string) bool {
		j := s.jobs[jid]
		if j.passed == s.beat {
			return true
		}
		if len(j.classes) == 0 {
			j.passed = s.beat
			return true
		}
		if !s.cfg.noQuickCheck && s.cannotStart(j, free) {
			// None of the job's tasks can start here now (classes.go): pass it over
			// without choosing a task, as a match would have refused each.
			j.passed = s.beat
			d.skip(Skip{Job: jid, Reason: NoRoom})
			return true
		}
		for {
			best, ok := s.pending.Best(jid, id, rack)
			if !ok {
				j.passed = s.beat
				return true
			}
			// Delay scheduling (Alg. 2.1): a job whose best task here is less local than
			// its wait allows passes the offer (Offer records the pass, and the wait
			// grows); otherwise the launch is recorded only once a task has started, so
			// a task that does not fit does not reset the job's wait.
			if s.delay != nil && best > s.delay.Allowed(jid) {
				_, _, _ = s.delay.Offer(jid, best)
				j.passed = s.beat
				d.skip(Skip{Job: jid, Reason: LocalityWait})
				return true
			}
			tid, level, _ := s.pending.First(jid, id, rack, best)
			t := s.tasks[tid]
			a, why := s.try(t, s.demand(t), n, now)
			if why == NoReason && !s.admit(t, a.want) {
				why = MaxShare
			}
			if why == NoReason {
				as, ok := s.allocate(t, n, now, a, level, true)
				if ok {
					if s.delay != nil {
						_, _, _ = s.delay.Offer(jid, best)
					}
					d.Assignments = append(d.Assignments, as)
					s.started = append(s.started, t)
					if goOn = s.roomFor(n, now, d); !goOn {
						return false
					}
					free = n.tl.FreeAt(now)
					if s.hasMax {
						// Re-take the order, so max shares see up-to-date usage.
						return false
					}
					if !s.keepTurn {
						return true
					}
					continue
				}
				why = NoRoom
			}
			if why == NoRoom {
				s.refuse(t)
			}
			j.passed = s.beat
			d.skip(Skip{Job: jid, Task: tid, Reason: why, Result: a.result})
			if why == PolicyStop {
				d.Stop, goOn = PolicyStop, false
				return false
			}
			return true
		}
	})
	for _, t := range s.started {
		_ = s.tree.Start(t.spec.Job, t.request, t.usage)
	}
	return goOn
}

// roomFor reports whether node n may take another task at now: the per-heartbeat cap
// is not reached, its mode is schedulable and its free resources are not below the
// idle threshold. Otherwise it sets d.Stop.
func (s *Scheduler) roomFor(n *node, now time.Duration, d *Decision) bool {
	if s.cfg.maxPerBeat > 0 && len(d.Assignments) >= s.cfg.maxPerBeat {
		d.Stop = CapReached
		return false
	}
	if ok, _ := s.adjuster.Schedulable(n.spec.ID, n.tl.FreeAt(now)); !ok {
		d.Stop = NodeBusy
		if !s.adjuster.Mode(n.spec.ID).Schedulable() {
			d.Stop = PolicyStop
		}
		return false
	}
	return true
}

// keepsTurn reports whether the scheduler's ordering keeps a job in its place when it
// starts one more task: whether its key is independent of what the job runs. Under
// FIFO (and inside Capacity's queues) it is, so a job goes on taking tasks as a re-sort
// would let it; under DRF and Fair its key grows and a pass moves on to the next job
// after one task. Decided once, in New, by probing the ordering with two entries that
// differ only in what they run.
func keepsTurn(p fairness.Policy, schema *resource.Schema) bool {
	var capacity, usage resource.Tuple
	for k := 0; k < schema.Len(); k++ {
		capacity[k], usage[k] = 1<<40, 1<<30
	}
	idle := fairness.Entry{ID: "probe", Kind: fairness.KindJob, Share: fairness.DefaultShare(), Pending: 2, Demand: usage.Add(usage)}
	busy := idle
	busy.Running, busy.Pending, busy.Usage, busy.Demand = 1, 1, usage, usage
	return p.Key(&idle, capacity) == p.Key(&busy, capacity)
}
