package predict_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// TestObservationPlausible: an observation is refused when its schema is not the
// scheduler's or its peak (of the profile, else of the series) is beyond the node's
// capacity; at capacity it is plausible.
func TestObservationPlausible(t *testing.T) {
	capacity := std.MustTuple(4000, 8<<30)
	series := func(cpu int64) predict.Series {
		return predict.Series{Samples: []predict.Sample{{At: 0, Usage: std.MustTuple(100, 1<<30)}, {At: time.Second, Usage: std.MustTuple(cpu, 1<<30)}}, End: 2 * time.Second}
	}
	other := resource.MustSchema(resource.CPU)
	for _, tc := range []struct {
		name string
		obs  predict.Observation
		want error
	}{
		{"profile within", predict.Observation{Profile: prof(t, [3]int64{10, 4000, 8 << 30})}, nil},
		{"profile above on memory", predict.Observation{Profile: prof(t, [3]int64{10, 1000, 9 << 30})}, predict.ErrImplausible},
		{"series within", predict.Observation{Series: series(4000)}, nil},
		{"series above on cpu", predict.Observation{Series: series(4001)}, predict.ErrImplausible},
		{"empty", predict.Observation{}, nil},
		{"another schema", predict.Observation{Profile: stage.MustProfile(other, stage.Stage{Duration: time.Second, Demand: other.MustTuple(1)})}, resource.ErrSchemaMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.obs.Plausible(std, capacity)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
		})
	}
}
