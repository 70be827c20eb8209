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

// HeartbeatCap (NodeGate) closes a heartbeat's node once the heartbeat started Max
// tasks there (backups included; tasks on other nodes that a Permit plugin allowed
// during the heartbeat do not count). Reason CapReached.
type HeartbeatCap struct{ Max int }

// Name implements framework.Plugin.
func (HeartbeatCap) Name() string { return "HeartbeatCap" }

// Gate implements framework.NodeGatePlugin.
func (h HeartbeatCap) Gate(c *framework.Cycle, n *cluster.NodeInfo) framework.Status {
	if h.Max <= 0 {
		return framework.Status{}
	}
	started := 0
	for i := range c.Decision().Assignments {
		if c.Decision().Assignments[i].Node == n.ID() {
			started++
		}
	}
	if started >= h.Max {
		return framework.Close(framework.CapReached)
	}
	return framework.Status{}
}

// modes reads nodes' modes from an adjuster through references (policy.ModeRef) kept
// by node index (cluster.NodeInfo.Index), so that a filter asking for a node's mode
// costs no lookup by ID and no lock: it reads what adjuster.Mode would. References
// are taken in pull and push cycles, which one owner drives; probes, which may run
// concurrently, only read them.
type modes struct {
	adjuster *policy.Adjuster
	refs     []modeRef // by node index
}

// modeRef is the reference to a node's mode, for that node.
type modeRef struct {
	node *cluster.NodeInfo
	ref  *policy.ModeRef
}

// mode is node n's mode: adjuster.Mode(n.ID()).
func (m *modes) mode(c *framework.Cycle, n *cluster.NodeInfo) policy.NodeMode {
	if r := m.ref(c, n); r != nil {
		if mode, ok := r.Mode(); ok {
			return mode
		}
	}
	return m.adjuster.Mode(n.ID())
}

// ref is the reference to node n's mode; nil when the adjuster does not track n, or
// in a probe when no pull or push cycle took the reference yet. It may be void (the
// node was removed from the adjuster): then ask the adjuster.
func (m *modes) ref(c *framework.Cycle, n *cluster.NodeInfo) *policy.ModeRef {
	i := n.Index()
	if i < len(m.refs) && m.refs[i].node == n {
		if _, ok := m.refs[i].ref.Mode(); ok {
			return m.refs[i].ref
		}
	}
	if c == nil || c.Mode() == framework.Probe {
		return nil
	}
	ref, ok := m.adjuster.Ref(n.ID())
	if !ok {
		return nil
	}
	if i >= len(m.refs) {
		m.refs = append(m.refs, make([]modeRef, max(i+1, c.State().NodeSlots())-len(m.refs))...)
	}
	m.refs[i] = modeRef{node: n, ref: ref}
	return ref
}
