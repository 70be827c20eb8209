package finegrain_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/speculate"
)

// TestPullStrategies: each strategy puts its own pass first among the Pass plugins,
// names itself, and refuses bad arguments with ErrInvalid, changing nothing.
func TestPullStrategies(t *testing.T) {
	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	for _, tc := range []struct {
		strategy finegrain.PullStrategy
		name     string
		pass     string
	}{
		{finegrain.PullLocalityClock(fairness.DefaultW1, fairness.DefaultW2), "locality clock", "DelayScheduling"},
		{finegrain.PullDelayScheduling(), "delay scheduling", "DelayScheduling"},
		{finegrain.PullDelayScheduling(fairness.WithSkips(3, 5)), "delay scheduling", "DelayScheduling"},
		{finegrain.PullFairnessOrder(), "fairness order", "DelayScheduling"},
		{finegrain.PullTetris(plugins.DefaultTetrisConfig()), "Tetris", "Tetris"},
		{finegrain.PullPreReleaseList(placer), "pre-release list", "PreReleaseList"},
		{finegrain.PullQoSVector(), "QoS vector", "QoSVectorScheduling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.name, tc.strategy.String())
			s := newScheduler(t, finegrain.WithPullStrategy(tc.strategy))
			assert.Equal(t, []string{tc.pass}, s.Plugins()["Pass"])
		})
	}
	// The default is the clock rule: the same plugins as PullLocalityClock with the
	// default waits.
	assert.Equal(t, newScheduler(t).Plugins(), newScheduler(t, finegrain.WithPullStrategy(finegrain.PullLocalityClock(fairness.DefaultW1, fairness.DefaultW2))).Plugins())

	badTetris := plugins.DefaultTetrisConfig()
	badTetris.Fairness = 1.5
	for name, bad := range map[string]finegrain.PullStrategy{
		"zero":                   {},
		"negative W1":            finegrain.PullLocalityClock(-time.Second, 0),
		"negative W2":            finegrain.PullLocalityClock(0, -time.Second),
		"nil delay option":       finegrain.PullDelayScheduling(nil),
		"negative skips":         finegrain.PullDelayScheduling(fairness.WithSkips(-1, 0)),
		"Tetris knob":            finegrain.PullTetris(badTetris),
		"nil pre-release placer": finegrain.PullPreReleaseList(nil),
	} {
		t.Run("refused/"+name, func(t *testing.T) {
			_, err := finegrain.New(schema, finegrain.WithPullStrategy(bad))
			require.ErrorIs(t, err, finegrain.ErrInvalid)
		})
	}
}

// TestOffSwitches: a feature is switched off by its own option with its zero value,
// whatever switched it on before.
func TestOffSwitches(t *testing.T) {
	late, err := speculate.NewLATE()
	require.NoError(t, err)
	on := newScheduler(t,
		finegrain.WithSpeculation(late),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}),
		finegrain.WithFutureStart(true),
		finegrain.WithMaxPerHeartbeat(3),
	).Plugins()
	assert.Contains(t, on["Pass"], "Speculation")
	assert.Contains(t, on["Pass"], "Preemption")
	assert.Contains(t, on["PostFilter"], "FutureStart")
	assert.Contains(t, on["NodeGate"], "HeartbeatCap")
	assert.Contains(t, on["Filter"], "QoS")

	off := newScheduler(t,
		finegrain.WithSpeculation(late), finegrain.WithSpeculation(nil),
		finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}), finegrain.WithPreemption(finegrain.PreemptionConfig{}),
		finegrain.WithBooking(time.Second), finegrain.WithFutureStart(false),
		finegrain.WithMaxPerHeartbeat(3), finegrain.WithMaxPerHeartbeat(0),
		finegrain.WithQoS(nil),
	).Plugins()
	assert.NotContains(t, off["Pass"], "Speculation")
	assert.NotContains(t, off["Pass"], "Preemption")
	assert.NotContains(t, off["Pass"], "Booking")
	assert.NotContains(t, off["PostFilter"], "FutureStart")
	assert.NotContains(t, off["NodeGate"], "HeartbeatCap")
	assert.NotContains(t, off["Filter"], "QoS")

	// The packing bound: +Inf switches it off; NaN and negative bounds are refused.
	newScheduler(t, finegrain.WithPackingBound(math.Inf(1)))
	for _, b := range []float64{math.NaN(), -0.1, math.Inf(-1)} {
		_, err := finegrain.New(schema, finegrain.WithPackingBound(b))
		assert.ErrorIs(t, err, finegrain.ErrInvalid, "bound %v", b)
	}
}

// FuzzPullLocalityClock: any pair of waits gives a scheduler or ErrInvalid, never a
// panic; waits ≥ 0 whose sum fits a time.Duration are accepted.
func FuzzPullLocalityClock(f *testing.F) {
	f.Add(int64(0), int64(0))
	f.Add(int64(fairness.DefaultW1), int64(fairness.DefaultW2))
	f.Add(int64(-1), int64(5))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, w1, w2 int64) {
		_, err := finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullLocalityClock(time.Duration(w1), time.Duration(w2))))
		if w1 >= 0 && w2 >= 0 && w1 <= math.MaxInt64-w2 {
			require.NoError(t, err)
			return
		}
		require.ErrorIs(t, err, finegrain.ErrInvalid)
	})
}
