package plugins

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
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

// Score implements framework.ScorePlugin.
func (s *NodeScore) Score(_ *framework.Cycle, a *framework.Attempt) float64 {
	server := match.Server{ID: a.Node.ID(), Timeline: a.Node.Timeline()}
	return s.weight * match.ScoreServer(s.scorer, server, a.Start, a.Demand.Hold, a.Result)
}

// FutureStart (PostFilter) places a task that fits no node now at the earliest start
// any node offers: each node's timeline proposes its earliest fit (stage.Timeline.
// EarliestFit, with the compression the node's mode allows up to the compression
// limit), which must then pass the filters; the earliest wins, ties to the roomiest
// node. It visits every node: O(n) per placement that needs it.
type FutureStart struct {
	adjuster    *policy.Adjuster
	compression *policy.Compression
}

// NewFutureStart returns the future-start plugin.
func NewFutureStart(adj *policy.Adjuster, comp *policy.Compression) (*FutureStart, error) {
	if adj == nil || comp == nil {
		return nil, fmt.Errorf("plugins: future start: nil adjuster or compression manager: %w", cluster.ErrInvalid)
	}
	return &FutureStart{adjuster: adj, compression: comp}, nil
}

// Name implements framework.Plugin.
func (*FutureStart) Name() string { return "FutureStart" }

// PostFilter implements framework.PostFilterPlugin.
func (f *FutureStart) PostFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	schema := c.State().Schema()
	var (
		best  framework.Attempt
		found bool
		start time.Duration
	)
	c.State().ByFree(math.MinInt64, func(n *cluster.NodeInfo) bool {
		allow := n.Capacity().Only(schema.Compressible()).ScaleEach(f.compression.Limit())
		if !f.adjuster.Mode(n.ID()).Compressible() {
			allow = allow.Scale(0)
		}
		at, err := n.Timeline().EarliestFit(c.Now(), a.Demand.Hold, allow)
		if err != nil || (found && at >= start) {
			return true
		}
		try := *a
		try.Node, try.Start = n, at
		if c.Filter(&try).OK() {
			best, found, start = try, true, at
		}
		return true
	})
	if !found {
		return framework.Refuse(framework.NoRoom)
	}
	*a = best
	return framework.Status{}
}
