package predict_test

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var (
	sinkP    stage.Profile
	sinkOK   bool
	sinkV    resource.Vector
	sinkRuns []predict.TaskProgress
)

// warmEstimator returns an estimator holding n keys of 8-stage profiles.
func warmEstimator(b *testing.B, n int, opts ...predict.EstimatorOption) (*predict.SimilarTask, []predict.Key) {
	e := newEst(b, opts...)
	r := rng(1)
	keys := make([]predict.Key, n)
	for i := range keys {
		keys[i] = predict.Key{Logic: fmt.Sprintf("app-%08x/map", i), InputSize: 128 << 20}
		if err := e.Observe(keys[i], predict.Observation{Profile: randProfile(r, 8)}); err != nil {
			b.Fatal(err)
		}
	}
	return e, keys
}

func BenchmarkEstimateHit(b *testing.B) {
	e, keys := warmEstimator(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(keys[i%len(keys)])
	}
}

func BenchmarkEstimateHitLogBuckets(b *testing.B) {
	lb, _ := predict.LogBuckets(1.5)
	e, keys := warmEstimator(b, 10000, predict.WithSizeBuckets(lb))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(keys[i%len(keys)])
	}
}

func BenchmarkEstimateHitParallel(b *testing.B) {
	e, keys := warmEstimator(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			p, ok := e.Estimate(keys[i%len(keys)])
			if !ok || p.Len() == 0 {
				b.Error("miss")
			}
			i++
		}
	})
}

func BenchmarkEstimateMiss(b *testing.B) {
	e, _ := warmEstimator(b, 10000)
	k := predict.Key{Logic: "unknown", InputSize: 1}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(k)
	}
}

func BenchmarkEstimateNearestSize(b *testing.B) {
	e, keys := warmEstimator(b, 1000, predict.WithNearestSize(2))
	k := keys[0]
	k.InputSize += k.InputSize / 2
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(k)
	}
}

// warmFamilies returns an estimator holding n keys of 8-stage profiles in 10 families.
func warmFamilies(b *testing.B, n int) (*predict.SimilarTask, []predict.Key) {
	e := newEst(b)
	r := rng(1)
	keys := make([]predict.Key, n)
	for i := range keys {
		keys[i] = predict.Key{Logic: fmt.Sprintf("app-%08x/map", i), InputSize: 128 << 20, Family: fmt.Sprintf("app%d/map", i%10)}
		if err := e.Observe(keys[i], predict.Observation{Profile: randProfile(r, 8)}); err != nil {
			b.Fatal(err)
		}
	}
	return e, keys
}

// BenchmarkEstimateFamily is a key never seen predicted from its family's size class.
func BenchmarkEstimateFamily(b *testing.B) {
	e, _ := warmFamilies(b, 10000)
	k := predict.Key{Logic: "unseen/map", InputSize: 130 << 20, Family: "app3/map"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(k)
	}
}

// BenchmarkEstimateFamilyNeighbour is a key never seen predicted from the next size
// class of its family, scaled.
func BenchmarkEstimateFamilyNeighbour(b *testing.B) {
	e, _ := warmFamilies(b, 10000)
	k := predict.Key{Logic: "unseen/map", InputSize: 100 << 20, Family: "app3/map"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(k)
	}
}

