// Command thesis reproduces the comparisons of the PRRL thesis' chapters 3 and 4
// (docs/methods.md §8–10) in the project's deterministic simulator (package sim):
// placement by Fair with delay scheduling against Fair with the pre-release resource
// list, and speculation by Fair without backups, with LATE and with the pre-release
// resource list (PRRL), on the thesis' simulated cluster and job classes.
//
// examples/speculation and examples/locality are small self-contained models of the
// same comparisons, written for their examples; this program runs the real thing: the
// reference finegrain.Scheduler, configured by the ready-made policies of package sim,
// driven through its public API by the simulator's heartbeats:
//
//   - Fair (sim.Fair): Hadoop's Fair scheduler as the thesis' baseline — request-based,
//     queues and jobs by running tasks over weight (the fair rule of docs/methods.md
//     §10), delay scheduling (Alg. 2.1) for locality, no speculation.
//   - Fair+PRL (sim.FairPreRelease): the same, choosing tasks with the pre-release
//     resource list (Alg. 4.1/4.2; speculate.FairPlacer) instead of delay scheduling.
//   - Fair+LATE (sim.FairLATE): Fair speculating with LATE (docs/methods.md §8).
//   - Fair+PRRL (sim.FairPRRL): Fair speculating with the pre-release resource list
//     (docs/methods.md §9, Alg. 3.1).
//
// Both speculators use Hadoop's defaults (speculativeCap 0.1, slowTaskThreshold 1,
// slowNodeThreshold 1, 60 s minimum runtime).
//
// # Setup
//
// The cluster is workload.ThesisCluster (thesis §4.3.1): 3 racks × 30 nodes, in each
// rack 10 slow (speed 0.8), 10 normal (1.0) and 10 fast (1.2) nodes; 4 slots per node,
// modelled as 4 cores with tasks of one core each (the scheduler has no slot
// dimension); 20 MiB/s within a rack, 5 MiB/s across racks, so a 128 MiB block moves
// in 6.4 s or 25.6 s. Input blocks have 3 replicas placed for load balance
// (workload.PlaceReplicas). The workload is workload.Thesis with the job classes of
// Table 4.2 — small jobs of 60 blocks with 60 s tasks, normal jobs of 300 blocks with
// 300 s tasks, large jobs of 800 blocks with 800 s tasks (times on a normal node,
// transfer excluded), map-only, one task per block — and the experiments of §4.3.2
// (workload.ThesisExperiment), each of 3 queues submitting at time 0:
//
//	1  100 small jobs per queue
//	2  50 normal jobs per queue
//	3  20 large jobs per queue
//	4  all of them (100 small, 50 normal, 20 large per queue)
//
// The numbers of jobs are multiplied by -scale (rounded, at least one job per class and
// queue), so experiments 3 and 4 never have fewer than one large job (800 tasks) per
// queue. The full size (scale 1) is far beyond a quick run; Fair+PRL, whose decisions
// cost O(pending + running) tasks per heartbeat, is the slow one. The default scale,
// 0.04, gives 720, 1,800, 2,400 and 4,920 tasks for experiments 1–4 and runs in about
// 25 s on two idle cores (Fair+PRL on experiment 4 alone takes 18 s).
//
//	go run ./examples/thesis                     # all four experiments, scale 0.04
//	go run ./examples/thesis -exp 1,2 -scale 0.1 -seed 7 -workers 1
//
// Flags:
//
//	-scale F    job-count factor of the thesis' experiments (default 0.04)
//	-seed N     workload seed (default 1): the order of each queue's jobs, which
//	            matters only in experiment 4 (1–3 have one class of jobs)
//	-exp LIST   experiments to run, a comma list of 1..4 (default 1,2,3,4)
//	-workers N  simulations run in parallel, in [1, 1024] (default: the number of
//	            CPUs, at most 1024); the output does not depend on it
//	-quiet      no progress bar and no per-run wall times
//
// A progress bar (simulated tasks) and each run's wall time go to stderr when it is a
// terminal, never to a log file or a pipe; the tables, on stdout, are deterministic for a
// given scale, seed and set of experiments.
//
// # How to read the output
//
// Table 1 (placement): per experiment, Fair with delay scheduling and Fair+PRL; the
// share of task runs that started node-local, rack-local and off-switch (a rack-local
// run first moves its block within the rack, an off-switch one across racks); the mean
// and 95th percentile of job completion (submission at 0 s → last task done) and the
// makespan; in the last three columns, Fair+PRL's change against delay scheduling in
// percent (negative is better).
//
// Table 2 (speculation): per experiment, Fair without speculation, Fair+LATE and
// Fair+PRRL; backups launched and won (a backup wins when it finishes before the task it
// backs up, which is then killed), the success rate won/launched, mean job completion
// and makespan, and their change against no speculation in percent.
//
// # The thesis' claims
//
//   - Speculation (Tables 3.4–3.9): PRRL launches fewer backups than LATE, a larger
//     share of them win, and jobs complete sooner.
//   - Placement (§4.3): Fair with the pre-release list gets better locality and a
//     shorter makespan than Fair with delay scheduling, with no delay parameters to
//     tune.
//
// # What we see
//
// At the default run (scale 0.04, seed 1; deterministic):
//
//   - Speculation: the claim on backups holds, more starkly than in the thesis. PRRL
//     launches 0, 0, 0 and 24 backups in experiments 1–4 against LATE's 97, 90, 0 and
//     33, and 23 of PRRL's 24 win (96%), against 0%, 1% and 82% of LATE's. Here a
//     straggler is just a task on a 0.8× node, so the time left is known almost
//     exactly and PRRL's test (back up only if the time left exceeds the backup's
//     finish time) is nearly an oracle. LATE's backups of experiment 1 could not win: a
//     60 s task runs at most 100.6 s (75 s on a 0.8× node after a 25.6 s transfer), so
//     past LATE's 60 s minimum runtime it has at most 41 s left, and a backup takes at
//     least 50 s even on a fast node. On job completion the claim holds weakly:
//     speculation barely matters with this little heterogeneity, except that LATE's
//     losing backups cost experiment 2 3.2% of mean job completion and 18.8% of
//     makespan (they hold slots the last wave's tasks wait for); PRRL is never worse
//     than no speculation and gains 0.9% mean / 1.5% makespan in experiment 4, a hair
//     more than LATE.
//   - Placement: the claims hold for the mixed workload, not for the uniform ones. In
//     experiment 4 Fair+PRL gets more node-local runs than delay scheduling (92.3%
//     against 87.6%) and a 15.4% shorter mean job completion (makespan −0.3%): small
//     jobs, whose blocks sit on few nodes, no longer wait for locality behind the
//     normal and large ones. In experiments 1–3 (one job class) delay scheduling is
//     more local (99.3%, 96.8%, 97.0% against 96.1%, 95.4%, 95.4%) and the two finish
//     within 3.4% of each other (Fair+PRL ahead on makespan in 1 and 2, behind by 0.2%
//     in 3, and 1.3% behind on mean job completion in 1).
//   - Seed 2 (experiment 4; the others do not depend on the seed) gives the same
//     picture: Fair+PRL 91.7% node-local against 90.2%, −18.9% mean job completion;
//     PRRL 26/26 backups won, LATE 23/36.
//   - With far fewer tasks than slots the pre-release list loses locality: at -scale
//     0.01 (experiment 1: 180 tasks, 360 slots) Fair+PRL runs 41.7% of the tasks
//     node-local against delay scheduling's 100%, and finishes 14.3% later.
//     Alg. 4.2 looks only at busy slots; with none to wait for, the first node to ask
//     takes any task.
//
// Delay scheduling here credits a job that passed up an offer with whole 500 ms steps
// of waiting (finegrain.DelayUpdate, as Hadoop's Fair Scheduler's update thread).
// Credited per node heartbeat instead (every 11 ms on this cluster), waits would
// barely grow on a full cluster: small jobs then averaged 3,912 s in experiment 4.
//
// # Model assumptions
//
//   - Stragglers come only from node heterogeneity: a task runs at its node's speed
//     (0.8, 1 or 1.2) from start to end; there are no random slowdowns, failures or
//     background load, and the workload has no jitter: each task uses its demand
//     steadily (sim.NoVariation), as a Hadoop slot holds it.
//   - Progress is exact up to heartbeat staleness: every node reports the progress of
//     its running tasks (the share of their work done, input transfer included) at
//     each heartbeat (1 s, staggered across nodes) and once more out of band when a
//     task on it ends. The input transfer does not depend on the node's speed, so the
//     progress rate of a rack-local or off-switch task changes slightly when its
//     transfer ends; LATE's and PRRL's linear estimates are exact otherwise.
//   - Fair is request-based, as in Hadoop: a task holds its declared core and 1 GiB
//     until it ends, and the scheduler places tasks on heartbeats. A block transfer is
//     part of the task's run and holds its slot.
//   - A backup is a run of the same task on another node (with its own input transfer);
//     the first of the two to finish completes the task, the other is killed at once.
//     Backups are considered only for jobs with no unstarted task.
//   - Locality counts every run started, backups included (Table 1 has no backups).
package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/simrun"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// DefaultScale keeps the whole program well under a minute on two cores.
const DefaultScale = 0.04

