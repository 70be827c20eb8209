// Package plugins holds the built-in plugins of the scheduling cycle (package
// framework): the reference Scheduler's behaviour, one plugin per idea, each usable on
// its own in a Framework of yours and replaceable by one of yours. Section,
// equation and algorithm numbers refer to the method reference, docs/methods.md.
//
//	Prediction       Demand      declared profile, else the estimator's prediction, else
//	                             the request (Alg. 1 line 8); hold-until-finished tail
//	QueueAdmission   PreFilter   max shares (Capacity's elasticity)
//	Gang             PreFilter,  all-or-nothing gang jobs (JobSpec.MinMember): members
//	                 Reserve,    wait reserved until the gang can run together, one
//	                 Permit      gang gathers at a time, rollback after a timeout
//	ModeGate         Filter      the node's mode allows allocation (Alg. 1 line 1, Alg. 3)
//	StageMatch       Filter      request, coarse or fine-grained stage matching (Alg. 2)
//	                             with the compression allowance (eq. 6/7)
//	QoS              Filter      the eq. 15 deadline check when a match compresses
//	NodeScore        Score       a match.Scorer over the task's window
//	Preemption       PostFilter, evict lower-priority tasks, or reclaim for a queue
//	                 Pass        below its guarantee, for a task that fits nowhere
//	FutureStart      PostFilter  book the earliest future start on any node
//	Booking          Pass        FutureStart in pull mode
//	HeartbeatCap     NodeGate    at most n starts per heartbeat
//	IdleGate         NodeGate    the idle threshold and the node's mode
//	DemandClasses    JobFilter   pass over jobs none of whose tasks can start here
//	DelayScheduling  Pass        fairness order with locality waits: the clock rule
//	                             (NewClockScheduling) or Alg. 2.1 (Alg. 1)
//	PreReleaseList   Pass        the pre-release resource list (Alg. 4.1/4.2)
//	Tetris           Pass        Tetris' packing choice: alignment, ε·SRPT, fairness
//	                             knob (§14)
//	QoSVectorScheduling  Pass,   QoS-vector matching in capacity scheduling (§12):
//	                 Forget      queue of most free capacity, sub-queue by the node's
//	                             i-th largest QoS feature, best finalvalue with aging
//	Speculation      Pass        backup attempts (LATE, PRRL)
//	LoadAwareScheduling  (not in the default list: add it with finegrain.WithPlugin)
//	                 Demand,     usage-aware overcommit (Koordinator's plugin, §15):
//	                 Filter,     measured node usage plus estimates of the tasks
//	                 Score,      placed since, under usage thresholds
//	                 NodeGate
//
// Each plugin lives in a file named after it (Prediction in prediction.go, StageMatch
// in stagematch.go, DelayScheduling in delayscheduling.go, …); nodemodes.go holds the
// node-mode lookup ModeGate, IdleGate and StageMatch share, and unfit.go the checks
// several passes share. A plugin instance belongs to one Framework.
package plugins
