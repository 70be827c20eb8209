package predict

import (
	"fmt"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
)

// What a key keeps is bounded whatever the length of the series it learns from: a
// history of fixed size, and at most the segmenter's cap of stages.
func TestKeyMemoryIsBounded(t *testing.T) {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 30
	props := gopter.NewProperties(p)
	schema := resource.Standard()
	props.Property("per-key state does not grow with the series", prop.ForAll(func(seed uint64, k, b int) string {
		s, err := NewSimilarTask(schema, WithHistory(k, b))
		if err != nil {
			return err.Error()
		}
		key := Key{Logic: "x", InputSize: 1}
		for i, n := range []int{1, 10, 1000, 4000 + int(seed%4000)} {
			var sr Series
			for j := 0; j < n; j++ {
				u := schema.MustTuple(int64(100+(uint64(j)*7919+seed)%1000), int64(1+(j*104729+i)%4096)<<20)
				sr.Samples = append(sr.Samples, Sample{At: time.Duration(j) * time.Second, Usage: u})
			}
			sr.End = time.Duration(n) * time.Second
			if err := s.Observe(key, Observation{Series: sr}); err != nil {
				return err.Error()
			}
			s.Redivide()
			e := s.load(s.canon(key))
			h := e.hist
			if len(h.peak) != k*b*schema.Len() || len(h.rc) != k*b || len(h.rcObs) != k || h.n > k {
				return fmt.Sprintf("after %d samples the history holds %d peaks, %d ratios, %d observations", n, len(h.peak), len(h.rc), h.n)
			}
			if len(e.dur) > DefaultMaxStages || len(e.dem) != len(e.dur) {
				return fmt.Sprintf("after %d samples the estimate has %d stages", n, len(e.dur))
			}
		}
		return ""
	}, gen.UInt64(), gen.IntRange(1, 16), gen.IntRange(2, 64)))
	props.TestingRun(t)
}
