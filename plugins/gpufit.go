package plugins

import (
	"github.com/finegrain/finegrain/framework"
)

// GPUFit (Filter) refuses a node whose GPU devices cannot hold the task's GPU demand
// (cluster.TaskSpec.GPU): a model the task does not allow, or too few devices with its
// share free (gpu.Devices.Fits) — device by device, so eight devices with 0.6 free
// each hold no task that needs a whole one. The devices are held from the task's
// reservation until it ends; the state takes the best fit unless a GPU scorer chose
// (GPUScore). A task without GPU demand passes.
type GPUFit struct{}

// Name implements framework.Plugin.
func (GPUFit) Name() string { return "GPUFit" }

// ViewSafe implements framework.ViewSafe: it reads the task and the node's devices.
func (GPUFit) ViewSafe() {}

// Filter implements framework.FilterPlugin.
func (GPUFit) Filter(_ *framework.Cycle, a *framework.Attempt) framework.Status {
	// Most tasks ask for no device: learning that without copying the demand out saves
	// each candidate node of a push placement a copy through the stack.
	if !a.Task.NeedsGPU() {
		return framework.Status{}
	}
	if d := a.Task.GPU(); !a.Node.Devices().Fits(d) {
		return framework.Refuse(framework.NoGPU)
	}
	return framework.Status{}
}
