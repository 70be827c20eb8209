package framework

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/resource"
)

// TestSkipJobRecordsAsSkip checks Decision.skipJob, the walk's short record of a job
// passed over (Cycle.SkipJobFor), against Decision.skip of the Skip it stands for: the
// same count, tally and details, with no details wanted and with fewer details wanted
// than skips made.
func TestSkipJobRecordsAsSkip(t *testing.T) {
	st, err := cluster.New(resource.Standard())
	require.NoError(t, err)
	var jobs []*cluster.JobInfo
	for i := range 3 {
		id := fmt.Sprintf("j%d", i)
		require.NoError(t, st.AddJob(cluster.JobSpec{ID: id}))
		j, ok := st.Job(id)
		require.True(t, ok)
		jobs = append(jobs, j)
	}
	// NoRoom and OverCapacity count a match result's dimension when there is one: a
	// job passed over before a task was chosen has none, and counts its plugin.
	skips := []struct {
		reason Reason
		plugin string
	}{
		{LocalityWait, ""}, {NoClassFits, "DemandClasses"}, {AheadOfOrder, ""},
		{NoRoom, "Some"}, {OverCapacity, ""}, {LocalityWait, ""}, {PluginRefused, "Other"},
	}
	for _, details := range []int{0, 1, 3, len(skips) + 1} {
		t.Run(fmt.Sprintf("details=%d", details), func(t *testing.T) {
			long, short := Decision{details: details}, Decision{details: details}
			for i, sk := range skips {
				j := jobs[i%len(jobs)]
				long.skip(&Skip{Job: j.ID(), Reason: sk.reason, Plugin: sk.plugin})
				short.skipJob(j, sk.reason, sk.plugin)
			}
			assert.Equal(t, long, short)
			assert.Equal(t, len(skips), short.Skipped)
			assert.Len(t, short.Skips, min(details, len(skips)))
		})
	}
}
