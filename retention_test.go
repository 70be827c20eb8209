package finegrain_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// churn drives s through n cycles of: submit a job of 10 tasks, place them with a
// heartbeat of each of its 4 nodes, finish them with an observation. Every seventh job
// shares a similarity key, as recurring jobs do.
type churn struct {
	s     *finegrain.Scheduler
	now   time.Duration
	cycle int
	ids   []string
	obs   predict.Observation
}

func newChurn(tb testing.TB, opts ...finegrain.Option) *churn {
	tb.Helper()
	s, err := finegrain.New(schema, append([]finegrain.Option{finegrain.WithPullStrategy(finegrain.PullFairnessOrder())}, opts...)...)
	require.NoError(tb, err)
	for i := 0; i < 4; i++ {
		require.NoError(tb, s.AddNode(finegrain.Node{ID: fmt.Sprintf("n%d", i), Capacity: schema.MustTuple(16000, 64*gib)}))
	}
	p := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: schema.MustTuple(900, gib/2)})
	return &churn{s: s, obs: predict.Observation{Profile: p}}
}

// run makes n cycles of 10 tasks each.
func (c *churn) run(tb testing.TB, n int) {
	for ; n > 0; n-- {
		jid := fmt.Sprintf("j%d", c.cycle)
		require.NoError(tb, c.s.SubmitJob(finegrain.Job{ID: jid, Submitted: c.now}))
		key := predict.Key{Logic: fmt.Sprintf("logic%d", c.cycle%7), InputSize: 1}
		c.ids = c.ids[:0]
		for i := 0; i < 10; i++ {
			id := fmt.Sprintf("%s-%d", jid, i)
			c.ids = append(c.ids, id)
			require.NoError(tb, c.s.Submit(finegrain.Task{ID: id, Job: jid, Key: key, Request: schema.MustTuple(1000, gib), Submitted: c.now}))
		}
		for i := 0; i < 4; i++ {
			_, err := c.s.Heartbeat(fmt.Sprintf("n%d", i), c.now)
			require.NoError(tb, err)
		}
		c.now += time.Second
		for _, id := range c.ids {
			require.NoError(tb, c.s.Finished(id, c.now, &c.obs))
		}
		c.cycle++
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Memory stays flat: after a warm-up that fills the retention window, 30,000 more
// tasks through submit, place and finish leave the live heap where it was (within
// 64 bytes a task; remembering every task costs about 770).
func TestRetentionKeepsHeapFlat(t *testing.T) {
	c := newChurn(t, finegrain.WithRetention(finegrain.Retention{Tasks: 2000, Jobs: 100}))
	c.run(t, 1000)
	before := heapInUse()
	c.run(t, 3000)
	after := heapInUse()
	grown := float64(int64(after)-int64(before)) / 30000
	t.Logf("live heap %d → %d bytes: %.1f bytes per task", before, after, grown)
	assert.Less(t, grown, 64.0)
	p, r, f, cc := c.s.Counts()
	assert.Equal(t, [4]int{0, 0, 40000, 0}, [4]int{p, r, f, cc}, "every task ran and counts")
	_, ok := c.s.TaskState("j0-0")
	assert.False(t, ok, "the first tasks are forgotten")
	st, ok := c.s.TaskState(fmt.Sprintf("j%d-9", c.cycle-1))
	assert.True(t, ok, "the last ones are remembered")
	assert.Equal(t, finegrain.Finished, st)
}

// A forgotten job must be submitted again before it takes tasks; a forgotten task's
// ID is free again.
func TestRetentionForgottenJobAndTask(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()), finegrain.WithRetention(finegrain.Retention{Tasks: 1, Jobs: 1}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	for _, j := range []string{"a", "b"} {
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: j}))
		require.NoError(t, s.Submit(finegrain.Task{ID: j + "1", Job: j, Request: schema.MustTuple(1000, gib)}))
	}
	_, err := s.Heartbeat("n", 0)
	require.NoError(t, err)
	require.NoError(t, s.Finished("a1", time.Second, nil))
	require.NoError(t, s.Finished("b1", time.Second, nil))

	_, ok := s.TaskState("a1")
	assert.False(t, ok)
	assert.ErrorIs(t, s.Finished("a1", 2*time.Second, nil), finegrain.ErrUnknownTask)
	assert.ErrorIs(t, s.Submit(finegrain.Task{ID: "a2", Job: "a", Request: schema.MustTuple(1000, gib)}), finegrain.ErrUnknownJob)
	assert.ErrorIs(t, s.Submit(finegrain.Task{ID: "b2", Job: "b", Request: schema.MustTuple(1000, gib)}), nil, "b is the completed job remembered")
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "a"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "a1", Job: "a", Request: schema.MustTuple(1000, gib)}))
	st, _ := s.TaskState("a1")
	assert.Equal(t, finegrain.Pending, st)
}

// BenchmarkChurn is one task through submit, place (a heartbeat) and finish with the
// default retention; "retained-B/task" is the growth of the live heap over the run
// divided by the tasks, which stays near zero however many tasks pass through:
//
//	go test -run '^$' -bench Churn -benchtime 1000000x .
func BenchmarkChurn(b *testing.B) {
	c := newChurn(b)
	c.run(b, 1500) // fill the retention window
	before := heapInUse()
	b.ReportAllocs()
	b.ResetTimer()
	c.run(b, max(1, b.N/10))
	b.StopTimer()
	after := heapInUse()
	runtime.KeepAlive(c)
	b.ReportMetric(float64(int64(after)-int64(before))/float64(10*max(1, b.N/10)), "retained-B/task")
}

// A cancelled task's age counts from its cancellation, not from the event before it.
func TestRetentionAgeFromCancellation(t *testing.T) {
	s := newScheduler(t, finegrain.WithRetention(finegrain.Retention{Tasks: 100, Jobs: 100, Age: time.Minute}))
	require.NoError(t, s.AddNode(finegrain.Node{ID: "n", Capacity: schema.MustTuple(4000, 8*gib)}))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "a", Job: "j", Request: schema.MustTuple(1000, gib)}))
	require.NoError(t, s.Cancel("a", 2*time.Minute))
	st, ok := s.TaskState("a")
	assert.True(t, ok)
	assert.Equal(t, finegrain.Cancelled, st)
	_, err := s.Heartbeat("n", 3*time.Minute)
	require.NoError(t, err)
	_, ok = s.TaskState("a")
	assert.True(t, ok, "cancelled a minute ago: remembered")
	_, err = s.Heartbeat("n", 3*time.Minute+1)
	require.NoError(t, err)
	_, ok = s.TaskState("a")
	assert.False(t, ok, "cancelled more than a minute ago: forgotten")
}
