package finegrain_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/speculate"
)

// Preference weights with 0.6 on one feature (the job's class) and 0.1 on the others.
var (
	qosCPUClass = match.Weights{0.6, 0.1, 0.1, 0.1, 0.1}
	qosMemClass = match.Weights{0.1, 0.6, 0.1, 0.1, 0.1}
	qosNetClass = match.Weights{0.1, 0.1, 0.6, 0.1, 0.1}
)

// qosScheduler is a request-based scheduler under QoS-vector scheduling and Capacity
// ordering, one start per heartbeat (the paper assigns one task a heartbeat), with
// the queues given (ID and min share).
func qosScheduler(t *testing.T, queues map[string]float64, opts ...finegrain.Option) *finegrain.Scheduler {
	t.Helper()
	base := []finegrain.Option{
		finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPullStrategy(finegrain.PullQoSVector()), finegrain.WithMaxPerHeartbeat(1), finegrain.WithSkipDetails(8),
	}
	s := newScheduler(t, append(base, opts...)...)
	for id, min := range queues {
		require.NoError(t, s.AddQueue("", id, fairness.MinShare(min)))
	}
	return s
}

// qosJobOf submits a job of one task asking 1 core and 1 GiB, with demand d.
func qosJobOf(t *testing.T, s *finegrain.Scheduler, id, queue string, at time.Duration, d finegrain.QoSVectorDemand) {
	t.Helper()
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: id, Queue: queue, Submitted: at}))
	require.NoError(t, s.SetJobQoSVector(id, d))
	require.NoError(t, s.Submit(finegrain.Task{ID: id + "-0", Job: id, Request: schema.MustTuple(1000, gib), Submitted: at}))
}

// beat runs a heartbeat of node and returns the tasks it started.
func beat(t *testing.T, s *finegrain.Scheduler, node string, at time.Duration) ([]string, finegrain.Decision) {
	t.Helper()
	d, err := s.Heartbeat(node, at)
	require.NoError(t, err)
	var out []string
	for _, a := range d.Assignments {
		out = append(out, a.Task)
	}
	return out, d
}

func priority(t *testing.T, s *finegrain.Scheduler, job string) int {
	t.Helper()
	p, err := s.QoSVectorPriority(job)
	require.NoError(t, err)
	return p
}

