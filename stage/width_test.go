package stage_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The step tree takes minima over only as many slots as its schema may fill (two, four,
// six or all eight). On schemas of 1 to 8 dimensions, some compressible and compressed
// below zero, after random reservations and releases, MinFree and MinFreeStages equal
// the least amounts Walk reports step by step.
func TestRangeQueriesEveryWidth(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	props := gopter.NewProperties(params)
	props.Property("MinFree and MinFreeStages = Walk's minima", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		n := 1 + r.Intn(resource.MaxDims)
		dims := make([]resource.Dimension, n)
		for k := range dims {
			dims[k] = resource.Dimension{Name: fmt.Sprintf("d%d", k), Compressible: r.Intn(2) == 0}
		}
		schema, err := resource.NewSchema(dims...)
		if err != nil {
			return err.Error()
		}
		var capa, allow resource.Tuple
		for k := range n {
			capa[k] = int64(1 + r.Intn(2000))
			if schema.Compressible().Has(k) && r.Intn(2) == 0 {
				allow[k] = capa[k] / 2
			}
		}
		tl, err := stage.NewTimeline(schema, capa)
		if err != nil {
			return err.Error()
		}
		var hs []stage.Handle
		for i, m := 0, r.Intn(600); i < m; i++ {
			if len(hs) > 0 && r.Intn(5) == 0 {
				_ = tl.Release(hs[r.Intn(len(hs))])
				continue
			}
			st := make([]stage.Stage, 1+r.Intn(4))
			for j := range st {
				var d resource.Tuple
				for k := range n {
					d[k] = int64(r.Intn(int(capa[k])/3 + 1))
				}
				st[j] = stage.Stage{Duration: time.Duration(1+r.Intn(6)) * time.Second, Demand: d}
			}
			if h, err := tl.Reserve(time.Duration(r.Intn(300))*time.Second, stage.MustProfile(schema, st...), allow); err == nil {
				hs = append(hs, h)
			}
		}
		least := func(from, to time.Duration) resource.Tuple {
			var m resource.Tuple
			for k := range n {
				m[k] = math.MaxInt64
			}
			tl.Walk(from, to, func(s stage.Segment) bool { m = m.Min(s.Free); return true })
			return m
		}
		for q := 0; q < 20; q++ {
			from := time.Duration(r.Intn(320)) * time.Second / 2
			to := from + time.Duration(1+r.Intn(200))*time.Second/2
			if got, want := tl.MinFree(from, to), least(from, to); got != want {
				return fmt.Sprintf("%d dims: MinFree[%v, %v) = %v, Walk's least %v", n, from, to, got, want)
			}
			st := make([]stage.Stage, 1+r.Intn(8))
			for j := range st {
				st[j] = stage.Stage{Duration: time.Duration(1+r.Intn(40)) * time.Second / 4}
			}
			p := stage.MustProfile(schema, st...)
			var bad string
			tl.MinFreeStages(from, p, func(i int, m resource.Tuple) bool {
				lo, hi := stage.AddSat(from, p.Offset(i)), stage.AddSat(from, p.Offset(i+1))
				if want := least(lo, hi); m != want {
					bad = fmt.Sprintf("%d dims: stage %d [%v, %v): MinFreeStages %v, Walk's least %v", n, i, lo, hi, m, want)
					return false
				}
				return true
			})
			if bad != "" {
				return bad
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

// A timeline of a 3-dimensional schema keeps minima over its third dimension: the least
// free amount of a window is short on it when only it is short.
func TestMinFreeThirdDimension(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory, resource.Dimension{Name: "disk"})
	tl, err := stage.NewTimeline(schema, resource.Tuple{10, 10, 10})
	require.NoError(t, err)
	for i := range 40 {
		_, err := tl.Reserve(time.Duration(i)*time.Second, stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: resource.Tuple{1, 1, int64(i % 10)}}), resource.Tuple{})
		require.NoError(t, err)
	}
	require.Equal(t, resource.Tuple{9, 9, 1}, tl.MinFree(0, 40*time.Second))
	var third []int64
	tl.MinFreeStages(0, stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Second}, stage.Stage{Duration: 5 * time.Second}), func(_ int, m resource.Tuple) bool {
		third = append(third, m[2])
		return true
	})
	require.Equal(t, []int64{1, 6}, third)
}