// BenchmarkEstimateRunning is a key predicted from a running task's report.
func BenchmarkEstimateRunning(b *testing.B) {
	e, _ := warmEstimator(b, 10000)
	k := predict.Key{Logic: "running", InputSize: 1}
	if err := e.ObserveRunning(k, predict.Observation{Profile: randProfile(rng(2), 4)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = e.Estimate(k)
	}
}

// BenchmarkObserve8StagesFamily is BenchmarkObserve8Stages for keys with a family:
// each observation also updates the family's size class.
func BenchmarkObserve8StagesFamily(b *testing.B) {
	e, keys := warmFamilies(b, 1000)
	observe8Stages(b, e, keys)
}

// BenchmarkObserveRunningHour is a running task's report of an hour sampled every
// second, for a key with no finished task: divided, then held as the key's estimate.
func BenchmarkObserveRunningHour(b *testing.B) {
	e := newEst(b)
	sr := hourSeries()
	obs := predict.Observation{Series: sr}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.ObserveRunning(predict.Key{Logic: "k", InputSize: int64(i)}, obs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObserve8Stages(b *testing.B) {
	e, keys := warmEstimator(b, 1000)
	observe8Stages(b, e, keys)
}

// observe8Stages times e's observations of random 8-stage profiles, with compression,
// of keys in turn.
func observe8Stages(b *testing.B, e *predict.SimilarTask, keys []predict.Key) {
	r := rng(2)
	obs := make([]predict.Observation, 64)
	for i := range obs {
		obs[i] = predict.Observation{Profile: randProfile(r, 8), Compression: randCompression(r, 8)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.Observe(keys[i%len(keys)], obs[i%len(obs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObserveResample(b *testing.B) {
	e, keys := warmEstimator(b, 1000)
	r := rng(3)
	obs := make([]predict.Observation, 64)
	for i := range obs {
		obs[i] = predict.Observation{Profile: randProfile(r, 5)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.Observe(keys[i%len(keys)], obs[i%len(obs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObserveEvicting(b *testing.B) {
	e, _ := warmEstimator(b, 1000, predict.WithMaxKeys(1000))
	obs := predict.Observation{Profile: randProfile(rng(4), 8)}
	keys := make([]predict.Key, 4096)
	for i := range keys {
		keys[i] = predict.Key{Logic: fmt.Sprintf("new-%d", i)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i%len(keys)]
		k.InputSize = int64(i)
		if err := e.Observe(k, obs); err != nil {
			b.Fatal(err)
		}
	}
}

// daySeries is a synthetic 288-sample day at five-minute intervals: plateaus with noise,
// the shape of the PlanetLab traces.
func daySeries() []predict.Sample {
	s := make([]predict.Sample, 288)
	r := rng(5)
	level := int64(300)
	for i := range s {
		if i%40 == 0 {
			level = 100 + r.Int64N(900)
		}
		s[i] = predict.Sample{At: time.Duration(i) * 5 * time.Minute, Usage: resource.Tuple{level + r.Int64N(100), 1<<30 + r.Int64N(1<<20)}}
	}
	return s
}

func BenchmarkSegment288(b *testing.B) {
	s := daySeries()
	sg, _ := predict.NewSegmenter()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := sg.Segment(std, s)
		if err != nil {
			b.Fatal(err)
		}
		sinkP = p
	}
}

func BenchmarkSegment288MinStage(b *testing.B) {
	benchSegment(b, daySeries(), predict.WithMinStage(time.Hour), predict.WithChangeThreshold(0.05))
}

func BenchmarkSegment288Percentile(b *testing.B) {
	benchSegment(b, daySeries(), predict.WithPercentile(0.95))
}

func BenchmarkSegmentPlanetLab(b *testing.B) {
	all := planetLab(b)
	sg, _ := predict.NewSegmenter()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, _ = sg.Segment(std, all[i%len(all)])
	}
}

func BenchmarkConformity288(b *testing.B) {
	w := make([]predict.Interval, 288)
	for i := range w {
		w[i] = predict.Interval{Duration: 5 * time.Minute, Actual: std.MustTuple(int64(600+i), 4<<30), Predicted: std.MustTuple(500, 4<<30), Idle: std.MustTuple(100, 1<<30)}
	}
	capacity := std.MustTuple(1000, 8<<30)
	th := resource.Uniform(std.All(), 0.2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkV, _ = predict.Conformity(std, capacity, th, w)
	}
}

func BenchmarkConformityLog(b *testing.B) {
	l, _ := predict.NewConformityLog(5)
	servers := make([]string, 100)
	for i := range servers {
		servers[i] = fmt.Sprint("server-", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := servers[i%len(servers)]
		_ = l.Record(s, resource.Vector{float64(i)})
		sinkV, sinkOK = l.Mean(s)
	}
}

func BenchmarkTrackerRunning1000(b *testing.B) {
	tr, _ := predict.NewProgressTracker()
	for i := 0; i < 1000; i++ {
		id := fmt.Sprintf("task-%04d", i)
		_ = tr.Start(id, fmt.Sprint("node", i%50), 0)
		_ = tr.Update(id, math.Mod(float64(i)*0.37, 1), time.Minute)
		if i%3 == 0 {
			_ = tr.Finish(id, 2*time.Minute)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkRuns = tr.Running(3*time.Minute, sinkRuns[:0])
	}
}

func BenchmarkTrackerUpdate(b *testing.B) {
	tr, _ := predict.NewProgressTracker()
	_ = tr.Start("t", "n", 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := tr.Update("t", 0.5, time.Duration(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDetectStraggler(b *testing.B) {
	s := ps(10, .1, 20, .3, 30, .4, 40, .45)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v, _ := predict.DetectStraggler(s, 0, 2*time.Minute)
		sinkOK = v.Straggler
	}
}

func BenchmarkDetectRedundant288(b *testing.B) {
	u := make([]resource.Tuple, 288)
	for i := range u {
		u[i] = std.MustTuple(int64(100+i), int64(1<<30+i))
	}
	alloc := std.MustTuple(4000, 8<<30)
	exp := resource.Uniform(std.All(), 0.8)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _ := predict.DetectRedundant(std, u, alloc, exp)
		sinkOK = r.IsRedundant()
	}
}

// longSeries is a day at one-second intervals (86,400 samples): plateaus with noise.
func longSeries() []predict.Sample {
	s := make([]predict.Sample, 86400)
	r := rng(6)
	level := int64(300)
	for i := range s {
		if i%3600 == 0 {
			level = 100 + r.Int64N(900)
		}
		s[i] = predict.Sample{At: time.Duration(i) * time.Second, Usage: resource.Tuple{level + r.Int64N(100)}}
	}
	return s
}

func BenchmarkSegmentDayPerSecond(b *testing.B) { benchSegment(b, longSeries()) }

func BenchmarkSegmentDayPerSecondPercentile(b *testing.B) {
	benchSegment(b, longSeries(), predict.WithPercentile(0.95))
}

// benchSegment times segmenting series with a Segmenter built from opts.
func benchSegment(b *testing.B, series []predict.Sample, opts ...predict.SegmentOption) {
	sg, err := predict.NewSegmenter(opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, _ = sg.Segment(std, series)
	}
}

// hourSeries is an hour of usage sampled every second: four phases with jitter.
func hourSeries() predict.Series {
	r := rng(7)
	var sr predict.Series
	levels := []int64{800, 2000, 1200, 3000}
	for i := 0; i < 3600; i++ {
		l := levels[i/900]
		u := std.MustTuple(l+r.Int64N(l/10), (l+int64(i%900))<<20)
		sr.Samples = append(sr.Samples, predict.Sample{At: time.Duration(i) * time.Second, Usage: u})
	}
	sr.End = time.Hour
	return sr
}

// BenchmarkObserveSeriesHour: learning from a finished task's hour of one-second samples
// (segmentation, the update, the history).
func BenchmarkObserveSeriesHour(b *testing.B) {
	e, keys := warmEstimator(b, 1000)
	obs := predict.Observation{Series: hourSeries()}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.Observe(keys[i%len(keys)], obs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedivide: re-dividing one key whose history is full (8 observations of 32
// buckets), the observation that marks it included.
func BenchmarkRedivide(b *testing.B) {
	e := newEst(b)
	r := rng(3)
	series := make([]predict.Series, 16)
	for i := range series {
		series[i] = sampled(r, stagedProfile(r, 2+i%3, 5, time.Second), 0, time.Second, 0.05)
	}
	for _, sr := range series[:8] {
		if err := e.Observe(key, predict.Observation{Series: sr}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := e.Observe(key, predict.Observation{Series: series[i%len(series)]}); err != nil {
			b.Fatal(err)
		}
		e.Redivide()
	}
}

// BenchmarkRefEstimateHit is BenchmarkEstimateHit through references (predict.Ref),
// as the scheduler asks.
func BenchmarkRefEstimateHit(b *testing.B) {
	e, keys := warmEstimator(b, 10000)
	refs := make([]predict.Ref, len(keys))
	for i, k := range keys {
		refs[i] = e.Ref(k)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkP, sinkOK = refs[i%len(refs)].Estimate()
	}
}

// checkpointed is an estimator of 10,000 keys of 3-stage profiles, each observed
// observations times (a full history at DefaultHistory), and its checkpoint.
func checkpointed(b *testing.B, observations int, opts ...predict.EstimatorOption) (*predict.SimilarTask, []byte) {
	e := newEst(b, opts...)
	r := rng(1)
	for i := 0; i < 10000; i++ {
		k := predict.Key{Logic: fmt.Sprintf("app-%08x/map", i), InputSize: 128 << 20}
		for j := 0; j < observations; j++ {
			if err := e.Observe(k, predict.Observation{Profile: randProfile(r, 3)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	var buf bytes.Buffer
	if err := e.Checkpoint(&buf); err != nil {
		b.Fatal(err)
	}
	return e, buf.Bytes()
}

// The checkpoint benchmarks' estimators: with the default history, full (8
// observations a key), and without history (one observation a key).
var checkpointCases = []struct {
	name string
	obs  int
	opts []predict.EstimatorOption
}{
	{"history=8", predict.DefaultHistory, nil},
	{"history=0", 1, []predict.EstimatorOption{predict.WithHistory(0, predict.DefaultBuckets)}},
}

func BenchmarkCheckpoint(b *testing.B) {
	for _, c := range checkpointCases {
		b.Run(c.name, func(b *testing.B) {
			e, data := checkpointed(b, c.obs, c.opts...)
			var buf bytes.Buffer
			buf.Grow(len(data))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				buf.Reset()
				if err := e.Checkpoint(&buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data))/10000, "B/key")
		})
	}
}

func BenchmarkRestore(b *testing.B) {
	for _, c := range checkpointCases {
		b.Run(c.name, func(b *testing.B) {
			_, data := checkpointed(b, c.obs, c.opts...)
			e := newEst(b, c.opts...)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := e.Restore(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data))/10000, "B/key")
		})
	}
}