// experimentNames describes the thesis' experiments (workload.ThesisExperiment).
var experimentNames = map[int]string{1: "small", 2: "normal", 3: "large", 4: "mixed"}

type config struct {
	scale   float64
	seed    uint64
	exps    []int
	workers int
	quiet   bool
	// cluster configures workload.ThesisCluster (tests run a smaller one); no flag.
	cluster []workload.ClusterOption
}

// run is one simulation: an experiment under a policy.
type run struct {
	exp    int
	tasks  int
	policy sim.Policy
	sum    sim.Summary
	err    error
	wall   time.Duration
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = compare(cfg, os.Stdout, os.Stderr)
	}
	cli.Exit("thesis", err)
}

const synopsis = `
Runs the PRRL thesis' comparisons in the simulator on its cluster (3 racks, slow,
normal and fast nodes): Fair with delay scheduling against Fair with the pre-release
list (Table 4.2), and no speculation against LATE and PRRL (Tables 3.5-3.9), and prints
both tables. A progress bar (simulated tasks) and each run's wall time go to stderr
when it is a terminal.`

func parseFlags(args []string) (config, error) {
	fs := cli.NewFlags("thesis", synopsis)
	var c config
	var exps string
	fs.Float64Var(&c.scale, "scale", DefaultScale, "job-count factor of the thesis' experiments")
	fs.Uint64Var(&c.seed, "seed", 1, "workload seed")
	fs.StringVar(&exps, "exp", "1,2,3,4", "experiments to run (comma list of 1..4)")
	fs.IntVar(&c.workers, "workers", simrun.DefaultWorkers(), fmt.Sprintf("simulations in parallel, in [1, %d]", simrun.MaxWorkers))
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar and no per-run times")
	if err := cli.Parse(fs, args); err != nil {
		return c, err
	}
	if err := simrun.CheckWorkers(c.workers); err != nil {
		return c, err
	}
	switch {
	case !(c.scale > 0 && c.scale <= 1000):
		return c, cli.Usagef("-scale %v: must be in (0, 1000]", c.scale)
	}
	for _, f := range strings.Split(exps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || experimentNames[n] == "" {
			return c, cli.Usagef("-exp %q: %q is not an experiment (want 1, 2, 3 or 4)", exps, f)
		}
		if slices.Contains(c.exps, n) {
			return c, cli.Usagef("-exp %q: experiment %d twice", exps, n)
		}
		c.exps = append(c.exps, n)
	}
	slices.Sort(c.exps)
	return c, nil
}

