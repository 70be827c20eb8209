package speculate_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/speculate"
)

// specCase is a random cluster for the speculation properties: a job's progress
// tracker, the requesting node and other busy slots.
type specCase struct {
	tr  *predict.ProgressTracker
	now time.Duration
	req speculate.Request
}

func (c specCase) String() string {
	return fmt.Sprintf("node %s, %d running, %d other busy", c.req.Node, c.tr.Len(), len(c.req.Busy))
}

// randomSpecCase builds a heterogeneous cluster of 2–8 nodes, most with finished tasks
// (a task takes 20–300 s depending on the node, ±10%), 1–30 running tasks up to 400 s
// old progressing at 0.1–1.3 times their node's speed, and a request from one of the
// nodes or from a node with no history, with up to 5 other busy slots.
func randomSpecCase(t testing.TB, seed uint64) specCase {
	r := rand.New(rand.NewPCG(seed, 7))
	tr := tracker(t)
	nodes := 2 + r.IntN(7)
	names := make([]string, nodes)
	speed := make([]float64, nodes) // seconds per task
	id := 0
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
		speed[i] = 20 + r.Float64()*280
		if r.IntN(10) < 3 {
			continue // no history
		}
		for k := 1 + r.IntN(3); k > 0; k-- {
			d := time.Duration(speed[i]*(0.9+0.2*r.Float64())*1000) * time.Millisecond
			finished(t, tr, fmt.Sprintf("f%03d", id), names[i], 0, d)
			id++
		}
	}
	now := 1000 * sec
	for k := 1 + r.IntN(30); k > 0; k-- {
		n := r.IntN(nodes)
		elapsed := r.Float64() * 400
		progress := min(1, float64(int(elapsed/speed[n]*(0.1+1.2*r.Float64())*1000))/1000)
		running(t, tr, fmt.Sprintf("r%03d", id), names[n], now-time.Duration(elapsed*1000)*time.Millisecond, progress, now)
		id++
	}
	req := speculate.Request{Node: names[r.IntN(nodes)], Now: now}
	if r.IntN(10) == 0 {
		req.Node = "fresh"
	}
	for k := r.IntN(6); k > 0; k-- {
		req.Busy = append(req.Busy, speculate.BusySlot{Task: fmt.Sprintf("o%03d", k), Node: names[r.IntN(nodes)], TimeLeft: time.Duration(r.IntN(500_000)) * time.Millisecond})
	}
	return specCase{tr: tr, now: now, req: req}
}

// brutePRRL is the brute-force matching: sort every slow task by time left (largest
// first) and every resource — each busy slot and the free one — by the finish time of a
// backup there (fastest first; the free one before busy slots as fast), pair the i-th
// slowest task with the i-th fastest resource, and see which task the free resource
// gets and whether its backup would finish first.
func brutePRRL(c specCase, minRuntime time.Duration) (string, bool) {
	tasks := c.tr.Running(c.now, nil)
	fin := c.tr.Finished()
	var slow []predict.TaskProgress
	for _, t := range tasks {
		if t.Progress < 1 && t.Elapsed > minRuntime && predict.IsSlowTask(t.Rate, fin, speculate.DefaultSlowTaskThreshold) {
			slow = append(slow, t)
		}
	}
	slices.SortFunc(slow, func(a, b predict.TaskProgress) int {
		if a.TimeLeft != b.TimeLeft {
			return cmp.Compare(b.TimeLeft, a.TimeLeft)
		}
		return cmp.Compare(a.Task, b.Task)
	})
	rate := func(node string) float64 {
		if st, ok := c.tr.NodeRate(node); ok && st.N > 0 {
			return st.Mean
		}
		return fin.Mean
	}
	type res struct {
		finish time.Duration
		free   bool
	}
	mustFinish := func(rate float64, wait time.Duration) time.Duration {
		f, err := speculate.BackupFinish(rate, wait)
		if err != nil {
			panic(err)
		}
		return f
	}
	all := []res{{finish: mustFinish(rate(c.req.Node), 0), free: true}}
	for _, t := range tasks {
		all = append(all, res{finish: mustFinish(rate(t.Node), t.TimeLeft)})
	}
	for _, b := range c.req.Busy {
		all = append(all, res{finish: mustFinish(rate(b.Node), b.TimeLeft)})
	}
	slices.SortStableFunc(all, func(a, b res) int { return cmp.Compare(a.finish, b.finish) })
	rank := slices.IndexFunc(all, func(r res) bool { return r.free })
	if rank >= len(slow) || slow[rank].TimeLeft <= all[rank].finish {
		return "", false
	}
	return slow[rank].Task, true
}

