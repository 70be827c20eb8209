package plugins

import (
	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
)

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
