package sim

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// withoutAllocation is a scheduler that does not answer Allocation: the simulator
// then counts the stage of each task's placed profile in force (WithHeldShares).
type withoutAllocation struct{ Scheduler }

// hideAllocation is p with its scheduler behind withoutAllocation.
func hideAllocation(p Policy) Policy {
	q := p
	q.Name = p.Name + "/no-allocation"
	q.New = func(schema *resource.Schema) (Scheduler, error) {
		s, err := p.build(schema)
		if err != nil {
			return nil, err
		}
		return withoutAllocation{s}, nil
	}
	return q
}

// sameHeld reports how a result's held shares differ from its peak-based ones; ""
// when they are the same at every sample and for every queue.
func sameHeld(r *Result) string {
	for _, sm := range r.Samples {
		if sm.HeldJain != sm.Jain || sm.HeldBackloggedJain != sm.BackloggedJain {
			return fmt.Sprintf("at %v: held Jain %v, backlogged %v; by peaks %v, %v", sm.At, sm.HeldJain, sm.HeldBackloggedJain, sm.Jain, sm.BackloggedJain)
		}
	}
	for _, q := range r.QueueSamples {
		if q.HeldShare != q.Share {
			return fmt.Sprintf("at %v: queue %q holds %v, by peaks %v", q.At, q.Queue, q.HeldShare, q.Share)
		}
	}
	if r.Summary.HeldJain != r.Summary.Jain || r.Summary.HeldBackloggedJain != r.Summary.BackloggedJain {
		return fmt.Sprintf("summary: held Jain %v, backlogged %v; by peaks %v, %v", r.Summary.HeldJain, r.Summary.HeldBackloggedJain,
			r.Summary.Jain, r.Summary.BackloggedJain)
	}
	return ""
}

// A request-based policy holds each task's request, one stage until it finishes: what
// it holds at the sample instant is the peak, and the held shares are the peak-based
// ones, through the scheduler's Allocation call or without it. A stage profile's peak
// overstates what is held at most instants: FGM's held shares are at most its
// peak-based ones, and below them somewhere.
func TestHeldShares(t *testing.T) {
	w, cl := smallFGM(t, 3, 0.05, workload.WithOnline(workload.DefaultMeanInterarrival))
	for _, tc := range []struct {
		policy Policy
		same   bool // held shares equal the peak-based ones
	}{
		{DRF(), true},
		{Tetris(), true},
		{Fair(), true},
		{Kubernetes(), true},
		{hideAllocation(DRF()), true},
		{FGM(), false},
		{hideAllocation(FGM()), false},
	} {
		t.Run(tc.policy.Name, func(t *testing.T) {
			r, err := Run(&w, &cl, tc.policy, WithSampleEvery(time.Second), WithHeldShares(), WithQueueSamples())
			require.NoError(t, err)
			require.NotEmpty(t, r.QueueSamples)
			if tc.same {
				assert.Empty(t, sameHeld(r))
				return
			}
			below := 0
			for _, q := range r.QueueSamples {
				require.GreaterOrEqual(t, q.HeldShare, 0.0)
				require.LessOrEqual(t, q.HeldShare, q.Share+1e-12, "at %v: queue %q", q.At, q.Queue)
				if q.HeldShare < q.Share-1e-9 {
					below++
				}
			}
			assert.Positive(t, below, "some queue holds less than its peaks at some sample")
			assert.NotEmpty(t, sameHeld(r))
			for _, sm := range r.Samples {
				require.Greater(t, sm.HeldJain, 0.0)
				require.LessOrEqual(t, sm.HeldJain, 1+1e-12)
				require.Greater(t, sm.HeldBackloggedJain, 0.0)
				require.LessOrEqual(t, sm.HeldBackloggedJain, 1+1e-12)
			}
		})
	}
}

// The held shares are means over the samples Jain and BackloggedJain are means over,
// and the option changes nothing else: without it the held figures are zero and the
// run writes the same bytes.
func TestHeldSharesSummary(t *testing.T) {
	w, cl := smallFGM(t, 5, 0.05, workload.WithOnline(workload.DefaultMeanInterarrival))
	for _, p := range []Policy{DRF(), FGM()} {
		t.Run(p.Name, func(t *testing.T) {
			r, err := Run(&w, &cl, p, WithSampleEvery(time.Second), WithHeldShares())
			require.NoError(t, err)
			var all, bl float64
			n, nb := 0, 0
			for _, sm := range r.Samples {
				if sm.ActiveQueues >= 2 {
					all += sm.HeldJain
					n++
				}
				if sm.Backlogged >= 2 {
					bl += sm.HeldBackloggedJain
					nb++
				}
			}
			require.Equal(t, r.Summary.JainSamples, n)
			require.Equal(t, r.Summary.BackloggedJainSamples, nb)
			require.Positive(t, nb)
			assert.InDelta(t, all/float64(n), r.Summary.HeldJain, 1e-9)
			assert.InDelta(t, bl/float64(nb), r.Summary.HeldBackloggedJain, 1e-9)

			r2, err := Run(&w, &cl, p, WithSampleEvery(time.Second))
			require.NoError(t, err)
			assert.Zero(t, r2.Summary.HeldJain)
			assert.Zero(t, r2.Summary.HeldBackloggedJain)
			for _, sm := range r2.Samples {
				require.Zero(t, sm.HeldJain)
				require.Zero(t, sm.HeldBackloggedJain)
			}
			assert.Equal(t, csvOf(t, r2), csvOf(t, r), "WithHeldShares changed the run")
		})
	}
}

// On random tiny scenarios (one of the baselines or FGM, pull or push, sometimes a
// background and a node failure): a request-based policy's held shares are its
// peak-based ones at every sample; FGM's are never above them; and the option changes
// nothing else.
func TestPropertyHeldShares(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("held shares: the peaks for requests, never above them", prop.ForAll(func(seed uint64) string {
		sc := drawScenario(seed)
		r, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithSampleEvery(time.Second), WithQueueSamples(), WithHeldShares())...)
		if err != nil {
			return err.Error()
		}
		if sc.p.Feedback { // FGM: stage profiles
			for _, q := range r.QueueSamples {
				if q.HeldShare < 0 || q.HeldShare > q.Share+1e-12 || math.IsNaN(q.HeldShare) {
					return fmt.Sprintf("%s at %v: queue %q holds %v, by peaks %v", sc.p.Name, q.At, q.Queue, q.HeldShare, q.Share)
				}
			}
		} else if msg := sameHeld(r); msg != "" {
			return sc.p.Name + ": " + msg
		}
		sc2 := drawScenario(seed)
		r2, err := Run(&sc2.w, &sc2.cl, sc2.p, append(sc2.opts, WithSampleEvery(time.Second), WithQueueSamples())...)
		if err != nil {
			return err.Error()
		}
		if !bytes.Equal(csvOf(t, r), csvOf(t, r2)) {
			return "WithHeldShares changed the run"
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}
