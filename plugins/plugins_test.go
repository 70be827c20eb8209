package plugins_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Every constructor refuses what it cannot work with, with an error that says so.
func TestConstructorsRefuseBadInput(t *testing.T) {
	schema := resource.Standard()
	conf, err := predict.NewConformityLog(5)
	require.NoError(t, err)
	adj, err := policy.NewAdjuster(schema, conf)
	require.NoError(t, err)
	comp, err := policy.NewCompression(schema, adj)
	require.NoError(t, err)
	pred, err := plugins.NewPrediction(schema, nil, true)
	require.NoError(t, err)

	for name, build := range map[string]func() error{
		"prediction nil schema":  func() error { _, err := plugins.NewPrediction(nil, nil, true); return err },
		"mode gate nil adjuster": func() error { _, err := plugins.NewModeGate(nil); return err },
		"stage match nil parts":  func() error { _, err := plugins.NewStageMatch(nil, comp, nil); return err },
		"stage match nil comp":   func() error { _, err := plugins.NewStageMatch(adj, nil, nil); return err },
		"stage match nil matcher": func() error {
			_, err := plugins.NewStageMatch(adj, comp, map[policy.NodeMode]match.Matcher{policy.ModeFineGrained: nil})
			return err
		},
		"stage match stop mode": func() error {
			_, err := plugins.NewStageMatch(adj, comp, map[policy.NodeMode]match.Matcher{policy.ModeStopAllocation: match.FineGrained{}})
			return err
		},
		"QoS nil compression":        func() error { _, err := plugins.NewQoS(nil, nil); return err },
		"node score nil scorer":      func() error { _, err := plugins.NewNodeScore(nil, 1); return err },
		"node score zero weight":     func() error { _, err := plugins.NewNodeScore(match.BestFit{}, 0); return err },
		"node score NaN weight":      func() error { _, err := plugins.NewNodeScore(match.BestFit{}, math.NaN()); return err },
		"node score infinite weight": func() error { _, err := plugins.NewNodeScore(match.BestFit{}, math.Inf(1)); return err },
		"future start nil parts":     func() error { _, err := plugins.NewFutureStart(nil, comp, 0); return err },
		"future start negative wait": func() error { _, err := plugins.NewFutureStart(adj, comp, -1); return err },
		"preemption nothing on":      func() error { _, err := plugins.NewPreemption(plugins.PreemptionConfig{}); return err },
		"preemption negative delay": func() error {
			_, err := plugins.NewPreemption(plugins.PreemptionConfig{Guarantees: true, ReclaimDelay: -1})
			return err
		},
		"preemption negative per heartbeat": func() error {
			_, err := plugins.NewPreemption(plugins.PreemptionConfig{Priority: true, PerHeartbeat: -1})
			return err
		},
		"booking nil":            func() error { _, err := plugins.NewBooking(nil); return err },
		"gang zero timeout":      func() error { _, err := plugins.NewGang(0); return err },
		"gang negative timeout":  func() error { _, err := plugins.NewGang(-time.Second); return err },
		"idle gate nil adjuster": func() error { _, err := plugins.NewIdleGate(nil); return err },
		"demand classes nil":     func() error { _, err := plugins.NewDemandClasses(nil); return err },
		"pre-release nil placer": func() error { _, err := plugins.NewPreReleaseList(nil); return err },
		"speculation nil":        func() error { _, err := plugins.NewSpeculation(nil); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := build()
			require.Error(t, err)
			assert.True(t, errors.Is(err, cluster.ErrInvalid) || errors.Is(err, resource.ErrSchemaMismatch), "%v", err)
		})
	}
	_, err = plugins.NewDemandClasses(pred)
	assert.NoError(t, err)
}

