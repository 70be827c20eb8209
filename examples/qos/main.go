// Command qos compares QoS-vector matching (docs/methods.md §12, the capacity-scheduling
// method of the QoS paper) with plain capacity matching on the same jobs and nodes, as
// the source's MATLAB simulation does: how many tasks end up on a node that suits them.
//
// Jobs carry a QoS demand vector (cpu, mem, net, disk, price, each 1–10), preference
// weights summing to 1 (the largest is the job's class) and hard needs (memory, disk).
// Nodes advertise a supply vector and their remaining memory and disk on each
// heartbeat. Plain capacity matching gives a heartbeating node the first waiting job
// whose hard needs fit; QoS matching picks, in the sub-queue of the node's class, the
// job with the best final value (eq. 4–6, with priority aging).
//
// A task counts as correctly matched when the node's supply meets the job's demand on
// the job's class feature and its hard needs fit.
//
//	go run ./examples/qos [-jobs 400] [-nodes 40] [-seed 1]
package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strconv"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/match"
)

const synopsis = `
Compares QoS-vector matching with plain capacity matching on the same single-task jobs
and nodes: how many tasks each places, and how many of those are correctly matched, that
is, placed on a node whose supply meets the job's demand on the job's class feature (the
feature its preference weights favour most). Hard needs (memory, disk) fit in both.`

// Bounds on the flags, so that a typo does not start a run of hours.
const maxJobs, maxNodes = 100_000, 10_000

func main() {
	fs := cli.NewFlags("qos", synopsis)
	jobs := fs.Int("jobs", 400, "jobs, one task each (1.."+strconv.Itoa(maxJobs)+")")
	nodes := fs.Int("nodes", 40, "nodes (1.."+strconv.Itoa(maxNodes)+")")
	seed := fs.Uint64("seed", 1, "random seed")
	err := cli.Parse(fs, os.Args[1:])
	switch {
	case err != nil:
	case *jobs < 1 || *jobs > maxJobs:
		err = cli.Usagef("-jobs %d: must be in 1..%d", *jobs, maxJobs)
	case *nodes < 1 || *nodes > maxNodes:
		err = cli.Usagef("-nodes %d: must be in 1..%d", *nodes, maxNodes)
	}
	if err != nil {
		cli.Exit("qos", err)
	}

	js, ns := generate(*jobs, *nodes, *seed)
	plain := run(js, ns, *seed, pickPlain)
	var aging match.Aging
	qos := run(js, ns, *seed, func(n match.QoSNode, waiting []match.QoSJob) int {
		i, err := aging.Pick(n, waiting)
		if err != nil {
			log.Fatal(err)
		}
		return i
	})
	out := output.NewWriter(os.Stdout)
	fmt.Fprintf(out, "%d single-task jobs, %d nodes, seed %d\n\n", *jobs, *nodes, *seed)
	fmt.Fprintf(out, "%-28s %10s %10s\n", "", "capacity", "QoS-vector")
	fmt.Fprintf(out, "%-28s %10d %10d\n", "tasks placed", plain.placed, qos.placed)
	fmt.Fprintf(out, "%-28s %10d %10d\n", "correctly matched", plain.correct, qos.correct)
	fmt.Fprintf(out, "%-28s %9.1f%% %9.1f%%\n", "share correctly matched", 100*float64(plain.correct)/float64(max(plain.placed, 1)), 100*float64(qos.correct)/float64(max(qos.placed, 1)))
	fmt.Fprintf(out, "%-28s %10d %10d\n", "heartbeats", plain.beats, qos.beats)
	fmt.Fprintln(out, "\nCorrectly matched: the node's supply meets the job's demand on the job's class")
	fmt.Fprintln(out, "feature (its most weighted preference); hard needs fit in every placement.")
	if err := out.Err(); err != nil {
		cli.Exit("qos", err)
	}
}

func generate(nj, nn int, seed uint64) ([]match.QoSJob, []match.QoSNode) {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	vec := func() match.QoSVector {
		var v [match.QoSLen]float64
		for i := range v {
			v[i] = float64(1 + r.IntN(10))
		}
		q, err := match.NewQoSVector(v[:]...)
		if err != nil {
			log.Fatal(err)
		}
		return q
	}
	js := make([]match.QoSJob, nj)
	for i := range js {
		// Weights: half on a dominant preference (the job's class), the other half
		// spread at random over the other features.
		var k [match.QoSLen]float64
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
		w, err := match.NewWeights(k[:]...)
		if err != nil {
			log.Fatal(err)
		}
		js[i] = match.QoSJob{ID: fmt.Sprintf("job-%d", i), Req: vec(), Weights: w,
			Need: match.Hard{Memory: int64(1+r.IntN(8)) << 30, Disk: int64(1+r.IntN(50)) << 30}}
	}
	ns := make([]match.QoSNode, nn)
	for i := range ns {
		ns[i] = match.QoSNode{Res: vec(), Remaining: match.Hard{Memory: int64(16+r.IntN(48)) << 30, Disk: int64(200+r.IntN(800)) << 30}}
	}
	return js, ns
}

type outcome struct{ placed, correct, beats int }

// run heartbeats the nodes in a seeded random order until every job is placed or no
// node can take any waiting job; pick chooses the job for a node (-1: none).
func run(js []match.QoSJob, template []match.QoSNode, seed uint64, pick func(match.QoSNode, []match.QoSJob) int) outcome {
	r := rand.New(rand.NewPCG(seed, 1))
	ns := append([]match.QoSNode(nil), template...)
	waiting := append([]match.QoSJob(nil), js...)
	var o outcome
	idle := 0
	for len(waiting) > 0 && idle < 4*len(ns) {
		i := r.IntN(len(ns))
		o.beats++
		j := pick(ns[i], waiting)
		if j < 0 || !fits(waiting[j].Need, ns[i].Remaining) {
			idle++
			continue
		}
		idle = 0
		job := waiting[j]
		o.placed++
		if job.Weights.Class() >= 0 && ns[i].Res[job.Weights.Class()] >= job.Req[job.Weights.Class()] {
			o.correct++
		}
		ns[i].Remaining.Memory -= job.Need.Memory
		ns[i].Remaining.Disk -= job.Need.Disk
		waiting = append(waiting[:j], waiting[j+1:]...)
	}
	return o
}

func fits(need, have match.Hard) bool { return need.Memory <= have.Memory && need.Disk <= have.Disk }

// pickPlain is capacity matching: the first waiting job whose hard needs fit.
func pickPlain(n match.QoSNode, waiting []match.QoSJob) int {
	for i, j := range waiting {
		if fits(j.Need, n.Remaining) {
			return i
		}
	}
	return -1
}
