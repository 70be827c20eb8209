package policy_test

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
)

var schema = resource.MustSchema(resource.CPU, resource.Memory, resource.NetIO)

func tup(cpu, mem, net int64) resource.Tuple { return schema.MustTuple(cpu, mem, net) }

// conformity is a fake Conformity source.
type conformity struct {
	mu    sync.Mutex
	means map[string]resource.Vector
}

func newConformity() *conformity { return &conformity{means: map[string]resource.Vector{}} }

func (c *conformity) set(server string, v resource.Vector) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.means[server] = v
}

func (c *conformity) Mean(server string) (resource.Vector, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.means[server]
	return v, ok
}

// share returns the eq. 16 value whose WorstShare against capacity c is s: (s × c)².
func share(s float64, c int64) float64 { return (s * float64(c)) * (s * float64(c)) }

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		m                         policy.NodeMode
		name                      string
		schedulable, compressible bool
		matcher                   match.Matcher
	}{
		{policy.ModeFineGrained, "FineGrained", true, true, match.FineGrained{}},
		{policy.ModeFineGrainedNoCompression, "FineGrainedNoCompression", true, false, match.FineGrained{}},
		{policy.ModeCoarseGrained, "CoarseGrained", true, false, match.CoarseGrained{}},
		{policy.ModeStopAllocation, "StopAllocation", false, false, match.RefuseAll{}},
		{policy.NodeMode(9), "Mode(9)", false, false, match.RefuseAll{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.name, tc.m.String())
			assert.Equal(t, tc.schedulable, tc.m.Schedulable())
			assert.Equal(t, tc.compressible, tc.m.Compressible())
			assert.Equal(t, tc.matcher, tc.m.Matcher())
			m, err := policy.ParseMode(tc.name)
			if tc.m.Valid() {
				require.NoError(t, err)
				assert.Equal(t, tc.m, m)
			} else {
				assert.ErrorIs(t, err, policy.ErrUnknownMode)
			}
		})
	}
	m, err := policy.ParseMode("  coarsegrained\n")
	require.NoError(t, err)
	assert.Equal(t, policy.ModeCoarseGrained, m)
	for _, bad := range []string{"", "fine", "Stop Allocation", "FineGrained2"} {
		_, err := policy.ParseMode(bad)
		assert.ErrorIs(t, err, policy.ErrUnknownMode, bad)
		var se *policy.SettingError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, bad, se.Value)
	}
}

func TestThresholds(t *testing.T) {
	require.NoError(t, policy.DefaultThresholds.Validate())
	for _, tc := range []struct {
		name string
		th   policy.Thresholds
		want error
		what string
	}{
		{"NaN", policy.Thresholds{math.NaN(), 0.1, 0.05}, policy.ErrInvalidValue, "Th_sa"},
		{"negative", policy.Thresholds{0.2, 0.1, -0.05}, policy.ErrInvalidValue, "Th_fg"},
		{"infinite", policy.Thresholds{math.Inf(1), 0.1, 0.05}, policy.ErrInvalidValue, "Th_sa"},
		{"sa = cg", policy.Thresholds{0.1, 0.1, 0.05}, policy.ErrThresholdOrder, "Th_sa > Th_cg"},
		{"sa < cg", policy.Thresholds{0.05, 0.1, 0.01}, policy.ErrThresholdOrder, "Th_sa > Th_cg"},
		{"cg = fg", policy.Thresholds{0.2, 0.05, 0.05}, policy.ErrThresholdOrder, "Th_cg > Th_fg"},
		{"reversed", policy.Thresholds{0.01, 0.05, 0.1}, policy.ErrThresholdOrder, "Th_sa > Th_cg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.th.Validate()
			assert.ErrorIs(t, err, tc.want)
			var se *policy.SettingError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tc.what, se.Name)
		})
	}
	th := policy.DefaultThresholds
	for score, want := range map[float64]policy.NodeMode{
		0: policy.ModeFineGrained, 0.05: policy.ModeFineGrained, 0.0501: policy.ModeFineGrainedNoCompression,
		0.1: policy.ModeFineGrainedNoCompression, 0.15: policy.ModeCoarseGrained, 0.2: policy.ModeCoarseGrained,
		0.21: policy.ModeStopAllocation, math.Inf(1): policy.ModeStopAllocation,
	} {
		assert.Equal(t, want, th.Mode(score), "score %v", score)
	}
}

