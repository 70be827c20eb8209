package finegrain_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// The default plugin list, by extension point: what a user removes or inserts
// against.
func TestDefaultPlugins(t *testing.T) {
	s := newScheduler(t)
	assert.Equal(t, map[string][]string{
		"Demand":    {"Prediction"},
		"PreFilter": {"QueueAdmission", "Gang"},
		"Filter":    {"ModeGate", "GPUFit", "StageMatch", "QoS"},
		"Score":     {"NodeScore"},
		"Reserve":   {"Gang"},
		"Permit":    {"Gang"},
		"NodeGate":  {"IdleGate"},
		"JobFilter": {"DemandClasses"},
		"Pass":      {"DelayScheduling"},
		"Forget":    {"Gang", "DelayScheduling"},
	}, s.Plugins())

	s = newScheduler(t, finegrain.WithFutureStart(true), finegrain.WithMaxPerHeartbeat(3), finegrain.WithQoS(nil),
		finegrain.WithoutPlugin("DemandClasses"), finegrain.WithPlugin(offRack{job: "j", rack: "r"}))
	p := s.Plugins()
	assert.Equal(t, []string{"ModeGate", "GPUFit", "StageMatch", "OffRack"}, p["Filter"])
	assert.Equal(t, []string{"FutureStart"}, p["PostFilter"])
	assert.Equal(t, []string{"HeartbeatCap", "IdleGate"}, p["NodeGate"])
	assert.Nil(t, p["JobFilter"])

	late, err := speculate.NewLATE()
	require.NoError(t, err)
	s = newScheduler(t, finegrain.WithFutureStart(true), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}),
		finegrain.WithSpeculation(late))
	p = s.Plugins()
	assert.Equal(t, []string{"Preemption", "FutureStart"}, p["PostFilter"], "make room now before waiting for room later")
	assert.Equal(t, []string{"DelayScheduling", "Preemption", "Speculation"}, p["Pass"], "preempt after the locality pass")
}

func TestPluginOptionErrors(t *testing.T) {
	for name, opts := range map[string][]finegrain.Option{
		"nil plugin":          {finegrain.WithPlugin(nil)},
		"nil plugin before":   {finegrain.WithPluginBefore("StageMatch", nil)},
		"empty before":        {finegrain.WithPluginBefore("", offRack{})},
		"unknown before":      {finegrain.WithPluginBefore("Nope", offRack{})},
		"unknown without":     {finegrain.WithoutPlugin("Nope")},
		"empty without":       {finegrain.WithoutPlugin("")},
		"removed twice":       {finegrain.WithoutPlugin("QoS"), finegrain.WithoutPlugin("QoS")},
		"duplicate name":      {finegrain.WithPlugin(offRack{}), finegrain.WithPlugin(offRack{})},
		"no demand step":      {finegrain.WithoutPlugin("Prediction")},
		"nil option":          {nil},
		"duplicate built-in":  {finegrain.WithPlugin(offRackNamed("StageMatch"))},
		"implements no point": {finegrain.WithPlugin(nameOnly{})},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := finegrain.New(schema, opts...)
			require.ErrorIs(t, err, finegrain.ErrInvalid)
		})
	}
}

type nameOnly struct{}

func (nameOnly) Name() string { return "NameOnly" }

// offRackNamed is offRack under another name.
type offRackNamed string

func (n offRackNamed) Name() string { return string(n) }

func (offRackNamed) Filter(*framework.Cycle, *framework.Attempt) framework.Status {
	return framework.Status{}
}

// Reordering: the rack filter moved from after matching to before it changes which
// plugin a refusal names, not whether the task is refused.
func TestPluginOrder(t *testing.T) {
	for _, tc := range []struct {
		opts   []finegrain.Option
		plugin string
	}{
		{[]finegrain.Option{finegrain.WithPlugin(offRack{job: "j", rack: "r0"})}, "StageMatch"},
		{[]finegrain.Option{finegrain.WithPluginBefore("ModeGate", offRack{job: "j", rack: "r0"})}, "OffRack"},
	} {
		s := newScheduler(t, append(tc.opts, finegrain.WithPrediction(false), finegrain.WithUnresolvableAccepted(true))...)
		addNodes(t, s, 1, schema.MustTuple(1000, gib))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(2000, 2*gib)}))
		st, _, err := s.Filter("t", "n0", 0)
		require.NoError(t, err)
		assert.Equal(t, tc.plugin, st.Plugin)
		assert.False(t, st.OK())
	}
}

