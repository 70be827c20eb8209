// Command mixed compares, in the simulator, what a scheduler can do about
// latency-sensitive tasks that fall behind their service-level objective beside batch
// work (docs/methods.md §11): nothing, LATE backups, or straggler scale-up — growing
// the straggler in place or moving it, from idle room only or also from batch tasks,
// by reclaim (what they hold and do not use) and preemption (shrinking them, never
// killing them).
//
// Four runs of the same workload and seed differ only in that mechanism; all four are
// Fair with delay scheduling and request-based placement (YARN's way), their node
// agents reporting progress (sim.Mixed):
//
//   - Fair: no action;
//   - Fair+LATE: LATE speculation's backup attempts (docs/methods.md §8);
//   - Fair+ScaleUp/idle: scale-up rounds (finegrain.Scheduler.ScaleUp, every -period)
//     that grow stragglers out of idle room only (finegrain.ScaleUpConfig.IdleOnly);
//   - Fair+ScaleUp: scale-up rounds with reclaim and preemption (the defaults).
//
// It prints, per policy over the seeds, the latency-sensitive tasks' SLO attainment
// (the share that finished within their SLO of their first start) and slowdown, the
// batch tasks' slowdown (run time from their first start over their true run time
// alone on a normal node), the makespan, the mean job completion time, the kills (the
// nodes' out-of-memory kills, and those of batch tasks whose memory outgrew what a
// reclaim left them), LATE's backups and the scale-up actions by kind; then the SLO
// attainment seed by seed, and whether scale-up with reclaim beat both no action and
// LATE on each. The execution model of a resize is package sim's (its doc, "Scale-up"):
// -resize picks it.
//
// The workload. By default the FGM paper's generated workload (sim/workload.FGM,
// offline: every job submitted at 0) with -ls of its jobs latency-sensitive, SLO -slo
// times their true run time, on the paper's 23-node cluster shared with other
// applications' CPU load (sim.RandomLoad: each node a mean of 20–60% of its CPU, moving
// every minute), which is what makes tasks straggle: request-based placement never
// over-commits a node, and the cluster's nodes are all of speed 1. -trace
// openb:NODES,PODS replays the Alibaba GPU-sharing trace instead (cluster-trace-gpu-
// v2023's node and pod lists, see /work/shared/data or the alibaba/clusterdata
// repository): a pod is latency-sensitive when its qos is LS, the pods' times are
// scaled by -scale (default 0.001), it runs on the first -nodes nodes of the list
// (default all) beside the same kind of load; seeds then change only the load.
//
//	go run ./examples/mixed                   # 3 seeds, the generated workload
//	go run ./examples/mixed -trace openb:openb_node_list_gpu_node.csv,openb_pod_list_gpushare40.csv -nodes 20
//	go run ./examples/mixed -walkthrough      # the planner's steps by hand, no simulation
//
// Flags: -seed N (first seed; run r uses N+r), -runs N (seeds, default 3), -period D
// (scale-up round period, default 5s), -scale F, -ls F, -slo F, -cloud (the
// background load, default true), -resize elastic|capped-shrink, -reclaim-memory
// (U_ECRU of 80% on memory too; by default, as the library, only the compressible
// dimensions are reclaimed), -trace, -nodes, -out DIR (table.csv, made if missing; default
// out/mixed), -workers N, -quiet, -walkthrough. The results are deterministic for a
// given seed.
package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/examples/internal/simrun"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

const synopsis = `
Compares, in the simulator, four ways of treating latency-sensitive tasks that fall
behind their SLO beside batch work — no action, LATE backups, scale-up from idle room
only, scale-up with reclaim and preemption — on the same workload and seeds, and prints
the SLO attainment, the latency-sensitive and batch slowdowns, makespan, job completion,
kills and the scale-up actions. Writes table.csv to -out (default out/mixed).
-walkthrough prints the planner's steps on a hand-built cluster instead.`

type config struct {
	seed          uint64
	runs          int
	period        time.Duration
	scale         float64 // the generated workload's size; openb's time factor
	ls            float64 // share of latency-sensitive jobs (generated workload)
	slo           float64 // SLO factor
	cloud         bool
	resize        sim.ResizeModel
	reclaimMemory bool
	trace         []string // openb NODES, PODS; nil for the generated workload
	nodes         int      // openb: the first nodes of the list; 0 for all
	out           string
	workers       int
	quiet         bool
	walkthrough   bool
}

// defaultOut is the output folder unless -out names another.
var defaultOut = filepath.Join("out", "mixed")