func TestBelowIdle(t *testing.T) {
	capacity := tup(4000, 8000, 0)
	ih := resource.Vector{0.1, 0.05, 0.5}
	for _, tc := range []struct {
		idle resource.Tuple
		want bool
	}{
		{tup(400, 400, 0), false},                  // exactly at the thresholds; net has no capacity
		{tup(399, 400, 0), true},                   // cpu below 10%
		{tup(4000, 399, 0), true},                  // memory below 5%: any dimension (eq. 13)
		{resource.Tuple{-100, 8000, 0}, true},      // compressed cpu
		{tup(4000, 8000, 0), false},                // idle server
		{resource.Tuple{400, 400, -1}, true},       // nothing to spare on a dimension without capacity
		{resource.Tuple{400, 400, 0, 7, 0}, false}, // past the schema: ignored here
	} {
		assert.Equal(t, tc.want, policy.BelowIdle(tc.idle, capacity, ih), "%v", tc.idle)
	}
}

func newAdjuster(t *testing.T, conf policy.Conformity, opts ...policy.Option) *policy.Adjuster {
	a, err := policy.NewAdjuster(schema, conf, opts...)
	require.NoError(t, err)
	return a
}

func TestNewAdjusterErrors(t *testing.T) {
	conf := newConformity()
	for _, tc := range []struct {
		name   string
		schema *resource.Schema
		conf   policy.Conformity
		opts   []policy.Option
		want   error
	}{
		{"nil schema", nil, conf, nil, resource.ErrSchemaMismatch},
		{"nil conformity", schema, nil, nil, policy.ErrNilConformity},
		{"thresholds out of order", schema, conf, []policy.Option{policy.WithThresholds(policy.Thresholds{0.1, 0.2, 0.05})}, policy.ErrThresholdOrder},
		{"nil reduction", schema, conf, []policy.Option{policy.WithReduction(nil)}, policy.ErrInvalidValue},
		{"idle threshold above 1", schema, conf, []policy.Option{policy.WithIdleThreshold(resource.Vector{1.5})}, resource.ErrInvalidRatio},
		{"idle threshold NaN", schema, conf, []policy.Option{policy.WithIdleThreshold(resource.Vector{0, math.NaN()})}, resource.ErrInvalidRatio},
		{"idle threshold outside schema", schema, conf, []policy.Option{policy.WithIdleThreshold(resource.Vector{0, 0, 0, 0.1})}, resource.ErrOutsideSchema},
		{"degradation factor 1", schema, conf, []policy.Option{policy.WithDegradation(policy.Degradation{Factor: 1, Window: 4, MinReports: 2})}, policy.ErrInvalidValue},
		{"degradation factor NaN", schema, conf, []policy.Option{policy.WithDegradation(policy.Degradation{Factor: math.NaN(), Window: 4, MinReports: 2})}, policy.ErrInvalidValue},
		{"degradation window 0", schema, conf, []policy.Option{policy.WithDegradation(policy.Degradation{Factor: 2, Window: 0, MinReports: 0})}, policy.ErrInvalidValue},
		{"degradation min > window", schema, conf, []policy.Option{policy.WithDegradation(policy.Degradation{Factor: 2, Window: 2, MinReports: 3})}, policy.ErrInvalidValue},
		{"degradation min 0", schema, conf, []policy.Option{policy.WithDegradation(policy.Degradation{Factor: 2, Window: 2, MinReports: 0})}, policy.ErrInvalidValue},
		{"initial mode", schema, conf, []policy.Option{policy.WithInitialMode(policy.NodeMode(4))}, policy.ErrUnknownMode},
		{"nil option", schema, conf, []policy.Option{policy.WithInitialMode(policy.ModeFineGrained), nil}, policy.ErrInvalidValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := policy.NewAdjuster(tc.schema, tc.conf, tc.opts...)
			assert.Nil(t, a)
			assert.ErrorIs(t, err, tc.want)
			var se *policy.SettingError
			assert.ErrorAs(t, err, &se, "names the setting: %v", err)
		})
	}
}

