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

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// The backlogged Jain index looks only at the queues with pending tasks: a queue
// holding all it asks for does not count against fairness.
func TestBackloggedJainKnownAnswer(t *testing.T) {
	req := tuple(1000, gib, 0, 0)
	long := oneStage(100*time.Second, req)
	for _, tc := range []struct {
		name               string
		a, b               int // tasks of the jobs of queues a and b; the node holds 4
		jain, blJain       float64
		active, backlogged int
		queues             [2]QueueSample // qa, qb at 10 s (WithQueueSamples)
	}{
		{"a satisfied, b backlogged", 1, 8, 0.8, 1, 2, 1, [2]QueueSample{
			{Active: 1, Running: 1, Share: 0.25}, {Active: 1, Pending: 5, Running: 3, Share: 0.75, OldestPending: 10 * time.Second}}},
		{"both backlogged, equal", 4, 4, 1, 1, 2, 2, [2]QueueSample{
			{Active: 1, Pending: 2, Running: 2, Share: 0.5, OldestPending: 10 * time.Second},
			{Active: 1, Pending: 2, Running: 2, Share: 0.5, OldestPending: 10 * time.Second}}},
		{"a satisfied, b holds the rest", 1, 3, 0.8, 1, 2, 0, [2]QueueSample{
			{Active: 1, Running: 1, Share: 0.25}, {Active: 1, Running: 3, Share: 0.75}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := oneNode(tuple(4000, 8*gib, 100<<20, 100<<20))
			pa, pb := make([]stage.Profile, tc.a), make([]stage.Profile, tc.b)
			for i := range pa {
				pa[i] = long
			}
			for i := range pb {
				pb[i] = long
			}
			w := workload.Workload{Name: "two", Jobs: []workload.Job{handJob("a", "qa", 0, req, pa...), handJob("b", "qb", 0, req, pb...)}}
			r, err := Run(&w, &cl, DRF(), WithSampleEvery(10*time.Second), WithQueueSamples())
			require.NoError(t, err)
			var qs []QueueSample
			for _, q := range r.QueueSamples {
				if q.At == 10*time.Second {
					qs = append(qs, q)
				}
			}
			require.Len(t, qs, 2)
			for i, name := range []string{"qa", "qb"} {
				want := tc.queues[i]
				want.At, want.Queue = 10*time.Second, name
				assert.Equal(t, want.Queue, qs[i].Queue)
				assert.InDelta(t, want.Share, qs[i].Share, 1e-9, name)
				qs[i].Share = want.Share
				assert.Equal(t, want, qs[i], name)
			}
			var sm *Sample
			for i := range r.Samples {
				if r.Samples[i].At == 10*time.Second {
					sm = &r.Samples[i]
				}
			}
			require.NotNil(t, sm)
			assert.Equal(t, tc.active, sm.ActiveQueues)
			assert.Equal(t, tc.backlogged, sm.Backlogged)
			assert.InDelta(t, tc.jain, sm.Jain, 1e-9)
			assert.InDelta(t, tc.blJain, sm.BackloggedJain, 1e-9)
		})
	}
}

// Invariants of the samples and the summary on a paper-like workload.
func TestBackloggedJainInvariants(t *testing.T) {
	w, cl := smallFGM(t, 3, 0.05, workload.WithOnline(workload.DefaultMeanInterarrival))
	for _, p := range []Policy{DRF(), FGM()} {
		r, err := Run(&w, &cl, p, WithSampleEvery(time.Second))
		require.NoError(t, err)
		n, total := 0, 0.0
		for _, sm := range r.Samples {
			require.LessOrEqual(t, sm.Backlogged, sm.ActiveQueues)
			require.GreaterOrEqual(t, sm.Backlogged, 0)
			if sm.Pending == 0 {
				require.Zero(t, sm.Backlogged, "nothing pending, no queue backlogged")
			}
			require.Greater(t, sm.BackloggedJain, 0.0)
			require.LessOrEqual(t, sm.BackloggedJain, 1+1e-12)
			if sm.Backlogged < 2 {
				require.Equal(t, 1.0, sm.BackloggedJain)
			} else {
				n++
				total += sm.BackloggedJain
			}
		}
		assert.Equal(t, n, r.Summary.BackloggedJainSamples, p.Name)
		if n > 0 {
			assert.InDelta(t, total/float64(n), r.Summary.BackloggedJain, 1e-9, p.Name)
		}
	}
}