// The worked example of docs/methods.md §12, steps 1–7, by hand. Three nodes of 10
// cores and 40 GiB (30 cores, 120 GiB in all); queue alice has a capacity (min share)
// of 0.5 and runs a filler of 9.5 cores (a dominant share of 0.3167: free 0.1833), queue
// bob a capacity of 0.3 and nothing running. One start per heartbeat.
//
// Jobs (each one task of 1 core, 1 GiB: 1/30 of the cluster; Need in GiB of memory and
// disk):
//
//	job    queue  class    Req              k                      Need
//	a-cpu  alice  cpu      {2,2,2,2,2}      {.6,.1,.1,.1,.1}       1, 1
//	A      bob    memory   {4,6,2,4,2}      {.1,.6,.1,.1,.1}       4, 10
//	B      bob    memory   {2,3,3,5,1}      {.05,.7,.05,.1,.1}     32, 10
//	C      bob    network  {5,5,5,5,5}      {.1,.1,.6,.1,.1}       1, 1
//	D      bob    memory   {2,2,2,2,2}      {.1,.6,.1,.1,.1}       1, 1   (arrives at 3)
//	E      bob    price    {5,5,5,5,5}      {.1,.1,.1,.1,.6}       1, 1
//
// Heartbeat 1, node n1: Res {8,6,3,5,2}, 16 GiB memory and 100 GiB disk left.
//
//   - Step 3: alice's free capacity is 0.5 − 0.3167 = 0.1833, bob's 0.3 − 0 = 0.3: bob.
//   - Steps 2, 4, 5: n1's largest feature is cpu (8); bob has no cpu job, so i = 2:
//     memory (6), sub-queue {A, B}. (a-cpu, a perfect cpu job, is in alice's queue.)
//   - Step 6: A's value (eq. 4) is 8/4·.1 + 6/6·.6 + 3/2·.1 + 5/4·.1 + 2/2·.1 = 1.175,
//     must_value (eq. 5) (16−4)·(100−10) > 0, finalvalue (eq. 6) 1.175 + 0. B's value
//     is 8/2·.05 + 6/3·.7 + 3/3·.05 + 5/5·.1 + 2/1·.1 = 1.95, better, but its
//     must_value (16−32)·(100−10) ≤ 0: finalvalue = priority = 0, and its priority
//     rises to 1. A starts.
//
// Heartbeat 2, n1 again, no new report: 12 GiB and 90 GiB left (A's need taken off).
// Bob's free is 0.3 − 1/30 = 0.2667, bob again; cpu empty, memory {B}: B fails again
// (12 < 32), priority 2, and nothing starts (the Reading: a non-empty sub-queue whose
// jobs all fail the hard QoS yields nothing; C's and E's sub-queues are not looked at).
//
// Heartbeat 3: D arrives, and n2 reports Res {2,9,4,3,1} with 64 GiB and 200 GiB left
// (its features by rank: memory, network, disk, cpu, price). Bob (0.2667) again; memory:
// {B, D}. B's value is 2/2·.05 + 9/3·.7 + 4/3·.05 + 3/5·.1 + 1/1·.1 = 2.3767, now met:
// finalvalue 2.3767 + 2 = 4.3767. D's value is 2/2·.1 + 9/2·.6 + 4/2·.1 + 3/2·.1 +
// 1/2·.1 = 3.2, finalvalue 3.2 + 0. Aging lets B, which waited, start before the
// better-matched D.
//
// Heartbeat 4, n2: bob (0.2333), memory {D}: D. Heartbeat 5, n2: bob (0.2), memory
// empty, network (i = 2) {C}: C. Heartbeat 6, n2: bob's free 0.3 − 4/30 = 0.1667 is
// now below alice's 0.1833: alice, although bob still has E waiting; memory, network
// and disk are empty in alice, cpu (i = 4) {a-cpu}: a-cpu. Heartbeat 7, n2: alice has
// nothing waiting, so bob, the only queue with a job waiting (step 3's Reading); price
// (i = 5) {E}: E.
func TestQoSVectorWorkedExample(t *testing.T) {
	s := qosScheduler(t, map[string]float64{"alice": 0.5, "bob": 0.3})
	for _, id := range []string{"busy", "n1", "n2"} {
		require.NoError(t, s.AddNode(finegrain.Node{ID: id, Capacity: schema.MustTuple(10000, 40*gib)}))
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "filler", Queue: "alice"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "filler-0", Job: "filler", Request: schema.MustTuple(9500, 9*gib)}))
	a, err := s.Place("filler-0", 0)
	require.NoError(t, err)
	require.Equal(t, "busy", a.Node)

	jobA := finegrain.QoSVectorDemand{Req: match.QoSVector{4, 6, 2, 4, 2}, Weights: qosMemClass, Need: match.Hard{Memory: 4 * gib, Disk: 10 * gib}}
	jobB := finegrain.QoSVectorDemand{Req: match.QoSVector{2, 3, 3, 5, 1}, Weights: match.Weights{0.05, 0.7, 0.05, 0.1, 0.1}, Need: match.Hard{Memory: 32 * gib, Disk: 10 * gib}}
	jobC := finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: qosNetClass, Need: match.Hard{Memory: gib, Disk: gib}}
	jobD := finegrain.QoSVectorDemand{Req: match.QoSVector{2, 2, 2, 2, 2}, Weights: qosMemClass, Need: match.Hard{Memory: gib, Disk: gib}}
	qosJobOf(t, s, "a-cpu", "alice", 1*time.Millisecond, finegrain.QoSVectorDemand{Req: match.QoSVector{2, 2, 2, 2, 2}, Weights: qosCPUClass, Need: match.Hard{Memory: gib, Disk: gib}})
	qosJobOf(t, s, "A", "bob", 2*time.Millisecond, jobA)
	qosJobOf(t, s, "B", "bob", 3*time.Millisecond, jobB)
	qosJobOf(t, s, "C", "bob", 4*time.Millisecond, jobC)
	qosJobOf(t, s, "E", "bob", 5*time.Millisecond, finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: match.Weights{0.1, 0.1, 0.1, 0.1, 0.6}, Need: match.Hard{Memory: gib, Disk: gib}})

	// The hand-computed values are the library's.
	n1 := finegrain.QoSVectorSupply{Res: match.QoSVector{8, 6, 3, 5, 2}, Remaining: match.Hard{Memory: 16 * gib, Disk: 100 * gib}}
	n2 := finegrain.QoSVectorSupply{Res: match.QoSVector{2, 9, 4, 3, 1}, Remaining: match.Hard{Memory: 64 * gib, Disk: 200 * gib}}
	assert.InDelta(t, 1.175, match.Value(jobA.Req, n1.Res, jobA.Weights), 1e-12)
	assert.InDelta(t, 1.95, match.Value(jobB.Req, n1.Res, jobB.Weights), 1e-12)
	assert.InDelta(t, 0.05+2.1+0.2/3+0.06+0.1, match.Value(jobB.Req, n2.Res, jobB.Weights), 1e-12)
	assert.InDelta(t, 3.2, match.Value(jobD.Req, n2.Res, jobD.Weights), 1e-12)
	for _, tc := range []struct {
		res                 match.QoSVector
		first, second, last match.Feature
	}{
		{n1.Res, match.FeatureCPU, match.FeatureMemory, match.FeaturePrice},
		{n2.Res, match.FeatureMemory, match.FeatureNetwork, match.FeaturePrice},
	} {
		for rank, want := range map[int]match.Feature{1: tc.first, 2: tc.second, 5: tc.last} {
			got, err := tc.res.Class(rank)
			require.NoError(t, err)
			assert.Equal(t, want, got, "rank %d of %v", rank, tc.res)
		}
	}

	// Heartbeat 1.
	require.NoError(t, s.SetNodeQoSVector("n1", n1))
	got, _ := beat(t, s, "n1", time.Second)
	assert.Equal(t, []string{"A-0"}, got, "bob (free 0.3 > 0.1833), memory sub-queue (no cpu job), A (B fails the hard QoS)")
	assert.Equal(t, 1, priority(t, s, "B"), "B's must_value ≤ 0: its priority rises")
	assert.Zero(t, priority(t, s, "A"))
	assert.Zero(t, priority(t, s, "C"), "C's sub-queue was not evaluated")
	assert.Zero(t, priority(t, s, "a-cpu"), "alice's queue was not chosen")

	// Heartbeat 2: no new report; A's need is off n1's remaining amounts.
	got, d := beat(t, s, "n1", 2*time.Second)
	assert.Empty(t, got, "bob's memory sub-queue holds only B, which fails again: nothing")
	assert.Equal(t, finegrain.PluginRefused, d.Stop)
	require.Len(t, d.Skips, 1)
	assert.Equal(t, finegrain.Skip{Job: "B", Reason: finegrain.PluginRefused, Plugin: "QoSVectorScheduling"}, d.Skips[0])
	assert.Equal(t, 2, priority(t, s, "B"))

	// Heartbeat 3: D arrives; n2 has room for B. Aging: B (4.377) before D (3.2).
	qosJobOf(t, s, "D", "bob", 3*time.Second, jobD)
	require.NoError(t, s.SetNodeQoSVector("n2", n2))
	got, _ = beat(t, s, "n2", 3*time.Second)
	assert.Equal(t, []string{"B-0"}, got)
	assert.InDelta(t, 4.3767, match.FinalValue(match.Value(jobB.Req, n2.Res, jobB.Weights), true, 2), 1e-4)
	assert.Equal(t, 2, priority(t, s, "B"), "met: no rise")
	assert.Zero(t, priority(t, s, "D"))

	// Heartbeats 4–7: D; C (network, n2's 2nd); a-cpu (alice now has more free
	// capacity; cpu, n2's 4th); E (price, n2's 5th).
	for i, want := range []string{"D-0", "C-0", "a-cpu-0", "E-0"} {
		got, _ = beat(t, s, "n2", time.Duration(4+i)*time.Second)
		assert.Equal(t, []string{want}, got, "heartbeat %d", 4+i)
	}
	for _, j := range []string{"a-cpu", "A", "C", "D", "E"} {
		assert.Zero(t, priority(t, s, j), "job %s always met the hard QoS", j)
	}
}

