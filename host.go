package finegrain

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
)

// Host mode: a host scheduler that runs its own scheduling cycle — the Kubernetes
// scheduling framework, through the adapter in adapters/kubernetes — asks Filter and
// Score for each node (scheduler.go), chooses the node itself, and holds the task
// with these calls: Reserve on the node it chose (or PostFilter when no node passed),
// then Commit once it has bound the task, or Unreserve when its own Permit step or
// its binding failed. Permit plugins (gangs) are not asked here: the host's Permit
// step decides.

// Reserve holds pending task id on node nodeID from now, the host scheduler's choice:
// the task must still pass the filters there against the cluster as it is now. It is
// Reserved until Commit or Unreserve; the Assignment says what is held (profile,
// match verdict). It fails with a *PlacementError saying why, and the task stays
// pending; as for Place, the clock has then moved to now (clock.go).
func (s *Scheduler) Reserve(id, nodeID string, now time.Duration) (Assignment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.pending(id, "reservation of task", now)
	if err != nil {
		return Assignment{}, err
	}
	n, ok := s.state.Node(nodeID)
	if !ok {
		return Assignment{}, fmt.Errorf("finegrain: reservation of task %q: node %q: %w", id, nodeID, ErrUnknownNode)
	}
	return s.fw.Reserve(t, n, at)
}

// PostFilter is the host scheduler's PostFilter step for pending task id, after no
// node passed Filter: the PostFilter plugins (WithPreemption, WithFutureStart) may
// evict tasks to make room — they are in the Assignment's Evicted, pending again, and
// the host must stop them — or book a later start; the placement is then held as by
// Reserve, on the node the Assignment names. Only the nodes allow accepts are
// considered (nil: all): the host rules out those its other filters refused, where
// making room would not help. It fails with a *PlacementError when no placement is
// found; evictions already made are then in its Evicted.
func (s *Scheduler) PostFilter(id string, now time.Duration, allow func(node string) bool) (Assignment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.pending(id, "post-filter of task", now)
	if err != nil {
		return Assignment{}, err
	}
	var nodes func(*cluster.NodeInfo) bool
	if allow != nil {
		nodes = func(n *cluster.NodeInfo) bool { return allow(n.ID()) }
	}
	return s.fw.PostFilter(t, at, nodes)
}

// Held reports whether task id is held for the host scheduler (Reserve or
// PostFilter), and what is held.
func (s *Scheduler) Held(id string) (Assignment, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.state.Task(id)
	if !ok {
		return Assignment{}, false
	}
	return s.fw.Held(t)
}

// Commit makes task id, held by Reserve or PostFilter, Running (or Booked until a
// later start it was held for): the host scheduler has bound it.
func (s *Scheduler) Commit(id string, now time.Duration) (Assignment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.held(id, "commit of task", now, Reserved)
	if err != nil {
		return Assignment{}, err
	}
	// The framework refuses a task not held before its cycle moves the clock to at.
	as, err := s.fw.Commit(t, at)
	if err != nil {
		return Assignment{}, fmt.Errorf("finegrain: commit of task %q: %w", id, err)
	}
	return as, nil
}

// Unreserve rolls task id, held by Reserve or PostFilter, back to pending: what it
// held on its node is free again. Tasks a PostFilter evicted stay evicted.
func (s *Scheduler) Unreserve(id string, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, at, err := s.held(id, "unreserve of task", now, Reserved)
	if err != nil {
		return err
	}
	// The framework refuses a task not held before its cycle moves the clock to at.
	if err := s.fw.Unreserve(t, at); err != nil {
		return fmt.Errorf("finegrain: unreserve of task %q: %w", id, err)
	}
	return nil
}
