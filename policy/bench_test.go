package policy_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var (
	sinkM policy.NodeMode
	sinkV resource.Vector
	sinkR match.Result
	sinkC []policy.Change
)

func benchAdjuster(b *testing.B, n int) (*policy.Adjuster, *conformity) {
	conf := newConformity()
	a, err := policy.NewAdjuster(schema, conf)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("n%04d", i)
		if err := a.AddServer(id, tup(64000, 256<<30, 1<<30)); err != nil {
			b.Fatal(err)
		}
		conf.set(id, resource.Vector{share(float64(i%25)/100, 64000)})
	}
	return a, conf
}

// BenchmarkMode is the scheduler's read of a server's mode, from parallel goroutines.
func BenchmarkMode(b *testing.B) {
	a, _ := benchAdjuster(b, 1000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sinkM = a.Mode("n0500")
		}
	})
}

// BenchmarkAdjust is one Alg. 3 pass over 1,000 servers.
func BenchmarkAdjust(b *testing.B) {
	a, _ := benchAdjuster(b, 1000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkC = a.Adjust()
	}
}

// BenchmarkAllowed is one eq. 6/7 query of the compression manager.
func BenchmarkAllowed(b *testing.B) {
	a, _ := benchAdjuster(b, 1)
	c, _ := policy.NewCompression(schema, a)
	q := match.AllowanceQuery{Server: "n0000", Capacity: tup(64000, 256<<30, 1<<30),
		Segment: stage.Segment{End: time.Second, Free: tup(2000, 100<<30, 1<<29)}, Demand: tup(2200, 1<<30, 1<<20)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		sinkV = c.Allowed(q)
	}
}

// BenchmarkFineGrainedManaged is the fine-grained match of an 8-stage profile over 29
// of a 256-segment timeline's segments, every one of them needing compression granted
// by the compression manager (eq. 6/7 per segment).
func BenchmarkFineGrainedManaged(b *testing.B) {
	s := resource.Standard()
	tl, _ := stage.NewTimeline(s, s.MustTuple(64000, 256<<30, 1<<30, 1<<30))
	for i := 0; i < 255; i++ {
		p := stage.MustProfile(s, stage.Stage{Duration: time.Second, Demand: s.MustTuple(int64(i%7+1)*1000, int64(i%5+1)<<30, int64(i%3)<<20)})
		if _, err := tl.Reserve(time.Duration(i)*time.Second, p, resource.Tuple{}); err != nil {
			b.Fatal(err)
		}
	}
	stages := make([]stage.Stage, 8)
	for i := range stages {
		stages[i] = stage.Stage{Duration: 3500 * time.Millisecond, Demand: s.MustTuple(60000+int64(i%3)*100, int64(i%4+1)<<30, 1<<20)}
	}
	p := stage.MustProfile(s, stages...)
	c, _ := policy.NewCompression(s, nil)
	server := c.Server("n", tl)
	if r := (match.FineGrained{}).Match(server, 100*time.Second, p); r.Code != match.FitCompressed {
		b.Fatalf("setup: %v", r)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkR = match.FineGrained{}.Match(server, 100*time.Second, p)
	}
}