// Step 3: the queue with the most free capacity — its min share less its use — takes
// the node, whatever its jobs' match; only queues with a job waiting compete.
func TestQoSVectorQueueChoice(t *testing.T) {
	good := finegrain.QoSVectorDemand{Req: match.QoSVector{1, 1, 1, 1, 1}, Weights: qosCPUClass, Need: match.Hard{Memory: gib, Disk: gib}}
	poor := finegrain.QoSVectorDemand{Req: match.QoSVector{10, 10, 10, 10, 10}, Weights: qosNetClass, Need: match.Hard{Memory: gib, Disk: gib}}
	for _, tc := range []struct {
		name string
		mins map[string]float64
		fill map[string]int64 // milli-cores running per queue, of 20 cores
		jobs map[string]string
		want string
	}{
		{"the larger capacity, both idle", map[string]float64{"x": 0.6, "y": 0.4}, nil, map[string]string{"x": "poor", "y": "good"}, "x-job-0"},
		{"use counts against it", map[string]float64{"x": 0.6, "y": 0.4}, map[string]int64{"x": 5000}, map[string]string{"x": "poor", "y": "good"}, "y-job-0"},
		{"over its capacity: negative free", map[string]float64{"x": 0.2, "y": 0.1}, map[string]int64{"x": 6000, "y": 2500}, map[string]string{"x": "poor", "y": "good"}, "y-job-0"},
		{"an empty queue does not compete", map[string]float64{"x": 0.9, "y": 0.1}, nil, map[string]string{"y": "poor"}, "y-job-0"},
		{"no capacity: after a queue with one", map[string]float64{"x": 0, "y": 0.1}, nil, map[string]string{"x": "good", "y": "poor"}, "y-job-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := qosScheduler(t, tc.mins)
			require.NoError(t, s.AddNode(finegrain.Node{ID: "fill", Capacity: schema.MustTuple(10000, 100*gib)}))
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 100*gib)}))
			for q, cores := range tc.fill {
				require.NoError(t, s.SubmitJob(finegrain.Job{ID: q + "-fill", Queue: q}))
				require.NoError(t, s.Submit(finegrain.Task{ID: q + "-fill-0", Job: q + "-fill", Request: schema.MustTuple(cores, gib)}))
				_, err := s.Place(q+"-fill-0", 0)
				require.NoError(t, err)
			}
			for q, kind := range tc.jobs {
				d := good
				if kind == "poor" {
					d = poor
				}
				qosJobOf(t, s, q+"-job", q, time.Millisecond, d)
			}
			require.NoError(t, s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: match.QoSVector{9, 1, 1, 1, 1}, Remaining: match.Hard{Memory: 50 * gib, Disk: 50 * gib}}))
			got, _ := beat(t, s, "n", time.Second)
			assert.Equal(t, []string{tc.want}, got)
		})
	}
}

