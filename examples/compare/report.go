package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// row is one policy in one scenario, averaged over the seeds.
type row struct {
	policy                                     string
	makespan, jct, p95, resp                   float64 // seconds
	small, large                               float64 // mean task turnaround, seconds
	smallRun, largeRun                         float64 // mean task run time, seconds
	jain, blJain, cpu, mem, allocCPU, allocMem float64 // blJain: sim.Summary.BackloggedJain
	kills, compressed, predicted               float64
	predRuns                                   float64    // finished runs placed on a predicted profile
	mae, under                                 [2]float64 // prediction error: cpu, memory (sim.PredictionError)
	unfinished                                 int
	cloud                                      bool    // a background shared the nodes
	coloCPU, coloSqueezed, coloSlow            float64 // sim.ColocatedLoss: CPU shortfall, squeezed node-time, slowdown
	gainMakespan, gainJCT, gainP95             float64 // FGM's gain over this policy, %
	pairedJain                                 float64 // FGM's backlogged Jain less this policy's at the same instants (pairedJain)
	pairedN                                    int     // how many instants pairedJain covers
	heldJain, heldBLJain                       float64 // -held: sim.Summary.HeldJain, HeldBackloggedJain
}

// reference is the policy the others are measured against: FGM.
const reference = "FGM"

// aggregate averages the runs of one scenario per policy, in the order the policies
// first appear in runs, and computes FGM's gains over each other policy (none when
// FGM is not in the list).
func aggregate(runs []*run) []row {
	var rows []row
	var names []string
	for _, x := range runs {
		if !slices.Contains(names, x.policy.Name) {
			names = append(names, x.policy.Name)
		}
	}
	for _, name := range names {
		r := row{policy: name}
		n := 0.0
		for _, x := range runs {
			if x.policy.Name != name {
				continue
			}
			s := x.res.Summary
			n++
			r.makespan += s.Makespan.Seconds()
			r.jct += s.JobCompletion.Mean.Seconds()
			r.p95 += s.JobCompletion.P95.Seconds()
			r.resp += s.Response.Mean.Seconds()
			r.small += s.SmallTasks.Mean.Seconds()
			r.large += s.LargeTasks.Mean.Seconds()
			r.smallRun += s.SmallRuns.Mean.Seconds()
			r.largeRun += s.LargeRuns.Mean.Seconds()
			r.jain += s.Jain
			r.blJain += s.BackloggedJain
			r.heldJain += s.HeldJain
			r.heldBLJain += s.HeldBackloggedJain
			r.cpu += s.Used[workload.SlotCPU]
			r.mem += s.Used[workload.SlotMemory]
			r.allocCPU += s.Allocated[workload.SlotCPU]
			r.allocMem += s.Allocated[workload.SlotMemory]
			r.kills += float64(s.OOMKills)
			r.compressed += float64(s.PlacedCompressed)
			r.predicted += float64(s.PlacedPredicted)
			r.predRuns += float64(s.Prediction.Runs)
			for d := range r.mae {
				r.mae[d] += s.Prediction.MAE[d]
				r.under[d] += s.Prediction.Under[d]
			}
			r.unfinished += s.Jobs - s.JobsFinished
			r.cloud = x.res.Cloud
			r.coloCPU += s.Colocated.Shortfall[workload.SlotCPU]
			r.coloSqueezed += s.Colocated.Squeezed
			r.coloSlow += s.Colocated.Slowdown
		}
		if n > 0 {
			for _, v := range []*float64{&r.makespan, &r.jct, &r.p95, &r.resp, &r.small, &r.large, &r.smallRun, &r.largeRun, &r.jain, &r.blJain, &r.cpu,
				&r.mem, &r.allocCPU, &r.allocMem, &r.kills, &r.compressed, &r.predicted, &r.predRuns, &r.mae[0], &r.mae[1], &r.under[0], &r.under[1],
				&r.coloCPU, &r.coloSqueezed, &r.coloSlow, &r.heldJain, &r.heldBLJain} {
				*v /= n
			}
		}
		rows = append(rows, r)
	}
	k := slices.IndexFunc(rows, func(r row) bool { return r.policy == reference })
	if k < 0 {
		return rows
	}
	fgm := rows[k]
	for i := range rows {
		if i == k {
			continue
		}
		rows[i].gainMakespan = gain(rows[i].makespan, fgm.makespan)
		rows[i].gainJCT = gain(rows[i].jct, fgm.jct)
		rows[i].gainP95 = gain(rows[i].p95, fgm.p95)
		rows[i].pairedJain, rows[i].pairedN = pairedJain(runs, rows[i].policy)
	}
	return rows
}

