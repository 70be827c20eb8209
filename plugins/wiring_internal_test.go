package plugins

import (
	"testing"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// wiring is the state and the plugins the reference scheduler wires for a pull cycle
// — prediction, queue admission, the node gates, the GPU, stage and QoS filters, the
// node score, gangs and the idle gate — over nodes, for the worlds that compare the
// heartbeats of two copies fed the same events (memoWorld, tetrisWorld). The pass and
// the JobFilter plugins are the world's own.
type wiring struct {
	state   *cluster.State
	pred    *Prediction
	classes *DemandClasses     // DemandClasses on pred, for the world to add
	plugins []framework.Plugin // in the reference scheduler's order
}

// newWiring wires it: est (nil for none) predicts, scorer scores the nodes, opts
// configure the state.
func newWiring(t *testing.T, schema *resource.Schema, nodes []cluster.NodeSpec, est predict.Estimator, scorer match.Scorer, opts ...cluster.Option) wiring {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := cluster.New(schema, opts...)
	must(err)
	conf, err := predict.NewConformityLog(5)
	must(err)
	adj, err := policy.NewAdjuster(schema, conf)
	must(err)
	comp, err := policy.NewCompression(schema, adj)
	must(err)
	for _, n := range nodes {
		must(st.AddNode(n))
		must(adj.AddServer(n.ID, n.Capacity))
	}
	pred, err := NewPrediction(schema, est, true)
	must(err)
	gate, err := NewModeGate(adj)
	must(err)
	matcher, err := NewStageMatch(adj, comp, nil)
	must(err)
	qos, err := NewQoS(comp, nil)
	must(err)
	score, err := NewNodeScore(scorer, 1)
	must(err)
	gang, err := NewGang(3 * time.Second)
	must(err)
	idle, err := NewIdleGate(adj)
	must(err)
	classes, err := NewDemandClasses(pred)
	must(err)
	return wiring{state: st, pred: pred, classes: classes,
		plugins: []framework.Plugin{pred, QueueAdmission{}, gate, GPUFit{}, matcher, qos, score, gang, idle}}
}
