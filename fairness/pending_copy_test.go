package fairness_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
)

// PendingIndex.Delete says it "fails, changing nothing, on an entry
// this index does not hold". A copy of an indexed entry (an owner copying the record
// the entry is embedded in) is not held, yet Delete accepts it and takes the original
// out of the trees, leaving the original marked Indexed: Len then drifts and the
// original can neither be deleted nor inserted again.
func TestPendingIndexDeleteRefusesACopy(t *testing.T) {
	p := fairness.NewPendingIndex[int]()
	held := &fairness.PendingEntry[int]{ID: "t", Job: "j", Nodes: []string{"n"}, Racks: []string{"r"}}
	other := &fairness.PendingEntry[int]{ID: "u", Job: "j"}
	require.NoError(t, p.Insert(held))
	require.NoError(t, p.Insert(other))

	cp := *held // a copy: not the entry the index holds
	assert.ErrorIs(t, p.Delete(&cp), fairness.ErrUnknownTask, "a copy of an indexed entry is not held")

	// Whatever Delete answered, the index must still hold the original.
	assert.Equal(t, 2, p.JobLen("j"), "the original left the job's tree")
	e, _, ok := p.First("j", "n", "r", fairness.NodeLocal)
	assert.True(t, ok && e == held, "the original is no longer found on its node")
	assert.True(t, held.Indexed())
	require.NoError(t, p.Delete(held), "the original is indexed: Delete must take it")
	require.NoError(t, p.Delete(other))
	assert.Equal(t, 0, p.Len(), "Len drifted")
	assert.Equal(t, 0, p.JobLen("j"))
}
