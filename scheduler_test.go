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
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

var schema = resource.MustSchema(resource.CPU, resource.Memory)

const gib = 1 << 30

func newScheduler(t testing.TB, opts ...finegrain.Option) *finegrain.Scheduler {
	s, err := finegrain.New(schema, opts...)
	require.NoError(t, err)
	return s
}

func addNodes(t testing.TB, s *finegrain.Scheduler, n int, capacity resource.Tuple) {
	for i := 0; i < n; i++ {
		require.NoError(t, s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Rack: fmt.Sprintf("r%d", i%2), Capacity: capacity}))
	}
}

// The DRF paper's example run through the scheduler: one node of <9 CPU, 18 GB>, user A
// with tasks <1 CPU, 4 GB>, user B with <3 CPU, 1 GB>, placed by request: A gets 3 tasks
// and B gets 2.
func TestPullDRFKnownAnswer(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(9000, 18*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "A"}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "B", Submitted: 1}))
	for i := 0; i < 10; i++ {
		require.NoError(t, s.Submit(
			finegrain.Task{ID: fmt.Sprintf("a%d", i), Job: "A", Request: schema.MustTuple(1000, 4*gib)},
			finegrain.Task{ID: fmt.Sprintf("b%d", i), Job: "B", Request: schema.MustTuple(3000, 1*gib), Submitted: 1},
		))
	}
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	got := map[string]int{}
	for _, a := range d.Assignments {
		got[a.Job]++
		assert.False(t, a.Predicted)
		assert.Equal(t, match.Fit, a.Result.Code)
	}
	assert.Equal(t, map[string]int{"A": 3, "B": 2}, got)
	assert.Equal(t, finegrain.NodeBusy, d.Stop, "9 CPUs are used up")
	p, r, _, _ := s.Counts()
	assert.Equal(t, 15, p)
	assert.Equal(t, 5, r)
}

// With prediction, a learned profile smaller than the request lets more tasks in; and a
// task whose learned profile needs memory the node lacks is passed over with the reason.
func TestPullPredictedProfiles(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSkipDetails(finegrain.MaxSkips))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "wc/map", InputSize: 128 << 20}
	// Teach the estimator: tasks of this key use 1 core, 1 GiB for 10 s, then 2 GiB.
	learned := stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(1000, 1*gib)},
		stage.Stage{Duration: 5 * time.Second, Demand: schema.MustTuple(500, 2*gib)})
	require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: learned}))
	for i := 0; i < 8; i++ {
		// The request (2 cores, 4 GiB) would allow two tasks on the node.
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("t%d", i), Job: "j", Key: key, Request: schema.MustTuple(2000, 4*gib)}))
	}
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	assert.Len(t, d.Assignments, 4, "four predicted profiles fit where two requests would")
	for _, a := range d.Assignments {
		assert.True(t, a.Predicted)
		assert.Equal(t, learned.Stages(), a.Profile.Stages())
	}
	require.NotEmpty(t, d.Skips)
	assert.Equal(t, finegrain.NoRoom, d.Skips[0].Reason)
	assert.Equal(t, "memory", d.Skips[0].Result.DimName, "the fifth task's second stage lacks memory")
	assert.Equal(t, 1, d.Skips[0].Result.Stage)
	assert.Equal(t, finegrain.AllSkipped, d.Stop, "a task is still pending")
	assert.Equal(t, []finegrain.Count{{Reason: finegrain.NoRoom, Dim: "memory", N: d.Skipped}}, d.Refusals.Counts)
}

func TestPushPlacement(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithUnresolvableAccepted(true))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "small", Capacity: schema.MustTuple(2000, 2*gib)}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "big", Capacity: schema.MustTuple(8000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "a", Job: "j", Request: schema.MustTuple(1000, 1*gib)},
		finegrain.Task{ID: "huge", Job: "j", Request: schema.MustTuple(1000, 32*gib)},
		finegrain.Task{ID: "later", Job: "j", Request: schema.MustTuple(8000, 1*gib), Duration: time.Minute},
	))
	a, err := s.Place("a", 0)
	require.NoError(t, err)
	assert.Equal(t, "big", a.Node, "least-allocated prefers the roomier node")
	st, _ := s.TaskState("a")
	assert.Equal(t, finegrain.Running, st)

	_, err = s.Place("huge", 0)
	var pe *finegrain.PlacementError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced)
	assert.Equal(t, 0, pe.Tried, "the index stops before any node: none has 32 GiB free")
	st, _ = s.TaskState("huge")
	assert.Equal(t, finegrain.Pending, st, "a failed placement leaves the task pending")

	// "later" needs all 8 cores of big, where "a" holds one until it finishes.
	_, err = s.Place("later", 0)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, finegrain.NoRoom, pe.Reason)
	assert.Equal(t, "cpu", pe.Result.DimName)
	require.NoError(t, s.Finished("a", 30*time.Second, nil))
	a, err = s.Place("later", 30*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "big", a.Node)
}

