package predict_test

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var key = predict.Key{Logic: "wordcount/map", InputSize: 128 << 20}

func newEst(t testing.TB, opts ...predict.EstimatorOption) *predict.SimilarTask {
	t.Helper()
	e, err := predict.NewSimilarTask(std, opts...)
	require.NoError(t, err)
	return e
}

func TestSimilarTaskKnownAnswers(t *testing.T) {
	cpuOnly := func(x float64) []resource.Vector { return []resource.Vector{{x}} }
	tests := []struct {
		name   string
		weight float64
		first  stage.Profile
		obs    predict.Observation
		want   stage.Profile
	}{
		{
			name:   "w=0.5 averages the second observation with the first",
			weight: 0.5,
			first:  prof(t, [3]int64{10, 1000, 1 << 30}),
			obs:    predict.Observation{Profile: prof(t, [3]int64{20, 2000, 3 << 30})},
			want:   prof(t, [3]int64{15, 1500, 2 << 30}),
		},
		{
			name:   "compression 0.2 lowers w to 0.4 (eq. 8 Reading)",
			weight: 0.5,
			first:  prof(t, [3]int64{10, 1000, 1000}),
			obs:    predict.Observation{Profile: prof(t, [3]int64{20, 2000, 2000}), Compression: cpuOnly(0.2)},
			want:   prof(t, [3]int64{14, 1400, 1400}),
		},
		{
			name:   "full compression changes nothing",
			weight: 1,
			first:  prof(t, [3]int64{10, 1000, 1000}),
			obs:    predict.Observation{Profile: prof(t, [3]int64{20, 2000, 2000}), Compression: cpuOnly(1)},
			want:   prof(t, [3]int64{10, 1000, 1000}),
		},
		{
			name:   "stage by stage when the counts agree",
			weight: 0.25,
			first:  prof(t, [3]int64{10, 1000, 0}, [3]int64{40, 0, 800}),
			obs:    predict.Observation{Profile: prof(t, [3]int64{30, 2000, 0}, [3]int64{20, 400, 0})},
			want:   prof(t, [3]int64{15, 1250, 0}, [3]int64{35, 100, 600}),
		},
		{
			name:   "resampled by relative time, mean rule",
			weight: 1,
			first:  prof(t, [3]int64{10, 1000, 0}, [3]int64{30, 3000, 0}),
			// Observed: 3000 over the first half, 0 after. Estimate stage 1 is [0, 0.25):
			// all 3000; stage 2 is [0.25, 1): 3000 for a third of it.
			obs:  predict.Observation{Profile: prof(t, [3]int64{40, 3000, 0}, [3]int64{20, 0, 0}, [3]int64{20, 0, 0})},
			want: prof(t, [3]int64{20, 3000, 0}, [3]int64{60, 1000, 0}),
		},
		{
			name:   "one observed stage spread over two",
			weight: 0.5,
			first:  prof(t, [3]int64{10, 1000, 10}, [3]int64{10, 3000, 30}),
			obs:    predict.Observation{Profile: prof(t, [3]int64{40, 2000, 20})},
			want:   prof(t, [3]int64{15, 1500, 15}, [3]int64{15, 2500, 25}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The eq. 8 Reading alone: no envelope under the update.
			e := newEst(t, predict.WithBaseWeight(tt.weight), predict.WithEnvelope(0, 0))
			require.NoError(t, e.Observe(key, predict.Observation{Profile: tt.first}))
			p, ok := e.Estimate(key)
			require.True(t, ok)
			assert.Equal(t, tt.first.Stages(), p.Stages(), "the first observation initialises")
			require.NoError(t, e.Observe(key, tt.obs))
			p, ok = e.Estimate(key)
			require.True(t, ok)
			assert.Equal(t, tt.want.Stages(), p.Stages())
			assert.Equal(t, 2, e.Observations(key))
		})
	}
}

func TestSimilarTaskResamplePeak(t *testing.T) {
	e := newEst(t, predict.WithBaseWeight(1), predict.WithResample(predict.ResamplePeak))
	require.NoError(t, e.Observe(key, predict.Observation{Profile: prof(t, [3]int64{10, 1000, 0}, [3]int64{30, 3000, 0})}))
	obs := prof(t, [3]int64{20, 4000, 0}, [3]int64{20, 0, 7}, [3]int64{40, 0, 0})
	require.NoError(t, e.Observe(key, predict.Observation{Profile: obs}))
	p, _ := e.Estimate(key)
	// Stage 1 [0, 0.25) meets only the first observed stage; stage 2 [0.25, 1) takes the
	// peaks of the other two (the mean would give memory 7 × 20/60 ≈ 2).
	assert.Equal(t, prof(t, [3]int64{20, 4000, 0}, [3]int64{60, 0, 7}).Stages(), p.Stages())
}

