package match_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The motivating example of docs/methods.md §7 (FGM §0, Fig. 1–3). The figures are not in
// the text; this instance is consistent with it (one time unit = one second):
//
//	server   4 cores, 8 GB
//	A1, A2   stage 1: 1 core, 2 GB for 1 unit; stage 2: 0.5 core, 1 GB for 2 units
//	         (request = peak: 1 core, 2 GB)
//	B1       stage 1: 2.2 cores, 2 GB for 1 unit; stage 2: 3 cores, 3 GB for 3 units
//	         (request = peak: 3 cores, 3 GB)
//
// Tasks arrive A1, A2, B1. By request, A1 and A2 leave 2 cores; B1 needs 3 and waits
// until they end at 3; the work ends at 7. Matched by stages with compression of up
// to 10%, all three start at once: B1's first stage needs 2.2 cores where 2 are free
// (2 + 0.1 × 4 ≥ 2.2); the three first stages share 4 cores among 4.2 demanded, each
// compressed by 0.2/4.2 and stretched to 1.05 units (eq. 4); the second stages fit
// (0.5 + 0.5 + 3 = 4 cores), and the work ends at 1.05 + 3 = 4.05, the paper's ≈4.05.

const gb = 1 << 30

var motivatingSchema = resource.MustSchema(resource.CPU, resource.Memory)

func motivatingTasks() []*simTask {
	s := motivatingSchema
	a := stage.MustProfile(s,
		stage.Stage{Duration: time.Second, Demand: s.MustTuple(1000, 2*gb)},
		stage.Stage{Duration: 2 * time.Second, Demand: s.MustTuple(500, 1*gb)})
	b := stage.MustProfile(s,
		stage.Stage{Duration: time.Second, Demand: s.MustTuple(2200, 2*gb)},
		stage.Stage{Duration: 3 * time.Second, Demand: s.MustTuple(3000, 3*gb)})
	return []*simTask{{id: "A1", p: a}, {id: "A2", p: a}, {id: "B1", p: b}}
}

// simTask is a task in the fluid simulation.
type simTask struct {
	id       string
	p        stage.Profile
	deadline time.Duration

	started, done bool
	start, finish float64 // seconds
	stage         int
	left          float64 // uncompressed seconds of work left in the current stage
	handle        stage.Handle
	first         match.Result // the result of its first match attempt
}

// simulate runs the tasks on one server of the given capacity. At time 0 and at every
// event (a stage ending) it tries the waiting tasks in arrival order with m, reserving
// on success (Alg. 1). Running tasks share each compressible dimension in proportion
// to demand when the running stages demand more than the capacity, and progress at
// the rate of their most compressed dimension: work is conserved (eq. 3–4). It
// returns when the work ends, in seconds.
func simulate(t *testing.T, capacity resource.Tuple, m match.Matcher, allow match.Allowance, qos match.QoSCheck, tasks []*simTask) float64 {
	t.Helper()
	s := motivatingSchema
	tl, err := stage.NewTimeline(s, capacity)
	require.NoError(t, err)
	server := match.Server{ID: "server", Timeline: tl, Allowance: allow}
	running := func(string) []match.Running {
		var rs []match.Running
		for _, x := range tasks {
			if x.started && !x.done {
				rs = append(rs, match.Running{Work: match.Work{ID: x.id, Profile: x.p, Deadline: x.deadline}, Start: time.Duration(x.start * float64(time.Second))})
			}
		}
		return rs
	}
	if dc, ok := qos.(*match.DeadlineCheck); ok {
		dc.Running = running
	}
	now := 0.0
	for step := 0; step < 100; step++ {
		at := time.Duration(math.Round(now * float64(time.Second)))
		for i, x := range tasks {
			if x.started {
				continue
			}
			r := m.Match(server, at, x.p)
			if r.Code.OK() && qos != nil {
				r = qos.CheckQoS(server, at, match.Work{ID: x.id, Profile: x.p, Deadline: x.deadline}, r)
			}
			if step == 0 {
				tasks[i].first = r
			}
			if !r.Code.OK() {
				continue
			}
			hold := x.p
			if _, ok := m.(match.RequestQuantity); ok {
				hold, err = match.RequestQuantity{}.Hold(x.p)
				require.NoError(t, err)
			}
			x.handle, err = tl.Reserve(at, hold, r.Allowance)
			require.NoError(t, err)
			x.started, x.start, x.stage, x.left = true, now, 0, x.p.Stage(0).Duration.Seconds()
		}
		// Rates: proportional sharing of each compressible dimension.
		var demand resource.Tuple
		for _, x := range tasks {
			if x.started && !x.done {
				demand = demand.Add(x.p.Stage(x.stage).Demand)
			}
		}
		rate := func(x *simTask) float64 {
			r := 1.0
			d := x.p.Stage(x.stage).Demand
			for k := 0; k < s.Len(); k++ {
				if d[k] > 0 && demand[k] > capacity[k] {
					require.True(t, s.Compressible().Has(k), "non-compressible %s overcommitted", s.DimName(k))
					r = math.Min(r, float64(capacity[k])/float64(demand[k]))
				}
			}
			return r
		}
		dt := math.Inf(1)
		for _, x := range tasks {
			if x.started && !x.done {
				dt = math.Min(dt, x.left/rate(x))
			}
		}
		if math.IsInf(dt, 1) {
			break // nothing running
		}
		rates := make([]float64, len(tasks))
		for i, x := range tasks {
			if x.started && !x.done {
				rates[i] = rate(x)
			}
		}
		now += dt
		for i, x := range tasks {
			if !x.started || x.done {
				continue
			}
			x.left -= rates[i] * dt
			if x.left > 1e-9 {
				continue
			}
			x.stage++
			if x.stage < x.p.Len() {
				x.left = x.p.Stage(x.stage).Duration.Seconds()
				continue
			}
			x.done, x.finish = true, now
			require.NoError(t, tl.Release(x.handle))
		}
	}
	end := 0.0
	for _, x := range tasks {
		require.True(t, x.done, "task %s never ran", x.id)
		end = math.Max(end, x.finish)
	}
	return end
}

