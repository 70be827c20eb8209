// Package policy keeps each server's scheduling mode and adapts it to how well its
// demand predictions hold (FGM §2.4, Alg. 3), answers whether a server is worth a
// scheduling pass (Alg. 1 line 1), and manages compression: how much each compressible
// resource may be squeezed, per server, per time segment (eq. 6/7).
//
// What the package implements, by section of docs/methods.md, the project's method
// reference (equation, definition and algorithm numbers are the sources', kept there):
//
//	§5 Alg. 3          Mode (StopAllocation, CoarseGrained, FineGrainedNoCompression,
//	                   FineGrained), Thresholds (Th_sa > Th_cg > Th_fg, validated),
//	                   Adjuster.Adjust / AdjustServer, degradation and Change.Recycle
//	§3 Alg. 1 line 1   BelowIdle (I < Ih × N, eq. 13), Adjuster.Schedulable
//	§1 eq. 6, 7        Compression: the match.Allowance of every server, zero where
//	                   the mode forbids compression
//	§6                 the policy-adjustment and compression-management modules
//
// Conformity (eq. 16) comes from the predict package through the small Conformity
// interface (predict's *ConformityLog satisfies it): per resource, the mean of a
// server's last k values. Alg. 3 compares one number with its thresholds; a Reduction
// turns the per-resource vector into it. The default, WorstShare, takes the worst
// resource's √F / N — the root-mean-square under-prediction as a share of capacity —
// because F itself is in squared base units that cannot be compared across resources.
// The thresholds' defaults (20%, 10%, 5%) are ours; the paper gives none.
//
// Degradation ("running tasks' completion times grow abnormally") is our Reading:
// the embedder reports observed and expected task durations (ObserveCompletion); a
// server is degrading when the mean stretch of its recent reports reaches a factor
// (default 1.5, against at most 1/0.9 ≈ 1.11 from planned 10% compression). A stopped,
// degrading server's Change carries Recycle, the signal to reclaim its resources.
//
// An Adjuster is safe for concurrent use: the scheduler reads modes (Mode, Matcher,
// Schedulable) while the embedder runs adjustments periodically or on reports.
//
// # Example
//
//	adj, _ := policy.NewAdjuster(schema, conformityLog)
//	_ = adj.AddServer("n1", capacity)
//	comp, _ := policy.NewCompression(schema, adj) // 10% limit, p = 0.05
//	...
//	if ok, _ := adj.Schedulable("n1", idle); ok {
//		r := adj.Matcher("n1").Match(comp.Server("n1", timeline), now, profile)
//		...
//	}
//	for _, c := range adj.Adjust() { // every few heartbeats
//		if c.Recycle { reclaim(c.Server) }
//	}
package policy
