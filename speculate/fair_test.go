package speculate_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

func newPlacer(t testing.TB, opts ...speculate.PlacerOption) *speculate.FairPlacer {
	t.Helper()
	p, err := speculate.NewFairPlacer(opts...)
	require.NoError(t, err)
	return p
}

func TestTransfer(t *testing.T) {
	p := newPlacer(t)
	assert.Equal(t, time.Duration(0), p.Transfer(fairness.NodeLocal))
	assert.Equal(t, 6400*time.Millisecond, p.Transfer(fairness.RackLocal))
	assert.Equal(t, 25600*time.Millisecond, p.Transfer(fairness.OffSwitch))
	p = newPlacer(t, speculate.WithBlockSize(64<<20), speculate.WithRackBandwidth(64<<20), speculate.WithCrossRackBandwidth(16<<20))
	assert.Equal(t, time.Second, p.Transfer(fairness.RackLocal))
	assert.Equal(t, 4*time.Second, p.Transfer(fairness.OffSwitch))
}

// The per-job list (Alg. 4.1): finish time = time left + the job's task time on the
// host + transfer by locality, kept when below the free slot's, fastest first. Jobs rank
// hosts differently: a CPU-bound job runs fast on "cpu", an IO-bound one on "io".
func TestPreReleaseListPerJob(t *testing.T) {
	racks := map[string]string{"cpu": "r1", "io": "r1", "free": "r1", "far": "r2"}
	state := speculate.FairState{
		Racks: racks,
		Busy: []speculate.BusySlot{
			{Task: "a", Node: "cpu", TimeLeft: 10 * sec},
			{Task: "b", Node: "io", TimeLeft: 10 * sec},
			{Task: "c", Node: "far", TimeLeft: 0},
		},
		Pools: []speculate.Pool{{ID: "p", Jobs: []speculate.PoolJob{
			{ID: "cpujob", Pending: []speculate.PendingTask{{ID: "c1", Locations: []speculate.Location{{Node: "cpu", Rack: "r1"}}}},
				TaskTime: speculate.NodeTimes{ByNode: map[string]time.Duration{"cpu": 20 * sec}, Default: 100 * sec}},
			{ID: "iojob", Pending: []speculate.PendingTask{{ID: "i1"}}, // no data: local everywhere
				TaskTime: speculate.NodeTimes{ByNode: map[string]time.Duration{"io": 30 * sec, "far": 30 * sec}, Default: 100 * sec}},
		}}},
	}
	p := newPlacer(t)
	list, err := p.PreReleaseList(state, "cpujob", "free")
	require.NoError(t, err)
	// free: 100 s + 6.4 s (rack-local); cpu: 10 + 20 + 0 = 30 s; io: 10 + 100 + 6.4; far: 0 + 100 + 25.6
	require.Len(t, list, 1)
	assert.Equal(t, speculate.PreRelease{Slot: state.Busy[0], Locality: fairness.NodeLocal, Finish: 30 * sec}, list[0])

	list, err = p.PreReleaseList(state, "iojob", "free")
	require.NoError(t, err)
	// free: 100 s; io: 10 + 30 = 40 s; far: 0 + 30 = 30 s; cpu: 110 s
	require.Len(t, list, 2)
	assert.Equal(t, "c", list[0].Slot.Task)
	assert.Equal(t, 30*sec, list[0].Finish)
	assert.Equal(t, "b", list[1].Slot.Task)
	assert.Equal(t, 40*sec, list[1].Finish)

	// Both jobs are promised their best slot; nobody needs "free".
	pl, err := p.Place(state, "free")
	require.NoError(t, err)
	assert.False(t, pl.Assigned)
	require.Len(t, pl.PreAssigned, 2)
	assert.Equal(t, "cpujob", pl.PreAssigned[0].Job)
	assert.Equal(t, "a", pl.PreAssigned[0].Slot.Task)
	assert.Equal(t, "iojob", pl.PreAssigned[1].Job)
	assert.Equal(t, "c", pl.PreAssigned[1].Slot.Task)

	_, err = p.PreReleaseList(state, "nope", "free")
	assert.ErrorIs(t, err, speculate.ErrUnknownJob)
}

