package predict_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// sampled is what a node agent sampling every dt sees of a task following p: each
// sample holds the demand of the stage it starts in, times (1 + noise) per dimension
// with noise uniform in [−eps, eps]. The first sample is at start.
func sampled(r *rand.Rand, p stage.Profile, start, dt time.Duration, eps float64) predict.Series {
	var out predict.Series
	for at := time.Duration(0); at < p.Duration(); at += dt {
		u := p.At(at)
		for d := 0; d < p.Schema().Len(); d++ {
			u[d] = int64(math.Round(float64(u[d]) * (1 + eps*(2*r.Float64()-1))))
		}
		out.Samples = append(out.Samples, predict.Sample{At: start + at, Usage: u})
	}
	out.End = start + p.Duration()
	return out
}

// stagedProfile draws n stages of whole multiples of dt (at least minSamples each), each
// stage's cpu and memory differing from its neighbour's by at least 30% of the largest.
func stagedProfile(r *rand.Rand, n, minSamples int, dt time.Duration) stage.Profile {
	levels := []int64{1000, 1500, 2000, 2500, 3000}
	stages := make([]stage.Stage, n)
	prev := -1
	for i := range stages {
		k := r.IntN(len(levels))
		for k == prev || (prev >= 0 && k == prev+1) || (prev >= 0 && k == prev-1) {
			k = r.IntN(len(levels))
		}
		prev = k
		stages[i] = stage.Stage{
			Duration: time.Duration(minSamples+r.IntN(20)) * dt,
			Demand:   std.MustTuple(levels[k], levels[k]<<20),
		}
	}
	return stage.MustProfile(std, stages...)
}

func boundaries(p stage.Profile) []time.Duration {
	var out []time.Duration
	for i := 1; i < p.Len(); i++ {
		out = append(out, p.Offset(i))
	}
	return out
}

