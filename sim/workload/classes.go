package workload

import (
	"math"
	"math/rand/v2"
	"time"
)

// sloFor is the SLO the generators and FromOpenB give a latency-sensitive task t:
// factor times its true run time (t.True's duration), rounded up to a nanosecond and
// saturating at the largest time.Duration (WithSLOFactor). factor below 1, or not
// finite, counts as DefaultSLOFactor.
func sloFor(t *Task, factor float64) time.Duration {
	if !(factor >= 1) || math.IsInf(factor, 1) {
		factor = DefaultSLOFactor
	}
	v := math.Ceil(float64(t.True.Duration()) * factor)
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(v)
}

// setLatencySensitive makes task t latency-sensitive with the SLO of c's factor.
func (c *config) setLatencySensitive(t *Task) {
	t.LatencySensitive, t.SLO = true, sloFor(t, c.sloFactor)
}

// classify makes round(c.lsFrac × jobs) of w's jobs latency-sensitive, chosen with one
// r.Perm over the jobs, and no draw when that is none or all of them
// (WithLatencySensitive).
func (c *config) classify(w *Workload, r *rand.Rand) {
	n := len(w.Jobs)
	k := int(math.Round(c.lsFrac * float64(n)))
	if k == 0 {
		return
	}
	mark := func(j *Job) {
		for i := range j.Tasks {
			c.setLatencySensitive(&j.Tasks[i])
		}
	}
	if k == n {
		for i := range w.Jobs {
			mark(&w.Jobs[i])
		}
		return
	}
	for _, i := range r.Perm(n)[:k] {
		mark(&w.Jobs[i])
	}
}