// RateTimes turns a job's progress model into task times (eq. 3.5).
func TestRateTimes(t *testing.T) {
	tr := tracker(t)
	finished(t, tr, "a", "fast", 0, 40*sec)
	finished(t, tr, "b", "slow", 0, 160*sec)
	rt := speculate.RateTimes{Tasks: tr, Default: time.Hour}
	assert.Equal(t, 40*sec, rt.TaskTime("fast"))
	assert.Equal(t, 160*sec, rt.TaskTime("slow"))
	assert.Equal(t, 64*sec, rt.TaskTime("unknown")) // 1 / mean(1/40, 1/160)
	assert.Equal(t, time.Hour, speculate.RateTimes{Tasks: tracker(t), Default: time.Hour}.TaskTime("x"))
	assert.Equal(t, time.Minute, speculate.RateTimes{Default: time.Minute}.TaskTime("x"))
}

// The pool rule: pools below their min share first, lowest (running + pre-assigned)/
// min(minShare, demand); otherwise lowest (running + pre-assigned)/weight. The job rule:
// fair by (running + pre-assigned)/weight then submission, or FIFO by priority.
func TestPoolAndJobRules(t *testing.T) {
	job := func(id string, running, pending int, w float64, prio int, sub time.Duration) speculate.PoolJob {
		j := speculate.PoolJob{ID: id, Running: running, Weight: w, Priority: prio, Submitted: sub}
		for i := 0; i < pending; i++ {
			j.Pending = append(j.Pending, speculate.PendingTask{ID: fmt.Sprintf("%s-%d", id, i)})
		}
		return j
	}
	racks := map[string]string{"n": "r"}
	cases := []struct {
		name  string
		pools []speculate.Pool
		want  string
	}{
		{"needy pool first", []speculate.Pool{
			{ID: "a", Weight: 100, Jobs: []speculate.PoolJob{job("a1", 0, 5, 0, 0, 0)}},
			{ID: "b", MinShare: 4, Jobs: []speculate.PoolJob{job("b1", 3, 5, 0, 0, 0)}},
		}, "b1"},
		{"min share capped by demand", []speculate.Pool{
			{ID: "a", MinShare: 10, Jobs: []speculate.PoolJob{job("a1", 1, 1, 0, 0, 0)}}, // 1/min(10, 2) = 0.5
			{ID: "b", MinShare: 10, Jobs: []speculate.PoolJob{job("b1", 3, 7, 0, 0, 0)}}, // 3/10
		}, "b1"},
		{"satisfied min share uses weights", []speculate.Pool{
			{ID: "a", MinShare: 1, Weight: 1, Jobs: []speculate.PoolJob{job("a1", 2, 1, 0, 0, 0)}}, // 2/1
			{ID: "b", MinShare: 1, Weight: 4, Jobs: []speculate.PoolJob{job("b1", 4, 1, 0, 0, 0)}}, // 4/4
		}, "b1"},
		{"pool ties by ID", []speculate.Pool{
			{ID: "z", Jobs: []speculate.PoolJob{job("z1", 1, 1, 0, 0, 0)}},
			{ID: "y", Jobs: []speculate.PoolJob{job("y1", 1, 1, 0, 0, 0)}},
		}, "y1"},
		{"pool without waiting tasks skipped", []speculate.Pool{
			{ID: "a", MinShare: 9, Jobs: []speculate.PoolJob{job("a1", 0, 0, 0, 0, 0)}},
			{ID: "b", Jobs: []speculate.PoolJob{job("b1", 9, 1, 0, 0, 0)}},
		}, "b1"},
		{"fair jobs by weight", []speculate.Pool{{ID: "p", Jobs: []speculate.PoolJob{
			job("j1", 2, 1, 1, 9, 0), job("j2", 3, 1, 2, 0, 5*sec),
		}}}, "j2"},
		{"fair jobs tie by submission", []speculate.Pool{{ID: "p", Jobs: []speculate.PoolJob{
			job("j1", 1, 1, 1, 0, 5*sec), job("j2", 1, 1, 1, 0, 2*sec),
		}}}, "j2"},
		{"fair jobs tie by ID", []speculate.Pool{{ID: "p", Jobs: []speculate.PoolJob{
			job("j2", 1, 1, 1, 0, 0), job("j1", 1, 1, 1, 0, 0),
		}}}, "j1"},
		{"fifo by priority", []speculate.Pool{{ID: "p", Order: speculate.FIFOJobs, Jobs: []speculate.PoolJob{
			job("j1", 0, 1, 1, 1, 0), job("j2", 9, 1, 1, 2, 5*sec),
		}}}, "j2"},
		{"fifo ties by submission", []speculate.Pool{{ID: "p", Order: speculate.FIFOJobs, Jobs: []speculate.PoolJob{
			job("j1", 0, 1, 1, 1, 3*sec), job("j2", 9, 1, 1, 1, 2*sec),
		}}}, "j2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := newPlacer(t).Place(speculate.FairState{Pools: c.pools, Racks: racks}, "n")
			require.NoError(t, err)
			require.True(t, p.Assigned)
			assert.Equal(t, c.want, p.Job)
		})
	}
}

