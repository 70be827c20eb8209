package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// laNode is the test node: 10 cores, 10 GiB; Koordinator's defaults allow 6.5 cores
// and 9.5 GiB of estimated usage.
var laNode = tuple(10000, 10*gib, 0, 0)

// newLA returns a load-aware scheduler with nodes n0..n(k-1) of laNode, queue q and job
// j.
func newLA(t testing.TB, k int, opts ...LoadAwareOption) *LoadAwareScheduler {
	t.Helper()
	s, err := NewLoadAwareScheduler(workload.Schema(), opts...)
	require.NoError(t, err)
	for i := range k {
		require.NoError(t, s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Capacity: laNode}))
	}
	require.NoError(t, s.AddQueue("", "q"))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j", Queue: "q"}))
	return s
}

// report sends node a window of one interval of span ending at now, using actual.
func report(t testing.TB, s *LoadAwareScheduler, node string, now, span time.Duration, actual resource.Tuple) {
	t.Helper()
	_, err := s.ReportUsage(node, now, []predict.Interval{{Duration: span, Actual: actual}})
	require.NoError(t, err)
}

// place submits task id with request req at now and places it; it returns the error.
func place(t testing.TB, s *LoadAwareScheduler, id string, req resource.Tuple, now time.Duration) error {
	t.Helper()
	require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "j", Request: req, Submitted: now}))
	_, err := s.Place(id, now)
	return err
}

// The filter's arithmetic: measured usage + estimates of the tasks placed since the
// measurement could see them + the task's estimate ≤ threshold × capacity, whatever
// the requests add up to.
func TestLoadAwareFilter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old      resource.Tuple // placed at 0, measured by the report at 10 s
		measured resource.Tuple // the report at 10 s (span 10 s)
		req      resource.Tuple // the task placed at 10 s
		placed   bool
	}{
		{"fits by usage, not by requests", tuple(7000, 1*gib, 0, 0), tuple(1000, 1*gib, 0, 0), tuple(4000, 1*gib, 0, 0), true},
		{"exactly at the cpu threshold", tuple(1000, 1*gib, 0, 0), tuple(3100, 1*gib, 0, 0), tuple(4000, 1*gib, 0, 0), true},
		{"one millicore above the cpu threshold", tuple(1000, 1*gib, 0, 0), tuple(3101, 1*gib, 0, 0), tuple(4000, 1*gib, 0, 0), false},
		{"above the memory threshold", tuple(1000, 1*gib, 0, 0), tuple(1000, 8*gib, 0, 0), tuple(1000, 3*gib, 0, 0), false},
		{"memory fits by usage, not by requests", tuple(1000, 8*gib, 0, 0), tuple(1000, 2*gib, 0, 0), tuple(1000, 4*gib, 0, 0), true},
		{"zero cpu request counts 250 millicores", tuple(1000, 1*gib, 0, 0), tuple(6300, 1*gib, 0, 0), tuple(0, 1*gib, 0, 0), false},
		{"disk and network have no threshold", tuple(1000, 1*gib, 0, 0), tuple(1000, 1*gib, 1<<40, 1<<40), tuple(1000, 1*gib, 1<<40, 0), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newLA(t, 1)
			require.NoError(t, place(t, s, "old", tc.old, 0))
			report(t, s, "n0", 10*time.Second, 10*time.Second, tc.measured)
			err := place(t, s, "new", tc.req, 10*time.Second)
			if tc.placed {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, finegrain.ErrNotPlaced)
			st, ok := s.TaskState("new")
			require.True(t, ok)
			assert.Equal(t, finegrain.Pending, st, "a refused task stays pending")
		})
	}
}