func TestSimilarTaskMinObservations(t *testing.T) {
	e := newEst(t, predict.WithMinObservations(3))
	for i := 1; i <= 3; i++ {
		_, ok := e.Estimate(key)
		assert.False(t, ok, "unpredictable after %d observations", i-1)
		require.NoError(t, e.Observe(key, predict.Observation{Profile: prof(t, [3]int64{10, 1000, 0})}))
	}
	_, ok := e.Estimate(key)
	assert.True(t, ok)
}

func TestSimilarTaskBuckets(t *testing.T) {
	b, err := predict.LogBuckets(2)
	require.NoError(t, err)
	e := newEst(t, predict.WithSizeBuckets(b))
	require.NoError(t, e.Observe(predict.Key{Logic: "job", InputSize: 100}, predict.Observation{Profile: prof(t, [3]int64{10, 1000, 0})}))
	p, ok := e.Estimate(predict.Key{Logic: "job", InputSize: 127})
	require.True(t, ok, "127 shares 100's bucket [64, 128)")
	assert.Equal(t, 10*time.Second, p.Duration())
	_, ok = e.Estimate(predict.Key{Logic: "job", InputSize: 128})
	assert.False(t, ok, "128 starts the next bucket")
	_, ok = e.Estimate(predict.Key{Logic: "other", InputSize: 100})
	assert.False(t, ok, "another logic is not similar")
	assert.True(t, e.Forget(predict.Key{Logic: "job", InputSize: 64}))
	assert.Equal(t, 0, e.Len())
}

func TestBucketings(t *testing.T) {
	log2, err := predict.LogBuckets(2)
	require.NoError(t, err)
	log10, err := predict.LogBuckets(10)
	require.NoError(t, err)
	log15, err := predict.LogBuckets(1.5)
	require.NoError(t, err)
	lin, err := predict.LinearBuckets(100)
	require.NoError(t, err)
	tests := []struct {
		name string
		b    predict.Bucketing
		in   []int64
		want []int64
	}{
		{"log 2", log2, []int64{0, 1, 2, 3, 4, 1023, 1024, math.MaxInt64}, []int64{0, 1, 2, 2, 4, 512, 1024, 1 << 62}},
		{"log 10", log10, []int64{0, 1, 9, 10, 99, 100, 999, 1000, 1e18}, []int64{0, 1, 1, 10, 10, 100, 100, 1000, 1e18}},
		{"log 1.5", log15, []int64{1, 2, 3, 4, 5, 6, 7}, []int64{1, 2, 3, 4, 4, 6, 6}},
		{"linear 100", lin, []int64{0, 99, 100, 250}, []int64{0, 0, 100, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, in := range tt.in {
				assert.Equal(t, tt.want[i], tt.b(in), "bucket of %d", in)
			}
		})
	}
}

func TestSimilarTaskNearestSize(t *testing.T) {
	e := newEst(t, predict.WithNearestSize(2), predict.WithMinObservations(1))
	require.NoError(t, e.Observe(predict.Key{Logic: "job", InputSize: 100}, predict.Observation{Profile: prof(t, [3]int64{10, 1000, 5}, [3]int64{20, 0, 5})}))
	require.NoError(t, e.Observe(predict.Key{Logic: "job", InputSize: 400}, predict.Observation{Profile: prof(t, [3]int64{80, 3000, 5})}))

	p, ok := e.Estimate(predict.Key{Logic: "job", InputSize: 150})
	require.True(t, ok)
	assert.Equal(t, prof(t, [3]int64{15, 1000, 5}, [3]int64{30, 0, 5}).Stages(), p.Stages(), "durations scale ×1.5")

	p, ok = e.Estimate(predict.Key{Logic: "job", InputSize: 200})
	require.True(t, ok)
	assert.Equal(t, prof(t, [3]int64{40, 3000, 5}).Stages(), p.Stages(), "tie between 100 and 400: the larger wins")

	_, ok = e.Estimate(predict.Key{Logic: "job", InputSize: 1000})
	assert.False(t, ok, "400 is more than a factor 2 away")
	_, ok = e.Estimate(predict.Key{Logic: "job", InputSize: 40})
	assert.False(t, ok, "100 is more than a factor 2 away")
	assert.Equal(t, 2, e.Len(), "a scaled estimate learns nothing")
}