// Steps 2, 4 and 5: the node's i-th largest feature picks the sub-queue, i from 1 up
// while the sub-queue is empty; ties between features go to the earlier one.
func TestQoSVectorClassFallback(t *testing.T) {
	classOf := func(f match.Feature) match.Weights {
		w := match.Weights{0.1, 0.1, 0.1, 0.1, 0.1}
		w[f] = 0.6
		return w
	}
	for _, tc := range []struct {
		name string
		res  match.QoSVector
		jobs []match.Feature // one job per class, submitted in this order
		want match.Feature
	}{
		{"largest", match.QoSVector{2, 3, 9, 4, 1}, []match.Feature{match.FeatureCPU, match.FeatureNetwork}, match.FeatureNetwork},
		{"2nd largest", match.QoSVector{2, 3, 9, 4, 1}, []match.Feature{match.FeatureCPU, match.FeatureDisk, match.FeaturePrice}, match.FeatureDisk},
		{"3rd largest", match.QoSVector{2, 3, 9, 4, 1}, []match.Feature{match.FeatureCPU, match.FeaturePrice, match.FeatureMemory}, match.FeatureMemory},
		{"smallest", match.QoSVector{2, 3, 9, 4, 1}, []match.Feature{match.FeaturePrice}, match.FeaturePrice},
		{"tie: the earlier feature", match.QoSVector{5, 5, 5, 5, 5}, []match.Feature{match.FeaturePrice, match.FeatureDisk, match.FeatureMemory}, match.FeatureMemory},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := qosScheduler(t, map[string]float64{"q": 1})
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 100*gib)}))
			for i, f := range tc.jobs {
				qosJobOf(t, s, f.String(), "q", time.Duration(i+1)*time.Millisecond, finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: classOf(f), Need: match.Hard{Memory: gib, Disk: gib}})
			}
			require.NoError(t, s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: tc.res, Remaining: match.Hard{Memory: 50 * gib, Disk: 50 * gib}}))
			got, _ := beat(t, s, "n", time.Second)
			assert.Equal(t, []string{tc.want.String() + "-0"}, got)
		})
	}
}