func TestPushFutureStart(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithFutureStart(true))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 4*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(
		finegrain.Task{ID: "first", Job: "j", Request: schema.MustTuple(4000, 1*gib), Duration: time.Minute},
		finegrain.Task{ID: "second", Job: "j", Request: schema.MustTuple(4000, 1*gib), Duration: time.Minute},
	))
	_, err := s.Place("first", 0)
	require.NoError(t, err)
	a, err := s.Place("second", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, time.Minute, a.Start, "reserved to start when the first ends")

	st, _ := s.TaskState("second")
	assert.Equal(t, finegrain.Booked, st, "committed, its start to come")
	assert.Equal(t, 1, s.Count(finegrain.Booked))

	// It cannot finish before it starts: the event is refused and changes nothing.
	err = s.Finished("second", 20*time.Second, nil)
	assert.ErrorIs(t, err, finegrain.ErrState)
	st, _ = s.TaskState("second")
	assert.Equal(t, finegrain.Booked, st)
	_, _, finished, _ := s.Counts()
	assert.Zero(t, finished)

	// Its start comes: the first event at or after it finds it running.
	require.NoError(t, s.Finished("first", time.Minute, nil))
	require.NoError(t, s.Finished("second", 2*time.Minute, nil))
	_, _, finished, _ = s.Counts()
	assert.Equal(t, 2, finished)

	// An empty window of free segments is no error.
	segs, err := s.FreeSegments("n", 30*time.Second, 30*time.Second)
	require.NoError(t, err)
	assert.Empty(t, segs)
}

func TestDelaySchedulingThroughPull(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithSkipDetails(4))
	addNodes(t, s, 4, schema.MustTuple(4000, 8*gib)) // n0, n2 in r0; n1, n3 in r1
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib), Inputs: []string{"n0"}}))

	d, err := s.Heartbeat("n1", 0) // off-switch: wait
	require.NoError(t, err)
	assert.Empty(t, d.Assignments)
	assert.Equal(t, finegrain.LocalityWait, d.Skips[0].Reason)
	d, err = s.Heartbeat("n2", 6*time.Second) // rack-local after W1 = 5 s
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, fairness.RackLocal, d.Assignments[0].Locality)
}

func TestLifecycleErrors(t *testing.T) {
	s := newScheduler(t)
	addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib)}))
	other := stage.MustProfile(resource.Standard(), stage.Stage{Duration: time.Second})

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"empty node ID", func() error { return s.AddNode(finegrain.Node{Capacity: schema.MustTuple(1, 1)}) }, finegrain.ErrInvalid},
		{"duplicate node", func() error { return s.AddNode(finegrain.Node{ID: "n0", Capacity: schema.MustTuple(1, 1)}) }, finegrain.ErrDuplicate},
		{"negative capacity", func() error { return s.AddNode(finegrain.Node{ID: "x", Capacity: resource.Tuple{-1}}) }, resource.ErrNegative},
		{"duplicate job", func() error { return s.SubmitJob(finegrain.Job{ID: "j"}) }, finegrain.ErrDuplicate},
		{"job in unknown queue", func() error { return s.SubmitJob(finegrain.Job{ID: "k", Queue: "nope"}) }, finegrain.ErrUnknownQueue},
		{"negative weight", func() error { return s.SubmitJob(finegrain.Job{ID: "k", Weight: -1}) }, finegrain.ErrInvalid},
		{"duplicate task", func() error { return s.Submit(finegrain.Task{ID: "t", Job: "j"}) }, finegrain.ErrDuplicate},
		{"duplicate in batch", func() error {
			return s.Submit(finegrain.Task{ID: "u", Job: "j"}, finegrain.Task{ID: "u", Job: "j"})
		}, finegrain.ErrDuplicate},
		{"unknown job", func() error { return s.Submit(finegrain.Task{ID: "u", Job: "nope"}) }, finegrain.ErrUnknownJob},
		{"negative request", func() error { return s.Submit(finegrain.Task{ID: "u", Job: "j", Request: resource.Tuple{0, -1}}) }, resource.ErrNegative},
		{"schema mismatch", func() error { return s.Submit(finegrain.Task{ID: "u", Job: "j", Profile: other}) }, resource.ErrSchemaMismatch},
		{"negative deadline", func() error { return s.Submit(finegrain.Task{ID: "u", Job: "j", Deadline: -1}) }, finegrain.ErrInvalid},
		{"finish before start", func() error { return s.Finished("t", time.Second, nil) }, finegrain.ErrState},
		{"fail a pending task", func() error { return s.Failed("t", time.Second) }, finegrain.ErrState},
		{"started while pending", func() error { return s.Started("t", time.Second) }, finegrain.ErrState},
		{"unknown task", func() error { return s.Cancel("nope", 0) }, finegrain.ErrUnknownTask},
		{"unknown node heartbeat", func() error { _, err := s.Heartbeat("nope", 0); return err }, finegrain.ErrUnknownNode},
		{"negative heartbeat", func() error { _, err := s.Heartbeat("n0", -1); return err }, finegrain.ErrInvalid},
		{"unknown node removal", func() error { _, err := s.RemoveNode("nope", 0); return err }, finegrain.ErrUnknownNode},
		{"unknown node usage", func() error { _, err := s.ReportUsage("nope", 0, nil); return err }, finegrain.ErrUnknownNode},
		{"place unknown", func() error { _, err := s.Place("nope", 0); return err }, finegrain.ErrUnknownTask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.call(), tc.want)
			p, r, f, c := s.Counts()
			assert.Equal(t, [4]int{1, 0, 0, 0}, [4]int{p, r, f, c}, "state unchanged")
			st, _ := s.TaskState("t")
			assert.Equal(t, finegrain.Pending, st)
		})
	}
	require.NoError(t, s.Cancel("t", 0))
	assert.ErrorIs(t, s.Cancel("t", 0), finegrain.ErrState)
	_, err := s.Place("t", 0)
	assert.ErrorIs(t, err, finegrain.ErrState)

	for _, o := range []finegrain.Option{
		finegrain.WithCompressionLimit(1), finegrain.WithCompressionLimit(-0.1), finegrain.WithContentionPenalty(-1),
		finegrain.WithConformityWindow(0), finegrain.WithCandidates(-1), finegrain.WithMaxPerHeartbeat(-1),
		finegrain.WithEstimator(nil), finegrain.WithOrdering(nil), finegrain.WithScorer(nil),
		// Nil pointers in an interface fail at their first use, not at a nil check.
		finegrain.WithEstimator((*predict.SimilarTask)(nil)), finegrain.WithOrdering((*fairness.DRF)(nil)),
		finegrain.WithScorer((*match.LeastAllocated)(nil)),
		finegrain.WithMatcherFor(policy.ModeFineGrained, (*match.FineGrained)(nil)),
		finegrain.WithPlugin((*plugins.StageMatch)(nil)),
		finegrain.WithAdjuster(policy.WithInitialMode(policy.ModeFineGrained), nil), finegrain.WithPullStrategy(finegrain.PullDelayScheduling(nil)),
		finegrain.WithConformityIdleThreshold(resource.Vector{2}),
		finegrain.WithRetention(finegrain.Retention{Tasks: -1}), finegrain.WithRetention(finegrain.Retention{Jobs: -1}),
		finegrain.WithRetention(finegrain.Retention{Age: -1}),
	} {
		_, err := finegrain.New(schema, o)
		assert.ErrorIs(t, err, finegrain.ErrInvalid)
	}
	_, err = finegrain.New(nil)
	assert.ErrorIs(t, err, resource.ErrSchemaMismatch)
}