// PRRL's O(n) selection equals the brute-force matching of the M fastest resources to
// the slowest tasks on random clusters, and equals SelectBackup on its own lists.
func TestPropPRRLMatchesBruteForce(t *testing.T) {
	prrl := newPRRL(t, speculate.WithSpeculativeCap(1))
	props := gopter.NewProperties(params())
	props.Property("selection = brute-force matching", prop.ForAll(func(seed uint64) string {
		c := randomSpecCase(t, seed)
		d, err := prrl.Speculate(speculate.Job{Tasks: c.tr}, c.req)
		if err != nil {
			return err.Error()
		}
		task, backup := brutePRRL(c, speculate.DefaultMinRuntime)
		if backup != (d.Action == speculate.Backup) || task != d.Task {
			return fmt.Sprintf("%v: PRRL %+v, brute force %q %v", c, d, task, backup)
		}
		lists, err := prrl.Lists(speculate.Job{Tasks: c.tr}, c.req)
		if err != nil {
			return err.Error()
		}
		if len(lists.Slow) > 0 { // with no slow task Speculate stops before the cap and lists
			sel, err := speculate.SelectBackup(lists.Slow, lists.Resources)
			if err != nil {
				return err.Error()
			}
			if sel != d {
				return fmt.Sprintf("%v: Speculate %+v, SelectBackup %+v", c, d, sel)
			}
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// LATE backs up the candidate with the largest time left (ties: smallest ID) unless the
// requesting node is slow by eq. 2.1 or the job is at its cap.
func TestPropLATEMatchesBruteForce(t *testing.T) {
	late := newLATE(t, speculate.WithSpeculativeCap(1))
	props := gopter.NewProperties(params())
	props.Property("LATE = largest time left among candidates", prop.ForAll(func(seed uint64) string {
		c := randomSpecCase(t, seed)
		d, err := late.Speculate(speculate.Job{Tasks: c.tr}, c.req)
		if err != nil {
			return err.Error()
		}
		fin := c.tr.Finished()
		if st, ok := c.tr.NodeRate(c.req.Node); ok && fin.Mean-st.Mean > fin.Std*speculate.DefaultSlowNodeThreshold {
			if d.Reason != speculate.ReasonSlowNode {
				return fmt.Sprintf("%v: slow node, got %+v", c, d)
			}
			return ""
		}
		var cands []predict.TaskProgress
		for _, t := range c.tr.Running(c.now, nil) {
			if t.Progress < 1 && t.Elapsed > speculate.DefaultMinRuntime && predict.IsSlowTask(t.Rate, fin, speculate.DefaultSlowTaskThreshold) {
				cands = append(cands, t)
			}
		}
		want := ""
		if len(cands) > 0 {
			want = slices.MinFunc(cands, func(a, b predict.TaskProgress) int {
				if a.TimeLeft != b.TimeLeft {
					return cmp.Compare(b.TimeLeft, a.TimeLeft)
				}
				return cmp.Compare(a.Task, b.Task)
			}).Task
		}
		if d.Task != want || (want != "") != (d.Action == speculate.Backup) || d.SlowTasks != len(cands) && want != "" {
			return fmt.Sprintf("%v: LATE %+v, want %q of %d", c, d, want, len(cands))
		}
		return ""
	}, gen.UInt64()))
	props.TestingRun(t)
}

// The thesis' claim (§3.2.4.2): with no pre-release resource faster than the requesting
// one (M = 1), PRRL backs up the task LATE backs up whenever that backup would finish
// first; and a job with unstarted tasks always runs one of them.
func TestPropPRRLAgreesWithLATEWithoutFasterResources(t *testing.T) {
	// LATE's slow-node test is PRRL's M > N; switch it off to compare the selections.
	late := newLATE(t, speculate.WithSpeculativeCap(1), speculate.WithSlowNodeThreshold(1e300))
	prrl := newPRRL(t, speculate.WithSpeculativeCap(1))
	props := gopter.NewProperties(params())
	props.Property("M = 1 → PRRL picks what LATE picks", prop.ForAll(func(seed uint64, unstarted uint8) string {
		c := randomSpecCase(t, seed)
		job := speculate.Job{Tasks: c.tr, Unstarted: int(unstarted % 3)}
		p, err := prrl.Speculate(job, c.req)
		if err != nil {
			return err.Error()
		}
		l, err := late.Speculate(job, c.req)
		if err != nil {
			return err.Error()
		}
		if job.Unstarted > 0 {
			if p.Action != speculate.RunUnstarted || l.Action != speculate.RunUnstarted {
				return fmt.Sprintf("unstarted first: PRRL %+v, LATE %+v", p, l)
			}
			return ""
		}
		if p.Resources != 1 {
			return ""
		}
		if l.Action == speculate.Backup && l.TimeLeft > p.Finish {
			if p.Action != speculate.Backup || p.Task != l.Task {
				return fmt.Sprintf("%v: PRRL %+v, LATE %+v", c, p, l)
			}
		} else if p.Action == speculate.Backup {
			return fmt.Sprintf("%v: PRRL backs up %q where LATE's pick would not finish first (%+v)", c, p.Task, l)
		}
		return ""
	}, gen.UInt64(), gen.UInt8()))
	props.TestingRun(t)
}

// nthElement's contract, through PRRL: for every M, the selection equals the M-th
// element of a full sort, including with many equal times left.
func TestSelectionWithTies(t *testing.T) {
	fin := predict.RateStats{N: 5, Mean: 0.01, Std: 0.001}
	r := rand.New(rand.NewPCG(3, 3))
	for n := 1; n <= 200; n += 7 {
		est := &staticEstimator{finished: fin, nodes: map[string]predict.RateStats{}}
		for i := 0; i < n; i++ {
			est.tasks = append(est.tasks, predict.TaskProgress{
				Task: fmt.Sprintf("t%04d", i), Node: "slow", Progress: 0.1, Elapsed: 100 * sec, Rate: 0.001,
				TimeLeft: time.Duration(200+r.IntN(5)*100) * sec, // few distinct values
			})
		}
		want := slices.Clone(est.tasks)
		slices.SortFunc(want, func(a, b predict.TaskProgress) int {
			if a.TimeLeft != b.TimeLeft {
				return cmp.Compare(b.TimeLeft, a.TimeLeft)
			}
			return cmp.Compare(a.Task, b.Task)
		})
		for m := 1; m <= n; m++ {
			busy := make([]speculate.BusySlot, m-1)
			for i := range busy {
				busy[i] = speculate.BusySlot{Task: fmt.Sprintf("b%d", i), Node: "fast", TimeLeft: sec}
			}
			est.nodes["fast"] = predict.RateStats{N: 1, Mean: 1}
			d, err := newPRRL(t, speculate.WithSpeculativeCap(1)).Speculate(speculate.Job{Tasks: est}, speculate.Request{Node: "req", Now: 100 * sec, Busy: busy})
			require.NoError(t, err)
			require.Equal(t, m, d.Resources)
			require.Equal(t, want[m-1].Task, d.Task, "n=%d m=%d", n, m)
		}
	}
}