// Without a cap, a heartbeat goes on choosing (step 7) with the node's remaining hard
// values less the needs started, until the chosen sub-queue has no job that fits; a
// new report resets them.
func TestQoSVectorHardValuesWithinHeartbeat(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.Capacity{}), finegrain.WithPullStrategy(finegrain.PullQoSVector()))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(64000, 256*gib)}))
	for i := range 5 {
		qosJobOf(t, s, fmt.Sprintf("j%d", i), "", time.Duration(i+1)*time.Millisecond,
			finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: qosMemClass, Need: match.Hard{Memory: 4 * gib, Disk: gib}})
	}
	sup := finegrain.QoSVectorSupply{Res: match.QoSVector{1, 9, 1, 1, 1}, Remaining: match.Hard{Memory: 9 * gib, Disk: 100 * gib}}
	require.NoError(t, s.SetNodeQoSVector("n", sup))
	got, d := beat(t, s, "n", time.Second)
	assert.Equal(t, []string{"j0-0", "j1-0"}, got, "9 GiB: two of 4 GiB fit with room to spare (must_value > 0), a third does not")
	assert.Equal(t, finegrain.PluginRefused, d.Stop)
	got, _ = beat(t, s, "n", 2*time.Second)
	assert.Empty(t, got, "1 GiB left until the node reports again")
	require.NoError(t, s.SetNodeQoSVector("n", sup))
	got, _ = beat(t, s, "n", 3*time.Second)
	assert.Equal(t, []string{"j2-0", "j3-0"}, got)
}

// A job without a demand waits, with a skip saying why; a node without a supply takes
// nothing from the pass.
func TestQoSVectorUnconfigured(t *testing.T) {
	s := qosScheduler(t, nil)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 100*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "bare"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "bare-0", Job: "bare", Request: schema.MustTuple(1000, gib)}))

	got, d := beat(t, s, "n", time.Second)
	assert.Empty(t, got)
	assert.Equal(t, finegrain.PluginRefused, d.Stop, "n has not reported")

	require.NoError(t, s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: match.QoSVector{5, 5, 5, 5, 5}, Remaining: match.Hard{Memory: 50 * gib, Disk: 50 * gib}}))
	got, d = beat(t, s, "n", 2*time.Second)
	assert.Empty(t, got)
	assert.Equal(t, finegrain.AllSkipped, d.Stop, "its task is pending")
	assert.Equal(t, []finegrain.Skip{{Job: "bare", Reason: finegrain.PluginRefused, Plugin: "QoSVectorScheduling"}}, d.Skips)
	assert.Equal(t, []finegrain.Count{{Reason: finegrain.PluginRefused, Plugin: "QoSVectorScheduling", N: 1}}, d.Refusals.Counts)

	require.NoError(t, s.SetJobQoSVector("bare", finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: qosCPUClass, Need: match.Hard{Memory: gib, Disk: gib}}))
	got, _ = beat(t, s, "n", 3*time.Second)
	assert.Equal(t, []string{"bare-0"}, got)
}