// A task just placed counts by its estimate until a report whose whole span it was
// placed before: Koordinator's "still in the report interval" rule.
func TestLoadAwareEstimateWindow(t *testing.T) {
	s := newLA(t, 1)
	probe := func(at time.Duration) bool {
		t.Helper()
		st, _, err := s.Filter("probe", "n0", at)
		require.NoError(t, err)
		return st.OK()
	}
	require.NoError(t, s.Submit(finegrain.Task{ID: "probe", Job: "j", Request: tuple(3000, gib, 0, 0)})) // estimate 2550
	// Never reported: every placed task counts by its estimate (3400 + 2550 ≤ 6500).
	require.NoError(t, place(t, s, "a", tuple(4000, gib, 0, 0), 2*time.Second)) // estimate 3400
	assert.True(t, probe(2*time.Second))
	for _, step := range []struct {
		at       time.Duration
		measured int64 // cpu of the report at at, over the 10 s before
		place    string
		fits     bool
		why      string
	}{
		{10 * time.Second, 1000, "", false, "a was placed inside the report's span: 1000 + 3400 + 2550 > 6500"},
		{20 * time.Second, 3000, "", true, "the report at 20 s saw a for its whole span: 3000 + 2550"},
		{21 * time.Second, -1, "b", false, "b just placed: 3000 + 3400 + 2550"},
		{30 * time.Second, 3000, "", false, "b was placed inside the span of the report at 30 s"},
		{40 * time.Second, 3000, "", true, "the report at 40 s saw b for its whole span"},
	} {
		if step.measured >= 0 {
			report(t, s, "n0", step.at, 10*time.Second, tuple(step.measured, gib, 0, 0))
		}
		if step.place != "" {
			require.NoError(t, place(t, s, step.place, tuple(4000, gib, 0, 0), step.at))
		}
		assert.Equal(t, step.fits, probe(step.at), "at %v: %s", step.at, step.why)
	}
	// A node that leaves and comes back has no measurement: its tasks count again.
	usage, at, span, ok := s.Plugin().Measured("n0")
	require.True(t, ok)
	assert.Equal(t, tuple(3000, gib, 0, 0), usage)
	assert.Equal(t, 40*time.Second, at)
	assert.Equal(t, 10*time.Second, span)
	_, err := s.RemoveNode("n0", 41*time.Second)
	require.NoError(t, err)
	_, _, _, ok = s.Plugin().Measured("n0")
	assert.False(t, ok)
}

// Bad options and arguments are refused with an error, from the constructor and from
// a simulation that builds the policy.
func TestLoadAwareOptions(t *testing.T) {
	schema := workload.Schema()
	args := func(edit func(*plugins.LoadAwareSchedulingArgs)) LoadAwareOption {
		a := plugins.DefaultLoadAwareSchedulingArgs(schema)
		edit(&a)
		return WithLoadAwareArgs(a)
	}
	for _, tc := range []struct {
		name string
		opt  LoadAwareOption
		want string
	}{
		{"nil option", nil, "LoadAwareOption"},
		{"unknown statistic", WithUsageStat(UsageStat(7)), "WithUsageStat"},
		{"nil inner option", WithLoadAwareOptions(nil), "WithLoadAwareOptions"},
		{"NaN threshold", args(func(a *plugins.LoadAwareSchedulingArgs) { a.UsageThresholds[0] = math.NaN() }), "usage threshold of cpu"},
		{"threshold above 1", args(func(a *plugins.LoadAwareSchedulingArgs) { a.UsageThresholds[1] = 1.5 }), "usage threshold of memory"},
		{"negative threshold", args(func(a *plugins.LoadAwareSchedulingArgs) { a.UsageThresholds[1] = -0.1 }), "usage threshold of memory"},
		{"negative factor", args(func(a *plugins.LoadAwareSchedulingArgs) { a.EstimatedScalingFactors[0] = -1 }), "estimated scaling factor of cpu"},
		{"NaN factor", args(func(a *plugins.LoadAwareSchedulingArgs) { a.EstimatedScalingFactors[1] = math.NaN() }), "estimated scaling factor"},
		{"infinite weight", args(func(a *plugins.LoadAwareSchedulingArgs) { a.ResourceWeights[0] = math.Inf(1) }), "resource weight"},
		{"no weight", args(func(a *plugins.LoadAwareSchedulingArgs) { a.ResourceWeights = resource.Vector{} }), "resource weights sum to 0"},
		{"slot beyond the schema", args(func(a *plugins.LoadAwareSchedulingArgs) { a.UsageThresholds[6] = 0.5 }), "beyond the schema"},
		{"zero hold", args(func(a *plugins.LoadAwareSchedulingArgs) { a.HoldFor = 0 }), "hold for 0s"},
		{"inner option refused", WithLoadAwareOptions(finegrain.WithCandidates(-1)), "candidates -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLoadAwareScheduler(schema, tc.opt)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			w, cl := smallFGM(t, 1, 0.01)
			_, err = Run(&w, &cl, LoadAware(tc.opt))
			require.Error(t, err)
			assert.Contains(t, err.Error(), `policy "LoadAware"`)
		})
	}
	_, err := NewLoadAwareScheduler(nil)
	require.ErrorIs(t, err, resource.ErrSchemaMismatch)
	_, err = NewLoadAwareScheduler(schema, WithUsageStat(UsageStat(9)))
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Equal(t, "UsageStat(9)", UsageStat(9).String())
	assert.Equal(t, "max", UsageMax.String())
}

