package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/examples/internal/clitest"
)

func TestSweep(t *testing.T) {
	assert.Equal(t, []int{100, 200, 400, 800}, sweep(400))
	assert.Equal(t, []int{1, 3, 6}, sweep(3))
	assert.Equal(t, []int{1, 2}, sweep(1))
}

// Both runs place only what fits, and count consistently; QoS-vector scheduling never
// places a task on a node whose hard QoS it fails; and on the default workload it
// matches more tasks correctly than plain capacity scheduling, as the paper reports,
// for a few seeds.
func TestRuns(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		w := generate(400, 40, 4, seed)
		plain, err := run(w, seed, false)
		require.NoError(t, err)
		qos, err := run(w, seed, true)
		require.NoError(t, err)
		for name, o := range map[string]outcome{"capacity": plain, "QoS-vector": qos} {
			assert.LessOrEqual(t, o.placed, len(w.jobs), name)
			assert.LessOrEqual(t, o.correct, o.hard, name)
			assert.LessOrEqual(t, o.hard, o.placed, name)
			assert.LessOrEqual(t, o.class, o.placed, name)
			assert.LessOrEqual(t, o.feature, o.placed, name)
			assert.Positive(t, o.placed, name)
		}
		assert.Equal(t, qos.placed, qos.hard, "seed %d: every QoS-vector placement meets the hard QoS", seed)
		assert.Greater(t, qos.correct, plain.correct, "seed %d", seed)
	}
}

// The same seed gives the same nodes and the same first jobs whatever the job count,
// so that the rows of the sweep differ only in the tasks added.
func TestGeneratePrefix(t *testing.T) {
	a, b := generate(100, 10, 3, 7), generate(400, 10, 3, 7)
	assert.Equal(t, a.nodes, b.nodes)
	assert.Equal(t, a.jobs, b.jobs[:100])
	assert.Equal(t, a.users, b.users)
	sum := 0.0
	for _, u := range b.users {
		sum += u.capacity
	}
	assert.InDelta(t, 1, sum, 1e-12)
	for _, j := range b.jobs {
		require.NoError(t, j.demand.Validate())
	}
}

func TestBadFlags(t *testing.T) {
	for flag, args := range map[string][]string{
		"-jobs":  {"-jobs", "0"},
		"-nodes": {"-nodes", "10001"},
		"-users": {"-users", "0"},
	} {
		clitest.Refused(t, flag, args...)
	}
}