func TestAdjusterServers(t *testing.T) {
	a := newAdjuster(t, newConformity(), policy.WithInitialMode(policy.ModeCoarseGrained))
	require.NoError(t, a.AddServer("n2", tup(4000, 8000, 100)))
	require.NoError(t, a.AddServer("n1", tup(4000, 8000, 100)))
	assert.Equal(t, []string{"n1", "n2"}, a.Servers())
	assert.Equal(t, policy.ModeCoarseGrained, a.Mode("n1"))
	assert.Equal(t, match.CoarseGrained{}, a.Matcher("n1"))
	assert.Equal(t, policy.ModeStopAllocation, a.Mode("nope"), "unknown servers get no tasks")
	_, ok := a.Lookup("nope")
	assert.False(t, ok)

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"empty ID", a.AddServer("", tup(1, 1, 1)), policy.ErrInvalidID},
		{"duplicate", a.AddServer("n1", tup(1, 1, 1)), policy.ErrDuplicateServer},
		{"negative capacity", a.AddServer("n3", resource.Tuple{-1}), resource.ErrNegative},
		{"capacity outside the schema", a.AddServer("n3", resource.Tuple{0, 0, 0, 5}), resource.ErrOutsideSchema},
		{"remove unknown", a.RemoveServer("n3"), policy.ErrUnknownServer},
		{"set mode unknown server", a.SetMode("n3", policy.ModeFineGrained), policy.ErrUnknownServer},
		{"set invalid mode", a.SetMode("n1", policy.NodeMode(7)), policy.ErrUnknownMode},
		{"observe unknown server", a.ObserveCompletion("n3", time.Second, time.Second), policy.ErrUnknownServer},
		{"observe zero expected", a.ObserveCompletion("n1", 0, time.Second), policy.ErrInvalidValue},
		{"observe negative observed", a.ObserveCompletion("n1", time.Second, -1), policy.ErrInvalidValue},
		{"set thresholds out of order", a.SetThresholds(policy.Thresholds{0.1, 0.1, 0}), policy.ErrThresholdOrder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.err, tc.want)
			var se *policy.SettingError
			assert.ErrorAs(t, tc.err, &se)
		})
	}
	assert.Equal(t, []string{"n1", "n2"}, a.Servers(), "rejected calls change nothing")
	assert.Equal(t, policy.ModeCoarseGrained, a.Mode("n1"))
	assert.Equal(t, policy.DefaultThresholds, a.Thresholds())
	_, err := a.AdjustServer("n3")
	assert.ErrorIs(t, err, policy.ErrUnknownServer)
	_, err = a.Degrading("n3")
	assert.ErrorIs(t, err, policy.ErrUnknownServer)
	_, err = a.Schedulable("n3", tup(1, 1, 1))
	assert.ErrorIs(t, err, policy.ErrUnknownServer)
	_, err = a.Schedulable("n1", resource.Tuple{0, 0, 0, 1})
	assert.ErrorIs(t, err, resource.ErrOutsideSchema)

	require.NoError(t, a.SetMode("n1", policy.ModeStopAllocation))
	assert.Equal(t, policy.ModeStopAllocation, a.Mode("n1"))
	require.NoError(t, a.RemoveServer("n1"))
	assert.Equal(t, []string{"n2"}, a.Servers())
	th := policy.Thresholds{StopAllocation: 0.5, CoarseGrained: 0.3, FineGrained: 0.1}
	require.NoError(t, a.SetThresholds(th))
	assert.Equal(t, th, a.Thresholds())
}

