package policy_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

func TestCompressionProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	amounts := gen.Int64Range(-1000, 1<<40)
	penalties := gen.Float64Range(0, 2)
	limits := gen.Float64Range(0, 0.999)

	props.Property("eq. 7: the allowed ratio lies in [0, limitation]", prop.ForAll(func(running, demand int64, p, lim float64) bool {
		c, err := policy.NewCompression(schema, nil, policy.WithPenalty(p), policy.WithLimit(lim))
		if err != nil {
			return false
		}
		for k := 0; k < resource.MaxDims; k++ {
			rc := c.Ratio(k, running, demand)
			if !(rc >= 0 && rc <= c.Limit()[k]) {
				return false
			}
		}
		return true
	}, amounts, amounts, penalties, limits))

	props.Property("eq. 6: more running work allows less, more new work allows more", prop.ForAll(func(r1, r2, d1, d2 int64, p float64) bool {
		c, _ := policy.NewCompression(schema, nil, policy.WithPenalty(p), policy.WithLimit(0.999))
		rLo, rHi := min(r1, r2), max(r1, r2)
		dLo, dHi := min(d1, d2), max(d1, d2)
		return c.Ratio(0, rHi, dLo) <= c.Ratio(0, rLo, dLo)+1e-12 && c.Ratio(0, rLo, dLo) <= c.Ratio(0, rLo, dHi)+1e-12
	}, amounts, amounts, amounts, amounts, penalties))

	props.Property("managed fine-grained fits, once reserved, stay within −limit × N and ≥ 0", prop.ForAll(func(seed int64) bool {
		r := rand.New(rand.NewSource(seed))
		capacity := tup(100, 100, 50)
		tl, _ := stage.NewTimeline(schema, capacity)
		randProfile := func() stage.Profile {
			st := make([]stage.Stage, 1+r.Intn(4))
			for i := range st {
				st[i] = stage.Stage{Duration: time.Duration(1+r.Intn(6)) * time.Second / 2, Demand: tup(int64(r.Intn(70)), int64(r.Intn(60)), int64(r.Intn(30)))}
			}
			return stage.MustProfile(schema, st...)
		}
		pct := int64(r.Intn(30))
		c, _ := policy.NewCompression(schema, nil, policy.WithPenalty(float64(r.Intn(20))/100), policy.WithLimit(float64(pct)/100))
		limit := tup(capacity[0]*pct/100, 0, capacity[2]*pct/100) // ⌊limit × N⌋, exactly
		server := c.Server("s", tl)
		// Place tasks as a scheduler would, each where the matcher accepts it.
		for n := 0; n < 8; n++ {
			p, start := randProfile(), time.Duration(r.Intn(30))*time.Second/2
			res := match.FineGrained{}.Match(server, start, p)
			if !res.Code.OK() {
				continue
			}
			if _, err := tl.Reserve(start, p, res.Allowance); err != nil {
				return false
			}
			for _, seg := range tl.AppendSegments(nil, start, start+p.Duration()) {
				if seg.Free[1] < 0 || seg.Free[0] < -limit[0] || seg.Free[2] < -limit[2] {
					return false
				}
			}
		}
		return true
	}, gen.Int64()))

	// Ratio is eq. 6 then eq. 7, exactly: a guard for any quicker way through it (the
	// fine-grained matcher relies on its answers, below, bit for bit).
	mixed := gen.OneGenOf(gen.Int64Range(-100, 100000), gen.Int64())
	props.Property("Ratio is resource.CompressionBound clamped by resource.MaxCompression, exactly", prop.ForAll(func(running, demand int64, pExp, p, lim float64) bool {
		pen := p * math.Pow(10, pExp) // up to 1e300: p × running may overflow
		c, err := policy.NewCompression(schema, nil, policy.WithPenalty(pen), policy.WithLimit(lim))
		if err != nil {
			return false
		}
		want := 0.0
		if demand > 0 {
			b, err := resource.CompressionBound(float64(demand), float64(max(running, 0)), pen)
			if err != nil {
				return false
			}
			want, _ = resource.MaxCompression(b, lim)
		}
		return c.Ratio(0, running, demand) == want && c.Ratio(1, running, demand) == 0
	}, mixed, mixed, gen.Float64Range(0, 300), penalties, limits))

	// match.MonotoneAllowance's promises, which let a fine-grained match settle each
	// stage by its least free amount: exact, no tolerance, down to free amounts far
	// below capacity − MaxInt64 (overdrawn segments).
	frees := gen.OneGenOf(gen.Int64Range(-(1<<40), 1<<40), gen.Int64Range(math.MinInt64, math.MinInt64+(1<<42)))
	props.Property("the allowed ratio never falls as the free amount grows, and reads its own dimension alone", prop.ForAll(func(f1, f2, other, capacity, demand int64, p, lim float64, mode uint8) bool {
		m := policy.NodeMode(mode % 4)
		c, _ := policy.NewCompression(schema, modes{"s": m}, policy.WithPenalty(p), policy.WithLimit(lim))
		lo, hi := min(f1, f2), max(f1, f2)
		n := tup(capacity, capacity, capacity)
		ask := func(free int64, others int64, start time.Duration) resource.Vector {
			return c.Allowed(match.AllowanceQuery{Server: "s", Capacity: n,
				Segment: stage.Segment{Start: start, End: start + time.Second, Free: resource.Tuple{free, others, others}},
				Demand:  resource.Tuple{demand, demand / 2, max(others, 0)}})
		}
		a, b := ask(lo, other, 0), ask(hi, other, 0)
		return a[0] <= b[0] && ask(lo, other/3, time.Hour)[0] == a[0]
	}, frees, frees, gen.Int64Range(-(1<<40), 1<<40),
		gen.Int64Range(1, 1<<41), gen.Int64Range(0, 1<<41), penalties, limits, gen.UInt8()))

	props.Property("a managed fine-grained match is the one that asks about every piece", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		capacity := tup(int64(50+r.Intn(200)), int64(50+r.Intn(200)), int64(20+r.Intn(100)))
		tl, _ := stage.NewTimeline(schema, capacity)
		randProfile := func(max int) stage.Profile {
			st := make([]stage.Stage, 1+r.Intn(6))
			for i := range st {
				st[i] = stage.Stage{Duration: time.Duration(1+r.Intn(8)) * time.Second / 2, Demand: tup(int64(r.Intn(max)), int64(r.Intn(max/2+1)), int64(r.Intn(max/3+1)))}
			}
			return stage.MustProfile(schema, st...)
		}
		if r.Intn(4) == 0 {
			if err := overdraw(tl, time.Duration(r.Intn(30))*time.Second/2); err != nil {
				return err.Error()
			}
		}
		mode := policy.NodeMode(r.Intn(3))
		c, _ := policy.NewCompression(schema, modes{"s": mode}, policy.WithPenalty(float64(r.Intn(20))/100), policy.WithLimit(float64(r.Intn(60))/100))
		asked := &counted{c: c}
		managed, walked := match.Server{ID: "s", Timeline: tl, Allowance: asked}, match.Server{ID: "s", Timeline: tl, Allowance: everyPiece{c}}
		for n := 0; n < 40; n++ {
			p, start := randProfile(1+r.Intn(200)), time.Duration(r.Intn(40))*time.Second/2
			asked.n = 0
			got, want := match.FineGrained{}.Match(managed, start, p), match.FineGrained{}.Match(walked, start, p)
			if got != want {
				return fmt.Sprintf("mode %v, %v from %v:\n got  %+v\n want %+v", mode, p, start, got, want)
			}
			if got.Code.OK() && asked.n > p.Len() {
				// The manager keeps its promise, so a match that fits asks it at most
				// once a stage.
				return fmt.Sprintf("mode %v, %v from %v: %d questions for %d stages", mode, p, start, asked.n, p.Len())
			}
			if got.Code.OK() && r.Intn(2) == 0 {
				if _, err := tl.Reserve(start, p, got.Allowance); err != nil {
					return err.Error()
				}
			}
		}
		return ""
	}, gen.Int64()))

	props.Property("no compression unless FineGrained, never on memory", prop.ForAll(func(mode uint8, free, demand int64) bool {
		m := policy.NodeMode(mode % 4)
		c, _ := policy.NewCompression(schema, modes{"s": m})
		v := c.Allowed(match.AllowanceQuery{Server: "s", Capacity: tup(1000, 1000, 1000), Segment: stage.Segment{Free: resource.Tuple{free, free, free}}, Demand: tup(demand, demand, demand)})
		if m != policy.ModeFineGrained {
			return v == resource.Vector{}
		}
		return v[1] == 0 && v[0] == v[2]
	}, gen.UInt8(), gen.Int64Range(-500, 1000), gen.Int64Range(0, 2000)))

	props.TestingRun(t)
}

func TestAdjusterProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	scores := gen.Float64Range(0, 1)

	props.Property("Alg. 3 modes grow with the score", prop.ForAll(func(s1, s2 float64) bool {
		th := policy.DefaultThresholds
		return th.Mode(min(s1, s2)) <= th.Mode(max(s1, s2))
	}, scores, scores))

	props.Property("Adjust sets Thresholds.Mode of the reduced conformity", prop.ForAll(func(cpu, mem, net float64) bool {
		conf := newConformity()
		a, _ := policy.NewAdjuster(schema, conf)
		capacity := tup(4000, 8000, 100)
		_ = a.AddServer("s", capacity)
		mean := resource.Vector{share(cpu, 4000), share(mem, 8000), share(net, 100)}
		conf.set("s", mean)
		a.Adjust()
		score, ok := a.Score("s")
		want := math.Max(cpu, math.Max(mem, net))
		return ok && math.Abs(score-want) < 1e-9 && a.Mode("s") == policy.DefaultThresholds.Mode(score)
	}, scores, scores, scores))

	props.Property("degrading is the mean stretch of the last Window reports, given MinReports", prop.ForAll(func(stretches []uint8, window, minReports int) bool {
		minReports = min(minReports, window)
		// Factor 1.505 is never exactly a mean of at most 6 tenths, so the order of
		// floating-point summation cannot decide a tie.
		d := policy.Degradation{Factor: 1.505, Window: window, MinReports: minReports}
		a, err := policy.NewAdjuster(schema, newConformity(), policy.WithDegradation(d))
		if err != nil {
			return false
		}
		_ = a.AddServer("s", tup(1, 1, 1))
		for i, x := range stretches {
			_ = a.ObserveCompletion("s", 10*time.Millisecond, time.Duration(x)*time.Millisecond) // stretch x/10
			last := stretches[max(0, i+1-window) : i+1]
			sum := 0.0
			for _, y := range last {
				sum += float64(y) / 10
			}
			want := len(last) >= minReports && sum/float64(len(last)) >= 1.505
			if got, _ := a.Degrading("s"); got != want {
				return false
			}
		}
		return true
	}, gen.SliceOf(gen.UInt8Range(0, 40)), gen.IntRange(1, 6), gen.IntRange(1, 6)))

	props.TestingRun(t)
}

