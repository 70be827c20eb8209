// Package cluster is the state a scheduler decides on: nodes with their reservation
// timelines and a free-capacity index, queues, jobs and tasks with their life cycle,
// the pending tasks indexed by locality and by demand class, and the progress of the
// running tasks. How it fits with the cycle and the plugins: docs/architecture.md;
// the methods it serves (section, equation and algorithm numbers): docs/methods.md.
//
// Placing a task is two-phase, as in the Kubernetes scheduling framework:
//
//   - Reserve holds a task's profile on a node's timeline tentatively. The
//     reservation is visible to every later decision (matching, scoring, fairness
//     usage) and attributable to the task, which is then Reserved.
//   - Commit makes it binding: the task is Running, or Booked when its reservation
//     starts later (a future start), until the clock reaches its start.
//   - Unreserve rolls a tentative reservation back; the timeline, the free-capacity
//     index, the fairness tree, the pending index and every count are exactly as
//     before Reserve.
//   - Evict releases a running task's reservation and makes it pending again; Fail
//     does the same for a lost task; Preempt does it to make room for another task,
//     within the job's disruption budget (JobSpec.MaxDisrupted). A task is never lost:
//     every submitted task is, at any moment, exactly one of Pending, Reserved,
//     Running, Booked, Finished or Cancelled.
//
// Suspend and Resume take a placed task's reservation off its node's timeline and put
// it back exactly, for what-if questions (would this task fit were those gone?), as
// preemption asks them. Gang jobs (JobSpec.MinMember) know whether they have gathered
// (JobInfo.Gathered).
//
// What ended is remembered for a while and then forgotten (Retention): the last
// finished or cancelled tasks and completed jobs, by count and optionally by age, so
// that memory stays flat however long the state runs.
//
// Plugins read the state through NodeInfo, JobInfo and TaskInfo, read-only views that
// stay valid while the state is not changed. A State has a single owner and is not
// safe for concurrent use; the reference Scheduler serialises its calls, and lets
// reads that change nothing (Scheduler.Filter, Scheduler.Score) run concurrently.
//
// See docs/architecture.md for how the state, the scheduling cycle (package
// framework) and the plugins (package plugins) fit together.
package cluster
