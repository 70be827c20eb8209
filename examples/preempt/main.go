// Command preempt shows when preemption and gang scheduling matter, in the simulator: a
// busy cluster of long low-priority batch jobs, with high-priority jobs, ETL jobs of
// a guaranteed queue and a few gang jobs (workload.Job.MinMember: all of a job's map
// tasks start together or none does) arriving while the batch jobs run. It runs the
// same workloads under three configurations of the reference scheduler — request-based
// DRF with every queue guaranteed a quarter of the cluster (fairness.MinShare) — that
// differ only in preemption (finegrain.WithPreemption):
//
//   - none: no preemption; a task waits for room.
//   - priority: a task that fits nowhere evicts running tasks of lower-priority jobs.
//   - priority+guarantees: also, a queue below its guarantee reclaims from queues
//     above theirs after finegrain.DefaultReclaimDelay (15 s), from tasks of no higher
//     priority than its own.
//
// It prints, per configuration and job class, the jobs' mean and 95th-percentile
// completion time (pooled over the seeds), the runs evicted and the run time they had
// done (lost, per run), then per configuration the makespan, evictions by reason, and
// how the gangs went: how often they gathered, and how often one started short of its
// MinMember (a partial run, which must never happen).
//
//	go run ./examples/preempt                     # 3 seeds, pull mode
//	go run ./examples/preempt -mode push -runs 1
//
// The job classes (one queue each; see workload.go):
//
//	high   queue prod,  priority 10: ~16 Grep jobs of 4–12 maps of 14 s, Poisson arrivals from 90 s
//	gang   queue ml,    priority 5:  3 k-means gangs of 12 maps of ~3 min (MinMember 12), every 4 min
//	etl    queue etl,   priority 0:  6 PageRank jobs of 8–16 maps of 75 s, every 2 min
//	batch  queue batch, priority 0:  8 WordCount jobs of 36–44 maps of ~5.5 min, in the first 2 min
//
// on 10 nodes of 16 cores and 32 GiB (the FGM paper's node), every task declaring its
// true peak × 1.2–1.5 as YARN users do.
//
// Flags: -seed N (first seed; run r uses seed N+r), -runs N (seeds, default 3), -scale
// F (multiplies every class's number of jobs), -mode pull|push, -out DIR (output
// folder, made if missing; default ./out/preempt), -wide (the heading and the first
// seed's workload on one line, about 180 characters, instead of two that fit 120
// columns), -workers N, -quiet.
//
// Outputs in -out: table.csv (the printed tables), jobs-CONFIG.csv and
// evictions-CONFIG.csv (first seed), and jct-cdf-high.svg, the completion-time CDF of
// the high-priority jobs under each configuration (all seeds pooled; the
// configurations are not policies of package sim, so they take the palette's remaining
// colours). The results are deterministic for a given seed.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/examples/internal/simrun"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

const synopsis = `
Runs a busy cluster of long low-priority batch jobs, with high-priority, ETL and gang
jobs arriving, under DRF with no preemption, priority preemption, and priority plus
guarantee preemption, and prints per job class the mean and p95 completion time, the
runs evicted and the work they lost, and whether a gang ever ran partially. Writes CSV
files and an SVG chart (the high-priority jobs' completion-time CDF) to -out (default
out/preempt).`

type config struct {
	seed    uint64
	runs    int
	scale   float64
	mode    sim.Mode
	out     string
	wide    bool // -wide: the heading on one line
	workers int
	quiet   bool
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if err == nil {
		_, err = run(c, os.Stdout, os.Stderr)
	}
	cli.Exit("preempt", err)
}

func parseFlags(args []string) (config, error) {
	fs := cli.NewFlags("preempt", synopsis)
	var c config
	var mode string
	fs.Uint64Var(&c.seed, "seed", 1, "first seed; run r uses seed+r")
	fs.IntVar(&c.runs, "runs", 3, "seeds per configuration")
	fs.Float64Var(&c.scale, "scale", 1, "multiplies every class's number of jobs")
	fs.StringVar(&mode, "mode", "pull", "pull (heartbeats) or push (Place)")
	fs.StringVar(&c.out, "out", defaultOut, "output folder, made if missing")
	fs.BoolVar(&c.wide, "wide", false, "print the heading and the first seed's workload on one line (about 180 characters wide), not two that fit 120")
	fs.IntVar(&c.workers, "workers", simrun.DefaultWorkers(), fmt.Sprintf("simulations in parallel, in [1, %d]", simrun.MaxWorkers))
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
	if err := cli.Parse(fs, args); err != nil {
		return c, err
	}
	if err := simrun.CheckWorkers(c.workers); err != nil {
		return c, err
	}
	switch {
	case c.runs < 1 || c.runs > 100:
		return c, cli.Usagef("-runs %d: must be in [1, 100]", c.runs)
	case !(c.scale > 0 && c.scale <= 10):
		return c, cli.Usagef("-scale %v: must be in (0, 10]", c.scale)
	}
	switch mode {
	case "pull":
		c.mode = sim.Pull
	case "push":
		c.mode = sim.Push
	default:
		return c, cli.Usagef("-mode %q: want pull or push", mode)
	}
	return c, nil
}

// defaultOut is the output folder unless -out names another: preempt's own under
// out/, so that another example's outputs (compare's table.csv) are not overwritten.
var defaultOut = filepath.Join("out", "preempt")

// configuration is one way the scheduler is set up.
type configuration struct {
	name       string
	preemption *finegrain.PreemptionConfig
}

