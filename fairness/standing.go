package fairness

// Standing is where a queue stands among its siblings at a moment: what its parent's
// policy makes of it. A host scheduler that keeps its own queue of pending work (the
// Kubernetes scheduler's) orders that work by its queues' standings.
type Standing struct {
	// Key is the queue's place in its parent's order (Policy.Key): smaller keys are
	// offered resources first.
	Key OrderKey
	// Used is the share the queue holds and Wanted what it holds plus what its pending
	// tasks ask, both in its parent's policy's unit (Policy.Measure): the unit of its
	// min and max share — a dominant share of the cluster for DRF and Capacity,
	// running tasks for Fair and FIFO.
	Used, Wanted float64
	// AtMax reports that the queue holds its max share or more: no task of it starts
	// until it holds less (the Tree offers it nothing; Admit refuses any task of it).
	AtMax bool
}

// Standing returns queue id's standing under its parent's policy, against the tree's
// capacity, computed afresh. It fails on the root ("", which has no parent) and on
// an unknown queue.
func (t *Tree) Standing(queue string) (Standing, error) {
	if queue == "" {
		return Standing{}, fieldErr("queue", queue, ErrInvalidID)
	}
	q, err := t.queue(queue)
	if err != nil {
		return Standing{}, err
	}
	p := q.parent.policy
	used, wanted := p.Measure(&q.Entry, t.capacity)
	return Standing{
		Key:    p.Key(&q.Entry, t.capacity),
		Used:   used,
		Wanted: wanted,
		AtMax:  q.Share.HasMax() && used >= q.Share.Max,
	}, nil
}

// Queues calls fn with the ID of every queue directly under parent ("" for the root),
// eligible or not, in the order they were added (the order shifts when one is
// removed), until fn returns false. It fails on an unknown parent. fn must not change
// the tree.
func (t *Tree) Queues(parent string, fn func(id string) bool) error {
	q, err := t.queue(parent)
	if err != nil {
		return err
	}
	for _, k := range q.kids {
		if k.Kind == KindQueue && !fn(k.ID) {
			break
		}
	}
	return nil
}
