package plugins

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/stage"
)

// DefaultGangTimeout is how long a gang's members wait, reserved, for the rest of the
// gang before they are rolled back: the Kubernetes coscheduling plugin's default
// permit waiting time (60 s).
const DefaultGangTimeout = 60 * time.Second

// Gang (PreFilter, Reserve, Permit) runs gang jobs (cluster.JobSpec.MinMember > 1)
// all-or-nothing, as Volcano and the Kubernetes coscheduling plugin do:
//
//   - Permit: a member of a gang that has not gathered (cluster.JobInfo.Gathered) is
//     reserved tentatively and kept waiting (framework.Wait) until enough of its
//     gang are reserved to bring its running, finished and reserved tasks to
//     MinMember (finished tasks count, as in Volcano), and the waiting members'
//     reservations can move to start now; then all of them are committed together,
//     starting now (framework.Cycle.AllowAll). Once gathered, a gang's further tasks start as they fit; a gang
//     that loses every running task to evictions or failures gathers again.
//   - A gang whose members are not all reserved within the timeout (counted from
//     its first waiting member) is rolled back: every waiting member is pending
//     again, nothing of the gang runs, and the gang waits before it gathers again —
//     one timeout after its first rollback, twice as long after each further one, up
//     to 64 timeouts — so that other gangs get their turn, and a gang that cannot
//     gather (it does not fit beside what runs, or at all) holds less and less of the
//     cluster up.
//   - PreFilter: a gang with fewer live and finished tasks than MinMember (some were
//     cancelled) cannot gather, and is refused (GangShort) without holding anything
//     up.
//   - PreFilter: one gang gathers at a time. While a gang has members waiting, the
//     members of another gang that is not running are refused (GangWaiting). Two
//     gangs that each fit the cluster alone but not together therefore never each
//     hold part of what they need: the one gathering completes or times out.
//   - PreFilter (pull mode): the room a rollback frees goes to other work first. After
//     a rollback, each node's first pull cycle in which a gang would begin to gather
//     leaves the node to other work (GangWaiting); gangs begin there again from its
//     next cycle. Gangs that have not gathered hold nothing, so under DRF they come
//     early in the fairness order: without this turn, gangs that cannot gather, each
//     back from its backoff in turn, could begin one after another at every rollback
//     and keep a plain task off the cluster for ever, however many they are. The turn
//     is counted per node, not per cycle or per span of time: when heartbeats come at
//     the same instant, the rollbacks all happen in the first node's cycle, and every
//     node still gives its turn, then lets a gang that needs all of them begin. In
//     push mode the embedder chooses which task to place, and no turn is kept.
//
// The gathering gang is found from the framework's waiting list, so a member
// cancelled or lost while waiting leaves nothing behind.
type Gang struct {
	timeout time.Duration
	holder  string                 // the job gathering (members waiting), if any
	until   time.Duration          // the holder's deadline
	backoff map[string]gangBackoff // job → when it may gather again after rollbacks

	rollbacks uint64     // gangs rolled back so far
	turns     []nodeTurn // by node index: the latest rollback each node gave a turn for
}

// nodeTurn is the turn a node gave other work after a rollback: the number of
// rollbacks then (Gang.rollbacks), and the pull cycle (framework.Cycle.Gen) that was
// the turn.
type nodeTurn struct{ rollbacks, gen uint64 }

// gangBackoff is a gang's wait after rollbacks: one timeout after the first, doubling
// with each further rollback up to maxBackoff timeouts.
type gangBackoff struct {
	until     time.Duration
	rollbacks int
}

// maxDoublings bounds a gang's backoff at 2^6 = 64 timeouts.
const maxDoublings = 6

// NewGang returns the gang plugin; timeout (> 0) is how long members wait for their
// gang.
func NewGang(timeout time.Duration) (*Gang, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("plugins: gang timeout %v ≤ 0: %w", timeout, cluster.ErrInvalid)
	}
	return &Gang{timeout: timeout, backoff: map[string]gangBackoff{}}, nil
}

// Name implements framework.Plugin.
func (*Gang) Name() string { return "Gang" }

// Timeout is how long members wait for their gang.
func (g *Gang) Timeout() time.Duration { return g.timeout }

// gathering reports whether job j is a gang that has not gathered (or must gather
// again).
func gathering(j *cluster.JobInfo) bool { return !j.Gathered() }

// current is the gang gathering now ("" for none), checked against the waiting list.
func (g *Gang) current(c *framework.Cycle) string {
	if g.holder == "" {
		return ""
	}
	for _, t := range c.Waiting() {
		if t.Job() == g.holder {
			return g.holder
		}
	}
	g.holder = "" // its members left their reservations by other means
	return ""
}