// The option's place among the passes, and the combinations New refuses.
func TestQoSVectorOption(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullQoSVector()))
	assert.Equal(t, []string{"QoSVectorScheduling"}, s.Plugins()["Pass"])
	assert.Contains(t, s.Plugins()["Forget"], "QoSVectorScheduling")
	assert.Contains(t, s.Plugins()["Filter"], "QoS", "the eq. 15 deadline check stays")
	late, err := speculate.NewLATE()
	require.NoError(t, err)
	s = newScheduler(t, finegrain.WithPullStrategy(finegrain.PullQoSVector()), finegrain.WithSpeculation(late), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	assert.Equal(t, []string{"QoSVectorScheduling", "Preemption", "Speculation"}, s.Plugins()["Pass"])

	placer, err := speculate.NewFairPlacer()
	require.NoError(t, err)
	// One strategy chooses pull mode's tasks: given twice, the later wins, and the
	// QoS-vector setters answer only while it is the QoS-vector one.
	for _, tc := range []struct {
		name  string
		opts  []finegrain.Option
		pass  string
		setOK bool
	}{
		{"Tetris first", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig())), finegrain.WithPullStrategy(finegrain.PullQoSVector())}, "QoSVectorScheduling", true},
		{"Tetris after", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullQoSVector()), finegrain.WithPullStrategy(finegrain.PullTetris(plugins.DefaultTetrisConfig()))}, "Tetris", false},
		{"pre-release after", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullQoSVector()), finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer))}, "PreReleaseList", false},
		{"pre-release first", []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer)), finegrain.WithPullStrategy(finegrain.PullQoSVector())}, "QoSVectorScheduling", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := finegrain.New(schema, tc.opts...)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.pass}, s.Plugins()["Pass"])
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(1000, gib)}))
			err = s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: match.QoSVector{5, 5, 5, 5, 5}, Remaining: match.Hard{Memory: gib, Disk: gib}})
			if tc.setOK {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, finegrain.ErrInvalid)
			}
		})
	}
	_, err = finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullStrategy{}))
	require.ErrorIs(t, err, finegrain.ErrInvalid, "the zero strategy")
}

