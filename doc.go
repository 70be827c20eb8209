// Package finegrain is an embeddable library of cluster-scheduling building blocks that
// schedule tasks on how they really use resources: in stages whose demand rises and
// falls, on resources of which some can be squeezed a little (CPU, bandwidth: the task
// runs slower) and some cannot (memory, disk space).
//
// Orchestrators — YARN-like resource managers, Kubernetes scheduler plugins, batch
// systems — wire their own scheduler from the packages below, or use the reference
// Scheduler of this package: FGM's Algorithm 1 in pull mode (Heartbeat: a node has
// room, which tasks start there?) and push mode (Place: a task is pending, which node
// takes it?), plus per-node probes for a host scheduler (Filter, Score). Section and
// equation numbers refer to the method reference in docs/methods.md.
//
// # Architecture
//
// The Scheduler is a thin composition of three parts (docs/architecture.md):
//
//	cluster    the state: nodes, timelines, free index, queues, jobs, tasks, and
//	           two-phase reservations (Reserve, Commit, Unreserve, Evict)
//	framework  the scheduling cycle and its extension points
//	plugins    today's behaviour as plugins on those points
//
// Options choose the built-in plugins (WithScorer, WithPreReleaseList,
// WithSpeculation, ...) and add, remove or reorder plugins (WithPlugin,
// WithPluginBefore, WithoutPlugin); Plugins lists them.
//
// # Following a heartbeat
//
// Each step in the file where it lives, top-down:
//
//	scheduler.go           Scheduler.Heartbeat: validate, advance the clock
//	framework/run.go       Framework.Heartbeat: a Cycle; the Pass plugins in order
//	plugins/delay.go       DelayScheduling.Pass: the jobs in fairness order
//	                       (cluster.State.Walk); a job the clock rule does not let
//	                       launch on the node is passed over at once; delay scheduling
//	                       picks the locality and the task (Alg. 1 lines 4–6)
//	framework/cycle.go     Cycle.Room, FilterPass, FilterJob, then Try for the task:
//	plugins/gate.go          NodeGate: idle threshold and mode (Alg. 1 line 1)
//	plugins/classes.go       JobFilter: demand classes pass over jobs that cannot start
//	plugins/demand.go        Demand: declared, predicted (predict.Estimator) or request
//	plugins/filter.go        PreFilter: max shares; Filter: mode gate, stage matching
//	                         (match.FineGrained, Alg. 2, with the policy.Compression
//	                         allowance, eq. 6/7), QoS (match.DeadlineCheck, eq. 15)
//	cluster/reserve.go       Reserve and Commit on the node's stage.Timeline
//	plugins/unfit.go       after a refusal: look past a task no node could hold
//
// then plugins/speculation.go offers the room left to backup attempts (LATE, PRRL)
// through Cycle.TryBackup. Push mode (Scheduler.Place → framework/run.go
// Framework.Place) runs the same Demand, PreFilter and Filter steps for nodes taken
// from the free index, scores those that pass (plugins/score.go), tries PostFilter
// when none does, and reserves through the same Cycle.claim.
//
// # Errors
//
// Bad input gets an error and changes nothing. Every error wraps a sentinel to test
// with errors.Is (ErrInvalid, ErrUnknownNode, resource.ErrNegative, ...) and starts
// with the name of the package that found the problem: a capacity with a negative
// amount passed to Scheduler.AddNode comes back as
// `cluster: node "n1": capacity: resource: dimension "memory": negative amount -1`,
// and errors.As finds the *resource.DimensionError inside.
//
// # Memory
//
// A long-running Scheduler forgets finished work: the last DefaultRetention.Tasks
// finished or cancelled tasks and DefaultRetention.Jobs completed jobs are remembered,
// older ones forgotten (WithRetention sets counts and an age), so memory stays flat
// however many tasks pass through. Counts keep counting every task that ended.
//
// # Packages
//
// Lowest first (each imports only those above it):
//
//	resource   named dimensions, compressible or not; fixed-size tuples and their
//	           algebra; compression ratio, slowdown and bound (§1: eq. 1, 4–7, 9–13)
//	stage      a task's demand profile over time; a server's reservation timeline with
//	           free segments, min-free and time-weighted average (§2 stages, §3 Ax,
//	           §4's input, eq. 14)
//	predict    demand learned from similar tasks, stage segmentation, prediction
//	           conformity, LATE progress model, straggler and over-allocation
//	           detectors (§2, eq. 8 Reading, eq. 14, 16; §8; §11)
//	match      request, coarse and fine-grained stage matching with bounded
//	           compression, deadline check, node scoring, QoS vectors (§1 eq. 6–7, §3,
//	           §4 Alg. 2, eq. 15, §12)
//	policy     per-server scheduling mode, the adjuster, compression manager, idle
//	           threshold (§3 Alg. 1 line 1, §5 Alg. 3)
//	fairness   FIFO, Fair, weighted DRF, Capacity, hierarchical queues, delay
//	           scheduling (the clock rule and Alg. 2.1), Jain's index (§3 line 4, §10)
//	speculate  LATE, the pre-release resource list for speculation and fair
//	           placement, straggler scale-up with reclaim and preemption (§8–11)
//	cluster    the scheduling state with two-phase reservations
//	framework  the scheduling cycle and its extension points
//	plugins    the built-in plugins (§3 Alg. 1, §4, §10, §8–9)
//	finegrain  the reference Scheduler
//	sim        a deterministic cluster simulator driving any scheduler (§7, §9, §10)
package finegrain
