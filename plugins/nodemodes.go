package plugins

import (
	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/policy"
)

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

// ref is the reference to node n's mode; nil when the adjuster does not track n, in a
// probe when no pull or push cycle took the reference yet, or for a view of a node
// (cluster.NodeInfo.View: probed without the state's lock, while cycles may take
// references). It may be void (the node was removed from the adjuster): then ask the
// adjuster.
func (m *modes) ref(c *framework.Cycle, n *cluster.NodeInfo) *policy.ModeRef {
	if n.IsView() {
		return nil
	}
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