func main() {
	c, err := parseFlags(os.Args[1:])
	if err == nil {
		if c.walkthrough {
			_, err = walkthroughTo(os.Stdout)
		} else {
			_, err = run(c, os.Stdout, os.Stderr)
		}
	}
	cli.Exit("mixed", err)
}

func parseFlags(args []string) (config, error) {
	fs := cli.NewFlags("mixed", synopsis)
	c := config{}
	var resize, trace string
	fs.Uint64Var(&c.seed, "seed", 1, "first seed; run r uses seed+r")
	fs.IntVar(&c.runs, "runs", 3, "seeds per policy")
	fs.DurationVar(&c.period, "period", sim.DefaultScaleUpEvery, "how often the scale-up rounds run (simulated time)")
	fs.Float64Var(&c.scale, "scale", 0, "workload size factor (default 1); with openb, the time factor (default 0.001)")
	fs.Float64Var(&c.ls, "ls", 0.3, "share of the generated workload's jobs that are latency-sensitive, in (0, 1]")
	fs.Float64Var(&c.slo, "slo", workload.DefaultSLOFactor, "a latency-sensitive task's SLO, as a factor of its true run time, in [1, 100]")
	fs.BoolVar(&c.cloud, "cloud", true, "share the nodes with other applications' CPU load (sim.RandomLoad, 20-60% of a node's CPU)")
	fs.StringVar(&resize, "resize", "elastic", "execution model of a resize: elastic (a shrunk task slows with its allocation) or capped-shrink (only where it uses more than it holds)")
	fs.BoolVar(&c.reclaimMemory, "reclaim-memory", false, "scale-up reclaims unused memory too (U_ECRU 80% on every dimension); default: the library's, compressible dimensions only")
	fs.StringVar(&trace, "trace", "", "replay the openb trace instead: openb:NODES,PODS (cluster-trace-gpu-v2023's node and pod lists)")
	fs.IntVar(&c.nodes, "nodes", 0, "openb: run on the first N nodes of the node list (default all)")
	fs.StringVar(&c.out, "out", defaultOut, "output folder, made if missing")
	fs.IntVar(&c.workers, "workers", simrun.DefaultWorkers(), fmt.Sprintf("simulations in parallel, in [1, %d]", simrun.MaxWorkers))
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&c.walkthrough, "walkthrough", false, "print the scale-up planner's steps on a small hand-built cluster instead (no simulation)")
	if err := cli.Parse(fs, args); err != nil {
		return c, err
	}
	if err := simrun.CheckWorkers(c.workers); err != nil {
		return c, err
	}
	var err error
	if c.resize, err = sim.ParseResizeModel(resize); err != nil {
		return c, cli.Usagef("-resize %q: want elastic or capped-shrink", resize)
	}
	if trace != "" {
		kind, paths, ok := strings.Cut(trace, ":")
		c.trace = strings.Split(paths, ",")
		if !ok || kind != "openb" || len(c.trace) != 2 || c.trace[0] == "" || c.trace[1] == "" {
			return c, cli.Usagef("-trace %q: want openb:NODES,PODS", trace)
		}
	}
	switch {
	case c.runs < 1 || c.runs > 100:
		return c, cli.Usagef("-runs %d: must be in [1, 100]", c.runs)
	case c.period <= 0 || c.period > sim.MaxPeriod:
		return c, cli.Usagef("-period %v: must be in (0, %v]", c.period, sim.MaxPeriod)
	case c.scale == 0 && c.trace != nil:
		c.scale = 0.001
	case c.scale == 0:
		c.scale = 1
	case c.trace != nil && !(c.scale > 0 && c.scale <= 1):
		return c, cli.Usagef("-scale %v: openb's is a time factor in (0, 1]", c.scale)
	case !(c.scale > 0 && c.scale <= 10):
		return c, cli.Usagef("-scale %v: must be in (0, 10]", c.scale)
	}
	switch {
	case !(c.ls > 0 && c.ls <= 1):
		return c, cli.Usagef("-ls %v: must be in (0, 1]", c.ls)
	case !(c.slo >= 1 && c.slo <= 100):
		return c, cli.Usagef("-slo %v: must be in [1, 100]", c.slo)
	case c.nodes < 0:
		return c, cli.Usagef("-nodes %d: must not be negative", c.nodes)
	case c.nodes > 0 && c.trace == nil:
		return c, cli.Usagef("-nodes %d: only with -trace openb", c.nodes)
	}
	return c, nil
}