// policies are the policies run per experiment: Fair (the baseline of both tables),
// then Fair+PRL, Fair+LATE and Fair+PRRL.
func policies() []sim.Policy {
	var out []sim.Policy
	for _, p := range append(sim.Placements(), sim.Speculations()...) {
		if !slices.ContainsFunc(out, func(q sim.Policy) bool { return q.Name == p.Name }) {
			out = append(out, p)
		}
	}
	return out
}

// buildWorkload generates experiment exp's workload for the seed and scale.
func buildWorkload(c *config, exp int) (*workload.Workload, error) {
	mix, err := workload.ThesisExperiment(exp)
	if err != nil {
		return nil, err
	}
	w, err := workload.Thesis(rand.New(rand.NewPCG(c.seed, uint64(exp))), mix, workload.WithScale(c.scale))
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// compare runs every experiment under every policy and prints the two tables to stdout;
// progress and wall times go to stderr when it is a terminal.
func compare(c config, stdout, stderr io.Writer) error {
	start := time.Now()
	c.quiet = c.quiet || !cli.IsTerminal(stderr) // no progress lines in logs
	cl, err := workload.ThesisCluster(c.cluster...)
	if err != nil {
		return err
	}
	ws, runs, err := simulate(&c, &cl, stderr)
	if err != nil {
		return err
	}
	if err := report(&c, &cl, ws, runs, stdout); err != nil {
		return err
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "%d simulations in %v\n", len(runs), time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// simulate generates every experiment's workload and runs it under every policy, on
// c.workers goroutines. It returns the workloads by experiment and the runs in a fixed
// order (by experiment, then policy), whatever the number of workers.
func simulate(c *config, cl *workload.Cluster, stderr io.Writer) (map[int]*workload.Workload, []*run, error) {
	// One workload per experiment, shared (read-only) by its simulations.
	ws := map[int]*workload.Workload{}
	var runs []*run
	for _, e := range c.exps {
		w, err := buildWorkload(c, e)
		if err != nil {
			return nil, nil, err
		}
		ws[e] = w
		for _, p := range policies() {
			runs = append(runs, &run{exp: e, tasks: w.NumTasks(), policy: p})
		}
	}
	// The slowest simulations first, so that the workers finish together: Fair+PRL's
	// decisions grow with the number of tasks.
	order := slices.Clone(runs)
	slices.SortStableFunc(order, func(a, b *run) int { return cost(b) - cost(a) })
	simrun.Each(stderr, c.quiet, c.workers, order, func(r *run) int { return r.tasks }, func(r *run, progress sim.Option) {
		t0 := time.Now()
		// The thesis' model: a task uses its slot's resources steadily (see Model
		// assumptions), not the simulator's default usage moving within stages.
		res, err := sim.Run(ws[r.exp], cl, r.policy, progress, sim.WithVariation(sim.NoVariation))
		r.wall = time.Since(t0)
		if err != nil {
			r.err = err
			return
		}
		r.sum = res.Summary
	})
	var errs []error
	for _, r := range runs {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("experiment %d, %s: %w", r.exp, r.policy.Name, r.err))
		}
		if !c.quiet {
			fmt.Fprintf(stderr, "experiment %d %-9s %6d tasks  %v\n", r.exp, r.policy.Name, r.tasks, r.wall.Round(10*time.Millisecond))
		}
	}
	return ws, runs, errors.Join(errs...)
}

// cost ranks a simulation by how long it is expected to take.
func cost(r *run) int {
	if r.policy.Name == sim.FairPreRelease().Name {
		return r.tasks * 10
	}
	return r.tasks
}

// find returns the run of experiment exp under the named policy.
func find(runs []*run, exp int, name string) *run {
	for _, r := range runs {
		if r.exp == exp && r.policy.Name == name {
			return r
		}
	}
	return nil
}

// localityShares returns the percentages of runs started node-local, rack-local and
// off-switch, over the runs that read an input block.
func localityShares(s *sim.Summary) [3]float64 {
	n := s.Locality[fairness.NodeLocal] + s.Locality[fairness.RackLocal] + s.Locality[fairness.OffSwitch]
	var out [3]float64
	if n == 0 {
		return out
	}
	for i := range out {
		out[i] = 100 * float64(s.Locality[i]) / float64(n)
	}
	return out
}

// successRate is won/launched in percent; false without backups.
func successRate(s *sim.Summary) (float64, bool) {
	if s.Backups == 0 {
		return 0, false
	}
	return 100 * float64(s.BackupsWon) / float64(s.Backups), true
}

// change is b's change against a in percent.
func change(a, b time.Duration) string {
	if a <= 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(b.Seconds()-a.Seconds())/a.Seconds())
}

