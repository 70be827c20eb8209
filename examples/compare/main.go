// Command compare measures the FGM paper's headline claims (docs/methods.md §7) in the
// simulator: it runs the paper-like offline and online workloads (sim/workload.FGM:
// MapReduce- and Spark-like jobs, Facebook input sizes, 400 GiB) on the paper's 23-node
// cluster in the dedicated and the cloud environment (other applications sharing the
// nodes) under FIFO, Capacity, Fair, DRF (request-based, as YARN), what users would run
// instead — Kubernetes (kube-scheduler's defaults), Tetris (multi-resource packing),
// LoadAware (Koordinator's usage-aware placement) — and FGM (predicted stage profiles,
// fine-grained matching with bounded compression, policy adjustment), and reports, per
// scenario, tables with one row per policy — makespan, job completion, scheduling
// response, Jain's index over backlogged queues, FGM's gain over each policy in percent
// and its Jain's index less the policy's at the instants both had a backlog (paired);
// then Jain's index over every queue, utilisation used and allocated, kills, compressed
// placements and prediction error; then, in the cloud, what the co-located
// applications lost — each table within 120 columns (-wide: all in one table).
//
//	go run ./examples/compare                    # everything, ~30 s on 2 cores
//	go run ./examples/compare -policies DRF,FGM,FGM+Tetris -series=false
//	go run ./examples/compare -mode offline -env dedicated -runs 1
//	go run ./examples/compare -swim ../shared/data/swim/FB-2009_samples_24_times_1hr_0.tsv
//	go run ./examples/compare -trace alibaba2017:../shared/data/alibaba/v2017/batch_task_sample.csv
//	go run ./examples/compare -trace openb:NODES.csv,PODS.csv
//
// A trace replaces the generated workload (-trace KIND:PATH):
//
//   - swim:PATH — a SWIM workload (FB-2009, FB-2010) on the FGM cluster;
//   - alibaba2017:PATH — Alibaba cluster-trace-v2017 batch_task (workload.FromAlibaba2017:
//     a job per trace job, an instance per task) on the FGM cluster;
//   - openb:NODES,PODS — Alibaba cluster-trace-gpu-v2023, its node list and a pod list
//     (workload.FromOpenB): the pods replayed on the trace's own 1,523 nodes in push
//     mode, as a Kubernetes cluster runs them, in the dedicated environment only; then
//     the ATC'23 GPU-fragmentation experiment (sim.Fill): pods drawn from the list
//     arrive until their GPU demand is 130% of the GPU capacity, placed by the
//     best-fit, dot-product, GPU-packing and FGD scorers (package gpu), with the GPU
//     left unallocated printed and charted against the demand that arrived.
//
// Flags:
//
//	-seed N        first seed (default 1); run r uses seed N+r for the workload and the
//	               background
//	-runs N        seeds per scenario, averaged in the tables (default 3)
//	-scale F       workload size factor (default 1: 400 GiB); for traces: SWIM byte counts
//	               (0.1), Alibaba 2017 instance counts (0.01), openb times (0.001, in
//	               (0, 1]: the trace's 150 days in 3.6 hours)
//	-env E         dedicated, cloud or both (default both)
//	-mode M        offline, online or both (default both)
//	-series        also run the paper's online series, 50 to 400 GB (default true)
//	-policies LIST comma-separated policies (sim.PolicyByName) for the tables and the
//	               series; default: sim.Comparison for the tables (FIFO, Capacity, Fair,
//	               DRF, Kubernetes, Tetris, LoadAware, FGM), sim.Policies for the series
//	-trace K:PATH  replay a trace instead (above)
//	-swim PATH     as -trace swim:PATH
//	-compress F    swim, alibaba2017: divide every job's submission time by F, in
//	               [0.01, 10000] (default 1); a busier replay, nothing else changed
//	-nodes N       nodes of the FGM cluster, in [1, 10000] (default 23); not with openb
//	-fgd-coverage F openb: FGD weighs the most frequent pod shapes that make up this
//	               share of the pods (default 1: all; the study's simulator uses 0.6)
//	-planetlab DIR cloud background from PlanetLab CPU traces instead of the generator
//	-reserve       cloud: tell every scheduler each node's memory less the background's
//	               (as an operator sizes YARN's NodeManager); default: the whole machine
//	-yield Y       cloud: who gives way on an over-committed node's CPU (sim.Yield):
//	               colocated-first (default: the co-located applications get their
//	               demand, the tasks the rest) or proportional (everyone in proportion)
//	-penalty P     the execution model's contention penalty p of eq. 5, in [0, 10]
//	               (default 0.05): a compressed task runs at (1 − rc)/(1 + p) of its speed
//	-max-share M   FGM's queues' max share, a dominant share of the cluster in [0, 100]
//	               (default sim.FGMMaxShare, 0.9; 1 the whole cluster, 0 none)
//	-observe O     what FGM learns from: measured (default: the node agents' usage
//	               samples) or oracle (the true stages, an ablation)
//	-out DIR       output folder, made if missing (default ./out/compare)
//	-wide          one table per scenario with every column side by side (about 240
//	               characters wide), and the online series in one table, instead of
//	               tables that fit 120 columns
//	-workers N     simulations run in parallel, in [1, 1024] (default: the number of
//	               CPUs, at most 1024)
//	-quiet         no progress bar
//	-queues        also write queues-SCENARIO.csv: every queue at every sample of the
//	               first seed (sim.WithQueueSamples), the detail behind Jain's indices
//	-held          also Jain's indices over what the scheduler holds for each queue at
//	               the sample instant — a stage profile's stage in force then, not its
//	               peak (sim.WithHeldShares): a table per scenario ("Jain held", "Jain
//	               all held") and table.csv's held_backlogged_jain and held_jain
//
// Outputs in -out: table.csv (the printed tables, every column; with -held two more), runs.csv (one row per simulation,
// every metric), jobs-SCENARIO.csv and samples-SCENARIO.csv (first seed; with -queues
// also queues-SCENARIO.csv), series.csv,
// and SVG charts: compare-SCENARIO.svg (the policies side by side: job-completion CDFs,
// and each policy's makespan, mean and p95 job completion ÷ FGM's as grouped bars),
// jct-cdf-SCENARIO.svg (job-completion CDF), util-cpu-SCENARIO.svg and
// util-memory-SCENARIO.svg (used and allocated over time), series-gain-ENV.svg (FGM's
// gain in job completion against the data volume, online); with openb, fill.csv and
// fill-unallocated-gpu.svg (the fragmentation experiment). The CDF pools the jobs of
// every seed, as the tables average them; the utilisation charts show the first seed.
// Every chart draws a policy in its own colour, the same in every chart (package
// internal/chart's palette).
// A progress bar counts simulated tasks on stderr when stderr is a terminal (never in
// a log file or a pipe), unless -quiet.
// The results are deterministic for a given seed; see README.md for what the model
// assumes.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/examples/internal/simrun"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// policies are the policies of the tables, in table order, and seriesPolicies those
// of the online series, unless -policies names others. Everything downstream works for
// any list; tests replace them.
var (
	policies       = sim.Comparison
	seriesPolicies = sim.Policies
)

