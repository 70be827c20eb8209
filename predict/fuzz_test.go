package predict_test

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// knownError reports whether err wraps one of the sentinels this package (or resource
// and stage) documents.
func knownError(err error) bool {
	for _, s := range []error{
		predict.ErrInvalidOption, predict.ErrInvalidKey, predict.ErrInvalidValue, predict.ErrNoSamples, predict.ErrTooManySamples,
		predict.ErrUnsorted, predict.ErrBadDuration, predict.ErrStageCount, predict.ErrBadProgress,
		predict.ErrBadTime, predict.ErrEmptyID, predict.ErrUnknownTask, predict.ErrDuplicateTask,
		resource.ErrNegative, resource.ErrOutsideSchema, resource.ErrInvalidRatio, resource.ErrNotCompressible,
		resource.ErrSchemaMismatch, stage.ErrEmptyProfile, stage.ErrBadDuration,
	} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// decodeSamples reads 12-byte records (int32 time step, uint32 cpu, uint32 memory) into
// samples; steps may be zero or negative, so unsorted input reaches Segment.
func decodeSamples(data []byte) []predict.Sample {
	var s []predict.Sample
	at := time.Duration(0)
	for len(data) >= 12 {
		step := int32(binary.LittleEndian.Uint32(data))
		at += time.Duration(step) * time.Millisecond
		s = append(s, predict.Sample{At: at, Usage: resource.Tuple{int64(binary.LittleEndian.Uint32(data[4:])), int64(binary.LittleEndian.Uint32(data[8:]))}})
		data = data[12:]
	}
	return s
}

// FuzzSegment checks that Segment never panics, fails only with documented errors, and
// that what it returns satisfies the segmentation invariants.
func FuzzSegment(f *testing.F) {
	rec := func(step int32, cpu, mem uint32) []byte {
		b := make([]byte, 12)
		binary.LittleEndian.PutUint32(b, uint32(step))
		binary.LittleEndian.PutUint32(b[4:], cpu)
		binary.LittleEndian.PutUint32(b[8:], mem)
		return b
	}
	var seed []byte
	for i, c := range []uint32{100, 100, 900, 900, 100, 5, 5000} {
		seed = append(seed, rec(int32(1000*(i%3+1)), c, c*3)...)
	}
	f.Add(seed, 0.2, int64(0), 8, 1.0, int64(0))
	f.Add(seed, 0.0, int64(2000*time.Millisecond), 2, 0.5, int64(time.Second))
	f.Add(rec(0, 1, 1), 1.0, int64(0), 1, 1.0, int64(0))
	f.Add(append(rec(5, 1, 1), rec(-3, 1, 1)...), 0.5, int64(-1), 0, 2.0, int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, threshold float64, minStage int64, maxStages int, q float64, last int64) {
		samples := decodeSamples(data)
		opts := []predict.SegmentOption{predict.WithChangeThreshold(threshold), predict.WithMinStage(time.Duration(minStage)),
			predict.WithMaxStages(maxStages), predict.WithPercentile(q)}
		if last != 0 {
			opts = append(opts, predict.WithLastDuration(time.Duration(last)))
		}
		p, err := predict.Segment(std, samples, opts...)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		l := time.Duration(max(last, 0))
		if msg := checkSegmentation(samples, p, l, maxStages, time.Duration(minStage), q >= 1); msg != "" {
			t.Fatalf("%s: %v from %v", msg, p, samples)
		}
	})
}

// FuzzNewSamples checks that NewSamples rejects NaN, infinite, negative and unsorted
// input with documented errors and otherwise returns sorted, valid samples.
func FuzzNewSamples(f *testing.F) {
	f.Add(int64(0), int64(1000), 0.5, 1e9, math.NaN(), 3.0)
	f.Add(int64(5), int64(5), 1.0, 2.0, 3.0, 4.0)
	f.Add(int64(-1), int64(1), math.Inf(1), -1.0, 0.0, 1e300)
	f.Fuzz(func(t *testing.T, t0, t1 int64, a, b, c, d float64) {
		at := []time.Duration{time.Duration(t0), time.Duration(t1)}
		usage := []resource.Vector{{a, b}, {c, 0, d}}
		s, err := predict.NewSamples(std, at, usage)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if len(s) != 2 || s[1].At <= s[0].At {
			t.Fatalf("bad samples %v", s)
		}
		for _, x := range s {
			if err := std.Validate(x.Usage); err != nil {
				t.Fatalf("invalid usage %v: %v", x.Usage, err)
			}
		}
	})
}