// policies are the four compared (sim.Mixed), the scale-up ones reclaiming memory or
// not as c says.
func (c config) policies() []sim.Policy {
	ps := sim.Mixed()
	if c.reclaimMemory {
		u := resource.Uniform(workload.Schema().All(), finegrain.DefaultExpectedUtilisation)
		for i := range ps {
			if ps[i].ScaleUp {
				name := ps[i].Name
				ps[i] = sim.FairScaleUp(finegrain.ScaleUpConfig{ExpectedUtilisation: u, IdleOnly: strings.HasSuffix(name, "/idle")})
				ps[i].Name = name
			}
		}
	}
	return ps
}

// short names the policies in the per-seed lines.
var short = []string{"none", "LATE", "idle", "scale-up"}

// scenario is one seed's workload and cluster, and its background load.
type scenario struct {
	seed uint64
	w    *workload.Workload
	cl   *workload.Cluster
	bg   sim.Background
}

// result is one simulation: a policy on one seed's scenario.
type result struct {
	pol int
	sc  *scenario
	res *sim.Result
	err error
}

// run simulates every policy on every seed, prints the tables to stdout and writes
// table.csv; it returns the results in (seed, policy) order. A failed write to stdout
// is its error.
func run(c config, stdout, stderr io.Writer) ([]*result, error) {
	start := time.Now()
	out := output.NewWriter(stdout)
	stdout = out
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return nil, err
	}
	scs, desc, err := scenarios(c)
	if err != nil {
		return nil, err
	}
	pols := c.policies()
	var results []*result
	for _, sc := range scs {
		for i := range pols {
			results = append(results, &result{pol: i, sc: sc})
		}
	}
	simrun.Each(stderr, c.quiet, c.workers, results, func(r *result) int { return r.sc.w.NumTasks() }, func(r *result, progress sim.Option) {
		opts := []sim.Option{sim.WithScaleUpEvery(c.period), sim.WithResizeModel(c.resize), progress}
		if r.sc.bg != nil {
			opts = append(opts, sim.WithBackground(r.sc.bg))
		}
		r.res, r.err = sim.Run(r.sc.w, r.sc.cl, pols[r.pol], opts...)
	})
	for _, r := range results {
		if r.err != nil && !errors.Is(r.err, sim.ErrTimeLimit) {
			return nil, fmt.Errorf("seed %d, %s: %w", r.sc.seed, pols[r.pol].Name, r.err)
		}
	}
	fmt.Fprintf(stdout, "== %s ==\n%s\n%d seed(s) from %d; scale-up every %v, %s resizes, memory reclaimed: %v\n\n",
		desc[0], desc[1], c.runs, c.seed, c.period, c.resize, c.reclaimMemory)
	rows := aggregate(results, pols)
	if err := printTable(stdout, rows); err != nil {
		return nil, err
	}
	fmt.Fprintln(stdout)
	printSeeds(stdout, results, len(pols))
	if err := writeTable(filepath.Join(c.out, "table.csv"), results, pols, rows); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "\n%d simulations in %v; outputs in %s\n", len(results), time.Since(start).Round(100*time.Millisecond), c.out)
	if err := out.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// scenarios builds every seed's scenario and describes them.