// The queue samples are the detail behind every sample (WithQueueSamples): on random
// tiny scenarios, at every sample, one per queue in the workload's order; their
// pending and running counts add up to the sample's; the queues with an unfinished job
// are the active ones, those of them with pending tasks the backlogged ones, and
// Jain's index over their shares is the sample's; a queue waits only with tasks
// pending. The option changes nothing else: the run writes the same bytes without it.
func TestPropertyQueueSamples(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("queue samples reconcile with the samples", prop.ForAll(func(seed uint64) string {
		sc := drawScenario(seed)
		r, err := Run(&sc.w, &sc.cl, sc.p, append(sc.opts, WithSampleEvery(time.Second), WithQueueSamples())...)
		if err != nil {
			return err.Error()
		}
		names := sc.w.Queues()
		if len(r.QueueSamples) != len(names)*len(r.Samples) {
			return fmt.Sprintf("%d queue samples, want %d queues × %d samples", len(r.QueueSamples), len(names), len(r.Samples))
		}
		for i, sm := range r.Samples {
			qs := r.QueueSamples[i*len(names) : (i+1)*len(names)]
			pending, running, active := 0, 0, 0
			var all, backlogged []float64
			for k, q := range qs {
				if q.At != sm.At || q.Queue != names[k] {
					return fmt.Sprintf("sample %d: queue sample %v %q, want %v %q", i, q.At, q.Queue, sm.At, names[k])
				}
				if q.Pending == 0 && q.OldestPending != 0 || q.OldestPending < 0 || q.Share < 0 {
					return fmt.Sprintf("at %v: queue %q: %+v", sm.At, q.Queue, q)
				}
				pending += q.Pending
				running += q.Running
				if q.Active > 0 {
					active++
					all = append(all, q.Share)
					if q.Pending > 0 {
						backlogged = append(backlogged, q.Share)
					}
				}
			}
			if pending != sm.Pending || running != sm.Running || active != sm.ActiveQueues || len(backlogged) != sm.Backlogged {
				return fmt.Sprintf("at %v: queues add up to pending %d, running %d, active %d, backlogged %d; the sample %+v",
					sm.At, pending, running, active, len(backlogged), sm)
			}
			if msg := sameJain("jain", all, sm.Jain); msg != "" {
				return fmt.Sprintf("at %v: %s", sm.At, msg)
			}
			if msg := sameJain("backlogged jain", backlogged, sm.BackloggedJain); msg != "" {
				return fmt.Sprintf("at %v: %s", sm.At, msg)
			}
		}
		sc2 := drawScenario(seed)
		r2, err := Run(&sc2.w, &sc2.cl, sc2.p, append(sc2.opts, WithSampleEvery(time.Second))...)
		if err != nil {
			return err.Error()
		}
		if r2.QueueSamples != nil {
			return "queue samples without WithQueueSamples"
		}
		if !bytes.Equal(csvOf(t, r), csvOf(t, r2)) {
			return "WithQueueSamples changed the run"
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// sameJain reports how Jain's index over shares differs from want (the index is 1
// over fewer than two shares, as the samples take it); "" when it does not.
func sameJain(what string, shares []float64, want float64) string {
	got := 1.0
	if len(shares) >= 2 {
		j, err := fairness.Jain(shares)
		if err != nil {
			return err.Error()
		}
		got = j
	}
	if math.Abs(got-want) > 1e-9 {
		return fmt.Sprintf("%s over %v is %v, the sample says %v", what, shares, got, want)
	}
	return ""
}
