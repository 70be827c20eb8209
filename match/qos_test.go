package match_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
)

func TestQoSVectorErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		v     []float64
		field string
	}{
		{"too short", []float64{1, 2, 3, 4}, "qos vector length"},
		{"too long", []float64{1, 2, 3, 4, 5, 6}, "qos vector length"},
		{"nil", nil, "qos vector length"},
		{"below 1", []float64{1, 0.5, 3, 4, 5}, "qos[1] (memory)"},
		{"above 10", []float64{1, 2, 3, 4, 10.5}, "qos[4] (price)"},
		{"NaN", []float64{math.NaN(), 2, 3, 4, 5}, "qos[0] (cpu)"},
		{"infinite", []float64{1, 2, math.Inf(1), 4, 5}, "qos[2] (network)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := match.NewQoSVector(tc.v...)
			assert.ErrorIs(t, err, match.ErrBadVector)
			var fe *match.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Zero(t, v)
		})
	}
	v, err := match.NewQoSVector(1, 10, 5.5, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, match.QoSVector{1, 10, 5.5, 2, 3}, v)
}

func TestWeightsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		k     []float64
		field string
	}{
		{"too short", []float64{0.5, 0.5}, "weights length"},
		{"too long", []float64{0.2, 0.2, 0.2, 0.2, 0.2, 0}, "weights length"},
		{"negative", []float64{1.2, -0.2, 0, 0, 0}, "weights[1] (memory)"},
		{"NaN", []float64{math.NaN(), 1, 0, 0, 0}, "weights[0] (cpu)"},
		{"infinite", []float64{0, 0, 0, math.Inf(1), 0}, "weights[3] (disk)"},
		{"sum below 1", []float64{0.2, 0.2, 0.2, 0.2, 0.1}, "sum of weights"},
		{"sum above 1", []float64{0.2, 0.2, 0.2, 0.2, 0.3}, "sum of weights"},
		{"all zero", []float64{0, 0, 0, 0, 0}, "sum of weights"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := match.NewWeights(tc.k...)
			assert.ErrorIs(t, err, match.ErrBadWeights)
			var fe *match.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Zero(t, w)
		})
	}
	w, err := match.NewWeights(0.1, 0.2, 0.3, 0.4+match.WeightTolerance/2, 0)
	require.NoError(t, err, "within tolerance")
	assert.Equal(t, match.FeatureDisk, w.Class())
}

func TestClasses(t *testing.T) {
	w := match.Weights{0.3, 0.3, 0.1, 0.1, 0.2}
	assert.Equal(t, match.FeatureCPU, w.Class(), "ties go to the earlier feature")
	v := match.QoSVector{4, 9, 9, 1, 6}
	for rank, want := range []match.Feature{match.FeatureMemory, match.FeatureNetwork, match.FeaturePrice, match.FeatureCPU, match.FeatureDisk} {
		got, err := v.Class(rank + 1)
		require.NoError(t, err)
		assert.Equal(t, want, got, "rank %d", rank+1)
	}
	for _, rank := range []int{0, -1, 6} {
		_, err := v.Class(rank)
		assert.ErrorIs(t, err, match.ErrBadRank)
	}
	assert.Equal(t, "price", match.FeaturePrice.String())
	assert.Equal(t, "Feature(7)", match.Feature(7).String())
}

func TestQoSValues(t *testing.T) {
	req := match.QoSVector{2, 4, 1, 5, 10}
	res := match.QoSVector{4, 4, 3, 5, 5}
	k := match.Weights{0.5, 0.2, 0.1, 0.1, 0.1}
	// eq. 4: 4/2×0.5 + 4/4×0.2 + 3/1×0.1 + 5/5×0.1 + 5/10×0.1
	assert.InDelta(t, 1+0.2+0.3+0.1+0.05, match.Value(req, res, k), 1e-12)

	for _, tc := range []struct {
		name      string
		need, rem match.Hard
		value     float64
		met       bool
	}{
		{"both fit with room", match.Hard{Memory: 2, Disk: 3}, match.Hard{Memory: 5, Disk: 10}, 3 * 7, true},
		{"memory short", match.Hard{Memory: 6, Disk: 3}, match.Hard{Memory: 5, Disk: 10}, -7, false},
		{"both short: the printed product is positive, the Reading says not met", match.Hard{Memory: 6, Disk: 11}, match.Hard{Memory: 5, Disk: 10}, 0, false},
		{"exact fit: product 0", match.Hard{Memory: 5, Disk: 3}, match.Hard{Memory: 5, Disk: 10}, 0, false},
		{"bytes do not overflow", match.Hard{Memory: 1 << 40, Disk: 1 << 41}, match.Hard{Memory: 1 << 62, Disk: 1 << 62}, float64(1<<62-1<<40) * float64(1<<62-1<<41), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, met := match.MustValue(tc.need, tc.rem)
			assert.Equal(t, tc.met, met)
			assert.Equal(t, tc.value, v)
			assert.Equal(t, met, v > 0, "must_value ≤ 0 exactly when not met")
		})
	}
	assert.Equal(t, 3.0, match.FinalValue(1.7, false, 3), "eq. 6: priority alone")
	assert.Equal(t, 4.7, match.FinalValue(1.7, true, 3), "eq. 6: value + priority")
}

func qosJob(id string, k match.Weights, needMem int64) match.QoSJob {
	return match.QoSJob{ID: id, Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: k, Need: match.Hard{Memory: needMem, Disk: 1}}
}

var (
	cpuHeavy = match.Weights{0.6, 0.1, 0.1, 0.1, 0.1}
	memHeavy = match.Weights{0.1, 0.6, 0.1, 0.1, 0.1}
	netHeavy = match.Weights{0.1, 0.1, 0.6, 0.1, 0.1}
)