func scenarios(c config) ([]*scenario, [2]string, error) {
	var scs []*scenario
	var desc [2]string
	if c.trace != nil {
		nodes, err := workload.LoadOpenBNodes(c.trace[0])
		if err != nil {
			return nil, desc, err
		}
		pods, err := workload.LoadOpenBPods(c.trace[1])
		if err != nil {
			return nil, desc, err
		}
		if c.nodes > 0 && c.nodes < len(nodes) {
			nodes = nodes[:c.nodes]
		}
		cl, err := workload.OpenBCluster("openb", nodes)
		if err != nil {
			return nil, desc, err
		}
		name := "openb-" + strings.TrimPrefix(strings.TrimSuffix(filepath.Base(c.trace[1]), filepath.Ext(c.trace[1])), "openb_pod_list_")
		w, st, err := workload.FromOpenB(name, pods, &cl, c.scale, workload.WithSLOFactor(c.slo))
		if err != nil {
			return nil, desc, err
		}
		for r := range c.runs {
			scs = append(scs, &scenario{seed: c.seed + uint64(r), w: &w, cl: &cl})
		}
		desc[0] = fmt.Sprintf("%s (time factor %v; %d pods, %d skipped: untimed or unplaceable), %d openb nodes", name, c.scale, st.Used, st.Untimed+st.Unplaceable, len(cl.Nodes))
	} else {
		cl, err := workload.FGMCluster()
		if err != nil {
			return nil, desc, err
		}
		for r := range c.runs {
			seed := c.seed + uint64(r)
			w, err := workload.FGM(rand.New(rand.NewPCG(seed, 1)), workload.WithScale(c.scale), workload.WithLatencySensitive(c.ls), workload.WithSLOFactor(c.slo))
			if err != nil {
				return nil, desc, fmt.Errorf("seed %d: %w", seed, err)
			}
			scs = append(scs, &scenario{seed: seed, w: &w, cl: &cl})
		}
		desc[0] = fmt.Sprintf("FGM workload (scale %v, %.0f%% of jobs latency-sensitive), %s", c.scale, 100*c.ls, cl.Name)
	}
	ls := 0
	for j := range scs[0].w.Jobs {
		for k := range scs[0].w.Jobs[j].Tasks {
			if scs[0].w.Jobs[j].Tasks[k].LatencySensitive {
				ls++
			}
		}
	}
	desc[1] = fmt.Sprintf("SLO %v× the true run time; first seed: %d tasks, %d latency-sensitive", c.slo, scs[0].w.NumTasks(), ls)
	if c.cloud {
		for _, sc := range scs {
			bg, err := sim.RandomLoad(rand.New(rand.NewPCG(sc.seed, 2)), len(sc.cl.Nodes))
			if err != nil {
				return nil, desc, err
			}
			sc.bg = bg
		}
		desc[0] += ", cloud"
	} else {
		desc[0] += ", dedicated"
	}
	return scs, desc, nil
}

// row is one policy over every seed.
type row struct {
	name                 string
	ls, met              int // latency-sensitive tasks, and those within their SLO, summed
	lsSlow, batchSlow    float64
	makespan, jct        time.Duration
	oom, shrinkKills     int
	backups, won         int
	expand, move         int
	reclaim, preempt     int
	restore, unfinished  int
	rounds, stragglers   int
	attainment           float64 // met / ls
	perSeed              []float64
	beatsNone, beatsLATE int // seeds where it beat no action and LATE (scale-up rows)
}

// aggregate condenses the results per policy: sums of the counts, means over the
// seeds of the slowdowns, makespans and mean completion times, and the attainment of
// the pooled tasks.
func aggregate(results []*result, pols []sim.Policy) []row {
	rows := make([]row, len(pols))
	n := 0
	for i := range rows {
		rows[i].name = pols[i].Name
	}
	for _, r := range results {
		x := &rows[r.pol]
		s := r.res.Summary
		m := s.Mixed
		x.ls += m.LSTasks
		x.met += m.LSMet
		x.lsSlow += m.LSSlowdown
		x.batchSlow += m.BatchSlowdown
		x.makespan += s.Makespan
		x.jct += s.JobCompletion.Mean
		x.oom += s.OOMKills
		x.shrinkKills += m.ShrinkKills
		x.backups += s.Backups
		x.won += s.BackupsWon
		x.expand += m.Expanded
		x.move += m.Moved
		x.reclaim += m.Reclaimed
		x.preempt += m.Preempted
		x.restore += m.Restored
		x.rounds += m.Rounds
		x.stragglers += m.Stragglers
		x.unfinished += s.Jobs - s.JobsFinished
		x.perSeed = append(x.perSeed, m.SLOAttainment)
		if r.pol == 0 {
			n++
		}
	}
	for i := range rows {
		x := &rows[i]
		if x.ls > 0 {
			x.attainment = float64(x.met) / float64(x.ls)
		}
		x.lsSlow /= float64(n)
		x.batchSlow /= float64(n)
		x.makespan /= time.Duration(n)
		x.jct /= time.Duration(n)
		if i >= 2 {
			for k, a := range x.perSeed {
				if a > rows[0].perSeed[k] {
					x.beatsNone++
				}
				if a > rows[1].perSeed[k] {
					x.beatsLATE++
				}
			}
		}
	}
	return rows
}

