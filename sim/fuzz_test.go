package sim

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/finegrain/finegrain/sim/workload"
)

// FuzzRandomLoad: any option values either fail with ErrInvalidOption or give a valid
// load whose demand stays within the node.
func FuzzRandomLoad(f *testing.F) {
	f.Add(uint64(1), 3, int64(time.Minute), int64(time.Hour), 0.2, 0.6, 0.1, 0.8, 0.05, 0.15)
	f.Add(uint64(2), 0, int64(0), int64(-1), -1.0, 2.0, 1.5, 1.0, 0.9, 1.0)
	f.Fuzz(func(t *testing.T, seed uint64, n int, step, period int64, cpuLo, cpuHi, sigma, persist, memLo, memHi float64) {
		if n > 64 {
			n %= 64
		}
		l, err := RandomLoad(rand.New(rand.NewPCG(seed, seed)), n, WithLoadStep(time.Duration(step)), WithLoadPeriod(time.Duration(period)),
			WithCPULevel(cpuLo, cpuHi), WithCPUNoise(sigma, persist), WithMemoryLevel(memLo, memHi))
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("error %v does not wrap ErrInvalidOption", err)
			}
			return
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("generated load invalid: %v", err)
		}
		c := tuple(16000, 32*gib, 0, 0)
		for i := range n {
			d, next := l.Load(i, c, time.Duration(seed%uint64(time.Hour)))
			if d[workload.SlotCPU] < 0 || d[workload.SlotCPU] > c[workload.SlotCPU] || d[workload.SlotMemory] < 0 || d[workload.SlotMemory] >= c[workload.SlotMemory] {
				t.Fatalf("node %d: load %v outside %v", i, d, c)
			}
			if next <= time.Duration(seed%uint64(time.Hour)) {
				t.Fatalf("node %d: next change %v not after now", i, next)
			}
		}
	})
}

// FuzzOptions: any option values either fail with ErrInvalidOption, changing nothing,
// or give a simulation that runs the tiny workload to the end (or to its time limit).
func FuzzOptions(f *testing.F) {
	f.Add(int64(time.Second), int64(10*time.Second), int64(10*time.Second), 0.05, 1, int64(time.Hour), uint8(0), 32)
	f.Add(int64(time.Second), int64(10*time.Second), int64(10*time.Second), 0.05, 3, int64(time.Hour), uint8(0), 32) // 3 replicas for 1 node
	f.Add(int64(0), int64(-1), int64(1), -0.5, 0, int64(0), uint8(9), 0)
	f.Fuzz(func(t *testing.T, beat, report, sample int64, penalty float64, repl int, limit int64, mode uint8, retries int) {
		// Keep runs short: at most a few thousand events.
		if beat > 0 && beat < int64(10*time.Millisecond) || sample > 0 && sample < int64(10*time.Millisecond) {
			return
		}
		cl := oneNode(tuple(1000, 8*gib, 100<<20, 100<<20))
		w := workload.Workload{Name: "fuzz", Jobs: []workload.Job{handJob("j", "q", 0, tuple(500, gib, 0, 0),
			oneStage(3*time.Second, tuple(1000, gib, 0, 0)), oneStage(2*time.Second, tuple(800, 3*gib, 0, 0)))}}
		s, err := New(&w, &cl, FGM(), WithHeartbeat(time.Duration(beat)), WithReportEvery(time.Duration(report)),
			WithSampleEvery(time.Duration(sample)), WithPenalty(penalty), WithReplication(repl), WithTimeLimit(time.Duration(limit)),
			WithMode(Mode(mode)), WithPushRetries(retries))
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("error %v does not wrap ErrInvalidOption", err)
			}
			return
		}
		r, err := s.Run()
		if err != nil && !errors.Is(err, ErrTimeLimit) {
			t.Fatalf("run: %v", err)
		}
		if err == nil && r.Summary.JobsFinished != 1 {
			t.Fatalf("run ended without error with %d jobs finished", r.Summary.JobsFinished)
		}
	})
}