func TestFailAndRemoveNodeRequeue(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	addNodes(t, s, 2, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	for i := 0; i < 4; i++ {
		require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("t%d", i), Job: "j", Request: schema.MustTuple(2000, gib)}))
	}
	d, err := s.Heartbeat("n0", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 2)
	require.NoError(t, s.Failed(d.Assignments[0].Task, time.Second))
	st, _ := s.TaskState(d.Assignments[0].Task)
	assert.Equal(t, finegrain.Pending, st)
	ids, err := s.RemoveNode("n0", 2*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{d.Assignments[1].Task}, ids)
	p, r, _, _ := s.Counts()
	assert.Equal(t, 4, p)
	assert.Equal(t, 0, r)
	d, err = s.Heartbeat("n1", 3*time.Second)
	require.NoError(t, err)
	assert.Len(t, d.Assignments, 2)
	assert.True(t, errors.Is(&finegrain.PlacementError{}, finegrain.ErrNotPlaced))
}

func TestFinishedWithBadObservationChangesNothing(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "app", InputSize: 1}
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Key: key, Request: schema.MustTuple(1000, gib)}))
	d, err := s.Heartbeat("n0", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	bad := predict.Observation{Profile: stage.MustProfile(resource.Standard(), stage.Stage{Duration: time.Second})}
	err = s.Finished("t", time.Second, &bad)
	assert.ErrorIs(t, err, resource.ErrSchemaMismatch)
	st, _ := s.TaskState("t")
	assert.Equal(t, finegrain.Running, st, "a rejected observation leaves the task running")
	_, ok := s.Estimator().Estimate(key)
	assert.False(t, ok)
	require.NoError(t, s.Finished("t", time.Second, nil))
	free, err := s.NodeFree("n0", time.Second)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(4000, 8*gib), free)
}

