package predict_test

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// fam is a key of job "j<i>" in family "app/map".
func fam(i int, size int64) predict.Key {
	return predict.Key{Logic: fmt.Sprintf("j%d/map", i), InputSize: size, Family: "app/map"}
}

func TestSimilarTaskFamily(t *testing.T) {
	seen := prof(t, [3]int64{10, 1000, 5}, [3]int64{20, 0, 7})
	other := prof(t, [3]int64{40, 3000, 9})
	tests := []struct {
		name  string
		opts  []predict.EstimatorOption
		learn map[predict.Key]stage.Profile
		ask   predict.Key
		want  stage.Profile // zero: unpredictable
	}{
		{
			name:  "a new logic of a known family and size class",
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   fam(2, 120), // [64, 128) as 100
			want:  seen,
		},
		{
			name:  "the next class up, scaled down by 2",
			learn: map[predict.Key]stage.Profile{fam(1, 200): seen},
			ask:   fam(2, 100),
			want:  prof(t, [3]int64{5, 1000, 5}, [3]int64{10, 0, 7}),
		},
		{
			name:  "the next class down, scaled up by 2",
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   fam(2, 130),
			want:  prof(t, [3]int64{20, 1000, 5}, [3]int64{40, 0, 7}),
		},
		{
			name:  "on a tie the larger class",
			learn: map[predict.Key]stage.Profile{fam(1, 64): seen, fam(2, 256): other},
			ask:   fam(3, 128),
			want:  prof(t, [3]int64{20, 3000, 9}),
		},
		{
			name:  "two classes away is beyond the default factor",
			learn: map[predict.Key]stage.Profile{fam(1, 400): seen},
			ask:   fam(2, 100),
		},
		{
			name:  "a factor of 4 reaches two classes",
			opts:  []predict.EstimatorOption{predict.WithFamily(4)},
			learn: map[predict.Key]stage.Profile{fam(1, 400): seen},
			ask:   fam(2, 100),
			want:  stage.MustProfile(std, stage.Stage{Duration: 2500 * time.Millisecond, Demand: std.MustTuple(1000, 5)}, stage.Stage{Duration: 5 * time.Second, Demand: std.MustTuple(0, 7)}), // 256 → 64: ÷4
		},
		{
			name:  "a factor of 1: the key's own class only",
			opts:  []predict.EstimatorOption{predict.WithFamily(1)},
			learn: map[predict.Key]stage.Profile{fam(1, 200): seen},
			ask:   fam(2, 100),
		},
		{
			name:  "coarser classes",
			opts:  []predict.EstimatorOption{predict.WithFamilyBuckets(mustBuckets(t, 10))},
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   fam(2, 999),
			want:  seen,
		},
		{
			name:  "family learning off",
			opts:  []predict.EstimatorOption{predict.WithFamily(0)},
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   fam(2, 100),
		},
		{
			name:  "another family",
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   predict.Key{Logic: "j2/map", InputSize: 100, Family: "app/reduce"},
		},
		{
			name:  "no family named",
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   predict.Key{Logic: "j2/map", InputSize: 100},
		},
		{
			name:  "the key's own estimate comes first",
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen, fam(2, 100): other},
			ask:   fam(2, 100),
			want:  other,
		},
		{
			name:  "the family is not part of the key's identity",
			learn: map[predict.Key]stage.Profile{fam(1, 100): seen},
			ask:   predict.Key{Logic: "j1/map", InputSize: 100},
			want:  seen,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t, tt.opts...)
			for k, p := range tt.learn {
				require.NoError(t, e.Observe(k, predict.Observation{Profile: p}))
			}
			p, ok := e.Estimate(tt.ask)
			ref := e.Ref(tt.ask)
			rp, rok := ref.Estimate()
			assert.Equal(t, ok, rok, "a Ref answers as Estimate")
			assert.Equal(t, p.Stages(), rp.Stages(), "a Ref answers as Estimate")
			if tt.want.Len() == 0 {
				assert.False(t, ok, "got %v", p)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want.Stages(), p.Stages())
			assert.Equal(t, len(tt.learn), e.Len(), "families are not keys")
		})
	}
}

func mustBuckets(t testing.TB, base float64) predict.Bucketing {
	t.Helper()
	b, err := predict.LogBuckets(base)
	require.NoError(t, err)
	return b
}

func TestSimilarTaskFamilyLearnsEveryKey(t *testing.T) {
	e := newEst(t, predict.WithBaseWeight(0.5), predict.WithEnvelope(0, 0))
	require.NoError(t, e.Observe(fam(1, 100), predict.Observation{Profile: prof(t, [3]int64{10, 1000, 0})}))
	require.NoError(t, e.Observe(fam(2, 110), predict.Observation{Profile: prof(t, [3]int64{20, 3000, 0})}))
	p, ok := e.Estimate(fam(3, 100))
	require.True(t, ok)
	assert.Equal(t, prof(t, [3]int64{15, 2000, 0}).Stages(), p.Stages(), "the class's iterative update over both keys")

	assert.True(t, e.Forget(fam(1, 100)))
	p, ok = e.Estimate(fam(1, 100))
	require.True(t, ok, "forgetting a key leaves what its family learned")
	assert.Equal(t, 15*time.Second, p.Duration())
	assert.Equal(t, 0, e.Observations(fam(1, 100)))
}

