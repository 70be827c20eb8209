package fairness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
)

// A queue's standing is its parent's policy's view of it: the key the tree orders it
// by, its share used and wanted in the policy's unit, and whether it is at its max.
func TestStanding(t *testing.T) {
	for _, tc := range []struct {
		name         string
		policy       fairness.Policy
		opts         []fairness.Option
		want         fairness.OrderKey
		used, wanted float64
		atMax        bool
	}{
		// usage ⟨30, 9⟩ of ⟨100, 100⟩: dominant 0.3, next 0.09; one task of ⟨10, 3⟩ pending:
		// wanted 0.4, and the min share 0.6 counts as min(0.6, 0.4) = 0.4.
		{"DRF", fairness.DRF{}, nil, fairness.OrderKey{1, 0.3, 0.09}, 0.3, 0.4, false},
		{"DRF weighted", fairness.DRF{}, []fairness.Option{fairness.Weight(2)}, fairness.OrderKey{1, 0.15, 0.045}, 0.3, 0.4, false},
		{"DRF below min", fairness.DRF{}, []fairness.Option{fairness.MinShare(0.6)}, fairness.OrderKey{0, 0.75, 0.09}, 0.3, 0.4, false},
		{"DRF at max", fairness.DRF{}, []fairness.Option{fairness.MaxShare(0.3)}, fairness.OrderKey{1, 0.3, 0.09}, 0.3, 0.4, true},
		{"Fair", fairness.Fair{}, []fairness.Option{fairness.Weight(3)}, fairness.OrderKey{1, 1}, 3, 4, false},
		{"Fair at max", fairness.Fair{}, []fairness.Option{fairness.MaxShare(3)}, fairness.OrderKey{1, 3}, 3, 4, true},
		{"Capacity guaranteed", fairness.Capacity{}, []fairness.Option{fairness.MinShare(0.6)}, fairness.OrderKey{0, 0.5}, 0.3, 0.4, false},
		{"Capacity", fairness.Capacity{}, nil, fairness.OrderKey{1, 0.3}, 0.3, 0.4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(100, 100), fairness.WithPolicy(tc.policy))
			require.NoError(t, err)
			require.NoError(t, tree.AddQueue("", "q", tc.opts...))
			require.NoError(t, tree.AddJob("q", "j"))
			require.NoError(t, tree.AddPending("j", 4, cpuMem.MustTuple(40, 12)))
			for range 3 {
				require.NoError(t, tree.Start("j", cpuMem.MustTuple(10, 3), cpuMem.MustTuple(10, 3)))
			}
			st, err := tree.Standing("q")
			require.NoError(t, err)
			for i := range st.Key {
				assert.InDelta(t, tc.want[i], st.Key[i], 1e-9, "key[%d]", i)
			}
			assert.InDelta(t, tc.used, st.Used, 1e-9)
			assert.InDelta(t, tc.wanted, st.Wanted, 1e-9)
			assert.Equal(t, tc.atMax, st.AtMax)
			_, next := tree.Next()
			assert.Equal(t, !tc.atMax, next, "a queue at its max is offered nothing")
		})
	}
}

func TestStandingRefusesRootAndUnknown(t *testing.T) {
	tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(100, 100))
	require.NoError(t, err)
	_, err = tree.Standing("")
	assert.ErrorIs(t, err, fairness.ErrInvalidID)
	_, err = tree.Standing("nope")
	assert.ErrorIs(t, err, fairness.ErrUnknownQueue)
}

func TestQueuesListsChildQueues(t *testing.T) {
	tree, err := fairness.NewTree(cpuMem, cpuMem.MustTuple(100, 100))
	require.NoError(t, err)
	require.NoError(t, tree.AddQueue("", "b"))
	require.NoError(t, tree.AddQueue("", "a"))
	require.NoError(t, tree.AddQueue("a", "a1"))
	require.NoError(t, tree.AddJob("", "j"))
	var ids []string
	require.NoError(t, tree.Queues("", func(id string) bool { ids = append(ids, id); return true }))
	assert.Equal(t, []string{"b", "a"}, ids, "queues only, in the order added")
	ids = nil
	require.NoError(t, tree.Queues("a", func(id string) bool { ids = append(ids, id); return false }))
	assert.Equal(t, []string{"a1"}, ids)
	assert.ErrorIs(t, tree.Queues("nope", func(string) bool { return true }), fairness.ErrUnknownQueue)
}
