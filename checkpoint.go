package finegrain

import (
	"fmt"
	"io"

	"github.com/finegrain/finegrain/predict"
)

// Saving and restoring what the estimator learned: restarts and failover.
//
// What the scheduler learns from finished and running tasks lives in its estimator
// (Estimator), in memory. A scheduler that restarts, or a replica that takes over from
// the leader, starts with none of it: every key is unpredictable again and its tasks are
// placed on their requests until similar tasks finish anew. The cluster's other state —
// nodes, queues, jobs, tasks and their reservations — is the orchestrator's to replay
// (its API server or resource manager keeps it), but the estimates are the scheduler's
// own. SaveEstimates and RestoreEstimates carry them over.

// SaveEstimates writes everything the scheduler's estimator has learned to w, for
// RestoreEstimates to read back into the scheduler that replaces this one: call it
// before a planned restart, and periodically (say, every few minutes, into a file, a
// ConfigMap or an object store) so that a replica taking over on failover loses at
// most what was learned since. It delegates to the estimator's Checkpoint
// (predict.Checkpointer; for the default predict.SimilarTask, a versioned JSON
// document: see predict.SimilarTask.Checkpoint), which copies the estimator's state
// under its own lock, so SaveEstimates runs beside heartbeats, placements and
// observations and holds none of the scheduler's locks.
//
// It fails with an error wrapping ErrInvalid, writing nothing, when the estimator
// (the default, or the one WithEstimator gave) is not a predict.Checkpointer; otherwise
// only when w does. It changes nothing. With WithPrediction(false) the estimator still
// learns from finished tasks, and SaveEstimates saves what it learned.
func (s *Scheduler) SaveEstimates(w io.Writer) error {
	cp, err := s.checkpointer("save")
	if err != nil {
		return err
	}
	if err := cp.Checkpoint(w); err != nil {
		return fmt.Errorf("finegrain: save estimates: %w", err)
	}
	return nil
}

// RestoreEstimates replaces everything the scheduler's estimator has learned by what
// r holds, written by SaveEstimates of a scheduler whose estimator had the same schema
// and options (for predict.SimilarTask, see predict.SimilarTask.Restore for which
// options must agree). Call it when the scheduler starts, after New and before the
// first placement, so that the first tasks of each known key are placed on their
// learned profiles rather than their requests; called later, it discards what was
// learned since the checkpoint. Tasks placed before it keep their placements; pending
// tasks are placed on the restored estimates from the next cycle on.
//
// It fails with an error wrapping ErrInvalid, reading nothing, when the estimator is
// not a predict.Checkpointer; and with the estimator's error when it refuses the
// checkpoint (for predict.SimilarTask, one wrapping predict.ErrCheckpoint: malformed,
// truncated, of another version or schema, made under incompatible options, or
// implausible). On any error nothing changes: the scheduler keeps predicting from what
// its estimator held. It holds none of the scheduler's locks; the estimator swaps its
// state in under its own.
func (s *Scheduler) RestoreEstimates(r io.Reader) error {
	cp, err := s.checkpointer("restore")
	if err != nil {
		return err
	}
	if err := cp.Restore(r); err != nil {
		return fmt.Errorf("finegrain: restore estimates: %w", err)
	}
	return nil
}

// checkpointer is the scheduler's estimator as a predict.Checkpointer, or an error
// wrapping ErrInvalid saying why it cannot do (save or restore).
func (s *Scheduler) checkpointer(do string) (predict.Checkpointer, error) {
	cp, ok := s.estimator.(predict.Checkpointer)
	if !ok {
		return nil, fmt.Errorf("finegrain: %s estimates: the estimator, a %T, cannot be checkpointed (it does not implement predict.Checkpointer): %w", do, s.estimator, ErrInvalid)
	}
	return cp, nil
}