func TestSeriesProperties(t *testing.T) {
	p := params()
	p.MinSuccessfulTests = 200 // each case observes and divides dozens of series
	props := gopter.NewProperties(p)
	const dt = 3 * time.Second

	props.Property("a piecewise-constant profile plus bounded noise is divided into its stages, boundaries within one sample interval",
		prop.ForAll(func(seed int64) string {
			r := rng(seed)
			truth := stagedProfile(r, 1+r.IntN(6), 3, dt)
			sr := sampled(r, truth, time.Duration(r.IntN(1000))*time.Second, dt, 0.03)
			// Irregular spacing: each sample moved by up to a third of the interval.
			for i := 1; i < len(sr.Samples); i++ {
				sr.Samples[i].At += time.Duration(r.Int64N(int64(dt / 3)))
			}
			sg, _ := predict.NewSegmenter()
			p, _, err := sg.SegmentSeries(std, sr)
			if err != nil {
				return err.Error()
			}
			if p.Len() != truth.Len() {
				return fmt.Sprintf("%d stages, want %d: %v for %v", p.Len(), truth.Len(), p, truth)
			}
			for i, b := range boundaries(p) {
				if d := b - boundaries(truth)[i]; d < -dt || d > dt+dt/3 {
					return fmt.Sprintf("boundary %d at %v, want %v ± %v", i, b, boundaries(truth)[i], dt)
				}
			}
			return ""
		}, gen.Int64()))

	props.Property("repeated noisy observations of one profile converge: stages, boundaries within a sample, peaks within the noise",
		prop.ForAll(func(seed int64) string {
			r := rng(seed)
			const eps = 0.05
			truth := stagedProfile(r, 1+r.IntN(4), 5, dt)
			e := newEst(t)
			for i := 0; i < 30; i++ {
				if err := e.Observe(key, predict.Observation{Series: sampled(r, truth, 0, dt, eps)}); err != nil {
					return err.Error()
				}
				if i%7 == 6 {
					e.Redivide()
				}
				if i < 20 {
					continue
				}
				est, _ := e.Estimate(key)
				if est.Len() != truth.Len() {
					return fmt.Sprintf("observation %d: %d stages, want %d: %v for %v", i, est.Len(), truth.Len(), est, truth)
				}
				for s := 0; s < est.Len(); s++ {
					if s > 0 {
						if d := est.Offset(s) - truth.Offset(s); d < -dt || d > dt {
							return fmt.Sprintf("observation %d: boundary %d at %v, want %v", i, s, est.Offset(s), truth.Offset(s))
						}
					}
					for d := 0; d < 2; d++ { // cpu (the update), memory (the envelope)
						want, got := float64(truth.Stage(s).Demand[d]), float64(est.Stage(s).Demand[d])
						if got < want*(1-eps)-1 || got > want*(1+eps)+1 {
							return fmt.Sprintf("observation %d: stage %d %s %v, want %v within %v%%", i, s, std.DimName(d), got, want, 100*eps)
						}
					}
				}
			}
			return ""
		}, gen.Int64()))

	props.Property("the estimate never understates what its recent observations used in a stage beyond the envelope's quantile",
		prop.ForAll(func(seed int64, q float64) string {
			r := rng(seed)
			const buckets = 16
			const history = 4
			if r.IntN(3) == 0 {
				q = 1
			}
			e := newEst(t, predict.WithHistory(history, buckets), predict.WithEnvelope(q, q))
			var kept []predict.Series
			for i := 0; i < 1+r.IntN(8); i++ {
				sr := sampled(r, randProfile(r, 1+r.IntN(4)), 0, time.Duration(1+r.IntN(5))*time.Second, 0.3)
				if err := e.Observe(key, predict.Observation{Series: sr}); err != nil {
					return err.Error()
				}
				kept = append(kept, sr)
				if r.IntN(2) == 0 {
					e.Redivide()
				}
			}
			kept = kept[max(0, len(kept)-history):]
			est, _ := e.Estimate(key)
			// Each estimate stage against the cells of the buckets wholly inside it: the
			// peak of the samples overlapping each bucket (a reference computed here).
			total := float64(est.Duration())
			for s := 0; s < est.Len(); s++ {
				a, b := float64(est.Offset(s))/total, float64(est.Offset(s)+est.Stage(s).Duration)/total
				lo, hi := int(math.Ceil(a*buckets-1e-9)), int(math.Floor(b*buckets+1e-9))
				if lo >= hi {
					continue
				}
				for d := 0; d < std.Len(); d++ {
					cells, above := 0, 0
					for _, sr := range kept {
						for j := lo; j < hi; j++ {
							cells++
							if bucketPeak(sr, j, buckets, d) > est.Stage(s).Demand[d] {
								above++
							}
						}
					}
					if float64(above) > (1-q)*float64(cells)+1e-9 {
						return fmt.Sprintf("stage %d %s: %d of %d cells above %d (q = %v)", s, std.DimName(d), above, cells, est.Stage(s).Demand[d], q)
					}
				}
			}
			return ""
		}, gen.Int64(), gen.Float64Range(0.01, 1)))

	// Re-division resolves 32nds of a run, with a bucket astride each change: stages of
	// an eighth of the run at least are told apart.
	props.Property("stages follow the data: after the key's tasks change shape, re-division takes the new number of stages",
		prop.ForAll(func(seed int64) string {
			r := rng(seed)
			e := newEst(t)
			before := stagedProfile(r, 1+r.IntN(3), 8, dt)
			after := stagedProfile(r, before.Len()+1+r.IntN(3), 8, dt)
			st := after.Stages()
			for i := range st {
				st[i].Duration = time.Duration(12+r.IntN(4)) * dt
			}
			after = stage.MustProfile(std, st...)
			if err := e.Observe(key, predict.Observation{Series: sampled(r, before, 0, dt, 0.02)}); err != nil {
				return err.Error()
			}
			for i := 0; i < predict.DefaultHistory; i++ {
				if err := e.Observe(key, predict.Observation{Series: sampled(r, after, 0, dt, 0.02)}); err != nil {
					return err.Error()
				}
			}
			if n := e.Redivide(); n != 1 {
				return fmt.Sprintf("re-divided %d keys, want 1", n)
			}
			est, _ := e.Estimate(key)
			if est.Len() != after.Len() {
				return fmt.Sprintf("%d stages after re-division, want %d: %v for %v", est.Len(), after.Len(), est, after)
			}
			if n := e.Redivide(); n != 0 {
				return fmt.Sprintf("a second re-division without observations changed %d keys", n)
			}
			return ""
		}, gen.Int64()))

	props.TestingRun(t)
}

