package stage_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// busyTimeline returns a timeline of about n segments: short reservations at random
// starts over [0, n seconds), each within capacity on its own.
func busyTimeline(b *testing.B, n int) *stage.Timeline {
	r := rand.New(rand.NewSource(1))
	tl, err := stage.NewTimeline(schema, tup(1<<40, 1<<40))
	if err != nil {
		b.Fatal(err)
	}
	for tl.Len() < n {
		start := time.Duration(r.Intn(n)) * time.Second
		p := stage.MustProfile(schema, stage.Stage{Duration: time.Duration(1+r.Intn(3)) * time.Second, Demand: tup(int64(1+r.Intn(1000)), int64(1+r.Intn(1000)))})
		if _, err := tl.Reserve(start, p, resource.Tuple{}); err != nil {
			b.Fatal(err)
		}
	}
	return tl
}

func eightStages() stage.Profile {
	st := make([]stage.Stage, 8)
	for i := range st {
		st[i] = stage.Stage{Duration: time.Duration(1+i%3) * time.Second, Demand: tup(int64(100*(i+1)), int64(50*(8-i)))}
	}
	return stage.MustProfile(schema, st...)
}

func BenchmarkReserveRelease(b *testing.B) {
	for _, tc := range []struct {
		name string
		p    stage.Profile
	}{
		{"1stage", stage.MustProfile(schema, stage.Stage{Duration: 2 * time.Second, Demand: tup(100, 100)})},
		{"8stages", eightStages()},
	} {
		b.Run(tc.name+"/1000segments", func(b *testing.B) {
			tl := busyTimeline(b, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Duration(i%900) * time.Second
				h, err := tl.Reserve(start, tc.p, resource.Tuple{})
				if err != nil {
					b.Fatal(err)
				}
				if err := tl.Release(h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMinFree asks for the minimum over windows of 10 s and 100 s (about 10 and
// 100 segments) at varying starts, and over windows of 256 and all 1,000 segments, on
// a timeline of 1,000 segments.
func BenchmarkMinFree(b *testing.B) {
	tl := busyTimeline(b, 1000)
	for _, w := range []int{10, 100} {
		b.Run(time.Duration(w*int(time.Second)).String()+"/1000segments", func(b *testing.B) {
			b.ReportAllocs()
			var sink resource.Tuple
			for i := 0; i < b.N; i++ {
				from := time.Duration(i%900) * time.Second
				sink = sink.Add(tl.MinFree(from, from+time.Duration(w)*time.Second))
			}
			_ = sink
		})
	}
	segs := tl.AppendSegments(nil, 0, stage.Forever)
	for _, w := range []struct {
		name     string
		from, to time.Duration
	}{{"256of1000segments", segs[100].Start, segs[356].Start}, {"1000of1000segments", 0, stage.Forever}} {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			var sink resource.Tuple
			for i := 0; i < b.N; i++ {
				sink = sink.Add(tl.MinFree(w.from, w.to))
			}
			_ = sink
		})
	}
}

// BenchmarkMinFreeStages is the least free amount of each stage of an 8-stage profile
// at once, against 8 MinFree calls over the same windows, on 1,000 segments: stages of
// 2 s (about 2 segments each) and of 32 s (about 32).
func BenchmarkMinFreeStages(b *testing.B) {
	tl := busyTimeline(b, 1000)
	for _, d := range []time.Duration{2 * time.Second, 32 * time.Second} {
		st := make([]stage.Stage, 8)
		for i := range st {
			st[i] = stage.Stage{Duration: d, Demand: tup(100, 100)}
		}
		p := stage.MustProfile(schema, st...)
		b.Run(d.String()+"stages/one-descent", func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for i := 0; i < b.N; i++ {
				tl.MinFreeStages(time.Duration(i%700)*time.Second, p, func(_ int, m resource.Tuple) bool {
					sink += m[0]
					return true
				})
			}
			_ = sink
		})
		b.Run(d.String()+"stages/per-stage-MinFree", func(b *testing.B) {
			b.ReportAllocs()
			var sink int64
			for i := 0; i < b.N; i++ {
				start := time.Duration(i%700) * time.Second
				for k := 0; k < p.Len(); k++ {
					sink += tl.MinFree(start+p.Offset(k), start+p.Offset(k+1))[0]
				}
			}
			_ = sink
		})
	}
}

func BenchmarkWalk256(b *testing.B) {
	tl := busyTimeline(b, 1000)
	// Find a window holding 256 segments.
	segs := tl.AppendSegments(nil, 0, stage.Forever)
	from, to := segs[100].Start, segs[356].Start
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		tl.Walk(from, to, func(s stage.Segment) bool {
			n++
			return true
		})
	}
	if n != 256*b.N {
		b.Fatalf("walked %d segments, want %d", n, 256*b.N)
	}
}

func BenchmarkSegmentsRange256(b *testing.B) {
	tl := busyTimeline(b, 1000)
	segs := tl.AppendSegments(nil, 0, stage.Forever)
	from, to := segs[100].Start, segs[356].Start
	b.ReportAllocs()
	b.ResetTimer()
	var sum int64
	for i := 0; i < b.N; i++ {
		for s := range tl.Segments(from, to) {
			sum += s.Free[0]
		}
	}
	_ = sum
}

func BenchmarkEarliestFit(b *testing.B) {
	tl := busyTimeline(b, 1000)
	// A demand that fits only where the timeline is quiet.
	p := stage.MustProfile(schema, stage.Stage{Duration: 3 * time.Second, Demand: tup(1<<40-900, 1)})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tl.EarliestFit(time.Duration(i%900)*time.Second, p, resource.Tuple{}); err != nil {
			b.Fatal(err)
		}
	}
}