func TestSimilarTaskNearestSkipsUnpredictable(t *testing.T) {
	e := newEst(t, predict.WithNearestSize(4), predict.WithMinObservations(2))
	obs := predict.Observation{Profile: prof(t, [3]int64{10, 1000, 0})}
	require.NoError(t, e.Observe(predict.Key{Logic: "job", InputSize: 110}, obs)) // one observation only
	require.NoError(t, e.Observe(predict.Key{Logic: "job", InputSize: 200}, obs))
	require.NoError(t, e.Observe(predict.Key{Logic: "job", InputSize: 200}, obs))
	p, ok := e.Estimate(predict.Key{Logic: "job", InputSize: 100})
	require.True(t, ok)
	assert.Equal(t, 5*time.Second, p.Duration(), "scaled from 200, not from the unpredictable 110")
}

func TestSimilarTaskLRU(t *testing.T) {
	e := newEst(t, predict.WithMaxKeys(2))
	obs := predict.Observation{Profile: prof(t, [3]int64{1, 1, 1})}
	a, b, c := predict.Key{Logic: "a", InputSize: 1}, predict.Key{Logic: "b", InputSize: 1}, predict.Key{Logic: "c", InputSize: 1}
	require.NoError(t, e.Observe(a, obs))
	require.NoError(t, e.Observe(b, obs))
	_, ok := e.Estimate(a) // a is now more recent than b
	require.True(t, ok)
	require.NoError(t, e.Observe(c, obs))
	assert.Equal(t, 2, e.Len())
	assert.Equal(t, 1, e.Observations(a))
	assert.Equal(t, 0, e.Observations(b), "b was the least recently used")
	assert.Equal(t, 1, e.Observations(c))
}

func TestSimilarTaskErrors(t *testing.T) {
	other := resource.MustSchema(resource.CPU)
	good := prof(t, [3]int64{10, 1000, 0}, [3]int64{5, 0, 100})
	tests := []struct {
		name string
		key  predict.Key
		obs  predict.Observation
		want error
	}{
		{"empty logic", predict.Key{Logic: "", InputSize: 1}, predict.Observation{Profile: good}, predict.ErrInvalidKey},
		{"negative size", predict.Key{Logic: "x", InputSize: -1}, predict.Observation{Profile: good}, predict.ErrInvalidKey},
		{"empty profile", key, predict.Observation{}, stage.ErrEmptyProfile},
		{"other schema", key, predict.Observation{Profile: stage.MustProfile(other, stage.Stage{Duration: 1, Demand: resource.Tuple{1}})}, resource.ErrSchemaMismatch},
		{"compression count", key, predict.Observation{Profile: good, Compression: []resource.Vector{{}}}, predict.ErrStageCount},
		{"compression NaN", key, predict.Observation{Profile: good, Compression: []resource.Vector{{math.NaN()}, {}}}, resource.ErrInvalidRatio},
		{"compression above 1", key, predict.Observation{Profile: good, Compression: []resource.Vector{{}, {1.5}}}, resource.ErrInvalidRatio},
		{"compression negative", key, predict.Observation{Profile: good, Compression: []resource.Vector{{-0.1}, {}}}, resource.ErrInvalidRatio},
		{"memory compressed", key, predict.Observation{Profile: good, Compression: []resource.Vector{{0, 0.1}, {}}}, resource.ErrNotCompressible},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t, predict.WithBaseWeight(1))
			require.NoError(t, e.Observe(key, predict.Observation{Profile: prof(t, [3]int64{7, 7, 7})}))
			err := e.Observe(tt.key, tt.obs)
			require.ErrorIs(t, err, tt.want)
			assert.NotEmpty(t, err.Error())
			p, ok := e.Estimate(key)
			require.True(t, ok)
			assert.Equal(t, prof(t, [3]int64{7, 7, 7}).Stages(), p.Stages(), "a rejected observation changes nothing")
			assert.Equal(t, 1, e.Observations(key))
			assert.Equal(t, 1, e.Len())
		})
	}
}

func TestEstimatorOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  predict.EstimatorOption
	}{
		{"weight 0", predict.WithBaseWeight(0)},
		{"weight above 1", predict.WithBaseWeight(1.01)},
		{"weight NaN", predict.WithBaseWeight(math.NaN())},
		{"min observations 0", predict.WithMinObservations(0)},
		{"max keys 0", predict.WithMaxKeys(0)},
		{"nil buckets", predict.WithSizeBuckets(nil)},
		{"nearest factor below 1", predict.WithNearestSize(0.5)},
		{"nearest factor infinite", predict.WithNearestSize(math.Inf(1))},
		{"nearest factor NaN", predict.WithNearestSize(math.NaN())},
		{"nil scaler", predict.WithSizeScaler(nil)},
		{"unknown resample", predict.WithResample(7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := predict.NewSimilarTask(std, tt.opt)
			require.ErrorIs(t, err, predict.ErrInvalidOption)
			assert.Nil(t, e)
			var fe *predict.FieldError
			require.ErrorAs(t, err, &fe)
			assert.NotEmpty(t, fe.Field)
		})
	}
	_, err := predict.NewSimilarTask(nil)
	require.ErrorIs(t, err, resource.ErrSchemaMismatch)
	for _, base := range []float64{1, 0.5, math.NaN(), math.Inf(1)} {
		_, err := predict.LogBuckets(base)
		require.ErrorIs(t, err, predict.ErrInvalidOption, "base %v", base)
	}
	_, err = predict.LinearBuckets(0)
	require.ErrorIs(t, err, predict.ErrInvalidOption)
	// A nil option is refused, naming its place among the options.
	_, err = predict.NewSimilarTask(std, predict.WithMaxKeys(4), nil)
	require.ErrorIs(t, err, predict.ErrInvalidOption)
	assert.ErrorContains(t, err, "option 1")
	_, err = predict.NewSegmenter(nil)
	require.ErrorIs(t, err, predict.ErrInvalidOption)
	_, err = predict.NewProgressTracker(nil)
	require.ErrorIs(t, err, predict.ErrInvalidOption)
}

func TestSimilarTaskInvalidKeyIsUnpredictable(t *testing.T) {
	e := newEst(t)
	for _, k := range []predict.Key{{Logic: "", InputSize: 1}, {Logic: "x", InputSize: -1}} {
		_, ok := e.Estimate(k)
		assert.False(t, ok)
		assert.False(t, e.Forget(k))
		assert.Equal(t, 0, e.Observations(k))
	}
}

func TestScaleDurations(t *testing.T) {
	p := prof(t, [3]int64{10, 1000, 0})
	q, ok := predict.ScaleDurations(p, 0, 3)
	require.True(t, ok)
	assert.Equal(t, 30*time.Second, q.Duration(), "size 0 counts as 1")
	q, ok = predict.ScaleDurations(p, math.MaxInt64, 1)
	require.True(t, ok)
	assert.Equal(t, time.Duration(1), q.Duration(), "never below 1 ns")
	q, ok = predict.ScaleDurations(p, 1, math.MaxInt64)
	require.True(t, ok)
	assert.Equal(t, stage.Forever, q.Duration(), "saturates at Forever")
	_, ok = predict.ScaleDurations(stage.Profile{}, 1, 2)
	assert.False(t, ok)
}

// TestSimilarTaskConcurrent exercises readers and writers together; run with -race.
func TestSimilarTaskConcurrent(t *testing.T) {
	b, _ := predict.LogBuckets(2)
	e := newEst(t, predict.WithMaxKeys(8), predict.WithNearestSize(4), predict.WithSizeBuckets(b))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rng(int64(g))
			for i := 0; i < 300; i++ {
				k := predict.Key{Logic: fmt.Sprint("job", r.IntN(4)), InputSize: r.Int64N(1 << 12)}
				if g%2 == 0 {
					n := 1 + r.IntN(3)
					assert.NoError(t, e.Observe(k, predict.Observation{Profile: randProfile(r, n), Compression: randCompression(r, n)}))
				} else if p, ok := e.Estimate(k); ok {
					assert.Positive(t, p.Len())
				}
			}
		}(g)
	}
	wg.Wait()
	assert.LessOrEqual(t, e.Len(), 8)
}