// A mode reference answers Schedulable as the adjuster does, for random idle
// thresholds, capacities, modes and idle amounts (on and off the threshold), and is
// void once its server is removed.
func TestModeRefSchedulableAsAdjuster(t *testing.T) {
	props := gopter.NewProperties(gopter.DefaultTestParameters())
	modes := []policy.NodeMode{policy.ModeFineGrained, policy.ModeFineGrainedNoCompression, policy.ModeCoarseGrained, policy.ModeStopAllocation}
	props.Property("ModeRef.Schedulable = Adjuster.Schedulable", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		ih := resource.Vector{float64(r.Intn(5)) / 10, float64(r.Intn(5)) / 10, float64(r.Intn(5)) / 10}
		a, err := policy.NewAdjuster(schema, newConformity(), policy.WithIdleThreshold(ih))
		if err != nil {
			return err.Error()
		}
		capacity := tup(int64(1+r.Intn(8000)), int64(1+r.Intn(8000)), int64(r.Intn(200)))
		if err := a.AddServer("s", capacity); err != nil {
			return err.Error()
		}
		ref, _ := a.Ref("s")
		for range 50 {
			if err := a.SetMode("s", modes[r.Intn(len(modes))]); err != nil {
				return err.Error()
			}
			var idle resource.Tuple
			floor := capacity.ScaleEach(ih)
			for k := range 3 {
				idle[k] = floor[k] + int64(r.Intn(5)) - 2 // about the threshold
			}
			want, err := a.Schedulable("s", idle)
			if err != nil {
				return err.Error()
			}
			if got, live := ref.Schedulable(idle); got != want || !live {
				return fmt.Sprintf("capacity %v, ih %v, mode %v, idle %v: ref says %v (live %v), adjuster %v", capacity, ih, a.Mode("s"), idle, got, live, want)
			}
		}
		if err := a.RemoveServer("s"); err != nil {
			return err.Error()
		}
		if ok, live := ref.Schedulable(capacity); ok || live {
			return "a removed server's reference still answers"
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

// everyPiece is the compression manager without its match.MonotoneAllowance promise:
// a fine-grained match asks it about every piece short of a stage's demand.
type everyPiece struct{ c *policy.Compression }

func (e everyPiece) Allowed(q match.AllowanceQuery) resource.Vector { return e.c.Allowed(q) }

// counted is the compression manager, promise included, counting the questions it is
// asked.
type counted struct {
	c *policy.Compression
	n int
}

func (a *counted) Allowed(q match.AllowanceQuery) resource.Vector {
	a.n++
	return a.c.Allowed(q)
}

func (a *counted) MonotoneInFree() bool { return a.c.MonotoneInFree() }

// overdraw leaves a second of timeline tl, from at, with less free than its capacity
// − MaxInt64 on the CPU, as only a resumed reservation can: a reservation is
// suspended, one as large as an int64 takes the room (with an allowance as large), and
// the first is resumed. The second must be idle.
func overdraw(tl *stage.Timeline, at time.Duration) error {
	one := func(cpu int64) stage.Profile {
		return stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(cpu, 0, 0)})
	}
	h, err := tl.Reserve(at, one(10), resource.Tuple{})
	if err != nil {
		return err
	}
	if err := tl.Suspend(h); err != nil {
		return err
	}
	if _, err := tl.Reserve(at, one(math.MaxInt64), resource.Tuple{math.MaxInt64}); err != nil {
		return err
	}
	if err := tl.Resume(h); err != nil {
		return err
	}
	if free := tl.FreeAt(at)[0]; free >= tl.Capacity()[0]-math.MaxInt64 {
		return fmt.Errorf("overdraw at %v left %d free", at, free)
	}
	return nil
}

// TestManagedMatchOverdrawnSegment is the case that found Allowed reading an
// overdrawn segment as idle: capacity − free wrapped round below zero, the ratio rose
// to the limitation where the free amount is least, and the match reported the
// overdrawn piece, not the earlier one that fails first.
func TestManagedMatchOverdrawnSegment(t *testing.T) {
	tl, err := stage.NewTimeline(schema, tup(1000, 1000, 1000))
	require.NoError(t, err)
	require.NoError(t, overdraw(tl, 5*time.Second))
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: 5 * time.Second, Demand: tup(990, 0, 0)}), resource.Tuple{})
	require.NoError(t, err)

	c, err := policy.NewCompression(schema, nil)
	require.NoError(t, err)
	task := stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Second, Demand: tup(100, 0, 0)})
	got := match.FineGrained{}.Match(c.Server("s", tl), 0, task)
	want := match.FineGrained{}.Match(match.Server{ID: "s", Timeline: tl, Allowance: everyPiece{c}}, 0, task)
	assert.Equal(t, want, got)
	assert.Equal(t, match.NoRoom, got.Code)
	assert.Equal(t, time.Duration(0), got.From, "the first piece that fails is [0s, 5s): %v", got)
	overdrawn := c.Allowed(match.AllowanceQuery{Server: "s", Capacity: tup(1000, 1000, 1000),
		Segment: stage.Segment{Free: tl.FreeAt(5 * time.Second)}, Demand: tup(100, 0, 0)})
	assert.Zero(t, overdrawn[0], "an overdrawn segment allows no compression")
}
