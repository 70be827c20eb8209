package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// class is one kind of job of the workload: its queue (one queue per class), its
// priority, and whether its jobs are gangs.
type class struct {
	name, queue string
	priority    int
	gang        bool
}

// The classes, in the order the tables list them.
var classes = []class{
	{name: "high", queue: "prod", priority: 10},
	{name: "gang", queue: "ml", priority: 5, gang: true},
	{name: "etl", queue: "etl", priority: 0},
	{name: "batch", queue: "batch", priority: 0},
}

// classOf returns the class of a job of queue q.
func classOf(q string) (class, bool) {
	for _, c := range classes {
		if c.queue == q {
			return c, true
		}
	}
	return class{}, false
}

// shape is how a job of a class is drawn.
type shape struct {
	app              workload.AppClass
	minMaps, maxMaps int   // map tasks, uniform in [minMaps, maxMaps]
	block            int64 // input bytes per map task
}

// The shapes: batch jobs are long (WordCount maps of 1.5 GiB, about 5.5 minutes each),
// high-priority and ETL jobs short (Grep maps of 256 MiB, 14 s; PageRank maps of
// 512 MiB, 75 s), gangs are k-means jobs of 12 maps of 512 MiB (about 3 minutes,
// 2.6 GiB each) that must start together. Every job has one reduce task per GiB of
// map output (workload.DefaultBytesPerReduce), at least one.
var shapes = map[string]shape{
	"batch": {app: workload.WordCount(), minMaps: 36, maxMaps: 44, block: 1536 * workload.MiB},
	"high":  {app: workload.Grep(), minMaps: 4, maxMaps: 12, block: 256 * workload.MiB},
	"etl":   {app: workload.PageRank(), minMaps: 8, maxMaps: 16, block: 512 * workload.MiB},
	"gang":  {app: workload.SparkKMeans(), minMaps: 12, maxMaps: 12, block: 512 * workload.MiB},
}

// arrival says when a class's jobs arrive: count jobs (scaled), the first at first,
// then every gap on average (exponential gaps when random, fixed otherwise).
type arrival struct {
	count  int
	first  time.Duration
	gap    time.Duration
	random bool
}

// arrivals is the default mix: the batch jobs fill the cluster in the first two
// minutes; high-priority jobs arrive as a Poisson process, ETL jobs every two minutes,
// gangs every four, all while the batch jobs run.
var arrivals = map[string]arrival{
	"batch": {count: 8, first: 0, gap: 15 * time.Second},
	"high":  {count: 16, first: 90 * time.Second, gap: 45 * time.Second, random: true},
	"etl":   {count: 6, first: 2 * time.Minute, gap: 2 * time.Minute},
	"gang":  {count: 3, first: 4 * time.Minute, gap: 4 * time.Minute},
}

// buildWorkload draws the workload of one seed; scale multiplies every class's job
// count (at least one job each).
func buildWorkload(seed uint64, scale float64) (*workload.Workload, error) {
	r := rand.New(rand.NewPCG(seed, 0x9ee))
	jit := workload.Jitter{Rand: r, Sigma: 0.05}
	w := &workload.Workload{Name: fmt.Sprintf("preempt-seed%d", seed)}
	for _, c := range classes {
		a, sh := arrivals[c.name], shapes[c.name]
		at := a.first
		n := max(1, int(math.Round(float64(a.count)*scale)))
		for i := 0; i < n; i++ {
			j, err := buildJob(fmt.Sprintf("%s%02d", c.name, i), c, sh, at, r, jit)
			if err != nil {
				return nil, err
			}
			w.Jobs = append(w.Jobs, j)
			gap := a.gap
			if a.random {
				gap = time.Duration(r.ExpFloat64() * float64(a.gap))
			}
			at += gap
		}
	}
	slices.SortStableFunc(w.Jobs, func(a, b workload.Job) int { return cmp.Compare(a.Submit, b.Submit) })
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return w, nil
}

// buildJob is one job of class c: its map tasks, each reading sh.block bytes, and its
// reduce tasks sharing the maps' output; each kind declares its largest true peak
// over-estimated by a factor in [1.2, 1.5], as the FGM workloads do. A gang job's
// MinMember is its map count: its maps start together or not at all.
func buildJob(id string, c class, sh shape, at time.Duration, r *rand.Rand, jit workload.Jitter) (workload.Job, error) {
	app := &sh.app
	j := workload.Job{ID: id, Queue: c.queue, Submit: at, App: app.Name, Logic: c.name + "/" + app.Name, Priority: c.priority}
	maps := sh.minMaps + r.IntN(sh.maxMaps-sh.minMaps+1)
	if c.gang {
		j.MinMember = maps
	}
	factor := 1.2 + 0.3*r.Float64()
	mapOut := int64(float64(sh.block) * app.MapOutputRatio)
	shuffle := mapOut * int64(maps)
	j.InputBytes, j.ShuffleBytes = sh.block*int64(maps), shuffle
	var peak resource.Tuple
	for i := 0; i < maps; i++ {
		p, err := app.Profile(workload.Map, sh.block, mapOut, jit)
		if err != nil {
			return workload.Job{}, err
		}
		j.Tasks = append(j.Tasks, workload.Task{ID: fmt.Sprintf("%s/m%03d", id, i), Kind: workload.Map, InputBytes: sh.block, True: p})
		peak = peak.Max(p.Peak())
	}
	if err := request(j.Tasks, peak, factor); err != nil {
		return workload.Job{}, err
	}
	peak = resource.Tuple{}
	reduces := int(max(1, (shuffle+workload.DefaultBytesPerReduce-1)/workload.DefaultBytesPerReduce))
	for i := 0; i < reduces; i++ {
		in := shuffle / int64(reduces)
		if i == reduces-1 {
			in = shuffle - in*int64(reduces-1)
		}
		out := int64(float64(in) * app.ReduceOutputRatio)
		j.OutputBytes += out
		p, err := app.Profile(workload.Reduce, in, out, jit)
		if err != nil {
			return workload.Job{}, err
		}
		j.Tasks = append(j.Tasks, workload.Task{ID: fmt.Sprintf("%s/r%02d", id, i), Kind: workload.Reduce, InputBytes: in, True: p})
		peak = peak.Max(p.Peak())
	}
	return j, request(j.Tasks[maps:], peak, factor)
}

// request sets every task's declared request: peak over-estimated by factor.
func request(tasks []workload.Task, peak resource.Tuple, factor float64) error {
	req, err := workload.Overestimate(peak, factor, workload.DefaultRequestRounding())
	if err != nil {
		return err
	}
	for i := range tasks {
		tasks[i].Request = req
	}
	return nil
}