// FuzzObserve feeds arbitrary observations to an estimator: it must never panic, must
// reject bad ones with documented errors, and must keep every estimate valid and within
// the envelope of what it accepted.
func FuzzObserve(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.5, 0.3, 1.0, 2)
	f.Add([]byte{0, 0, 0}, math.NaN(), 1.5, -1.0, 0)
	f.Fuzz(func(t *testing.T, data []byte, w, rc1, rc2 float64, nobs int) {
		e, err := predict.NewSimilarTask(std, predict.WithBaseWeight(w))
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		var lo, hi resource.Tuple
		lo[0] = math.MaxInt64
		accepted := 0
		for obs := 0; obs < 1+nobs%4 && len(data) > 0; obs++ {
			n := int(data[0]%5) + 1
			data = data[1:]
			stages := make([]stage.Stage, 0, n)
			for i := 0; i < n && len(data) >= 2; i++ {
				stages = append(stages, stage.Stage{Duration: time.Duration(data[0]) * time.Second, Demand: resource.Tuple{int64(data[1]) * 1000}})
				data = data[2:]
			}
			p, err := stage.NewProfile(std, stages...)
			if err != nil {
				continue
			}
			comp := make([]resource.Vector, p.Len())
			comp[0] = resource.Vector{rc1}
			comp[len(comp)-1][2] = rc2
			if err := e.Observe(key, predict.Observation{Profile: p, Compression: comp}); err != nil {
				if !knownError(err) {
					t.Fatalf("undocumented error %v", err)
				}
				continue
			}
			accepted++
			plo, phi := envelope(p)
			lo, hi = lo.Min(plo), hi.Max(phi)
		}
		est, ok := e.Estimate(key)
		if ok != (accepted > 0) {
			t.Fatalf("predictable %v after %d accepted observations", ok, accepted)
		}
		if !ok {
			return
		}
		for i := 0; i < est.Len(); i++ {
			d := est.Stage(i).Demand
			if d[0] < lo[0] || d[0] > hi[0] || est.Stage(i).Duration <= 0 {
				t.Fatalf("stage %d = %v outside the observed [%v, %v]", i, est.Stage(i), lo, hi)
			}
		}
	})
}

// FuzzNewPhases checks that NewPhases accepts exactly positive finite weights and that
// the progress it computes stays in [0, 1].
func FuzzNewPhases(f *testing.F) {
	f.Add(1.0, 1.0, 1.0, 1, int64(5), int64(10))
	f.Add(0.0, math.NaN(), -1.0, 0, int64(-1), int64(0))
	f.Add(math.MaxFloat64, math.MaxFloat64, 1.0, 2, int64(1), int64(1))
	f.Fuzz(func(t *testing.T, a, b, c float64, phase int, done, total int64) {
		ph, err := predict.NewPhases(a, b, c)
		valid := func(w float64) bool { return w > 0 && !math.IsInf(w, 0) }
		if (err == nil) != (valid(a) && valid(b) && valid(c) && !math.IsInf(a+b+c, 0)) {
			t.Fatalf("NewPhases(%v, %v, %v) error %v", a, b, c, err)
		}
		if err != nil {
			return
		}
		p, err := ph.Progress(phase, done, total)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if !(p >= 0 && p <= 1) {
			t.Fatalf("progress %v out of [0, 1]", p)
		}
	})
}

// FuzzBuckets checks that log and linear buckets are monotone, never above the size and
// never negative.
func FuzzBuckets(f *testing.F) {
	f.Add(2.0, int64(100), int64(1000), int64(7))
	f.Add(1.0001, int64(0), int64(math.MaxInt64), int64(1))
	f.Add(1e300, int64(-5), int64(3), int64(-1))
	f.Fuzz(func(t *testing.T, base float64, a, b, width int64) {
		a, b = min(a, b), max(a, b)
		for _, mk := range []func() (predict.Bucketing, error){
			func() (predict.Bucketing, error) { return predict.LogBuckets(base) },
			func() (predict.Bucketing, error) { return predict.LinearBuckets(width) },
		} {
			bk, err := mk()
			if err != nil {
				if !knownError(err) {
					t.Fatalf("undocumented error %v", err)
				}
				continue
			}
			ba, bb := bk(a), bk(b)
			if ba > bb || ba < 0 || (a >= 0 && ba > a) || (b >= 0 && bb > b) {
				t.Fatalf("bucket(%d) = %d, bucket(%d) = %d", a, ba, b, bb)
			}
		}
	})
}

