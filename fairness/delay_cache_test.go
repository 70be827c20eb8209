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

// Delay remembers the job it last looked up, and a WaitRef the job it was filled for.
// Driven by random offers, questions, heartbeats and forgets over a few jobs, a Delay
// asked by ID and one asked through references kept for the whole run (one per job,
// one shared by all jobs, one another Delay filled) answer exactly as a twin that looks
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
		byRef, _ := NewDelay(opts...)
		other, _ := NewDelay(opts...)
		var refs [4]WaitRef
		var roaming, foreign WaitRef
		ref := func(job string) *WaitRef {
			switch r.Intn(4) {
			case 0:
				return &roaming
			case 1:
				_, _, _ = other.OfferByRef(&foreign, job, OffSwitch)
				return &foreign
			}
			return &refs[job[1]-'0']
		}
		delays := []*Delay{d, byRef}
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
				c, cok, _ := byRef.OfferByRef(ref(job), job, l)
				if a != b || aok != bok || c != b || cok != bok {
					return fmt.Sprintf("op %d %s: %v %v, by ref %v %v, afresh %v %v", op, what, a, aok, c, cok, b, bok)
				}
			case x < 6:
				what = fmt.Sprintf("Allowed(%s)", job)
				a, b, c := d.Allowed(job), twin.Allowed(job), byRef.AllowedByRef(ref(job), job)
				if a != b || c != b {
					return fmt.Sprintf("op %d %s: %v, by ref %v, afresh %v", op, what, a, c, b)
				}
			case x < 8:
				what = fmt.Sprintf("Forget(%s)", job)
				d.Forget(job)
				twin.Forget(job)
				byRef.Forget(job)
			default:
				now += time.Duration(r.Intn(3000)) * time.Millisecond
				what = fmt.Sprintf("Heartbeat(%v)", now)
				_ = d.Heartbeat(now)
				_ = twin.Heartbeat(now)
				_ = byRef.Heartbeat(now)
			}
			for i, x := range delays {
				if x.Len() != twin.Len() {
					return fmt.Sprintf("op %d %s: delay %d: %d jobs, afresh %d", op, what, i, x.Len(), twin.Len())
				}
				for k := range 4 {
					j := fmt.Sprintf("j%d", k)
					if a, b := x.State(j), twin.State(j); a != b {
						return fmt.Sprintf("op %d %s: delay %d: %s %+v, afresh %+v", op, what, i, j, a, b)
					}
				}
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}
