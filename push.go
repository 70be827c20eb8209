package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/fairness"
)

// Place is push mode: task id is pending at now; the scheduler chooses a node for it,
// reserves it there and returns the assignment — the way a Kubernetes-style
// orchestrator asks a scheduler to bind a pod.
//
// Filter and score, with an index: nodes are kept in a B-tree ordered by the free
// amount of the schema's first non-compressible dimension (memory in the standard
// schema). A task's first stage must find that much free at once, compression or not,
// so the walk visits nodes from the roomiest down and stops at the first node with too
// little. Each node visited is matched as in pull mode (request quantity, or the node
// mode's matcher, then the QoS check); the first WithCandidates nodes that fit (16 by
// default) are scored with the Scorer and the best wins, ties to the node visited
// first. A placement thus costs O(log n + k) matches for k nodes visited rather than a
// scan of the cluster.
//
// When no node fits and WithFutureStart is on, the task is reserved on the node where
// it can start earliest (O(n)). Otherwise Place fails with a *PlacementError saying
// why, and the task stays pending.
func (s *Scheduler) Place(id string, now time.Duration) (Assignment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.task(id)
	if err != nil {
		return Assignment{}, err
	}
	if t.state != Pending {
		return Assignment{}, fmt.Errorf("finegrain: place task %q: it is %v: %w", id, t.state, ErrState)
	}
	if now < 0 {
		return Assignment{}, fmt.Errorf("finegrain: place task %q at %v: %w", id, now, ErrInvalid)
	}
	s.advance(now)
	w := s.demand(t)
	if !s.admit(t, w) {
		return Assignment{}, &PlacementError{Task: id, Reason: MaxShare}
	}
	need := w.hold.Stage(0).Demand[s.keyDim]
	var (
		best      *node
		bestA     attempt
		bestScore float64
		found     int
		perr      = PlacementError{Task: id, Reason: NoRoom, Dim: s.schema.DimName(s.keyDim)}
	)
	s.byFree.Ascend(func(n *node) bool {
		if n.key < need {
			return false
		}
		perr.Tried++
		a, why := s.try(t, w, n, now)
		if why != NoReason {
			perr.Reason, perr.Result = why, a.result
			return true
		}
		score := s.cfg.scorer.Score(n.spec.Capacity, n.tl.FreeAt(now), w.hold.Peak())
		if best == nil || score > bestScore {
			best, bestA, bestScore = n, a, score
		}
		found++
		return s.cfg.candidates == 0 || found < s.cfg.candidates
	})
	start := now
	if best == nil && s.cfg.futureStart {
		best, bestA, start = s.earliest(t, w, now)
	}
	if best == nil {
		return Assignment{}, &perr
	}
	as, ok := s.allocate(t, best, start, bestA, s.locality(t, best), false)
	if !ok {
		return Assignment{}, &perr
	}
	return as, nil
}

// earliest finds the node where t can start soonest after now, for future-start
// placement: each node's timeline proposes its earliest fit (with the compression the
// node allows), which is then matched as usual. Ties go to the node with more free.
func (s *Scheduler) earliest(t *task, w want, now time.Duration) (*node, attempt, time.Duration) {
	var (
		best  *node
		bestA attempt
		start time.Duration
	)
	s.byFree.Ascend(func(n *node) bool {
		allow := n.spec.Capacity.Only(s.schema.Compressible()).ScaleEach(s.compression.Limit())
		if !s.adjuster.Mode(n.spec.ID).Compressible() {
			allow = allow.Scale(0)
		}
		at, err := n.tl.EarliestFit(now, w.hold, allow)
		if err != nil || (best != nil && at >= start) {
			return true
		}
		if a, why := s.try(t, w, n, at); why == NoReason {
			best, bestA, start = n, a, at
		}
		return true
	})
	return best, bestA, start
}

// locality is how close node n is to task t's input.
func (s *Scheduler) locality(t *task, n *node) fairness.Level {
	if len(t.spec.Inputs) == 0 {
		return fairness.NodeLocal
	}
	level := fairness.OffSwitch
	for _, id := range t.spec.Inputs {
		if id == n.spec.ID {
			return fairness.NodeLocal
		}
		if m := s.nodes[id]; m != nil && m.spec.Rack != "" && m.spec.Rack == n.spec.Rack {
			level = fairness.RackLocal
		}
	}
	return level
}

// refreshEvery is how much scheduler time may pass before every node's index key is
// recomputed. Keys change exactly on reserve and release; between those, stages and
// reservations ending raise a node's free amount without an event, so a key may
// understate it for up to this long (the node is then visited later, or missed by a
// push placement's early stop).
const refreshEvery = time.Second

// advance moves the scheduler's clock to now, refreshing the push index when it is
// stale.
func (s *Scheduler) advance(now time.Duration) {
	if now <= s.clock {
		return
	}
	s.clock = now
	if now-s.refreshed < refreshEvery {
		return
	}
	s.refreshed = now
	for _, n := range s.nodes {
		s.reindex(n)
	}
}

// index inserts a node into the push index with its free amount at the scheduler's
// clock.
func (s *Scheduler) index(n *node) {
	n.key = n.tl.FreeAt(s.clock)[s.keyDim]
	s.byFree.ReplaceOrInsert(n)
}

// reindex updates a node's position in the push index after its timeline changed.
func (s *Scheduler) reindex(n *node) {
	key := n.tl.FreeAt(s.clock)[s.keyDim]
	if key == n.key {
		return
	}
	s.byFree.Delete(n)
	n.key = key
	s.byFree.ReplaceOrInsert(n)
}