// FuzzDetectStraggler checks that the straggler test never panics and is consistent
// with its own figures.
func FuzzDetectStraggler(f *testing.F) {
	f.Add(int64(10), 0.1, int64(10), 0.2, int64(10), 0.3, int64(10), 0.4, int64(0), int64(100e9))
	f.Add(int64(0), math.NaN(), int64(-1), 2.0, int64(math.MaxInt64), 0.3, int64(1), 1.0, int64(-5), int64(0))
	f.Fuzz(func(t *testing.T, d1 int64, p1 float64, d2 int64, p2 float64, d3 int64, p3 float64, d4 int64, p4 float64, start, slo int64) {
		at := time.Duration(start)
		var s []predict.ProgressSample
		for _, x := range []struct {
			d int64
			p float64
		}{{d1, p1}, {d2, p2}, {d3, p3}, {d4, p4}} {
			at += time.Duration(x.d)
			s = append(s, predict.ProgressSample{At: at, Progress: x.p})
		}
		v, err := predict.DetectStraggler(s, time.Duration(start), time.Duration(slo))
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if v.Finish < s[3].At || v.Runtime < 0 {
			t.Fatalf("finish %v before the last sample %v (runtime %v)", v.Finish, s[3].At, v.Runtime)
		}
		if v.Straggler && v.Runtime < time.Duration(slo) {
			t.Fatalf("straggler predicted within the SLO: %+v", v)
		}
	})
}

// FuzzConformity checks that eq. 16 never panics and stays in [0, N²] for usage within
// capacity.
func FuzzConformity(f *testing.F) {
	f.Add(int64(1000), int64(10e9), int64(600), int64(400), int64(100), int64(30e9), int64(200), int64(200), int64(300), 0.3)
	f.Add(int64(0), int64(0), int64(-1), int64(0), int64(0), int64(-1), int64(0), int64(0), int64(0), math.NaN())
	f.Fuzz(func(t *testing.T, capacity, t1, a1, p1, i1, t2, a2, p2, i2 int64, th float64) {
		w := []predict.Interval{
			{Duration: time.Duration(t1), Actual: resource.Tuple{a1}, Predicted: resource.Tuple{p1}, Idle: resource.Tuple{i1}},
			{Duration: time.Duration(t2), Actual: resource.Tuple{a2}, Predicted: resource.Tuple{p2}, Idle: resource.Tuple{i2}},
		}
		f, err := predict.Conformity(std, resource.Tuple{capacity}, resource.Vector{th}, w)
		if err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if !(f[0] >= 0) {
			t.Fatalf("F = %v", f[0])
		}
		n := float64(capacity)
		within := a1 <= capacity && p1 <= capacity && a2 <= capacity && p2 <= capacity
		if within && f[0] > n*n*(1+1e-9) {
			t.Fatalf("F = %v > N² for usage within capacity", f[0])
		}
	})
}

// FuzzObserveSeries feeds arbitrary series to the estimator: it never panics, every
// refusal is a documented error that changes nothing, and an accepted series gives an
// estimate whose demands lie within what the series used.
func FuzzObserveSeries(f *testing.F) {
	f.Add([]byte{1, 10, 2, 3, 20, 4, 3, 30, 1}, uint16(9), 0.2)
	f.Add([]byte{0, 0, 0, 5, 1, 1}, uint16(0), 1.5)
	f.Add([]byte{3, 255, 255, 0, 1, 2}, uint16(1), math.NaN())
	f.Fuzz(func(t *testing.T, data []byte, end uint16, rc float64) {
		e, err := predict.NewSimilarTask(std, predict.WithHistory(4, 8))
		if err != nil {
			t.Fatal(err)
		}
		var sr predict.Series
		at := time.Duration(0)
		for len(data) >= 3 {
			at += time.Duration(int8(data[0])) * time.Second // may go backwards
			sr.Samples = append(sr.Samples, predict.Sample{At: at, Usage: resource.Tuple{int64(data[1]) * 100, int64(data[2]) << 20}})
			sr.Compression = append(sr.Compression, resource.Vector{rc})
			data = data[3:]
		}
		sr.End = at + time.Duration(int16(end))*time.Millisecond
		var lo, hi resource.Tuple
		lo[0], lo[1] = math.MaxInt64, math.MaxInt64
		for _, s := range sr.Samples {
			lo, hi = lo.Min(s.Usage), hi.Max(s.Usage)
		}
		if err := e.Observe(key, predict.Observation{Series: sr}); err != nil {
			if !knownError(err) {
				t.Fatalf("undocumented error %v", err)
			}
			if e.Observations(key) != 0 || e.Redivide() != 0 {
				t.Fatal("a refused series changed the estimator")
			}
			return
		}
		e.Redivide()
		est, ok := e.Estimate(key)
		if !ok {
			t.Fatal("no estimate after an accepted series")
		}
		for i := 0; i < est.Len(); i++ {
			d := est.Stage(i).Demand
			for k := 0; k < 2; k++ {
				if d[k] < lo[k] || d[k] > hi[k] {
					t.Fatalf("stage %d = %v outside the series' [%v, %v]", i, est.Stage(i), lo, hi)
				}
			}
		}
	})
}
