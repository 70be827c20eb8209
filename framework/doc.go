// Package framework is the scheduling cycle: one pipeline of extension points, in the
// vocabulary of the Kubernetes scheduling framework, that every placement goes
// through — pull (a node has room: which tasks start there?), push (a task is
// pending: which node takes it?), the pre-release list and speculative backups — and
// the interfaces plugins implement at each point. See docs/architecture.md for how
// the cycle, the state and the plugins fit together; numbers such as "Alg. 1 line 1"
// refer to the method reference, docs/methods.md.
//
// A task's way through a cycle, and where each step lives:
//
//	Demand      DemandPlugin: what the task asks (declared, predicted or requested)
//	PreFilter   PreFilterPlugin: once per cycle, cluster-wide checks (queue max shares)
//	Filter      FilterPlugin: per node (mode gate, stage matching, QoS check)
//	PostFilter  PostFilterPlugin: push, when no node passed (future start; preemption)
//	Score       ScorePlugin (+ ScoreNormalizer): push, rank the nodes that passed
//	Reserve     cluster.State.Reserve, then ReservePlugin.Reserve (Unreserve on failure)
//	Permit      PermitPlugin: allow, deny (roll back) or wait (gang scheduling)
//	commit      cluster.State.Commit: the task is Running
//
// Where each piece lives: cycle.go the Cycle and what a plugin reads of it; attempt.go
// an attempt's demand, PreFilter, Filter and Score steps (Prepare for a pass that
// looks before it tries); reserve.go Reserve, Permit and commit (claim) and their
// rollback; try.go what a pass calls to start a task (Try, TryAt, TryBackup);
// pass.go the checks a pass makes as it walks the jobs (Room, Open, FilterPass,
// CheckJob, SkipJob); evict.go preemption's evictions and suspensions; permit.go the
// tasks a Permit plugin keeps waiting; run.go the cycles themselves (Heartbeat,
// Place, the Filter and Score probes, Explain); host.go a host scheduler's
// Reserve/Unreserve; plugin.go the extension points; framework.go their registration,
// listed once (points); status.go the statuses, reasons, Decision and Assignment;
// explain.go the refusal tallies.
//
// Pull mode adds three points of its own, since Kubernetes has no pull mode:
// NodeGatePlugin (may the node take another task: idle threshold, heartbeat cap),
// JobFilterPlugin (pass over jobs that cannot use the node: demand classes) and
// PassPlugin (who gets the node: the locality strategy — delay scheduling or the
// pre-release list — then speculation). A heartbeat runs the passes in order; a pass
// chooses tasks and calls Cycle.Try, the same steps as push mode. Outside any cycle,
// ForgetPlugin is told of each completed job the state forgets (cluster.Retention).
//
// Per-call scratch lives in the Cycle, or in slices the Framework reuses from cycle to
// cycle stamped with the cycle's generation; plugins keep their own scratch the same
// way (Cycle.Gen). A Framework has one owner at a time, except Filter and Score
// probes, which only read and may run concurrently for different nodes — Filter
// plugins must therefore only read shared state.
//
// The built-in plugins are in package plugins; the reference Scheduler (package
// finegrain) composes them. See docs/architecture.md.
package framework
