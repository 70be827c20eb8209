package stage_test

import (
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The properties run on random scenarios on a grid of whole seconds, where a brute-force
// model (an array of free amounts per second) is the reference.

const horizon = 64 // seconds; every reservation ends before it

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

var capacity = tup(10, 10) // cpu (compressible), memory (not)

func randProfile(r *rand.Rand) stage.Profile {
	n := 1 + r.Intn(4)
	st := make([]stage.Stage, n)
	for i := range st {
		st[i] = stage.Stage{Duration: time.Duration(1+r.Intn(5)) * time.Second, Demand: tup(int64(r.Intn(8)), int64(r.Intn(8)))}
	}
	return stage.MustProfile(schema, st...)
}

func randAllow(r *rand.Rand) resource.Tuple {
	if r.Intn(2) == 0 {
		return resource.Tuple{}
	}
	return tup(int64(r.Intn(3)), 0)
}

// model is the brute-force reference: free amounts per second.
type model [horizon]resource.Tuple

func newModel() *model {
	var m model
	for i := range m {
		m[i] = capacity
	}
	return &m
}

func (m *model) fits(start int, p stage.Profile, allow resource.Tuple) bool {
	for t := start; t < start+int(p.Duration()/time.Second) && t < horizon; t++ {
		d := p.At(time.Duration(t-start) * time.Second)
		for k := range d {
			if d[k] > 0 && m[t][k]-d[k] < -allow[k] {
				return false
			}
		}
	}
	return true
}

func (m *model) apply(start int, p stage.Profile, sign int64) {
	for t := start; t < start+int(p.Duration()/time.Second); t++ {
		m[t] = m[t].Add(p.At(time.Duration(t-start) * time.Second).Scale(float64(sign)))
	}
}

type held struct {
	h     stage.Handle
	start int
	p     stage.Profile
}

// scenario builds a timeline by a random sequence of reservations and releases, checking
// it against the model after every step; it returns false on the first disagreement.
func scenario(seed int64, steps int, check func(*stage.Timeline, *model) bool) bool {
	r := rand.New(rand.NewSource(seed))
	tl, _ := stage.NewTimeline(schema, capacity)
	m := newModel()
	var hs []held
	for i := 0; i < steps; i++ {
		if len(hs) > 0 && r.Intn(3) == 0 {
			j := r.Intn(len(hs))
			if tl.Release(hs[j].h) != nil {
				return false
			}
			m.apply(hs[j].start, hs[j].p, +1)
			hs = append(hs[:j], hs[j+1:]...)
		} else {
			start, p, allow := r.Intn(40), randProfile(r), randAllow(r)
			h, err := tl.Reserve(time.Duration(start)*time.Second, p, allow)
			if (err == nil) != m.fits(start, p, allow) {
				return false
			}
			if err == nil {
				m.apply(start, p, -1)
				hs = append(hs, held{h, start, p})
			}
		}
		if !agrees(tl, m) || !check(tl, m) {
			return false
		}
	}
	return true
}

// agrees checks the timeline against the model at every second and that its segments
// are canonical: adjacent segments differ.
func agrees(tl *stage.Timeline, m *model) bool {
	for t := 0; t < horizon; t++ {
		if tl.FreeAt(time.Duration(t)*time.Second) != m[t] {
			return false
		}
	}
	var prev *stage.Segment
	ok := true
	tl.Walk(0, stage.Forever, func(s stage.Segment) bool {
		if prev != nil && (prev.Free == s.Free || prev.End != s.Start) {
			ok = false
		}
		prev = &s
		return ok
	})
	return ok && tl.Len() == len(tl.AppendSegments(nil, 0, stage.Forever))
}

func TestTimelineProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	seeds := gen.Int64()

	props.Property("timeline equals the brute-force model under reserve and release", prop.ForAll(func(seed int64) bool {
		return scenario(seed, 20, func(*stage.Timeline, *model) bool { return true })
	}, seeds))

	props.Property("reserve then release restores the original", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(^seed))
		return scenario(seed, 8, func(tl *stage.Timeline, _ *model) bool {
			before := tl.AppendSegments(nil, 0, stage.Forever)
			h, err := tl.Reserve(time.Duration(r.Intn(40))*time.Second, randProfile(r), randAllow(r))
			if err != nil {
				return true
			}
			if tl.Release(h) != nil {
				return false
			}
			return slices.Equal(before, tl.AppendSegments(nil, 0, stage.Forever))
		})
	}, seeds))

	props.Property("suspend equals release for the free amounts, and resume restores the original", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(^seed))
		tl, _ := stage.NewTimeline(schema, capacity)
		m := newModel()
		var hs []held
		for i := 0; i < 12; i++ {
			start, p := r.Intn(40), randProfile(r)
			if h, err := tl.Reserve(time.Duration(start)*time.Second, p, resource.Tuple{}); err == nil {
				m.apply(start, p, -1)
				hs = append(hs, held{h, start, p})
			}
		}
		before := tl.AppendSegments(nil, 0, stage.Forever)
		var lifted []stage.Handle
		for _, x := range hs {
			if r.Intn(2) == 0 {
				if tl.Suspend(x.h) != nil || tl.Suspend(x.h) == nil { // a second suspension is refused
					return false
				}
				m.apply(x.start, x.p, +1)
				lifted = append(lifted, x.h)
			}
		}
		if !agrees(tl, m) || tl.Reservations() != len(hs) {
			return false
		}
		for _, h := range lifted {
			if tl.Resume(h) != nil || tl.Resume(h) == nil {
				return false
			}
		}
		return slices.Equal(before, tl.AppendSegments(nil, 0, stage.Forever))
	}, seeds))

	props.Property("no accepted reservation takes memory below zero or cpu below the largest allowance", prop.ForAll(func(seed int64) bool {
		return scenario(seed, 20, func(_ *stage.Timeline, m *model) bool {
			for _, f := range m {
				if f[1] < 0 || f[0] < -2 {
					return false
				}
			}
			return true
		})
	}, seeds))

	props.Property("min-free is the minimum of the free amounts in the window, average lies between min and max", prop.ForAll(func(seed int64, a, b int) bool {
		from, to := min(a, b), max(a, b)+1
		return scenario(seed, 10, func(tl *stage.Timeline, m *model) bool {
			lo, hi := m[from], m[from]
			for t := from; t < to; t++ {
				lo, hi = lo.Min(m[t]), hi.Max(m[t])
			}
			w0, w1 := time.Duration(from)*time.Second, time.Duration(to)*time.Second
			if tl.MinFree(w0, w1) != lo {
				return false
			}
			avg := tl.Average(w0, w1)
			for k := 0; k < 2; k++ {
				if avg[k] < float64(lo[k])-1e-9 || avg[k] > float64(hi[k])+1e-9 {
					return false
				}
			}
			return true
		})
	}, seeds, gen.IntRange(0, horizon-2), gen.IntRange(0, horizon-2)))

	props.Property("earliest fit fits, and no earlier second does", prop.ForAll(func(seed int64, from int) bool {
		r := rand.New(rand.NewSource(^seed))
		return scenario(seed, 10, func(tl *stage.Timeline, m *model) bool {
			p, allow := randProfile(r), randAllow(r)
			start, err := tl.EarliestFit(time.Duration(from)*time.Second, p, allow)
			if err != nil {
				return false // every demand here is within capacity, so it fits eventually
			}
			if start%time.Second != 0 || tl.Check(start, p, allow) != nil {
				return false
			}
			s := int(start / time.Second)
			if s+int(p.Duration()/time.Second) <= horizon && !m.fits(s, p, allow) {
				return false
			}
			for t := from; t < s; t++ {
				if m.fits(t, p, allow) {
					return false
				}
			}
			return true
		})
	}, seeds, gen.IntRange(0, 30)))

	props.Property("trim keeps the future and every reservation releasable", prop.ForAll(func(seed int64, now int) bool {
		var tl *stage.Timeline
		var m *model
		scenario(seed, 12, func(t *stage.Timeline, mm *model) bool { tl, m = t, mm; return true })
		if tl == nil {
			return true
		}
		n := time.Duration(now) * time.Second
		tl.Trim(n)
		for t := now; t < horizon; t++ {
			if tl.FreeAt(time.Duration(t)*time.Second) != m[t] {
				return false
			}
		}
		segs := tl.AppendSegments(nil, 0, stage.Forever)
		if len(segs) == 0 || segs[0].Start != n || tl.Len() != len(segs) {
			return false
		}
		for h := stage.Handle(1); tl.Reservations() > 0 && h < 100; h++ {
			_ = tl.Release(h) // handles already released report an error; others must succeed
		}
		return tl.Reservations() == 0 && tl.Len() == 1 && tl.FreeAt(n) == capacity
	}, seeds, gen.IntRange(0, horizon)))

	props.TestingRun(t)
}
