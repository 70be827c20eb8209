package plugins

import (
	"fmt"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
)

// GPUScore (Score) ranks the nodes a task passed on in push mode with a gpu.DeviceScorer
// (gpu.DeviceBestFit, gpu.DotProduct, gpu.Packing, gpu.FGD or your own), times Weight, and
// records the devices the score assumes in the attempt, so that the task holds those
// if the node wins. The scorer sees the node's least free amount over the task's
// window and the peak of what the task holds, as NodeScore does.
type GPUScore struct {
	scorer gpu.DeviceScorer
	weight float64
}

// NewGPUScore returns the GPU scoring plugin for sc with weight w (a finite number > 0).
func NewGPUScore(sc gpu.DeviceScorer, w float64) (*GPUScore, error) {
	if sc == nil || !(w > 0) || w > 1e300 {
		return nil, fmt.Errorf("plugins: GPU score: scorer %v, weight %v: %w", sc, w, cluster.ErrInvalid)
	}
	return &GPUScore{scorer: sc, weight: w}, nil
}

// Name implements framework.Plugin.
func (*GPUScore) Name() string { return "GPUScore" }

// ViewSafe implements framework.ViewSafe: it reads the attempt, the node's timeline
// and devices, and sets the attempt's devices.
func (*GPUScore) ViewSafe() {}

// Score implements framework.ScorePlugin.
func (s *GPUScore) Score(_ *framework.Cycle, a *framework.Attempt) float64 {
	tl, hold := a.Node.Timeline(), a.Demand.Hold
	node := gpu.Node{Capacity: tl.Capacity(), Free: match.WindowFree(tl, a.Start, hold, a.Result), Devices: a.Node.Devices()}
	x, alloc, ok := s.scorer.Score(node, gpu.Shape{Request: hold.Peak(), GPU: a.Task.GPU()})
	if !ok {
		return 0
	}
	a.Devices = alloc
	return s.weight * x
}