// scenario is one workload in one environment.
type scenario struct {
	mode  string // offline, online, or the SWIM trace's name
	env   string // dedicated or cloud
	gib   int64  // total input before scaling (FGM workloads)
	table bool   // printed as a table (the series' other volumes are not)
}

func (s scenario) name() string {
	if s.table {
		return s.mode + "-" + s.env
	}
	return fmt.Sprintf("%s-%s-%dGiB", s.mode, s.env, s.gib)
}

// run is one simulation: a scenario, a seed, a policy.
type run struct {
	sc     scenario
	seed   uint64
	policy sim.Policy
	res    *sim.Result
	err    error
	wall   time.Duration
}

type config struct {
	seed      uint64
	runs      int
	scale     float64
	envs      []string
	modes     []string
	series    bool
	traceKind string   // swim, alibaba2017, openb; "" for the generated workload
	tracePath []string // the trace's files
	planetlab string
	reserve   bool
	out       string
	wide      bool // -wide: each scenario in one table of every column
	queues    bool // -queues: write queues-SCENARIO.csv (first seed)
	held      bool // -held: Jain's indices also over what is held at each sample instant
	workers   int
	quiet     bool
	nodes     int          // the cluster's, once built
	coverage  float64      // openb: the share of the pods FGD's shapes cover
	compress  float64      // swim, alibaba2017: every submission time divided by this
	size      int          // -nodes: the FGM cluster's node count; 0 = its 23
	lineup    []sim.Policy // the tables' policies (-policies, else policies())
	seriesOf  []sim.Policy // the online series' (-policies, else seriesPolicies())
	observe   sim.Observe  // -observe: what FGM learns from
	yield     sim.Yield    // -yield: who gives way on an over-committed node (cloud)
	penalty   float64      // -penalty: the execution model's contention penalty p (eq. 5)
	maxShare  float64      // -max-share: FGM's queues' max share
}

