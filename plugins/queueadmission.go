package plugins

import (
	"github.com/finegrain/finegrain/framework"
)

// QueueAdmission (PreFilter) refuses a task whose job, or a queue above it, would go
// above its max share holding one more task of the task's peak demand (Capacity's
// "elastic up to the maximum", fairness.Tree.Admit). Reason MaxShare.
type QueueAdmission struct{}

// Name implements framework.Plugin.
func (QueueAdmission) Name() string { return "QueueAdmission" }

// ViewSafe implements framework.ViewSafe: its verdict is the task's job's, whatever
// the node.
func (QueueAdmission) ViewSafe() {}

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
