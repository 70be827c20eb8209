package plugins_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/resource"
)

// Koordinator's defaults land on the schema's cpu and memory dimensions, and nowhere
// else; a schema without them gets no threshold (and is refused: no weight).
func TestLoadAwareDefaults(t *testing.T) {
	schema := resource.MustSchema(resource.DiskIO, resource.CPU, resource.Memory)
	a := plugins.DefaultLoadAwareSchedulingArgs(schema)
	assert.Equal(t, resource.Vector{0, 0.65, 0.95}, a.UsageThresholds)
	assert.Equal(t, resource.Vector{0, 0.85, 0.70}, a.EstimatedScalingFactors)
	assert.Equal(t, resource.Vector{0, 1, 1}, a.ResourceWeights)
	assert.Equal(t, time.Second, a.HoldFor)
	l, err := plugins.NewLoadAwareScheduling(schema, a)
	require.NoError(t, err)
	assert.Equal(t, "LoadAwareScheduling", l.Name())
	assert.Equal(t, a, l.Args())

	for _, tc := range []struct {
		name     string
		req, est resource.Tuple
	}{
		{"scaled and rounded", schema.MustTuple(1000, 4001, 1000), schema.MustTuple(0, 3401, 700)},
		{"zero requests take Koordinator's defaults", schema.MustTuple(5, 0, 0), schema.MustTuple(0, 250, 200<<20)},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.est, l.Estimate(tc.req)) })
	}
	// A request near the largest amount, scaled by 1, saturates instead of wrapping to
	// a negative estimate (read as 0: the task would pass any filter).
	whole := a
	whole.EstimatedScalingFactors = resource.Vector{0, 1, 1}
	lw, err := plugins.NewLoadAwareScheduling(schema, whole)
	require.NoError(t, err)
	huge := lw.Estimate(schema.MustTuple(0, math.MaxInt64, 1))
	assert.Greater(t, huge[1], int64(1)<<61)

	disk := resource.MustSchema(resource.DiskIO)
	_, err = plugins.NewLoadAwareScheduling(disk, plugins.DefaultLoadAwareSchedulingArgs(disk))
	require.ErrorIs(t, err, cluster.ErrInvalid)
	_, err = plugins.NewLoadAwareScheduling(nil, a)
	require.ErrorIs(t, err, resource.ErrSchemaMismatch)
	_, err = plugins.NewLoadAwareScheduling(schema, plugins.LoadAwareSchedulingArgs{ResourceWeights: resource.Vector{1}, HoldFor: time.Second, UsageThresholds: resource.Vector{math.Inf(1)}})
	require.ErrorIs(t, err, cluster.ErrInvalid)
}

// The filter, the score and the gate on a node of 10 cores and 1,000 units of memory,
// measured at 2 cores and 100 units, with nothing placed since (the rule that counts
// tasks placed after the measurement is checked by the simulator's tests).
func TestLoadAwareSteps(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	l, err := plugins.NewLoadAwareScheduling(schema, plugins.DefaultLoadAwareSchedulingArgs(schema))
	require.NoError(t, err)
	st, err := cluster.New(schema)
	require.NoError(t, err)
	require.NoError(t, st.AddNode(cluster.NodeSpec{ID: "n", Capacity: schema.MustTuple(10000, 1000)}))
	n, _ := st.Node("n")
	require.NoError(t, l.Report("n", 10*time.Second, schema.MustTuple(2000, 100), 10*time.Second))

	for _, tc := range []struct {
		name  string
		req   resource.Tuple
		fits  bool
		score float64
	}{
		{"fits", schema.MustTuple(4000, 100), true, 100 * ((10000-2000-3400)/10000.0 + (1000-100-70)/1000.0) / 2},
		{"cpu at the threshold", schema.MustTuple(5294, 100), true, 100 * ((10000-2000-4500)/10000.0 + (1000-100-70)/1000.0) / 2},
		{"cpu above", schema.MustTuple(5295, 100), false, 100 * ((10000-2000-4501)/10000.0 + (1000-100-70)/1000.0) / 2},
		{"memory above", schema.MustTuple(100, 1215), false, 100 * ((10000-2000-85)/10000.0 + (1000-100-851)/1000.0) / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := l.Demand(nil, taskWith(t, st, tc.req))
			a := &framework.Attempt{Node: n, Demand: d}
			assert.Equal(t, l.Estimate(tc.req), d.Hold.Peak())
			assert.Equal(t, time.Second, d.Hold.Duration())
			assert.Equal(t, tc.fits, l.Filter(nil, a).OK())
			assert.InDelta(t, tc.score, l.Score(nil, a), 1e-9)
		})
	}
	assert.True(t, l.Gate(nil, n).OK())
	require.NoError(t, l.Report("n", 20*time.Second, schema.MustTuple(6501, 100), 10*time.Second))
	assert.Equal(t, framework.Close(framework.NodeBusy), l.Gate(nil, n), "above a threshold: nothing fits")

	// Bad reports change nothing.
	for name, err := range map[string]error{
		"empty node":    l.Report("", 30*time.Second, resource.Tuple{}, 0),
		"negative time": l.Report("n", -1, resource.Tuple{}, 0),
		"negative span": l.Report("n", 30*time.Second, resource.Tuple{}, -1),
		"older":         l.Report("n", 5*time.Second, resource.Tuple{}, 0),
		"negative use":  l.Report("n", 30*time.Second, resource.Tuple{-1}, 0),
		"beyond schema": l.Report("n", 30*time.Second, resource.Tuple{0, 0, 1}, 0),
	} {
		require.Error(t, err, name)
	}
	u, at, span, ok := l.Measured("n")
	require.True(t, ok)
	assert.Equal(t, []any{schema.MustTuple(6501, 100), 20 * time.Second, 10 * time.Second}, []any{u, at, span})
	l.Forget("n")
	_, _, _, ok = l.Measured("n")
	assert.False(t, ok)
	assert.True(t, l.Gate(nil, n).OK(), "no measurement, no task: nothing used")
}

// taskWith submits a pending task of request req to st and returns it.
func taskWith(t *testing.T, st *cluster.State, req resource.Tuple) *cluster.TaskInfo {
	t.Helper()
	id := "t" + req.String()
	if _, ok := st.Job("j"); !ok {
		require.NoError(t, st.AddQueue("", "q"))
		require.NoError(t, st.AddJob(cluster.JobSpec{ID: "j", Queue: "q"}))
	}
	require.NoError(t, st.Submit(cluster.TaskSpec{ID: id, Job: "j", Request: req}))
	ti, ok := st.Task(id)
	require.True(t, ok)
	return ti
}
