package cluster

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// SetExternalLoad holds on node n, from now until the next report replaces it, load
// that the scheduler did not place (other applications sharing the server). Where the
// reservations already there leave less than load, what is free is held; the amount
// held is returned. A zero load clears the report.
func (s *State) SetExternalLoad(n *NodeInfo, now time.Duration, load resource.Tuple) (resource.Tuple, error) {
	if n == nil || !s.holds(n) {
		return resource.Tuple{}, fmt.Errorf("cluster: external load: node: %w", ErrUnknownNode)
	}
	if err := s.schema.Validate(load); err != nil {
		return resource.Tuple{}, err
	}
	if n.external != 0 {
		_ = n.tl.Release(n.external)
		n.external = 0
	}
	n.load = load
	held := load.Min(n.tl.MinFree(now, stage.Forever).Max(resource.Tuple{}))
	if !held.IsZero() {
		p, err := stage.Constant(s.schema, held, stage.Forever)
		if err == nil {
			n.external, err = n.tl.Reserve(max(now, n.tl.Origin()), p, resource.Tuple{})
		}
		if err != nil {
			n.external, held = 0, resource.Tuple{}
		}
	}
	n.held = held
	s.reindex(n)
	s.touch(n)
	return held, nil
}
