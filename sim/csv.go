package sim

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/finegrain/finegrain/resource"
)

// The CSV writers below write plain data for plotting and further analysis: one header
// line, then one record per row, durations in seconds with millisecond precision,
// fractions with four decimals. Every row starts with the policy name, so the files of
// several runs can be concatenated (write the header once: pass header=false for the
// others). Output is deterministic. A nil Result, or one with more Dims than a
// resource.Vector holds (resource.MaxDims), is refused with an error wrapping
// ErrInvalidInput before anything is written.

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func frac(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }

// check refuses a Result the writers cannot write: nil, or with more Dims than its
// Vectors hold. which names it in the error ("result", "results[2]").
func (r *Result) check(which string) error {
	switch {
	case r == nil:
		return fieldErr(which, "nil", ErrInvalidInput)
	case len(r.Dims) > resource.MaxDims:
		return fieldErr(which+".Dims", fmt.Sprintf("%d dimensions, more than %d", len(r.Dims), resource.MaxDims), ErrInvalidInput)
	}
	return nil
}

func writeAll(w io.Writer, header []string, rows func(emit func([]string) error) error) error {
	cw := csv.NewWriter(w)
	if header != nil {
		if err := cw.Write(header); err != nil {
			return fmt.Errorf("sim: csv: %w", err)
		}
	}
	if err := rows(func(r []string) error { return cw.Write(r) }); err != nil {
		return fmt.Errorf("sim: csv: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("sim: csv: %w", err)
	}
	return nil
}

// WriteJobsCSV writes one row per job: policy, job, queue, app, tasks, submit,
// first_start, done, completion and response (seconds), finished; with a header line
// when header is true.
func (r *Result) WriteJobsCSV(w io.Writer, header bool) error {
	if err := r.check("result"); err != nil {
		return err
	}
	var h []string
	if header {
		h = []string{"policy", "job", "queue", "app", "tasks", "submit_s", "first_start_s", "done_s", "completion_s", "response_s", "finished"}
	}
	return writeAll(w, h, func(emit func([]string) error) error {
		for _, j := range r.Jobs {
			if err := emit([]string{r.Policy, j.ID, j.Queue, j.App, strconv.Itoa(j.Tasks), secs(j.Submit), secs(j.FirstStart),
				secs(j.Done), secs(j.Completion()), secs(j.Response()), strconv.FormatBool(j.Finished)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteTasksCSV writes one row per task (WithTaskRecords; nothing otherwise): policy,
// task, job, kind, node, submitted, start, finish, ideal, compressed (seconds), kills,
// locality.
func (r *Result) WriteTasksCSV(w io.Writer, header bool) error {
	if err := r.check("result"); err != nil {
		return err
	}
	var h []string
	if header {
		h = []string{"policy", "task", "job", "kind", "node", "submitted_s", "start_s", "finish_s", "ideal_s", "compressed_s", "kills", "locality"}
	}
	return writeAll(w, h, func(emit func([]string) error) error {
		for _, t := range r.Tasks {
			if err := emit([]string{r.Policy, t.ID, t.Job, t.Kind.String(), t.Node, secs(t.Submitted), secs(t.Start), secs(t.Finish),
				secs(t.Ideal), secs(t.Compressed), strconv.Itoa(t.Kills), localityName(&t)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteEvictionsCSV writes one row per eviction (Result.Evictions): policy, at (s),
// task, job, node, reason, for (the task the room was made for), lost (s).
func (r *Result) WriteEvictionsCSV(w io.Writer, header bool) error {
	if err := r.check("result"); err != nil {
		return err
	}
	var h []string
	if header {
		h = []string{"policy", "at_s", "task", "job", "node", "reason", "for", "lost_s"}
	}
	return writeAll(w, h, func(emit func([]string) error) error {
		for _, e := range r.Evictions {
			if err := emit([]string{r.Policy, secs(e.At), e.Task, e.Job, e.Node, e.Reason.String(), e.For, secs(e.Lost)}); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteSamplesCSV writes one row per sample: policy, time (s), used_<dim>,
// background_<dim>, allocated_<dim> for every dimension (fractions of capacity),
// running, pending, active_queues, jain, backlogged_queues, backlogged_jain.
func (r *Result) WriteSamplesCSV(w io.Writer, header bool) error {
	if err := r.check("result"); err != nil {
		return err
	}
	var h []string
	if header {
		h = []string{"policy", "t_s"}
		for _, p := range []string{"used_", "background_", "allocated_"} {
			for _, d := range r.Dims {
				h = append(h, p+d)
			}
		}
		h = append(h, "running", "pending", "active_queues", "jain", "backlogged_queues", "backlogged_jain")
	}
	return writeAll(w, h, func(emit func([]string) error) error {
		row := make([]string, 0, 6+3*len(r.Dims))
		for _, s := range r.Samples {
			row = append(row[:0], r.Policy, secs(s.At))
			for _, v := range []resource.Vector{s.Used, s.Background, s.Allocated} {
				for k := range r.Dims {
					row = append(row, frac(v[k]))
				}
			}
			row = append(row, strconv.Itoa(s.Running), strconv.Itoa(s.Pending), strconv.Itoa(s.ActiveQueues), frac(s.Jain),
				strconv.Itoa(s.Backlogged), frac(s.BackloggedJain))
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteQueueSamplesCSV writes one row per queue and sample (Result.QueueSamples,
// WithQueueSamples): policy, time (s), queue, active, pending, running, share,
// oldest_pending_s; with a header line when header is true. A Result without queue
// samples writes the header alone.
func (r *Result) WriteQueueSamplesCSV(w io.Writer, header bool) error {
	if err := r.check("result"); err != nil {
		return err
	}
	var h []string
	if header {
		h = []string{"policy", "t_s", "queue", "active", "pending", "running", "share", "oldest_pending_s"}
	}
	return writeAll(w, h, func(emit func([]string) error) error {
		for _, q := range r.QueueSamples {
			row := []string{r.Policy, secs(q.At), q.Queue, strconv.Itoa(q.Active), strconv.Itoa(q.Pending),
				strconv.Itoa(q.Running), frac(q.Share), secs(q.OldestPending)}
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// SummaryHeader is the header of WriteSummaryCSV's rows, for dims named dims.
func SummaryHeader(dims []string) []string {
	h := []string{"policy", "workload", "cluster", "mode", "cloud", "jobs", "jobs_finished", "tasks", "makespan_s",
		"jct_mean_s", "jct_p50_s", "jct_p95_s", "jct_p99_s", "response_mean_s", "response_p95_s",
		"small_tasks", "small_mean_s", "large_tasks", "large_mean_s", "small_run_mean_s", "large_run_mean_s", "jain", "jain_samples",
		"backlogged_jain", "backlogged_jain_samples"}
	for _, p := range []string{"used_", "background_", "allocated_"} {
		for _, d := range dims {
			h = append(h, p+d)
		}
	}
	h = append(h, "placements", "placed_predicted", "placed_compressed", "oom_kills", "node_kills",
		"node_local", "rack_local", "off_switch", "no_input", "compressed_task_s", "heartbeats", "place_calls",
		"reports", "mode_changes", "recycles", "obs_rejected", "events",
		"predicted_runs", "pred_mae_cpu", "pred_mae_memory", "pred_under_cpu", "pred_under_memory", "redivisions")
	for _, d := range dims {
		h = append(h, "colocated_shortfall_"+d)
	}
	return append(h, "colocated_squeezed", "colocated_slowdown")
}

// WriteSummaryCSV writes one row per result with the columns of SummaryHeader (the
// header first when header is true, using the first result's dimensions).
func WriteSummaryCSV(w io.Writer, header bool, results ...*Result) error {
	for i, r := range results {
		if err := r.check(fmt.Sprintf("results[%d]", i)); err != nil {
			return err
		}
	}
	var h []string
	if header && len(results) > 0 {
		h = SummaryHeader(results[0].Dims)
	}
	return writeAll(w, h, func(emit func([]string) error) error {
		for _, r := range results {
			s := &r.Summary
			row := []string{r.Policy, r.Workload, r.Cluster, r.Mode.String(), strconv.FormatBool(r.Cloud),
				strconv.Itoa(s.Jobs), strconv.Itoa(s.JobsFinished), strconv.Itoa(s.Tasks), secs(s.Makespan),
				secs(s.JobCompletion.Mean), secs(s.JobCompletion.P50), secs(s.JobCompletion.P95), secs(s.JobCompletion.P99),
				secs(s.Response.Mean), secs(s.Response.P95),
				strconv.Itoa(s.SmallTasks.N), secs(s.SmallTasks.Mean), strconv.Itoa(s.LargeTasks.N), secs(s.LargeTasks.Mean),
				secs(s.SmallRuns.Mean), secs(s.LargeRuns.Mean),
				frac(s.Jain), strconv.Itoa(s.JainSamples), frac(s.BackloggedJain), strconv.Itoa(s.BackloggedJainSamples)}
			for _, v := range []resource.Vector{s.Used, s.Background, s.Allocated} {
				for k := range r.Dims {
					row = append(row, frac(v[k]))
				}
			}
			row = append(row, strconv.Itoa(s.Placements), strconv.Itoa(s.PlacedPredicted), strconv.Itoa(s.PlacedCompressed),
				strconv.Itoa(s.OOMKills), strconv.Itoa(s.NodeKills),
				strconv.Itoa(s.Locality[0]), strconv.Itoa(s.Locality[1]), strconv.Itoa(s.Locality[2]), strconv.Itoa(s.NoInput),
				secs(s.Compressed), strconv.Itoa(s.Heartbeats), strconv.Itoa(s.PlaceCalls), strconv.Itoa(s.Reports),
				strconv.Itoa(s.ModeChanges), strconv.Itoa(s.Recycles), strconv.Itoa(s.ObsRejected), strconv.Itoa(s.Events),
				strconv.Itoa(s.Prediction.Runs), frac(s.Prediction.MAE[0]), frac(s.Prediction.MAE[1]),
				frac(s.Prediction.Under[0]), frac(s.Prediction.Under[1]), strconv.Itoa(s.Redivisions))
			for k := range r.Dims {
				row = append(row, frac(s.Colocated.Shortfall[k]))
			}
			row = append(row, frac(s.Colocated.Squeezed), frac(s.Colocated.Slowdown))
			if err := emit(row); err != nil {
				return err
			}
		}
		return nil
	})
}

// localityName is the locality column of task result t: its level's name, or "no-input".
func localityName(t *TaskResult) string {
	if t.NoInput {
		return "no-input"
	}
	return t.Locality.String()
}