func TestSchedulable(t *testing.T) {
	a := newAdjuster(t, newConformity(), policy.WithIdleThreshold(resource.Vector{0.1, 0.1}))
	require.NoError(t, a.AddServer("n1", tup(4000, 8000, 100)))
	for _, tc := range []struct {
		mode policy.NodeMode
		idle resource.Tuple
		want bool
	}{
		{policy.ModeFineGrained, tup(400, 800, 0), true},
		{policy.ModeFineGrained, tup(399, 8000, 100), false},
		{policy.ModeCoarseGrained, tup(4000, 8000, 100), true},
		{policy.ModeStopAllocation, tup(4000, 8000, 100), false},
		{policy.ModeFineGrainedNoCompression, resource.Tuple{-5, 8000, 100}, false},
	} {
		require.NoError(t, a.SetMode("n1", tc.mode))
		ok, err := a.Schedulable("n1", tc.idle)
		require.NoError(t, err)
		assert.Equal(t, tc.want, ok, "%v %v", tc.mode, tc.idle)
	}
}

// TestSetCapacity: a server's idle threshold follows its capacity, through Schedulable
// and its mode reference; its mode and score stay; bad input changes nothing.
func TestSetCapacity(t *testing.T) {
	conf := newConformity()
	a := newAdjuster(t, conf, policy.WithIdleThreshold(resource.Vector{0.1, 0.1}))
	require.NoError(t, a.AddServer("n1", tup(4000, 8000, 100)))
	conf.set("n1", resource.Vector{share(0.07, 4000)})
	_, err := a.AdjustServer("n1")
	require.NoError(t, err)
	ref, _ := a.Ref("n1")
	idle := tup(500, 1000, 0)
	ok, err := a.Schedulable("n1", idle)
	require.NoError(t, err)
	assert.True(t, ok)

	require.NoError(t, a.SetCapacity("n1", tup(8000, 8000, 100)))
	ok, err = a.Schedulable("n1", idle)
	require.NoError(t, err)
	assert.False(t, ok, "500 is below 10% of 8000")
	ok, live := ref.Schedulable(idle)
	assert.True(t, live)
	assert.False(t, ok, "the reference reads the new threshold")
	assert.Equal(t, policy.ModeFineGrainedNoCompression, a.Mode("n1"), "the mode stays")
	score, scored := a.Score("n1")
	assert.True(t, scored)
	assert.InDelta(t, 0.07, score, 1e-12)

	assert.ErrorIs(t, a.SetCapacity("n2", tup(1, 1, 1)), policy.ErrUnknownServer)
	assert.Error(t, a.SetCapacity("n1", resource.Tuple{-1}))
	ok, _ = ref.Schedulable(tup(800, 800, 10))
	assert.True(t, ok, "a refused capacity leaves the last")
}

func TestAdjust(t *testing.T) {
	conf := newConformity()
	a := newAdjuster(t, conf)
	capacity := tup(4000, 8000, 100)
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		require.NoError(t, a.AddServer(id, capacity))
	}
	// Alg. 3 on the worst resource's share: a conforms, b's memory is 7% off, c's cpu
	// 15%, d's net 30%; e has no data yet.
	conf.set("a", resource.Vector{share(0.01, 4000), share(0.02, 8000)})
	conf.set("b", resource.Vector{share(0.01, 4000), share(0.07, 8000)})
	conf.set("c", resource.Vector{share(0.15, 4000), 0, share(0.01, 100)})
	conf.set("d", resource.Vector{0, 0, share(0.3, 100)})
	changes := a.Adjust()
	require.Len(t, changes, 3, "a stays FineGrained, e has no data: %v", changes)
	want := map[string]policy.NodeMode{"a": policy.ModeFineGrained, "b": policy.ModeFineGrainedNoCompression, "c": policy.ModeCoarseGrained, "d": policy.ModeStopAllocation, "e": policy.ModeFineGrained}
	for id, m := range want {
		assert.Equal(t, m, a.Mode(id), id)
	}
	assert.Equal(t, "b", changes[0].Server, "ID order")
	assert.Equal(t, policy.ModeFineGrained, changes[0].From)
	assert.InDelta(t, 0.07, changes[0].Score, 1e-12)
	assert.False(t, changes[2].Recycle, "d is stopped but not degrading")
	assert.Equal(t, "d: FineGrained → StopAllocation (score 0.3)", changes[2].String())
	score, ok := a.Score("c")
	assert.True(t, ok)
	assert.InDelta(t, 0.15, score, 1e-12)
	_, ok = a.Score("e")
	assert.False(t, ok)

	// Predictions improve: c goes back to fine-grained.
	conf.set("c", resource.Vector{})
	c, err := a.AdjustServer("c")
	require.NoError(t, err)
	assert.Equal(t, policy.Change{Server: "c", From: policy.ModeCoarseGrained, To: policy.ModeFineGrained}, c)

	// NaN conformity: no decision.
	conf.set("b", resource.Vector{math.NaN()})
	c, err = a.AdjustServer("b")
	require.NoError(t, err)
	assert.Equal(t, c.From, c.To)
	assert.Equal(t, policy.ModeFineGrainedNoCompression, a.Mode("b"))
}