// bucketPeak is the largest usage on dimension d of the samples of sr overlapping
// bucket j of its normalised duration (the reference for the envelope property).
func bucketPeak(sr predict.Series, j, buckets, d int) int64 {
	start := sr.Samples[0].At
	total := float64(sr.End - start)
	lo, hi := float64(j)/float64(buckets)*total, float64(j+1)/float64(buckets)*total
	var peak int64
	for i, s := range sr.Samples {
		end := sr.End
		if i+1 < len(sr.Samples) {
			end = sr.Samples[i+1].At
		}
		a, b := float64(s.At-start), float64(end-start)
		if b-lo > 1e-9*total && hi-a > 1e-9*total {
			peak = max(peak, s.Usage[d])
		}
	}
	return peak
}

func TestObserveSeriesRefusesBadInput(t *testing.T) {
	good := func() predict.Series {
		return predict.Series{Samples: []predict.Sample{
			{At: 0, Usage: std.MustTuple(1000, 1<<30)},
			{At: 3 * time.Second, Usage: std.MustTuple(2000, 1<<30)},
		}, End: 6 * time.Second}
	}
	var neg resource.Tuple
	neg[0] = -1
	var outside resource.Tuple
	outside[resource.MaxDims-1] = 1
	tests := []struct {
		name string
		obs  func() predict.Observation
		want error
	}{
		{"empty", func() predict.Observation { return predict.Observation{Series: predict.Series{End: time.Second}} }, predict.ErrNoSamples},
		{"out of order", func() predict.Observation {
			s := good()
			s.Samples[1].At = 0
			return predict.Observation{Series: s}
		}, predict.ErrUnsorted},
		{"end before the last sample", func() predict.Observation {
			s := good()
			s.End = 2 * time.Second
			return predict.Observation{Series: s}
		}, predict.ErrUnsorted},
		{"negative usage", func() predict.Observation {
			s := good()
			s.Samples[0].Usage = neg
			return predict.Observation{Series: s}
		}, resource.ErrNegative},
		{"another schema's dimension", func() predict.Observation {
			s := good()
			s.Samples[1].Usage = outside
			return predict.Observation{Series: s}
		}, resource.ErrOutsideSchema},
		{"compression of the wrong count", func() predict.Observation {
			s := good()
			s.Compression = []resource.Vector{{0.1}}
			return predict.Observation{Series: s}
		}, predict.ErrStageCount},
		{"compression above 1", func() predict.Observation {
			s := good()
			s.Compression = []resource.Vector{{0.1}, {1.5}}
			return predict.Observation{Series: s}
		}, resource.ErrInvalidRatio},
		{"compression of memory", func() predict.Observation {
			s := good()
			s.Compression = []resource.Vector{{0, 0.1}, {}}
			return predict.Observation{Series: s}
		}, resource.ErrNotCompressible},
		{"both a profile and a series", func() predict.Observation {
			return predict.Observation{Series: good(), Profile: prof(t, [3]int64{1, 1, 1})}
		}, predict.ErrInvalidValue},
		{"absurd length", func() predict.Observation {
			s := predict.Series{Samples: make([]predict.Sample, predict.MaxSeriesSamples+1)}
			for i := range s.Samples {
				s.Samples[i].At = time.Duration(i)
			}
			return predict.Observation{Series: s}
		}, predict.ErrTooManySamples},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEst(t)
			first := predict.Series{Samples: []predict.Sample{{At: 0, Usage: std.MustTuple(500, 1<<29)}}, End: time.Minute}
			require.NoError(t, e.Observe(key, predict.Observation{Series: first}))
			before, _ := e.Estimate(key)
			err := e.Observe(key, tt.obs())
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.want), "%v is not %v", err, tt.want)
			after, _ := e.Estimate(key)
			assert.Equal(t, before.Stages(), after.Stages(), "a refused observation changes nothing")
			assert.Equal(t, 1, e.Observations(key))
			assert.Zero(t, e.Redivide(), "nor marks the key for re-division")
		})
	}
}

