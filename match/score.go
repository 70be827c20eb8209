package match

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Scorer ranks the servers a task fits, for push-mode placement (a task is pending:
// pick a node). Score returns how good it is to place a task demanding demand on a
// server of capacity whose free amount is free; higher is better. Implementations look
// at the dimensions with a positive capacity, read shares clamped to [0, 1], and return
// a number in [0, 1]. ChooseServer calls it with the server's minimum free amount over
// the task's window (Timeline.MinFree) and the task's peak demand.
type Scorer interface {
	Score(capacity, free, demand resource.Tuple) float64
}

// LeastAllocated prefers the server left with the most free resources: the mean over
// dimensions of (free − demand)/capacity. It spreads load (Kubernetes'
// LeastAllocated). Dims limits the dimensions considered; zero means all.
type LeastAllocated struct{ Dims resource.Mask }

// Score implements Scorer.
func (s LeastAllocated) Score(capacity, free, demand resource.Tuple) float64 {
	sum, n := 0.0, 0
	for k := range capacity {
		if use(s.Dims, capacity, k) {
			sum += 1 - after(capacity, free, demand, k)
			n++
		}
	}
	return mean(sum, n)
}

// MostAllocated prefers the server left with the least free resources: the mean over
// dimensions of the utilisation after placement, (capacity − free + demand)/capacity.
// It packs load (Kubernetes' MostAllocated). Dims limits the dimensions considered;
// zero means all.
type MostAllocated struct{ Dims resource.Mask }

// Score implements Scorer.
func (s MostAllocated) Score(capacity, free, demand resource.Tuple) float64 {
	sum, n := 0.0, 0
	for k := range capacity {
		if use(s.Dims, capacity, k) {
			sum += after(capacity, free, demand, k)
			n++
		}
	}
	return mean(sum, n)
}

// BestFit prefers the server where the task fits most tightly on the resource it needs
// most: 1 − (free − demand)/capacity on the task's dominant dimension (its largest
// share of this server's capacity; the first in slot order on ties). Classic best-fit
// bin packing, read in several dimensions. Dims limits the dimensions considered; zero
// means all.
type BestFit struct{ Dims resource.Mask }

// Score implements Scorer.
func (s BestFit) Score(capacity, free, demand resource.Tuple) float64 {
	dom, best := -1, -1.0
	for k := range capacity {
		if use(s.Dims, capacity, k) {
			if sh := clamp01(float64(demand[k]) / float64(capacity[k])); sh > best {
				dom, best = k, sh
			}
		}
	}
	if dom < 0 {
		return 0
	}
	return after(capacity, free, demand, dom)
}

// BalancedAllocation prefers the server whose utilisation after placement is most even
// across dimensions: 1 − 2σ, where σ is the standard deviation of the utilisations
// (at most 1/2, so the score lies in [0, 1]). It ranks servers as Kubernetes'
// NodeResourcesBalancedAllocation (1 − σ) does; weigh it half as much as kube does
// when combining it with other scorers. It avoids stranding one resource while
// another is exhausted. Dims limits the dimensions considered; zero means all.
type BalancedAllocation struct{ Dims resource.Mask }

// Score implements Scorer.
func (s BalancedAllocation) Score(capacity, free, demand resource.Tuple) float64 {
	var u [resource.MaxDims]float64
	sum, n := 0.0, 0
	for k := range capacity {
		if use(s.Dims, capacity, k) {
			u[n] = after(capacity, free, demand, k)
			sum += u[n]
			n++
		}
	}
	if n == 0 {
		return 0
	}
	m := sum / float64(n)
	v := 0.0
	for _, x := range u[:n] {
		v += (x - m) * (x - m)
	}
	// Utilisations lie in [0, 1], so the standard deviation is at most 1/2.
	return 1 - 2*math.Sqrt(v/float64(n))
}

// Alignment is Tetris' packing score: the dot product of the task's demand and the
// server's free resources, both normalised by the server's capacity, divided by the
// number of dimensions so that it lies in [0, 1]. A server whose free resources have
// the shape of the demand scores high. Dims limits the dimensions considered; zero
// means all.
type Alignment struct{ Dims resource.Mask }

// Score implements Scorer.
func (s Alignment) Score(capacity, free, demand resource.Tuple) float64 {
	sum, n := 0.0, 0
	for k := range capacity {
		if use(s.Dims, capacity, k) {
			c := float64(capacity[k])
			sum += clamp01(float64(demand[k])/c) * clamp01(float64(free[k])/c)
			n++
		}
	}
	return mean(sum, n)
}

// Weighted combines scorers: the weighted mean of their scores, so that it lies in
// [0, 1] as each of them does. Kubernetes' default scoring, LeastAllocated and
// BalancedAllocation with weight 1 each, ranks nodes as weights 2 and 1 do here
// (BalancedAllocation is scaled to [0, 1]). Build one with NewWeighted.
type Weighted struct {
	scorers []Scorer
	weights []float64
	total   float64
}

// NewWeighted returns the weighted mean of scorers[i] with weights[i]. It fails
// (ErrNilArgument, ErrBadWeight) when there is no scorer, the lengths differ, a
// scorer is nil or a weight is not positive and finite.
func NewWeighted(scorers []Scorer, weights []float64) (Weighted, error) {
	if len(scorers) == 0 || len(scorers) != len(weights) {
		return Weighted{}, fmt.Errorf("match: weighted scorer: %d scorers, %d weights: %w", len(scorers), len(weights), ErrBadWeight)
	}
	w := Weighted{scorers: slices.Clone(scorers), weights: slices.Clone(weights)}
	for i, sc := range scorers {
		if sc == nil {
			return Weighted{}, fmt.Errorf("match: weighted scorer %d: %w", i, ErrNilArgument)
		}
		if x := weights[i]; !(x > 0) || math.IsInf(x, 1) {
			return Weighted{}, fmt.Errorf("match: weighted scorer %d: weight %v: %w", i, x, ErrBadWeight)
		}
		w.total += weights[i]
	}
	if math.IsInf(w.total, 1) {
		return Weighted{}, fmt.Errorf("match: weighted scorer: weights sum to +Inf: %w", ErrBadWeight)
	}
	return w, nil
}

// Score implements Scorer. The zero Weighted scores 0.
func (w Weighted) Score(capacity, free, demand resource.Tuple) float64 {
	if w.total == 0 {
		return 0
	}
	sum := 0.0
	for i, sc := range w.scorers {
		sum += w.weights[i] * sc.Score(capacity, free, demand)
	}
	return sum / w.total
}

func use(m resource.Mask, capacity resource.Tuple, k int) bool {
	return capacity[k] > 0 && (m == 0 || m.Has(k))
}

// after is the utilisation of dimension k after placement, clamped to [0, 1].
func after(capacity, free, demand resource.Tuple, k int) float64 {
	c := float64(capacity[k])
	return clamp01((c - float64(free[k]) + float64(demand[k])) / c)
}

func clamp01(x float64) float64 {
	switch {
	case !(x > 0):
		return 0
	case x > 1:
		return 1
	}
	return x
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Placement is the outcome of ChooseServer.
type Placement struct {
	// Index is the chosen server's index in the slice given to ChooseServer, -1 when
	// the task fits none.
	Index int
	// Server is the chosen server's ID.
	Server string
	// Score is the chosen server's score.
	Score float64
	// Result is the chosen server's match result; when the task fits none, the result
	// of the server named by Closest (explaining why it did not fit there), or an
	// Invalid result wrapping ErrNoServers when there are no servers and
	// ErrNilArgument for a nil matcher or scorer.
	Result Result
	// Closest names, when the task fits none, the server that came closest: of those
	// short of room, the one whose shortfall is the smallest share of its capacity
	// (Result.ShortfallShare), ties to the earlier; with none short of room, the first
	// server.
	Closest string
}

var errPlaceNone = fmt.Errorf("match: choose server: %w", ErrNoServers)

// ScoreServer is how a task demanding p from start scores on server s, where it
// matched with result r: sc applied to the server's capacity, its least free amount
// over the task's window (Timeline.MinFree from start to start + p's duration: taken
// from r when the matcher saw it, walked otherwise) and p's peak demand. A NaN score
// is −∞, so it ranks last. ChooseServer and the reference Scheduler's node scoring
// both score this way. A nil scorer or a server without a timeline scores −∞ too: as
// ChooseServer places nothing with them (its Result wraps ErrNilArgument, the
// matchers' ErrNilTimeline), no server scored so is ever preferred.
func ScoreServer(sc Scorer, s Server, start time.Duration, p stage.Profile, r Result) float64 {
	tl := s.Timeline
	if sc == nil || tl == nil {
		return math.Inf(-1)
	}
	score := sc.Score(tl.Capacity(), WindowFree(tl, start, p, r), p.Peak())
	if score != score {
		return math.Inf(-1)
	}
	return score
}

// WindowFree is the least free amount of timeline tl over the window of profile p
// from start: the one match result r reports (Result.MinFree), or, when the matcher
// did not see it, the timeline's (stage.Timeline.MinFree). A nil timeline has nothing
// free: without a result that reports it, its window's least free amount is the zero
// Tuple.
func WindowFree(tl *stage.Timeline, start time.Duration, p stage.Profile, r Result) resource.Tuple {
	if r.MinFreeKnown {
		return r.MinFree
	}
	if tl == nil {
		return resource.Tuple{}
	}
	return tl.MinFree(start, stage.AddSat(start, p.Duration()))
}

// ChooseServer is push-mode placement: it matches task t, starting at start, against
// every server with m, applies the QoS check q (nil for none) to those it fits, and
// returns the fitting server sc scores highest. Ties go to the smaller server ID, then
// the earlier index, so the choice is deterministic. A score that is NaN ranks last.
// A nil matcher or scorer places nothing: the Result is Invalid, wrapping
// ErrNilArgument.
func ChooseServer(servers []Server, start time.Duration, t Work, m Matcher, q QoSCheck, sc Scorer) Placement {
	best := Placement{Index: -1, Score: math.Inf(-1), Result: invalid(errPlaceNone)}
	switch {
	case m == nil:
		best.Result = invalid(fieldErr("matcher", nil, ErrNilArgument))
		return best
	case sc == nil:
		best.Result = invalid(fieldErr("scorer", nil, ErrNilArgument))
		return best
	}
	closest := math.Inf(1)
	for i := range servers {
		s := servers[i]
		r := m.Match(s, start, t.Profile)
		if r.Code.OK() && q != nil {
			r = q.CheckQoS(s, start, t, r)
		}
		if !r.Code.OK() {
			if share := r.ShortfallShare(serverCapacity(s)); best.Index < 0 && (i == 0 || share < closest) {
				best.Result, best.Closest, closest = r, s.ID, share
			}
			continue
		}
		score := ScoreServer(sc, s, start, t.Profile, r)
		if best.Index < 0 || score > best.Score || (score == best.Score && s.ID < best.Server) {
			best = Placement{Index: i, Server: s.ID, Score: score, Result: r}
		}
	}
	return best
}

// serverCapacity is s's capacity, or the zero Tuple without a timeline.
func serverCapacity(s Server) resource.Tuple {
	if s.Timeline == nil {
		return resource.Tuple{}
	}
	return s.Timeline.Capacity()
}