// A custom matcher for the fine-grained mode replaces Alg. 2: coarse-grained matching
// refuses a task whose peak does not fit, though its stages would; Refuse takes nothing.
func TestWithMatcherFor(t *testing.T) {
	key := predict.Key{Logic: "app", InputSize: 1}
	learned := stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(500, gib)},
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(3000, gib)})
	run := func(opts ...finegrain.Option) error {
		s := newScheduler(t, append(opts, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithPrediction(false))...)
		addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
		// A task by request holds 3 cores for the first 10 s.
		require.NoError(t, s.Submit(finegrain.Task{ID: "first", Job: "j", Request: schema.MustTuple(3000, gib), Duration: 10 * time.Second}))
		_, err := s.Place("first", 0)
		require.NoError(t, err)
		// The second declares its profile: 0.5 core for 10 s, then 3 cores.
		require.NoError(t, s.Submit(finegrain.Task{ID: "second", Job: "j", Key: key, Profile: learned, Request: schema.MustTuple(3000, gib)}))
		_, err = s.Place("second", 0)
		return err
	}
	assert.NoError(t, run(), "fine-grained: the 3-core stage starts when the first task ends")
	err := run(finegrain.WithMatcherFor(policy.ModeFineGrained, match.CoarseGrained{}))
	var pe *finegrain.PlacementError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, match.NoRoom, pe.Result.Code, "coarse-grained: the 3-core peak does not fit over [0, 20 s)")
	err = run(finegrain.WithMatcherFor(policy.ModeFineGrained, match.RefuseAll{}))
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, match.Unschedulable, pe.Result.Code)

	_, err = finegrain.New(schema, finegrain.WithMatcherFor(policy.ModeStopAllocation, match.FineGrained{}))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	_, err = finegrain.New(schema, finegrain.WithMatcherFor(policy.ModeFineGrained, nil))
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
}

// Under FIFO the first job takes every task it can before the next job gets any (its
// key does not change as it runs); under DRF the jobs alternate.
func TestPullFIFOHeadOfLine(t *testing.T) {
	order := func(p fairness.Policy) []string {
		s := newScheduler(t, finegrain.WithOrdering(p), finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
		addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a"}))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "b", Submitted: 1}))
		for i := 0; i < 3; i++ {
			require.NoError(t, s.Submit(
				finegrain.Task{ID: fmt.Sprintf("a%d", i), Job: "a", Request: schema.MustTuple(1000, gib)},
				finegrain.Task{ID: fmt.Sprintf("b%d", i), Job: "b", Request: schema.MustTuple(1000, gib), Submitted: 1},
			))
		}
		d, err := s.Heartbeat("n0", 0)
		require.NoError(t, err)
		var got []string
		for _, a := range d.Assignments {
			got = append(got, a.Task)
		}
		return got
	}
	assert.Equal(t, []string{"a0", "a1", "a2", "b0"}, order(fairness.FIFO{}))
	assert.Equal(t, []string{"a0", "b0", "a1", "b1"}, order(fairness.DRF{}))
}

// Delay scheduling must not starve a job whose data sits on a node that can never fit
// its task. With Hadoop's waits (WithLocalityWaitForRoom off) the node-local offers
// that fail do not reset the job's wait, so after W1 + W2 it launches off-switch
// elsewhere. The default's room rule changes nothing here: it waives the node-local
// wait for a rack-local offer only, and the only other node is in another rack.
func TestDelayDoesNotStarveOnUnfitLocalNode(t *testing.T) {
	for name, tc := range map[string]struct {
		opts     []finegrain.Option
		from, to time.Duration // when the task is placed
	}{
		"Hadoop's waits: W1 + W2 first":                {[]finegrain.Option{finegrain.WithLocalityWaitForRoom(false)}, 25 * time.Second, 26 * time.Second},
		"waits only for room: off-switch, W1 + W2 too": {nil, 25 * time.Second, 26 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			s := newScheduler(t, append([]finegrain.Option{finegrain.WithPrediction(false)}, tc.opts...)...)
			require.NoError(t, s.AddNode(finegrain.Node{ID: "tiny", Rack: "r0", Capacity: schema.MustTuple(500, gib)}))
			require.NoError(t, s.AddNode(finegrain.Node{ID: "big", Rack: "r1", Capacity: schema.MustTuple(8000, 16*gib)}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(2000, 2*gib), Inputs: []string{"tiny"}}))
			var placed time.Duration = -1
			for now := time.Duration(0); now <= time.Minute && placed < 0; now += time.Second {
				for _, node := range []string{"tiny", "big"} {
					d, err := s.Heartbeat(node, now)
					require.NoError(t, err)
					if len(d.Assignments) > 0 {
						assert.Equal(t, "big", d.Assignments[0].Node)
						assert.Equal(t, fairness.OffSwitch, d.Assignments[0].Locality)
						placed = now
					}
				}
			}
			require.GreaterOrEqual(t, placed, tc.from)
			assert.LessOrEqual(t, placed, tc.to)
		})
	}
}