func TestNewSamplesRefusesNaN(t *testing.T) {
	_, err := predict.NewSamples(std, []time.Duration{0, time.Second}, []resource.Vector{{1}, {math.NaN()}})
	assert.ErrorIs(t, err, predict.ErrInvalidValue)
}

func TestEstimatorOptionsForSeries(t *testing.T) {
	for _, opt := range []predict.EstimatorOption{
		predict.WithSegmenter(nil), predict.WithHistory(-1, 32), predict.WithHistory(300, 32),
		predict.WithHistory(8, 1), predict.WithHistory(8, 4096), predict.WithEnvelope(-0.1, 0),
		predict.WithEnvelope(0, 1.1), predict.WithEnvelope(math.NaN(), 0),
	} {
		_, err := predict.NewSimilarTask(std, opt)
		assert.ErrorIs(t, err, predict.ErrInvalidOption)
	}
	e := newEst(t, predict.WithHistory(0, 2))
	sr := predict.Series{Samples: []predict.Sample{{At: 0, Usage: std.MustTuple(500, 1<<29)}}, End: time.Minute}
	require.NoError(t, e.Observe(key, predict.Observation{Series: sr}))
	assert.Zero(t, e.Redivide(), "no history, nothing to re-divide")
	assert.ErrorIs(t, e.RunRedivision(context.Background(), 0), predict.ErrInvalidOption)
}

// A series carries the compression the task experienced: a stage observed under
// compression counts for less (the eq. 8 Reading), stage by stage.
func TestSeriesCompressionWeighsTheUpdate(t *testing.T) {
	e := newEst(t, predict.WithBaseWeight(0.5), predict.WithEnvelope(0, 0))
	flat := func(cpu int64, rc float64) predict.Series {
		s := predict.Series{End: 30 * time.Second}
		for i := 0; i < 10; i++ {
			s.Samples = append(s.Samples, predict.Sample{At: time.Duration(i) * 3 * time.Second, Usage: std.MustTuple(cpu, 1<<30)})
			s.Compression = append(s.Compression, resource.Vector{rc})
		}
		return s
	}
	require.NoError(t, e.Observe(key, predict.Observation{Series: flat(1000, 0)}))
	require.NoError(t, e.Observe(key, predict.Observation{Series: flat(2000, 0.5)}))
	p, _ := e.Estimate(key)
	assert.Equal(t, int64(1250), p.Stage(0).Demand[0], "w' = 0.5 × (1 − 0.5)")
}

// Estimates read on many goroutines while observations and re-division run: every
// read is a whole profile of the key's (run with -race).
func TestSeriesRaceStress(t *testing.T) {
	e := newEst(t)
	keys := []predict.Key{{Logic: "a", InputSize: 1}, {Logic: "b", InputSize: 2}, {Logic: "c", InputSize: 3}}
	const dt = time.Second
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for ctx.Err() == nil {
				for _, k := range keys {
					if p, ok := e.Estimate(k); ok && (p.Len() == 0 || !p.Schema().Equal(std)) {
						t.Errorf("reader %d: a broken estimate %v", g, p)
					}
				}
			}
		}(g)
	}
	done := make(chan error, 1)
	go func() { done <- e.RunRedivision(ctx, time.Millisecond) }()
	var writers sync.WaitGroup
	for g := 0; g < 2; g++ {
		writers.Add(1)
		go func(g int) {
			defer writers.Done()
			r := rng(int64(g))
			for i := 0; i < 60; i++ {
				p := stagedProfile(r, 1+r.IntN(4), 3, dt)
				if err := e.Observe(keys[r.IntN(len(keys))], predict.Observation{Series: sampled(r, p, 0, dt, 0.05)}); err != nil {
					t.Errorf("writer %d: %v", g, err)
				}
				e.Redivide()
			}
		}(g)
	}
	writers.Wait()
	cancel()
	wg.Wait()
	assert.ErrorIs(t, <-done, context.Canceled)
	for _, k := range keys {
		assert.Positive(t, e.Observations(k))
	}
}