func TestAgingEvaluate(t *testing.T) {
	var a match.Aging
	node := match.QoSNode{Res: match.QoSVector{10, 5, 5, 5, 5}, Remaining: match.Hard{Memory: 100, Disk: 100}}
	big := qosJob("big", cpuHeavy, 500)
	for want := 0; want < 3; want++ {
		final, met, err := a.Evaluate(big, node)
		require.NoError(t, err)
		assert.False(t, met)
		assert.Equal(t, float64(want), final, "eq. 6: the priority before the bump")
		assert.Equal(t, want+1, a.Priority("big"))
	}
	small := qosJob("small", cpuHeavy, 10)
	final, met, err := a.Evaluate(small, node)
	require.NoError(t, err)
	assert.True(t, met)
	assert.InDelta(t, match.Value(small.Req, node.Res, small.Weights), final, 1e-12)
	assert.Zero(t, a.Priority("small"), "met: no bump")
	a.Forget("big")
	assert.Zero(t, a.Priority("big"))

	// Bad input changes nothing.
	bad := big
	bad.Req[0] = 0
	_, _, err = a.Evaluate(bad, node)
	assert.ErrorIs(t, err, match.ErrBadVector)
	_, _, err = a.Evaluate(big, match.QoSNode{Res: node.Res, Remaining: match.Hard{Memory: -1}})
	assert.ErrorIs(t, err, match.ErrBadHard)
	assert.Zero(t, a.Priority("big"))
}

func TestAgingPick(t *testing.T) {
	node := match.QoSNode{Res: match.QoSVector{3, 9, 7, 1, 1}, Remaining: match.Hard{Memory: 100, Disk: 100}} // memory, then network
	t.Run("the node's largest feature picks the sub-queue", func(t *testing.T) {
		var a match.Aging
		jobs := []match.QoSJob{qosJob("c", cpuHeavy, 1), qosJob("m1", memHeavy, 1), qosJob("m2", memHeavy, 1)}
		jobs[2].Req = match.QoSVector{5, 3, 5, 5, 5} // asks less memory: better value
		i, err := a.Pick(node, jobs)
		require.NoError(t, err)
		assert.Equal(t, 2, i)
	})
	t.Run("empty sub-queue: the 2nd largest feature", func(t *testing.T) {
		var a match.Aging
		i, err := a.Pick(node, []match.QoSJob{qosJob("c", cpuHeavy, 1), qosJob("n", netHeavy, 1)})
		require.NoError(t, err)
		assert.Equal(t, 1, i)
	})
	t.Run("only cpu jobs: the 4th", func(t *testing.T) {
		var a match.Aging
		i, err := a.Pick(node, []match.QoSJob{qosJob("c", cpuHeavy, 1)})
		require.NoError(t, err)
		assert.Equal(t, 0, i)
	})
	t.Run("hard QoS not met: nothing picked, priority aged, then it wins", func(t *testing.T) {
		var a match.Aging
		jobs := []match.QoSJob{qosJob("big", memHeavy, 500), qosJob("ok", memHeavy, 1)}
		i, err := a.Pick(node, jobs[:1])
		require.NoError(t, err)
		assert.Equal(t, -1, i)
		assert.Equal(t, 1, a.Priority("big"))
		// Ten more refusals, then a node that can hold it: big outranks ok.
		for range 10 {
			_, err = a.Pick(node, jobs[:1])
			require.NoError(t, err)
		}
		roomy := node
		roomy.Remaining.Memory = 1000
		i, err = a.Pick(roomy, jobs)
		require.NoError(t, err)
		assert.Equal(t, 0, i)
	})
	t.Run("ties: the earlier job", func(t *testing.T) {
		var a match.Aging
		i, err := a.Pick(node, []match.QoSJob{qosJob("x", memHeavy, 1), qosJob("y", memHeavy, 1)})
		require.NoError(t, err)
		assert.Equal(t, 0, i)
	})
	t.Run("no jobs", func(t *testing.T) {
		var a match.Aging
		i, err := a.Pick(node, nil)
		require.NoError(t, err)
		assert.Equal(t, -1, i)
	})
}

func TestAgingPickErrors(t *testing.T) {
	node := match.QoSNode{Res: match.QoSVector{3, 9, 7, 1, 1}, Remaining: match.Hard{Memory: 10, Disk: 10}}
	big := qosJob("big", memHeavy, 500) // would be aged if evaluated
	badWeights := qosJob("w", match.Weights{0.5, 0.6}, 1)
	badNeed := qosJob("n", memHeavy, -3)
	for _, tc := range []struct {
		name string
		node match.QoSNode
		jobs []match.QoSJob
		want error
	}{
		{"bad node vector", match.QoSNode{Res: match.QoSVector{0, 1, 1, 1, 1}}, []match.QoSJob{big}, match.ErrBadVector},
		{"bad node hard", match.QoSNode{Res: node.Res, Remaining: match.Hard{Disk: -1}}, []match.QoSJob{big}, match.ErrBadHard},
		{"bad weights", node, []match.QoSJob{big, badWeights}, match.ErrBadWeights},
		{"bad need", node, []match.QoSJob{big, badNeed}, match.ErrBadHard},
		{"duplicate ID", node, []match.QoSJob{big, big}, match.ErrDuplicate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a match.Aging
			i, err := a.Pick(tc.node, tc.jobs)
			assert.Equal(t, -1, i)
			assert.ErrorIs(t, err, tc.want)
			assert.True(t, errors.Is(err, tc.want))
			assert.Zero(t, a.Priority("big"), "a rejected call changes nothing")
		})
	}
}
