package plugins

import (
	"fmt"
	"math"
	"sync"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Prediction is the demand step (framework.DemandPlugin): a task's declared profile,
// else the estimator's prediction for its similarity key (docs/methods.md §2) when some
// node could hold it, else its request held for its duration (request quantity,
// Alg. 1 line 8).
//
// With hold-until-finished (the default), a predicted or declared profile also keeps
// its last stage's non-compressible demand (memory) reserved from the profile's end
// until the task finishes, so that a task outliving its prediction keeps its memory.
// Off is the paper's literal behaviour (the reservation ends with the prediction).
//
// A task that failed (cluster.TaskInfo.Failures: killed for running out of memory,
// most often because it was placed beside others on a prediction or a request below
// what it really uses) is not trusted to its plan again: it holds, for its request's
// duration, the larger of its request and its plan's peak, its non-compressible
// demands raised by half for each failure after the first (as Kubernetes' vertical
// pod autoscaler raises a container's memory after an out-of-memory kill), as far as
// some node offers once its tasks are gone (cluster.State.Offers: its capacity less
// other applications' load). A gang's members (cluster.JobSpec.MinMember above 1)
// are not raised beyond their request: the gang must fit together. Without it a task whose prediction is
// too small is killed, placed on the same prediction and killed again for ever, and
// the tasks placed beside it with it.
//
// The hold built from a key's estimate is cached per key (holdCache) while the
// estimator returns the same estimate for it (stage.Profile.Same), so that a placement
// by a learned profile builds no profile: the estimator is still asked every time (its
// answer, and its record of use, are as without the cache), and a new estimate — the
// estimator learned something under the key — is a new profile, whose hold is built
// afresh.
type Prediction struct {
	schema    *resource.Schema
	estimator predict.Estimator // nil: no prediction
	holdTail  bool
	escalate  bool // SetEscalation

	holds holdCache
}

// holdCache maps similarity keys to the hold profile built from the key's latest
// estimate, with that estimate: an entry serves while the estimator returns the Same
// estimate, and is replaced when it returns another. It holds at most maxHolds keys
// (past that it starts afresh), and is safe for concurrent use: probes (Filter,
// Score) ask for demands concurrently.
type holdCache struct {
	mu sync.RWMutex
	m  map[predict.Key]heldEstimate
}

// heldEstimate is a holdCache entry: the hold built from estimate est.
type heldEstimate struct{ est, hold stage.Profile }

// maxHolds bounds the keys a holdCache keeps: about 64 bytes and one profile each.
const maxHolds = 1 << 14

// get returns the hold cached for key when it was built from est.
func (h *holdCache) get(key predict.Key, est stage.Profile) (stage.Profile, bool) {
	h.mu.RLock()
	e, ok := h.m[key]
	h.mu.RUnlock()
	if !ok || !e.est.Same(est) {
		return stage.Profile{}, false
	}
	return e.hold, true
}

// put caches hold, built from estimate est, for key.
func (h *holdCache) put(key predict.Key, est, hold stage.Profile) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxHolds {
		h.m = make(map[predict.Key]heldEstimate)
	}
	h.m[key] = heldEstimate{est: est, hold: hold}
}

// NewPrediction returns the demand step for schema predicting with est; a nil est
// predicts nothing (every undeclared task is placed by its request, as YARN's
// schedulers do).
func NewPrediction(schema *resource.Schema, est predict.Estimator, holdUntilFinished bool) (*Prediction, error) {
	if schema == nil {
		return nil, fmt.Errorf("plugins: prediction: nil schema: %w", resource.ErrSchemaMismatch)
	}
	return &Prediction{schema: schema, estimator: est, holdTail: holdUntilFinished, escalate: true}, nil
}

// SetEscalation sets whether a task that failed holds more than its plan (the
// Prediction doc comment); on by NewPrediction. Off places it on its plan again, as
// YARN and Kubernetes (without a vertical autoscaler) re-run a killed container with
// the same request.
func (p *Prediction) SetEscalation(on bool) { p.escalate = on }

// Name implements framework.Plugin.
func (*Prediction) Name() string { return "Prediction" }

// Demand implements framework.DemandPlugin. Called without a cycle (c nil), it does
// not check that some node could hold the estimate.
func (p *Prediction) Demand(c *framework.Cycle, t *cluster.TaskInfo) framework.Demand {
	var st *cluster.State
	if c != nil {
		st = c.State()
	}
	d := p.plan(st, t)
	if f := t.Failures(); f > 0 && p.escalate {
		return p.raise(st, t, d, f)
	}
	return d
}

// plan is task t's demand before its failures count.
func (p *Prediction) plan(st *cluster.State, t *cluster.TaskInfo) framework.Demand {
	if d := t.Declared(); d.Len() > 0 {
		return p.predicted(d)
	}
	if prof, ok := p.Estimate(st, t.Key()); ok {
		return p.estimated(t.Key(), prof)
	}
	r := t.RequestProfile(p.schema)
	return framework.Demand{Plan: r, Hold: r}
}

// escalateFactor raises a failed task's non-compressible demands for each failure
// after the first; maxEscalations bounds the steps tried.
const (
	escalateFactor = 1.5
	maxEscalations = 40
)