// The probes a host scheduler calls agree with push placement: the node Place picks is
// one that passes Filter and has the highest Score, and probing changes nothing.
func TestProbesAgreeWithPlace(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	nodeCapacity := map[string]resource.Tuple{}
	for i, c := range []int64{4, 16, 8, 2} {
		id := fmt.Sprintf("n%d", i)
		nodeCapacity[id] = schema.MustTuple(c*1000, c*gib)
		require.NoError(t, s.AddNode(finegrain.Node{ID: id, Rack: "r", Capacity: nodeCapacity[id]}))
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "k", InputSize: 1}
	require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(3000, 3*gib)},
		stage.Stage{Duration: 20 * time.Second, Demand: schema.MustTuple(1000, gib)})}))
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("t%d", i)
		require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "j", Key: key, Request: schema.MustTuple(4000, 4*gib)}))
		before := map[string]any{}
		scores := map[string]float64{}
		best, bestScore := "", 0.0
		for n := 0; n < 4; n++ {
			node := fmt.Sprintf("n%d", n)
			free, err := s.NodeFree(node, 0)
			require.NoError(t, err)
			before[node] = free
			st, r, err := s.Filter(id, node, 0)
			require.NoError(t, err)
			x, st2, err := s.Score(id, node, 0)
			require.NoError(t, err)
			assert.Equal(t, st, st2)
			if !st.OK() {
				assert.Equal(t, match.NoRoom, r.Code)
				if over := r.Demand > nodeCapacity[node][r.Dim] && !schema.Dim(r.Dim).Compressible; over {
					assert.Equal(t, finegrain.OverCapacity, st.Reason, "%s is smaller than stage %d", node, r.Stage)
				} else {
					assert.Equal(t, finegrain.NoRoom, st.Reason)
				}
				continue
			}
			scores[node] = x
			if best == "" || x > bestScore {
				best, bestScore = node, x
			}
		}
		for node, free := range before {
			now, _ := s.NodeFree(node, 0)
			assert.Equal(t, free, now, "probing changed %s", node)
		}
		st, _ := s.TaskState(id)
		assert.Equal(t, finegrain.Pending, st)
		a, err := s.Place(id, 0)
		if best == "" {
			assert.ErrorIs(t, err, finegrain.ErrNotPlaced)
			continue
		}
		require.NoError(t, err)
		// Equal scores go to the roomiest node first; the chosen score must be the best.
		x, ok := scores[a.Node]
		require.True(t, ok, "placed on %s, which did not pass Filter", a.Node)
		assert.Equal(t, bestScore, x)
	}
}

func TestProbeErrors(t *testing.T) {
	s := newScheduler(t)
	addNodes(t, s, 1, schema.MustTuple(1000, gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(100, gib/4)}))
	_, _, err := s.Filter("nope", "n0", 0)
	assert.ErrorIs(t, err, finegrain.ErrUnknownTask)
	_, _, err = s.Filter("t", "nope", 0)
	assert.ErrorIs(t, err, finegrain.ErrUnknownNode)
	_, _, err = s.Score("t", "n0", -1)
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	_, err = s.Place("t", 0)
	require.NoError(t, err)
	_, _, err = s.Filter("t", "n0", 0)
	assert.ErrorIs(t, err, finegrain.ErrState)
}

// Filter and Score run concurrently with each other and with heartbeats (go test
// -race checks the sharing).
func TestProbesConcurrent(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	addNodes(t, s, 8, schema.MustTuple(8000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "k", InputSize: 1}
	require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(1000, gib)})}))
	for i := 0; i < 64; i++ {
		task := finegrain.Task{ID: fmt.Sprintf("t%d", i), Job: "j", Request: schema.MustTuple(1000, gib)}
		if i%2 == 0 {
			task.Key = key
		}
		require.NoError(t, s.Submit(task))
	}
	var wg sync.WaitGroup
	fits := make([]int, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			node := fmt.Sprintf("n%d", g)
			for i := 0; i < 64; i++ {
				st, _, err := s.Filter(fmt.Sprintf("t%d", i), node, 0)
				// A task the heartbeat started meanwhile is no longer pending.
				if (err == nil && st.OK()) || errors.Is(err, finegrain.ErrState) {
					fits[g]++
				}
				_, _, _ = s.Score(fmt.Sprintf("t%d", i), node, 0)
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = s.Heartbeat("n7", time.Second)
	}()
	wg.Wait()
	for g := 0; g < 7; g++ {
		assert.Equal(t, 64, fits[g], "node n%d is untouched: every task fits it or has started", g)
	}
}

// The edges of every option's range are accepted (a mutation-testing pass showed them
// untested), and the first plugin of the list can be removed or preceded.
func TestOptionRangeEdges(t *testing.T) {
	for name, o := range map[string]finegrain.Option{
		"no compression":          finegrain.WithCompressionLimit(0),
		"almost full compression": finegrain.WithCompressionLimit(0.999),
		"no contention penalty":   finegrain.WithContentionPenalty(0),
		"a window of one":         finegrain.WithConformityWindow(1),
		"a scorer":                finegrain.WithScorer(match.BestFit{}),
		"score every node":        finegrain.WithCandidates(0),
		"five candidates":         finegrain.WithCandidates(5),
		"no heartbeat cap":        finegrain.WithMaxPerHeartbeat(0),
		"no clock skew":           finegrain.WithClockSkew(0),
		"a minute of clock skew":  finegrain.WithClockSkew(time.Minute),
		"retain nothing":          finegrain.WithRetention(finegrain.Retention{}),
		"before the first":        finegrain.WithPluginBefore("Prediction", offRackNamed("First")),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := finegrain.New(schema, o)
			assert.NoError(t, err)
		})
	}
	s := newScheduler(t, finegrain.WithPluginBefore("Prediction", offRackNamed("First")))
	assert.Equal(t, []string{"First", "ModeGate", "GPUFit", "StageMatch", "QoS"}, s.Plugins()["Filter"])
	_, err := finegrain.New(schema, finegrain.WithoutPlugin("Prediction"))
	require.ErrorIs(t, err, finegrain.ErrInvalid)
	assert.Contains(t, err.Error(), "no demand plugin", "the first plugin was found and removed")
}
