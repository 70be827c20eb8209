package plugins

import (
	"fmt"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
)

// Booking (Pass) is FutureStart in pull mode: after the locality pass, it books the
// first waiting task, in fairness order among the first jobs it looks at, that has
// waited FutureStart.Wait and fits no node now, on the node and at the start
// FutureStart finds (not necessarily the heartbeat's node): one booking per
// heartbeat.
type Booking struct {
	fs *FutureStart
}

// NewBooking returns the pull-mode booking pass of fs.
func NewBooking(fs *FutureStart) (*Booking, error) {
	if fs == nil {
		return nil, fmt.Errorf("plugins: booking: nil future start: %w", cluster.ErrInvalid)
	}
	return &Booking{fs: fs}, nil
}

// Name implements framework.Plugin.
func (*Booking) Name() string { return "Booking" }

// maxLook bounds the jobs a heartbeat's booking pass looks at.
const maxLook = 16

// Pass implements framework.PassPlugin.
func (b *Booking) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	st := c.State()
	if st.Count(cluster.Pending) == 0 {
		return nil
	}
	looked := 0
	st.Walk(func(j *cluster.JobInfo) bool {
		if looked++; looked > maxLook {
			return false
		}
		t, _, ok := st.FirstPending(j, n, fairness.OffSwitch)
		if !ok || !b.fs.bookable(c, t) {
			return true
		}
		a, ok := stuck(c, t, nil)
		if !ok {
			return true
		}
		best, ok := b.fs.earliest(c, &a)
		if !ok {
			return true
		}
		best.Level = st.Locality(t, best.Node)
		return !c.TryAt(&best).OK()
	})
	return nil
}
