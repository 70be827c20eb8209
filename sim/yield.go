package sim

import (
	"fmt"

	"github.com/finegrain/finegrain/resource"
)

// Yield is who gives way on a node's compressible dimension (CPU, bandwidth) when the
// tasks and the co-located applications (WithBackground) together want more than the
// node has. Non-compressible dimensions are not shared out under either model: the
// co-located applications always keep their memory, and a task is killed while the
// node's memory is over-committed (docs/methods.md §6).
type Yield uint8

const (
	// ColocatedFirst (the default): the co-located applications get their demand, up to
	// the node's capacity less MinTaskShare, and the tasks share what is left in
	// proportion to their demand (eq. 1 over the remainder). It is how production
	// clouds that host batch work beside services run it: a Kubernetes BestEffort pod's
	// cgroup has 2 CPU shares against 1,024 per requested core for the services' pods,
	// Koordinator runs batch as its BE class beside LS services and throttles BE CPU
	// when LS needs it, and Borg's batch tier yields to the production tier. The tasks
	// on a node the applications fill crawl at MinTaskShare.
	ColocatedFirst Yield = iota
	// Proportional: everyone on the node, tasks and co-located applications alike, gets
	// capacity ÷ demand of its demand (eq. 1 applied to the node's whole demand), as
	// CPU time is divided among equal-weight cgroups that all want more than their
	// share. The co-located applications then lose as much, in proportion, as the
	// tasks: the execution model of the project's first cloud figures.
	Proportional
)

// MinTaskShare is the share of a node's capacity, on each compressible dimension, the
// tasks keep under ColocatedFirst while they want it, however much the co-located
// applications want: 1% (rounded down to whole units). The Linux scheduler never
// starves a runnable cgroup, whatever its weight, and a simulated task that made no
// progress at all on a node the applications fill would never end.
const MinTaskShare = 0.01

// DefaultYield is the model the simulator applies unless WithYield says otherwise.
const DefaultYield = ColocatedFirst

func (y Yield) String() string {
	switch y {
	case ColocatedFirst:
		return "colocated-first"
	case Proportional:
		return "proportional"
	}
	return fmt.Sprintf("Yield(%d)", uint8(y))
}

// ParseYield is the inverse of Yield.String.
func ParseYield(s string) (Yield, error) {
	switch s {
	case "colocated-first":
		return ColocatedFirst, nil
	case "proportional":
		return Proportional, nil
	}
	return 0, fieldErr("yield", s, ErrInvalidOption)
}

// WithYield sets who yields on a compressible dimension when a node is over-committed:
// ColocatedFirst (DefaultYield) or Proportional. It matters only with WithBackground.
func WithYield(y Yield) Option {
	return func(c *config) error {
		if y != ColocatedFirst && y != Proportional {
			return fieldErr("yield", y, ErrInvalidOption)
		}
		c.yield = y
		return nil
	}
}

// squeeze returns the compression ratios of node capacity capa for total demand d, of
// which bg is the co-located applications': rc for the tasks and bgRC for the
// applications, on every compressible dimension comp the node has some of (eq. 1).
func (y Yield) squeeze(capa, d, bg resource.Tuple, comp resource.Mask, dims int) (rc, bgRC resource.Vector) {
	for k := 0; k < dims; k++ {
		// A dimension the node has none of is not modelled (it cannot be shared).
		if !comp.Has(k) || capa[k] <= 0 {
			continue
		}
		if y == Proportional {
			if d[k] > capa[k] {
				rc[k] = 1 - float64(capa[k])/float64(d[k])
				bgRC[k] = rc[k]
			}
			continue
		}
		tasks := d[k] - bg[k]
		floor := min(tasks, int64(float64(capa[k])*MinTaskShare))
		got := bg[k]
		if room := capa[k] - floor; got > room {
			got = room
			bgRC[k] = 1 - float64(room)/float64(bg[k])
		}
		if left := capa[k] - got; tasks > left {
			rc[k] = 1 - float64(left)/float64(tasks)
		}
	}
	return rc, bgRC
}
