package predict_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

func TestSimilarTaskProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	weights := gen.Float64Range(0.01, 1)

	props.Property("the first observation is the estimate", prop.ForAll(func(seed int64) bool {
		r := rng(seed)
		e := newEst(t)
		p := randProfile(r, 1+r.IntN(8))
		if e.Observe(key, predict.Observation{Profile: p, Compression: randCompression(r, p.Len())}) != nil {
			return false
		}
		q, ok := e.Estimate(key)
		return ok && slices.Equal(q.Stages(), p.Stages())
	}, gen.Int64()))

	props.Property("identical observations converge to them", prop.ForAll(func(seed int64, w float64) bool {
		r := rng(seed)
		e := newEst(t, predict.WithBaseWeight(w), predict.WithEnvelope(0, 0)) // the update alone
		n := 1 + r.IntN(6)
		first, target := randProfile(r, n), randProfile(r, n)
		if e.Observe(key, predict.Observation{Profile: first}) != nil {
			return false
		}
		prev := first
		for i := 0; i < 40; i++ {
			if e.Observe(key, predict.Observation{Profile: target}) != nil {
				return false
			}
			cur, _ := e.Estimate(key)
			// Each step moves every value towards the target, never past it.
			for s := 0; s < n; s++ {
				a, b, c := prev.Stage(s), cur.Stage(s), target.Stage(s)
				if !between(b.Duration, a.Duration, c.Duration) {
					return false
				}
				for d := range b.Demand {
					if !between(b.Demand[d], a.Demand[d], c.Demand[d]) {
						return false
					}
				}
			}
			prev = cur
		}
		// After 40 steps the distance is at most (1 − w)^40 of the initial one, plus
		// rounding.
		left := math.Pow(1-w, 40)
		for s := 0; s < n; s++ {
			a, b, c := first.Stage(s), prev.Stage(s), target.Stage(s)
			if math.Abs(float64(b.Duration-c.Duration)) > left*math.Abs(float64(a.Duration-c.Duration))+1 {
				return false
			}
			for d := range b.Demand {
				if math.Abs(float64(b.Demand[d]-c.Demand[d])) > left*math.Abs(float64(a.Demand[d]-c.Demand[d]))+1 {
					return false
				}
			}
		}
		return true
	}, gen.Int64(), weights))

	props.Property("compression ratio 1 changes nothing", prop.ForAll(func(seed int64, w float64) bool {
		r := rng(seed)
		e := newEst(t, predict.WithBaseWeight(w), predict.WithEnvelope(0, 0))
		first := randProfile(r, 1+r.IntN(6))
		if e.Observe(key, predict.Observation{Profile: first}) != nil {
			return false
		}
		m := 1 + r.IntN(6) // any stage count: resampled compression is 1 everywhere too
		full := make([]resource.Vector, m)
		for i := range full {
			full[i] = resource.Uniform(std.Compressible(), 1)
		}
		if e.Observe(key, predict.Observation{Profile: randProfile(r, m), Compression: full}) != nil {
			return false
		}
		q, _ := e.Estimate(key)
		return slices.Equal(q.Stages(), first.Stages())
	}, gen.Int64(), weights))

	props.Property("the update is a convex combination (equal stage counts)", prop.ForAll(func(seed int64, w float64) bool {
		r := rng(seed)
		e := newEst(t, predict.WithBaseWeight(w), predict.WithEnvelope(0, 0))
		n := 1 + r.IntN(6)
		if e.Observe(key, predict.Observation{Profile: randProfile(r, n)}) != nil {
			return false
		}
		for i := 0; i < 5; i++ {
			old, _ := e.Estimate(key)
			obs := randProfile(r, n)
			if e.Observe(key, predict.Observation{Profile: obs, Compression: randCompression(r, n)}) != nil {
				return false
			}
			cur, _ := e.Estimate(key)
			for s := 0; s < n; s++ {
				a, b, c := old.Stage(s), cur.Stage(s), obs.Stage(s)
				if !between(b.Duration, a.Duration, c.Duration) {
					return false
				}
				for d := range b.Demand {
					if !between(b.Demand[d], a.Demand[d], c.Demand[d]) {
						return false
					}
				}
			}
		}
		return true
	}, gen.Int64(), weights))

	props.Property("resampling stays within the envelope of estimate and observation", prop.ForAll(func(seed int64, w float64, peak bool) bool {
		r := rng(seed)
		mode := predict.ResampleMean
		if peak {
			mode = predict.ResamplePeak
		}
		e := newEst(t, predict.WithBaseWeight(w), predict.WithResample(mode), predict.WithEnvelope(0, 0))
		n := 1 + r.IntN(6)
		if e.Observe(key, predict.Observation{Profile: randProfile(r, n)}) != nil {
			return false
		}
		old, _ := e.Estimate(key)
		m := 1 + r.IntN(8)
		obs := randProfile(r, m)
		if e.Observe(key, predict.Observation{Profile: obs, Compression: randCompression(r, m)}) != nil {
			return false
		}
		cur, _ := e.Estimate(key)
		if cur.Len() != n {
			return false // the estimate keeps its stages
		}
		lo, hi := envelope(obs)
		for s := 0; s < n; s++ {
			a, b := old.Stage(s), cur.Stage(s)
			for d := range b.Demand {
				if b.Demand[d] < min(a.Demand[d], lo[d]) || b.Demand[d] > max(a.Demand[d], hi[d]) {
					return false
				}
			}
		}
		if m == n {
			return true // stage by stage: covered by the convex-combination property
		}
		// Resampled stage i is the fraction f_i of both totals, so its new duration is
		// f_i × ((1 − w'_i) × old + w'_i × obs): the new total is a convex combination
		// of the two totals, whatever the compression (± rounding per stage).
		d := cur.Duration()
		return d >= min(old.Duration(), obs.Duration())-stageSlack(n) && d <= max(old.Duration(), obs.Duration())+stageSlack(n)
	}, gen.Int64(), weights, gen.Bool()))

	props.Property("the number of keys never exceeds the cap; the newest key is kept", prop.ForAll(func(seed int64, capacity int) bool {
		r := rng(seed)
		e := newEst(t, predict.WithMaxKeys(capacity))
		for i := 0; i < 50; i++ {
			k := predict.Key{Logic: fmt.Sprint(r.IntN(3 * capacity)), InputSize: 1}
			if e.Observe(k, predict.Observation{Profile: prof(t, [3]int64{1, 1, 1})}) != nil || e.Observations(k) == 0 || e.Len() > capacity {
				return false
			}
		}
		return true
	}, gen.Int64(), gen.IntRange(1, 8)))

	props.Property("eviction matches a reference LRU", prop.ForAll(func(seed int64, capacity int) bool {
		r := rng(seed)
		e := newEst(t, predict.WithMaxKeys(capacity))
		var model []string // least recently used first
		touch := func(k string) {
			if i := slices.Index(model, k); i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
			model = append(model, k)
		}
		for i := 0; i < 60; i++ {
			name := fmt.Sprint(r.IntN(2 * capacity))
			k := predict.Key{Logic: name}
			switch r.IntN(3) {
			case 0: // estimate: a hit counts as a use
				if _, ok := e.Estimate(k); ok != slices.Contains(model, name) {
					return false
				}
				if slices.Contains(model, name) {
					touch(name)
				}
			default: // observe
				if !slices.Contains(model, name) && len(model) == capacity {
					model = model[1:]
				}
				touch(name)
				if e.Observe(k, predict.Observation{Profile: prof(t, [3]int64{1, 1, 1})}) != nil {
					return false
				}
			}
			if e.Len() != len(model) {
				return false
			}
		}
		for _, name := range model {
			if e.Observations(predict.Key{Logic: name}) == 0 {
				return false
			}
		}
		return true
	}, gen.Int64(), gen.IntRange(1, 6)))

	props.Property("log buckets are monotone, never above the size, and fixed on their bounds", prop.ForAll(func(base float64, a, b int64) bool {
		bk, err := predict.LogBuckets(base)
		if err != nil {
			return false
		}
		a, b = min(a, b), max(a, b)
		ba, bb := bk(a), bk(b)
		return ba <= bb && ba <= a && bb <= b && ba >= 1 && bk(ba) == ba && bk(bb) == bb
	}, gen.OneGenOf(gen.Float64Range(1.0001, 1.02), gen.Float64Range(1.02, 16)), // float and table paths
		gen.OneGenOf(gen.Int64Range(1, 1<<20), gen.Int64Range(1, math.MaxInt64)),
		gen.OneGenOf(gen.Int64Range(1, 1<<20), gen.Int64Range(1, math.MaxInt64))))
	props.TestingRun(t)
}

// envelope returns the per-dimension minimum and maximum demand over p's stages.
func envelope(p stage.Profile) (lo, hi resource.Tuple) {
	lo = p.Stage(0).Demand
	for i := 0; i < p.Len(); i++ {
		lo, hi = lo.Min(p.Stage(i).Demand), hi.Max(p.Stage(i).Demand)
	}
	return lo, hi
}

// stageSlack is the rounding a total of n stages may accumulate.
func stageSlack(n int) time.Duration { return time.Duration(n) }