// Bad reports are refused and change nothing; the background the simulator reports
// is absorbed, not held.
func TestLoadAwareReports(t *testing.T) {
	s := newLA(t, 1)
	report(t, s, "n0", 10*time.Second, 10*time.Second, tuple(1000, gib, 0, 0))
	for _, tc := range []struct {
		name   string
		node   string
		now    time.Duration
		window []predict.Interval
		want   error
	}{
		{"unknown node", "nx", 20 * time.Second, []predict.Interval{{Duration: time.Second}}, finegrain.ErrUnknownNode},
		{"empty window", "n0", 20 * time.Second, nil, finegrain.ErrInvalid},
		{"negative duration", "n0", 20 * time.Second, []predict.Interval{{Duration: -time.Second}}, finegrain.ErrInvalid},
		{"negative usage", "n0", 20 * time.Second, []predict.Interval{{Duration: time.Second, Actual: resource.Tuple{-1}}}, nil},
		{"older than the last", "n0", 5 * time.Second, []predict.Interval{{Duration: time.Second}}, finegrain.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.ReportUsage(tc.node, tc.now, tc.window)
			require.Error(t, err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
			usage, at, _, ok := s.Plugin().Measured("n0")
			require.True(t, ok)
			assert.Equal(t, tuple(1000, gib, 0, 0), usage)
			assert.Equal(t, 10*time.Second, at)
		})
	}
	// The statistics: a window of 1 s at 1000 and 3 s at 3000.
	window := []predict.Interval{{Duration: time.Second, Actual: tuple(1000, gib, 0, 0)}, {Duration: 3 * time.Second, Actual: tuple(3000, 2*gib, 0, 0)}}
	_, err := s.ReportUsage("n0", 20*time.Second, window)
	require.NoError(t, err)
	usage, _, span, _ := s.Plugin().Measured("n0")
	assert.Equal(t, tuple(2500, 7*gib/4, 0, 0), usage, "the time average")
	assert.Equal(t, 4*time.Second, span)
	m := newLA(t, 1, WithUsageStat(UsageMax))
	_, err = m.ReportUsage("n0", 20*time.Second, window)
	require.NoError(t, err)
	usage, _, _, _ = m.Plugin().Measured("n0")
	assert.Equal(t, tuple(3000, 2*gib, 0, 0), usage, "the largest interval")

	held, err := s.SetExternalLoad("n0", 20*time.Second, tuple(8000, 8*gib, 0, 0))
	require.NoError(t, err)
	assert.True(t, held.IsZero(), "nothing held: the measurement includes it")
	free, err := s.NodeFree("n0", 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, laNode, free)
	_, err = s.SetExternalLoad("nx", 20*time.Second, tuple(1, 1, 0, 0))
	require.ErrorIs(t, err, finegrain.ErrUnknownNode)
	_, err = s.SetExternalLoad("n0", 20*time.Second, resource.Tuple{-1, 1})
	require.Error(t, err)
}