// configurations are the three compared, in the order the tables list them.
var configurations = []configuration{
	{name: "none"},
	{name: "priority", preemption: &finegrain.PreemptionConfig{Priority: true}},
	{name: "priority+guarantees", preemption: &finegrain.PreemptionConfig{Priority: true, Guarantees: true, ReclaimDelay: finegrain.DefaultReclaimDelay}},
}

// guarantee is every queue's min share: a quarter of the cluster (dominant share).
const guarantee = 0.25

// timeLimit stops a run whose jobs have not all finished (the workload takes about
// half an hour): a gang the scheduler can no longer gather waits for ever.
const timeLimit = 4 * time.Hour

// policy is configuration c as a simulator policy: request-based DRF (as YARN
// allocates), every queue guaranteed its share, c's preemption.
func (c configuration) policy() sim.Policy {
	opts := []finegrain.Option{finegrain.WithPrediction(false), finegrain.WithOrdering(fairness.DRF{})}
	if c.preemption != nil {
		opts = append(opts, finegrain.WithPreemption(*c.preemption))
	}
	return sim.Policy{Name: c.name, Options: opts,
		Queue: func(string, int) []fairness.Option { return []fairness.Option{fairness.MinShare(guarantee)} }}
}

// result is one simulation: a configuration on one seed's workload.
type result struct {
	conf int
	seed uint64
	w    *workload.Workload
	res  *sim.Result
	err  error
}

// run simulates every configuration on every seed, prints the tables to stdout and
// writes the files; it returns the results in (seed, configuration) order.
//
// A failed write to stdout is its error.
func run(c config, stdout, stderr io.Writer) ([]*result, error) {
	start := time.Now()
	out := output.NewWriter(stdout)
	stdout = out
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return nil, err
	}
	cl, err := workload.FGMCluster(workload.WithNodesPerRack(10))
	if err != nil {
		return nil, err
	}
	var results []*result
	for r := 0; r < c.runs; r++ {
		seed := c.seed + uint64(r)
		w, err := buildWorkload(seed, c.scale)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		for i := range configurations {
			results = append(results, &result{conf: i, seed: seed, w: w})
		}
	}
	simrun.Each(stderr, c.quiet, c.workers, results, func(r *result) int { return r.w.NumTasks() }, func(r *result, progress sim.Option) {
		r.res, r.err = sim.Run(r.w, &cl, configurations[r.conf].policy(), sim.WithMode(c.mode), sim.WithTimeLimit(timeLimit), progress)
	})
	for _, r := range results {
		if r.err != nil && !errors.Is(r.err, sim.ErrTimeLimit) {
			return nil, fmt.Errorf("seed %d, %s: %w", r.seed, configurations[r.conf].name, r.err)
		}
	}
	w0 := results[0].w
	if c.wide {
		fmt.Fprintf(stdout, "== %s: %d nodes of 16 cores and 32 GiB; first seed: %s; %s mode, %d seed(s) ==\n\n",
			cl.Name, len(cl.Nodes), describe(w0), c.mode, c.runs)
	} else {
		// The workload on a line of its own, within 120 columns.
		fmt.Fprintf(stdout, "== %s: %d nodes of 16 cores and 32 GiB; %s mode, %d seed(s) ==\nfirst seed: %s\n\n",
			cl.Name, len(cl.Nodes), c.mode, c.runs, describe(w0))
	}
	rows, sums := aggregate(results, c.runs)
	if err := printTables(stdout, rows, sums); err != nil {
		return nil, err
	}
	if err := writeOutputs(c.out, results, rows, sums); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "\n%d simulations in %v; outputs in %s\n", len(results), time.Since(start).Round(100*time.Millisecond), c.out)
	if err := out.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// describe counts workload w's jobs and tasks per class.
func describe(w *workload.Workload) string {
	s := ""
	for i, cl := range classes {
		jobs, tasks := 0, 0
		for k := range w.Jobs {
			if w.Jobs[k].Queue == cl.queue {
				jobs++
				tasks += len(w.Jobs[k].Tasks)
			}
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s jobs (%d tasks)", jobs, cl.name, tasks)
	}
	return s
}

// writeOutputs writes the tables, the first seed's jobs and evictions per
// configuration, and the chart.
func writeOutputs(dir string, results []*result, rows []classRow, sums []confRow) error {
	if err := writeTable(filepath.Join(dir, "table.csv"), rows, sums); err != nil {
		return err
	}
	first := results[0].seed
	for _, r := range results {
		if r.seed != first {
			continue
		}
		name := configurations[r.conf].name
		if err := output.WriteFile(filepath.Join(dir, "jobs-"+name+".csv"), func(w io.Writer) error { return r.res.WriteJobsCSV(w, true) }); err != nil {
			return err
		}
		if err := output.WriteFile(filepath.Join(dir, "evictions-"+name+".csv"), func(w io.Writer) error { return r.res.WriteEvictionsCSV(w, true) }); err != nil {
			return err
		}
	}
	lines := make([]cdfLine, len(configurations))
	for i, conf := range configurations {
		lines[i].name = conf.name
		for _, r := range results {
			if r.conf != i {
				continue
			}
			for _, j := range r.res.Jobs {
				if cl, _ := classOf(j.Queue); cl.name != "high" {
					continue
				}
				lines[i].jobs++
				if j.Finished {
					lines[i].xs = append(lines[i].xs, j.Completion().Seconds())
				}
			}
		}
		slices.Sort(lines[i].xs)
	}
	return cdfChart(filepath.Join(dir, "jct-cdf-high.svg"), "High-priority jobs: completion time by preemption configuration", lines)
}
