package predict_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// twinEstimators returns two estimators configured alike: a cap of maxKeys keys,
// minObs observations before a key is predictable, with input sizes bucketed by powers
// of base and, when nearest is set, with the nearest known size within factor.
func twinEstimators(t *testing.T, maxKeys, minObs int, buckets bool, base float64, nearest bool, factor float64) (*predict.SimilarTask, *predict.SimilarTask) {
	opts := []predict.EstimatorOption{predict.WithMaxKeys(maxKeys), predict.WithMinObservations(minObs)}
	if buckets {
		b, err := predict.LogBuckets(base)
		require.NoError(t, err)
		opts = append(opts, predict.WithSizeBuckets(b))
	}
	if nearest {
		opts = append(opts, predict.WithNearestSize(factor))
	}
	return newEst(t, opts...), newEst(t, opts...)
}

// TestRefAnswersAsEstimate runs one random sequence of observations, forgets and
// queries on two estimators alike, asking one through Key lookups (Estimate) and the
// other through Refs kept from step to step. Every answer must be the same, and so
// must what each remembers at the end: with a cap of a few keys, a Ref that skipped a
// use of its key, or read an evicted entry, changes which keys are evicted.
func TestRefAnswersAsEstimate(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("Ref.Estimate is Estimate", prop.ForAll(func(seed int64, maxKeys, minObs int, buckets, nearest bool) bool {
		r := rng(seed)
		byKey, byRef := twinEstimators(t, maxKeys, minObs, buckets, 4, nearest, 8)
		keys := make([]predict.Key, 6)
		for i := range keys {
			keys[i] = predict.Key{Logic: fmt.Sprintf("l%d", r.IntN(2)), InputSize: r.Int64N(1 << 12)}
		}
		refs := make([]predict.Ref, len(keys))
		for i, k := range keys {
			refs[i] = byRef.Ref(k)
		}
		for step := 0; step < 60; step++ {
			i := r.IntN(len(keys))
			switch r.IntN(5) {
			case 0, 1:
				obs := predict.Observation{Profile: randProfile(r, 1+r.IntN(3))}
				if (byKey.Observe(keys[i], obs) == nil) != (byRef.Observe(keys[i], obs) == nil) {
					return false
				}
			case 2:
				if byKey.Forget(keys[i]) != byRef.Forget(keys[i]) {
					return false
				}
			default:
				p, ok := byKey.Estimate(keys[i])
				q, okRef := refs[i].Estimate()
				if ok != okRef || !slices.Equal(p.Stages(), q.Stages()) {
					t.Logf("step %d key %v: Estimate %v %v, Ref %v %v", step, keys[i], ok, p, okRef, q)
					return false
				}
			}
		}
		for _, k := range keys {
			if byKey.Observations(k) != byRef.Observations(k) {
				return false
			}
		}
		return byKey.Len() == byRef.Len()
	}, gen.Int64(), gen.IntRange(1, 4), gen.IntRange(1, 2), gen.Bool(), gen.Bool()))
	props.TestingRun(t)
}

// TestRefsManyAnswerAsEstimate is TestRefAnswersAsEstimate with more of what a caller
// does: several Refs to one key (copies, and Refs to other sizes of its bucket), Refs
// made afresh in the middle of the sequence (after the key was evicted or forgotten
// and observed again), keys that need several observations, and the estimators'
// memory compared after every step, not only at the end.
func TestRefsManyAnswerAsEstimate(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("every Ref answers as Estimate, step by step", prop.ForAll(func(seed int64, maxKeys, minObs int, buckets, nearest bool) string {
		r := rng(seed)
		byKey, byRef := twinEstimators(t, maxKeys, minObs, buckets, 2, nearest, 4)
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

func TestRefEdges(t *testing.T) {
	var zero predict.Ref
	_, ok := zero.Estimate()
	assert.False(t, ok, "the zero Ref refers to nothing")
	assert.Equal(t, predict.Key{}, zero.Key())
	var none *predict.Ref
	_, ok = none.Estimate()
	assert.False(t, ok, "nor does a nil one")
	assert.Equal(t, predict.Key{}, none.Key())

	halves, err := predict.LogBuckets(2)
	require.NoError(t, err)
	e := newEst(t, predict.WithSizeBuckets(halves))
	bad := e.Ref(predict.Key{Logic: "x", InputSize: -1})
	_, ok = bad.Estimate()
	assert.False(t, ok, "an invalid key is unpredictable")

	ref := e.Ref(predict.Key{Logic: "x", InputSize: 5})
	assert.Equal(t, predict.Key{Logic: "x", InputSize: 4}, ref.Key(), "the canonical key: the size's bucket")
	_, ok = ref.Estimate()
	require.False(t, ok, "no observation yet")
	p := prof(t, [3]int64{1, 100, 1 << 20})
	require.NoError(t, e.Observe(predict.Key{Logic: "x", InputSize: 7}, predict.Observation{Profile: p}))
	got, ok := ref.Estimate()
	require.True(t, ok, "a key observed after the Ref's first miss is found")
	assert.Equal(t, p.Stages(), got.Stages())
	require.True(t, e.Forget(predict.Key{Logic: "x", InputSize: 6}))
	_, ok = ref.Estimate()
	assert.False(t, ok, "a forgotten key is not answered from the entry the Ref held")
	q := prof(t, [3]int64{2, 200, 1 << 21})
	require.NoError(t, e.Observe(predict.Key{Logic: "x", InputSize: 4}, predict.Observation{Profile: q}))
	got, ok = ref.Estimate()
	require.True(t, ok)
	assert.Equal(t, q.Stages(), got.Stages(), "the key's new entry, not the forgotten one")
}

// TestRefConcurrent reads through Refs, one per goroutine, while others observe and
// forget the same keys; run with -race. Every answer is one of the profiles observed.
func TestRefConcurrent(t *testing.T) {
	e := newEst(t, predict.WithMaxKeys(2))
	keys := []predict.Key{{Logic: "a", InputSize: 1}, {Logic: "b", InputSize: 1}, {Logic: "c", InputSize: 1}}
	p := prof(t, [3]int64{1, 100, 1 << 20})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			ref := e.Ref(keys[w%len(keys)])
			for i := 0; i < 2000; i++ {
				switch {
				case w%2 == 0:
					if got, ok := ref.Estimate(); ok && !slices.Equal(got.Stages(), p.Stages()) {
						errs <- fmt.Sprintf("read %v", got)
						return
					}
				case i%3 == 0:
					e.Forget(keys[i%len(keys)])
				default:
					if err := e.Observe(keys[i%len(keys)], predict.Observation{Profile: p}); err != nil {
						errs <- err.Error()
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	assert.LessOrEqual(t, e.Len(), 2)
}

func ExampleSimilarTask_Ref() {
	est, _ := predict.NewSimilarTask(std)
	key := predict.Key{Logic: "wordcount/map", InputSize: 128 << 20}
	ref := est.Ref(key) // kept, say, per class of pending tasks
	_, ok := ref.Estimate()
	fmt.Println("before any observation:", ok)
	p := stage.MustProfile(std, stage.Stage{Duration: 3e9, Demand: std.MustTuple(500, 1<<30)})
	_ = est.Observe(key, predict.Observation{Profile: p})
	got, ok := ref.Estimate()
	fmt.Println("after one:", ok, got.Duration())
	// Output:
	// before any observation: false
	// after one: true 3s
}
