package plugins

import (
	"sync"
	"sync/atomic"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/policy"
)

// modes reads nodes' modes from an adjuster through references (policy.ModeRef) kept
// by node index (cluster.NodeInfo.Index), so that a filter asking for a node's mode
// costs no lookup by ID and no lock: it reads what adjuster.Mode would. References
// are taken in pull and push cycles, which one owner drives; probes, which may run
// concurrently, only read them. Probes on views of nodes (framework.TaskProbe), which
// run without the state's owner, keep references of their own (views), taken and read
// without a lock.
type modes struct {
	adjuster *policy.Adjuster
	refs     []modeRef // by node index

	views atomic.Pointer[[]atomic.Pointer[policy.ModeRef]] // by node index, for views
	grow  sync.Mutex                                       // one growth of views at a time
}

// modeRef is the reference to a node's mode, for that node.
type modeRef struct {
	node *cluster.NodeInfo
	ref  *policy.ModeRef
}

// mode is node n's mode: adjuster.Mode(n.ID()).
func (m *modes) mode(c *framework.Cycle, n *cluster.NodeInfo) policy.NodeMode {
	if n.IsView() {
		return m.viewMode(n)
	}
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
		return nil // mode asks viewMode
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

// viewMode is the mode of the node view n is of: adjuster.Mode(n.ID()), read through the
// reference kept for n's index when it is the node's (a view of another node under the
// same index, after a removal, takes the slot over).
func (m *modes) viewMode(n *cluster.NodeInfo) policy.NodeMode {
	i, id := n.Index(), n.ID()
	if refs := m.views.Load(); refs != nil && i < len(*refs) {
		if r := (*refs)[i].Load(); r != nil && r.ID() == id {
			if mode, ok := r.Mode(); ok {
				return mode
			}
		}
	}
	ref, ok := m.adjuster.Ref(id)
	if !ok {
		return m.adjuster.Mode(id)
	}
	m.keep(i, ref)
	mode, _ := ref.Mode()
	return mode
}

// keep keeps r for node index i, growing the table when i is beyond it. A reference
// kept in the old table while another goroutine grows it may be lost: it is taken
// again when next asked for.
func (m *modes) keep(i int, r *policy.ModeRef) {
	if refs := m.views.Load(); refs != nil && i < len(*refs) {
		(*refs)[i].Store(r)
		return
	}
	m.grow.Lock()
	defer m.grow.Unlock()
	old := m.views.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if i < n {
		(*old)[i].Store(r)
		return
	}
	grown := make([]atomic.Pointer[policy.ModeRef], max(i+1, 2*n, 64))
	for k := 0; k < n; k++ {
		grown[k].Store((*old)[k].Load())
	}
	grown[i].Store(r)
	m.views.Store(&grown)
}
