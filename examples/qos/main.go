// Command qos compares QoS-vector scheduling (docs/methods.md §12, the capacity
// scheduling of the QoS paper: finegrain.PullQoSVector) with plain capacity
// scheduling on the same tasks and nodes, as the paper's MATLAB simulation does (its
// Fig. 3): how many tasks each places, and how many of those are correctly matched.
//
// Both run on the reference Scheduler with Capacity ordering and one queue per user,
// each with a configured capacity (its min share), and place tasks by their request
// (memory and disk: the hard needs), one task a heartbeat. Plain capacity scheduling
// offers a heartbeating node to the queue furthest below its capacity, whose first job
// (FIFO) that fits starts there. QoS-vector scheduling picks the queue of most free
// capacity, the sub-queue of the node's class (its largest QoS feature, or the 2nd,
// 3rd, ... when that sub-queue is empty) and in it the job of best finalvalue (eq. 4–6,
// with priority aging) among those whose hard QoS the node meets; each heartbeat reports
// the node's QoS supply and remaining memory and disk first (SetNodeQoSVector).
//
// Correctly matched: the paper counts "correctly matched tasks" without defining them.
// This program's reading: a task placed on a node that meets its hard QoS (must_value >
// 0, eq. 5) and matches its QoS demand better than exactly (value > 1, eq. 4: what the
// paper calls a good match). Two other counts are shown beside it: tasks on a node of
// their class, and tasks whose node supplies at least their demand on their class
// feature.
//
//	go run ./examples/qos [-jobs 400] [-nodes 40] [-users 4] [-seed 1]
package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
)

const synopsis = `
Compares QoS-vector scheduling (docs/methods.md §12) with plain capacity scheduling on the
reference Scheduler, on the same single-task jobs of several users (one queue each, with
a configured capacity) and the same nodes: how many tasks each places, and how many of
those are correctly matched — on a node that meets their hard QoS (memory and disk,
must_value > 0) with a QoS match value above 1 (eq. 4). The paper leaves "correctly
matched" undefined; this is the program's reading.`

// Bounds on the flags, so that a typo does not start a run of hours.
const maxJobs, maxNodes, maxUsers = 100_000, 10_000, 26

func main() {
	fs := cli.NewFlags("qos", synopsis)
	jobs := fs.Int("jobs", 400, "jobs, one task each (1.."+strconv.Itoa(maxJobs)+")")
	nodes := fs.Int("nodes", 40, "nodes (1.."+strconv.Itoa(maxNodes)+")")
	users := fs.Int("users", 4, "users, one queue each (1.."+strconv.Itoa(maxUsers)+")")
	seed := fs.Uint64("seed", 1, "random seed")
	err := cli.Parse(fs, os.Args[1:])
	switch {
	case err != nil:
	case *jobs < 1 || *jobs > maxJobs:
		err = cli.Usagef("-jobs %d: must be in 1..%d", *jobs, maxJobs)
	case *nodes < 1 || *nodes > maxNodes:
		err = cli.Usagef("-nodes %d: must be in 1..%d", *nodes, maxNodes)
	case *users < 1 || *users > maxUsers:
		err = cli.Usagef("-users %d: must be in 1..%d", *users, maxUsers)
	}
	if err != nil {
		cli.Exit("qos", err)
	}
	var rows []row
	for _, nj := range sweep(*jobs) {
		w := generate(nj, *nodes, *users, *seed)
		plain, err := run(w, *seed, false)
		if err != nil {
			cli.Exit("qos", err)
		}
		qos, err := run(w, *seed, true)
		if err != nil {
			cli.Exit("qos", err)
		}
		rows = append(rows, row{w: w, plain: plain, qos: qos})
	}
	out := output.NewWriter(os.Stdout)
	report(out, *jobs, *seed, rows)
	if err := out.Err(); err != nil {
		cli.Exit("qos", err)
	}
}

// sweep is the job counts run, as the paper's Fig. 3 varies tasks against resources:
// a quarter, half, all and twice jobs (distinct, at least 1), in that order.
func sweep(jobs int) []int {
	var out []int
	for _, n := range []int{jobs / 4, jobs / 2, jobs, 2 * jobs} {
		if n >= 1 && (len(out) == 0 || out[len(out)-1] != n) {
			out = append(out, n)
		}
	}
	return out
}

// row is one job count's two runs.
type row struct {
	w          workload
	plain, qos outcome
}

// workload is the users, jobs and nodes both runs share.
type workload struct {
	users []user
	jobs  []job
	nodes []node
}

type user struct {
	queue    string
	capacity float64 // the queue's min share, a fraction of the cluster
}

type job struct {
	id, queue string
	demand    finegrain.QoSVectorDemand
}

