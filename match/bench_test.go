package match_test

import (
	"testing"
	"time"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var (
	sinkR match.Result
	sinkF float64
	sinkP match.Placement
)

// busy256 returns a timeline of 256 segments: one-second reservations on [i, i+1) for
// i < 255, each demanding a different amount than its neighbours, then [255 s, ∞).
func busy256(tb testing.TB) *stage.Timeline {
	s := resource.Standard()
	tl, err := stage.NewTimeline(s, s.MustTuple(64000, 256<<30, 1<<30, 1<<30))
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < 255; i++ {
		p := stage.MustProfile(s, stage.Stage{Duration: time.Second, Demand: s.MustTuple(int64(i%7+1)*1000, int64(i%5+1)<<30, int64(i%3)<<20)})
		if _, err := tl.Reserve(time.Duration(i)*time.Second, p, resource.Tuple{}); err != nil {
			tb.Fatal(err)
		}
	}
	if tl.Len() != 256 {
		tb.Fatalf("timeline has %d segments, want 256", tl.Len())
	}
	return tl
}

// eightStages returns an 8-stage profile, each stage d long, demanding cpu (in
// millicores) plus a little memory and disk bandwidth.
func eightStages(d time.Duration, cpu int64) stage.Profile {
	s := resource.Standard()
	st := make([]stage.Stage, 8)
	for i := range st {
		st[i] = stage.Stage{Duration: d, Demand: s.MustTuple(cpu+int64(i%3)*100, int64(i%4+1)<<30, 1<<20)}
	}
	return stage.MustProfile(s, st...)
}

func benchMatch(b *testing.B, m match.Matcher, server match.Server, start time.Duration, p stage.Profile, want match.Code) {
	b.Helper()
	if r := m.Match(server, start, p); r.Code != want {
		b.Fatalf("setup: got %v (%v), want %v", r.Code, r, want)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkR = m.Match(server, start, p)
	}
}

// BenchmarkFineGrained matches an 8-stage profile against a 256-segment timeline. The
// sub-benchmarks say how many of the 256 segments the task's stages overlap: 8 stages
// of 1.5 s from 100.25 s overlap 13 segments, 8 of 3.5 s from 100 s overlap 29, and 8
// of 32 s from 0 overlap all 256. BenchmarkWalkOnly is the floor under each.
func BenchmarkFineGrained(b *testing.B) {
	tl := busy256(b)
	s := resource.Standard()
	tenPct, _ := match.UniformAllowance(s, resource.DefaultCompressionLimit)
	plain := match.Server{ID: "n", Timeline: tl}
	squeezed := match.Server{ID: "n", Timeline: tl, Allowance: tenPct}
	b.Run("13of256/fit", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, plain, 100250*time.Millisecond, eightStages(1500*time.Millisecond, 40000), match.Fit)
	})
	b.Run("13of256/compressed", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, squeezed, 100250*time.Millisecond, eightStages(1500*time.Millisecond, 60000), match.FitCompressed)
	})
	b.Run("29of256/fit", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, plain, 100*time.Second, eightStages(3500*time.Millisecond, 40000), match.Fit)
	})
	b.Run("29of256/compressed", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, squeezed, 100*time.Second, eightStages(3500*time.Millisecond, 60000), match.FitCompressed)
	})
	b.Run("29of256/noroom", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, squeezed, 100*time.Second, eightStages(3500*time.Millisecond, 66000), match.NoRoom)
	})
	b.Run("256of256/fit", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, plain, 0, eightStages(32*time.Second, 40000), match.Fit)
	})
	b.Run("256of256/compressed", func(b *testing.B) {
		benchMatch(b, match.FineGrained{}, squeezed, 0, eightStages(32*time.Second, 60000), match.FitCompressed)
	})
}

// BenchmarkWalkOnly is the floor under BenchmarkFineGrained: stage.Timeline.Walk over
// the same windows with a callback that does nothing.
func BenchmarkWalkOnly(b *testing.B) {
	tl := busy256(b)
	for _, w := range []struct {
		name     string
		from, to time.Duration
	}{{"13of256", 100250 * time.Millisecond, 112250 * time.Millisecond}, {"29of256", 100 * time.Second, 128 * time.Second}, {"256of256", 0, 256 * time.Second}} {
		b.Run(w.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; i < b.N; i++ {
				tl.Walk(w.from, w.to, func(stage.Segment) bool { n++; return true })
			}
			sinkF = float64(n)
		})
	}
}

func BenchmarkCoarseGrained(b *testing.B) {
	tl := busy256(b)
	server := match.Server{ID: "n", Timeline: tl}
	b.Run("29of256/fit", func(b *testing.B) {
		benchMatch(b, match.CoarseGrained{}, server, 100*time.Second, eightStages(3500*time.Millisecond, 40000), match.Fit)
	})
	b.Run("29of256/noroom", func(b *testing.B) {
		benchMatch(b, match.CoarseGrained{}, server, 100*time.Second, eightStages(3500*time.Millisecond, 60000), match.NoRoom)
	})
	b.Run("256of256/fit", func(b *testing.B) {
		benchMatch(b, match.CoarseGrained{}, server, 0, eightStages(32*time.Second, 40000), match.Fit)
	})
}

func BenchmarkRequestQuantity(b *testing.B) {
	tl := busy256(b)
	server := match.Server{ID: "n", Timeline: tl}
	s := resource.Standard()
	req, _ := stage.Constant(s, s.MustTuple(40000, 8<<30), 28*time.Second)
	benchMatch(b, match.RequestQuantity{}, server, 100*time.Second, req, match.Fit)
}

func BenchmarkScore(b *testing.B) {
	s := resource.Standard()
	capacity := s.MustTuple(64000, 256<<30, 1<<30, 1<<30, 1<<40)
	free := s.MustTuple(20000, 100<<30, 1<<29, 1<<28, 1<<39)
	demand := s.MustTuple(4000, 8<<30, 1<<20, 1<<20, 1<<30)
	for _, sc := range []struct {
		name string
		s    match.Scorer
	}{
		{"LeastAllocated", match.LeastAllocated{}},
		{"MostAllocated", match.MostAllocated{}},
		{"BestFit", match.BestFit{}},
		{"BalancedAllocation", match.BalancedAllocation{}},
		{"Alignment", match.Alignment{}},
	} {
		b.Run(sc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sinkF = sc.s.Score(capacity, free, demand)
			}
		})
	}
}

// BenchmarkChooseServer places an 8-stage task on the best of 16 servers by
// fine-grained matching and Alignment.
func BenchmarkChooseServer(b *testing.B) {
	s := resource.Standard()
	servers := make([]match.Server, 16)
	for i := range servers {
		tl, _ := stage.NewTimeline(s, s.MustTuple(int64(8+i)*1000, int64(16+i)<<30, 1<<30))
		servers[i] = match.Server{ID: string(rune('a' + i)), Timeline: tl}
	}
	task := match.Work{ID: "t", Profile: eightStages(time.Second, 2000)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkP = match.ChooseServer(servers, 0, task, match.FineGrained{}, nil, match.Alignment{})
	}
	if sinkP.Index < 0 {
		b.Fatal("no placement")
	}
}
