package framework

import (
	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/resource"
)

// Free is the pull cycle's node's free resources at now, as its timeline holds them.
func (c *Cycle) Free() resource.Tuple {
	if !c.freeOK {
		c.free, c.freeOK = c.node.Timeline().FreeAt(c.now), true
	}
	return c.free
}

// FreeOn is node n's free resources at now, as its timeline holds them: Free for the
// pull cycle's node, read afresh for any other. NodeGate plugins read it, so that
// Open can ask them about another node.
func (c *Cycle) FreeOn(n *cluster.NodeInfo) resource.Tuple {
	if n == c.node {
		return c.Free()
	}
	return n.Timeline().FreeAt(c.now)
}

// Room reports whether the pull cycle's node may take another task (every NodeGate
// plugin agrees); otherwise it sets the Decision's Stop.
func (c *Cycle) Room() bool { return c.RoomIgnoring(NoReason) }

// Open reports whether every NodeGate plugin would let node n take a task now, were
// its heartbeat under way: a Pass plugin asks it about other nodes than the pull
// cycle's own (delay scheduling, to tell whether a node holding a job's input could
// take its task). Unlike Room, it changes nothing in the Decision.
func (c *Cycle) Open(n *cluster.NodeInfo) bool {
	for _, p := range c.fw.gates {
		if st := p.Gate(c, n); !st.OK() {
			return false
		}
	}
	return true
}

// RoomIgnoring is Room with a refusal for reason r taken as agreement: preemption asks
// RoomIgnoring(NodeBusy), since a node short of idle room is what it makes room on.
func (c *Cycle) RoomIgnoring(r Reason) bool {
	for _, p := range c.fw.gates {
		if st := p.Gate(c, c.node); !st.OK() && (r == NoReason || st.Reason != r) {
			c.d.Stop = st.Reason
			return false
		}
	}
	return true
}

// FilterPass runs the JobFilter plugins' pass check; false (with the Decision's Stop
// set) when the pass should not walk the jobs.
func (c *Cycle) FilterPass() bool {
	for _, p := range c.fw.jobFilters {
		if st := p.FilterPass(c, c.node); !st.OK() {
			c.d.Stop = st.Reason
			return false
		}
	}
	return true
}

// FilterJob runs the JobFilter plugins on job j; on a refusal it passes the job over
// for the rest of the heartbeat and returns false.
func (c *Cycle) FilterJob(j *cluster.JobInfo) bool { return c.CheckJob(j).OK() }

// JobFilters is the JobFilter plugins FilterJob runs, in order: a Pass plugin that
// keeps their answers from one choice to the next (plugins.Tetris) does so only for
// plugins it knows the answers of. The slice is the framework's: read it, do not
// change it.
func (c *Cycle) JobFilters() []JobFilterPlugin { return c.fw.jobFilters }

// CheckJob is FilterJob returning the first refusal's status (named after the plugin
// that refused), or Success when every JobFilter plugin lets job j through. A job
// refused is passed over, as by FilterJob.
func (c *Cycle) CheckJob(j *cluster.JobInfo) Status {
	for _, p := range c.fw.jobFilters {
		if st := p.FilterJob(c, j, c.node); !st.OK() {
			st = named(st, p)
			c.SkipJobFor(j, st.Reason, st.Plugin)
			return st
		}
	}
	return Status{}
}

// Skipped reports whether job j was passed over in this heartbeat.
func (c *Cycle) Skipped(j *cluster.JobInfo) bool {
	i := j.Index()
	return i < len(c.fw.passed) && c.fw.passed[i] == c.gen
}

// SkipJob passes job j over for the rest of the heartbeat; sk, when its Reason is
// set, is recorded in the Decision as a skip.
func (c *Cycle) SkipJob(j *cluster.JobInfo, sk Skip) {
	c.pass(j)
	if sk.Reason != NoReason {
		c.d.skip(&sk)
	}
}

// SkipJobFor is SkipJob with the skip of job j for reason r by plugin (empty: none),
// before a task was chosen (no Task, no match Result): what a walk records for most
// jobs it passes over, without building the Skip unless the Decision details it. With
// NoReason nothing is recorded.
func (c *Cycle) SkipJobFor(j *cluster.JobInfo, r Reason, plugin string) {
	c.pass(j)
	if r != NoReason {
		c.d.skipJob(j, r, plugin)
	}
}

// pass passes job j over for the rest of the heartbeat.
func (c *Cycle) pass(j *cluster.JobInfo) {
	if n := c.fw.state.JobSlots(); len(c.fw.passed) < n {
		c.fw.passed = append(c.fw.passed, make([]uint64, n-len(c.fw.passed))...)
	}
	c.fw.passed[j.Index()] = c.gen
}
