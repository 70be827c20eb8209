package finegrain_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// TestClockIndexMatchesScan replays random event sequences on two schedulers with
// locality waits by the clock rule: the default one, which passes over a job that may
// not launch on the node by the pending index's node and rack tables
// (cluster.State.BestLocality), and one that finds each job's best locality by looking
// at all of its pending tasks' inputs (plugins.ScanLocality). Every heartbeat must
// start the same tasks on the same node at the same locality. The waits are short, so
// that jobs relax to rack-local and off-switch within a sequence, and locality waits
// for room (WithLocalityWaitForRoom) are on or off.
func TestClockIndexMatchesScan(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	// The seed is fresh on every run; gopter prints it when a property fails.
	props := gopter.NewProperties(params)
	props.Property("the indexed walk decides as the scan", prop.ForAll(func(seed int64) string {
		return replayClock(seed, 150)
	}, gen.Int64()))
	props.TestingRun(t)
}

func replayClock(seed int64, steps int) string {
	schema := resource.Standard()
	r := rand.New(rand.NewSource(seed))
	w1, w2 := time.Duration(r.Intn(3))*time.Second, time.Duration(r.Intn(4))*time.Second
	room := r.Intn(2) == 0
	var ss [2]*finegrain.Scheduler
	for i := range ss {
		opts := []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullLocalityClock(w1, w2)), finegrain.WithLocalityWaitForRoom(room)}
		if i == 1 {
			clock, err := fairness.NewLocalityClock(w1, w2)
			if err != nil {
				return err.Error()
			}
			ds := plugins.NewClockScheduling(clock, plugins.WaitForRoom(room), plugins.ScanLocality())
			if err := ds.SetPackingBound(finegrain.DefaultPackingBound); err != nil {
				return err.Error()
			}
			opts = append(opts, finegrain.WithoutPlugin(ds.Name()), finegrain.WithPlugin(ds))
		}
		s, err := finegrain.New(schema, opts...)
		if err != nil {
			return err.Error()
		}
		ss[i] = s
	}
	w, msg := newTwins(r, schema, ss)
	if msg != "" {
		return msg
	}
	return w.replay(steps, [2]string{"indexed", "scan"})
}

// The clock rule's waits, by the time since the last launch and the level launched at.
func TestLocalityClockAllowed(t *testing.T) {
	c, err := fairness.NewLocalityClock(5*time.Second, 20*time.Second)
	require.NoError(t, err)
	s := func(l fairness.Level, since time.Duration) fairness.ClockState {
		return fairness.ClockState{Level: l, Since: since}
	}
	tests := []struct {
		name  string
		state fairness.ClockState
		now   time.Duration
		want  fairness.Level
	}{
		{"arrived, before W1", fairness.Arrived(10 * time.Second), 14 * time.Second, fairness.NodeLocal},
		{"arrived, W1 passed", fairness.Arrived(10 * time.Second), 15 * time.Second, fairness.RackLocal},
		{"arrived, W1 + W2 passed", fairness.Arrived(10 * time.Second), 35 * time.Second, fairness.OffSwitch},
		{"node-local launch restarts the clock", s(fairness.NodeLocal, 30*time.Second), 34 * time.Second, fairness.NodeLocal},
		{"after a rack-local launch, rack-local at once", s(fairness.RackLocal, 30*time.Second), 30 * time.Second, fairness.RackLocal},
		{"after a rack-local launch, anywhere W2 later", s(fairness.RackLocal, 30*time.Second), 50 * time.Second, fairness.OffSwitch},
		{"after an off-switch launch, anywhere", s(fairness.OffSwitch, 30*time.Second), 30 * time.Second, fairness.OffSwitch},
		{"a time before the launch counts as no wait", s(fairness.NodeLocal, 30*time.Second), 0, fairness.NodeLocal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, c.Allowed(tt.state, tt.now))
		})
	}
	_, err = fairness.NewLocalityClock(-time.Second, 0)
	assert.ErrorIs(t, err, fairness.ErrInvalidWait)
	_, err = finegrain.New(resource.Standard(), finegrain.WithPullStrategy(finegrain.PullLocalityClock(0, -1)))
	assert.ErrorIs(t, err, fairness.ErrInvalidWait)
	_, err = fairness.Launch(fairness.OffSwitch+1, 0)
	assert.ErrorIs(t, err, fairness.ErrInvalidLevel)
}

