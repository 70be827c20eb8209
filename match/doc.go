// Package match decides whether and how a task fits a server: the matchers of FGM's
// scheduling loop (request quantity, coarse-grained, fine-grained stage matching with
// bounded compression), the deadline QoS check, node scoring for push-mode placement,
// and QoS-vector matching with priority aging.
//
// A Matcher reads a Server view — its ID, its stage.Timeline of free resources and the
// Allowance its policy grants for compression — and a task's stage.Profile started at
// some time, and returns a Result that explains itself, like a Kubernetes framework
// status: a Code (Fit, FitCompressed, NoRoom, DeadlineMissed, Unschedulable, Invalid)
// and, on failure, which stage, which dimension, when and by how much; on success the
// compression each stage would run under and the allowance to reserve with. Matching
// allocates nothing.
//
// What the package implements, by section of docs/methods.md, the project's method
// reference (equation, definition and algorithm numbers are the sources', kept there):
//
//	§3 Alg. 1 l. 8–9   RequestQuantity: unpredictable tasks get their request
//	§3 Alg. 1 l. 12–15 CoarseGrained: fails when Ax < Mx (eq. 13) over [start, start+T)
//	§4 Alg. 2          FineGrained: nc + rc × N ≥ sc and nn ≥ sn on every segment
//	§1 eq. 1           Result.Compression, Result.StageRatio: (D − C)/D per dimension
//	§1 eq. 6, 7        Allowance (the seam the policy package's compression manager
//	                   implements); Fixed for a constant rc
//	§3 eq. 15          DeadlineCheck (checkQoS), TheoreticalDuration, ResultDuration
//	push placement     Scorer: LeastAllocated, MostAllocated, BestFit,
//	                   BalancedAllocation, Alignment (Tetris); ChooseServer
//	§12 eq. 1–6        QoSVector, Weights, Value (eq. 4), MustValue (eq. 5, with the
//	                   Reading of §12), FinalValue (eq. 6), Aging (priority aging and
//	                   the sub-queue choice by the node's i-th largest feature)
//
// # The motivating example (docs/methods.md §7, FGM Fig. 1–3)
//
// The paper's figures are not in the text, so the tests build an instance consistent
// with it (one time unit = one second; cores in millicores):
//
//	server   4 cores, 8 GB
//	A1, A2   stage 1: 1 core, 2 GB for 1 unit; stage 2: 0.5 core, 1 GB for 2 units
//	         (request = peak = 1 core, 2 GB; 3 units)
//	B1       stage 1: 2.2 cores, 2 GB for 1 unit; stage 2: 3 cores, 3 GB for 3 units
//	         (request = peak = 3 cores, 3 GB; 4 units)
//
// By request, A1 and A2 leave 2 cores, B1 needs 3 and waits until both end at 3; the
// work ends at 3 + 4 = 7 units. Matched by stages with a 10% compression allowance,
// B1's first stage needs 2.2 cores where 2 are free and 2 + 0.1 × 4 ≥ 2.2, so all three
// start at once; the 4.2 cores demanded share 4, compressing every first stage by
// 0.2/4.2 ≈ 4.8% and stretching it to 1/(1 − 0.2/4.2) = 1.05 units (eq. 4); the second
// stages fit uncompressed, and the work ends at 1.05 + 3 = 4.05 units, the paper's ≈4.05.
//
// # Example
//
//	s := resource.Standard()
//	tl, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
//	tenPercent, _ := match.UniformAllowance(s, resource.DefaultCompressionLimit)
//	server := match.Server{ID: "n1", Timeline: tl, Allowance: tenPercent}
//	r := match.FineGrained{}.Match(server, now, profile)
//	if r.Code.OK() {
//		_, err := tl.Reserve(now, profile, r.Allowance)
//		...
//	} else {
//		log.Print(r) // "stage 1 needs cpu=3 over [1s, 3s) but 2 is free ..."
//	}
package match
