package finegrain_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
)

// Heartbeats, placements, submissions and finishes from many goroutines at once: run
// with -race. Afterwards every task is accounted for exactly once.
func TestConcurrentUse(t *testing.T) {
	s := newScheduler(t, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	addNodes(t, s, 8, schema.MustTuple(8000, 16*gib))
	for j := 0; j < 4; j++ {
		require.NoError(t, s.SubmitJob(finegrain.Job{ID: fmt.Sprintf("j%d", j)}))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	running := map[string]bool{}
	// One clock for all goroutines, a microsecond a tick: events reach the scheduler a
	// little out of order, by at most the 800 ticks of the test (under 1 ms), well within
	// its clock skew.
	var clock atomic.Int64
	tick := func() time.Duration { return time.Duration(clock.Add(int64(time.Microsecond))) }
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				id := fmt.Sprintf("g%d-t%d", g, i)
				assert.NoError(t, s.Submit(finegrain.Task{ID: id, Job: fmt.Sprintf("j%d", i%4), Request: schema.MustTuple(500, gib/2)}))
				now := tick()
				var started []string
				if i%2 == 0 {
					d, err := s.Heartbeat(fmt.Sprintf("n%d", g), now)
					assert.NoError(t, err)
					for _, a := range d.Assignments {
						started = append(started, a.Task)
					}
				} else if _, err := s.Place(id, now); err == nil {
					started = append(started, id)
				}
				mu.Lock()
				for _, id := range started {
					running[id] = true
				}
				var done string
				for id := range running {
					done = id
					break
				}
				if done != "" {
					delete(running, done)
				}
				mu.Unlock()
				if done != "" {
					assert.NoError(t, s.Finished(done, tick(), nil))
				}
			}
		}(g)
	}
	wg.Wait()
	p, r, f, c := s.Counts()
	assert.Equal(t, 400, p+r+f+c)
	assert.Equal(t, len(running), r)
	assert.Equal(t, 0, c)
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newScheduler(t, finegrain.WithLogger(log), finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	addNodes(t, s, 1, schema.MustTuple(4000, 8*gib))
	require.NoError(t, s.SubmitJob(finegrain.Job{ID: "j"}))
	require.NoError(t, s.Submit(finegrain.Task{ID: "t", Job: "j", Request: schema.MustTuple(1000, gib)}))
	_, err := s.Heartbeat("n0", 0)
	require.NoError(t, err)
	assert.Contains(t, buf.String(), "task placed")
	assert.Contains(t, buf.String(), "task=t")
	assert.Contains(t, buf.String(), "msg=heartbeat")
}
