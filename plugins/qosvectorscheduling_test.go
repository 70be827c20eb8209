package plugins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/resource"
)

// The pass's own setters refuse what they cannot use and change nothing; what was set
// for a job or node is read back as the next choice sees it.
func TestQoSVectorSetters(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	st, err := cluster.New(schema)
	require.NoError(t, err)
	require.NoError(t, st.AddJob(cluster.JobSpec{ID: "j"}))
	require.NoError(t, st.AddNode(cluster.NodeSpec{ID: "n", Capacity: schema.MustTuple(1000, 1<<30)}))
	j, _ := st.Job("j")
	n, _ := st.Node("n")
	p := plugins.NewQoSVectorScheduling()
	assert.Equal(t, "QoSVectorScheduling", p.Name())

	good := plugins.QoSVectorDemand{Req: match.QoSVector{1, 2, 3, 4, 5}, Weights: match.Weights{0, 0, 0, 0, 1}, Need: match.Hard{Memory: 1, Disk: 2}}
	supply := plugins.QoSVectorSupply{Res: match.QoSVector{10, 9, 8, 7, 6}, Remaining: match.Hard{Memory: 5, Disk: 6}}
	require.NoError(t, good.Validate())
	require.NoError(t, supply.Validate())
	require.NoError(t, p.SetDemand(j, good))
	require.NoError(t, p.SetSupply(n, supply))

	for name, tc := range map[string]struct {
		err      error
		sentinel error
	}{
		"nil job":           {p.SetDemand(nil, good), cluster.ErrUnknownJob},
		"nil node":          {p.SetSupply(nil, supply), cluster.ErrUnknownNode},
		"zero demand":       {p.SetDemand(j, plugins.QoSVectorDemand{}), match.ErrBadVector},
		"zero weights":      {p.SetDemand(j, plugins.QoSVectorDemand{Req: good.Req}), match.ErrBadWeights},
		"zero supply":       {p.SetSupply(n, plugins.QoSVectorSupply{}), match.ErrBadVector},
		"demand's Validate": {plugins.QoSVectorDemand{}.Validate(), match.ErrBadVector},
		"supply's Validate": {plugins.QoSVectorSupply{Res: supply.Res, Remaining: match.Hard{Memory: -1}}.Validate(), match.ErrBadHard},
	} {
		require.Error(t, tc.err, name)
		assert.ErrorIs(t, tc.err, tc.sentinel, name)
		assert.Regexp(t, "^plugins: ", tc.err.Error(), name)
	}
	got, ok := p.Demand(j)
	assert.True(t, ok)
	assert.Equal(t, good, got, "a refused call changes nothing")
	sup, ok := p.Supply(n)
	assert.True(t, ok)
	assert.Equal(t, supply, sup)
	assert.Zero(t, p.Priority(j))

	// Another job or node of the same ID has nothing set.
	p.Forget(j)
	_, ok = p.Demand(j)
	assert.False(t, ok)
	_, err = st.RemoveNode("n")
	require.NoError(t, err)
	require.NoError(t, st.AddNode(cluster.NodeSpec{ID: "n", Capacity: schema.MustTuple(1000, 1<<30)}))
	m, _ := st.Node("n")
	_, ok = p.Supply(m)
	assert.False(t, ok)
}