// The demand step: a declared profile wins over an estimate, an estimate over the
// request; hold-until-finished adds the last stage's memory for ever.
func TestPredictionDemand(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	est, err := predict.NewSimilarTask(schema)
	require.NoError(t, err)
	key := predict.Key{Logic: "k", InputSize: 1}
	learned := stage.MustProfile(schema, stage.Stage{Duration: 10e9, Demand: schema.MustTuple(500, 1<<30)})
	require.NoError(t, est.Observe(key, predict.Observation{Profile: learned}))
	st, err := cluster.New(schema)
	require.NoError(t, err)
	require.NoError(t, st.AddJob(cluster.JobSpec{ID: "j"}))
	declared := stage.MustProfile(schema, stage.Stage{Duration: 5e9, Demand: schema.MustTuple(100, 2<<30)})
	require.NoError(t, st.Submit(
		cluster.TaskSpec{ID: "declared", Job: "j", Key: key, Profile: declared, Request: schema.MustTuple(1, 1)},
		cluster.TaskSpec{ID: "keyed", Job: "j", Key: key, Request: schema.MustTuple(1000, 4<<30)},
		cluster.TaskSpec{ID: "plain", Job: "j", Request: schema.MustTuple(1000, 4<<30), Duration: 7e9},
	))
	task := func(id string) *cluster.TaskInfo { t, _ := st.Task(id); return t }

	hold, err := plugins.NewPrediction(schema, est, true)
	require.NoError(t, err)
	d := hold.Demand(nil, task("declared"))
	assert.True(t, d.Predicted)
	assert.Equal(t, declared, d.Plan)
	assert.Equal(t, 2, d.Hold.Len(), "the memory is held until the task finishes")
	assert.Equal(t, stage.Forever, d.Hold.Duration())
	assert.Equal(t, schema.MustTuple(0, 2<<30), d.Hold.Stage(1).Demand)

	d = hold.Demand(nil, task("keyed"))
	assert.True(t, d.Predicted)
	assert.Equal(t, learned.Stage(0).Demand, d.Plan.Stage(0).Demand)

	d = hold.Demand(nil, task("plain"))
	assert.False(t, d.Predicted)
	assert.Equal(t, d.Plan, d.Hold)
	assert.Equal(t, schema.MustTuple(1000, 4<<30), d.Hold.Peak())

	literal, err := plugins.NewPrediction(schema, nil, false)
	require.NoError(t, err)
	d = literal.Demand(nil, task("keyed"))
	assert.False(t, d.Predicted, "without an estimator a keyed task is placed by its request")
	d = literal.Demand(nil, task("declared"))
	assert.Equal(t, d.Plan, d.Hold, "without hold-until-finished the hold is the plan")
}

// nanScorer scores every server NaN.
type nanScorer struct{}

func (nanScorer) Score(_, _, _ resource.Tuple) float64 { return math.NaN() }

// NodeScore scores as match.ScoreServer does, times its weight, whether or not the
// match reported the window's least free amount; NaN ranks last.
func TestNodeScoreIsScoreServer(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	st, err := cluster.New(schema)
	require.NoError(t, err)
	require.NoError(t, st.AddNode(cluster.NodeSpec{ID: "n", Capacity: schema.MustTuple(8000, 16<<30)}))
	require.NoError(t, st.AddJob(cluster.JobSpec{ID: "j"}))
	require.NoError(t, st.Submit(
		cluster.TaskSpec{ID: "held", Job: "j", Request: schema.MustTuple(3000, 4<<30), Duration: 20 * time.Second},
		cluster.TaskSpec{ID: "t", Job: "j", Request: schema.MustTuple(1000, 2<<30)},
	))
	n, _ := st.Node("n")
	held, _ := st.Task("held")
	require.NoError(t, st.Reserve(held, n, cluster.Reservation{Start: 5 * time.Second, Hold: held.RequestProfile(schema)}))
	task, _ := st.Task("t")
	hold := stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(2000, 1<<30)},
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(500, 3<<30)})
	server := match.Server{ID: "n", Timeline: n.Timeline()}
	for _, sc := range []match.Scorer{match.LeastAllocated{}, match.MostAllocated{}, match.BestFit{}, nanScorer{}} {
		score, err := plugins.NewNodeScore(sc, 2.5)
		require.NoError(t, err)
		for _, r := range []match.Result{
			match.FineGrained{}.Match(server, 0, hold),
			{Code: match.Fit, Stage: -1, Dim: -1},
		} {
			a := &framework.Attempt{Task: task, Node: n, Start: 0, Demand: framework.TaskDemand{Plan: hold, Hold: hold, Predicted: true}, Result: r}
			want := 2.5 * match.ScoreServer(sc, server, 0, hold, r)
			assert.Equal(t, want, score.Score(nil, a), "%T, least free known %v", sc, r.MinFreeKnown)
		}
	}
}
