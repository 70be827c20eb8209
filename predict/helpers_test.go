package predict_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var std = resource.Standard()

// params are the gopter parameters every property uses: 1000 cases, fixed seed.
func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

// prof builds a profile from (seconds, cpu millicores, memory bytes) triples.
func prof(t testing.TB, st ...[3]int64) stage.Profile {
	t.Helper()
	stages := make([]stage.Stage, len(st))
	for i, s := range st {
		stages[i] = stage.Stage{Duration: time.Duration(s[0]) * time.Second, Demand: std.MustTuple(s[1], s[2])}
	}
	p, err := stage.NewProfile(std, stages...)
	require.NoError(t, err)
	return p
}

// randProfile returns a profile of n stages with durations in [1 ms, 1000 s] and
// demands up to 2^30 on the first four dimensions.
func randProfile(r *rand.Rand, n int) stage.Profile {
	stages := make([]stage.Stage, n)
	for i := range stages {
		stages[i].Duration = time.Duration(1+r.Int64N(1e6)) * time.Millisecond
		for d := 0; d < 4; d++ {
			stages[i].Demand[d] = r.Int64N(1 << 30)
		}
	}
	return stage.MustProfile(std, stages...)
}

// randCompression returns per-stage compression ratios in [0, 1] on the compressible
// dimensions.
func randCompression(r *rand.Rand, n int) []resource.Vector {
	c := make([]resource.Vector, n)
	for i := range c {
		for d := 0; d < std.Len(); d++ {
			if std.Dim(d).Compressible {
				c[i][d] = r.Float64()
			}
		}
	}
	return c
}

func rng(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)) }

// between reports whether x lies between a and b, inclusive.
func between[T int64 | time.Duration](x, a, b T) bool {
	return x >= min(a, b) && x <= max(a, b)
}
