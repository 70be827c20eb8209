package plugins

import (
	"fmt"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/policy"
)

// ModeGate (Filter) refuses every task on a node whose scheduling mode is
// StopAllocation (Alg. 1 line 1, Alg. 3). Reason PolicyStop: a pull cycle ends.
type ModeGate struct{ modes modes }

// NewModeGate returns the mode gate reading adj.
func NewModeGate(adj *policy.Adjuster) (*ModeGate, error) {
	if adj == nil {
		return nil, fmt.Errorf("plugins: mode gate: nil adjuster: %w", cluster.ErrInvalid)
	}
	return &ModeGate{modes: modes{adjuster: adj}}, nil
}

// Name implements framework.Plugin.
func (*ModeGate) Name() string { return "ModeGate" }

// ViewSafe implements framework.ViewSafe: it reads the node's mode from the adjuster,
// which is safe for concurrent use.
func (*ModeGate) ViewSafe() {}

// Filter implements framework.FilterPlugin.
func (g *ModeGate) Filter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	if !g.modes.mode(c, a.Node).Schedulable() {
		return framework.Refuse(framework.PolicyStop)
	}
	return framework.Status{}
}
