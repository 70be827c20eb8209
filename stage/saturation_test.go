package stage_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Amounts near the int64 limit are exact or refused. A compressible dimension whose
// capacity is MaxInt64 (an "unlimited" resource), with a 10% allowance, is reserved
// whole and then a tenth more. Were the second reservation accepted, every step would
// stand for −MaxInt64/10 while the step tree's lazy adds (differences of amounts, here
// −1.1 × MaxInt64) saturated: subtrees that took an add whole would read another
// amount, FreeAt would disagree with MinFree, and a later Check would accept what does
// not fit. The timeline never compresses an unlimited dimension: the tenth is refused
// and nothing changes.
func TestHugeAmountsAreExactOrRefused(t *testing.T) {
	const huge = math.MaxInt64
	tl, err := stage.NewTimeline(schema, tup(huge, 1<<40))
	require.NoError(t, err)
	for i := range 60 { // steps enough for inner nodes, so that adds are lazy
		p := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(0, int64(1+i%7))})
		_, err := tl.Reserve(time.Duration(2*i)*time.Second, p, tup(0, 0))
		require.NoError(t, err)
	}
	allow := tup(huge/10, 0)
	whole := stage.MustProfile(schema, stage.Stage{Duration: 200 * time.Second, Demand: tup(huge, 0)})
	tenth := stage.MustProfile(schema, stage.Stage{Duration: 200 * time.Second, Demand: tup(huge/10, 0)})
	_, err = tl.Reserve(0, whole, allow)
	require.NoError(t, err, "the whole of an unlimited dimension can be reserved")
	_, err = tl.Reserve(0, tenth, allow)
	var fe *stage.FitError
	require.ErrorAs(t, err, &fe, "an unlimited dimension is not compressed")
	assert.Zero(t, fe.Allowance, "the error gives the allowance applied")
	for s := range 200 {
		require.Zero(t, tl.FreeAt(time.Duration(s) * time.Second)[0], "free cpu at %ds", s)
	}
	assert.Zero(t, tl.MinFree(0, 200*time.Second)[0])
	one := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1000, 0)})
	assert.ErrorIs(t, tl.Check(0, one, allow), stage.ErrNoRoom)
}

// TestHugeAmountsStayExact drives timelines whose capacities, demands and allowances
// span the int64 range with reservations and releases, against a model in big
// integers: a reservation is accepted exactly when the model stays within the rules
// (memory never below zero; cpu never below −allowance nor below capacity −
// MaxInt64), and FreeAt and MinFree then read the model's amounts exactly.
func TestHugeAmountsStayExact(t *testing.T) {
	const horizon, ops = 150, 48 // reservations end before the horizon
	big64 := func(x int64) *big.Int { return big.NewInt(x) }
	maxI := big64(math.MaxInt64)
	amount := func(r *rand.Rand) int64 {
		switch r.Intn(4) {
		case 0:
			return r.Int63n(100)
		case 1:
			return math.MaxInt64 - r.Int63n(100)
		case 2:
			return r.Int63() / int64(1+r.Intn(20))
		}
		return r.Int63n(1 << 20)
	}
	p := params()
	p.MinSuccessfulTests = 300 // each case is a long run of big-integer checks
	props := gopter.NewProperties(p)
	props.Property("free amounts exact over the int64 range", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		capacity := tup(amount(r), amount(r))
		tl, err := stage.NewTimeline(schema, capacity)
		if err != nil {
			return err.Error()
		}
		var model [horizon][2]*big.Int
		for s := range model {
			model[s] = [2]*big.Int{big64(capacity[0]), big64(capacity[1])}
		}
		type held struct {
			h     stage.Handle
			start int
			p     stage.Profile
		}
		var hs []held
		apply := func(m *[horizon][2]*big.Int, start int, p stage.Profile, sign int64) {
			for s := start; s < horizon && time.Duration(s-start)*time.Second < p.Duration(); s++ {
				d := p.At(time.Duration(s-start) * time.Second)
				for k := range 2 {
					m[s][k] = new(big.Int).Add(m[s][k], new(big.Int).Mul(big64(sign), big64(d[k])))
				}
			}
		}
		for op := range ops {
			what := ""
			if len(hs) > 0 && r.Intn(3) == 0 {
				i := r.Intn(len(hs))
				what = fmt.Sprintf("release %d", hs[i].h)
				if err := tl.Release(hs[i].h); err != nil {
					return what + ": " + err.Error()
				}
				apply(&model, hs[i].start, hs[i].p, +1)
				hs = append(hs[:i], hs[i+1:]...)
			} else {
				stages := make([]stage.Stage, 1+r.Intn(3))
				for i := range stages {
					d := tup(0, 0)
					if r.Intn(2) == 0 {
						d[0] = amount(r)
					}
					if r.Intn(2) == 0 {
						d[1] = amount(r)
					}
					stages[i] = stage.Stage{Duration: time.Duration(1+r.Intn(30)) * time.Second, Demand: d}
				}
				p := stage.MustProfile(schema, stages...)
				start, allow := r.Intn(50), tup(amount(r), 0)
				what = fmt.Sprintf("reserve %v at %ds, allowance %d", p, start, allow[0])
				after := model
				for s := range after {
					after[s] = [2]*big.Int{new(big.Int).Set(model[s][0]), new(big.Int).Set(model[s][1])}
				}
				apply(&after, start, p, -1)
				fits := true
				for s := start; s < horizon && time.Duration(s-start)*time.Second < p.Duration(); s++ {
					d := p.At(time.Duration(s-start) * time.Second)
					floor := new(big.Int).Neg(big64(allow[0]))
					if lo := new(big.Int).Sub(big64(capacity[0]), maxI); lo.Cmp(floor) > 0 {
						floor = lo
					}
					if d[0] > 0 && after[s][0].Cmp(floor) < 0 || d[1] > 0 && after[s][1].Sign() < 0 {
						fits = false
					}
				}
				h, err := tl.Reserve(time.Duration(start)*time.Second, p, allow)
				switch {
				case fits && err != nil:
					return what + ": refused though it fits: " + err.Error()
				case !fits && err == nil:
					return what + ": accepted though it breaks the rules"
				case fits:
					model = after
					hs = append(hs, held{h, start, p})
				}
			}
			for s := 0; s < horizon && (op%4 == 3 || op == ops-1); s++ { // every few ops: the scan is long
				got := tl.FreeAt(time.Duration(s) * time.Second)
				for k := range 2 {
					if !model[s][k].IsInt64() || model[s][k].Int64() != got[k] {
						return fmt.Sprintf("after op %d (%s): free at %ds %v, model %v", op, what, s, got, model[s])
					}
				}
			}
			a, b := r.Intn(horizon), r.Intn(horizon)
			from, to := min(a, b), max(a, b)+1
			lo := [2]int64{math.MaxInt64, math.MaxInt64}
			for s := from; s < to; s++ {
				for k := range 2 {
					lo[k] = min(lo[k], model[s][k].Int64())
				}
			}
			if got := tl.MinFree(time.Duration(from)*time.Second, time.Duration(to)*time.Second); got[0] != lo[0] || got[1] != lo[1] {
				return fmt.Sprintf("after op %d (%s): MinFree(%ds, %ds) %v, model %v", op, what, from, to, got, lo)
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

var _ = resource.CPU
