package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/sim/workload"
)

// FillPoint is the cluster's GPU allocation when the GPU demand that had arrived
// reached Arrived of its GPU capacity.
type FillPoint struct {
	// Arrived is the GPU demand of the tasks that arrived so far (placed or not),
	// over the cluster's GPU capacity; it may exceed 1.
	Arrived float64
	// Allocated is the GPU share of the tasks placed so far, over the capacity: 1 −
	// Allocated is the unallocated GPU the ATC'23 study plots.
	Allocated float64
	// Placed and Failed count the tasks placed and refused so far, GPU-less tasks
	// included.
	Placed, Failed int
}

// FillResult is one fill experiment (Fill).
type FillResult struct {
	// Policy names the policy.
	Policy string
	// Capacity is the cluster's GPU capacity in thousandths of a device.
	Capacity int64
	// Points are the allocation at every Step of arrived demand, in order.
	Points []FillPoint
	// Placed and Failed count every task placed and refused.
	Placed, Failed int
}

// At returns the point at which arrived demand first reached x (in GPU capacity), or
// false when the run stopped before.
func (r *FillResult) At(x float64) (FillPoint, bool) {
	for _, p := range r.Points {
		if p.Arrived >= x-1e-9 {
			return p, true
		}
	}
	return FillPoint{}, false
}

// Fill is the GPU-sharing fill experiment of Weng et al. (USENIX ATC 2023, "Beware of
// Fragmentation", §6): tasks drawn uniformly with replacement from pool (by r) arrive
// one after another on cluster cl, empty at first, and policy p places each as it
// arrives (push mode, Scheduler.Place at time 0; a refused task is not retried) and
// none ever ends, until the GPU demand that has arrived reaches upTo times the
// cluster's GPU capacity (the largest multiple of step at most upTo). It records the
// allocation every step of arrived demand (e.g. 0.01: every percent), one point a
// step. As in the study, a task's GPU demand counts as arrived whether it was placed
// or not, and GPU-less tasks arrive too (they take CPU and memory that GPU tasks may
// then miss) but add no GPU demand. A task a preempting policy evicts is not placed
// again: its GPU counts as unallocated from then on.
//
// The tasks need only Request (restricted to p.RequestDims) and GPU; their class and
// SLO (Task.LatencySensitive, SLO) are passed on. Each arrives as a job of its own. It
// fails on an invalid cluster, an empty pool or one without GPU demand, a task with a
// negative SLO or one on a batch task, a task no node of cl has the devices for even
// empty, a nil r, upTo or step not positive and finite, or an error of the scheduler
// other than a refused placement.
func Fill(pool []workload.Task, cl *workload.Cluster, p Policy, r *rand.Rand, upTo, step float64) (*FillResult, error) {
	switch {
	case r == nil:
		return nil, fieldErr("rand", nil, ErrInvalidInput)
	case len(pool) == 0:
		return nil, fieldErr("pool", 0, ErrInvalidInput)
	case !(upTo > 0) || math.IsInf(upTo, 1):
		return nil, fieldErr("upTo", upTo, ErrInvalidInput)
	case !(step > 0) || step > upTo || upTo/step > 1e6:
		return nil, fieldErr("step", step, ErrInvalidInput)
	}
	if err := cl.Validate(); err != nil {
		return nil, fmt.Errorf("sim: fill: %w: %w", ErrInvalidInput, err)
	}
	capacity := cl.GPUCapacity()
	var gpuDemand int64
	for i := range pool {
		t := &pool[i]
		if err := workload.Schema().Validate(t.Request); err != nil {
			return nil, fieldErr(fmt.Sprintf("pool[%d](%s).Request", i, t.ID), t.Request, fmt.Errorf("%w: %w", ErrInvalidInput, err))
		}
		if err := t.GPU.Validate(); err != nil {
			return nil, fieldErr(fmt.Sprintf("pool[%d](%s).GPU", i, t.ID), t.GPU, fmt.Errorf("%w: %w", ErrInvalidInput, err))
		}
		if t.SLO < 0 || t.SLO > 0 && !t.LatencySensitive {
			return nil, fieldErr(fmt.Sprintf("pool[%d](%s).SLO", i, t.ID), t.SLO, fmt.Errorf("negative, or on a batch task: %w", ErrInvalidInput))
		}
		if !cl.Holds(&workload.Task{GPU: t.GPU}) {
			return nil, fieldErr(fmt.Sprintf("pool[%d](%s).GPU", i, t.ID), t.GPU, fmt.Errorf("no node has the devices: %w", ErrInvalidInput))
		}
		gpuDemand += t.GPU.Total()
	}
	if capacity == 0 || gpuDemand == 0 {
		return nil, fieldErr("GPU", fmt.Sprintf("capacity %d, pool demand %d", capacity, gpuDemand), ErrInvalidInput)
	}
	s, err := p.build(workload.Schema())
	if err != nil {
		return nil, err
	}
	for _, n := range cl.Nodes {
		if err := s.AddNode(finegrain.Node{ID: n.ID, Rack: n.Rack, Capacity: n.Capacity, GPU: n.GPU}); err != nil {
			return nil, fmt.Errorf("sim: fill: node %q: %w: %w", n.ID, ErrScheduler, err)
		}
	}
	res := &FillResult{Policy: p.Name, Capacity: capacity}
	mask := p.requestDims()
	// Point k is due when the arrived demand reaches k × step of the capacity, in
	// whole thousandths; the last is the largest multiple of step at most upTo.
	points := int(math.Floor(upTo/step + 1e-9))
	due := func(k int) int64 { return int64(math.Round(float64(k) * step * float64(capacity))) }
	var arrived, allocated int64
	held := map[string]int64{} // the GPU of each task placed, until evicted
	evict := func(es []finegrain.Eviction) {
		for _, e := range es {
			allocated -= held[e.Task]
			delete(held, e.Task)
		}
	}
	k := 1
	for i := 0; k <= points; i++ {
		t := &pool[r.IntN(len(pool))]
		id := "fill-" + strconv.Itoa(i)
		if err := s.SubmitJob(finegrain.Job{ID: id}); err != nil {
			return nil, fmt.Errorf("sim: fill: %w: %w", ErrScheduler, err)
		}
		if err := s.Submit(finegrain.Task{ID: id, Job: id, Request: t.Request.Only(mask), GPU: t.GPU, Class: taskClass(t), SLO: t.SLO}); err != nil {
			return nil, fmt.Errorf("sim: fill: task %q: %w: %w", t.ID, ErrScheduler, err)
		}
		a, err := s.Place(id, 0)
		var perr *finegrain.PlacementError
		switch {
		case err == nil:
			evict(a.Evicted)
			res.Placed++
			allocated += t.GPU.Total()
			held[id] = t.GPU.Total()
		case errors.As(err, &perr):
			evict(perr.Evicted)
			res.Failed++
		default:
			return nil, fmt.Errorf("sim: fill: task %q: %w: %w", t.ID, ErrScheduler, err)
		}
		arrived += t.GPU.Total()
		for ; k <= points && arrived >= due(k); k++ {
			res.Points = append(res.Points, FillPoint{
				Arrived: float64(arrived) / float64(capacity), Allocated: float64(allocated) / float64(capacity),
				Placed: res.Placed, Failed: res.Failed,
			})
		}
	}
	return res, nil
}
