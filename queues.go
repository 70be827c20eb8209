package finegrain

import (
	"github.com/finegrain/finegrain/fairness"
)

// QueueState is one queue as the scheduler's fairness tree holds it at a moment: its
// entry — weight, min and max share, and its running and pending tasks, usage and
// demand summed over everything below it — and its standing among its siblings
// under its parent's policy (WithOrdering, or the queue's own fairness.OrderedBy).
//
// A host scheduler that sorts its own queue of pending work — the Kubernetes
// adapter's queue-sort plugin — puts the work of the queue with the smaller
// Standing.Key first, and reads the states again only when QueuesVersion moves.
type QueueState struct {
	fairness.Entry
	fairness.Standing
}

// Queue returns queue id's state. It fails on the root ("") and on an unknown queue
// (ErrUnknownQueue).
func (s *Scheduler) Queue(id string) (QueueState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.queueState(id)
}

func (s *Scheduler) queueState(id string) (QueueState, error) {
	st, err := s.state.QueueStanding(id)
	if err != nil {
		return QueueState{}, err
	}
	e, err := s.state.QueueEntry(id)
	if err != nil {
		return QueueState{}, err
	}
	return QueueState{Entry: e, Standing: st}, nil
}

// Queues returns the states of the queues directly under parent ("" for the root),
// in ID order, read at one moment. It fails on an unknown parent (ErrUnknownQueue).
func (s *Scheduler) Queues(parent string) ([]QueueState, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids, err := s.state.ChildQueues(parent)
	if err != nil {
		return nil, err
	}
	out := make([]QueueState, 0, len(ids))
	for _, id := range ids {
		q, err := s.queueState(id)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// QueuesVersion counts the changes to the fairness tree: tasks submitted, started
// (reserved), released and withdrawn, the cluster's capacity, queues added. Queue
// states read at one version hold until it moves, so a caller that reads them far
// more often than they change (a queue-sort called on every comparison) keeps them
// and reads them again only then. It takes no lock.
func (s *Scheduler) QueuesVersion() uint64 { return s.state.QueuesVersion() }
