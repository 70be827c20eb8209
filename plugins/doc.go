// Package plugins holds the built-in plugins of the scheduling cycle (package
// framework): the reference Scheduler's behaviour, one plugin per idea, each usable on
// its own in a Framework of yours and replaceable by one of yours. Section,
// equation and algorithm numbers refer to the method reference, docs/methods.md.
//
//	Prediction       Demand      declared profile, else the estimator's prediction, else
//	                             the request (Alg. 1 line 8); hold-until-finished tail
//	QueueAdmission   PreFilter   max shares (Capacity's elasticity)
//	ModeGate         Filter      the node's mode allows allocation (Alg. 1 line 1, Alg. 3)
//	StageMatch       Filter      request, coarse or fine-grained stage matching (Alg. 2)
//	                             with the compression allowance (eq. 6/7)
//	QoS              Filter      the eq. 15 deadline check when a match compresses
//	NodeScore        Score       a match.Scorer over the task's window
//	FutureStart      PostFilter  the earliest future start on any node
//	HeartbeatCap     NodeGate    at most n starts per heartbeat
//	IdleGate         NodeGate    the idle threshold and the node's mode
//	DemandClasses    JobFilter   pass over jobs none of whose tasks can start here
//	DelayScheduling  Pass        fairness order with delay scheduling (Alg. 1, Alg. 2.1)
//	PreReleaseList   Pass        the pre-release resource list (Alg. 4.1/4.2)
//	Speculation      Pass        backup attempts (LATE, PRRL)
//
// Each file holds one extension point's plugins: demand.go, filter.go (PreFilter and
// Filter), score.go (Score and PostFilter), gate.go, classes.go, delay.go,
// prerelease.go, speculation.go. A plugin instance belongs to one Framework.
package plugins