// A mode reference reads what Mode says, through SetMode and Alg. 3's adjustments,
// until its server is removed; a server added again under the same ID has a new one.
func TestModeRef(t *testing.T) {
	conf := newConformity()
	a := newAdjuster(t, conf, policy.WithInitialMode(policy.ModeCoarseGrained))
	_, ok := a.Ref("a")
	assert.False(t, ok, "an untracked server has no reference")
	require.NoError(t, a.AddServer("a", tup(4000, 8000, 100)))
	ref, ok := a.Ref("a")
	require.True(t, ok)
	read := func() policy.NodeMode {
		m, ok := ref.Mode()
		require.True(t, ok)
		assert.Equal(t, a.Mode("a"), m)
		return m
	}
	assert.Equal(t, policy.ModeCoarseGrained, read())
	require.NoError(t, a.SetMode("a", policy.ModeFineGrainedNoCompression))
	assert.Equal(t, policy.ModeFineGrainedNoCompression, read())
	conf.set("a", resource.Vector{share(0.3, 4000)})
	_, err := a.AdjustServer("a")
	require.NoError(t, err)
	assert.Equal(t, policy.ModeStopAllocation, read())
	conf.set("a", resource.Vector{})
	a.Adjust()
	assert.Equal(t, policy.ModeFineGrained, read())

	require.NoError(t, a.RemoveServer("a"))
	m, ok := ref.Mode()
	assert.False(t, ok, "removed: the reference is void")
	assert.Equal(t, policy.ModeStopAllocation, m)
	require.NoError(t, a.AddServer("a", tup(4000, 8000, 100)))
	_, ok = ref.Mode()
	assert.False(t, ok, "the old reference stays void")
	again, ok := a.Ref("a")
	require.True(t, ok)
	m, ok = again.Mode()
	assert.True(t, ok)
	assert.Equal(t, policy.ModeCoarseGrained, m, "the new server starts in the initial mode")
}

func TestDegradationAndRecycle(t *testing.T) {
	conf := newConformity()
	a := newAdjuster(t, conf, policy.WithDegradation(policy.Degradation{Factor: 1.5, Window: 4, MinReports: 2}))
	require.NoError(t, a.AddServer("n1", tup(4000, 8000, 100)))
	require.NoError(t, a.AddServer("n2", tup(4000, 8000, 100)))
	degrading := func(id string) bool {
		d, err := a.Degrading(id)
		require.NoError(t, err)
		return d
	}
	// Planned compression (within the 10% limit) is not degradation.
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 11*time.Second))
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 10*time.Second))
	assert.False(t, degrading("n1"))
	// One report is not enough.
	require.NoError(t, a.ObserveCompletion("n2", 10*time.Second, 30*time.Second))
	assert.False(t, degrading("n2"), "fewer than MinReports")
	// The window keeps the last four: 1.1, 1.0, 2.5, 2.5 → mean 1.775.
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 25*time.Second))
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 25*time.Second))
	assert.True(t, degrading("n1"))
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 10*time.Second)) // drops 1.1: 1.0, 2.5, 2.5, 1.0
	assert.True(t, degrading("n1"))
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 10*time.Second)) // 2.5, 2.5, 1.0, 1.0
	assert.True(t, degrading("n1"), "mean exactly 1.75")
	require.NoError(t, a.ObserveCompletion("n1", 10*time.Second, 10*time.Second)) // 2.5, 1.0, 1.0, 1.0
	assert.False(t, degrading("n1"))
	require.NoError(t, a.ObserveCompletion("n1", 1*time.Second, 10*time.Second)) // 1.0, 1.0, 1.0, 10
	assert.True(t, degrading("n1"))

	// Degrading but still conforming: no recycle (Alg. 3 recycles only stopped servers).
	conf.set("n1", resource.Vector{})
	c, err := a.AdjustServer("n1")
	require.NoError(t, err)
	assert.False(t, c.Recycle)
	// Stopped and degrading: recycle, once.
	conf.set("n1", resource.Vector{share(0.5, 4000)})
	changes := a.Adjust()
	require.Len(t, changes, 1)
	// The window was 1.0, 1.0, 1.0, 10: its tasks took 3.25 times as long as expected.
	assert.Equal(t, policy.Change{Server: "n1", From: policy.ModeFineGrained, To: policy.ModeStopAllocation, Score: 0.5, Recycle: true, Stretch: 3.25}, changes[0])
	assert.Contains(t, changes[0].String(), "recycle (tasks 3.25× as long as expected)")
	assert.False(t, degrading("n1"), "reports cleared after the signal")
	assert.Empty(t, a.Adjust(), "no repeated signal")
}

