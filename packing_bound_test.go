package finegrain_test

import (
	"math"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
)

// packingScene builds one 8-core, 8 GiB node shared by queues "poor" and "rich": rich
// runs 4 GiB (share 0.5), poor 1 GiB (0.125). Then poor submits a task of 3.5 GiB,
// which the node holds empty but not in its 3 GiB free, and rich three tasks of 1 GiB.
func packingScene(t *testing.T, opts ...finegrain.Option) *finegrain.Scheduler {
	t.Helper()
	opts = append([]finegrain.Option{finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSkipDetails(16)}, opts...)
	s := newScheduler(t, opts...)
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(8000, 8*gib)}))
	for _, q := range []string{"poor", "rich"} {
		require.NoError(t, s.AddQueue("", q))
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: q, Queue: q}))
	}
	task := func(id, job string, mem int64) finegrain.Task {
		return finegrain.Task{ID: id, Job: job, Request: schema.MustTuple(100, mem), Duration: time.Hour}
	}
	require.NoError(t, s.Submit(task("r0", "rich", 4*gib), task("p0", "poor", gib)))
	d, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.Len(t, d.Assignments, 2)
	require.NoError(t, s.Submit(task("big", "poor", 7*gib/2), task("r1", "rich", gib), task("r2", "rich", gib), task("r3", "rich", gib)))
	return s
}

// The fair packing bound keeps the rich queue's small tasks from taking the room the
// poor queue's larger task waits for, beyond the bound.
func TestPackingBound(t *testing.T) {
	cases := []struct {
		name   string
		opts   []finegrain.Option
		placed int // rich tasks placed on the heartbeat
	}{
		{"no bound: packing runs ahead of the order", []finegrain.Option{finegrain.WithPackingBound(math.Inf(1))}, 3},
		{"default with DRF: 0.5 > 0.125 + 0.05", nil, 0},
		{"strict", []finegrain.Option{finegrain.WithPackingBound(0)}, 0},
		{"0.5: rich starts while at most 0.625, so may end one task past it", []finegrain.Option{finegrain.WithPackingBound(0.5)}, 2},
		{"FIFO keeps no bound", []finegrain.Option{finegrain.WithOrdering(fairness.FIFO{}), finegrain.WithPackingBound(0)}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := packingScene(t, c.opts...)
			d, err := s.Heartbeat("n", time.Second)
			require.NoError(t, err)
			assert.Len(t, d.Assignments, c.placed)
			for _, a := range d.Assignments {
				assert.Equal(t, "rich", a.Job)
			}
			if c.placed < 3 {
				assert.Contains(t, reasons(d), finegrain.AheadOfOrder)
			} else {
				assert.NotContains(t, reasons(d), finegrain.AheadOfOrder)
			}
		})
	}
}

func reasons(d finegrain.Decision) []finegrain.Reason {
	var rs []finegrain.Reason
	for _, sk := range d.Skips {
		rs = append(rs, sk.Reason)
	}
	return rs
}

// A bad bound is refused and builds nothing.
func TestPackingBoundInvalid(t *testing.T) {
	for _, b := range []float64{-0.1, math.NaN(), math.Inf(-1)} {
		_, err := finegrain.New(schema, finegrain.WithPackingBound(b))
		assert.ErrorIs(t, err, finegrain.ErrInvalid, "bound %v", b)
	}
}