// Under delay scheduling a job passes up a node-local offer only while a node holding
// its input could take its task now (WithLocalityWaitForRoom, the default): when that
// node is full, stopped by the adjuster or below the idle threshold (though the task
// would fit it), the job takes the rack-local offer at hand at once. With Hadoop's waits it passes it up all the same.
func TestLocalityWaitForRoom(t *testing.T) {
	type setup func(t *testing.T, s *finegrain.Scheduler)
	fill := func(cpu, mem int64) setup { // another job's task takes cpu and mem of "local"
		return func(t *testing.T, s *finegrain.Scheduler) {
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "filler"}))
			require.NoError(t, s.Submit(finegrain.Task{ID: "f", Job: "filler", Request: schema.MustTuple(cpu, mem), Inputs: []string{"local"}}))
			d, err := s.Heartbeat("local", 0)
			require.NoError(t, err)
			require.Len(t, d.Assignments, 1)
		}
	}
	stop := func(t *testing.T, s *finegrain.Scheduler) {
		require.NoError(t, s.Adjuster().SetMode("local", policy.ModeStopAllocation))
	}
	for name, tc := range map[string]struct {
		setup     setup
		hadoop    bool
		from      string // the node that heartbeats; "" for "other"
		wantNode  string // where "t" is placed by that heartbeat; "" for nowhere
		wantLevel fairness.Level
	}{
		"local node full: takes the offer":            {setup: fill(7500, gib), wantNode: "other", wantLevel: fairness.RackLocal},
		"local node stopped: takes the offer":         {setup: stop, wantNode: "other", wantLevel: fairness.RackLocal},
		"local node below idle room: takes the offer": {setup: fill(1000, 31*gib/2), wantNode: "other", wantLevel: fairness.RackLocal},
		"local node has room: waits":                  {setup: fill(4000, gib)},
		"local node empty: waits":                     {},
		"local node full, Hadoop's waits: waits":      {setup: fill(7500, gib), hadoop: true},
		// The waiver is for a rack-local offer: off-switch, W1 and W2 still apply.
		"local node full, off-switch offer: waits":  {setup: fill(7500, gib), from: "far"},
		"local node stopped, Hadoop's waits: waits": {setup: stop, hadoop: true},
	} {
		t.Run(name, func(t *testing.T) {
			opts := []finegrain.Option{finegrain.WithPrediction(false), finegrain.WithSkipDetails(4)}
			if tc.hadoop {
				opts = append(opts, finegrain.WithLocalityWaitForRoom(false))
			}
			s := newScheduler(t, opts...)
			for _, id := range []string{"local", "other"} {
				require.NoError(t, s.AddNode(finegrain.Node{ID: id, Rack: "r0", Capacity: schema.MustTuple(8000, 16*gib)}))
			}
			require.NoError(t, s.AddNode(finegrain.Node{ID: "far", Rack: "r1", Capacity: schema.MustTuple(8000, 16*gib)}))
			if tc.setup != nil {
				tc.setup(t, s)
			}
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib/4), Inputs: []string{"local"}}))
			from := tc.from
			if from == "" {
				from = "other"
			}
			d, err := s.Heartbeat(from, time.Second)
			require.NoError(t, err)
			if tc.wantNode == "" {
				assert.Empty(t, d.Assignments)
				assert.Contains(t, d.Skips, finegrain.Skip{Job: "j", Reason: finegrain.LocalityWait})
				st, _ := s.TaskState("t")
				assert.Equal(t, finegrain.Pending, st)
				return
			}
			require.Len(t, d.Assignments, 1)
			assert.Equal(t, "t", d.Assignments[0].Task)
			assert.Equal(t, tc.wantNode, d.Assignments[0].Node)
			assert.Equal(t, tc.wantLevel, d.Assignments[0].Locality)
		})
	}
}

// A task that outlives its prediction keeps its last stage's memory reserved until it
// finishes (the default); with WithHoldUntilFinished(false) the reservation ends with
// the prediction, as in the paper.
func TestHoldUntilFinished(t *testing.T) {
	p := stage.MustProfile(schema,
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(2000, 4*gib)},
		stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(1000, 2*gib)})
	for _, tc := range []struct {
		opts []finegrain.Option
		want int64 // memory free at 60 s, past the 20 s prediction
	}{
		{nil, 6 * gib},
		{[]finegrain.Option{finegrain.WithHoldUntilFinished(false)}, 8 * gib},
	} {
		s := newScheduler(t, tc.opts...)
		addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
		require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Profile: p}))
		a, err := s.Place("t", 0)
		require.NoError(t, err)
		assert.Equal(t, p.Stages(), a.Profile.Stages(), "the assignment shows the plan")
		free, err := s.NodeFree("n0", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, tc.want, free[1])
		assert.Equal(t, int64(4000), free[0], "CPU is not held past the plan")
		require.NoError(t, s.Finished("t", time.Minute, nil))
		free, err = s.NodeFree("n0", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, schema.MustTuple(4000, 8*gib), free)
	}
}