// secs formats a duration in whole seconds.
func secs(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

// report prints the placement and the speculation tables.
func report(c *config, cl *workload.Cluster, ws map[int]*workload.Workload, runs []*run, w io.Writer) error {
	fmt.Fprintf(w, "PRRL thesis ch. 3-4 in the simulator: cluster %s (%d nodes, speeds 0.8/1.0/1.2), scale %g, seed %d\n",
		cl.Name, len(cl.Nodes), c.scale, c.seed)
	fmt.Fprintln(w, "experiments (3 queues, all jobs submitted at 0 s):")
	for _, e := range c.exps {
		wl := ws[e]
		fmt.Fprintf(w, "  %d %-6s  %4d jobs  %6d tasks\n", e, experimentNames[e], len(wl.Jobs), wl.NumTasks())
	}

	base, prl := sim.Fair().Name, sim.FairPreRelease().Name
	fmt.Fprintf(w, "\nTable 1. Placement: %s (delay scheduling) vs %s (pre-release list); changes of %s vs %s\n", base, prl, prl, base)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "exp\tpolicy\tnode-local\track-local\toff-switch\tmean JCT\tp95 JCT\tmakespan\tΔ mean\tΔ p95\tΔ makespan\t")
	for _, e := range c.exps {
		a := find(runs, e, base)
		for _, name := range []string{base, prl} {
			r := find(runs, e, name)
			s := &r.sum
			loc := localityShares(s)
			fmt.Fprintf(tw, "%d %s\t%s\t%.1f%%\t%.1f%%\t%.1f%%\t%s\t%s\t%s\t", e, experimentNames[e], name,
				loc[0], loc[1], loc[2], secs(s.JobCompletion.Mean), secs(s.JobCompletion.P95), secs(s.Makespan))
			if name == base {
				fmt.Fprint(tw, "\t\t\t\n")
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t\n", change(a.sum.JobCompletion.Mean, s.JobCompletion.Mean),
				change(a.sum.JobCompletion.P95, s.JobCompletion.P95), change(a.sum.Makespan, s.Makespan))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintf(w, "\nTable 2. Speculation: %s (none) vs %s vs %s; changes vs none\n", base, sim.FairLATE().Name, sim.FairPRRL().Name)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "exp\tpolicy\tbackups\twon\tsuccess\tmean JCT\tmakespan\tΔ mean\tΔ makespan\t")
	for _, e := range c.exps {
		a := find(runs, e, base)
		for _, p := range sim.Speculations() {
			r := find(runs, e, p.Name)
			s := &r.sum
			rate := "-"
			if x, ok := successRate(s); ok {
				rate = fmt.Sprintf("%.0f%%", x)
			}
			fmt.Fprintf(tw, "%d %s\t%s\t%d\t%d\t%s\t%s\t%s\t", e, experimentNames[e], p.Name,
				s.Backups, s.BackupsWon, rate, secs(s.JobCompletion.Mean), secs(s.Makespan))
			if p.Name == base {
				fmt.Fprint(tw, "\t\t\n")
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", change(a.sum.JobCompletion.Mean, s.JobCompletion.Mean), change(a.sum.Makespan, s.Makespan))
		}
	}
	return tw.Flush()
}
