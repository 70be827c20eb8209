package predict_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
)

// TestRefsManyAnswerAsEstimate is TestRefAnswersAsEstimate with more of what a caller
// does: several Refs to one key (copies, and Refs to other sizes of its bucket), Refs
// made afresh in the middle of the sequence (after the key was evicted or forgotten
// and observed again), keys that need several observations, and the estimators'
// memory compared after every step, not only at the end.
func TestRefsManyAnswerAsEstimate(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("every Ref answers as Estimate, step by step", prop.ForAll(func(seed int64, maxKeys, minObs int, buckets, nearest bool) string {
		r := rng(seed)
		opts := []predict.EstimatorOption{predict.WithMaxKeys(maxKeys), predict.WithMinObservations(minObs)}
		if buckets {
			b, err := predict.LogBuckets(2)
			require.NoError(t, err)
			opts = append(opts, predict.WithSizeBuckets(b))
		}
		if nearest {
			opts = append(opts, predict.WithNearestSize(4))
		}
		byKey, byRef := newEst(t, opts...), newEst(t, opts...)
		keys := make([]predict.Key, 8)
		for i := range keys {
			keys[i] = predict.Key{Logic: fmt.Sprintf("l%d", r.IntN(2)), InputSize: r.Int64N(40)}
		}
		refs := make([][]predict.Ref, len(keys)) // several per key
		for i, k := range keys {
			refs[i] = []predict.Ref{byRef.Ref(k)}
		}
		for step := 0; step < 120; step++ {
			i := r.IntN(len(keys))
			switch r.IntN(7) {
			case 0, 1:
				obs := predict.Observation{Profile: randProfile(r, 1+r.IntN(3))}
				if (byKey.Observe(keys[i], obs) == nil) != (byRef.Observe(keys[i], obs) == nil) {
					return fmt.Sprintf("step %d: observe differs", step)
				}
			case 2:
				if byKey.Forget(keys[i]) != byRef.Forget(keys[i]) {
					return fmt.Sprintf("step %d: forget differs", step)
				}
			case 3:
				// A new Ref, or a copy of one in use.
				if r.IntN(2) == 0 {
					refs[i] = append(refs[i], byRef.Ref(keys[i]))
				} else {
					refs[i] = append(refs[i], refs[i][r.IntN(len(refs[i]))])
				}
			default:
				p, ok := byKey.Estimate(keys[i])
				j := r.IntN(len(refs[i]))
				q, okRef := refs[i][j].Estimate()
				if ok != okRef || !slices.Equal(p.Stages(), q.Stages()) {
					return fmt.Sprintf("step %d key %v ref %d: Estimate %v %v, Ref %v %v", step, keys[i], j, ok, p, okRef, q)
				}
			}
			if byKey.Len() != byRef.Len() {
				return fmt.Sprintf("step %d: %d keys, through Refs %d", step, byKey.Len(), byRef.Len())
			}
			for _, k := range keys {
				if a, b := byKey.Observations(k), byRef.Observations(k); a != b {
					return fmt.Sprintf("step %d: key %v: %d observations, through Refs %d", step, k, a, b)
				}
			}
		}
		return ""
	}, gen.Int64(), gen.IntRange(1, 5), gen.IntRange(1, 3), gen.Bool(), gen.Bool()))
	props.TestingRun(t)
}