// Under the clock rule a job waits for locality by the clock alone: a job whose input
// is on n0 is not placed on n1 (the other rack) until W1 + W2 after it arrived, however
// many offers it passed up, and at once after that.
func TestClockRuleWaitsByTheClock(t *testing.T) {
	schema := resource.Standard()
	s, err := finegrain.New(schema, finegrain.WithPullStrategy(finegrain.PullLocalityClock(2*time.Second, 3*time.Second)), finegrain.WithLocalityWaitForRoom(false))
	require.NoError(t, err)
	for i, rack := range []string{"r0", "r1"} {
		require.NoError(t, s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Rack: rack, Capacity: schema.MustTuple(4000, 8<<30, 100, 100, 100<<30, 0)}))
	}
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j", Submitted: time.Second}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, 1<<30, 0, 0, 0, 0), Inputs: []string{"n0"}}))
	for _, now := range []time.Duration{time.Second, 2 * time.Second, 5900 * time.Millisecond} {
		d, err := s.Heartbeat("n1", now)
		require.NoError(t, err)
		assert.Empty(t, d.Assignments, "at %v: the job still waits for node or rack locality", now)
	}
	d, err := s.Heartbeat("n1", 6*time.Second) // W1 + W2 after its arrival
	require.NoError(t, err)
	require.Len(t, d.Assignments, 1)
	assert.Equal(t, fairness.OffSwitch, d.Assignments[0].Locality)
}

// The demand classes refuse a predicted task whose first stage the node cannot hold
// over the stage's window, though enough is free now: a declared task on the node
// takes most of its CPU from 4 s on, and the predicted task's first stage lasts 10 s.
// Without the check the task is tried and refused by the matcher; with it the job is
// passed over first. A first stage that ends before the busy stretch fits.
func TestFirstStageWindow(t *testing.T) {
	schema := resource.MustSchema(resource.CPU, resource.Memory)
	tests := []struct {
		name     string
		first    time.Duration // the predicted first stage's length
		busyCPU  int64         // what the node's other task takes from 4 s on
		compress bool          // the default compression limit (10%), else none
		without  bool          // without the demand classes
		want     framework.Reason
		starts   bool
	}{
		{name: "window too busy: the classes pass the job over", first: 10 * time.Second, busyCPU: 3500, want: framework.NoClassFits},
		{name: "window too busy, no classes: the matcher refuses", first: 10 * time.Second, busyCPU: 3500, without: true, want: framework.NoRoom},
		{name: "first stage ends before the busy stretch", first: 3 * time.Second, busyCPU: 3500, starts: true},
		{name: "short by less than compression allows: it starts compressed", first: 10 * time.Second, busyCPU: 2100, compress: true, starts: true},
		{name: "short by more than compression allows", first: 10 * time.Second, busyCPU: 3000, compress: true, want: framework.NoClassFits},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []finegrain.Option{finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSkipDetails(8)}
			if !tt.compress {
				opts = append(opts, finegrain.WithCompressionLimit(0))
			}
			if tt.without {
				opts = append(opts, finegrain.WithoutPlugin("DemandClasses"))
			}
			s, err := finegrain.New(schema, opts...)
			require.NoError(t, err)
			require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8<<30)}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "busy"}))
			busy := stage.MustProfile(schema,
				stage.Stage{Duration: 4 * time.Second, Demand: schema.MustTuple(500, 1<<30)},
				stage.Stage{Duration: time.Minute, Demand: schema.MustTuple(tt.busyCPU, 1<<30)})
			require.NoError(t, s.Submit(finegrain.Task{ID: "busy-0", Job: "busy", Profile: busy}))
			d, err := s.Heartbeat("n", 0)
			require.NoError(t, err)
			require.Len(t, d.Assignments, 1)

			key := predict.Key{Logic: "etl", InputSize: 1}
			learned := stage.MustProfile(schema,
				stage.Stage{Duration: tt.first, Demand: schema.MustTuple(2000, 1<<30)},
				stage.Stage{Duration: time.Second, Demand: schema.MustTuple(100, 1<<30)})
			require.NoError(t, s.Estimator().Observe(key, predict.Observation{Profile: learned}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "etl"}))
			require.NoError(t, s.Submit(finegrain.Task{ID: "etl-0", Job: "etl", Key: key, Request: schema.MustTuple(2000, 1<<30)}))
			d, err = s.Heartbeat("n", time.Second)
			require.NoError(t, err)
			if tt.starts {
				require.Len(t, d.Assignments, 1)
				assert.Equal(t, "etl-0", d.Assignments[0].Task)
				assert.Equal(t, tt.compress, d.Assignments[0].Result.Compressed())
				return
			}
			assert.Empty(t, d.Assignments)
			var reasons []framework.Reason
			for _, sk := range d.Skips {
				if sk.Job == "etl" {
					reasons = append(reasons, sk.Reason)
				}
			}
			assert.Equal(t, []framework.Reason{tt.want}, reasons)
		})
	}
}