// The task for the free slot: node-local, else rack-local, else the first.
func TestChooseTask(t *testing.T) {
	racks := map[string]string{"n": "r", "m": "r", "x": "q"}
	loc := func(node, rack string) []speculate.Location { return []speculate.Location{{Node: node, Rack: rack}} }
	cases := []struct {
		name    string
		pending []speculate.PendingTask
		task    string
		level   fairness.Level
	}{
		{"node-local", []speculate.PendingTask{{ID: "a", Locations: loc("x", "q")}, {ID: "b", Locations: loc("m", "r")}, {ID: "c", Locations: loc("n", "r")}}, "c", fairness.NodeLocal},
		{"rack-local", []speculate.PendingTask{{ID: "a", Locations: loc("x", "q")}, {ID: "b", Locations: loc("m", "r")}}, "b", fairness.RackLocal},
		{"off-switch", []speculate.PendingTask{{ID: "a", Locations: loc("x", "q")}, {ID: "b", Locations: loc("y", "")}}, "a", fairness.OffSwitch},
		{"no data", []speculate.PendingTask{{ID: "a", Locations: loc("x", "q")}, {ID: "b"}}, "b", fairness.NodeLocal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			state := speculate.FairState{Racks: racks, Pools: []speculate.Pool{{ID: "p", Jobs: []speculate.PoolJob{{ID: "j", Pending: c.pending}}}}}
			p, err := newPlacer(t).Place(state, "n")
			require.NoError(t, err)
			assert.Equal(t, c.task, p.Task)
			assert.Equal(t, c.level, p.Locality)
		})
	}
}

func validFairState() speculate.FairState {
	return speculate.FairState{
		Racks: map[string]string{"n1": "r1", "n2": "r1"},
		Busy:  []speculate.BusySlot{{Task: "b1", Node: "n2", TimeLeft: sec}},
		Pools: []speculate.Pool{{ID: "p", MinShare: 1, Weight: 1, Jobs: []speculate.PoolJob{
			{ID: "j", Weight: 1, Running: 1, Pending: []speculate.PendingTask{{ID: "t", Locations: []speculate.Location{{Node: "n1", Rack: "r1"}}}},
				TaskTime: speculate.NodeTimes{Default: time.Minute}},
		}}},
	}
}

