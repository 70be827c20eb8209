package fairness

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"
)

// rankedID returns a random task ID built to make the prefix comparison of a job's
// trees (lessRanked) work: IDs alike in their first 8 or 16 bytes, of lengths about
// 16, with zero bytes (which the padding of a short ID also is) and high bytes.
func rankedID(rng *rand.Rand) string {
	parts := []string{"", "t", "j0042-t1", "0123456789abcdef", "0123456789abcde", "\x00", "\xff", "a\x00"}
	var b strings.Builder
	for range 1 + rng.IntN(4) {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	if rng.IntN(2) == 0 {
		fmt.Fprint(&b, rng.IntN(20))
	}
	return b.String()
}

// A job's trees order their items as the task order does: lessRanked, which compares
// the items' copies of the keys and reads the entries' IDs only past their first 16
// bytes, agrees with taskOrder on every pair of entries, equal IDs included (an entry
// is never before itself, nor before a copy of itself).
func TestRankedIsTaskOrder(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("lessRanked(a, b) is taskOrder(a, b) < 0", prop.ForAll(func(seed uint64) string {
		rng := rand.New(rand.NewPCG(seed, 7))
		var es []*PendingEntry[struct{}]
		for range 2 + rng.IntN(30) {
			e := &PendingEntry[struct{}]{ID: rankedID(rng), Job: "j", Priority: rng.IntN(3) - 1, Submitted: time.Duration(rng.IntN(2))}
			es = append(es, e)
			if rng.IntN(4) == 0 { // a copy: the same keys at another address
				c := *e
				es = append(es, &c)
			}
		}
		for _, a := range es {
			for _, b := range es {
				if got, want := lessRanked(rankOf(a), rankOf(b)), taskOrder(a, b) < 0; got != want {
					return fmt.Sprintf("%+q (priority %d, submitted %v) before %+q (priority %d, submitted %v): %v, taskOrder says %v",
						a.ID, a.Priority, a.Submitted, b.ID, b.Priority, b.Submitted, got, want)
				}
			}
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
}
