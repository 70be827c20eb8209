package plugins

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/stage"
)

// QueueAdmission (PreFilter) refuses a task whose job, or a queue above it, would go
// above its max share holding one more task of the task's peak demand (Capacity's
// "elastic up to the maximum", fairness.Tree.Admit). Reason MaxShare.
type QueueAdmission struct{}

// Name implements framework.Plugin.
func (QueueAdmission) Name() string { return "QueueAdmission" }

// PreFilter implements framework.PreFilterPlugin.
func (QueueAdmission) PreFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	st := c.State()
	if !st.HasMaxShare() {
		return framework.Status{}
	}
	j, _ := st.Job(a.Task.Job())
	if st.Admit(j, a.Demand.Hold.Peak()) != nil {
		return framework.Refuse(framework.MaxShare)
	}
	return framework.Status{}
}

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

// Filter implements framework.FilterPlugin.
func (g *ModeGate) Filter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	if !g.modes.mode(c, a.Node).Schedulable() {
		return framework.Refuse(framework.PolicyStop)
	}
	return framework.Status{}
}

// StageMatch (Filter) matches the task's demand against the node's timeline: by its
// request for an unpredictable task (Alg. 1 line 8, match.RequestQuantity), otherwise
// with the node mode's matcher — fine-grained stage matching (Alg. 2) with the
// compression the policy.Compression manager allows (eq. 6/7) in the fine-grained
// modes, the peak against the window's least free amount in CoarseGrained — or the
// matcher set for the mode. It writes the verdict to Attempt.Result. Reason NoRoom.
type StageMatch struct {
	modes       modes
	compression *policy.Compression
	matchers    [policy.ModeStopAllocation + 1]match.Matcher // by mode: the mode's own, or the one set for it
}

// NewStageMatch returns the matching filter; matchers replaces the matcher of some
// modes (nil keeps every mode's own).
func NewStageMatch(adj *policy.Adjuster, comp *policy.Compression, matchers map[policy.NodeMode]match.Matcher) (*StageMatch, error) {
	if adj == nil || comp == nil {
		return nil, fmt.Errorf("plugins: stage match: nil adjuster or compression manager: %w", cluster.ErrInvalid)
	}
	m := &StageMatch{modes: modes{adjuster: adj}, compression: comp}
	for mode := range m.matchers {
		m.matchers[mode] = policy.NodeMode(mode).Matcher()
	}
	for mode, mt := range matchers {
		if mt == nil || !mode.Schedulable() {
			return nil, fmt.Errorf("plugins: stage match: matcher for mode %v: %w", mode, cluster.ErrInvalid)
		}
		m.matchers[mode] = mt
	}
	return m, nil
}

// Name implements framework.Plugin.
func (*StageMatch) Name() string { return "StageMatch" }

// Filter implements framework.FilterPlugin.
func (m *StageMatch) Filter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	server := m.compression.Server(a.Node.ID(), a.Node.Timeline())
	if a.Demand.Predicted {
		mode := m.modes.mode(c, a.Node)
		mt := match.Matcher(match.RefuseAll{}) // an invalid mode: as Mode.Matcher
		if int(mode) < len(m.matchers) {
			mt = m.matchers[mode]
		}
		a.Result = mt.Match(server, a.Start, a.Demand.Hold)
	} else {
		a.Result = match.RequestQuantity{}.Match(server, a.Start, a.Demand.Hold)
	}
	if !a.Result.Code.OK() {
		return framework.Refuse(framework.NoRoom)
	}
	return framework.Status{}
}

// firstFits reports whether a predicted task whose first stage alone is the profile
// first could start on node n at start as far as that stage goes: false only when the
// node mode's matcher is match.FineGrained and refuses first there. Fine-grained
// matching checks each stage on its own window (the stages laid end to end from
// start, compression does not stretch them), so a task whose first stage it refuses
// is refused whatever its later stages; with a compression manager that is a
// match.MonotoneAllowance, as policy.Compression is, the answer costs one least free
// amount over the stage's window (stage.Timeline.MinFree) and, when that is short on a
// compressible dimension, one allowance. Any other matcher is not asked (true).
func (m *StageMatch) firstFits(c *framework.Cycle, n *cluster.NodeInfo, start time.Duration, first stage.Profile) bool {
	mode := m.modes.mode(c, n)
	if int(mode) >= len(m.matchers) {
		return true
	}
	mt, ok := m.matchers[mode].(match.FineGrained)
	if !ok {
		return true
	}
	return mt.Match(m.compression.Server(n.ID(), n.Timeline()), start, first).Code.OK()
}

// QoS (Filter) runs a QoS check on a match that compresses anything (Alg. 1 line 17):
// by default the eq. 15 deadline check over the tasks on the node, whose profiles are
// on its timeline. It may replace Attempt.Result with the check's verdict. Reason QoS.
type QoS struct {
	compression *policy.Compression
	check       match.QoSCheck // nil: the deadline check
}

// NewQoS returns the QoS filter running q, or the eq. 15 deadline check when q is nil.
func NewQoS(comp *policy.Compression, q match.QoSCheck) (*QoS, error) {
	if comp == nil {
		return nil, fmt.Errorf("plugins: QoS: nil compression manager: %w", cluster.ErrInvalid)
	}
	return &QoS{compression: comp, check: q}, nil
}

// Name implements framework.Plugin.
func (*QoS) Name() string { return "QoS" }

// Filter implements framework.FilterPlugin.
func (q *QoS) Filter(_ *framework.Cycle, a *framework.Attempt) framework.Status {
	if !a.Result.Compressed() {
		return framework.Status{}
	}
	check := q.check
	if check == nil {
		check = match.DeadlineCheck{Running: deadlines(a.Node)}
	}
	server := q.compression.Server(a.Node.ID(), a.Node.Timeline())
	a.Result = check.CheckQoS(server, a.Start, match.Work{ID: a.Task.ID(), Profile: a.Demand.Plan, Deadline: a.Task.Deadline()}, a.Result)
	if !a.Result.Code.OK() {
		return framework.Refuse(framework.QoS)
	}
	return framework.Status{}
}

// deadlines lists the tasks on node n that have deadlines, in ID order, for the eq.
// 15 check.
func deadlines(n *cluster.NodeInfo) func(string) []match.Running {
	return func(string) []match.Running {
		var out []match.Running
		for _, t := range n.Tasks() {
			if d := t.Deadline(); d > 0 {
				out = append(out, match.Running{Work: match.Work{ID: t.ID(), Profile: t.Plan(), Deadline: d}, Start: t.Start()})
			}
		}
		return out
	}
}