func TestSimilarTaskRunning(t *testing.T) {
	series := func(end time.Duration, cpu ...int64) predict.Observation {
		var sr predict.Series
		for i, c := range cpu {
			sr.Samples = append(sr.Samples, predict.Sample{At: time.Duration(i) * 10 * time.Second, Usage: std.MustTuple(c, c<<20)})
		}
		sr.End = end
		return predict.Observation{Series: sr}
	}
	open := func(prefix ...[3]int64) stage.Profile { // prefix stages, then the peak for ever
		p := prof(t, prefix...)
		return stage.MustProfile(std, append(p.Stages(), stage.Stage{Duration: stage.Forever, Demand: p.Peak()})...)
	}
	finished := prof(t, [3]int64{60, 900, 0})
	type step struct {
		running  bool // ObserveRunning, else Observe
		obs      predict.Observation
		otherKey bool // a key of the same family
	}
	tests := []struct {
		name   string
		family bool // the key names a family; else it names none
		opts   []predict.EstimatorOption
		do     []step
		want   stage.Profile // zero: unpredictable
	}{
		{
			name: "a report spanning the minimum predicts the key",
			do:   []step{{running: true, obs: series(20*time.Second, 200, 800)}},
			want: open([3]int64{10, 200, 200 << 20}, [3]int64{10, 800, 800 << 20}),
		},
		{
			name: "a report too short is ignored",
			do:   []step{{running: true, obs: series(9*time.Second, 200)}},
		},
		{
			name: "a shorter minimum",
			opts: []predict.EstimatorOption{predict.WithRunning(5 * time.Second)},
			do:   []step{{running: true, obs: series(9*time.Second, 200)}},
			want: open([3]int64{9, 200, 200 << 20}),
		},
		{
			name: "off",
			opts: []predict.EstimatorOption{predict.WithoutRunning()},
			do:   []step{{running: true, obs: series(20*time.Second, 200, 800)}},
		},
		{
			name: "a longer report replaces a shorter one",
			do: []step{
				{running: true, obs: series(20*time.Second, 200, 800)},
				{running: true, obs: series(30*time.Second, 300, 300, 300)},
			},
			want: open([3]int64{30, 300, 300 << 20}),
		},
		{
			name: "a report no longer than the one held is ignored",
			do: []step{
				{running: true, obs: series(30*time.Second, 300, 300, 300)},
				{running: true, obs: series(30*time.Second, 200, 800, 800)},
			},
			want: open([3]int64{30, 300, 300 << 20}),
		},
		{
			name: "the first finished task replaces the report",
			do: []step{
				{running: true, obs: series(20*time.Second, 200, 800)},
				{obs: predict.Observation{Profile: finished}},
			},
			want: finished,
		},
		{
			name: "reports after a finished task change nothing",
			do: []step{
				{obs: predict.Observation{Profile: finished}},
				{running: true, obs: series(90*time.Second, 200, 800, 800, 800)},
			},
			want: finished,
		},
		{
			name:   "a key that names a family learns nothing from reports",
			family: true,
			do:     []step{{running: true, obs: series(20*time.Second, 200, 800)}},
		},
		{
			name:   "a key that names a family is taught by its family",
			family: true,
			do: []step{
				{running: true, obs: series(20*time.Second, 200, 800)},
				{obs: predict.Observation{Profile: finished}, otherKey: true},
			},
			want: finished,
		},
		{
			name:   "without family learning, a key's family is ignored and reports teach it",
			family: true,
			opts:   []predict.EstimatorOption{predict.WithFamily(0)},
			do:     []step{{running: true, obs: series(20*time.Second, 200, 800)}},
			want:   open([3]int64{10, 200, 200 << 20}, [3]int64{10, 800, 800 << 20}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t, tt.opts...)
			k := predict.Key{Logic: "own", InputSize: 100}
			if tt.family {
				k = fam(1, 100)
			}
			for _, s := range tt.do {
				at := k
				if s.otherKey {
					at = fam(2, 100)
				}
				if s.running {
					require.NoError(t, e.ObserveRunning(at, s.obs))
				} else {
					require.NoError(t, e.Observe(at, s.obs))
				}
			}
			p, ok := e.Estimate(k)
			if tt.want.Len() == 0 {
				assert.False(t, ok, "got %v", p)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tt.want.Stages(), p.Stages())
			if p.Duration() == stage.Forever {
				assert.Equal(t, 0, e.Observations(k), "a report is no observation")
			}
		})
	}
}

