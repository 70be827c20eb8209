package finegrain

import (
	"fmt"

	"github.com/finegrain/finegrain/plugins"
)

// QoS-vector scheduling (WithPullStrategy(PullQoSVector()), docs/methods.md §12): the demands of
// jobs and the supplies of nodes it matches. Not to be confused with WithQoS, the eq. 15
// deadline check.

type (
	// QoSVectorDemand is a job's demand under QoS-vector scheduling
	// (plugins.QoSVectorDemand): its QoS demand vector Req (eq. 1), its user's
	// preference Weights (eq. 2; the largest is its class) and its hard Need (memory
	// and disk).
	QoSVectorDemand = plugins.QoSVectorDemand
	// QoSVectorSupply is a node's supply under QoS-vector scheduling
	// (plugins.QoSVectorSupply): its QoS supply vector Res (eq. 3) and its Remaining
	// memory and disk, as its heartbeat reports them.
	QoSVectorSupply = plugins.QoSVectorSupply
)

// qosVector is the QoS-vector pass, or an error about what of id when
// WithPullStrategy(PullQoSVector()) is off.
func (s *Scheduler) qosVector(what, id string) (*plugins.QoSVectorScheduling, error) {
	if s.qosVec == nil {
		return nil, fmt.Errorf("finegrain: %s %q: QoS-vector scheduling is off (WithPullStrategy(PullQoSVector())): %w", what, id, ErrInvalid)
	}
	return s.qosVec, nil
}

// SetJobQoSVector sets job's demand under QoS-vector scheduling
// (WithPullStrategy(PullQoSVector())), replacing any earlier one: call it after SubmitJob, before
// the job's tasks are to start (a job without a demand waits). It fails, changing
// nothing, when QoS-vector scheduling is off, on an unknown job, or on an invalid demand:
// a Req value outside [1, 10] or NaN, a negative or NaN weight, weights not summing to 1
// within match.WeightTolerance, a negative hard need (the error wraps ErrInvalid and the
// match sentinel: match.ErrBadVector, match.ErrBadWeights, match.ErrBadHard).
func (s *Scheduler) SetJobQoSVector(job string, d QoSVectorDemand) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.qosVector("QoS-vector demand of job", job)
	if err != nil {
		return err
	}
	j, ok := s.state.Job(job)
	if !ok {
		return fmt.Errorf("finegrain: QoS-vector demand of job %q: %w", job, ErrUnknownJob)
	}
	return p.SetDemand(j, d)
}

// SetNodeQoSVector records node's supply under QoS-vector scheduling
// (WithPullStrategy(PullQoSVector())), replacing the earlier report: its QoS supply vector and
// the memory and disk it has left now. Report it with every heartbeat, before
// Heartbeat, as the paper's workers do: until the next report, the tasks the pass starts
// there count against the remaining amounts reported. A node that never reported takes
// nothing from the pass. It fails, changing nothing, when QoS-vector scheduling is off,
// on an unknown node, or on an invalid supply: a Res value outside [1, 10] or NaN, a
// negative remaining amount (the error wraps ErrInvalid and match.ErrBadVector or
// match.ErrBadHard).
func (s *Scheduler) SetNodeQoSVector(node string, sup QoSVectorSupply) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.qosVector("QoS-vector supply of node", node)
	if err != nil {
		return err
	}
	n, ok := s.state.Node(node)
	if !ok {
		return fmt.Errorf("finegrain: QoS-vector supply of node %q: %w", node, ErrUnknownNode)
	}
	return p.SetSupply(n, sup)
}

// QoSVectorPriority is job's aging priority under QoS-vector scheduling
// (WithPullStrategy(PullQoSVector()); eq. 6): 0 at first, one more each time the job was
// evaluated against a node whose hard QoS it did not meet (must_value ≤ 0). It fails
// when QoS-vector scheduling is off or on an unknown job.
func (s *Scheduler) QoSVectorPriority(job string) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, err := s.qosVector("QoS-vector priority of job", job)
	if err != nil {
		return 0, err
	}
	j, ok := s.state.Job(job)
	if !ok {
		return 0, fmt.Errorf("finegrain: QoS-vector priority of job %q: %w", job, ErrUnknownJob)
	}
	return p.Priority(j), nil
}