// Schedulers read modes while adjustments run (go test -race checks the locking).
func TestAdjusterConcurrent(t *testing.T) {
	conf := newConformity()
	a := newAdjuster(t, conf)
	ids := []string{"n0", "n1", "n2", "n3"}
	for _, id := range ids {
		require.NoError(t, a.AddServer(id, tup(4000, 8000, 100)))
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id := ids[(g+i)%len(ids)]
				switch g {
				case 0:
					conf.set(id, resource.Vector{share(float64(i%30)/100, 4000)})
					a.Adjust()
				case 1:
					_, _ = a.AdjustServer(id)
					_ = a.ObserveCompletion(id, time.Second, 2*time.Second)
				default:
					assert.True(t, a.Mode(id).Valid())
					_, err := a.Schedulable(id, tup(4000, 8000, 100))
					assert.NoError(t, err)
					_, _ = a.Degrading(id)
					_, _ = a.Score(id)
				}
			}
		}(g)
	}
	wg.Wait()
	for _, id := range ids {
		_, ok := a.Lookup(id)
		assert.True(t, ok)
	}
}

func TestReductions(t *testing.T) {
	capacity := tup(4000, 8000, 0)
	assert.InDelta(t, 0.25, policy.WorstShare(resource.Vector{1000 * 1000, 4, 1e12}, capacity), 1e-12, "√1e6/4000; net has no capacity")
	assert.Zero(t, policy.WorstShare(resource.Vector{-5}, capacity))
	assert.True(t, math.IsNaN(policy.WorstShare(resource.Vector{0, math.NaN()}, capacity)))
	assert.Equal(t, 7.0, policy.WorstRaw(resource.Vector{3, 7, 100}, capacity))
	assert.True(t, math.IsNaN(policy.WorstRaw(resource.Vector{math.NaN()}, capacity)))

	// A custom reduction (e.g. for a source that already normalises).
	conf := newConformity()
	a := newAdjuster(t, conf, policy.WithReduction(policy.WorstRaw))
	require.NoError(t, a.AddServer("n1", capacity))
	conf.set("n1", resource.Vector{0.12})
	c, err := a.AdjustServer("n1")
	require.NoError(t, err)
	assert.Equal(t, policy.ModeCoarseGrained, c.To)
}

func TestSettingError(t *testing.T) {
	err := policy.WithPenalty(-1)
	_, e := policy.NewCompression(schema, nil, err)
	assert.EqualError(t, e, "policy: contention penalty = -1: invalid value")
	assert.True(t, errors.Is(e, policy.ErrInvalidValue))
	_, e = policy.NewCompression(schema, nil, policy.WithPenalty(1), nil)
	assert.EqualError(t, e, "policy: option 1 = nil: invalid value")
}
