package plugins

import (
	"fmt"
	"math"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/stage"
)

// NodeScore (Score) ranks the nodes a task passed on in push mode with a
// match.Scorer (LeastAllocated, MostAllocated, BestFit, BalancedAllocation, Alignment
// or your own), times Weight: match.ScoreServer, the scorer applied to the node's
// least free amount over the task's window and the task's peak demand — the same
// scoring as match.ChooseServer. The window is what the task holds (its plan, and for a
// predicted task the memory it keeps until it finishes); the built-in matchers report
// the window's least free amount as they match, so scoring walks no timeline again.
type NodeScore struct {
	scorer match.Scorer
	weight float64
}

// NewNodeScore returns the scoring plugin for sc with weight w (a finite number > 0).
func NewNodeScore(sc match.Scorer, w float64) (*NodeScore, error) {
	if sc == nil || !(w > 0) || math.IsInf(w, 1) {
		return nil, fmt.Errorf("plugins: node score: scorer %v, weight %v: %w", sc, w, cluster.ErrInvalid)
	}
	return &NodeScore{scorer: sc, weight: w}, nil
}

// Name implements framework.Plugin.
func (*NodeScore) Name() string { return "NodeScore" }

// ViewSafe implements framework.ViewSafe: it reads the attempt and the node's timeline.
func (*NodeScore) ViewSafe() {}

// Score implements framework.ScorePlugin.
func (s *NodeScore) Score(_ *framework.Cycle, a *framework.Attempt) float64 {
	// match.ScoreServer, without copying the Result: the window's least free amount as
	// the match reported it (match.WindowFree).
	tl := a.Node.Timeline()
	free := a.Result.MinFree
	if !a.Result.MinFreeKnown {
		free = tl.MinFree(a.Start, stage.AddSat(a.Start, a.Demand.Hold.Duration()))
	}
	score := s.scorer.Score(tl.Capacity(), free, a.Demand.Hold.Peak())
	if score != score {
		return math.Inf(-1)
	}
	return s.weight * score
}
