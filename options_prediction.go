package finegrain

import (
	"fmt"

	"github.com/finegrain/finegrain/predict"
)

// Prediction: what a task is expected to use.

// WithPrediction sets whether tasks are placed on the profiles predicted from similar
// tasks (on by default). Off, every task without a declared profile is unpredictable
// and placed by its request held until it finishes (docs/methods.md §3, request
// quantity): the way YARN's FIFO, Capacity, Fair and DRF schedulers allocate, the
// baselines FGM is compared with. Finished tasks still feed the estimator.
func WithPrediction(on bool) Option {
	return func(c *config) error {
		c.predict = on
		return nil
	}
}

// WithEstimator replaces the similar-task estimator (predict.SimilarTask) by est.
func WithEstimator(est predict.Estimator) Option {
	return func(c *config) error {
		if isNil(est) {
			return fmt.Errorf("finegrain: estimator is nil: %w", ErrInvalid)
		}
		c.estimator = est
		return nil
	}
}

// WithHoldUntilFinished sets whether a task placed by a predicted (or declared)
// profile keeps its last stage's non-compressible demand (memory) reserved from the
// profile's end until it finishes. On by default: a task that outlives its prediction
// still holds its memory, and the node is not over-committed behind its back. Off is
// the paper's literal behaviour (the reservation ends with the prediction; the Alg. 3
// adjuster reacts to the conformity the overrun causes).
func WithHoldUntilFinished(on bool) Option {
	return func(c *config) error {
		c.holdTail = on
		return nil
	}
}

// WithFailureEscalation sets whether a task that failed (Failed: killed for running
// out of memory, say) is placed on more than its plan the next time: its request or
// its plan's peak, whichever is larger, then half as much more of its non-compressible
// demands for each further failure, up to what some node offers beside other
// applications' load (plugins.Prediction). On by default: a task predicted below what
// it really uses would otherwise be killed and placed on the same prediction for
// ever. Off re-places it on its plan, as YARN and Kubernetes re-run a killed
// container with the same request.
func WithFailureEscalation(on bool) Option {
	return func(c *config) error {
		c.escalate = on
		return nil
	}
}