// pairedJain is FGM's backlogged Jain's index less policy's, each averaged over the
// same instants: those at which, in the runs of one seed, both had at least two
// backlogged queues (sim.Sample.BackloggedJain), over every seed; n counts the
// instants (0: none, and diff 0). sim.Summary.BackloggedJain averages a run over its
// own backlogged instants, so a policy that drains its backlog sooner is averaged over
// fewer of them, mostly the moments after a burst arrives while another queue holds
// the cluster, and the two means are not like for like; the paired difference compares
// the two schedulers at the same moments of the same workload.
func pairedJain(runs []*run, policy string) (diff float64, n int) {
	bySeed := map[uint64]map[string]*sim.Result{}
	for _, x := range runs {
		if x.policy.Name != reference && x.policy.Name != policy {
			continue
		}
		if bySeed[x.seed] == nil {
			bySeed[x.seed] = map[string]*sim.Result{}
		}
		bySeed[x.seed][x.policy.Name] = x.res
	}
	backlogged := func(r *sim.Result) map[time.Duration]float64 {
		m := map[time.Duration]float64{}
		for _, sm := range r.Samples {
			if sm.Backlogged >= 2 {
				m[sm.At] = sm.BackloggedJain
			}
		}
		return m
	}
	// Seeds and instants in order: a sum of floats depends on its order, and the output
	// must not depend on a map's.
	sum := 0.0
	for _, seed := range slices.Sorted(maps.Keys(bySeed)) {
		f, o := bySeed[seed][reference], bySeed[seed][policy]
		if f == nil || o == nil {
			continue
		}
		fj, oj := backlogged(f), backlogged(o)
		for _, at := range slices.Sorted(maps.Keys(oj)) {
			if jf, ok := fj[at]; ok {
				sum += jf - oj[at]
				n++
			}
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// gain is how much lower (better) fgm is than base, in percent of base.
func gain(base, fgm float64) float64 {
	if base == 0 {
		return 0
	}
	return (base - fgm) / base * 100
}

func report(c *config, runs []*run, out io.Writer) error {
	byScenario := map[string][]*run{}
	var order []scenario
	for _, r := range runs {
		k := r.sc.name()
		if _, ok := byScenario[k]; !ok {
			order = append(order, r.sc)
		}
		byScenario[k] = append(byScenario[k], r)
	}
	header := []string{"scenario", "policy", "makespan_s", "jct_mean_s", "jct_p95_s", "response_mean_s",
		"small_task_mean_s", "large_task_mean_s", "small_run_mean_s", "large_run_mean_s", "jain", "backlogged_jain", "cpu_used", "memory_used", "cpu_allocated", "memory_allocated", "oom_kills",
		"placed_compressed", "placed_predicted", "predicted_runs", "pred_mae_cpu", "pred_mae_memory", "pred_under_cpu", "pred_under_memory",
		"unfinished_jobs", "colocated_cpu_shortfall", "colocated_squeezed", "colocated_slowdown",
		"fgm_gain_makespan_pct", "fgm_gain_jct_pct", "fgm_gain_jct_p95_pct", "fgm_paired_backlogged_jain", "paired_instants"}
	if c.held {
		header = append(header, "held_backlogged_jain", "held_jain")
	}
	table := [][]string{header}
	for _, sc := range order {
		if !sc.table {
			continue
		}
		rs := byScenario[sc.name()]
		rows := aggregate(rs)
		first := rs[0]
		compressed := ""
		if c.compress != 1 {
			compressed = fmt.Sprintf(", submissions ÷%g", c.compress)
		}
		fmt.Fprintf(out, "\n== %s: %s%s, %d jobs, %d tasks, %d node(s), %d seed(s) ==\n", sc.name(), first.res.Workload,
			compressed, first.res.Summary.Jobs, first.res.Summary.Tasks, c.nodes, c.runs)
		tables := printTables
		if c.wide {
			tables = printTable
		}
		if err := tables(out, rows); err != nil {
			return err
		}
		if c.held {
			if err := printHeld(out, rows); err != nil {
				return err
			}
		}
		hasRef := slices.ContainsFunc(rows, func(r row) bool { return r.policy == reference })
		for _, r := range rows {
			gains := []string{"", "", "", "", ""} // no FGM in the lineup: no gains
			if hasRef {
				gains = []string{f3(r.gainMakespan), f3(r.gainJCT), f3(r.gainP95), "", ""}
			}
			if hasRef && r.policy != reference {
				gains[3], gains[4] = f4(r.pairedJain), strconv.Itoa(r.pairedN)
			}
			cells := append([]string{sc.name(), r.policy, f3(r.makespan), f3(r.jct), f3(r.p95), f3(r.resp), f3(r.small),
				f3(r.large), f3(r.smallRun), f3(r.largeRun), f4(r.jain), f4(r.blJain), f4(r.cpu), f4(r.mem), f4(r.allocCPU), f4(r.allocMem), f3(r.kills), f3(r.compressed), f3(r.predicted),
				f3(r.predRuns), f4(r.mae[0]), f4(r.mae[1]), f4(r.under[0]), f4(r.under[1]), strconv.Itoa(r.unfinished),
				f4(r.coloCPU), f4(r.coloSqueezed), f4(r.coloSlow)}, gains...)
			if c.held {
				cells = append(cells, f4(r.heldBLJain), f4(r.heldJain))
			}
			table = append(table, cells)
		}
		if err := scenarioFiles(c, sc, rs, rows); err != nil {
			return err
		}
	}
	if err := output.WriteCSV(filepath.Join(c.out, "table.csv"), table); err != nil {
		return err
	}
	if err := output.WriteFile(filepath.Join(c.out, "runs.csv"), func(w io.Writer) error { return writeRuns(w, runs) }); err != nil {
		return err
	}
	return series(c, order, byScenario, out)
}

func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
func f4(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

// rowCells are the formatted columns of a row that are more than a number: the makespan with
// its unfinished jobs, FGM's gains with the paired Jain ("—" for FGM itself, or with no
// FGM row), the prediction error and memory under-prediction ("—" with no run placed on
// a prediction) and the co-located applications' loss ("—" in a dedicated environment:
// nobody else on the nodes). Each group is tab-separated.
type rowCells struct{ makespan, gains, pred, colo string }

func formatCells(r row, hasRef bool) rowCells {
	c := rowCells{makespan: dur(r.makespan), gains: "—\t—\t—\t—", pred: "—\t—", colo: "—\t—\t—"}
	if r.unfinished > 0 {
		c.makespan += fmt.Sprintf(" (%d unfinished)", r.unfinished)
	}
	if r.policy != reference && hasRef {
		pj := "—" // no instant at which both had two backlogged queues
		if r.pairedN > 0 {
			pj = fmt.Sprintf("%+.3f", r.pairedJain)
		}
		c.gains = fmt.Sprintf("%+.1f%%\t%+.1f%%\t%+.1f%%\t%s", r.gainMakespan, r.gainJCT, r.gainP95, pj)
	}
	if r.predRuns > 0 {
		c.pred = fmt.Sprintf("%.1f%%\t%.1f%%", 50*(r.mae[0]+r.mae[1]), 100*r.under[1])
	}
	if r.cloud {
		c.colo = fmt.Sprintf("%.1f%%\t%.1f%%\t%.1f%%", 100*r.coloCPU, 100*r.coloSqueezed, 100*r.coloSlow)
	}
	return c
}

// printTable prints a scenario's rows as one table of every column, about 240
// characters wide (-wide).
func printTable(out io.Writer, rows []row) error {
	tw := tabwriterFor(out)
	fmt.Fprintln(tw, "policy\tmakespan\tJCT mean\tJCT p95\tresponse\tJain\tJain all\tcpu used\tmem used\tcpu alloc\tmem alloc\tkills\tcompressed\tpred err\tmem under\tcolo lost\tcolo sq.\tcolo slow\tFGM gain: makespan\tJCT mean\tJCT p95\tJain paired\t")
	hasRef := slices.ContainsFunc(rows, func(r row) bool { return r.policy == reference })
	for _, r := range rows {
		c := formatCells(r, hasRef)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.0f\t%.0f\t%s\t%s\t%s\t\n", r.policy, c.makespan, dur(r.jct),
			dur(r.p95), dur(r.resp), r.blJain, r.jain, 100*r.cpu, 100*r.mem, 100*r.allocCPU, 100*r.allocMem, r.kills, r.compressed, c.pred, c.colo, c.gains)
	}
	return tw.Flush()
}

// printTables prints a scenario's rows as printTable does, in tables that fit 120
// columns, each led by the policy: the outcomes (makespan, job completion, response,
// Jain's index over backlogged queues) with FGM's gains and paired Jain; Jain's index
// over every queue, utilisation, kills and prediction; and, when other applications
// shared the nodes, what they lost (in the dedicated environment these columns are
// "—" throughout, and the table is left out).
func printTables(out io.Writer, rows []row) error {
	hasRef := slices.ContainsFunc(rows, func(r row) bool { return r.policy == reference })
	tw := tabwriterFor(out)
	fmt.Fprintln(tw, "policy\tmakespan\tJCT mean\tJCT p95\tresponse\tJain\tFGM gain: makespan\tJCT mean\tJCT p95\tJain paired\t")
	for _, r := range rows {
		c := formatCells(r, hasRef)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t\n", r.policy, c.makespan, dur(r.jct), dur(r.p95), dur(r.resp), r.blJain, c.gains)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriterFor(out)
	fmt.Fprintln(tw, "policy\tJain all\tcpu used\tmem used\tcpu alloc\tmem alloc\tkills\tcompressed\tpred err\tmem under\t")
	cloud := false
	for _, r := range rows {
		c := formatCells(r, hasRef)
		fmt.Fprintf(tw, "%s\t%.3f\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%.0f\t%.0f\t%s\t\n", r.policy, r.jain,
			100*r.cpu, 100*r.mem, 100*r.allocCPU, 100*r.allocMem, r.kills, r.compressed, c.pred)
		cloud = cloud || r.cloud
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !cloud {
		return nil
	}
	fmt.Fprintln(out)
	tw = tabwriterFor(out)
	fmt.Fprintln(tw, "policy\tcolo lost\tcolo sq.\tcolo slow\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t\n", r.policy, formatCells(r, hasRef).colo)
	}
	return tw.Flush()
}

// printHeld prints a scenario's Jain's indices by both readings of what a queue holds
// (-held): each placed task at the peak of the profile held for it ("Jain", "Jain
// all", as the other tables), and at what is held for it at the sample instant — a
// stage profile's stage in force then ("Jain held", "Jain all held"). A request is
// held whole until its task finishes, so a request-based policy's two readings agree.
func printHeld(out io.Writer, rows []row) error {
	fmt.Fprintln(out)
	tw := tabwriterFor(out)
	fmt.Fprintln(tw, "policy\tJain\tJain held\tJain all\tJain all held\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t\n", r.policy, r.blJain, r.heldBLJain, r.jain, r.heldJain)
	}
	return tw.Flush()
}

// dur formats seconds compactly (see output.Duration).
func dur(s float64) string { return output.Duration(time.Duration(s * float64(time.Second))) }

// writeRuns writes every simulation's summary, prefixed by scenario, seed and wall
// time.
func writeRuns(w io.Writer, runs []*run) error {
	if len(runs) == 0 {
		return nil
	}
	cw := csv.NewWriter(w)
	_ = cw.Write(append([]string{"scenario", "seed", "wall_s"}, sim.SummaryHeader(runs[0].res.Dims)...))
	for _, r := range runs {
		var b bytes.Buffer
		if err := sim.WriteSummaryCSV(&b, false, r.res); err != nil {
			return err
		}
		rec, err := csv.NewReader(&b).Read()
		if err != nil {
			return err
		}
		_ = cw.Write(append([]string{r.sc.name(), strconv.FormatUint(r.seed, 10), f3(r.wall.Seconds())}, rec...))
	}
	cw.Flush()
	return cw.Error()
}

// scenarioFiles writes the first seed's jobs and samples of every policy (with -queues
// its queue samples too), and the scenario's charts.
func scenarioFiles(c *config, sc scenario, rs []*run, rows []row) error {
	var first []*sim.Result
	for _, r := range rs {
		if r.seed == c.seed {
			first = append(first, r.res)
		}
	}
	name := sc.name()
	if err := output.WriteFile(filepath.Join(c.out, "jobs-"+name+".csv"), func(w io.Writer) error {
		for i, r := range first {
			if err := r.WriteJobsCSV(w, i == 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := output.WriteFile(filepath.Join(c.out, "samples-"+name+".csv"), func(w io.Writer) error {
		for i, r := range first {
			if err := r.WriteSamplesCSV(w, i == 0); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if c.queues {
		if err := output.WriteFile(filepath.Join(c.out, "queues-"+name+".csv"), func(w io.Writer) error {
			for i, r := range first {
				if err := r.WriteQueueSamplesCSV(w, i == 0); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	// The CDF pools every seed's jobs, as the tables average every seed; a time series
	// cannot be pooled, so the utilisation charts show the first seed.
	var names []string
	byPolicy := map[string][]*sim.Result{}
	for _, r := range rs {
		if _, ok := byPolicy[r.policy.Name]; !ok {
			names = append(names, r.policy.Name)
		}
		byPolicy[r.policy.Name] = append(byPolicy[r.policy.Name], r.res)
	}
	pooled := fmt.Sprintf("%s, seed %d", name, c.seed)
	if c.runs > 1 {
		pooled = fmt.Sprintf("%s, jobs of %d seeds pooled", name, c.runs)
	}
	if err := cdfChart(filepath.Join(c.out, "jct-cdf-"+name+".svg"), "Job completion CDF: "+pooled, names, byPolicy); err != nil {
		return err
	}
	side := name + ": the policies side by side, seed " + fmt.Sprint(c.seed)
	if c.runs > 1 {
		side = fmt.Sprintf("%s: the policies side by side, %d seeds", name, c.runs)
	}
	ref := reference
	if !slices.Contains(names, ref) {
		ref = names[len(names)-1]
	}
	if err := compareChart(filepath.Join(c.out, "compare-"+name+".svg"), side, names, byPolicy, rows, ref); err != nil {
		return err
	}
	if len(first) > 0 && first[0].Cloud {
		t := fmt.Sprintf("%s, %s, %d seed(s): job completion against co-located loss", name, c.yield, c.runs)
		if err := lossChart(filepath.Join(c.out, "colocated-"+name+".svg"), t, rows); err != nil {
			return err
		}
	}
	title := fmt.Sprintf("%s, seed %d", name, c.seed)
	if c.runs > 1 {
		title = fmt.Sprintf("%s, seed %d of the %d in the tables", name, c.seed, c.runs)
	}
	for _, d := range []struct {
		slot int
		name string
	}{{workload.SlotCPU, "cpu"}, {workload.SlotMemory, "memory"}} {
		path := filepath.Join(c.out, "util-"+d.name+"-"+name+".svg")
		if err := utilChart(path, fmt.Sprintf("%s used and allocated: %s", d.name, title), d.slot, first); err != nil {
			return err
		}
	}
	return nil
}

// series reports the online series: FGM's gain over each baseline against the volume.
func series(c *config, order []scenario, byScenario map[string][]*run, out io.Writer) error {
	type point struct {
		gib  int64
		rows []row
	}
	perEnv := map[string][]point{}
	var envs []string
	for _, sc := range order {
		if sc.mode != "online" {
			continue
		}
		if _, ok := perEnv[sc.env]; !ok {
			envs = append(envs, sc.env)
		}
		// The table's volume ran every policy of the tables; the series shows its own.
		rows := slices.DeleteFunc(aggregate(byScenario[sc.name()]), func(r row) bool {
			return !slices.ContainsFunc(c.seriesOf, func(p sim.Policy) bool { return p.Name == r.policy })
		})
		perEnv[sc.env] = append(perEnv[sc.env], point{gib: sc.gib, rows: rows})
	}
	if len(envs) == 0 || !c.series {
		return nil
	}
	if !slices.ContainsFunc(c.seriesOf, func(p sim.Policy) bool { return p.Name == reference }) {
		fmt.Fprintf(out, "\n(the online series shows FGM's gains: FGM is not among -policies)\n")
		return nil
	}
	csvRows := [][]string{{"env", "gib", "policy", "makespan_s", "jct_mean_s", "fgm_gain_makespan_pct", "fgm_gain_jct_pct"}}
	for _, env := range envs {
		pts := perEnv[env]
		slices.SortFunc(pts, func(a, b point) int { return int(a.gib - b.gib) })
		fmt.Fprintf(out, "\n== online series, %s: FGM's gain in mean job completion (makespan) over each baseline ==\n", env)
		// The table's cells, the volume first on every line.
		head := []string{"GiB"}
		var order []string
		for _, r := range pts[0].rows {
			if r.policy != reference {
				head = append(head, r.policy)
				order = append(order, r.policy)
			}
		}
		table := [][]string{head}
		lines := map[string][][2]float64{}
		for _, pt := range pts {
			line := []string{strconv.FormatInt(int64(math.Round(float64(pt.gib)*c.scale)), 10)}
			for _, r := range pt.rows {
				csvRows = append(csvRows, []string{env, strconv.FormatInt(pt.gib, 10), r.policy, f3(r.makespan), f3(r.jct), f3(r.gainMakespan), f3(r.gainJCT)})
				if r.policy == reference {
					continue
				}
				line = append(line, fmt.Sprintf("%+.1f%% (%+.1f%%)", r.gainJCT, r.gainMakespan))
				lines[r.policy] = append(lines[r.policy], [2]float64{float64(pt.gib) * c.scale, r.gainJCT})
			}
			table = append(table, line)
		}
		perTable := len(order)
		if !c.wide {
			perTable = seriesColumns
		}
		if err := printColumns(out, table, perTable); err != nil {
			return err
		}
		if err := gainChart(filepath.Join(c.out, "series-gain-"+env+".svg"),
			fmt.Sprintf("FGM's gain in mean job completion, online, %s, mean of %s", env, plural(c.runs, "seed")), order, lines); err != nil {
			return err
		}
	}
	return output.WriteCSV(filepath.Join(c.out, "series.csv"), csvRows)
}

// seriesColumns is how many policies a table of the online series shows side by side
// (but with -wide): six keep it within 120 columns; more make another table.
const seriesColumns = 6

// printColumns prints table, whose cells right of the first are columns of data, in
// tables of at most n of those columns (all when n < 1), each led by the first column,
// with a blank line between tables.
func printColumns(out io.Writer, table [][]string, n int) error {
	cols := 0
	for _, line := range table {
		cols = max(cols, len(line)-1)
	}
	if n < 1 {
		n = max(cols, 1)
	}
	for from := 0; from == 0 || from < cols; from += n {
		if from > 0 {
			fmt.Fprintln(out)
		}
		tw := tabwriterFor(out)
		for _, line := range table {
			fmt.Fprintf(tw, "%s\t", line[0])
			for _, cell := range line[1+min(from, len(line)-1) : 1+min(from+n, len(line)-1)] {
				fmt.Fprintf(tw, "%s\t", cell)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// plural is "1 seed", "3 seeds".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
