package plugins

import (
	"fmt"

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
type Prediction struct {
	schema    *resource.Schema
	estimator predict.Estimator // nil: no prediction
	holdTail  bool
}

// NewPrediction returns the demand step for schema predicting with est; a nil est
// predicts nothing (every undeclared task is placed by its request, as YARN's
// schedulers do).
func NewPrediction(schema *resource.Schema, est predict.Estimator, holdUntilFinished bool) (*Prediction, error) {
	if schema == nil {
		return nil, fmt.Errorf("plugins: prediction: nil schema: %w", resource.ErrSchemaMismatch)
	}
	return &Prediction{schema: schema, estimator: est, holdTail: holdUntilFinished}, nil
}

// Name implements framework.Plugin.
func (*Prediction) Name() string { return "Prediction" }

// Demand implements framework.DemandPlugin. Called without a cycle (c nil), it does
// not check that some node could hold the estimate.
func (p *Prediction) Demand(c *framework.Cycle, t *cluster.TaskInfo) framework.Demand {
	if d := t.Declared(); d.Len() > 0 {
		return p.predicted(d)
	}
	var st *cluster.State
	if c != nil {
		st = c.State()
	}
	if prof, ok := p.Estimate(st, t.Key()); ok {
		return p.predicted(prof)
	}
	r := t.RequestProfile(p.schema)
	return framework.Demand{Plan: r, Hold: r}
}

// Estimate is the prediction for key: false for a zero key, without an estimator, or
// when the estimator has none (or one of another schema). It is false too when no node
// of st could hold the prediction's peak even empty: an estimate no node can ever hold
// (learned from implausible observations, say) must not keep a task pending forever,
// so the task falls back to its request. A nil st skips that check.
func (p *Prediction) Estimate(st *cluster.State, key predict.Key) (stage.Profile, bool) {
	if p.estimator == nil || key.Logic == "" {
		return stage.Profile{}, false
	}
	prof, ok := p.estimator.Estimate(key)
	if !ok || !p.schema.Equal(prof.Schema()) || (st != nil && !st.Holds(prof.Peak())) {
		return stage.Profile{}, false
	}
	return prof, true
}

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