// ViewSafe implements framework.ViewSafe: its PreFilter reads the node only in pull
// mode (a node's turn after a rollback), never in a probe.
func (*Gang) ViewSafe() {}

// PreFilter implements framework.PreFilterPlugin.
func (g *Gang) PreFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	j, ok := c.State().Job(a.Task.Job())
	if !ok || !gathering(j) {
		return framework.Status{}
	}
	if j.Live()+j.Finished() < j.Spec().MinMember {
		return framework.Refuse(framework.GangShort)
	}
	h := g.current(c)
	if h != "" && h != j.ID() {
		return framework.Refuse(framework.GangWaiting)
	}
	if b, ok := g.backoff[j.ID()]; ok && c.Now() < b.until {
		return framework.Refuse(framework.GangWaiting)
	}
	if h == "" && g.othersTurn(c, a.Node) {
		return framework.Refuse(framework.GangWaiting)
	}
	return framework.Status{}
}

// othersTurn reports whether a gang about to begin to gather on node n in cycle c
// must leave n to other work: c is a pull cycle, and the first one on n, since the
// latest rollback, in which a gang would begin.
func (g *Gang) othersTurn(c *framework.Cycle, n *cluster.NodeInfo) bool {
	if c.Mode() != framework.Pull || n == nil || g.rollbacks == 0 {
		return false
	}
	i := n.Index()
	if i >= len(g.turns) {
		g.turns = append(g.turns, make([]nodeTurn, i+1-len(g.turns))...)
	}
	t := &g.turns[i]
	if t.rollbacks != g.rollbacks {
		*t = nodeTurn{rollbacks: g.rollbacks, gen: c.Gen()}
	}
	return t.gen == c.Gen()
}

// Forget implements framework.ForgetPlugin: a forgotten job's backoff goes (a later
// job may take its ID).
func (g *Gang) Forget(j *cluster.JobInfo) { delete(g.backoff, j.ID()) }

// Reserve implements framework.ReservePlugin.
func (*Gang) Reserve(*framework.Cycle, *framework.Attempt) framework.Status {
	return framework.Status{}
}

// Unreserve implements framework.ReservePlugin: a gathering gang's member rolled back
// (its wait timed out, or a plugin refused it) rolls the gang back.
func (g *Gang) Unreserve(c *framework.Cycle, a *framework.Attempt) {
	id := a.Task.Job()
	if id != g.holder {
		return
	}
	g.holder = ""
	g.rollbacks++
	b := g.backoff[id]
	b.rollbacks = min(b.rollbacks+1, maxDoublings+1)
	wait := g.timeout
	for i := 1; i < b.rollbacks && wait < stage.Forever/2; i++ {
		wait *= 2
	}
	b.until = stage.AddSat(c.Now(), wait)
	g.backoff[id] = b
	for _, t := range c.Waiting() {
		if t.Job() == id {
			_ = c.Reject(t.ID())
		}
	}
}

// Permit implements framework.PermitPlugin.
func (g *Gang) Permit(c *framework.Cycle, a *framework.Attempt) (framework.Status, time.Duration) {
	j, ok := c.State().Job(a.Task.Job())
	if !ok || !gathering(j) {
		return framework.Status{}, 0
	}
	var members []string
	for _, t := range c.Waiting() {
		if t.Job() == j.ID() {
			members = append(members, t.ID())
		}
	}
	// Enough to run together, and the waiting members' reservations can move to
	// start now (AllowAll moves them all or none): the gang starts. When all of
	// them cannot start together but the few it needs can, those start and the
	// others go back to pending (they start later, as a gathered gang's tasks do).
	if need := j.Spec().MinMember - j.NumRunning() - j.Finished() - 1; need <= len(members) {
		allowed := c.AllowAll(members...) == nil
		if !allowed && need < len(members) {
			if allowed = c.AllowAll(members[:max(need, 0)]...) == nil; allowed {
				if g.holder == j.ID() {
					g.holder = "" // it started: sending its surplus back is no rollback
				}
				for _, id := range members[max(need, 0):] {
					_ = c.Reject(id)
				}
			}
		}
		if allowed {
			if g.holder == j.ID() {
				g.holder = ""
			}
			delete(g.backoff, j.ID())
			return framework.Status{}, 0
		}
	}
	if g.holder != j.ID() {
		g.holder, g.until = j.ID(), stage.AddSat(c.Now(), g.timeout)
	}
	return framework.Status{Code: framework.Wait, Reason: framework.PermitWaiting}, g.until - c.Now()
}
