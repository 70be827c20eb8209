package match

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// hugeCapacity is a capacity at the boundaries that matter to exactRatios (2^51) and
// scaleAllowance (MaxInt64 − capacity), or far past them; exact keeps it within 2^51.
func hugeCapacity(r *rand.Rand, exact bool) int64 {
	if exact {
		switch r.Intn(6) {
		case 0:
			return 0
		case 1:
			return 1 << 51
		case 2:
			return 1<<51 - int64(r.Intn(5000))
		case 3:
			return int64(1 + r.Intn(5000))
		default:
			return r.Int63n(1<<51 + 1)
		}
	}
	switch r.Intn(10) {
	case 0:
		return 0
	case 1:
		return 1 << 51
	case 2:
		return 1<<51 + 1
	case 3:
		return 1<<51 - int64(r.Intn(5000))
	case 4:
		return math.MaxInt64
	case 5:
		return 1<<62 + int64(r.Intn(1<<20))
	case 6:
		return 1<<53 + int64(r.Intn(1<<20))
	case 7:
		return int64(1 + r.Intn(5000))
	default:
		return r.Int63n(1 << 52)
	}
}

func hugeProfile(r *rand.Rand, capacity resource.Tuple, maxStages int) stage.Profile {
	st := make([]stage.Stage, 1+r.Intn(maxStages))
	for i := range st {
		d := time.Duration(1+r.Intn(12)) * time.Second / 4
		switch r.Intn(30) {
		case 0:
			d = stage.Forever
		case 1:
			d = stage.Forever/2 + time.Duration(r.Intn(3))
		case 2:
			d = time.Duration(1 + r.Intn(3)) // a few ns
		}
		var demand resource.Tuple
		for k := 0; k < refSchema.Len(); k++ {
			c := capacity[k]
			switch r.Intn(8) {
			case 0:
			case 1:
				demand[k] = c
			case 2:
				demand[k] = min(c, 1<<51)
			case 3:
				demand[k] = min(c+int64(r.Intn(3)), math.MaxInt64) // beyond capacity
				if c > math.MaxInt64-3 {
					demand[k] = c
				}
			case 4:
				demand[k] = 1<<51 + int64(r.Intn(3)) - 1
			case 5:
				if c > 0 {
					demand[k] = c - r.Int63n(c/8+1)
				}
			default:
				if c > 0 {
					demand[k] = r.Int63n(c/2+1) + r.Int63n(c/2+1)
				}
			}
		}
		st[i] = stage.Stage{Duration: d, Demand: demand}
	}
	return stage.MustProfile(refSchema, st...)
}

func hugeScenario(r *rand.Rand) *stage.Timeline {
	var capacity resource.Tuple
	exact := r.Intn(3) > 0
	for k := 0; k < refSchema.Len(); k++ {
		capacity[k] = hugeCapacity(r, exact)
	}
	tl, err := stage.NewTimeline(refSchema, capacity)
	if err != nil {
		panic(err)
	}
	var hs []stage.Handle
	for n := r.Intn(300); n > 0; n-- {
		switch x := r.Intn(20); {
		case x == 0:
			tl.Trim(tl.Origin() + time.Duration(r.Intn(8))*time.Second/4)
		case x < 3 && len(hs) > 0:
			_ = tl.Release(hs[r.Intn(len(hs))])
		default:
			var allow resource.Tuple
			switch r.Intn(3) {
			case 1:
				for k := range allow {
					if capacity[k] > 0 {
						allow[k] = r.Int63n(capacity[k]/2 + 1)
					}
				}
			case 2:
				allow = resource.Tuple{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}
			}
			if h, err := tl.Reserve(tl.Origin()+time.Duration(r.Intn(200))*time.Second/4, hugeProfile(r, capacity, 4), allow.Only(refSchema.Compressible())); err == nil {
				hs = append(hs, h)
			}
		}
	}
	return tl
}

// FineGrained equals the walk of Alg. 2 with capacities and demands at and around 2^51
// (byStage on one side, the walk on the other), up to MaxInt64, capacity 0, peaks
// beyond capacity, reservations compressed as far as scaleAllowance lets them, up to
// 60 stages, stages of a few nanoseconds or past Forever, starts at the origin and
// near Forever. (No Suspend/Resume: see TestFineGrainedSaturatedTreeDoesNotFitSilently.)
func TestFineGrainedBoundaryAmountsMatchReference(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 2000
	props := gopter.NewProperties(params)
	props.Property("FineGrained = walk at huge amounts", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		tl := hugeScenario(r)
		for q := 0; q < 30; q++ {
			p := hugeProfile(r, tl.Capacity(), []int{1, 10, 60}[r.Intn(3)])
			start := tl.Origin() + time.Duration(r.Intn(220))*time.Second/4
			switch r.Intn(20) {
			case 0:
				start = tl.Origin()
			case 1:
				start = stage.Forever - time.Duration(r.Intn(3))
			case 2:
				start = stage.Forever/2 + time.Duration(r.Intn(3))
			}
			ratio := []float64{0, 0.05, 0.3, 0.999999, 1, float64(r.Intn(101)) / 100}[r.Intn(6)]
			fixed, _ := UniformAllowance(refSchema, ratio)
			for _, a := range []Allowance{nil, fixed} {
				s := Server{ID: "s", Timeline: tl, Allowance: a}
				got, want := FineGrained{}.Match(s, start, p), refFineGrained(s, start, p)
				if got != want {
					return fmt.Sprintf("allowance %v, %v from %v cap %v on %v:\n got  %+v\n want %+v", a, p, start, tl.Capacity(), tl.AppendSegments(nil, 0, stage.Forever), got, want)
				}
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}
