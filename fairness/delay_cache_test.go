package fairness

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
)

// Delay remembers the job it last looked up. Driven by random offers, questions,
// heartbeats and forgets over a few jobs, it answers exactly as a twin that looks
// every job up afresh.
func TestDelayLookupCacheChangesNothing(t *testing.T) {
	props := gopter.NewProperties(gopter.DefaultTestParameters())
	props.Property("answers as without the cache", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		opts := []DelayOption{WithWaits(3*time.Second, 5*time.Second)}
		if r.Intn(2) == 0 {
			opts = []DelayOption{WithSkips(2, 3)}
		}
		d, _ := NewDelay(opts...)
		twin, _ := NewDelay(opts...)
		now := time.Duration(0)
		for op := range 300 {
			twin.lastJob, twin.lastW = "", nil
			job := fmt.Sprintf("j%d", r.Intn(4))
			what := ""
			switch x := r.Intn(10); {
			case x < 4:
				l := Level(r.Intn(3))
				what = fmt.Sprintf("Offer(%s, %v)", job, l)
				a, aok, _ := d.Offer(job, l)
				b, bok, _ := twin.Offer(job, l)
				if a != b || aok != bok {
					return fmt.Sprintf("op %d %s: %v %v, afresh %v %v", op, what, a, aok, b, bok)
				}
			case x < 6:
				what = fmt.Sprintf("Allowed(%s)", job)
				if a, b := d.Allowed(job), twin.Allowed(job); a != b {
					return fmt.Sprintf("op %d %s: %v, afresh %v", op, what, a, b)
				}
			case x < 8:
				what = fmt.Sprintf("Forget(%s)", job)
				d.Forget(job)
				twin.Forget(job)
			default:
				now += time.Duration(r.Intn(3000)) * time.Millisecond
				what = fmt.Sprintf("Heartbeat(%v)", now)
				_ = d.Heartbeat(now)
				_ = twin.Heartbeat(now)
			}
			if d.Len() != twin.Len() {
				return fmt.Sprintf("op %d %s: %d jobs, afresh %d", op, what, d.Len(), twin.Len())
			}
			for k := range 4 {
				j := fmt.Sprintf("j%d", k)
				if a, b := d.State(j), twin.State(j); a != b {
					return fmt.Sprintf("op %d %s: %s %+v, afresh %+v", op, what, j, a, b)
				}
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}