// defaultOut is the output folder unless -out names another: compare's own under
// out/, so that another example's outputs never overwrite its files.
var defaultOut = filepath.Join("out", "compare")

// Bounds of -compress and -nodes.
const (
	minCompress = 0.01 // below 1 stretches the times
	maxCompress = 10000
	maxNodes    = 10000
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = compare(cfg, os.Stdout, os.Stderr)
	}
	cli.Exit("compare", err)
}

const synopsis = `
Runs the FGM paper's workloads in the simulator under the paper's baselines (FIFO,
Capacity, Fair, DRF), what users would run instead (Kubernetes, Tetris, LoadAware) and
FGM, and prints per scenario tables within 120 columns (makespan, job completion,
response, Jain's index, FGM's gain over each policy; utilisation, kills, compressed
placements, prediction error; in the cloud, the co-located applications' loss; -wide:
one wide table), then the online series (the paper's baselines and FGM); -policies
picks others. Writes CSV files and SVG charts to -out (default out/compare). A progress
bar (simulated tasks) is drawn on stderr when it is a terminal. -trace replays a SWIM,
Alibaba 2017 batch or Alibaba 2023 GPU (openb) trace instead; openb adds the GPU
fragmentation experiment.`

func parseFlags(args []string) (config, error) {
	fs := cli.NewFlags("compare", synopsis)
	var c config
	var env, mode string
	fs.Uint64Var(&c.seed, "seed", 1, "first seed")
	fs.IntVar(&c.runs, "runs", 3, "seeds per scenario")
	fs.Float64Var(&c.scale, "scale", 0, "workload size factor (default 1; traces: swim 0.1, alibaba2017 0.01, openb time factor 0.001)")
	fs.StringVar(&env, "env", "both", "dedicated, cloud or both")
	fs.StringVar(&mode, "mode", "both", "offline, online or both")
	fs.BoolVar(&c.series, "series", true, "also run the online series 50..400 GB")
	var names string
	fs.StringVar(&names, "policies", "", "comma-separated policies to compare (default: the baselines, the rivals and FGM; the series: the baselines and FGM)")
	var swim, tr string
	fs.StringVar(&swim, "swim", "", "replay this SWIM trace instead of the FGM workload (as -trace swim:PATH)")
	fs.StringVar(&tr, "trace", "", "replay a trace instead: swim:PATH, alibaba2017:PATH or openb:NODES,PODS")
	fs.Float64Var(&c.compress, "compress", 1, "swim, alibaba2017: divide every submission time by this (time compression; a busier cluster)")
	fs.IntVar(&c.size, "nodes", 0, "nodes of the FGM cluster (default 23); not with openb")
	fs.Float64Var(&c.coverage, "fgd-coverage", 1, "openb: the share of the pods whose shapes FGD weighs, most frequent first")
	fs.StringVar(&c.planetlab, "planetlab", "", "cloud background from the PlanetLab traces in this folder")
	fs.BoolVar(&c.reserve, "reserve", false, "cloud: tell schedulers each node's memory less the background's")
	fs.StringVar(&c.out, "out", defaultOut, "output folder, made if missing")
	fs.BoolVar(&c.wide, "wide", false, "print each scenario's table with every column side by side (about 240 characters wide), not split to fit 120")
	fs.IntVar(&c.workers, "workers", simrun.DefaultWorkers(), fmt.Sprintf("simulations in parallel, in [1, %d]", simrun.MaxWorkers))
	fs.BoolVar(&c.quiet, "quiet", false, "no progress bar")
	fs.BoolVar(&c.queues, "queues", false, "also write queues-SCENARIO.csv: every queue at every sample of the first seed (jobs, pending and running tasks, dominant share, oldest pending wait)")
	fs.BoolVar(&c.held, "held", false, "also Jain's indices over what the scheduler holds for each queue at the sample instant (a stage profile's stage in force, not its peak): a table per scenario, two columns of table.csv")
	var observe string
	fs.StringVar(&observe, "observe", "measured", "what FGM learns from: measured (node agents' usage samples) or oracle (the true stages, an ablation)")
	var yield string
	fs.StringVar(&yield, "yield", sim.DefaultYield.String(), "cloud: who gives way on an over-committed node's CPU: colocated-first (the co-located applications get their demand) or proportional (everyone in proportion to demand)")
	fs.Float64Var(&c.maxShare, "max-share", sim.FGMMaxShare, "FGM's queues' max share (sim.FGMQueue), a dominant share of the cluster: 1 the whole of it, 0 none")
	fs.Float64Var(&c.penalty, "penalty", sim.DefaultPenalty, "the execution model's contention penalty p (eq. 5): a compressed task runs at (1 − rc)/(1 + p) of its speed; in [0, 10]")
	if err := cli.Parse(fs, args); err != nil {
		return c, err
	}
	var err error
	if c.observe, err = sim.ParseObserve(observe); err != nil {
		return c, cli.Usagef("-observe %q: want measured or oracle", observe)
	}
	if c.yield, err = sim.ParseYield(yield); err != nil {
		return c, cli.Usagef("-yield %q: want colocated-first or proportional", yield)
	}
	if !(c.maxShare >= 0 && c.maxShare <= maxMaxShare) {
		return c, cli.Usagef("-max-share %v: must be in [0, %v] (0: none)", c.maxShare, maxMaxShare)
	}
	if !(c.penalty >= 0 && c.penalty <= 10) {
		return c, cli.Usagef("-penalty %v: must be in [0, 10]", c.penalty)
	}
	if err := simrun.CheckWorkers(c.workers); err != nil {
		return c, err
	}
	switch {
	case c.runs < 1:
		return c, cli.Usagef("-runs %d: must be at least 1", c.runs)
	case c.scale < 0 || c.scale > 1000 || c.scale != c.scale:
		return c, cli.Usagef("-scale %v: must be in (0, 1000]", c.scale)
	case !(c.coverage > 0 && c.coverage <= 1):
		return c, cli.Usagef("-fgd-coverage %v: must be in (0, 1]", c.coverage)
	case !(c.compress >= minCompress && c.compress <= maxCompress):
		return c, cli.Usagef("-compress %v: must be in [%v, %v] (1: the trace's own times)", c.compress, minCompress, maxCompress)
	case c.size < 0 || c.size > maxNodes:
		return c, cli.Usagef("-nodes %d: must be in [1, %d] (0: the FGM cluster's 23)", c.size, maxNodes)
	}
	switch {
	case swim != "" && tr != "":
		return c, cli.Usagef("-swim and -trace: give one")
	case swim != "":
		c.traceKind, c.tracePath = traceSWIM, []string{swim}
	case tr != "":
		if c.traceKind, c.tracePath, err = parseTrace(tr); err != nil {
			return c, err
		}
	}
	if c.scale == 0 {
		c.scale = defaultScale(c.traceKind)
	}
	if c.compress != 1 && c.traceKind != traceSWIM && c.traceKind != traceAlibaba {
		return c, cli.Usagef("-compress %v: only for a swim or alibaba2017 trace", c.compress)
	}
	if c.size != 0 && c.traceKind == traceOpenB {
		return c, cli.Usagef("-nodes %d: the openb trace runs on its own nodes", c.size)
	}
	if c.traceKind == traceOpenB && c.scale > 1 {
		return c, cli.Usagef("-scale %v: openb's is a time factor in (0, 1]", c.scale)
	}
	if c.lineup, c.seriesOf, err = lineup(names, c.maxShare); err != nil {
		return c, err
	}
	if c.envs, err = choice("-env", env, "dedicated", "cloud"); err != nil {
		return c, err
	}
	if c.traceKind == traceOpenB {
		// The openb nodes are the trace's own; no background shares them.
		if env == "cloud" {
			return c, cli.Usagef("-env cloud: the openb trace runs on its own nodes, dedicated")
		}
		c.envs = []string{"dedicated"}
	}
	if c.modes, err = choice("-mode", mode, "offline", "online"); err != nil {
		return c, err
	}
	return c, nil
}

