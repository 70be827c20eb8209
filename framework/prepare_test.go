package framework_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
)

// preFilterFunc is a PreFilter plugin running fn.
type preFilterFunc struct {
	named
	fn func(c *framework.Cycle, a *framework.Attempt) framework.Status
}

func (p preFilterFunc) PreFilter(c *framework.Cycle, a *framework.Attempt) framework.Status {
	return p.fn(c, a)
}

// Cycle.Prepare builds its attempt in the framework's scratch, so it allocates nothing
// the demand step does not, and what it returns is the caller's copy. A Prepare made
// while another holds the scratch — inside a PreFilter plugin's, or from goroutines at
// once — gets an attempt of its own: each caller gets its own task's attempt.
func TestPrepareAllocatesNothingAndEachCallerGetsItsOwnAttempt(t *testing.T) {
	f := threeNodes(t)
	outer := f.submit(t, "j", "outer", 1000, 1)
	inner := f.submit(t, "j", "inner", 2000, 2)
	var others []*cluster.TaskInfo
	for _, id := range []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"} {
		others = append(others, f.submit(t, "k", id, 100, 1))
	}
	var nested framework.Attempt
	var nestedStatus framework.Status
	pre := preFilterFunc{named{"Nests"}, func(c *framework.Cycle, a *framework.Attempt) framework.Status {
		if a.Task == outer { // a Prepare inside a Prepare
			nested, nestedStatus = c.Prepare(inner, nil, c.Now())
			if a.Task != outer {
				return framework.Refuse(framework.PluginRefused) // the nested one overwrote ours
			}
		}
		return framework.Status{}
	}}
	demand := f.prediction(t)
	ran := false
	pass := &passFunc{named{"Prepares"}, func(c *framework.Cycle, n *cluster.NodeInfo) error {
		ran = true
		alone := testing.AllocsPerRun(50, func() { _ = demand.Demand(c, inner) })
		both := testing.AllocsPerRun(50, func() { _, _ = c.Prepare(inner, n, c.Now()) })
		assert.Equal(t, alone, both, "Prepare allocates what the demand step does, nothing more")

		a, st := c.Prepare(outer, n, c.Now())
		require.True(t, st.OK(), "the attempt inside the PreFilter left the outer one alone: %v", st)
		assert.Same(t, outer, a.Task)
		assert.Equal(t, demand.Demand(c, outer), a.Demand)
		assert.Same(t, inner, nested.Task)
		assert.Equal(t, demand.Demand(c, inner), nested.Demand)
		assert.True(t, nestedStatus.OK())

		b, _ := c.Prepare(inner, n, c.Now())
		assert.Same(t, outer, a.Task, "a returned attempt is the caller's: the next Prepare leaves it")
		assert.Same(t, inner, b.Task)

		var wg sync.WaitGroup
		got := make([]framework.Attempt, len(others))
		for i, tk := range others {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					got[i], _ = c.Prepare(tk, n, c.Now())
					if got[i].Task != tk {
						return
					}
				}
			}()
		}
		wg.Wait()
		for i, tk := range others {
			assert.Same(t, tk, got[i].Task, "goroutine %d", i)
			assert.Equal(t, demand.Demand(c, tk), got[i].Demand, "goroutine %d", i)
		}
		return nil
	}}
	fw := f.framework(t, with(f.base(t), pre, pass))
	_, err := fw.Heartbeat(f.node(t, "n1"), 0)
	require.NoError(t, err)
	require.True(t, ran)
}
