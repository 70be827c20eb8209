// Package sim is a deterministic discrete-event cluster simulator that replays a
// workload (package sim/workload) on a cluster through a scheduler's public API — the
// reference finegrain.Scheduler, or anything that satisfies Scheduler — and measures
// what the FGM paper measures (docs/methods.md §7): job completion, workload completion
// (makespan), scheduling response time, Jain's fairness index, utilisation, plus the
// execution model's own counters (kills, compression, locality). Section numbers (§N)
// refer to docs/methods.md, the project's method reference, which also keeps the source
// papers' equation and algorithm numbers cited here.
//
// # Driving the scheduler
//
// The simulator talks to the scheduler only through its public calls, in one of two
// modes:
//
//   - Pull (the default, YARN's way and FGM's Alg. 1): every node heartbeats every H
//     (WithHeartbeat, 1 s; nodes are staggered across the period) and once more, out of
//     band, when a task on it finishes; Scheduler.Heartbeat returns the tasks to start.
//   - Push (Kubernetes' way): Scheduler.Place is called for every task when it becomes
//     pending; tasks that find no node are retried when a task ends and every H, in
//     order of their job's priority (higher first; Kubernetes' queue sort), then of
//     submission.
//
// Jobs arrive at their Submit time (SubmitJob with their priority and gang size, then
// Submit of their map tasks); a job's reduce tasks are submitted when its last map
// task finishes; a job completes with its last task. When several tasks end at the
// same instant on a node, all are reported before any reduce task they release is
// placed. Each task is told to the scheduler with its similarity key
// (workload.Job.Key, docs/methods.md §2 Def. 3), the replica nodes of its input block,
// its declared request restricted to Policy.RequestDims (cpu and memory by default,
// what YARN reserves), its GPU demand, and its class and SLO
// (workload.Task.LatencySensitive and SLO as finegrain.Task.Class and SLO). The
// scheduler never sees the task's true profile.
//
// # Preemption and gangs
//
// A scheduler that preempts (finegrain.WithPreemption) evicts running tasks to make
// room: the evictions come with the preemptor's assignment, with the heartbeat's
// Decision.Evicted, or with the *finegrain.PlacementError of a push placement. The
// scheduler has already made them pending; the simulator stops each victim's run on
// its node at once (freeing its true usage, as an OOM kill would, but without
// Scheduler.Failed: the scheduler knows), charges the run time it had done as lost
// (TaskResult.Lost, Summary.PreemptedWork, Result.Evictions) and treats it as pending:
// a later heartbeat or push retry places it anew. Every eviction is carried out exactly
// once, and victims stop before anything of the same decision starts in their room;
// an eviction of a task that is not placed, or listed twice, is a scheduler error.
//
// A gang job (workload.Job.MinMember) starts whole: its members are gathered from its
// map tasks (workload.Job.Validate refuses a MinMember above them, since reduce tasks
// only become runnable when every map has finished). In pull mode the scheduler keeps
// members reserved until the gang is complete and returns them all in one Decision,
// possibly for nodes other than the heartbeat's; in push mode Place fails with
// finegrain.PermitWaiting for a member kept waiting (not a failure: the task is
// reserved), and the scheduler's Permitted returns the other members after the Place
// that completed the gang. A member kept waiting comes back with the start of its
// reservation; it starts when it is allowed. A wait that times out is rolled back by
// the scheduler, silently: push mode asks the scheduler's State before it places such
// a task again. Summary.GangGathers counts gangs gathered and Summary.PartialGangs any
// decision that started a gang short of MinMember (0 under a correct scheduler).
//
// # Execution model
//
// Each placed task runs its TRUE profile (workload.Task.True), stage by stage, on its
// node — whatever the scheduler reserved for it:
//
//  1. Input. When the task's input block has no replica on the node, the block is moved
//     first: a transfer stage of bytes / bandwidth (rack-local or cross-rack,
//     workload.Cluster.TransferTime, docs/methods.md §10) that holds the first stage's
//     memory and uses net-io at the transfer rate. Its speed does not depend on the
//     node's.
//  2. Work. A stage's duration is its work in seconds on a normal node, alone; on a node
//     of speed s it progresses s seconds of work per second. A stage's demand is the most
//     the task uses in it; what it uses moves within the stage (WithVariation,
//     DefaultVariation): at every beat of its node (each heartbeat period) CPU and
//     bandwidth take a new level — 80% of the demand on average with autocorrelated
//     jitter and spikes to all of it — and memory grows from 70% of the stage's demand
//     when it starts to all of it when it ends. The draws are seeded by the task, so
//     every policy sees the same usage as far as it runs the task the same.
//  3. Sharing (a fluid model, recomputed at every event on the node: a stage starting or
//     ending, a task starting, finishing or being killed, the background changing, a
//     beat). On every compressible dimension k (cpu, disk-io, net-io) where the node's
//     total true usage D_k — what its running tasks use now plus the background load —
//     exceeds its capacity C_k, the dimension is shared out as WithYield says. Under
//     ColocatedFirst (the default) the background gets its usage B_k, up to C_k less
//     MinTaskShare of it, and the tasks share what is left: each gets
//     (C_k − B_k)/(D_k − B_k) of its usage, rc_k = 1 − that (eq. 1 over the rest).
//     Under Proportional everybody using k, background included, gets C_k/D_k of its
//     usage, rc_k = 1 − C_k/D_k (eq. 1). A task progresses at
//     s × (1 − rc_max)/(1 + p) where rc_max is the largest rc_k over the dimensions it
//     uses (eq. 4–5: T' = (1 + p) × T/(1 − rc); p is WithPenalty, default 0.05, and
//     applies only while the task is compressed). Between events every rate is constant,
//     so the next stage end is computed exactly (to the nanosecond).
//  4. Non-compressible overrun. When the node's true memory usage (tasks plus
//     background) exceeds its capacity, a task is killed, and again until the usage
//     fits: the most recently started of those using more memory than the scheduler
//     holds for them at their progress (YARN's container monitor and the kubelet go for
//     containers over their allocation), or the most recently started of all when none
//     is — but never the oldest while others run, so that no two tasks can take turns
//     killing each other. The kill is counted
//     (Summary.OOMKills) and reported with Scheduler.Failed: the task is pending again
//     and is placed anew later (the next periodic heartbeat or retry, so that a
//     persistent overrun does not loop at one instant). A task is never silently
//     dropped: every task finishes exactly once, after zero or more killed or evicted
//     runs.
//  5. Node failures (WithFailures): Scheduler.RemoveNode at the failure time, its
//     running tasks are lost (Summary.NodeKills) and pending again; the node may come
//     back empty after a while.
//  6. Evictions (preemption, above): the run stops where it is, the task is pending
//     again, and its next run starts from the beginning.
//
// What the model leaves out: memory bandwidth and caches, disk space, the node
// speed's effect on demand rates (a fast node runs the same demand for less time),
// contention beyond the eq. 5 penalty, and slots (workload.NodeSpec.Slots is not
// enforced: the reference scheduler has no slot dimension).
//
// # Feedback
//
// A policy with Feedback (FGM) learns like a real fine-grained cluster, from what node
// agents measure:
//
//   - Every WithAgentEvery (3 s, YARN's container-monitor interval; whole heartbeats)
//     each node's agent samples every task computing there: what it got on the
//     compressible dimensions since its last sample, as an average (cumulative
//     counters: cgroup CPU time, I/O bytes), the most it held on memory meanwhile (a
//     high-water mark reset at each reading, as cgroup v2's memory.peak gives), and the
//     largest compression it experienced meanwhile. A finished task reports its series —
//     from the start of its first stage (input moved before it starts is not sampled)
//     to its end, the last sample however short — with Scheduler.Finished
//     (predict.Series); the scheduler's estimator divides it into stages itself. No
//     stage boundary, no exact peak and no stage demand is handed over: a CPU spike is
//     averaged into its interval, and a change of stage is known only to within a
//     sample, as it would be by a real agent.
//   - A run placed on its request (no prediction for its key yet) is also reported while
//     it runs, at its 1st, 2nd, 4th, 8th, ... sample, with its series so far, to a
//     scheduler that takes such reports (Scheduler.ReportRunning): its estimator may
//     then predict the run's pending siblings before any of them finishes (under
//     Measured only; a refused report counts in Summary.ObsRejected).
//   - The node's usage windows are built at the same instants — averages on the
//     compressible dimensions, what is held at the instant on memory — with what the scheduler holds
//     reserved there (capacity − Scheduler.NodeFree: Predicted) and what is left (Idle).
//     Every WithReportEvery (10 s, in whole samples) the window goes to
//     Scheduler.ReportUsage (conformity, eq. 16 → the Alg. 3 adjuster).
//   - Every WithRedivideEvery (a minute) the scheduler's estimator is asked to divide its
//     keys' stages again (predict.Redivider, reached through the scheduler's Estimator
//     method): the information module's periodic re-division, off the scheduling path.
//
// WithObserve(Oracle) is an ablation that hands the estimator, instead, each task's true
// stages as they ran (their boundaries, the exact peak of their memory and the average
// of what they got on the rest): what measurement costs. Summary.Prediction reports,
// for every run placed on a predicted profile, how far the prediction was from the
// stages the run then went through.
//
// Request-based baselines get neither: YARN has no such loop. A policy with ScaleUp
// (below) has its agents sample and report running tasks as a policy with Feedback
// does, without the rest of the loop.
//
// A policy with Progress (the speculation and pre-release-list ones) has its node
// agents report, at every heartbeat and before asking for work, the progress of each
// task running there: the share of its work done (input transfer and true stages, in
// seconds at full speed), which grows more slowly on a slow or compressed node — what
// Hadoop's progress score measures for a map (eq. 3.1's input). Such nodes heartbeat
// even when nothing is pending, so that idle nodes can take backups.
//
// # Speculation
//
// A scheduler that speculates (finegrain.WithSpeculation) returns backup attempts in
// its decisions (Assignment.BackupOf). The engine runs a backup as a second run of the
// task on its node — its own input transfer, the node's speed, the same true profile —
// and the first run to finish finishes the task: the scheduler hears Finished under
// that run's ID (finegrain.BackupID for the backup) and the other run stops at once,
// freeing its node. An overrun kill or a node failure ends a backup alone; a task
// killed or lost takes its backup with it (the scheduler drops it) and runs again.
// Summary.Backups and BackupsWon count backups launched and those that finished first;
// locality counts include backups' runs.
//
// # Scale-up (mixed workloads)
//
// A policy with ScaleUp (FairScaleUp; Mixed for the comparison) runs a scale-up round
// of docs/methods.md §11 every WithScaleUpEvery (5 s): finegrain.Scheduler.ScaleUp
// tests the running latency-sensitive tasks for stragglers (S1–S4, on the progress its
// node agents report at every heartbeat, as under Progress) and the batch tasks for
// redundant allocations (T1–T2, on the peak of the running usage they report with
// Scheduler.ReportRunning at their 1st, 2nd, 4th, 8th, ... agent sample — a peak so
// far, which a stage that uses more later outgrows), plans, applies the plan to its
// state and returns the actions. The simulator carries each out on the task's run at
// the round's time; a policy asking for scale-up of a scheduler without the call is
// refused by New.
//
// The execution model of a resize. A run's allocation is what the round's action says
// (finegrain.ScaleAction.Allocation); held is that, orig what it held before the
// first change (its placement's hold, for a request-based scheduler its request).
//
//   - Compressible dimensions (cpu, disk-io, net-io). On each one the run uses and held
//     some of, f_k = held_k/orig_k. Grown (every f_k ≥ 1: a straggler expanded or
//     moved, a batch task given back all it lost), it runs g = min f_k times faster and
//     its true usage on every compressible dimension grows by g, so that it competes
//     for the node's capacity with the rest: work is conserved under more resources as
//     under compression (eq. 4), the reading speculate.ScaleUp sizes the growth by.
//     Shrunk (some f_k < 1: reclaim, preemption), it is compressed: under Elastic (the
//     default, WithResizeModel) its speed follows its allocation as it does when grown,
//     rc_k = 1 − f_k, so it progresses at speed × (1 − max rc_k)/(1 + p) (eq. 5) and
//     uses f_k of its usage; under CappedShrink (an ablation) the allocation is a cap,
//     rc_k = 1 − held_k/use_k while it uses more than it holds (eq. 1), so a reclaim of
//     what it does not use costs nothing. Reading: the patent says reclaim takes what
//     a task does not use and preemption shrinks it, not how fast a shrunk task runs;
//     Elastic is the symmetric reading of ScaleUp's own, CappedShrink the container's.
//     With the node's contention (step 3 above), a shrunk run's demand on the node is
//     what its shrink leaves it, the node shares that out as it shares every run's,
//     and its compression is 1 − (1 − rc_k)(1 − rc_node,k): the larger of the two when
//     only one is not zero, which is the common case — what its shrink freed goes to
//     the others, not to waste.
//   - Non-compressible dimensions (memory). A run whose true usage comes to exceed
//     what it holds on a dimension a shrink took below orig is killed, at once or
//     later in its run, as a container over its memory limit is (its limit is what it
//     holds now): reported with Scheduler.Failed and counted in
//     MixedOutcome.ShrinkKills (not in Summary.OOMKills, which counts the nodes'
//     overruns). It runs again from the start, placed anew. When a node overruns, a
//     resized run counts as over its hold by what it holds now.
//   - A move (speculate.Move) is a planned live migration: the run leaves its node for
//     the new one at the round's time with its progress, its stage and its usage, and
//     runs at the new node's speed from then on; its input is not read again.
//
// Everything else — the stage durations, the usage's variation, the agents' samples —
// goes on as for any run; the fairness metric follows what a resized task holds.
// Without latency-sensitive tasks a round plans nothing but recovery, and with no
// ScaleUp policy nothing of this runs: the outputs of other policies are unchanged.
//
// # Policies
//
// FIFO, Capacity, Fair, DRF (request-based, WithPrediction(false), as YARN) and FGM (the
// scheduler's defaults with feedback) are ready-made Policy values; Policies returns
// them in that order. For the PRRL thesis' comparisons, FairPreRelease (Fair choosing
// tasks by the pre-release resource list instead of delay scheduling, docs/methods.md
// §10) pairs with Fair in Placements, and FairLATE and FairPRRL (Fair with LATE or PRRL
// speculation, docs/methods.md §8–9) with Fair in Speculations; examples/thesis runs both
// on the thesis' heterogeneous cluster. Tetris (request-based, DRF order, Tetris' packing
// choice instead of delay scheduling, docs/methods.md §14) and FGMTetris (FGM with that
// choice over predicted stage windows) are found by PolicyByName. For mixed workloads,
// Mixed returns Fair with progress reports and no action (FairProgress), FairLATE, and
// Fair with scale-up rounds from idle room only or with reclaim and preemption
// (FairScaleUp); examples/mixed runs them. Policy.New is the seam for other schedulers.
//
// # Background (the "cloud" environment)
//
// WithBackground adds other applications' load to every node (Background): RandomLoad
// generates it from a seed (a CPU level per node moving every minute, a constant memory
// share), SeriesLoad replays series such as the PlanetLab CPU traces
// (workload.LoadPlanetLabDir). It competes with the tasks under the execution model's
// rules: WithYield says who gives way on an over-committed CPU — the co-located
// applications are served first by default (ColocatedFirst, as production clouds run
// batch work beside services), or everybody in proportion (Proportional). What they
// lose is Summary.Colocated: the share of their demand not served, the share of
// node-time they were squeezed, and their slowdown while squeezed. Request-based
// schedulers are not told of them. Node agents measure them with the rest of the
// node's usage, and a policy with Feedback is told, with each usage report, what they
// used over the report's window (CPU averaged, memory as held), through
// finegrain.Scheduler.SetExternalLoad. With WithReservedBackground every scheduler is
// instead told each node's capacity less the background's memory, as an operator
// would size YARN's NodeManager.
//
// # Determinism
//
// Virtual time only; one binary heap of events ordered by (time, kind, sequence), so
// simultaneous events run in a fixed order; no map is iterated for order; randomness
// only in the caller-owned sources of the workload and background generators. The same
// inputs give the same Result, byte for byte once written with the CSV writers, on a
// given platform (the fluid model uses float64). Result.Timing, the wall-clock cost of
// decisions (WithDecisionTiming), is the one exception.
//
// # Metrics
//
// Result holds per-job outcomes (JobResult: completion = submit → last task done,
// response = submit → first placement), optional per-task records, samples every
// WithSampleEvery (utilisation used / background / allocated per dimension, Jain's index
// over the active queues' dominant shares of what the scheduler allocated to them,
// fairness.Jain, each placed task counted at the peak of the profile held for it;
// WithHeldShares adds the index over what is held for them at the sample instant) and a
// Summary (makespan, job-completion and response distributions,
// small vs large task turnaround, mean Jain, mean utilisation, placements, compressed
// placements, kills, evictions and the run time they lost, gangs gathered, locality,
// time spent compressed, decision counts; with latency-sensitive tasks or scale-up,
// MixedOutcome: SLO attainment, the batch tasks' slowdown, scale-up actions and the
// kills shrinks caused). WriteJobsCSV, WriteSamplesCSV,
// WriteTasksCSV, WriteEvictionsCSV and WriteSummaryCSV write them as CSV; the
// per-job and per-task eviction counts are in JobResult and TaskResult only, so that
// the CSV files of runs without preemption keep their columns.
//
// Example:
//
//	r := rand.New(rand.NewPCG(1, 2))
//	w, _ := workload.FGM(r, workload.WithScale(0.1))
//	cl, _ := workload.FGMCluster()
//	for _, p := range sim.Policies() {
//		res, err := sim.Run(&w, &cl, p)
//		if err != nil { ... }
//		fmt.Println(p.Name, res.Summary.Makespan, res.Summary.JobCompletion.Mean)
//	}
package sim