// lineup is the policies of the tables and of the series: those named in names
// (sim.PolicyByName, comma-separated, each once) for both, or the defaults; FGM's
// queues capped at maxShare.
func lineup(names string, maxShare float64) (tables, series []sim.Policy, err error) {
	if names == "" {
		return capFGM(policies(), maxShare), capFGM(seriesPolicies(), maxShare), nil
	}
	seen := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		p, err := sim.PolicyByName(strings.TrimSpace(n))
		if err != nil {
			return nil, nil, cli.Usagef("-policies %q: %v", names, err)
		}
		if seen[p.Name] {
			return nil, nil, cli.Usagef("-policies %q: %s named twice", names, p.Name)
		}
		seen[p.Name] = true
		tables = append(tables, p)
	}
	tables = capFGM(tables, maxShare)
	return tables, tables, nil
}

// maxMaxShare bounds -max-share: a queue's peaks can add up to more than the cluster
// (sim.FGMQueue), so a cap above 1 still binds.
const maxMaxShare = 100

// capFGM returns ps with FGM's queues capped at maxShare (sim.FGMQueueAt), unless that
// is FGM's own.
func capFGM(ps []sim.Policy, maxShare float64) []sim.Policy {
	if maxShare == sim.FGMMaxShare {
		return ps
	}
	for i := range ps {
		if ps[i].Name == sim.FGM().Name {
			ps[i].Queue = sim.FGMQueueAt(maxShare)
		}
	}
	return ps
}