func TestPlaceErrors(t *testing.T) {
	cases := []struct {
		name   string
		node   string
		mutate func(*speculate.FairState)
		err    error
	}{
		{"empty node", "", nil, speculate.ErrEmptyID},
		{"unknown node", "n9", nil, speculate.ErrUnknownNode},
		{"empty rack key", "n1", func(s *speculate.FairState) { s.Racks[""] = "r" }, speculate.ErrEmptyID},
		{"busy empty task", "n1", func(s *speculate.FairState) { s.Busy[0].Task = "" }, speculate.ErrEmptyID},
		{"busy empty node", "n1", func(s *speculate.FairState) { s.Busy[0].Node = "" }, speculate.ErrEmptyID},
		{"busy unknown node", "n1", func(s *speculate.FairState) { s.Busy[0].Node = "n9" }, speculate.ErrUnknownNode},
		{"busy negative time left", "n1", func(s *speculate.FairState) { s.Busy[0].TimeLeft = -1 }, speculate.ErrBadTime},
		{"busy duplicate", "n1", func(s *speculate.FairState) { s.Busy = append(s.Busy, s.Busy[0]) }, speculate.ErrDuplicate},
		{"pool empty ID", "n1", func(s *speculate.FairState) { s.Pools[0].ID = "" }, speculate.ErrEmptyID},
		{"pool duplicate", "n1", func(s *speculate.FairState) { s.Pools = append(s.Pools, speculate.Pool{ID: "p"}) }, speculate.ErrDuplicate},
		{"pool negative min share", "n1", func(s *speculate.FairState) { s.Pools[0].MinShare = -1 }, speculate.ErrInvalidValue},
		{"pool NaN weight", "n1", func(s *speculate.FairState) { s.Pools[0].Weight = math.NaN() }, speculate.ErrInvalidValue},
		{"pool negative weight", "n1", func(s *speculate.FairState) { s.Pools[0].Weight = -2 }, speculate.ErrInvalidValue},
		{"pool bad order", "n1", func(s *speculate.FairState) { s.Pools[0].Order = 7 }, speculate.ErrInvalidValue},
		{"job empty ID", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].ID = "" }, speculate.ErrEmptyID},
		{"job duplicate", "n1", func(s *speculate.FairState) {
			s.Pools = append(s.Pools, speculate.Pool{ID: "q", Jobs: []speculate.PoolJob{{ID: "j"}}})
		}, speculate.ErrDuplicate},
		{"job infinite weight", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].Weight = math.Inf(1) }, speculate.ErrInvalidValue},
		{"job negative submission", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].Submitted = -sec }, speculate.ErrBadTime},
		{"job negative running", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].Running = -1 }, speculate.ErrInvalidValue},
		{"job huge running", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].Running = math.MaxInt }, speculate.ErrInvalidValue},
		{"task empty ID", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].Pending[0].ID = "" }, speculate.ErrEmptyID},
		{"task duplicate", "n1", func(s *speculate.FairState) {
			s.Pools[0].Jobs[0].Pending = append(s.Pools[0].Jobs[0].Pending, speculate.PendingTask{ID: "t"})
		}, speculate.ErrDuplicate},
		{"location empty node", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].Pending[0].Locations[0].Node = "" }, speculate.ErrEmptyID},
		{"negative task time", "n1", func(s *speculate.FairState) { s.Pools[0].Jobs[0].TaskTime = speculate.NodeTimes{Default: -sec} }, speculate.ErrBadTime},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := validFairState()
			if c.mutate != nil {
				c.mutate(&s)
			}
			before := fmt.Sprintf("%+v", s)
			_, err := newPlacer(t).Place(s, c.node)
			require.ErrorIs(t, err, c.err)
			var fe *speculate.FieldError
			require.ErrorAs(t, err, &fe)
			assert.NotEmpty(t, fe.Field)
			assert.Contains(t, err.Error(), fe.Field)
			assert.Equal(t, before, fmt.Sprintf("%+v", s), "state unchanged")
			_, err = newPlacer(t).PreReleaseList(s, "j", c.node)
			require.ErrorIs(t, err, c.err)
		})
	}
	_, err := newPlacer(t).Place(validFairState(), "n1")
	require.NoError(t, err)
}