type node struct {
	id     string
	res    match.QoSVector
	memory int64
	disk   int64
}

// schema holds the hard needs as resources: the scheduler places by memory and disk.
var schema = resource.MustSchema(resource.Memory, resource.Disk)

// generate draws the workload: QoS vectors uniform on 1..10; each job's weights half
// on its class, drawn uniformly, the other half spread at random; hard needs of 1–8 GiB
// of memory and 1–50 GiB of disk; nodes of 16–63 GiB and 200–999 GiB; users' capacities
// falling linearly (4 users: 40%, 30%, 20%, 10%), jobs spread evenly at random among
// them.
func generate(nj, nn, nu int, seed uint64) workload {
	// Jobs and nodes draw from streams of their own, so that the same seed gives the
	// same nodes and the same first jobs whatever the number of jobs.
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	rn := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909))
	vec := func(r *rand.Rand) match.QoSVector {
		var v match.QoSVector
		for i := range v {
			v[i] = float64(1 + r.IntN(10))
		}
		return v
	}
	var w workload
	total := float64(nu * (nu + 1) / 2)
	for u := range nu {
		w.users = append(w.users, user{queue: "user-" + string(rune('a'+u)), capacity: float64(nu-u) / total})
	}
	for i := range nj {
		var k match.Weights
		dom, sum := r.IntN(match.QoSLen), 0.0
		for f := range k {
			if f != dom {
				k[f] = r.Float64()
				sum += k[f]
			}
		}
		for f := range k {
			k[f] *= 0.5 / sum
		}
		k[dom] = 0.5
		w.jobs = append(w.jobs, job{
			id:    fmt.Sprintf("job-%d", i),
			queue: w.users[r.IntN(nu)].queue,
			demand: finegrain.QoSVectorDemand{Req: vec(r), Weights: k,
				Need: match.Hard{Memory: int64(1+r.IntN(8)) << 30, Disk: int64(1+r.IntN(50)) << 30}},
		})
	}
	for i := range nn {
		w.nodes = append(w.nodes, node{id: fmt.Sprintf("node-%d", i), res: vec(rn), memory: int64(16+rn.IntN(48)) << 30, disk: int64(200+rn.IntN(800)) << 30})
	}
	return w
}

// outcome counts one run's placements.
type outcome struct {
	placed  int
	correct int // hard QoS met and value > 1: correctly matched
	class   int // on a node whose class is the job's
	feature int // the node's supply ≥ the job's demand on the job's class feature
	hard    int // hard QoS met
	beats   int
}

// run places the workload on a new Scheduler, with QoS-vector scheduling or plain
// capacity scheduling: nodes heartbeat in a seeded random order, the same for both,
// until every task is placed or 4 heartbeats a node in a row start nothing.
func run(w workload, seed uint64, qos bool) (outcome, error) {
	opts := []finegrain.Option{
		finegrain.WithPrediction(false),
		finegrain.WithOrdering(fairness.Capacity{}),
		finegrain.WithPullStrategy(finegrain.PullFairnessOrder()),
		finegrain.WithMaxPerHeartbeat(1),
		// A node takes tasks until its memory or disk is used up.
		finegrain.WithAdjuster(policy.WithIdleThreshold(resource.Vector{})),
	}
	if qos {
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullQoSVector()))
	}
	s, err := finegrain.New(schema, opts...)
	if err != nil {
		return outcome{}, err
	}
	for _, u := range w.users {
		if err := s.AddQueue("", u.queue, fairness.MinShare(u.capacity)); err != nil {
			return outcome{}, err
		}
	}
	left := make([]match.Hard, len(w.nodes))
	for i, n := range w.nodes {
		if err := s.AddNode(finegrain.Node{ID: n.id, Capacity: schema.MustTuple(n.memory, n.disk)}); err != nil {
			return outcome{}, err
		}
		left[i] = match.Hard{Memory: n.memory, Disk: n.disk}
	}
	byID := make(map[string]*job, len(w.jobs))
	for i := range w.jobs {
		j := &w.jobs[i]
		byID[j.id] = j
		if err := s.SubmitJob(finegrain.Job{ID: j.id, Queue: j.queue, Submitted: time.Duration(i) * time.Millisecond}); err != nil {
			return outcome{}, err
		}
		if qos {
			if err := s.SetJobQoSVector(j.id, j.demand); err != nil {
				return outcome{}, err
			}
		}
		need := j.demand.Need
		if err := s.Submit(finegrain.Task{ID: j.id + "-0", Job: j.id, Request: schema.MustTuple(need.Memory, need.Disk)}); err != nil {
			return outcome{}, err
		}
	}

	r := rand.New(rand.NewPCG(seed, 1))
	var o outcome
	for idle := 0; o.placed < len(w.jobs) && idle < 4*len(w.nodes); {
		i := r.IntN(len(w.nodes))
		n := &w.nodes[i]
		o.beats++
		if qos {
			if err := s.SetNodeQoSVector(n.id, finegrain.QoSVectorSupply{Res: n.res, Remaining: left[i]}); err != nil {
				return outcome{}, err
			}
		}
		d, err := s.Heartbeat(n.id, time.Duration(o.beats)*time.Second)
		if err != nil {
			return outcome{}, err
		}
		if len(d.Assignments) == 0 {
			idle++
			continue
		}
		idle = 0
		for _, a := range d.Assignments {
			j := byID[a.Job]
			o.count(j.demand, n.res, left[i])
			left[i].Memory -= j.demand.Need.Memory
			left[i].Disk -= j.demand.Need.Disk
		}
	}
	return o, nil
}

