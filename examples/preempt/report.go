package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/finegrain/finegrain/examples/internal/output"
)

// classRow is one job class under one configuration, over every seed.
type classRow struct {
	conf, class string
	queue       string
	priority    int
	jobs        float64 // per run
	unfinished  int     // over every run
	mean, p95   time.Duration
	evicted     float64       // runs of the class's tasks evicted, per run
	lost        time.Duration // their run time, per run
}

// confRow is one configuration over every seed, per run.
type confRow struct {
	conf                         string
	makespan                     time.Duration
	preempted, reclaimed         float64
	lost                         time.Duration
	gathers, partial, unfinished int // over every run
}

// aggregate condenses the results of runs seeds into one row per configuration and
// class (completion times pooled over the seeds, counts per run) and one row per
// configuration.
func aggregate(results []*result, runs int) ([]classRow, []confRow) {
	var rows []classRow
	var sums []confRow
	n := float64(runs)
	for i, conf := range configurations {
		s := confRow{conf: conf.name}
		var makespan time.Duration
		for _, r := range results {
			if r.conf != i {
				continue
			}
			sm := r.res.Summary
			makespan += sm.Makespan
			s.preempted += float64(sm.Preemptions) / n
			s.reclaimed += float64(sm.Reclaims) / n
			s.lost += sm.PreemptedWork
			s.gathers += sm.GangGathers
			s.partial += sm.PartialGangs
			s.unfinished += sm.Jobs - sm.JobsFinished
		}
		s.makespan = makespan / time.Duration(runs)
		s.lost /= time.Duration(runs)
		sums = append(sums, s)
		for _, cl := range classes {
			row := classRow{conf: conf.name, class: cl.name, queue: cl.queue, priority: cl.priority}
			var jct []time.Duration
			for _, r := range results {
				if r.conf != i {
					continue
				}
				for _, j := range r.res.Jobs {
					if j.Queue != cl.queue {
						continue
					}
					row.jobs += 1 / n
					row.evicted += float64(j.Evictions) / n
					row.lost += j.Lost
					if j.Finished {
						jct = append(jct, j.Completion())
					} else {
						row.unfinished++
					}
				}
			}
			row.lost /= time.Duration(runs)
			row.mean, row.p95 = meanP95(jct)
			rows = append(rows, row)
		}
	}
	return rows, sums
}

// meanP95 is the mean and the nearest-rank 95th percentile of xs (sorted in place).
func meanP95(xs []time.Duration) (time.Duration, time.Duration) {
	if len(xs) == 0 {
		return 0, 0
	}
	slices.Sort(xs)
	var total time.Duration
	for _, x := range xs {
		total += x
	}
	i := (95*len(xs)+99)/100 - 1
	return total / time.Duration(len(xs)), xs[max(0, i)]
}

// printTables prints the per-class table and the per-configuration one; it returns
// the error of a write that failed.
func printTables(w io.Writer, rows []classRow, sums []confRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "configuration\tclass\tqueue\tpriority\tjobs\tJCT mean\tJCT p95\tevicted runs\tlost work\t")
	for i, r := range rows {
		if i > 0 && r.conf != rows[i-1].conf {
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t")
		}
		unf := ""
		if r.unfinished > 0 {
			unf = fmt.Sprintf(" (%d unfinished)", r.unfinished)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.0f%s\t%s\t%s\t%.1f\t%s\t\n", r.conf, r.class, r.queue, r.priority, r.jobs, unf,
			output.Duration(r.mean), output.Duration(r.p95), r.evicted, output.Duration(r.lost))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "configuration\tmakespan\tpreempted\treclaimed\tlost work\tgangs gathered\tpartial gang runs\t")
	for _, s := range sums {
		unf := ""
		if s.unfinished > 0 {
			unf = fmt.Sprintf(" (%d unfinished)", s.unfinished)
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%.1f\t%.1f\t%s\t%d\t%d\t\n", s.conf, output.Duration(s.makespan), unf, s.preempted, s.reclaimed, output.Duration(s.lost), s.gathers, s.partial)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nper run (mean of the seeds), but JCT pooled over them; lost work: the run time evicted runs had done;")
	_, err := fmt.Fprintln(w, "gangs gathered and partial gang runs: total over the seeds (a partial run is a gang started short of MinMember)")
	return err
}

// writeTable writes both tables as CSV, seconds with millisecond precision.
func writeTable(path string, rows []classRow, sums []confRow) error {
	secs := func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
	f2 := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	out := [][]string{{"configuration", "class", "queue", "priority", "jobs_per_run", "unfinished", "jct_mean_s", "jct_p95_s", "evicted_per_run", "lost_per_run_s"}}
	for _, r := range rows {
		out = append(out, []string{r.conf, r.class, r.queue, strconv.Itoa(r.priority), f2(r.jobs), strconv.Itoa(r.unfinished),
			secs(r.mean), secs(r.p95), f2(r.evicted), secs(r.lost)})
	}
	out = append(out, nil, []string{"configuration", "makespan_s", "preempted_per_run", "reclaimed_per_run", "lost_per_run_s", "gang_gathers", "partial_gang_runs", "unfinished"})
	for _, s := range sums {
		out = append(out, []string{s.conf, secs(s.makespan), f2(s.preempted), f2(s.reclaimed), secs(s.lost), strconv.Itoa(s.gathers),
			strconv.Itoa(s.partial), strconv.Itoa(s.unfinished)})
	}
	return output.WriteCSV(path, out)
}