// randomFairState builds 1–3 pools of 1–4 jobs with 0–4 waiting tasks each (data on
// 0–3 of 6 nodes in 3 racks, or none), 0–8 busy slots, random weights, min shares,
// orders, priorities and submission times with ties, and per-job task times per node.
func randomFairState(seed uint64) (speculate.FairState, string) {
	r := rand.New(rand.NewPCG(seed, 11))
	nodes := []string{"n0", "n1", "n2", "n3", "n4", "n5"}
	racks := map[string]string{}
	for i, n := range nodes {
		racks[n] = fmt.Sprintf("r%d", i%3)
	}
	weights := []float64{0, 1, 2, 0.5}
	var s speculate.FairState
	s.Racks = racks
	task := 0
	for p := 0; p < 1+r.IntN(3); p++ {
		pool := speculate.Pool{ID: fmt.Sprintf("p%d", p), MinShare: r.IntN(6), Weight: weights[r.IntN(4)], Order: speculate.JobOrder(r.IntN(2))}
		for j := 0; j < 1+r.IntN(4); j++ {
			job := speculate.PoolJob{ID: fmt.Sprintf("p%dj%d", p, j), Weight: weights[r.IntN(4)], Priority: r.IntN(3),
				Submitted: time.Duration(r.IntN(4)) * sec, Running: r.IntN(4)}
			for k := 0; k < r.IntN(5); k++ {
				t := speculate.PendingTask{ID: fmt.Sprintf("t%d", task)}
				task++
				for l := 0; l < r.IntN(4); l++ {
					n := nodes[r.IntN(len(nodes))]
					t.Locations = append(t.Locations, speculate.Location{Node: n, Rack: racks[n]})
				}
				job.Pending = append(job.Pending, t)
			}
			if r.IntN(4) > 0 {
				times := speculate.NodeTimes{ByNode: map[string]time.Duration{}, Default: time.Duration(20+r.IntN(100)) * sec}
				for _, n := range nodes {
					if r.IntN(2) == 0 {
						times.ByNode[n] = time.Duration(20+r.IntN(100)) * sec
					}
				}
				job.TaskTime = times
			}
			pool.Jobs = append(pool.Jobs, job)
		}
		s.Pools = append(s.Pools, pool)
	}
	for b := 0; b < r.IntN(9); b++ {
		s.Busy = append(s.Busy, speculate.BusySlot{Task: fmt.Sprintf("b%d", b), Node: nodes[r.IntN(len(nodes))], TimeLeft: time.Duration(r.IntN(60)) * sec})
	}
	return s, nodes[r.IntN(len(nodes))]
}