func TestSimilarTaskRunningRejects(t *testing.T) {
	e := newEst(t)
	good := predict.Observation{Series: predict.Series{Samples: []predict.Sample{{Usage: std.MustTuple(100)}}, End: time.Minute}}
	tests := []struct {
		name string
		key  predict.Key
		obs  predict.Observation
		want error
	}{
		{"empty logic", predict.Key{InputSize: 1}, good, predict.ErrInvalidKey},
		{"negative size", predict.Key{Logic: "x", InputSize: -1}, good, predict.ErrInvalidKey},
		{"no samples, no profile", key, predict.Observation{}, stage.ErrEmptyProfile},
		{"samples out of order", key, predict.Observation{Series: predict.Series{Samples: []predict.Sample{{At: 2}, {At: 1}}, End: 3}}, predict.ErrUnsorted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorIs(t, e.ObserveRunning(tt.key, tt.obs), tt.want)
			_, ok := e.Estimate(tt.key)
			assert.False(t, ok)
			assert.Equal(t, 0, e.Len(), "a rejected report changes nothing")
		})
	}
}

func TestFamilyAndRunningOptionsRejected(t *testing.T) {
	tests := []struct {
		name string
		opt  predict.EstimatorOption
	}{
		{"family factor below 1", predict.WithFamily(0.5)},
		{"negative family factor", predict.WithFamily(-1)},
		{"NaN family factor", predict.WithFamily(math.NaN())},
		{"infinite family factor", predict.WithFamily(math.Inf(1))},
		{"nil family bucketing", predict.WithFamilyBuckets(nil)},
		{"negative running span", predict.WithRunning(-time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := predict.NewSimilarTask(std, tt.opt)
			require.ErrorIs(t, err, predict.ErrInvalidOption)
			var fe *predict.FieldError
			require.ErrorAs(t, err, &fe, "the error names the option")
		})
	}
}

func TestFamilyAndRunningProperties(t *testing.T) {
	props := gopter.NewProperties(params())

	// Observations and running reports in any order over keys sharing a family: a
	// key that has had a finished task is predicted from its own observations alone
	// (its estimate is the same as without its Family), and a key that has not is
	// predicted, if at all, by a profile whose peak its family's or its reports' data
	// reached — an open-ended one never below what its longest report used.
	props.Property("a key's own observations win; reports bound their open-ended estimates", prop.ForAll(func(seed int64) bool {
		r := rng(seed)
		e := newEst(t, predict.WithRunning(0))
		solo := newEst(t, predict.WithRunning(0), predict.WithFamily(0)) // the keys alone
		longest := map[predict.Key]time.Duration{}
		peak := map[predict.Key]stage.Profile{}
		for i := 0; i < 30; i++ {
			k := fam(r.IntN(4), 1+r.Int64N(1000))
			p := randProfile(r, 1+r.IntN(4))
			if r.IntN(2) == 0 {
				if e.ObserveRunning(k, predict.Observation{Profile: p}) != nil || solo.ObserveRunning(k, predict.Observation{Profile: p}) != nil {
					return false
				}
				if e.Observations(k) == 0 && p.Duration() > longest[k] {
					longest[k], peak[k] = p.Duration(), p
				}
				continue
			}
			if e.Observe(k, predict.Observation{Profile: p}) != nil || solo.Observe(k, predict.Observation{Profile: p}) != nil {
				return false
			}
		}
		for i := 0; i < 4; i++ {
			for _, size := range []int64{1, 10, 100, 1000} {
				k := fam(i, size)
				got, ok := e.Estimate(k)
				own, ownOK := solo.Estimate(predict.Key{Logic: k.Logic, InputSize: k.InputSize})
				switch {
				case e.Observations(k) > 0:
					if !ok || !ownOK || !slices.Equal(got.Stages(), own.Stages()) {
						return false
					}
				case ok && got.Duration() == stage.Forever:
					// Not the family's (no family class answered): the longest report.
					if !got.Peak().Covers(peak[k].Peak()) || !ownOK || !slices.Equal(got.Stages(), own.Stages()) {
						return false
					}
				}
			}
		}
		return true
	}, gen.Int64()))
	props.TestingRun(t)
}

// Observations, running reports, estimates through keys and references, and
// re-divisions, on keys sharing families, from many goroutines (run with -race).
func TestFamilyAndRunningConcurrent(t *testing.T) {
	e := newEst(t, predict.WithMaxKeys(8), predict.WithFamily(4), predict.WithRunning(0))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rng(int64(g))
			for i := 0; i < 300; i++ {
				k := fam(r.IntN(6), r.Int64N(1<<12))
				switch g {
				case 0:
					n := 1 + r.IntN(3)
					assert.NoError(t, e.Observe(k, predict.Observation{Profile: randProfile(r, n), Compression: randCompression(r, n)}))
				case 1:
					assert.NoError(t, e.ObserveRunning(k, predict.Observation{Profile: randProfile(r, 1+r.IntN(3))}))
				case 2:
					ref := e.Ref(k)
					if p, ok := ref.Estimate(); ok {
						assert.Positive(t, p.Len())
					}
					e.Redivide()
				default:
					if p, ok := e.Estimate(k); ok {
						assert.Positive(t, p.Len())
					}
				}
			}
		}(g)
	}
	wg.Wait()
	assert.LessOrEqual(t, e.Len(), 8)
}