// A task's next placement follows what the estimator learned meanwhile: the hold
// built from an estimate is cached only while the estimate stays the same.
func TestPlacementFollowsTheEstimate(t *testing.T) {
	s := newScheduler(t, finegrain.WithFailureEscalation(false))
	addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "sort", InputSize: 1}
	learn := func(cpu, mem int64) stage.Profile {
		p := stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(cpu, mem)})
		require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: p}))
		est, ok := s.Estimator().Estimate(key)
		require.True(t, ok)
		return est
	}
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Key: key, Request: schema.MustTuple(1000, gib)}))
	first := learn(2000, 4*gib)
	for range 2 {
		a, err := s.Place("t", 0)
		require.NoError(t, err)
		assert.Equal(t, first, a.Profile)
		free, err := s.NodeFree("n0", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, int64(4*gib), free[1], "the estimate's memory is held until the task finishes")
		require.NoError(t, s.Failed("t", 0))
	}
	second := learn(1000, 6*gib)
	require.NotEqual(t, first, second)
	a, err := s.Place("t", 0)
	require.NoError(t, err)
	assert.Equal(t, second, a.Profile, "the placement after the observation follows the new estimate")
	free, err := s.NodeFree("n0", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 8*gib-second.Peak()[1], free[1], "and holds its memory")
}

// Placement reads each node's mode as the adjuster has it now — set by hand, the
// server untracked or tracked again, the node removed and added again — although the
// filters keep references to the modes.
func TestPlacementFollowsModes(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithFailureEscalation(false))
	bigCap := schema.MustTuple(8000, 16*gib)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "big", Capacity: bigCap}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "small", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib)}))
	adj := s.Adjuster()
	for i, step := range []struct {
		change func() error
		want   string
	}{
		{func() error { return nil }, "big"},
		{func() error { return adj.SetMode("big", policy.ModeStopAllocation) }, "small"},
		{func() error { return adj.SetMode("big", policy.ModeCoarseGrained) }, "big"},
		{func() error { return adj.RemoveServer("big") }, "small"},
		{func() error { return adj.AddServer("big", bigCap) }, "big"},
		{func() error {
			if _, err := s.RemoveNode("big", 0); err != nil {
				return err
			}
			return s.AddNode(finegrain.Node{ID: "big", Capacity: bigCap})
		}, "big"},
		{func() error { return adj.SetMode("big", policy.ModeStopAllocation) }, "small"},
		{func() error { return adj.SetMode("small", policy.ModeStopAllocation) }, ""},
	} {
		require.NoError(t, step.change(), "step %d", i)
		a, err := s.Place("t", 0)
		if step.want == "" {
			var pe *finegrain.PlacementError
			require.ErrorAs(t, err, &pe, "step %d", i)
			assert.Equal(t, finegrain.PolicyStop, pe.Reason, "step %d", i)
			continue
		}
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, step.want, a.Node, "step %d", i)
		require.NoError(t, s.Failed("t", 0))
	}
}

// Load the scheduler did not place (other applications) is held on the node until the
// next report replaces it; where tasks leave less free, what is free is held.
func TestSetExternalLoad(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(3500, gib)}))

	held, err := s.SetExternalLoad("n0", 0, schema.MustTuple(1000, 2*gib))
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(1000, 2*gib), held)
	free, err := s.NodeFree("n0", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(3000, 6*gib), free)
	_, err = s.Place("t", 0)
	assert.ErrorIs(t, err, finegrain.ErrNotPlaced, "3.5 cores do not fit beside the other applications' core")

	held, err = s.SetExternalLoad("n0", 10*time.Second, resource.Tuple{})
	require.NoError(t, err)
	assert.True(t, held.IsZero())
	_, err = s.Place("t", 10*time.Second)
	require.NoError(t, err)

	// The task holds 3.5 cores and 1 GiB: a report of 1 core and 8 GiB is held as what
	// is left, 0.5 core and 7 GiB.
	held, err = s.SetExternalLoad("n0", 20*time.Second, schema.MustTuple(1000, 8*gib))
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(500, 7*gib), held)

	_, err = s.SetExternalLoad("nope", 0, resource.Tuple{})
	assert.ErrorIs(t, err, finegrain.ErrUnknownNode)
	_, err = s.SetExternalLoad("n0", 30*time.Second, resource.Tuple{0, -1})
	assert.ErrorIs(t, err, resource.ErrNegative)
	_, err = s.SetExternalLoad("n0", -1, resource.Tuple{})
	assert.ErrorIs(t, err, finegrain.ErrInvalid)
	free, err = s.NodeFree("n0", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, resource.Tuple{}, free, "rejected reports change nothing")
}

// WithExternalLoadForecast holds the quantile of the reports over its window on the
// CPU and their largest memory; a node that leaves and comes back starts afresh.
func TestExternalLoadForecast(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithExternalLoadForecast(time.Minute, 0.5))
	addNodes(t, s, 1, schema.MustTuple(8000, 16*gib))
	for i, r := range []resource.Tuple{schema.MustTuple(1000, 4*gib), schema.MustTuple(5000, gib), schema.MustTuple(3000, 2*gib)} {
		held, err := s.SetExternalLoad("n0", time.Duration(i)*20*time.Second, r)
		require.NoError(t, err)
		if i == 2 {
			assert.Equal(t, schema.MustTuple(3000, 4*gib), held, "the median CPU, the most memory")
		}
	}
	held, err := s.SetExternalLoad("n0", 100*time.Second, schema.MustTuple(2000, gib))
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(2000, 2*gib), held, "the first two reports are past the window; of 3 and 2 cores the median by nearest rank is the lower")
	_, err = s.RemoveNode("n0", 100*time.Second)
	require.NoError(t, err)
	addNodes(t, s, 1, schema.MustTuple(8000, 16*gib))
	held, err = s.SetExternalLoad("n0", 110*time.Second, schema.MustTuple(500, gib))
	require.NoError(t, err)
	assert.Equal(t, schema.MustTuple(500, gib), held, "the node's earlier reports were forgotten")

	for _, o := range []finegrain.Option{
		finegrain.WithExternalLoadForecast(-time.Second, 0.5),
		finegrain.WithExternalLoadForecast(time.Minute, 1.01),
		finegrain.WithExternalLoadForecast(time.Minute, math.NaN()),
	} {
		_, err := finegrain.New(schema, o)
		assert.ErrorIs(t, err, finegrain.ErrInvalid)
	}
}

