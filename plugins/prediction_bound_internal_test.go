package plugins

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// The demand cache keeps at most maxKeyDemands keys (it starts afresh
// past that), and a key it dropped is served its estimate's hold, built again. No
// other test notices an unbounded cache.
func TestPredictionCacheIsBounded(t *testing.T) {
	schema, est, st, p := predictionFixture(t, predict.WithBaseWeight(1), predict.WithMaxKeys(2*maxKeyDemands))
	prof := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(500, 1<<30)})
	var first *cluster.TaskInfo
	for i := range maxKeyDemands + 10 {
		key := predict.Key{Logic: fmt.Sprint("k", i), InputSize: 1}
		require.NoError(t, est.Observe(key, predict.Observation{Profile: prof}))
		id := fmt.Sprint("t", i)
		require.NoError(t, st.Submit(cluster.TaskSpec{ID: id, Job: "j", Key: key, Request: schema.MustTuple(1, 1)}))
		task, _ := st.Task(id)
		if i == 0 {
			first = task
		}
		d := p.Demand(nil, task)
		require.Equal(t, 2, d.Hold.Len(), "task %s holds its memory after its estimate", id)
		require.LessOrEqual(t, len(p.keys.m), maxKeyDemands, "after %d keys", i+1)
	}
	d := p.Demand(nil, first)
	assert.Equal(t, schema.MustTuple(0, 1<<30), d.Hold.Stage(1).Demand, "a dropped key's hold is built again")
}
