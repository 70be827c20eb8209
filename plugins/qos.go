package plugins

import (
	"fmt"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
)

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

// ViewSafe implements framework.ViewSafe: it reads the attempt, its node's timeline
// and the tasks with deadlines there (cluster.NodeInfo.DeadlineTasks).
func (*QoS) ViewSafe() {}

// deadlines lists the tasks on node n that have deadlines, in ID order, for the eq.
// 15 check.
func deadlines(n *cluster.NodeInfo) func(string) []match.Running {
	return func(string) []match.Running {
		var out []match.Running
		for _, t := range n.DeadlineTasks() {
			out = append(out, match.Running{Work: match.Work{ID: t.ID, Profile: t.Plan, Deadline: t.Deadline}, Start: t.Start})
		}
		return out
	}
}