// count adds a task of demand d placed on a node of supply res with left remaining
// before it.
func (o *outcome) count(d finegrain.QoSVectorDemand, res match.QoSVector, left match.Hard) {
	o.placed++
	_, met := match.MustValue(d.Need, left)
	if met {
		o.hard++
	}
	if met && match.Value(d.Req, res, d.Weights) > 1 {
		o.correct++
	}
	class := d.Weights.Class()
	if nodeClass, _ := res.Class(1); nodeClass == class {
		o.class++
	}
	if res[class] >= d.Req[class] {
		o.feature++
	}
}

// report prints the run of jobs in detail, then every run of the sweep.
func report(out io.Writer, jobs int, seed uint64, rows []row) {
	var main row
	for _, r := range rows {
		if len(r.w.jobs) == jobs {
			main = r
		}
	}
	w, plain, qos := main.w, main.plain, main.qos
	caps := make([]string, len(w.users))
	for i, u := range w.users {
		caps[i] = fmt.Sprintf("%.0f%%", 100*u.capacity)
	}
	fmt.Fprintf(out, "%d single-task jobs of %d users (queue capacities %s), %d nodes, seed %d\n\n",
		len(w.jobs), len(w.users), strings.Join(caps, ", "), len(w.nodes), seed)
	share := func(n, of int) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(max(of, 1))) }
	lines := []struct {
		name string
		a, b string
	}{
		{"tasks placed", strconv.Itoa(plain.placed), strconv.Itoa(qos.placed)},
		{"correctly matched", strconv.Itoa(plain.correct), strconv.Itoa(qos.correct)},
		{"  share of placed", share(plain.correct, plain.placed), share(qos.correct, qos.placed)},
		{"  share of all tasks", share(plain.correct, len(w.jobs)), share(qos.correct, len(w.jobs))},
		{"on a node of its class", strconv.Itoa(plain.class), strconv.Itoa(qos.class)},
		{"supply ≥ demand, class feature", strconv.Itoa(plain.feature), strconv.Itoa(qos.feature)},
		{"hard QoS met (must_value > 0)", strconv.Itoa(plain.hard), strconv.Itoa(qos.hard)},
		{"heartbeats", strconv.Itoa(plain.beats), strconv.Itoa(qos.beats)},
	}
	fmt.Fprintf(out, "%-32s %10s %10s\n", "", "capacity", "QoS-vector")
	for _, l := range lines {
		fmt.Fprintf(out, "%-32s %10s %10s\n", l.name, l.a, l.b)
	}
	fmt.Fprintln(out, "\nAs the paper's Fig. 3, by tasks/nodes (the same nodes; the first tasks of one draw):")
	fmt.Fprintf(out, "\n%-12s %23s %23s\n", "", "tasks placed", "correctly matched")
	fmt.Fprintf(out, "%-12s %11s %11s %11s %11s\n", "tasks/nodes", "capacity", "QoS-vector", "capacity", "QoS-vector")
	for _, r := range rows {
		fmt.Fprintf(out, "%-12s %11d %11d %11d %11d\n", fmt.Sprintf("%d/%d", len(r.w.jobs), len(r.w.nodes)), r.plain.placed, r.qos.placed, r.plain.correct, r.qos.correct)
	}
	fmt.Fprintln(out, "\nCorrectly matched (the paper leaves it undefined; this program's reading): placed")
	fmt.Fprintln(out, "on a node that meets the job's hard QoS (must_value > 0, eq. 5) with a match value")
	fmt.Fprintln(out, "above 1 (eq. 4, what the paper calls a good match). A node's class is its largest")
	fmt.Fprintln(out, "QoS feature, a job's its largest preference weight. Capacity scheduling places a")
	fmt.Fprintln(out, "task wherever its memory and disk fit, a node filled exactly too; eq. 5 counts")
	fmt.Fprintln(out, "that as hard QoS not met (must_value = 0).")
}
