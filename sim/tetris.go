package sim

import (
	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/plugins"
)

// Tetris is Tetris' scheduler (Grandl et al., SIGCOMM 2014; docs/methods.md §14) as a
// request-based baseline: every task holds its declared request until it finishes,
// as YARN's schedulers allocate, jobs ordered by dominant resource fairness (the fair
// share the fairness knob measures distance from), and pull mode's tasks chosen by
// Tetris' packing heuristic with the paper's knobs (plugins.DefaultTetrisConfig): the
// best alignment with the node's free resources, less ε times the job's remaining
// work, among the ⌈0.75·J⌉ most deprived jobs; no delay scheduling. What is not
// reproduced: Tetris' own estimates of disk and network demands (the workload's
// requests are what it packs) and its barrier knob for DAG stages. A killed task runs
// again on its request, as in YARN (finegrain.WithFailureEscalation off).
func Tetris() Policy {
	return Policy{Name: "Tetris", Options: []finegrain.Option{
		finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.DRF{}), finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())),
		finegrain.WithFailureEscalation(false),
	}}
}

// FGMTetris is FGM (prediction, fine-grained stage matching, the Alg. 3 adjuster fed
// by usage reports, DRF ordering) with Tetris' task choice in place of delay
// scheduling: a predicted task's alignment is taken over its predicted stage window,
// and remaining work counts the predicted profiles.
func FGMTetris() Policy {
	return Policy{Name: "FGM+Tetris", Feedback: true, Options: []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig()))}}
}
