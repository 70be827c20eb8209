package match_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// schema3 is the test schema: cpu (compressible), memory (not), net-io (compressible).
var schema3 = resource.MustSchema(resource.CPU, resource.Memory, resource.NetIO)

func tup(cpu, mem, net int64) resource.Tuple { return schema3.MustTuple(cpu, mem, net) }

func sec(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }

// st is a stage of d seconds demanding cpu, mem, net.
func st(d float64, cpu, mem, net int64) stage.Stage {
	return stage.Stage{Duration: sec(d), Demand: tup(cpu, mem, net)}
}

func prof(stages ...stage.Stage) stage.Profile { return stage.MustProfile(schema3, stages...) }

func timeline(t testing.TB, capacity resource.Tuple) *stage.Timeline {
	tl, err := stage.NewTimeline(schema3, capacity)
	require.NoError(t, err)
	return tl
}

func reserve(t testing.TB, tl *stage.Timeline, start float64, p stage.Profile, allow resource.Tuple) stage.Handle {
	h, err := tl.Reserve(sec(start), p, allow)
	require.NoError(t, err)
	return h
}
