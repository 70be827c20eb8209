package plugins

import (
	"fmt"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/policy"
)

// IdleGate (NodeGate) closes a heartbeat's node when its free resources are below the
// idle threshold (NodeBusy) or its mode is StopAllocation (PolicyStop): Alg. 1 line 1,
// and line 17's "resources used up", asked again after every start.
type IdleGate struct{ modes modes }

// NewIdleGate returns the idle gate reading adj.
func NewIdleGate(adj *policy.Adjuster) (*IdleGate, error) {
	if adj == nil {
		return nil, fmt.Errorf("plugins: idle gate: nil adjuster: %w", cluster.ErrInvalid)
	}
	return &IdleGate{modes: modes{adjuster: adj}}, nil
}

// Name implements framework.Plugin.
func (*IdleGate) Name() string { return "IdleGate" }

// Gate implements framework.NodeGatePlugin.
func (g *IdleGate) Gate(c *framework.Cycle, n *cluster.NodeInfo) framework.Status {
	free := c.FreeOn(n)
	ok, live := false, false
	if r := g.modes.ref(c, n); r != nil {
		ok, live = r.Schedulable(free)
	}
	if !live {
		ok, _ = g.modes.adjuster.Schedulable(n.ID(), free)
	}
	switch {
	case ok:
		return framework.Status{}
	case !g.modes.mode(c, n).Schedulable():
		return framework.Close(framework.PolicyStop)
	}
	return framework.Close(framework.NodeBusy)
}
