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
// An estimate without an end (its last stage lasts until stage.Forever: learned from
// tasks of the key still running, predict.SimilarTask.ObserveRunning) knows what they
// used so far, not what they will reach: in its open stage it holds at least the
// task's request on the non-compressible dimensions, and what the tasks used on the
// others.
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
// What the demand step derives from a key's estimate is kept per key (demandCache):
// the estimator's reference to the key (predict.Ref, when the estimator hands them
// out), so that asking for the estimate looks nothing up by key, and the hold built
// from the latest estimate while the estimator returns that same estimate
// (stage.Profile.Same), so that a placement by a learned profile builds no profile. The
// estimator is still asked every time (its answer, and its record of use, are as
// without the cache), and a new estimate — the estimator learned something under the
// key — is a new profile, whose hold is built afresh.
type Prediction struct {
	schema    *resource.Schema
	estimator predict.Estimator // nil: no prediction
	holdTail  bool
	escalate  bool // SetEscalation

	keys demandCache
}

// demandCache maps similarity keys to what the demand step keeps of each (keyDemand).
// It holds at most maxKeyDemands keys (past that it starts afresh), and is safe for
// concurrent use: probes (Filter, Score) ask for demands concurrently.
type demandCache struct {
	mu sync.RWMutex
	m  map[predict.Key]*keyDemand
}

// keyDemand is what the demand step keeps of one key: the estimator's reference to
// it (when hasRef) and the hold built from its estimate est (when est has stages). mu
// guards it: a predict.Ref is not safe for concurrent use.
type keyDemand struct {
	mu        sync.Mutex
	ref       predict.Ref
	hasRef    bool
	est, hold stage.Profile
	req       resource.Tuple // the request hold was raised to, for an estimate without an end
}

// maxKeyDemands bounds the keys a demandCache keeps: about 150 bytes and one profile
// each.
const maxKeyDemands = 1 << 14

// get returns what the cache keeps of key, nil for nothing.
func (c *demandCache) get(key predict.Key) *keyDemand {
	c.mu.RLock()
	kd := c.m[key]
	c.mu.RUnlock()
	return kd
}

// add keeps kd for key, unless the cache keeps something of key already (added
// concurrently): it returns what the cache keeps.
func (c *demandCache) add(key predict.Key, kd *keyDemand) *keyDemand {
	c.mu.Lock()
	defer c.mu.Unlock()
	if had := c.m[key]; had != nil {
		return had
	}
	if c.m == nil || len(c.m) >= maxKeyDemands {
		c.m = make(map[predict.Key]*keyDemand)
	}
	c.m[key] = kd
	return kd
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
func (p *Prediction) Demand(c *framework.Cycle, t *cluster.TaskInfo) framework.TaskDemand {
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
func (p *Prediction) plan(st *cluster.State, t *cluster.TaskInfo) framework.TaskDemand {
	if d := t.Declared(); d.Len() > 0 {
		return p.predicted(d)
	}
	if key := t.Key(); p.predicts(key) {
		kd := p.keyDemand(key)
		kd.mu.Lock()
		d, ok := p.estimated(st, kd, key, t.Request())
		kd.mu.Unlock()
		if ok {
			return d
		}
	}
	r := t.RequestProfile(p.schema)
	return framework.TaskDemand{Plan: r, Hold: r}
}

// keyDemand returns what the demand step keeps of key, a key some estimate may be
// for (predicts), kept afresh when it keeps nothing yet.
func (p *Prediction) keyDemand(key predict.Key) *keyDemand {
	if kd := p.keys.get(key); kd != nil {
		return kd
	}
	kd := &keyDemand{}
	kd.ref, kd.hasRef = p.refer(key)
	return p.keys.add(key, kd)
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
func (p *Prediction) raise(st *cluster.State, t *cluster.TaskInfo, d framework.TaskDemand, failures int) framework.TaskDemand {
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
	return framework.TaskDemand{Plan: prof, Hold: prof}
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

// estimated is the demand of a task of key requesting req, which kd keeps (locked by
// the caller), when Estimate has a prediction for key: predicted, with the hold kd
// keeps when it was built from this very estimate (and, for an estimate without an
// end, this request). The estimate is read through kd's reference to key when the
// estimator hands them out, which answers, and records the use, as Estimate.
func (p *Prediction) estimated(st *cluster.State, kd *keyDemand, key predict.Key, req resource.Tuple) (framework.TaskDemand, bool) {
	var prof stage.Profile
	var ok bool
	if kd.hasRef {
		prof, ok = p.estimateRef(st, &kd.ref)
	} else {
		prof, ok = p.Estimate(st, key)
	}
	switch {
	case !ok:
		return framework.TaskDemand{}, false
	case prof.Duration() == stage.Forever:
		if !kd.est.Same(prof) || kd.req != req {
			kd.est, kd.hold, kd.req = prof, p.openEnded(prof, req), req
		}
		return framework.TaskDemand{Plan: kd.hold, Hold: kd.hold, Predicted: true}, true
	case !p.holdTail:
		return framework.TaskDemand{Plan: prof, Hold: prof, Predicted: true}, true
	case kd.est.Same(prof):
		return framework.TaskDemand{Plan: prof, Hold: kd.hold, Predicted: true}, true
	}
	d := p.predicted(prof)
	kd.est, kd.hold = prof, d.Hold
	return d, true
}

// openEnded is the plan of a task requesting req on an estimate prof without an end:
// prof with its last stage raised to req on the non-compressible dimensions (prof
// itself when it holds that much already).
func (p *Prediction) openEnded(prof stage.Profile, req resource.Tuple) stage.Profile {
	last := prof.Stage(prof.Len() - 1).Demand
	raised := last.Max(req.Only(p.schema.NonCompressible()))
	if raised == last {
		return prof
	}
	stages := prof.Stages()
	stages[len(stages)-1].Demand = raised
	q, err := stage.NewProfile(prof.Schema(), stages...)
	if err != nil { // a request of another schema: keep the estimate
		return prof
	}
	return q
}

// predicted is the demand of a task whose plan is prof (declared or estimated): prof,
// held as the Prediction doc comment says.
func (p *Prediction) predicted(prof stage.Profile) framework.TaskDemand {
	d := framework.TaskDemand{Plan: prof, Hold: prof, Predicted: true}
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