// A usage report lets the scheduler hold the other applications' CPU net of the slack
// the tasks leave (what they reserve less what they use); memory is held whole; with
// netting off the report changes no hold.
func TestExternalLoadNetting(t *testing.T) {
	for _, tc := range []struct {
		name      string
		netting   bool
		actualCPU int64 // the node's whole usage over the window: tasks and the others
		wantFree  resource.Tuple
	}{
		{"the task uses 1 of its 4 cores: the others' 3 fit in the slack", true, 4000, schema.MustTuple(4000, 10*gib)},
		{"the task uses 3 of 4: 1 core of slack, 2 held", true, 6000, schema.MustTuple(2000, 10*gib)},
		{"the task uses all 4: the others held whole", true, 7000, schema.MustTuple(1000, 10*gib)},
		{"netting off: held whole", false, 4000, schema.MustTuple(1000, 10*gib)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithExternalLoadNetting(tc.netting))
			addNodes(t, s, 1, schema.MustTuple(8000, 16*gib))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(4000, 2*gib)}))
			_, err := s.Place("t", 0)
			require.NoError(t, err)
			held, err := s.SetExternalLoad("n0", time.Second, schema.MustTuple(3000, 4*gib))
			require.NoError(t, err)
			require.Equal(t, schema.MustTuple(3000, 4*gib), held)
			window := []predict.Interval{{Duration: 10 * time.Second, Actual: schema.MustTuple(tc.actualCPU, 6*gib), Predicted: schema.MustTuple(7000, 6*gib)}}
			_, err = s.ReportUsage("n0", time.Second, window)
			require.NoError(t, err)
			free, err := s.NodeFree("n0", time.Second)
			require.NoError(t, err)
			assert.Equal(t, tc.wantFree, free)
		})
	}
}

// Decisions detail skipped jobs as many as asked, and tally them all. A node that can
// take none of the pending tasks is not walked at all: the heartbeat says so
// (NoClassFits) and details nothing.
func TestSkipDetails(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		for _, walk := range []bool{false, true} {
			opts := []finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSkipDetails(n)}
			if walk {
				opts = append(opts, finegrain.WithoutPlugin("DemandClasses"))
			}
			s := newScheduler(t, opts...)
			addNodes(t, s, 2, schema.MustTuple(1000, 2*gib))
			_, err := s.Place(placeFiller(t, s), 0) // n0 is left with 1 GiB free
			require.NoError(t, err)
			for j := 0; j < 3; j++ {
				require.NoError(t, s.SubmitJob(finegrain.Job{ID: fmt.Sprintf("j%d", j)}))
				require.NoError(t, s.Submit(finegrain.Task{ID: fmt.Sprintf("t%d", j), Job: fmt.Sprintf("j%d", j), Request: schema.MustTuple(100, 2*gib)}))
			}
			d, err := s.Heartbeat("n0", 0)
			require.NoError(t, err)
			if !walk {
				assert.Equal(t, finegrain.NoClassFits, d.Stop, "details %d", n)
				assert.Zero(t, d.Skipped)
				assert.Empty(t, d.Skips)
				continue
			}
			assert.Equal(t, finegrain.AllSkipped, d.Stop, "details %d", n)
			assert.Equal(t, 3, d.Skipped)
			assert.Len(t, d.Skips, n)
			assert.Equal(t, finegrain.Tally{Of: 3, Counts: []finegrain.Count{{Reason: finegrain.NoRoom, Dim: "memory", N: 3}}}, d.Refusals)
		}
	}
	for _, n := range []int{-1, finegrain.MaxSkips + 1} {
		_, err := finegrain.New(schema, finegrain.WithSkipDetails(n))
		assert.ErrorIs(t, err, finegrain.ErrInvalid)
	}
}

// placeFiller submits a task holding 1 GiB on the first node and returns its ID.
func placeFiller(t *testing.T, s *finegrain.Scheduler) string {
	t.Helper()
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "filler"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "filler", Job: "filler", Request: schema.MustTuple(100, gib), Inputs: []string{"n0"}}))
	return "filler"
}

