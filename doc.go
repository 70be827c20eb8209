// Package finegrain is an embeddable library of cluster-scheduling building blocks that
// schedule tasks on how they really use resources: in stages whose demand rises and
// falls, on resources of which some can be squeezed a little (CPU, bandwidth: the task
// runs slower) and some cannot (memory, disk space).
//
// Orchestrators — YARN-like resource managers, Kubernetes scheduler plugins, batch
// systems — wire their own scheduler from the packages below, or use the reference
// Scheduler of this package: SPEC §3's Algorithm 1 in pull mode (Heartbeat: a node has
// room, which tasks start there?) and push mode (Place: a task is pending, which node
// takes it?). The methods come from the papers restated in the project's SPEC.md;
// section and equation numbers below refer to it.
//
// Following a heartbeat: Scheduler.Heartbeat (pull.go) checks the node's idle
// resources and mode (policy.Adjuster.Schedulable, Alg. 1 line 1), walks the jobs in
// fairness order (fairness.Tree.Walk, line 4), passing over at once a job none of whose
// tasks can start on the node (its demand classes, classes.go), lets delay scheduling
// pick the locality (fairness.Delay.Offer, line 6) and the task
// (fairness.Pending.First), then Scheduler.try (place.go) asks the estimator for the
// task's profile (predict.Estimator.Estimate), matches it with the node mode's matcher
// (match.FineGrained, Alg. 2, with the compression the policy.Compression manager
// allows, eq. 6/7), runs the QoS check (match.DeadlineCheck, eq. 15), and
// Scheduler.allocate reserves it on the node's stage.Timeline. With WithPreReleaseList
// the pre-release list (speculate.FairPlacer, Alg. 4.2) chooses instead of delay
// scheduling (prerelease.go); with WithSpeculation, a node with room left is then
// offered to speculate.Speculator (LATE, PRRL) for backup attempts (speculation.go).
//
// Packages, lowest first (each imports only those above it):
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
//	           scheduling, Jain's index (§3 line 4, §10)
//	speculate  LATE, the pre-release resource list for speculation and fair
//	           placement, straggler scale-up with reclaim and preemption (§8–11)
//	finegrain  cluster state and the reference Scheduler (§3 Alg. 1, §6)
//	sim        a deterministic cluster simulator driving any scheduler (§7, §9, §10)
//
// Packages are added as they land; see the README for what is in this version.
package finegrain
