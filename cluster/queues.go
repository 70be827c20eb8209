package cluster

import (
	"fmt"
	"slices"

	"github.com/finegrain/finegrain/fairness"
)

// QueueStanding is queue id's standing among its siblings (fairness.Tree.Standing).
func (s *State) QueueStanding(id string) (fairness.Standing, error) {
	st, err := s.tree.Standing(id)
	if err != nil {
		return fairness.Standing{}, fmt.Errorf("cluster: queue %q: %w: %w", id, ErrUnknownQueue, err)
	}
	return st, nil
}

// ChildQueues returns the IDs of the queues directly under parent ("" for the root),
// in ID order.
func (s *State) ChildQueues(parent string) ([]string, error) {
	var ids []string
	if err := s.tree.Queues(parent, func(id string) bool { ids = append(ids, id); return true }); err != nil {
		return nil, fmt.Errorf("cluster: queue %q: %w: %w", parent, ErrUnknownQueue, err)
	}
	slices.Sort(ids)
	return ids, nil
}

// QueuesVersion counts the changes to the fairness tree — tasks pending, started and
// released, capacity, queues added — as they are applied: a standing read at one
// version holds until it moves. It reads no lock.
func (s *State) QueuesVersion() uint64 { return s.queuesVersion.Load() }