// Delay scheduling's waits grow in steps of DelayUpdate: the job passes up an offer at
// 0 s; a heartbeat at 0.1 s from a node too small for it offers it nothing and is
// within the step; at 5 s the job is credited with the whole 5 s and takes a
// rack-local node. (Credited per heartbeat, it would have waited 0.1 s.)
func TestDelayWaitsGrowInUpdateSteps(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false))
	addNodes(t, s, 4, schema.MustTuple(4000, 8*gib)) // n0, n2 in r0; n1, n3 in r1
	require.NoError(t, s.AddNode(finegrain.Node{ID: "small", Rack: "r1", Capacity: schema.MustTuple(500, gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib), Inputs: []string{"n0"}}))
	for _, node := range []string{"n1", "small"} {
		d, err := s.Heartbeat(node, map[string]time.Duration{"n1": 0, "small": 100 * time.Millisecond}[node])
		require.NoError(t, err)
		require.Empty(t, d.Assignments)
	}
	d, err := s.Heartbeat("n2", 5*time.Second) // rack-local: waited 5 s ≥ W1
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, fairness.RackLocal, d.Assignments[0].Locality)
}

// A job that the demand classes pass over before a task is chosen is reported as such,
// not as a task with no room and a result that fits.
func TestClassSkipIsReported(t *testing.T) {
	s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithSkipDetails(4), finegrain.WithUnresolvableAccepted(true))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "big"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "huge", Job: "big", Request: schema.MustTuple(1000, 16*gib)}))
	// A task that fits, so that the heartbeat walks the jobs.
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "small", Submitted: 1}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "tiny", Job: "small", Request: schema.MustTuple(1000, gib)}))
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	require.Len(t, d.Skips, 1)
	sk := d.Skips[0]
	assert.Equal(t, finegrain.NoClassFits, sk.Reason)
	assert.Equal(t, "DemandClasses", sk.Plugin)
	assert.Empty(t, sk.Task)
	assert.NotContains(t, sk.String(), "no room")
	assert.NotContains(t, sk.String(), "fits by")
}

// A finished predicted task tells the node's adjuster how long it took against its
// predicted duration (Alg. 3's degradation): on time is not degrading, three times too
// long is.
func TestFinishedReportsCompletionToAdjuster(t *testing.T) {
	for _, tc := range []struct {
		name  string
		took  time.Duration
		wants bool
	}{{"on time", 10 * time.Second, false}, {"three times too long", 30 * time.Second, true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 16*gib)}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
			key := predict.Key{Logic: "app", InputSize: 1}
			learned := stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(1000, gib)})
			require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: learned}))
			var ids []string
			for i := 0; i < 3; i++ {
				id := fmt.Sprintf("t%d", i)
				ids = append(ids, id)
				require.NoError(t, s.Submit(finegrain.Task{ID: id, Job: "j", Key: key, Request: schema.MustTuple(2000, 2*gib)}))
			}
			start := 100 * time.Second
			d, err := s.Heartbeat("n", start)
			require.NoError(t, err)
			require.Len(t, d.Assignments, 3)
			require.True(t, d.Assignments[0].Predicted)
			for _, id := range ids {
				require.NoError(t, s.Finished(id, start+tc.took, nil))
			}
			degrading, err := s.Adjuster().Degrading("n")
			require.NoError(t, err)
			assert.Equal(t, tc.wants, degrading)
		})
	}
}

// A task killed on its prediction is not placed on it again: it holds the larger of
// its request and the prediction, then half as much more memory for each further
// failure, as far as the largest node holds. Without this a task whose prediction is
// too small is killed and placed on the same prediction for ever.
func TestFailedTaskEscalates(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 16*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	key := predict.Key{Logic: "wc/map", InputSize: 128 << 20}
	learned := stage.MustProfile(schema, stage.Stage{Duration: 10 * time.Second, Demand: schema.MustTuple(500, 1*gib)})
	require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: learned}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Key: key, Request: schema.MustTuple(1000, 4*gib)}))
	now := time.Duration(0)
	for i, want := range []struct {
		predicted bool
		peak      resource.Tuple
	}{
		{true, schema.MustTuple(500, 1*gib)},      // the prediction
		{false, schema.MustTuple(1000, 4*gib)},    // failed once: the request covers the prediction
		{false, schema.MustTuple(1000, 6*gib)},    // twice: memory × 1.5
		{false, schema.MustTuple(1000, 9*gib)},    // × 1.5²
		{false, schema.MustTuple(1000, 27*gib/2)}, // × 1.5³
		{false, schema.MustTuple(1000, 27*gib/2)}, // × 1.5⁴ = 20.25 GiB: no node holds it
		{false, schema.MustTuple(1000, 27*gib/2)},
	} {
		a, err := s.Place("t", now)
		require.NoError(t, err, "run %d", i)
		assert.Equal(t, want.predicted, a.Predicted, "run %d", i)
		assert.Equal(t, want.peak, a.Profile.Peak(), "run %d", i)
		now += time.Second
		require.NoError(t, s.Failed("t", now))
	}
}
