package framework

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/resource"
)

// Mode is the kind of cycle under way.
type Mode uint8

const (
	// Pull: a node has room; which tasks start there (Heartbeat)?
	Pull Mode = iota
	// Push: a task is pending; which node takes it (Place)?
	Push
	// Probe: a host scheduler asks whether a task fits a node, or how a node scores,
	// without reserving (Framework.Filter, Framework.Score).
	Probe
)

func (m Mode) String() string {
	switch m {
	case Pull:
		return "pull"
	case Push:
		return "push"
	case Probe:
		return "probe"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Cycle is one scheduling cycle — a heartbeat, a placement or a probe — and holds
// its scratch: plugins read what they need of it and never keep it.
type Cycle struct {
	fw    *Framework
	mode  Mode
	now   time.Duration
	gen   uint64
	node  *cluster.NodeInfo // pull: the heartbeat's node
	d     *Decision         // pull: what the heartbeat decided so far
	moves uint64            // assignments added to or withdrawn from d so far (Moves)

	free   resource.Tuple // pull: the node's free amount at now, while freeOK
	freeOK bool

	evicted []Eviction // evictions not yet handed to an Assignment

	// allow, in host mode's PostFilter, rules out the nodes the host scheduler's
	// own filters refused (Framework.PostFilter).
	allow func(*cluster.NodeInfo) bool
}

// State is the cluster state the cycle decides on.
func (c *Cycle) State() *cluster.State { return c.fw.state }

// Mode is the kind of cycle.
func (c *Cycle) Mode() Mode { return c.mode }

// Now is the time of the cycle.
func (c *Cycle) Now() time.Duration { return c.now }

// Gen numbers the cycle: plugins keep per-cycle scratch stamped with it (it grows from
// cycle to cycle; probes share the number of the cycle before them).
func (c *Cycle) Gen() uint64 { return c.gen }

// Moves counts the changes to the Decision's assignments so far in the cycle: each
// assignment added, and each withdrawn (a task started in this heartbeat and evicted).
// A plugin that remembers an answer depending on what the heartbeat started (a gate
// counting starts) asks afresh once it changed: the number of assignments alone may
// come back to the same value after a withdrawal and an addition.
func (c *Cycle) Moves() uint64 { return c.moves }

// Decision is what a pull cycle decided so far; nil in other modes.
func (c *Cycle) Decision() *Decision { return c.d }

// Warn logs an unexpected event at warn level, when the framework has a logger.
func (c *Cycle) Warn(msg string, args ...any) { c.fw.warn(msg, args...) }