// Property: whatever the tasks' sizes and the bound, a heartbeat never passes a job
// over as ahead of the order unless some job of another queue found no room on the
// node before it, and every rich task placed after the poor job found no room keeps
// the rich queue within the bound of the poor one (shares by memory: cpu is small).
func TestPackingBoundProperty(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 200
	props := gopter.NewProperties(params)
	props.Property("bound holds", prop.ForAll(
		func(richMem, poorMem, bigMem, smallMem int64, bound float64) bool {
			s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithSkipDetails(64), finegrain.WithPackingBound(bound))
			capMem := int64(16 * gib)
			if s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(64000, capMem)}) != nil {
				return false
			}
			for _, q := range []string{"poor", "rich"} {
				_ = s.AddQueue("", q)
				_ = s.SubmitJob(finegrain.Job{ID: q, Queue: q})
			}
			task := func(id, job string, mem int64) finegrain.Task {
				return finegrain.Task{ID: id, Job: job, Request: schema.MustTuple(10, mem), Duration: time.Hour}
			}
			if s.Submit(task("r0", "rich", richMem), task("p0", "poor", poorMem)) != nil {
				return false
			}
			if _, err := s.Heartbeat("n", 0); err != nil {
				return false
			}
			tasks := []finegrain.Task{task("big", "poor", bigMem)}
			for i := range 12 {
				tasks = append(tasks, task("r"+string(rune('a'+i)), "rich", smallMem))
			}
			if s.Submit(tasks...) != nil {
				return false
			}
			d, err := s.Heartbeat("n", time.Second)
			if err != nil {
				return false
			}
			held := map[string]int64{}
			for _, id := range []string{"r0", "p0"} {
				if st, _ := s.TaskState(id); st == finegrain.Running {
					held[map[string]string{"r0": "rich", "p0": "poor"}[id]] += map[string]int64{"r0": richMem, "p0": poorMem}[id]
				}
			}
			share := func(q string) float64 { return float64(held[q]) / float64(capMem) }
			refused := false
			for _, sk := range d.Skips {
				switch sk.Reason {
				case finegrain.NoRoom, finegrain.NoClassFits:
					refused = refused || sk.Job == "poor"
				case finegrain.AheadOfOrder:
					if !refused {
						return false
					}
				}
			}
			bigPlaced := false
			for _, a := range d.Assignments {
				if a.Task == "big" {
					bigPlaced = true
					held["poor"] += bigMem
					continue
				}
				// Placed after poor's refusal: within the bound of poor, as it was then.
				if refused && !bigPlaced && share("rich") > share("poor")+bound+1e-9 {
					return false
				}
				held["rich"] += smallMem
			}
			return true
		},
		gen.Int64Range(1, 8).Map(func(x int64) int64 { return x * gib }),
		gen.Int64Range(1, 8).Map(func(x int64) int64 { return x * gib / 2 }),
		gen.Int64Range(1, 16).Map(func(x int64) int64 { return x * gib }),
		gen.Int64Range(1, 4).Map(func(x int64) int64 { return x * gib / 4 }),
		gen.Float64Range(0, 0.5),
	))
	props.TestingRun(t)
}

// A job whose refused task no longer fits a node even empty (raised after failures, or
// larger than the node) does not hold other queues back there, even when another task
// of it would fit: the job takes a node only with the task it offers the node first,
// so it does not wait for room there. The task fits only the larger node; a refusal
// that set the packing bound's floor would keep the smaller node empty until the task
// found room on the larger one.
func TestPackingBoundIgnoresTasksTheNodeCannotHold(t *testing.T) {
	cases := []struct {
		name     string
		request  int64 // memory the poor job's first task asks
		failures int   // its failed runs: each after the first raises its memory by half
		alone    bool  // no other task in the poor job
	}{
		{"raised after failures, alone", 6 * gib, 2, true}, // 6 GiB raised to 9 GiB: more than small's 8
		{"raised after failures", 6 * gib, 2, false},
		{"larger than the node", 9 * gib, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newScheduler(t, finegrain.WithPrediction(false), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
			require.NoError(t, s.AddNode(finegrain.Node{ID: "big", Capacity: schema.MustTuple(16000, 32*gib)}))
			require.NoError(t, s.AddQueue("", "poor"))
			require.NoError(t, s.AddQueue("", "rich"))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "p", Queue: "poor"}))
			require.NoError(t, s.SubmitJob(finegrain.Job{ID: "r", Queue: "rich"}))
			tasks := []finegrain.Task{
				{ID: "p0", Job: "p", Request: schema.MustTuple(1000, c.request)},
				{ID: "r0", Job: "r", Request: schema.MustTuple(8000, 8*gib)},
				{ID: "r1", Job: "r", Request: schema.MustTuple(1000, gib)},
				{ID: "r2", Job: "r", Request: schema.MustTuple(1000, gib)},
			}
			if !c.alone {
				tasks = append(tasks, finegrain.Task{ID: "p1", Job: "p", Request: schema.MustTuple(1000, gib)}) // small holds its class
			}
			require.NoError(t, s.Submit(tasks...))
			_, err := s.Place("r0", 0)
			require.NoError(t, err)
			for i := 0; i < c.failures; i++ {
				_, err := s.Place("p0", time.Duration(i)*time.Second)
				require.NoError(t, err)
				require.NoError(t, s.Failed("p0", time.Duration(i)*time.Second+time.Millisecond))
			}
			require.NoError(t, s.AddNode(finegrain.Node{ID: "small", Capacity: schema.MustTuple(4000, 8*gib)}))

			d, err := s.Heartbeat("small", 3*time.Second)
			require.NoError(t, err)
			var got []string
			for _, a := range d.Assignments {
				got = append(got, a.Task)
			}
			assert.ElementsMatch(t, []string{"r1", "r2"}, got, "p0 cannot start on small and p waits for it; the rich queue's tasks can start")
		})
	}
}