// raise is the demand of task t after failures failed runs (Prediction's doc
// comment), d its plan: constant, for the request's duration, at least the request and
// d's hold peak on every dimension (d's hold peak alone when no node of st offers the
// request), the non-compressible ones times 1.5^(failures−1) or the largest power
// below that some node of st offers (a nil st offers anything).
func (p *Prediction) raise(st *cluster.State, t *cluster.TaskInfo, d framework.Demand, failures int) framework.Demand {
	r := t.RequestProfile(p.schema)
	base := d.Hold.Peak().Max(t.Request())
	if st != nil && !st.Offers(base) {
		base = d.Hold.Peak() // a request no node offers is no floor (a declared profile is)
	}
	nc := p.schema.NonCompressible()
	steps := min(failures-1, maxEscalations)
	if st != nil {
		if j, ok := st.Job(t.Job()); ok && j.Spec().MinMember > 1 {
			steps = 0 // a gang's members must fit together: they keep to their requests
		}
	}
	scaled := func(step int) resource.Tuple {
		g := math.Pow(escalateFactor, float64(step))
		demand := base
		for k := 0; k < p.schema.Len(); k++ {
			if nc.Has(k) {
				demand[k] = int64(min(float64(base[k])*g, math.MaxInt64/2))
			}
		}
		return demand
	}
	if st != nil && steps > 0 {
		// The largest step some node offers, by binary search: a larger step asks
		// more, so fewer nodes offer it. O(log steps) walks of the nodes.
		lo, hi := 0, steps
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if st.Offers(scaled(mid)) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		steps = lo
	}
	prof, err := stage.Constant(p.schema, scaled(steps), r.Duration())
	if err != nil {
		return d
	}
	return framework.Demand{Plan: prof, Hold: prof}
}

// Estimate is the prediction for key: false for a zero key, without an estimator, or
// when the estimator has none (or one of another schema). It is false too when no node
// of st could hold the prediction's peak even empty: an estimate no node can ever hold
// (learned from implausible observations, say) must not keep a task pending forever,
// so the task falls back to its request. A nil st skips that check.
func (p *Prediction) Estimate(st *cluster.State, key predict.Key) (stage.Profile, bool) {
	if !p.predicts(key) {
		return stage.Profile{}, false
	}
	prof, ok := p.estimator.Estimate(key)
	return p.usable(st, prof, ok)
}

// predicts reports whether Estimate may ever answer for key: there is an estimator,
// and the key names a logic. When not, a task of key is placed by its request (or its
// declared profile), whatever the estimator learns.
func (p *Prediction) predicts(key predict.Key) bool {
	return p.estimator != nil && key.Logic != ""
}

// usable is the estimator's answer prof, ok as Estimate passes it on: false when the
// estimator has none, or one of another schema or that no node of st (nil: any) could
// hold.
func (p *Prediction) usable(st *cluster.State, prof stage.Profile, ok bool) (stage.Profile, bool) {
	if !ok || !p.schema.Equal(prof.Schema()) || (st != nil && !st.Holds(prof.Peak())) {
		return stage.Profile{}, false
	}
	return prof, true
}

// refer returns a reference to key's estimate (predict.Ref) and true when the
// estimator hands them out (a predict.SimilarTask; false too for a key without logic):
// estimateRef with it answers as Estimate does for key.
func (p *Prediction) refer(key predict.Key) (predict.Ref, bool) {
	s, ok := p.estimator.(*predict.SimilarTask)
	if !ok || !p.predicts(key) {
		return predict.Ref{}, false
	}
	return s.Ref(key), true
}

// estimateRef is Estimate for the key ref refers to (refer).
func (p *Prediction) estimateRef(st *cluster.State, ref *predict.Ref) (stage.Profile, bool) {
	prof, ok := ref.Estimate()
	return p.usable(st, prof, ok)
}

// estimated is the demand of a task of key whose estimate is prof: predicted, with the
// hold taken from the cache when it was built from this very estimate.
func (p *Prediction) estimated(key predict.Key, prof stage.Profile) framework.Demand {
	if !p.holdTail || prof.Duration() == stage.Forever {
		return framework.Demand{Plan: prof, Hold: prof, Predicted: true}
	}
	if hold, ok := p.holds.get(key, prof); ok {
		return framework.Demand{Plan: prof, Hold: hold, Predicted: true}
	}
	d := p.predicted(prof)
	p.holds.put(key, prof, d.Hold)
	return d
}

// predicted is the demand of a task whose plan is prof (declared or estimated): prof,
// held as the Prediction doc comment says.
func (p *Prediction) predicted(prof stage.Profile) framework.Demand {
	d := framework.Demand{Plan: prof, Hold: prof, Predicted: true}
	if !p.holdTail || prof.Duration() == stage.Forever {
		return d
	}
	tail := prof.Stage(prof.Len() - 1).Demand.Only(p.schema.NonCompressible())
	if tail.IsZero() {
		return d
	}
	stages := append(prof.Stages(), stage.Stage{Duration: stage.Forever, Demand: tail})
	if q, err := stage.NewProfile(prof.Schema(), stages...); err == nil {
		d.Hold = q
	}
	return d
}
