package policy_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

func TestCompressionRatio(t *testing.T) {
	c, err := policy.NewCompression(schema, nil)
	require.NoError(t, err)
	assert.Equal(t, resource.Vector{0.1, 0, 0.1}, c.Limit())
	assert.Equal(t, policy.DefaultPenalty, c.Penalty())
	for _, tc := range []struct {
		name             string
		dim              int
		running, demand  int64
		want             float64
		eq6BoundOrLimits string
	}{
		{"bound above the limit", 0, 2000, 2200, 0.1, "(2200 − 0.05×2000)/4200 = 0.5 → 10%"},
		{"bound within the limit", 0, 1000, 60, (60 - 50) / 1060.0, "(60 − 50)/1060"},
		{"negative bound: do not compress", 0, 3900, 100, 0, "(100 − 195)/4000 < 0"},
		{"nothing demanded", 0, 1000, 0, 0, "no new work"},
		{"nothing running", 2, 0, 50, 0.1, "bound 1"},
		{"negative running counts as 0", 2, -10, 50, 0.1, "bound 1"},
		{"memory is not compressible", 1, 0, 50, 0, "Def. 1"},
		{"outside the schema", 5, 0, 50, 0, "no such dimension"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.want, c.Ratio(tc.dim, tc.running, tc.demand), 1e-12, tc.eq6BoundOrLimits)
		})
	}
}

// modes is a fixed ModeSource.
type modes map[string]policy.NodeMode

func (m modes) Mode(id string) policy.NodeMode { return m[id] }

func TestCompressionAllowed(t *testing.T) {
	c, err := policy.NewCompression(schema, modes{"fine": policy.ModeFineGrained, "nocomp": policy.ModeFineGrainedNoCompression, "coarse": policy.ModeCoarseGrained, "stop": policy.ModeStopAllocation},
		policy.WithDimLimit("net-io", 0.2), policy.WithPenalty(0))
	require.NoError(t, err)
	q := match.AllowanceQuery{
		Capacity: tup(4000, 8000, 100),
		Segment:  stage.Segment{Start: 0, End: time.Second, Free: tup(2000, 1000, 90)},
		Demand:   tup(2200, 500, 30),
	}
	q.Server = "fine"
	assert.Equal(t, resource.Vector{0.1, 0, 0.2}, c.Allowed(q), "p = 0: the bound is wNew/(wRunning + wNew), capped by the limits")
	for _, id := range []string{"nocomp", "coarse", "stop"} {
		q.Server = id
		assert.Equal(t, resource.Vector{}, c.Allowed(q), id)
	}
	// Through the matcher: the mode decides whether B-like stages fit.
	tl, err := stage.NewTimeline(schema, tup(4000, 8000, 100))
	require.NoError(t, err)
	_, err = tl.Reserve(0, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(2000, 7000, 0)}), resource.Tuple{})
	require.NoError(t, err)
	p := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(2200, 500, 0)})
	assert.Equal(t, match.FitCompressed, match.FineGrained{}.Match(c.Server("fine", tl), 0, p).Code)
	assert.Equal(t, match.NoRoom, match.FineGrained{}.Match(c.Server("nocomp", tl), 0, p).Code)
}

func TestCompressionErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *resource.Schema
		opt    policy.CompressionOption
		want   error
	}{
		{"nil schema", nil, nil, resource.ErrSchemaMismatch},
		{"limit 1", schema, policy.WithLimit(1), resource.ErrInvalidRatio},
		{"limit negative", schema, policy.WithLimit(-0.1), resource.ErrInvalidRatio},
		{"limit NaN", schema, policy.WithLimit(math.NaN()), resource.ErrInvalidRatio},
		{"dim limit unknown", schema, policy.WithDimLimit("gpu", 0.1), resource.ErrUnknownDimension},
		{"dim limit not compressible", schema, policy.WithDimLimit("memory", 0.1), resource.ErrNotCompressible},
		{"dim limit out of range", schema, policy.WithDimLimit("cpu", 1.2), resource.ErrInvalidRatio},
		{"penalty negative", schema, policy.WithPenalty(-0.5), policy.ErrInvalidValue},
		{"penalty NaN", schema, policy.WithPenalty(math.NaN()), policy.ErrInvalidValue},
		{"penalty infinite", schema, policy.WithPenalty(math.Inf(1)), policy.ErrInvalidValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []policy.CompressionOption
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			c, err := policy.NewCompression(tc.schema, nil, opts...)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, tc.want)
			var se *policy.SettingError
			assert.ErrorAs(t, err, &se)
		})
	}
	c, err := policy.NewCompression(schema, nil, policy.WithLimit(0.05), policy.WithDimLimit("cpu", 0.2))
	require.NoError(t, err)
	assert.Equal(t, resource.Vector{0.2, 0, 0.05}, c.Limit(), "options apply in order")
}

const gb = 1 << 30

// The motivating example (see match's doc and tests) with the policy in charge: the
// server's mode decides whether B1 starts with A1 and A2.
func TestMotivatingExampleModes(t *testing.T) {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	a := stage.MustProfile(s,
		stage.Stage{Duration: time.Second, Demand: s.MustTuple(1000, 2*gb)},
		stage.Stage{Duration: 2 * time.Second, Demand: s.MustTuple(500, 1*gb)})
	b := stage.MustProfile(s,
		stage.Stage{Duration: time.Second, Demand: s.MustTuple(2200, 2*gb)},
		stage.Stage{Duration: 3 * time.Second, Demand: s.MustTuple(3000, 3*gb)})
	capacity := s.MustTuple(4000, 8*gb)

	conf := newConformity()
	adj, err := policy.NewAdjuster(s, conf)
	require.NoError(t, err)
	require.NoError(t, adj.AddServer("n1", capacity))
	comp, err := policy.NewCompression(s, adj)
	require.NoError(t, err)

	for _, tc := range []struct {
		cpuShare float64 // the worst resource's √F/N
		mode     policy.NodeMode
		b1       match.Code
	}{
		{0.01, policy.ModeFineGrained, match.FitCompressed},
		{0.07, policy.ModeFineGrainedNoCompression, match.NoRoom},
		{0.15, policy.ModeCoarseGrained, match.NoRoom},
		{0.25, policy.ModeStopAllocation, match.Unschedulable},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			conf.set("n1", resource.Vector{share(tc.cpuShare, 4000)})
			_, err := adj.AdjustServer("n1")
			require.NoError(t, err)
			require.Equal(t, tc.mode, adj.Mode("n1"))
			tl, err := stage.NewTimeline(s, capacity)
			require.NoError(t, err)
			server := comp.Server("n1", tl)
			m := adj.Matcher("n1")
			for _, p := range []stage.Profile{a, a} {
				r := m.Match(server, 0, p)
				if tc.mode == policy.ModeStopAllocation {
					require.Equal(t, match.Unschedulable, r.Code)
					continue
				}
				require.Equal(t, match.Fit, r.Code)
				_, err := tl.Reserve(0, p, r.Allowance)
				require.NoError(t, err)
			}
			r := m.Match(server, 0, b)
			assert.Equal(t, tc.b1, r.Code, "%v", r)
			if r.Code == match.FitCompressed {
				assert.InDelta(t, 0.2/4.2, r.StageRatio(0), 1e-12)
			}
		})
	}
}
