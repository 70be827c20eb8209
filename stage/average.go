package stage

import (
	"time"

	"github.com/finegrain/finegrain/resource"
)

// TimeAverage accumulates the time-weighted average of eq. 14, r = Σ(ri × ti)/T: a value
// that held ri for ti, over the total T = Σti. FGM uses it for a server's idle
// resources, actual usage μ and predicted usage α over a window. The zero value is an
// empty average, ready to use. Not safe for concurrent use.
type TimeAverage struct {
	sum   resource.Vector
	total time.Duration
}

// Add records that value held for d. Non-positive durations are ignored.
func (a *TimeAverage) Add(value resource.Tuple, d time.Duration) {
	if d <= 0 {
		return
	}
	w := float64(d)
	for i, x := range value {
		a.sum[i] += float64(x) * w
	}
	a.total = AddSat(a.total, d)
}

// Duration is the total time recorded, T.
func (a *TimeAverage) Duration() time.Duration { return a.total }

// Mean is the time-weighted average Σ(ri × ti)/T per dimension, or zero when nothing
// has been recorded.
func (a *TimeAverage) Mean() resource.Vector {
	var m resource.Vector
	if a.total == 0 {
		return m
	}
	t := float64(a.total)
	for i, s := range a.sum {
		m[i] = s / t
	}
	return m
}