func choice(flagName, v, a, b string) ([]string, error) {
	switch v {
	case a:
		return []string{a}, nil
	case b:
		return []string{b}, nil
	case "both":
		return []string{a, b}, nil
	}
	return nil, cli.Usagef("%s %q: want %s, %s or both", flagName, v, a, b)
}

// scenarios lists what to run: the tables first, then the online series.
func (c *config) scenarios(tr *trace) []scenario {
	var out []scenario
	if tr != nil {
		if !tr.replayable() {
			return nil // an openb pod list without times: the fill experiment only
		}
		for _, e := range c.envs {
			out = append(out, scenario{mode: tr.name, env: e, table: true})
		}
		return out
	}
	for _, m := range c.modes {
		for _, e := range c.envs {
			out = append(out, scenario{mode: m, env: e, gib: 400, table: true})
		}
	}
	if c.series && contains(c.modes, "online") {
		for _, e := range c.envs {
			for g := int64(50); g < 400; g += 50 {
				out = append(out, scenario{mode: "online", env: e, gib: g})
			}
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// compare runs the simulations, prints the tables to stdout and writes the files; a
// failed write to stdout is its error.
func compare(c config, stdout, stderr io.Writer) error {
	start := time.Now()
	out := output.NewWriter(stdout)
	stdout = out
	var tr *trace
	if c.traceKind != "" {
		var err error
		if tr, err = loadTrace(c.traceKind, c.tracePath); err != nil {
			return err
		}
	}
	cl, err := tr.cluster(c.size)
	if err != nil {
		return err
	}
	c.nodes = len(cl.Nodes)
	var planetlab []workload.Series
	if c.planetlab != "" {
		if planetlab, err = workload.LoadPlanetLabDir(c.planetlab); err != nil {
			return err
		}
	}
	// Workloads and backgrounds, one per (scenario, seed), built up front: the
	// simulations of the policies share them (read-only).
	type input struct {
		w  *workload.Workload
		bg sim.Background
	}
	inputs := map[string]input{}
	var runs []*run
	for _, sc := range c.scenarios(tr) {
		for r := 0; r < c.runs; r++ {
			seed := c.seed + uint64(r)
			w, err := buildWorkload(&c, sc, seed, tr, &cl)
			if err != nil {
				return err
			}
			var bg sim.Background
			if sc.env == "cloud" {
				if bg, err = background(seed, len(cl.Nodes), planetlab); err != nil {
					return err
				}
			}
			inputs[fmt.Sprint(sc.name(), seed)] = input{w: w, bg: bg}
			ps := c.lineup
			if !sc.table {
				ps = c.seriesOf
			}
			for _, p := range ps {
				runs = append(runs, &run{sc: sc, seed: seed, policy: p})
			}
		}
	}
	// The inputs are good: make the output folder now, before the simulations, so
	// that one that cannot be made fails at once and bad inputs leave none behind.
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	tasks := func(r *run) int { return inputs[fmt.Sprint(r.sc.name(), r.seed)].w.NumTasks() }
	simrun.Each(stderr, c.quiet, c.workers, runs, tasks, func(r *run, progress sim.Option) {
		in := inputs[fmt.Sprint(r.sc.name(), r.seed)]
		opts := []sim.Option{progress, sim.WithObserve(c.observe), sim.WithYield(c.yield), sim.WithPenalty(c.penalty)}
		if tr != nil && tr.kind == traceOpenB {
			opts = append(opts, sim.WithMode(sim.Push)) // a Kubernetes cluster
		}
		if c.queues && r.seed == c.seed {
			opts = append(opts, sim.WithQueueSamples())
		}
		if c.held {
			opts = append(opts, sim.WithHeldShares())
		}
		if in.bg != nil {
			opts = append(opts, sim.WithBackground(in.bg))
			if c.reserve {
				opts = append(opts, sim.WithReservedBackground())
			}
		}
		t0 := time.Now()
		r.res, r.err = sim.Run(in.w, &cl, r.policy, opts...)
		r.wall = time.Since(t0)
	})
	for _, r := range runs {
		if r.err != nil && !errors.Is(r.err, sim.ErrTimeLimit) {
			return fmt.Errorf("%s seed %d %s: %w", r.sc.name(), r.seed, r.policy.Name, r.err)
		}
	}
	if err := report(&c, runs, stdout); err != nil {
		return err
	}
	if tr != nil && tr.kind == traceOpenB {
		if !tr.replayable() {
			fmt.Fprintf(stdout, "%s has no pod times: no replay, the fragmentation experiment only.\n", tr.name)
		}
		if err := fill(&c, tr, &cl, stdout); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\n%d simulations in %v; outputs in %s\n", len(runs), time.Since(start).Round(100*time.Millisecond), c.out)
	return out.Err()
}

// buildWorkload generates the scenario's workload for a seed, or builds the trace's.
func buildWorkload(c *config, sc scenario, seed uint64, tr *trace, cl *workload.Cluster) (*workload.Workload, error) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	if tr != nil {
		w, err := tr.workload(r, c.scale, cl)
		if err != nil || c.compress == 1 {
			return w, err
		}
		if w, err = compressSubmits(w, c.compress); err != nil {
			return nil, cli.Usagef("-compress %v: %s: %v", c.compress, c.tracePath[0], err)
		}
		return w, nil
	}
	opts := []workload.Option{workload.WithScale(c.scale), workload.WithTotalInput(sc.gib * workload.GiB)}
	if sc.mode == "online" {
		opts = append(opts, workload.WithOnline(workload.DefaultMeanInterarrival))
	}
	w, err := workload.FGM(r, opts...)
	return &w, err
}

// compressSubmits returns a copy of w whose jobs arrive f times sooner: every Submit
// divided by f (rounded to the nanosecond), everything else as it was. Division by a
// positive factor keeps the jobs in submission order (ties may appear; they keep the
// slice order, as Workload requires). The tasks are shared with w, not copied. A
// factor below 1 that would stretch a time past the longest time.Duration (about 292
// years) is an error naming the job: the trace cannot be replayed so slowly.
func compressSubmits(w *workload.Workload, f float64) (*workload.Workload, error) {
	out := *w
	out.Jobs = slices.Clone(w.Jobs)
	for i := range out.Jobs {
		j := &out.Jobs[i]
		at := math.Round(float64(j.Submit) / f)
		switch {
		case f >= 1 && !(at < float64(j.Submit)):
			// No later than it was (float64 rounds a time near the longest up, to 2^63).
		case !(at < math.MaxInt64): // float64(math.MaxInt64) is 2^63, out of range
			return nil, fmt.Errorf("job %s, submitted at %v, would arrive after the longest time the simulator counts (%v)",
				j.ID, j.Submit, time.Duration(math.MaxInt64))
		default:
			j.Submit = time.Duration(at)
		}
	}
	return &out, nil
}

// background is the cloud environment's load for a seed: the generator's, or PlanetLab
// series (four VMs' worth per server, ~50% cpu on average) with 5–15% memory.
func background(seed uint64, nodes int, planetlab []workload.Series) (sim.Background, error) {
	r := rand.New(rand.NewPCG(seed, 0xc10d))
	if planetlab == nil {
		return sim.RandomLoad(r, nodes)
	}
	l := &sim.SeriesLoad{CPUScale: 4, Memory: make([]float64, nodes)}
	for i := range nodes {
		l.CPU = append(l.CPU, planetlab[r.IntN(len(planetlab))])
		l.Memory[i] = 0.05 + 0.1*r.Float64()
	}
	return l, nil
}

// tabwriterFor returns a table writer on w.
func tabwriterFor(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}
