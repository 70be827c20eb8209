package cluster

import (
	"fmt"
	"slices"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// This file changes a node the state holds in place — its capacity and its GPU
// devices, as an orchestrator learns that they changed — and holds the GPU shares that
// work the scheduler did not place uses (SetExternalDevices).

// UpdateNode changes the capacity and the GPU devices of node spec.ID to spec's, at
// now, keeping the tasks placed there with their reservations and devices: the node's
// free amounts move by the difference (stage.Timeline.SetCapacity), the cluster's
// total and the fairness shares follow, and the external load (SetExternalLoad) and
// external device shares (SetExternalDevices) are held again against the new room.
// A capacity below what the node's reservations hold leaves it over-committed — its
// free amounts below zero, nothing more placed there — until they end. A GPU model
// change keeps the devices' shares; added devices are free. It fails, changing
// nothing, on an unknown node, a different rack (remove the node and add it again to
// move it), an invalid or all-zero capacity, one that would take the cluster's total
// out of the int64 range, an invalid GPU spec, or fewer devices than a task holds
// (ErrState: a task holds a device that would go).
func (s *State) UpdateNode(spec NodeSpec, now time.Duration) error {
	n, ok := s.nodes[spec.ID]
	if !ok {
		return fmt.Errorf("cluster: update node %q: %w", spec.ID, ErrUnknownNode)
	}
	if spec.Rack != n.spec.Rack {
		return fmt.Errorf("cluster: update node %q: rack %q, was %q: remove and add the node to move it: %w", spec.ID, spec.Rack, n.spec.Rack, ErrInvalid)
	}
	if err := s.schema.Validate(spec.Capacity); err != nil {
		return fmt.Errorf("cluster: update node %q: capacity: %w", spec.ID, err)
	}
	if spec.Capacity == (resource.Tuple{}) {
		return fmt.Errorf("cluster: update node %q: capacity is zero on every dimension: %w", spec.ID, ErrInvalid)
	}
	total, ok := s.capacity.Sub(n.spec.Capacity).CheckedAdd(spec.Capacity)
	if !ok {
		return fmt.Errorf("cluster: update node %q: capacity %s: the cluster's total would leave the int64 range: %w",
			spec.ID, s.schema.Format(spec.Capacity), resource.ErrOverflow)
	}
	gpus, err := s.resized(n, spec.GPU)
	if err != nil {
		return fmt.Errorf("cluster: update node %q: %w", spec.ID, err)
	}
	if err := n.tl.SetCapacity(spec.Capacity); err != nil {
		return fmt.Errorf("cluster: update node %q: %w", spec.ID, err) // not reached: validated above
	}
	s.capacity = total
	s.shapes.remove(n.spec.Capacity)
	s.shapes.add(spec.Capacity)
	if k := (gpuShape{n.spec.Capacity, n.spec.GPU}); k.spec.Count > 0 {
		if s.gpuShapes[k]--; s.gpuShapes[k] == 0 {
			delete(s.gpuShapes, k)
		}
	}
	if spec.GPU.Count > 0 {
		if s.gpuShapes == nil {
			s.gpuShapes = map[gpuShape]int{}
		}
		s.gpuShapes[gpuShape{spec.Capacity, spec.GPU}]++
	}
	s.treeApply(treeOp{kind: opCapacity, a: total})
	n.spec = spec
	n.gpus = gpus
	n.extHeld = nil // resized holds what the tasks hold, and no external share
	if len(n.extWant) > 0 {
		s.holdExternalDevices(n)
	}
	if n.external != 0 || !n.load.IsZero() {
		if _, err := s.SetExternalLoad(n, now, n.load); err != nil {
			return fmt.Errorf("cluster: update node %q: external load: %w", spec.ID, err) // not reached: the load was valid
		}
	}
	s.reindex(n)
	s.touch(n) // its views (View) are out of date
	return nil
}

// resized returns node n's devices as spec makes them, each kept device with the
// share n's tasks hold of it (external shares left out: they are held again after).
// It fails on an invalid spec, or when a device that would go is held by a task.
func (s *State) resized(n *NodeInfo, spec gpu.Spec) (gpu.Devices, error) {
	gpus, err := gpu.New(spec)
	if err != nil {
		return gpu.Devices{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	for i := range n.gpus.Len() {
		used := gpu.Milli - n.gpus.Free(i)
		if i < len(n.extHeld) {
			used -= n.extHeld[i]
		}
		if used == 0 {
			continue
		}
		if i >= spec.Count {
			return gpu.Devices{}, fmt.Errorf("%d devices: device %d holds %d thousandths of the tasks placed there: %w", spec.Count, i, used, ErrState)
		}
		if err := gpus.Take(gpu.Allocation{Devices: []int{i}, Milli: used}); err != nil {
			return gpu.Devices{}, fmt.Errorf("device %d: %w: %w", i, ErrInvalid, err) // not reached: a fresh device holds any share
		}
	}
	return gpus, nil
}

// SetExternalDevices holds, of each device i of node n's GPUs, used[i] thousandths
// (0 to gpu.Milli) for work the scheduler did not place — pods another scheduler
// bound, or that were bound before this one started — until the next call replaces
// them. Where the tasks placed there leave less of a device free, what is free is
// held, and more of it as they give the device back; entries for devices the node
// does not have are held once it has them (UpdateNode). It returns what is held of
// each device now. A nil or all-zero used clears the holds. It fails, changing
// nothing, on an unknown node or an amount out of range.
func (s *State) SetExternalDevices(n *NodeInfo, used []int64) ([]int64, error) {
	if n == nil || !s.holds(n) {
		return nil, fmt.Errorf("cluster: external devices: node: %w", ErrUnknownNode)
	}
	for i, u := range used {
		if u < 0 || u > gpu.Milli {
			return nil, fmt.Errorf("cluster: external devices of node %q: device %d: %d thousandths: want 0 to %d: %w", n.spec.ID, i, u, gpu.Milli, ErrInvalid)
		}
	}
	for i, h := range n.extHeld {
		if h > 0 {
			_ = n.gpus.Release(gpu.Allocation{Devices: []int{i}, Milli: h}) // taken by holdExternalDevices
		}
	}
	n.extHeld = nil
	n.extWant = nil
	if slices.ContainsFunc(used, func(u int64) bool { return u > 0 }) {
		n.extWant = slices.Clone(used)
		s.holdExternalDevices(n)
	}
	s.touch(n) // its devices changed: its views (View) are out of date
	return slices.Clone(n.extHeld), nil
}

// holdExternalDevices takes n.extWant on n's devices, each clipped to what is free,
// into n.extHeld, which holds nothing before.
func (s *State) holdExternalDevices(n *NodeInfo) {
	n.extHeld = make([]int64, n.gpus.Len())
	for i := range min(len(n.extWant), n.gpus.Len()) {
		h := min(n.extWant[i], n.gpus.Free(i))
		if h > 0 && n.gpus.Take(gpu.Allocation{Devices: []int{i}, Milli: h}) == nil {
			n.extHeld[i] = h
		}
	}
}

// regrowExternal holds more of the external shares of node n's devices that found too
// little free when they were set, now that a task gave some back.
func (s *State) regrowExternal(n *NodeInfo) {
	for i := range min(len(n.extWant), len(n.extHeld)) {
		short := n.extWant[i] - n.extHeld[i]
		if short <= 0 {
			continue
		}
		if h := min(short, n.gpus.Free(i)); h > 0 && n.gpus.Take(gpu.Allocation{Devices: []int{i}, Milli: h}) == nil {
			n.extHeld[i] += h
		}
	}
}
