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
// Options choose the built-in plugins (WithScorer, PullPreReleaseList,
// WithSpeculation, ...) and add, remove or reorder plugins (WithPlugin,
// WithPluginBefore, WithoutPlugin); Plugins lists them.
//
// # Following a heartbeat
//
// docs/architecture.md walks one pull heartbeat top-down, from Scheduler.Heartbeat
// through framework.Framework.Heartbeat and the Pass plugins (DelayScheduling, in
// plugins/delayscheduling.go) to each task's demand, filters, stage match and
// reservation, naming the file of every step.
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
