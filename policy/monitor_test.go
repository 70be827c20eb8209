package policy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

func newMonitor(t *testing.T) (*policy.Monitor, *policy.Adjuster, *predict.ConformityLog) {
	t.Helper()
	log, err := predict.NewConformityLog(1)
	require.NoError(t, err)
	adj, err := policy.NewAdjuster(schema, log)
	require.NoError(t, err)
	require.NoError(t, adj.AddServer("s", tup(1000, 1000, 1000)))
	m, err := policy.NewMonitor(schema, adj, log, resource.Uniform(schema.All(), 0.1))
	require.NoError(t, err)
	return m, adj, log
}

// TestMonitorReport: a report the prediction matched keeps the mode; one whose usage
// ran far above the prediction on a busy server degrades it (Alg. 3); bad reports
// record nothing.
func TestMonitorReport(t *testing.T) {
	busy := func(actual, predicted int64) []predict.Interval {
		return []predict.Interval{{Duration: time.Second, Actual: tup(actual, 100, 0), Predicted: tup(predicted, 100, 0), Idle: tup(0, 0, 0)}}
	}
	t.Run("conforming", func(t *testing.T) {
		m, adj, log := newMonitor(t)
		c, err := m.Report("s", tup(1000, 1000, 1000), busy(500, 500))
		require.NoError(t, err)
		assert.Equal(t, policy.ModeFineGrained, c.To)
		assert.Equal(t, policy.ModeFineGrained, adj.Mode("s"))
		assert.Equal(t, 1, log.Len("s"))
	})
	t.Run("far above its prediction", func(t *testing.T) {
		m, adj, _ := newMonitor(t)
		c, err := m.Report("s", tup(1000, 1000, 1000), busy(1000, 100))
		require.NoError(t, err)
		assert.Equal(t, policy.ModeFineGrained, c.From)
		assert.NotEqual(t, policy.ModeFineGrained, c.To, "score %v", c.Score)
		assert.Equal(t, c.To, adj.Mode("s"))
	})
	for _, tc := range []struct {
		name   string
		server string
		window []predict.Interval
		want   error
	}{
		{"unknown server", "x", busy(500, 500), policy.ErrUnknownServer},
		{"empty window", "s", nil, predict.ErrNoSamples},
		{"bad duration", "s", []predict.Interval{{Actual: tup(1, 1, 1)}}, predict.ErrBadDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, adj, log := newMonitor(t)
			_, err := m.Report(tc.server, tup(1000, 1000, 1000), tc.window)
			require.ErrorIs(t, err, tc.want)
			assert.Zero(t, log.Len("s"), "nothing recorded")
			assert.Zero(t, log.Len("x"), "nothing recorded")
			assert.Equal(t, policy.ModeFineGrained, adj.Mode("s"))
		})
	}
}

func TestNewMonitorRefuses(t *testing.T) {
	log, err := predict.NewConformityLog(1)
	require.NoError(t, err)
	other, err := predict.NewConformityLog(1)
	require.NoError(t, err)
	adj, err := policy.NewAdjuster(schema, log)
	require.NoError(t, err)
	idle := resource.Uniform(schema.All(), 0.1)
	for _, tc := range []struct {
		name string
		make func() (*policy.Monitor, error)
		want error
	}{
		{"nil schema", func() (*policy.Monitor, error) { return policy.NewMonitor(nil, adj, log, idle) }, resource.ErrSchemaMismatch},
		{"nil adjuster", func() (*policy.Monitor, error) { return policy.NewMonitor(schema, nil, log, idle) }, policy.ErrInvalidValue},
		{"nil log", func() (*policy.Monitor, error) { return policy.NewMonitor(schema, adj, nil, idle) }, policy.ErrNilConformity},
		{"another log", func() (*policy.Monitor, error) { return policy.NewMonitor(schema, adj, other, idle) }, policy.ErrInvalidValue},
		{"threshold above 1", func() (*policy.Monitor, error) {
			return policy.NewMonitor(schema, adj, log, resource.Uniform(schema.All(), 1.5))
		}, resource.ErrInvalidRatio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.make()
			require.ErrorIs(t, err, tc.want)
			assert.Nil(t, m)
		})
	}
}