// Bad input gets an error that says what is wrong, and changes nothing.
func TestQoSVectorErrors(t *testing.T) {
	s := qosScheduler(t, nil)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 100*gib)}))
	good := finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: qosCPUClass, Need: match.Hard{Memory: gib, Disk: gib}}
	supply := finegrain.QoSVectorSupply{Res: match.QoSVector{5, 5, 5, 5, 5}, Remaining: match.Hard{Memory: 2 * gib, Disk: 2 * gib}}
	qosJobOf(t, s, "j", "", 0, good)
	require.NoError(t, s.SetNodeQoSVector("n", supply))

	nan := math.NaN()
	withReq := func(v match.QoSVector) finegrain.QoSVectorDemand { d := good; d.Req = v; return d }
	withWeights := func(w match.Weights) finegrain.QoSVectorDemand { d := good; d.Weights = w; return d }
	for _, tc := range []struct {
		name     string
		err      error
		sentinel error
		contains string
	}{
		{"req above 10", s.SetJobQoSVector("j", withReq(match.QoSVector{5, 11, 5, 5, 5})), match.ErrBadVector, "qos[1] (memory) = 11"},
		{"req below 1", s.SetJobQoSVector("j", withReq(match.QoSVector{0.5, 5, 5, 5, 5})), match.ErrBadVector, "qos[0] (cpu) = 0.5"},
		{"req NaN", s.SetJobQoSVector("j", withReq(match.QoSVector{5, 5, nan, 5, 5})), match.ErrBadVector, "qos[2] (network) = NaN"},
		{"weights sum", s.SetJobQoSVector("j", withWeights(match.Weights{0.5, 0.5, 0.5, 0, 0})), match.ErrBadWeights, "sum of weights = 1.5"},
		{"weights within tolerance are fine, off it not", s.SetJobQoSVector("j", withWeights(match.Weights{0.6, 0.1, 0.1, 0.1, 0.1 + 1e-5})), match.ErrBadWeights, "sum of weights"},
		{"negative weight", s.SetJobQoSVector("j", withWeights(match.Weights{1.2, -0.2, 0, 0, 0})), match.ErrBadWeights, "weights[1] (memory) = -0.2"},
		{"NaN weight", s.SetJobQoSVector("j", withWeights(match.Weights{nan, 1, 0, 0, 0})), match.ErrBadWeights, "weights[0] (cpu) = NaN"},
		{"negative need", s.SetJobQoSVector("j", finegrain.QoSVectorDemand{Req: good.Req, Weights: good.Weights, Need: match.Hard{Memory: -1}}), match.ErrBadHard, "hard memory = -1"},
		{"unknown job", s.SetJobQoSVector("nope", good), finegrain.ErrUnknownJob, `job "nope"`},
		{"supply above 10", s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: match.QoSVector{5, 5, 5, 5, 10.5}}), match.ErrBadVector, "qos[4] (price) = 10.5"},
		{"supply NaN", s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: match.QoSVector{nan, 5, 5, 5, 5}}), match.ErrBadVector, "NaN"},
		{"negative remaining", s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: supply.Res, Remaining: match.Hard{Disk: -5}}), match.ErrBadHard, "hard disk = -5"},
		{"unknown node", s.SetNodeQoSVector("nope", supply), finegrain.ErrUnknownNode, `node "nope"`},
		{"unknown job's priority", func() error { _, err := s.QoSVectorPriority("nope"); return err }(), finegrain.ErrUnknownJob, `job "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Error(t, tc.err)
			assert.ErrorIs(t, tc.err, tc.sentinel)
			if !errors.Is(tc.sentinel, finegrain.ErrUnknownJob) && !errors.Is(tc.sentinel, finegrain.ErrUnknownNode) {
				assert.ErrorIs(t, tc.err, finegrain.ErrInvalid)
			}
			assert.Contains(t, tc.err.Error(), tc.contains)
			_, twice := doubled(tc.err.Error())
			assert.False(t, twice, tc.err.Error())
		})
	}
	require.NoError(t, s.SetJobQoSVector("j", withWeights(match.Weights{0.6, 0.1, 0.1, 0.1, 0.1 + 1e-7})), "within match.WeightTolerance")
	require.NoError(t, s.SetJobQoSVector("j", good))

	// Nothing changed: the job and node keep their last good settings, and j starts.
	got, _ := beat(t, s, "n", time.Second)
	assert.Equal(t, []string{"j-0"}, got)

	off := newScheduler(t)
	require.NoError(t, off.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, off.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(1000, gib)}))
	for _, err := range []error{
		off.SetJobQoSVector("j", good),
		off.SetNodeQoSVector("n", supply),
		func() error { _, err := off.QoSVectorPriority("j"); return err }(),
	} {
		require.ErrorIs(t, err, finegrain.ErrInvalid)
		assert.Contains(t, err.Error(), "QoS-vector scheduling is off")
	}
}

// What is set for a job or node belongs to it: a node removed and added again must
// report afresh, and a job forgotten (Retention) and submitted again under its ID starts
// with no demand and priority 0.
func TestQoSVectorForgets(t *testing.T) {
	s := qosScheduler(t, nil, finegrain.WithRetention(finegrain.Retention{Jobs: 0, Tasks: 0}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 100*gib)}))
	tight := finegrain.QoSVectorSupply{Res: match.QoSVector{5, 5, 5, 5, 5}, Remaining: match.Hard{Memory: 2 * gib, Disk: 2 * gib}}
	require.NoError(t, s.SetNodeQoSVector("n", tight))
	big := finegrain.QoSVectorDemand{Req: match.QoSVector{5, 5, 5, 5, 5}, Weights: qosCPUClass, Need: match.Hard{Memory: 4 * gib, Disk: gib}}
	qosJobOf(t, s, "j", "", 0, big)
	got, _ := beat(t, s, "n", time.Second)
	assert.Empty(t, got)
	assert.Equal(t, 1, priority(t, s, "j"))

	// The node goes and comes back: no supply until it reports.
	_, err := s.RemoveNode("n", 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(10000, 100*gib)}))
	_, d := beat(t, s, "n", 3*time.Second)
	assert.Equal(t, finegrain.PluginRefused, d.Stop)
	assert.Zero(t, d.Skipped, "no job was looked at")

	// The job ends and is forgotten; a new job of the same ID starts afresh.
	require.NoError(t, s.Cancel("j-0", 4*time.Second))
	_, err = s.QoSVectorPriority("j")
	require.ErrorIs(t, err, finegrain.ErrUnknownJob)
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	assert.Zero(t, priority(t, s, "j"))
	require.NoError(t, s.Submit(finegrain.Task{ID: "j-1", Job: "j", Request: schema.MustTuple(1000, gib)}))
	require.NoError(t, s.SetNodeQoSVector("n", finegrain.QoSVectorSupply{Res: tight.Res, Remaining: match.Hard{Memory: 8 * gib, Disk: 8 * gib}}))
	_, d = beat(t, s, "n", 5*time.Second)
	assert.Equal(t, []finegrain.Skip{{Job: "j", Reason: finegrain.PluginRefused, Plugin: "QoSVectorScheduling"}}, d.Skips, "no demand yet")
	require.NoError(t, s.SetJobQoSVector("j", big))
	got, _ = beat(t, s, "n", 6*time.Second)
	assert.Equal(t, []string{"j-1"}, got)
}
