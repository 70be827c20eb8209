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

// ViewSafe implements framework.ViewSafe: it reads the attempt, the node's timeline
// and its mode (from the adjuster, safe for concurrent use), and the compression
// manager, which does not change.
func (*StageMatch) ViewSafe() {}

// Filter implements framework.FilterPlugin.
func (m *StageMatch) Filter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	server := m.compression.Server(a.Node.ID(), a.Node.Timeline())
	if a.Demand.Predicted {
		mode := m.modes.mode(c, a.Node)
		mt := match.Matcher(match.RefuseAll{}) // an invalid mode: as Mode.Matcher
		if int(mode) < len(m.matchers) {
			mt = m.matchers[mode]
		}
		// A matcher that writes its verdict in place saves each candidate a copy of a
		// large Result (match.MatcherTo).
		if to, ok := mt.(match.MatcherTo); ok {
			to.MatchTo(&a.Result, server, a.Start, a.Demand.Hold)
		} else {
			a.Result = mt.Match(server, a.Start, a.Demand.Hold)
		}
	} else {
		match.RequestQuantity{}.MatchTo(&a.Result, server, a.Start, a.Demand.Hold)
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