// naivePlace is Alg. 4.2 as printed, with every list fully built and sorted each round
// (Alg. 4.1) and every rule applied by sorting.
func naivePlace(p *speculate.FairPlacer, s speculate.FairState, node string) speculate.Placement {
	type jobState struct {
		pool int
		job  speculate.PoolJob
		pre  int
	}
	var jobs []*jobState
	poolPre := make([]int, len(s.Pools))
	for i, pool := range s.Pools {
		for _, j := range pool.Jobs {
			jobs = append(jobs, &jobState{pool: i, job: j})
		}
	}
	w1 := func(w float64) float64 {
		if w == 0 {
			return 1
		}
		return w
	}
	locality := func(j speculate.PoolJob, n string) fairness.Level {
		best := fairness.OffSwitch
		for _, t := range j.Pending {
			if len(t.Locations) == 0 {
				return fairness.NodeLocal
			}
			for _, l := range t.Locations {
				if l.Node == n {
					return fairness.NodeLocal
				}
				if l.Rack != "" && l.Rack == s.Racks[n] {
					best = fairness.RackLocal
				}
			}
		}
		return best
	}
	finish := func(j speculate.PoolJob, n string, wait time.Duration) time.Duration {
		tt := time.Duration(0)
		if j.TaskTime != nil {
			tt = j.TaskTime.TaskTime(n)
		}
		return wait + tt + p.Transfer(locality(j, n))
	}
	tabu := map[string]bool{}
	var out speculate.Placement
	for {
		var need []int
		for i, pool := range s.Pools {
			waiting := 0
			for _, j := range pool.Jobs {
				waiting += len(j.Pending)
			}
			if waiting > poolPre[i] {
				need = append(need, i)
			}
		}
		if len(need) == 0 {
			return out
		}
		key := func(i int) (bool, float64) {
			running, waiting := 0, 0
			for _, j := range s.Pools[i].Jobs {
				running += j.Running
				waiting += len(j.Pending)
			}
			target := min(s.Pools[i].MinShare, running+waiting)
			if running+poolPre[i] < target {
				return true, float64(running+poolPre[i]) / float64(max(target, 1))
			}
			return false, float64(running+poolPre[i]) / w1(s.Pools[i].Weight)
		}
		slices.SortStableFunc(need, func(a, b int) int {
			na, ra := key(a)
			nb, rb := key(b)
			if na != nb {
				if na {
					return -1
				}
				return 1
			}
			if c := cmp.Compare(ra, rb); c != 0 {
				return c
			}
			return cmp.Compare(s.Pools[a].ID, s.Pools[b].ID)
		})
		pi := need[0]
		var cands []*jobState
		for _, j := range jobs {
			if j.pool == pi && len(j.job.Pending) > j.pre {
				cands = append(cands, j)
			}
		}
		slices.SortStableFunc(cands, func(a, b *jobState) int {
			if s.Pools[pi].Order == speculate.FIFOJobs {
				if c := cmp.Compare(b.job.Priority, a.job.Priority); c != 0 {
					return c
				}
			} else if c := cmp.Compare(float64(a.job.Running+a.pre)/w1(a.job.Weight), float64(b.job.Running+b.pre)/w1(b.job.Weight)); c != 0 {
				return c
			}
			if c := cmp.Compare(a.job.Submitted, b.job.Submitted); c != 0 {
				return c
			}
			return cmp.Compare(a.job.ID, b.job.ID)
		})
		j := cands[0]
		free := finish(j.job, node, 0)
		var list []speculate.PreRelease
		for _, b := range s.Busy {
			if f := finish(j.job, b.Node, b.TimeLeft); !tabu[b.Task] && f < free {
				list = append(list, speculate.PreRelease{Slot: b, Finish: f})
			}
		}
		slices.SortFunc(list, func(a, b speculate.PreRelease) int {
			if c := cmp.Compare(a.Finish, b.Finish); c != 0 {
				return c
			}
			if c := cmp.Compare(a.Slot.Node, b.Slot.Node); c != 0 {
				return c
			}
			return cmp.Compare(a.Slot.Task, b.Slot.Task)
		})
		if len(list) == 0 {
			out.Assigned, out.Pool, out.Job, out.Finish = true, s.Pools[pi].ID, j.job.ID, free
			for _, want := range []fairness.Level{fairness.NodeLocal, fairness.RackLocal, fairness.OffSwitch} {
				for _, t := range j.job.Pending {
					l := fairness.OffSwitch
					if len(t.Locations) == 0 {
						l = fairness.NodeLocal
					}
					for _, loc := range t.Locations {
						if loc.Node == node {
							l = fairness.NodeLocal
						} else if l == fairness.OffSwitch && loc.Rack != "" && loc.Rack == s.Racks[node] {
							l = fairness.RackLocal
						}
					}
					if l == want && out.Task == "" {
						out.Task, out.Locality = t.ID, l
					}
				}
			}
			return out
		}
		tabu[list[0].Slot.Task] = true
		j.pre++
		poolPre[pi]++
		out.PreAssigned = append(out.PreAssigned, speculate.PreAssignment{Pool: s.Pools[pi].ID, Job: j.job.ID, Slot: list[0].Slot, Finish: list[0].Finish})
	}
}

// Place equals the literal Alg. 4.2 on random states; promised slots are distinct and
// each beats the free slot for the job it is promised to.
func TestPropPlaceMatchesLiteralAlgorithm(t *testing.T) {
	p := newPlacer(t)
	props := gopter.NewProperties(params())
	props.Property("Place = literal Alg. 4.2", prop.ForAll(func(seed uint64) string {
		s, node := randomFairState(seed)
		got, err := p.Place(s, node)
		if err != nil {
			return err.Error()
		}
		want := naivePlace(p, s, node)
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			return fmt.Sprintf("seed %d node %s:\n got  %+v\n want %+v", seed, node, got, want)
		}
		seen := map[string]bool{}
		for _, pa := range got.PreAssigned {
			if seen[pa.Slot.Task] {
				return "slot promised twice: " + pa.Slot.Task
			}
			seen[pa.Slot.Task] = true
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// RateTimes and NodeTimes are TaskTimers; RateTimes reads a predict.RuntimeEstimator.
var (
	_ speculate.TaskTimer = speculate.NodeTimes{}
	_ speculate.TaskTimer = speculate.RateTimes{}
	_ predict.RuntimeEstimator
)
