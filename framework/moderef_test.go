package framework_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
)

// ModeGate and StageMatch keep mode references by node index,
// and a node removed from the state gives its index to the next node added. When the
// adjuster still tracks the removed node (the state and the adjuster are the
// embedder's to keep in step; here the server stays), the reference kept for the old
// node must not answer for the new one: the filters check that it is for the same
// *cluster.NodeInfo. No other test fails without that check (the Scheduler removes the
// server too, which voids the reference).
func TestModeReferencesFollowTheNodeNotItsIndex(t *testing.T) {
	f := newFixture(t, nodeSpec("a", 4000, 8))
	require.NoError(t, f.adj.AddServer("b", capacity(4000, 8)))
	require.NoError(t, f.adj.SetMode("a", policy.ModeStopAllocation))
	require.NoError(t, f.adj.SetMode("b", policy.ModeFineGrained))
	gate, err := plugins.NewModeGate(f.adj)
	require.NoError(t, err)
	fw := f.framework(t, with(f.base(t), gate))

	tk := f.submit(t, "j", "t", 1000, 1)
	_, err = fw.Place(tk, 0)
	perr := placementError(t, err)
	assert.Equal(t, framework.PolicyStop, perr.Reason, "node a stops allocation")
	a := f.node(t, "a")

	_, err = f.st.RemoveNode("a") // the adjuster keeps server a, in StopAllocation
	require.NoError(t, err)
	require.NoError(t, f.st.AddNode(nodeSpec("b", 4000, 8)))
	b := f.node(t, "b")
	require.Equal(t, a.Index(), b.Index(), "b takes a's index")

	as, err := fw.Place(tk, 0)
	require.NoError(t, err, "node b is in FineGrained mode")
	assert.Equal(t, "b", as.Node)
}