// printTable prints the rows within 120 columns.
func printTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tSLO met\tLS slow\tbatch slow\tmakespan\tJCT mean\tOOM\tshrink kills\tbackups\tE/M/R/P/Rs\t")
	for _, x := range rows {
		backups, actions := "-", "-"
		if x.backups > 0 {
			backups = fmt.Sprintf("%d (%d)", x.backups, x.won)
		}
		if x.rounds > 0 {
			actions = fmt.Sprintf("%d/%d/%d/%d/%d", x.expand, x.move, x.reclaim, x.preempt, x.restore)
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.3f\t%.3f\t%s\t%s\t%d\t%d\t%s\t%s\t\n", x.name, 100*x.attainment, x.lsSlow, x.batchSlow,
			output.Duration(x.makespan), output.Duration(x.jct), x.oom, x.shrinkKills, backups, actions)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "SLO met: latency-sensitive tasks done within their SLO of their first start, all seeds pooled. LS and batch")
	fmt.Fprintln(w, "slow: mean slowdown (first start to finish over the true run time). Means over the seeds: slowdowns, makespan,")
	fmt.Fprintln(w, "JCT. Sums: OOM kills (the nodes'), shrink kills (memory over what a reclaim left), LATE backups (won), and the")
	fmt.Fprintln(w, "scale-up actions Expand/Move/Reclaim/Preempt/Restore.")
	for _, x := range rows {
		if x.unfinished > 0 {
			fmt.Fprintf(w, "%s: %d jobs unfinished at the time limit (counted as missed)\n", x.name, x.unfinished)
		}
	}
	return nil
}

// printSeeds prints the SLO attainment seed by seed, and how often each scale-up
// policy beat no action and LATE.
func printSeeds(w io.Writer, results []*result, npol int) {
	fmt.Fprintln(w, "SLO attainment by seed (none / LATE / idle / scale-up):")
	for k := 0; k < len(results); k += npol {
		var parts []string
		for i := 0; i < npol; i++ {
			parts = append(parts, fmt.Sprintf("%.1f%%", 100*results[k+i].res.Summary.Mixed.SLOAttainment))
		}
		fmt.Fprintf(w, "  seed %d: %s\n", results[k].sc.seed, strings.Join(parts, " / "))
	}
	rows := aggregate(results, make([]sim.Policy, npol))
	seeds := len(results) / npol
	for i := 2; i < npol; i++ {
		fmt.Fprintf(w, "%s above no action on %d of %d seeds, above LATE on %d of %d\n", short[i], rows[i].beatsNone, seeds, rows[i].beatsLATE, seeds)
	}
}

// writeTable writes table.csv: a row per seed and policy, then a row per policy over
// every seed (seed "all").
func writeTable(path string, results []*result, pols []sim.Policy, rows []row) error {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
	out := [][]string{{"seed", "policy", "ls_tasks", "ls_met", "slo_attainment", "ls_slowdown", "batch_slowdown", "makespan_s", "jct_mean_s",
		"oom_kills", "shrink_kills", "backups", "backups_won", "rounds", "stragglers", "expanded", "moved", "reclaimed", "preempted", "restored", "jobs_unfinished"}}
	for _, r := range results {
		s := r.res.Summary
		m := s.Mixed
		out = append(out, []string{strconv.FormatUint(r.sc.seed, 10), pols[r.pol].Name, strconv.Itoa(m.LSTasks), strconv.Itoa(m.LSMet), f(m.SLOAttainment),
			f(m.LSSlowdown), f(m.BatchSlowdown), secs(s.Makespan), secs(s.JobCompletion.Mean), strconv.Itoa(s.OOMKills), strconv.Itoa(m.ShrinkKills),
			strconv.Itoa(s.Backups), strconv.Itoa(s.BackupsWon), strconv.Itoa(m.Rounds), strconv.Itoa(m.Stragglers), strconv.Itoa(m.Expanded),
			strconv.Itoa(m.Moved), strconv.Itoa(m.Reclaimed), strconv.Itoa(m.Preempted), strconv.Itoa(m.Restored), strconv.Itoa(s.Jobs - s.JobsFinished)})
	}
	for _, x := range rows {
		out = append(out, []string{"all", x.name, strconv.Itoa(x.ls), strconv.Itoa(x.met), f(x.attainment), f(x.lsSlow), f(x.batchSlow),
			secs(x.makespan), secs(x.jct), strconv.Itoa(x.oom), strconv.Itoa(x.shrinkKills), strconv.Itoa(x.backups), strconv.Itoa(x.won),
			strconv.Itoa(x.rounds), strconv.Itoa(x.stragglers), strconv.Itoa(x.expand), strconv.Itoa(x.move), strconv.Itoa(x.reclaim),
			strconv.Itoa(x.preempt), strconv.Itoa(x.restore), strconv.Itoa(x.unfinished)})
	}
	return output.WriteCSV(path, out)
}
