package plugin

import (
	v1 "k8s.io/api/core/v1"

	"github.com/finegrain/finegrain/policy"
)

// nodeModeChanged is told when a usage report moved node's mode (c.From != c.To):
// it logs the change, counts it in the plugin's metrics (finegrain_nodes,
// finegrain_node_mode_changes_total) and records an Event on the Node (ModeChangedReason; a Warning
// when the mode grew stricter). The next placements on the node follow the new mode
// by themselves (the library's mode gate and matchers).
func (p *Plugin) nodeModeChanged(node string, c policy.Change) {
	p.logger.Info("node mode changed", "node", node, "from", c.From, "to", c.To, "score", c.Score, "recycle", c.Recycle)
	p.nodeModeMoved(c.From, c.To)
	if p.handle == nil || p.handle.EventRecorder() == nil {
		return
	}
	typ := v1.EventTypeNormal
	if c.To > c.From { // the modes run from the mildest, FineGrained, to StopAllocation
		typ = v1.EventTypeWarning
	}
	p.handle.EventRecorder().Eventf(p.nodeRef(node), nil, typ, ModeChangedReason, "AdjustMode",
		"finegrain mode %v -> %v (prediction conformity score %.3g)", c.From, c.To, c.Score)
}
