package match_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/match"
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

var propCapacity = tup(100, 100, 50)

// scenario is a random server (timeline with a few reservations, some compressed), a
// random task and start on a half-second grid, and a random constant allowance.
type scenario struct {
	tl    *stage.Timeline
	p     stage.Profile
	start time.Duration
	rc    float64
	allow match.Fixed
}

func randProfile(r *rand.Rand, maxDemand int) stage.Profile {
	stages := make([]stage.Stage, 1+r.Intn(5))
	for i := range stages {
		stages[i] = st(float64(1+r.Intn(8))/2, int64(r.Intn(maxDemand)), int64(r.Intn(maxDemand)), int64(r.Intn(maxDemand/2)))
	}
	return prof(stages...)
}

func newScenario(seed int64) scenario {
	r := rand.New(rand.NewSource(seed))
	tl, _ := stage.NewTimeline(schema3, propCapacity)
	for n := r.Intn(7); n > 0; n-- {
		allow := resource.Tuple{}
		if r.Intn(2) == 0 {
			allow = tup(int64(r.Intn(21)), 0, int64(r.Intn(11)))
		}
		_, _ = tl.Reserve(time.Duration(r.Intn(41))*time.Second/2, randProfile(r, 60), allow) // refusals are fine
	}
	sc := scenario{tl: tl, p: randProfile(r, 70), start: time.Duration(r.Intn(49)) * time.Second / 2}
	if r.Intn(4) > 0 {
		sc.rc = float64(r.Intn(31)) / 100
	}
	sc.allow, _ = match.UniformAllowance(schema3, sc.rc)
	return sc
}

func (sc scenario) server(allow match.Allowance) match.Server {
	return match.Server{ID: "s", Timeline: sc.tl, Allowance: allow}
}

// bruteForce is Alg. 2's condition checked segment by segment for every stage.
func bruteForce(sc scenario, allow resource.Tuple) bool {
	for i := 0; i < sc.p.Len(); i++ {
		from, to := sc.start+sc.p.Offset(i), sc.start+sc.p.Offset(i+1)
		d := sc.p.Stage(i).Demand
		for _, seg := range sc.tl.AppendSegments(nil, from, to) {
			if seg.Free.Add(allow).AnyLess(d) {
				return false
			}
		}
	}
	return true
}

// allowTuple is ⌊rc × N⌋ on the compressible dimensions, computed exactly: rc is a
// whole number of percent.
func allowTuple(rc float64) resource.Tuple {
	pct := int64(math.Round(rc * 100))
	var t resource.Tuple
	for k, c := range propCapacity.Only(schema3.Compressible()) {
		t[k] = c * pct / 100
	}
	return t
}

func TestMatchProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	seeds := gen.Int64()

	props.Property("fine-grained fits, once reserved, keep non-compressible ≥ 0 and compressible ≥ −rc × N", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		r := match.FineGrained{}.Match(sc.server(sc.allow), sc.start, sc.p)
		if !r.Code.OK() {
			return true
		}
		limit := allowTuple(sc.rc)
		if limit.AnyLess(r.Allowance) {
			return false
		}
		if _, err := sc.tl.Reserve(sc.start, sc.p, r.Allowance); err != nil {
			return false
		}
		for _, seg := range sc.tl.AppendSegments(nil, sc.start, sc.start+sc.p.Duration()) {
			for k := 0; k < schema3.Len(); k++ {
				if schema3.Compressible().Has(k) && seg.Free[k] < -limit[k] {
					return false
				}
				if !schema3.Compressible().Has(k) && seg.Free[k] < 0 {
					return false
				}
			}
		}
		return true
	}, seeds))

	props.Property("a fit reports the window's least free amount, as the timeline does", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		want := sc.tl.MinFree(sc.start, stage.AddSat(sc.start, sc.p.Duration()))
		server := match.Server{ID: "s", Timeline: sc.tl, Allowance: sc.allow}
		for _, m := range []match.Matcher{match.FineGrained{}, match.CoarseGrained{}, match.RequestQuantity{}} {
			r := m.Match(server, sc.start, sc.p)
			if r.Code.OK() != r.MinFreeKnown || (r.Code.OK() && r.MinFree != want) {
				return false
			}
		}
		return true
	}, gen.Int64()))

	props.Property("fine-grained accepts whatever coarse-grained accepts", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		if (match.CoarseGrained{}).Match(sc.server(nil), sc.start, sc.p).Code != match.Fit {
			return true
		}
		plain := match.FineGrained{}.Match(sc.server(nil), sc.start, sc.p)
		squeezed := match.FineGrained{}.Match(sc.server(sc.allow), sc.start, sc.p)
		return plain.Code == match.Fit && squeezed.Code == match.Fit
	}, seeds))

	props.Property("fine-grained is Alg. 2 checked segment by segment", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		plain := match.FineGrained{}.Match(sc.server(nil), sc.start, sc.p)
		squeezed := match.FineGrained{}.Match(sc.server(sc.allow), sc.start, sc.p)
		// The same through the generic Allowance path (not the Fixed fast path).
		generic := match.FineGrained{}.Match(sc.server(&recorder{ratios: resource.Vector(sc.allow)}), sc.start, sc.p)
		return plain.Code.OK() == bruteForce(sc, resource.Tuple{}) &&
			squeezed.Code.OK() == bruteForce(sc, allowTuple(sc.rc)) &&
			generic.Code == squeezed.Code && generic.Allowance == squeezed.Allowance && generic.Compression == squeezed.Compression
	}, seeds))

	props.Property("a NoRoom result points at a real shortfall", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		for _, m := range []match.Matcher{match.FineGrained{}, match.CoarseGrained{}} {
			r := m.Match(sc.server(sc.allow), sc.start, sc.p)
			if r.Code != match.NoRoom {
				continue
			}
			stageFrom, stageTo := sc.start+sc.p.Offset(r.Stage), sc.start+sc.p.Offset(r.Stage+1)
			_, isFine := m.(match.FineGrained)
			if r.Shortfall() <= 0 || r.Demand != sc.p.Stage(r.Stage).Demand[r.Dim] ||
				!(r.From < r.Until) || sc.tl.FreeAt(r.From)[r.Dim] != r.Free || r.DimName != schema3.DimName(r.Dim) ||
				(isFine && (r.From < stageFrom || r.Until > stageTo)) {
				return false
			}
		}
		return true
	}, seeds))

	props.Property("compression stays below the allowance; Fit means none", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		r := match.FineGrained{}.Match(sc.server(sc.allow), sc.start, sc.p)
		if !r.Code.OK() {
			return r.Compression == resource.Vector{} && r.Allowance == resource.Tuple{}
		}
		maxRatio := 0.0
		for k, x := range r.Compression {
			if x < 0 || x >= sc.allow[k]+1e-12 {
				return false
			}
			maxRatio = math.Max(maxRatio, x)
		}
		for i := 0; i < r.Stages(); i++ {
			if r.StageRatio(i) < 0 || r.StageRatio(i) > maxRatio {
				return false
			}
		}
		d, err := match.ResultDuration(sc.p, r)
		if err != nil || d < sc.p.Duration() {
			return false
		}
		return (r.Code == match.Fit) == (r.Allowance.IsZero() && d == sc.p.Duration() && maxRatio == 0)
	}, seeds))

	props.Property("the deadline check agrees with the result's eq. 15 duration", prop.ForAll(func(seed int64) bool {
		sc := newScenario(seed)
		r := match.FineGrained{}.Match(sc.server(sc.allow), sc.start, sc.p)
		if !r.Code.OK() {
			return true
		}
		d, _ := match.ResultDuration(sc.p, r)
		finish := sc.start + d
		onTime := match.DeadlineCheck{}.CheckQoS(sc.server(sc.allow), sc.start, match.Work{ID: "t", Profile: sc.p, Deadline: finish}, r)
		late := match.DeadlineCheck{}.CheckQoS(sc.server(sc.allow), sc.start, match.Work{ID: "t", Profile: sc.p, Deadline: finish - 1}, r)
		if r.Code == match.Fit {
			return onTime == r && late == r // not evaluated without compression
		}
		return onTime == r && late.Code == match.DeadlineMissed && late.Finish == finish
	}, seeds))

	props.TestingRun(t)
}

func TestScoreProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	tuples := gen.SliceOfN(9, gen.Int64Range(-1<<20, 1<<20)).Map(func(s []int64) [3]resource.Tuple {
		var ts [3]resource.Tuple
		for i := 0; i < 3; i++ {
			ts[i] = resource.Tuple{s[3*i], s[3*i+1], s[3*i+2]}
		}
		ts[0] = ts[0].Max(resource.Tuple{}) // capacities are not negative
		return ts
	})
	scorers := []match.Scorer{match.LeastAllocated{}, match.MostAllocated{}, match.BestFit{}, match.BalancedAllocation{}, match.Alignment{}}
	kubeDefault, err := match.NewWeighted([]match.Scorer{match.LeastAllocated{}, match.BalancedAllocation{}}, []float64{1, 3})
	if err != nil {
		t.Fatal(err)
	}
	scorers = append(scorers, kubeDefault)
	props.Property("scores lie in [0, 1]", prop.ForAll(func(ts [3]resource.Tuple) bool {
		for _, s := range scorers {
			if x := s.Score(ts[0], ts[1], ts[2]); !(x >= 0 && x <= 1) {
				return false
			}
		}
		return true
	}, tuples))
	props.Property("least and most allocated are complements", prop.ForAll(func(ts [3]resource.Tuple) bool {
		la := match.LeastAllocated{}.Score(ts[0], ts[1], ts[2])
		ma := match.MostAllocated{}.Score(ts[0], ts[1], ts[2])
		if ts[0].IsZero() {
			return la == 0 && ma == 0
		}
		return math.Abs(la+ma-1) < 1e-12
	}, tuples))
	props.Property("a weighted scorer is the weighted mean of its parts", prop.ForAll(func(ts [3]resource.Tuple) bool {
		la := match.LeastAllocated{}.Score(ts[0], ts[1], ts[2])
		ba := match.BalancedAllocation{}.Score(ts[0], ts[1], ts[2])
		return math.Abs(kubeDefault.Score(ts[0], ts[1], ts[2])-(la+3*ba)/4) < 1e-12
	}, tuples))
	props.TestingRun(t)
}

func TestQoSProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	vectors := gen.SliceOfN(match.QoSLen, gen.Float64Range(match.QoSMin, match.QoSMax)).Map(func(s []float64) match.QoSVector {
		var v match.QoSVector
		copy(v[:], s)
		return v
	})
	weights := gen.SliceOfN(match.QoSLen, gen.Float64Range(0, 1)).SuchThat(func(s []float64) bool {
		sum := 0.0
		for _, x := range s {
			sum += x
		}
		return sum > 0
	}).Map(func(s []float64) match.Weights {
		var w match.Weights
		sum := 0.0
		for _, x := range s {
			sum += x
		}
		for i, x := range s {
			w[i] = x / sum
		}
		return w
	})
	props.Property("final value is monotone in priority", prop.ForAll(func(req, res match.QoSVector, k match.Weights, met bool, p1, p2 int) bool {
		lo, hi := min(p1, p2), max(p1, p2)
		v := match.Value(req, res, k)
		return match.FinalValue(v, met, lo) <= match.FinalValue(v, met, hi)
	}, vectors, vectors, weights, gen.Bool(), gen.IntRange(0, 1000), gen.IntRange(0, 1000)))
	props.Property("normalised weights validate; a node matching the demand scores 1", prop.ForAll(func(req match.QoSVector, k match.Weights) bool {
		return k.Validate() == nil && math.Abs(match.Value(req, req, k)-1) < 1e-9
	}, vectors, weights))
	props.Property("value grows with supply", prop.ForAll(func(req, res match.QoSVector, k match.Weights, f int) bool {
		more := res
		more[f] = math.Min(match.QoSMax, res[f]+1)
		return match.Value(req, more, k) >= match.Value(req, res, k)
	}, vectors, vectors, weights, gen.IntRange(0, match.QoSLen-1)))
	props.Property("the ranks of a vector are a permutation, in descending order", prop.ForAll(func(v match.QoSVector) bool {
		seen := map[match.Feature]bool{}
		prev := math.Inf(1)
		for rank := 1; rank <= match.QoSLen; rank++ {
			f, err := v.Class(rank)
			if err != nil || seen[f] || v[f] > prev {
				return false
			}
			seen[f], prev = true, v[f]
		}
		return true
	}, vectors))
	props.Property("pick: the first non-empty sub-queue, never a job whose hard QoS fails, the best final value", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		vec := func() match.QoSVector {
			var v match.QoSVector
			for i := range v {
				v[i] = float64(1 + r.Intn(10)) // integers: ties between features too
			}
			return v
		}
		node := match.QoSNode{Res: vec(), Remaining: match.Hard{Memory: int64(r.Intn(20)), Disk: int64(r.Intn(20))}}
		jobs := make([]match.QoSJob, r.Intn(8))
		for i := range jobs {
			var k match.Weights
			k[r.Intn(match.QoSLen)] = 1
			if r.Intn(2) == 0 { // spread over two features, sometimes a tie
				a, b := r.Intn(match.QoSLen), r.Intn(match.QoSLen)
				k = match.Weights{}
				k[a] += 0.5
				k[b] += 0.5
			}
			jobs[i] = match.QoSJob{ID: fmt.Sprint(i), Req: vec(), Weights: k, Need: match.Hard{Memory: int64(r.Intn(20)), Disk: int64(r.Intn(20))}}
		}
		var a match.Aging
		for range r.Intn(3) { // some earlier refusals
			if _, err := a.Pick(node, jobs); err != nil {
				return err.Error()
			}
		}
		before := make([]int, len(jobs))
		for i, j := range jobs {
			before[i] = a.Priority(j.ID)
		}
		got, err := a.Pick(node, jobs)
		if err != nil {
			return err.Error()
		}
		// The first rank whose sub-queue is non-empty; none only without jobs.
		class, rank := match.Feature(-1), 0
		for rank = 1; rank <= match.QoSLen && class < 0; rank++ {
			f, _ := node.Res.Class(rank)
			for _, j := range jobs {
				if j.Weights.Class() == f {
					class = f
				}
			}
		}
		if class < 0 {
			if len(jobs) > 0 || got != -1 {
				return fmt.Sprintf("no sub-queue found among %d jobs, pick %d", len(jobs), got)
			}
			return ""
		}
		best, bestV := -1, 0.0
		for i, j := range jobs {
			_, met := match.MustValue(j.Need, node.Remaining)
			inSub := j.Weights.Class() == class
			if want := before[i] + map[bool]int{true: 1}[inSub && !met]; a.Priority(j.ID) != want {
				return fmt.Sprintf("job %d: priority %d, want %d", i, a.Priority(j.ID), want)
			}
			if !inSub || !met {
				continue
			}
			if v := match.FinalValue(match.Value(j.Req, node.Res, j.Weights), true, before[i]); best < 0 || v > bestV {
				best, bestV = i, v
			}
		}
		if got >= 0 {
			if _, met := match.MustValue(jobs[got].Need, node.Remaining); !met {
				return fmt.Sprintf("picked job %d, whose hard QoS fails", got)
			}
		}
		if got != best {
			return fmt.Sprintf("picked %d, want %d (class %v, rank %d)", got, best, class, rank-1)
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.Property("aging: one bump per refusal", prop.ForAll(func(res match.QoSVector, k match.Weights, need, rem int64) bool {
		var a match.Aging
		j := match.QoSJob{ID: "j", Req: res, Weights: k, Need: match.Hard{Memory: need, Disk: 1}}
		n := match.QoSNode{Res: res, Remaining: match.Hard{Memory: rem, Disk: 2}}
		_, met, err := a.Evaluate(j, n)
		_, want := match.MustValue(j.Need, n.Remaining)
		return err == nil && met == want && (a.Priority("j") == 1) == !met
	}, vectors, weights, gen.Int64Range(0, 100), gen.Int64Range(0, 100)))
	props.TestingRun(t)
}

// TestMatchToProperties checks that writing a verdict in place (MatchTo) leaves
// exactly what Match returns, whatever the result held before: a verdict of another
// scenario, fit or not, with or without an allowance.
func TestMatchToProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	type matchTo interface {
		match.Matcher
		MatchTo(r *match.Result, s match.Server, start time.Duration, p stage.Profile)
	}
	props.Property("MatchTo writes what Match returns, over any earlier verdict", prop.ForAll(func(seed, other int64, allowed bool) bool {
		sc, prev := newScenario(seed), newScenario(other)
		var allow match.Allowance
		if allowed {
			allow = sc.allow
		}
		for _, m := range []matchTo{match.FineGrained{}, match.CoarseGrained{}, match.RequestQuantity{}} {
			r := m.Match(prev.server(prev.allow), prev.start, prev.p)
			r.Cause = fmt.Errorf("left over")
			want := m.Match(sc.server(allow), sc.start, sc.p)
			m.MatchTo(&r, sc.server(allow), sc.start, sc.p)
			if r != want {
				return false
			}
		}
		// An invalid input (an empty profile) is reported in place too.
		var r match.Result
		match.FineGrained{}.MatchTo(&r, sc.server(allow), sc.start, stage.Profile{})
		return r.Code == match.Invalid && r.Cause != nil && r.Stage == -1 && r.Dim == -1 && r.MinFree == (resource.Tuple{})
	}, gen.Int64(), gen.Int64(), gen.Bool()))
	props.TestingRun(t)
}
