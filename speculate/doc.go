// Package speculate decides what to do about slow work: which task to back up and
// where (LATE and the pre-release resource list), where a job's next task runs best
// (pre-release list fair placement, a placement policy a scheduler can use instead of
// delay scheduling), and how to give a latency-sensitive straggler more resources at
// the least cost to batch work (scale-up with reclaim and preemption).
//
// What it implements, by section of docs/methods.md, the project's method reference
// (equation, definition and algorithm numbers are the sources', kept there):
//
//	§8 eq. 2.1–2.4      LATE: Hadoop's speculator with its defaults (speculativeCap 0.1,
//	                    slowTaskThreshold 1.0, slowNodeThreshold 1.0, 60 s minimum
//	                    runtime), every one an Option; the slow-node Reading of eq. 2.1
//	§9 eq. 3.5, 3.6     BackupFinish: a backup's finish time on a free or a busy slot
//	§9 Alg. 3.1         PRRL: the slow-task list, the pre-release resource list and the
//	                    O(n) selection, unstarted tasks first; Lists and SelectBackup
//	                    expose the lists and the selection step
//	§10 Alg. 4.1, 4.2   FairPlacer: per-job pre-release lists (PreReleaseList) and the
//	                    three-level fair loop with pre-assignment (Place), over FairState,
//	                    an input type any scheduler can fill; the min-share Reading
//	§11 steps 1–10      Planner: in-place expansion or move, reclaim then preemption only
//	                    as far as needed, recovery; the plan is data (Plan, Step) and
//	                    Planner.Apply checks it; ScaleUp sizes an expansion
//
// The progress model — progress (eq. 3.1), rate (eq. 3.2), time left (eq. 3.4), the
// slow-task test (eq. 3.3), per-node rates — and the straggler and redundancy detectors
// of §11 live in package predict; this package reads them through
// predict.RuntimeEstimator (a predict.ProgressTracker per job) and takes the detectors'
// findings as input.
//
// Speculation, on a free slot asking a job for work:
//
//	tracker, _ := predict.NewProgressTracker() // fed by heartbeats: Start, Update, Finish
//	prrl, _ := speculate.NewPRRL()             // or speculate.NewLATE()
//	d, err := prrl.Speculate(speculate.Job{Tasks: tracker}, speculate.Request{Node: "n7", Now: now})
//	if err == nil && d.Action == speculate.Backup {
//		// start a backup attempt of d.Task on n7
//	}
//
// Placement, on a free slot (FairState built from the scheduler's queues, jobs and
// running tasks):
//
//	placer, _ := speculate.NewFairPlacer()
//	p, err := placer.Place(state, "n7")
//	if err == nil && p.Assigned {
//		// run p.Task of p.Job on n7
//	}
//
// Scale-up, each monitoring period:
//
//	planner, _ := speculate.NewPlanner(resource.Standard())
//	plan, err := planner.Plan(speculate.PlanInput{Nodes: nodes, Stragglers: slow, Batch: batch})
//	for _, step := range plan.Steps {
//		// resize or move the container step.Task on step.Node by step.Amount
//	}
//
// The Readings adopted where the sources are silent or ambiguous are stated where they
// apply: the direction of eq. 2.1 (LATE), the rate of a node with no history and the
// cap in Alg. 3.1 (PRRL), the min share with pre-assignments (FairPlacer), the
// comparison of tuples, how much to take and from whom (Planner) and how much to add
// (ScaleUp).
//
// LATE, PRRL, FairPlacer and Planner are immutable and safe for concurrent use; they
// keep no state between calls. Bad input is rejected with a *FieldError (or a resource
// error) naming the field and value and wrapping a sentinel for errors.Is, and decides
// nothing.
package speculate