// Property: a placement never takes a node's estimated usage (the oracle's, rebuilt
// from the reports and placements) above the thresholds, and a refused task fits no
// node by that estimate.
func TestLoadAwareNeverAboveThresholds(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("placed ⇒ used + estimate ≤ threshold × capacity", prop.ForAll(func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 17))
		nodes := 1 + r.IntN(3)
		s := newLA(t, nodes)
		type placed struct {
			id    string
			node  string
			start time.Duration
			est   resource.Tuple
		}
		type meas struct {
			at, span time.Duration
			usage    resource.Tuple
			ok       bool
		}
		var live []placed
		last := map[string]meas{}
		lim := tuple(6500, 95*gib/10, 0, 0)
		used := func(node string) resource.Tuple {
			m := last[node]
			u := m.usage
			for _, p := range live {
				if p.node == node && (!m.ok || p.start > m.at-m.span) {
					u = u.Add(p.est)
				}
			}
			return u
		}
		now := time.Duration(0)
		for i := range 60 {
			now += time.Duration(r.IntN(4000)) * time.Millisecond
			switch r.IntN(4) {
			case 0: // a report
				n := fmt.Sprintf("n%d", r.IntN(nodes))
				span := time.Duration(1+r.IntN(20)) * time.Second
				u := tuple(r.Int64N(10001), r.Int64N(10*gib+1), 0, 0)
				if _, err := s.ReportUsage(n, now, []predict.Interval{{Duration: span, Actual: u}}); err != nil {
					return err.Error()
				}
				last[n] = meas{at: now, span: span, usage: u, ok: true}
			case 1: // a finish
				if len(live) == 0 {
					continue
				}
				k := r.IntN(len(live))
				if err := s.Finished(live[k].id, now, nil); err != nil {
					return err.Error()
				}
				live = append(live[:k], live[k+1:]...)
			default: // a placement
				req := tuple(r.Int64N(6001), r.Int64N(6*gib+1), 0, 0)
				id := fmt.Sprintf("t%d", i)
				if err := s.Submit(finegrain.Task{ID: id, Job: "j", Request: req, Submitted: now}); err != nil {
					return err.Error()
				}
				a, err := s.Place(id, now)
				est := s.Plugin().Estimate(req)
				if err != nil {
					if !errors.Is(err, finegrain.ErrNotPlaced) {
						return err.Error()
					}
					for k := range nodes {
						n := fmt.Sprintf("n%d", k)
						if lim.Covers(used(n).Add(est)) {
							return fmt.Sprintf("%s refused, but fits %s: used %v + %v", id, n, used(n), est)
						}
					}
					if err := s.Cancel(id, now); err != nil {
						return err.Error()
					}
					continue
				}
				live = append(live, placed{id: id, node: a.Node, start: now, est: est})
				if u := used(a.Node); !lim.Covers(u) {
					return fmt.Sprintf("%s placed on %s: used %v above %v", id, a.Node, u, lim)
				}
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// A small paper-like workload runs to the end under LoadAware, dedicated and in the
// cloud, pull and push, the same twice.
func TestLoadAwareRun(t *testing.T) {
	w, cl := smallFGM(t, 3, 0.05)
	for _, tc := range []struct {
		name string
		opts func() []Option
	}{
		{"dedicated pull", func() []Option { return nil }},
		{"dedicated push", func() []Option { return []Option{WithMode(Push)} }},
		{"cloud pull", func() []Option {
			bg, err := RandomLoad(rand.New(rand.NewPCG(3, 5)), len(cl.Nodes))
			require.NoError(t, err)
			return []Option{WithBackground(bg)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(&w, &cl, LoadAware(), tc.opts()...)
			require.NoError(t, err)
			assert.Equal(t, r.Summary.Jobs, r.Summary.JobsFinished)
			assert.Positive(t, r.Summary.Reports)
			assert.Zero(t, r.Summary.ModeChanges, "no conformity adjuster")
			again, err := Run(&w, &cl, LoadAware(), tc.opts()...)
			require.NoError(t, err)
			assert.Equal(t, r.Summary, again.Summary)
		})
	}
	p, err := PolicyByName("loadaware")
	require.NoError(t, err)
	assert.Equal(t, "LoadAware", p.Name)
	assert.True(t, p.Feedback)
	p, err = PolicyByName("loadaware-100")
	require.NoError(t, err)
	assert.Equal(t, "LoadAware-100", p.Name)
	s, err := p.build(workload.Schema())
	require.NoError(t, err)
	la, ok := s.(*LoadAwareScheduler)
	require.True(t, ok)
	th := la.Plugin().Args().UsageThresholds
	assert.Equal(t, 1.0, th[workload.SlotCPU])
	assert.Equal(t, 1.0, th[workload.SlotMemory])
}