func TestMotivatingExample(t *testing.T) {
	capacity := motivatingSchema.MustTuple(4000, 8*gb)

	// Request-based: B1 waits for 3 cores while A1 and A2 hold 2; the work ends at 7.
	byRequest := motivatingTasks()
	end := simulate(t, capacity, match.RequestQuantity{}, nil, nil, byRequest)
	assert.InDelta(t, 7.0, end, 1e-9, "paper: request-based work ends at 7 units")
	b1 := byRequest[2].first
	assert.Equal(t, match.NoRoom, b1.Code)
	assert.Equal(t, "cpu", b1.DimName)
	assert.Equal(t, int64(2000), b1.Free, "A1 and A2's requests leave 2 cores")
	assert.Equal(t, int64(3000), b1.Demand, "B1 needs more")
	assert.InDelta(t, 3.0, byRequest[2].start, 1e-9, "B1 starts when A1 and A2 end")

	// Fine-grained with up to 10% compression: all three run at once; ends ≈ 4.05.
	tenPct, err := match.UniformAllowance(motivatingSchema, resource.DefaultCompressionLimit)
	require.NoError(t, err)
	fine := motivatingTasks()
	end = simulate(t, capacity, match.FineGrained{}, tenPct, nil, fine)
	assert.InDelta(t, 4.05, end, 1e-9, "paper: fine-grained work ends at ≈4.05 units")
	for _, x := range fine {
		assert.Zero(t, x.start, "%s starts at once", x.id)
	}
	b1 = fine[2].first
	require.Equal(t, match.FitCompressed, b1.Code)
	assert.InDelta(t, 0.2/4.2, b1.StageRatio(0), 1e-12, "B1's first stage: 4.2 cores share 4")
	assert.Zero(t, b1.StageRatio(1))
	assert.LessOrEqual(t, b1.Compression[0], resource.DefaultCompressionLimit)
	d, err := match.ResultDuration(fine[2].p, b1)
	require.NoError(t, err)
	assert.InDelta(t, 4.05, d.Seconds(), 1e-9, "eq. 15 agrees with the simulation for B1")

	// Fine-grained without compression: B1 waits for A's first stages to end.
	noComp := motivatingTasks()
	endNoComp := simulate(t, capacity, match.FineGrained{}, nil, nil, noComp)
	assert.Equal(t, match.NoRoom, noComp[2].first.Code)
	assert.Less(t, end, endNoComp)
	assert.Less(t, endNoComp, 7.0)

	// The deadline check (eq. 15): A1 and A2 stretch to 3.05 under B1's compression.
	for _, tc := range []struct {
		deadline float64
		want     match.Code
	}{{3.1, match.FitCompressed}, {3.0, match.DeadlineMissed}} {
		tasks := motivatingTasks()
		for _, x := range tasks[:2] {
			x.deadline = sec(tc.deadline)
		}
		dc := &match.DeadlineCheck{}
		simulate(t, capacity, match.FineGrained{}, tenPct, dc, tasks)
		r := tasks[2].first
		assert.Equal(t, tc.want, r.Code, "deadline %v: %v", tc.deadline, r)
		if r.Code == match.DeadlineMissed {
			assert.Equal(t, "A1", r.Task)
			assert.InDelta(t, 3.05, r.Finish.Seconds(), 1e-9)
			assert.ErrorIs(t, r.Err(), match.ErrDeadline)
		}
	}
}
