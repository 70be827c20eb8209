package sim

import (
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// Result is what one run produced: per-job outcomes, time series and a summary, all
// deterministic (the same inputs give the same Result, byte for byte once written as
// CSV) except Timing.
type Result struct {
	// Policy, Workload and Cluster name what ran.
	Policy, Workload, Cluster string
	// Mode is pull or push.
	Mode Mode
	// Cloud reports whether a background load shared the nodes.
	Cloud bool
	// Dims names the dimensions of every Vector, in slot order.
	Dims []string
	// Jobs holds every job, in workload order.
	Jobs []JobResult
	// Tasks holds every task, in workload order, when WithTaskRecords was given.
	Tasks []TaskResult
	// Samples are the cluster-wide metrics every WithSampleEvery.
	Samples []Sample
	// QueueSamples holds, when WithQueueSamples was given, one QueueSample per queue
	// (in the order of workload.Workload.Queues) at every sample, sample by sample;
	// nil otherwise.
	QueueSamples []QueueSample
	// Summary condenses the run into the metrics of docs/methods.md §7.
	Summary Summary
	// Timing is the wall-clock time of the scheduler's decisions, when
	// WithDecisionTiming was given; nil otherwise. It is not deterministic.
	Timing *Timing
	// Evictions lists every eviction the scheduler made (preemption,
	// finegrain.WithPreemption), in the order the simulator carried them out.
	Evictions []EvictionRecord
}

// EvictionRecord is one eviction the scheduler made: a running task (or one placed
// with a future start) stopped and made pending again to make room for another.
type EvictionRecord struct {
	// At is when the task was evicted.
	At time.Duration
	// Task, Job and Node say which run was stopped; For names the task the room was
	// made for.
	Task, Job, Node, For string
	// Reason is finegrain.Preempted (a task of a higher-priority job) or
	// finegrain.Reclaimed (a queue below its guarantee).
	Reason finegrain.Reason
	// Lost is the run time the evicted run had done (0 for a future start that had
	// not begun): work done again when the task runs anew.
	Lost time.Duration
}

// JobResult is one job's outcome.
type JobResult struct {
	ID, Queue, App string
	// Tasks is the job's number of tasks.
	Tasks int
	// Priority and MinMember are the job's (workload.Job).
	Priority, MinMember int
	// Evictions counts its tasks' runs evicted by preemption; Lost is their run time.
	Evictions int
	Lost      time.Duration
	// Submit is when the job arrived, FirstStart when its first task was placed to
	// start, Done when its last task finished.
	Submit, FirstStart, Done time.Duration
	// Finished is false for a job cut off by the time limit (Done is then zero).
	Finished bool
}

// Completion is the job's completion time: from submission until its last task
// finished (docs/methods.md §7).
func (j JobResult) Completion() time.Duration { return j.Done - j.Submit }

// Response is the job's scheduling response time: from submission until the first
// successful placement of one of its tasks (docs/methods.md §7).
func (j JobResult) Response() time.Duration { return j.FirstStart - j.Submit }

// TaskResult is one task's outcome (WithTaskRecords).
type TaskResult struct {
	ID, Job string
	Kind    workload.Kind
	// Node is the node it finished on (empty when unfinished).
	Node string
	// Submitted is when it became pending, Start when its last run started, Finish
	// when it finished.
	Submitted, Start, Finish time.Duration
	// Ideal is its true duration alone on a normal node.
	Ideal time.Duration
	// Compressed is the time it ran compressed, over all its runs.
	Compressed time.Duration
	// Kills counts its runs killed by a non-compressible overrun: of its node, or of
	// the limit a scale-up round's shrink left it (MixedOutcome.ShrinkKills).
	Kills int
	// Evictions counts its runs evicted by preemption; Lost is their run time.
	Evictions int
	Lost      time.Duration
	// Locality is where its last run read its input; NoInput reports a run that read
	// no input block (Locality is then NodeLocal).
	Locality fairness.Level
	NoInput  bool
}

// Sample is the cluster at one instant. Vectors are fractions of the cluster's total
// capacity per dimension (Result.Dims).
type Sample struct {
	At time.Duration
	// Used is what the tasks really get; Background what the other applications get;
	// Allocated what the scheduler has reserved (capacity − free on its timelines).
	Used, Background, Allocated resource.Vector
	Running, Pending            int
	// ActiveQueues counts queues with unfinished submitted jobs; Jain is Jain's index
	// (fairness.Jain) over their dominant shares of what the scheduler allocates to them
	// (1 when fewer than two queues are active).
	ActiveQueues int
	Jain         float64
	// Backlogged counts the active queues with pending tasks (submitted, not placed);
	// BackloggedJain is Jain's index over their dominant shares alone (1 when fewer
	// than two are backlogged). It is the demand-aware reading of fairness: a queue
	// with nothing pending is held at what it asks for and cannot be given more, so a
	// scheduler is not unfair to it (DRF equalises dominant shares among the users
	// with demand); among backlogged queues a fair scheduler keeps the shares equal.
	Backlogged     int
	BackloggedJain float64
	// HeldJain and HeldBackloggedJain are Jain and BackloggedJain, over the same
	// queues, of the queues' dominant shares of what the scheduler holds for their
	// running tasks at the sample instant (WithHeldShares; 0 without it): each task's
	// reservation as it stands then — for a stage profile, the stage in force — rather
	// than its peak. A request held from a task's start until it finishes is the same
	// at every instant of its run, so for a request-based policy whose placements
	// start at once they equal Jain and BackloggedJain.
	HeldJain, HeldBackloggedJain float64
}

// QueueSample is one queue at a sample instant (WithQueueSamples): the detail behind
// the sample's Jain indices. A queue is active while it has an unfinished submitted
// job, and backlogged while it is active with pending tasks (Sample.Backlogged).
type QueueSample struct {
	At    time.Duration
	Queue string
	// Active counts the queue's unfinished submitted jobs; Pending its tasks submitted
	// and not placed, Running those running (the queue's part of Sample.Pending and
	// Sample.Running).
	Active, Pending, Running int
	// Share is the queue's dominant share of what the scheduler allocates to it, the
	// share the sample's Jain indices are over.
	Share float64
	// HeldShare is the queue's dominant share of what the scheduler holds for its
	// running tasks at the sample instant, the share of Sample.HeldJain
	// (WithHeldShares; 0 without it).
	HeldShare float64
	// OldestPending is how long the queue's longest-waiting pending task has been
	// pending, since it was submitted (a reduce: since its maps finished); 0 with none.
	OldestPending time.Duration
}

// Dist summarises a distribution of durations.
type Dist struct {
	N                        int
	Mean, P50, P95, P99, Max time.Duration
}

// Summary is the run condensed into the metrics of docs/methods.md §7 and the execution
// model's counters.
type Summary struct {
	Jobs, JobsFinished, Tasks int
	// Makespan is the workload's completion: from the first submission to the last job's
	// end.
	Makespan time.Duration
	// JobCompletion and Response are the distributions of JobResult.Completion and
	// JobResult.Response over finished jobs (Response over started ones).
	JobCompletion, Response Dist
	// SmallTasks and LargeTasks are the distributions of task turnaround (pending →
	// finished) for tasks whose ideal duration is below WithSmallTask and the rest;
	// SmallRuns and LargeRuns those of their run time (start → finish of the run that
	// finished: input transfer, compression and node speed included, waiting not).
	SmallTasks, LargeTasks, SmallRuns, LargeRuns Dist
	// Jain is the mean of the samples' Jain index over samples with at least two
	// active queues (1 when there is none); JainSamples counts them.
	Jain        float64
	JainSamples int
	// BackloggedJain is the mean of the samples' BackloggedJain over samples with at
	// least two backlogged queues (1 when there is none); BackloggedJainSamples counts
	// them.
	BackloggedJain        float64
	BackloggedJainSamples int
	// HeldJain and HeldBackloggedJain are the means of the samples' HeldJain and
	// HeldBackloggedJain over the samples Jain and BackloggedJain are means over
	// (WithHeldShares; 0 without it).
	HeldJain, HeldBackloggedJain float64
	// Used and Background are exact time averages over [0, makespan] as fractions of
	// capacity; Allocated is the mean of the samples.
	Used, Background, Allocated resource.Vector
	// Placements counts every placement (reruns included); PlacedPredicted those made
	// with a predicted profile; PlacedCompressed those the matcher admitted with
	// compression (match.FitCompressed).
	Placements, PlacedPredicted, PlacedCompressed int
	// OOMKills counts runs killed by a non-compressible overrun (each rerun later);
	// NodeKills counts runs lost to node failures.
	OOMKills, NodeKills int
	// Preemptions counts runs evicted for a task of a higher-priority job
	// (finegrain.Preempted), Reclaims those evicted for a queue below its guarantee
	// (finegrain.Reclaimed); each runs again later. PreemptedWork is the run time the
	// evicted runs of both kinds had done, summed: work lost.
	Preemptions, Reclaims int
	PreemptedWork         time.Duration
	// GangGathers counts the times a gang job (workload.Job.MinMember) gathered:
	// MinMember of its tasks placed together. PartialGangs counts the scheduler
	// decisions after which a gang that had not gathered had some, but fewer than
	// MinMember, of its tasks placed: the all-or-nothing promise broken. It is 0 under
	// a correct scheduler.
	GangGathers, PartialGangs int
	// Backups counts the backup attempts a speculating scheduler launched;
	// BackupsWon those that finished before the task they backed up.
	Backups, BackupsWon int
	// Locality counts runs started node-local, rack-local and off-switch (indexed by
	// fairness.Level) among the runs that read input; NoInput counts the runs that read
	// no input block.
	Locality [3]int
	NoInput  int
	// Compressed is the total task-time spent running compressed.
	Compressed time.Duration
	// Heartbeats and PlaceCalls count scheduler decisions; Reports usage reports;
	// ModeChanges the Alg. 3 mode changes they caused; Recycles the Recycle signals;
	// ObsRejected observations the estimator refused.
	Heartbeats, PlaceCalls, Reports, ModeChanges, Recycles, ObsRejected int
	// Events counts simulation events processed.
	Events int
	// Prediction is how well the predicted profiles foretold what the runs placed on
	// them used (runs that finished; backups left out).
	Prediction PredictionError
	// Redivisions counts the keys whose stages the estimator re-divided
	// (predict.Redivider), for policies with Feedback.
	Redivisions int
	// Colocated is what the co-located applications lost to the tasks (WithBackground,
	// WithYield).
	Colocated ColocatedLoss
	// Mixed is the mixed-workload outcome (docs/methods.md §11): how many
	// latency-sensitive tasks met their SLO, how much the batch tasks were slowed, and
	// what the scale-up rounds did. It is zero when no task is latency-sensitive and
	// the policy runs no scale-up (Policy.ScaleUp).
	Mixed MixedOutcome
}

// MixedOutcome is what a mixed workload — latency-sensitive tasks with SLOs beside
// batch tasks (workload.Task.LatencySensitive, SLO) — got, and what the scale-up rounds
// (Policy.ScaleUp) did to get it.
type MixedOutcome struct {
	// LSTasks counts the latency-sensitive tasks with an SLO. LSMet counts those that
	// finished within their SLO of the start of their first run: a run killed, evicted
	// or lost with its node and run again counts from the first one, and a task that
	// never finished (the time limit) missed it. SLOAttainment is LSMet / LSTasks, 0
	// when LSTasks is 0.
	LSTasks, LSMet int
	SLOAttainment  float64
	// LSSlowdown is the finished latency-sensitive tasks' mean slowdown, as
	// BatchSlowdown's; 0 when none finished.
	LSSlowdown float64
	// BatchTasks counts the finished batch tasks. BatchSlowdown is their mean
	// slowdown: the time from the start of a task's first run to its finish, over its
	// true duration alone on a normal node (TaskResult.Ideal). Input transfer, node
	// speed, compression, resizes and the runs lost to kills, evictions and failures
	// count; the wait before the first run does not. 0 when none finished.
	BatchTasks    int
	BatchSlowdown float64
	// Rounds counts the scale-up rounds run; Stragglers the stragglers they found (a
	// task found in several rounds counts in each); Skipped the planned changes the
	// scheduler refused and the stragglers it could not size
	// (finegrain.ScaleUpRound.Skipped).
	Rounds, Stragglers, Skipped int
	// Expanded, Moved, Reclaimed, Preempted and Restored count the actions carried out,
	// by kind (speculate.Expand, Move, Reclaim, Preempt, Restore; finegrain.ScaleAction).
	Expanded, Moved, Reclaimed, Preempted, Restored int
	// ShrinkKills counts the runs killed because they came to use more of a
	// non-compressible dimension (memory) than a reclaim or preemption had left them,
	// as a container over its memory limit is; each runs again later. They are not in
	// Summary.OOMKills, which counts the nodes' overruns; TaskResult.Kills counts both.
	ShrinkKills int
}

// PredictionError compares, run by run, the profile a task was placed on with what it
// then used. Each true stage of the run is laid on the run's normalised time; its
// predicted peak is the largest demand of the predicted stages over the middle 80% of
// the same share of the prediction's duration (the outer tenths are left out, so that a
// boundary a little off does not count as the neighbouring stage's demand). Dims are
// CPU and memory; stages weigh their run time, since an error costs a scheduler for as
// long as it lasts: MAE is the time-weighted mean of |predicted − true| / true over
// stages whose true peak is positive, Under the share of their time predicted below
// the true peak.
type PredictionError struct {
	// Runs counts the finished runs placed on a predicted profile; Stages their true
	// stages.
	Runs, Stages int
	// MAE and Under per dimension: [0] CPU, [1] memory.
	MAE, Under [2]float64
}

// predErr accumulates PredictionError.
type predErr struct {
	runs, stages int
	n            [2]float64 // seconds of stages with a positive true peak
	abs          [2]float64
	under        [2]float64
}

func (p *predErr) summary() PredictionError {
	out := PredictionError{Runs: p.runs, Stages: p.stages}
	for d := range p.n {
		if p.n[d] > 0 {
			out.MAE[d] = p.abs[d] / p.n[d]
			out.Under[d] = p.under[d] / p.n[d]
		}
	}
	return out
}

// predicted records how the plan a run was placed on compares with the stages it ran.
func (m *metrics) predicted(plan stage.Profile, ran []ranStage) {
	if len(ran) == 0 {
		return
	}
	var total time.Duration
	for _, r := range ran {
		total += r.dur
	}
	pt := float64(plan.Duration())
	dims := [2]int{workload.SlotCPU, workload.SlotMemory}
	m.pred.runs++
	var at time.Duration
	for _, r := range ran {
		a, b := float64(at)/float64(total), float64(at+r.dur)/float64(total)
		at += r.dur
		trim := (b - a) / 10
		lo, hi := time.Duration((a+trim)*pt), time.Duration((b-trim)*pt)
		var pred resource.Tuple
		var off time.Duration
		for i := 0; i < plan.Len(); i++ {
			st := plan.Stage(i)
			if off < max(hi, lo+1) && off+st.Duration > lo {
				pred = pred.Max(st.Demand)
			}
			off += st.Duration
		}
		m.pred.stages++
		for j, d := range dims {
			truth := r.peak[d]
			if truth <= 0 {
				continue
			}
			w := r.dur.Seconds()
			m.pred.n[j] += w
			m.pred.abs[j] += w * math.Abs(float64(pred[d]-truth)) / float64(truth)
			if pred[d] < truth {
				m.pred.under[j] += w
			}
		}
	}
}

// ColocatedLoss is what the co-located applications (WithBackground) did not get of
// their demand because tasks shared their nodes: what the cloud environment costs
// them. It is zero in the dedicated environment, and zero in the cloud when no node is
// ever over-committed on a compressible dimension. Their memory is never taken (a
// task is killed instead), so its Shortfall is 0 under both Yield models; the CPU is
// where they lose.
type ColocatedLoss struct {
	// Shortfall is, per dimension, the share of their demand over the run they did not
	// get: 1 − ∫ got dt ÷ ∫ demand dt, summed over the nodes (0 where they demand
	// nothing).
	Shortfall resource.Vector
	// Squeezed is the share of node-time (nodes × the run's span) during which they got
	// less than their demand on some dimension.
	Squeezed float64
	// Slowdown is how much longer their work takes while squeezed, if it progresses at
	// the share of its demand it gets on its most squeezed dimension (1 − rc): the
	// squeezed node-time over the work it did in it, less 1 — 1/mean(1 − rc) − 1, the
	// mean taken over the squeezed node-time (0 when never squeezed).
	Slowdown float64
}

// colocated condenses the co-located applications' loss over [0, now].
func (m *metrics) colocated(s *Sim) ColocatedLoss {
	var out ColocatedLoss
	for k := 0; k < s.schema.Len(); k++ {
		if m.bgDemInt[k] > 0 {
			out.Shortfall[k] = max(0, 1-m.bgInt[k]/m.bgDemInt[k])
		}
	}
	if span := s.now.Seconds() * float64(len(s.nodes)); span > 0 {
		out.Squeezed = m.squeezedInt / span
	}
	if m.squeezedInt > 0 && m.speedInt > 0 {
		out.Slowdown = m.squeezedInt/m.speedInt - 1
	}
	return out
}

// Timing is the real wall-clock time of the scheduler's decision calls (Heartbeat,
// Place). Not deterministic.
type Timing struct {
	Calls                      int
	Total, Mean, P50, P99, Max time.Duration
}

type timing struct{ d []time.Duration }

func (t *timing) add(d time.Duration) { t.d = append(t.d, d) }

// metrics accumulates what a Result reports.
type metrics struct {
	capacity resource.Tuple
	used     resource.Tuple // tasks' allocated total, cluster-wide
	bgUsed   resource.Tuple
	usedInt  resource.Vector
	bgInt    resource.Vector
	lastInt  time.Duration

	// The co-located applications' loss (Colocated).
	bgDemand    resource.Tuple  // their demand, cluster-wide
	bgDemInt    resource.Vector // ∫ bgDemand dt
	squeezed    int             // nodes where they get less than their demand
	speed       float64         // Σ node.bgSpeed over those nodes
	squeezedInt float64         // ∫ squeezed dt, node·seconds
	speedInt    float64         // ∫ speed dt

	active     []int
	pending    []int // per queue: its tasks pending (submitted, not placed)
	queueAlloc []resource.Tuple
	queueHeld  []resource.Tuple // per queue: what the scheduler holds at the sample (WithHeldShares)
	shares     []float64
	samples    []Sample
	queueSamp  []QueueSample

	events, heartbeats, placeCalls, reports, modeChanges, recycles, obsRejected int
	pred                                                                        predErr
	redivided                                                                   int
	placements, placedPredicted, placedCompressed, oomKills, nodeKills          int
	backups, backupsWon                                                         int
	preemptions, reclaims, gangGathers, partialGangs                            int
	preemptedWork                                                               time.Duration
	evictions                                                                   []EvictionRecord
	locality                                                                    [4]int
	small, large, smallRun, largeRun                                            []time.Duration
	timing                                                                      timing
	mixed                                                                       MixedOutcome // the scale-up counters
}

// killed counts a run killed for memory: by its node's overrun, or over the limit a
// shrink set.
func (m *metrics) killed(shrink bool) {
	if shrink {
		m.mixed.ShrinkKills++
		return
	}
	m.oomKills++
}

// scaleRound counts scale-up round r.
func (m *metrics) scaleRound(r *finegrain.ScaleUpRound) {
	m.mixed.Rounds++
	m.mixed.Stragglers += len(r.Stragglers)
	m.mixed.Skipped += len(r.Skipped)
	for i := range r.Actions {
		switch r.Actions[i].Kind {
		case speculate.Expand:
			m.mixed.Expanded++
		case speculate.Move:
			m.mixed.Moved++
		case speculate.Reclaim:
			m.mixed.Reclaimed++
		case speculate.Preempt:
			m.mixed.Preempted++
		case speculate.Restore:
			m.mixed.Restored++
		}
	}
}

// mixedOutcome condenses the mixed-workload outcome of the run (Summary.Mixed): zero
// when no task is latency-sensitive and no scale-up ran.
func (m *metrics) mixedOutcome(s *Sim) MixedOutcome {
	if !s.hasLS && !s.pol.ScaleUp {
		return MixedOutcome{}
	}
	out := m.mixed
	var ls, batch float64
	lsDone := 0
	for i := range s.tasks {
		t := &s.tasks[i]
		if t.wt.LatencySensitive && t.wt.SLO > 0 {
			out.LSTasks++
			if t.state == tDone && t.finish-t.firstStart <= t.wt.SLO {
				out.LSMet++
			}
		}
		if t.state != tDone {
			continue
		}
		slow := 0.0
		if ideal := t.wt.True.Duration(); ideal > 0 {
			slow = float64(t.finish-t.firstStart) / float64(ideal)
		}
		if t.wt.LatencySensitive {
			ls += slow
			lsDone++
		} else {
			batch += slow
			out.BatchTasks++
		}
	}
	if out.LSTasks > 0 {
		out.SLOAttainment = float64(out.LSMet) / float64(out.LSTasks)
	}
	if lsDone > 0 {
		out.LSSlowdown = ls / float64(lsDone)
	}
	if out.BatchTasks > 0 {
		out.BatchSlowdown = batch / float64(out.BatchTasks)
	}
	return out
}

func (m *metrics) init(s *Sim) {
	m.capacity = s.cl.Capacity()
	m.active = make([]int, len(s.queues))
	m.pending = make([]int, len(s.queues))
	m.queueAlloc = make([]resource.Tuple, len(s.queues))
	if s.cfg.heldShares {
		m.queueHeld = make([]resource.Tuple, len(s.queues))
	}
}

// pendingAdd records d more pending tasks of task t's queue (s.pending's count, per
// queue).
func (m *metrics) pendingAdd(s *Sim, t *simTask, d int) {
	m.pending[s.jobs[t.job].queue] += d
}

func (m *metrics) integrate(now time.Duration) {
	if now <= m.lastInt {
		return
	}
	dt := (now - m.lastInt).Seconds()
	for k := range m.used {
		m.usedInt[k] += float64(m.used[k]) * dt
		m.bgInt[k] += float64(m.bgUsed[k]) * dt
		m.bgDemInt[k] += float64(m.bgDemand[k]) * dt
	}
	m.squeezedInt += float64(m.squeezed) * dt
	m.speedInt += m.speed * dt
	m.lastInt = now
}

// setUsed records that on node n the tasks now get used and the co-located
// applications bg of their demand n.bg, squeezed by bgRC.
func (m *metrics) setUsed(s *Sim, n *node, used, bg resource.Tuple, bgRC resource.Vector) {
	r := slices.Max(bgRC[:])
	sq, speed := r > 0, 0.0
	if sq {
		speed = 1 - r
	}
	if used == n.used && bg == n.bgUsed && n.bg == n.bgSeen && sq == n.bgSq && speed == n.bgSpeed {
		return
	}
	m.integrate(s.now)
	m.used = m.used.Sub(n.used).Add(used)
	m.bgUsed = m.bgUsed.Sub(n.bgUsed).Add(bg)
	m.bgDemand = m.bgDemand.Sub(n.bgSeen).Add(n.bg)
	if n.bgSq {
		m.squeezed--
		m.speed -= n.bgSpeed
	}
	if sq {
		m.squeezed++
		m.speed += speed
	}
	if m.squeezed == 0 {
		m.speed = 0 // no rounding left over from the additions and subtractions
	}
	n.used, n.bgUsed, n.bgSeen, n.bgSq, n.bgSpeed = used, bg, n.bg, sq, speed
}

func (m *metrics) placed(s *Sim, t *simTask, a *finegrain.Assignment) {
	m.placements++
	if a.Predicted {
		m.placedPredicted++
	}
	if a.Result.Compressed() {
		m.placedCompressed++
	}
	q := s.jobs[t.job].queue
	m.queueAlloc[q] = m.queueAlloc[q].Add(t.peak)
}

// evicted records eviction e, which lost run time lost.
func (m *metrics) evicted(s *Sim, e *finegrain.Eviction, lost time.Duration) {
	if e.Reason == finegrain.Reclaimed {
		m.reclaims++
	} else {
		m.preemptions++
	}
	m.preemptedWork += lost
	m.evictions = append(m.evictions, EvictionRecord{At: s.now, Task: e.Task, Job: e.Job, Node: e.Node, For: e.For, Reason: e.Reason, Lost: lost})
}

func (m *metrics) unplaced(s *Sim, t *simTask) {
	q := s.jobs[t.job].queue
	m.queueAlloc[q] = m.queueAlloc[q].Sub(t.peak)
	t.peak = resource.Tuple{}
}

func (m *metrics) taskDone(s *Sim, t *simTask) {
	m.unplaced(s, t)
	d, run := t.finish-t.submitted, t.finish-t.start
	if t.wt.True.Duration() < s.cfg.smallTask {
		m.small, m.smallRun = append(m.small, d), append(m.smallRun, run)
	} else {
		m.large, m.largeRun = append(m.large, d), append(m.largeRun, run)
	}
}

// sample records the cluster-wide metrics at now.
func (s *Sim) sample() {
	m := &s.m
	capa := m.capacity.Float()
	frac := func(t resource.Tuple) resource.Vector {
		var v resource.Vector
		for k := 0; k < s.schema.Len(); k++ {
			if capa[k] > 0 {
				v[k] = float64(t[k]) / capa[k]
			}
		}
		return v
	}
	var alloc resource.Tuple
	for _, n := range s.nodes {
		if !n.up {
			continue
		}
		free, err := s.sched.NodeFree(n.spec.ID, s.now)
		if err != nil {
			continue // the node is up here; a scheduler that lost it shows nothing allocated
		}
		alloc = alloc.Add(n.adv.Sub(free))
	}
	sm := Sample{At: s.now, Used: frac(m.used), Background: frac(m.bgUsed), Allocated: frac(alloc),
		Running: s.running, Pending: s.pending}
	backlogged := func(q int) bool { return m.active[q] > 0 && m.pending[q] > 0 }
	active := func(q int) bool { return m.active[q] > 0 }
	sm.ActiveQueues, sm.Jain = m.jain(m.queueAlloc, active)
	sm.Backlogged, sm.BackloggedJain = m.jain(m.queueAlloc, backlogged)
	if s.cfg.heldShares {
		s.heldByQueue()
		_, sm.HeldJain = m.jain(m.queueHeld, active)
		_, sm.HeldBackloggedJain = m.jain(m.queueHeld, backlogged)
	}
	m.samples = append(m.samples, sm)
	if s.cfg.queueSample {
		s.sampleQueues()
	}
	if s.cfg.progress != nil {
		s.cfg.progress(s.progress())
	}
}

// jain counts the queues q for which in(q) holds and returns Jain's index over their
// dominant shares of alloc (indexed by queue): 1 when fewer than two are counted.
func (m *metrics) jain(alloc []resource.Tuple, in func(q int) bool) (int, float64) {
	m.shares = m.shares[:0]
	for q := range alloc {
		if in(q) {
			m.shares = append(m.shares, max(0, alloc[q].DominantShare(m.capacity)))
		}
	}
	if len(m.shares) < 2 {
		return len(m.shares), 1
	}
	j, err := fairness.Jain(m.shares)
	if err != nil {
		return len(m.shares), 1
	}
	return len(m.shares), j
}

// allocator is the optional call through which the simulator reads what the
// scheduler holds for a placed task at an instant (finegrain.Scheduler.Allocation):
// WithHeldShares.
type allocator interface {
	Allocation(id string, at time.Duration) (finegrain.Allocation, error)
}

var _ allocator = (*finegrain.Scheduler)(nil)

// heldByQueue sets m.queueHeld to what the scheduler holds, now, for each queue's
// running tasks (WithHeldShares): the reservation's demand now, as the scheduler's
// Allocation call gives it; for a scheduler without that call (or one that does not
// know the task placed), the stage of the profile the task was placed on in force now,
// counted from the start of its run (nothing once the profile has ended). Backup
// attempts are left out, as they are of the queues' allocations.
func (s *Sim) heldByQueue() {
	m := &s.m
	clear(m.queueHeld)
	a, _ := s.sched.(allocator)
	for _, n := range s.nodes {
		for _, x := range n.running {
			if x.backup {
				continue
			}
			t := x.task
			held := t.hold.At(s.now - t.start)
			if a != nil {
				if al, err := a.Allocation(t.wt.ID, s.now); err == nil {
					held = al.Held
				}
			}
			q := s.jobs[t.job].queue
			m.queueHeld[q] = m.queueHeld[q].Add(held)
		}
	}
}

// sampleQueues records one QueueSample per queue at now (WithQueueSamples).
func (s *Sim) sampleQueues() {
	m := &s.m
	first := len(m.queueSamp)
	for q, name := range s.queues {
		m.queueSamp = append(m.queueSamp, QueueSample{At: s.now, Queue: name, Active: m.active[q], Pending: m.pending[q],
			Share: max(0, m.queueAlloc[q].DominantShare(m.capacity))})
		if m.queueHeld != nil {
			m.queueSamp[len(m.queueSamp)-1].HeldShare = max(0, m.queueHeld[q].DominantShare(m.capacity))
		}
	}
	for i := range s.tasks {
		t := &s.tasks[i]
		qs := &m.queueSamp[first+s.jobs[t.job].queue]
		switch t.state {
		case tRunning:
			qs.Running++
		case tPending, tReserved:
			qs.OldestPending = max(qs.OldestPending, s.now-t.submitted)
		}
	}
}

// meanJain is the mean of a Jain index over the samples where it covers at least two
// queues, and how many those are; 1 when there is none. of gives a sample's number of
// queues and index.
func meanJain(samples []Sample, of func(*Sample) (queues int, jain float64)) (float64, int) {
	total, n := 0.0, 0
	for i := range samples {
		if q, j := of(&samples[i]); q >= 2 {
			total += j
			n++
		}
	}
	if n == 0 {
		return 1, 0
	}
	return total / float64(n), n
}

func (m *metrics) result(s *Sim) *Result {
	m.integrate(s.now)
	r := &Result{Policy: s.pol.Name, Workload: s.w.Name, Cluster: s.cl.Name, Mode: s.cfg.mode,
		Cloud: s.cfg.background != nil, Samples: m.samples, QueueSamples: m.queueSamp, Evictions: m.evictions}
	for k := 0; k < s.schema.Len(); k++ {
		r.Dims = append(r.Dims, s.schema.DimName(k))
	}
	r.Jobs = make([]JobResult, len(s.jobs))
	var jct, resp []time.Duration
	first, last := time.Duration(-1), time.Duration(0)
	for i := range s.jobs {
		sj := &s.jobs[i]
		jr := JobResult{ID: sj.wj.ID, Queue: sj.wj.Queue, App: sj.wj.App, Tasks: len(sj.wj.Tasks),
			Priority: sj.wj.Priority, MinMember: sj.wj.MinMember, Submit: sj.wj.Submit, Finished: sj.left == 0}
		for k := range sj.wj.Tasks {
			t := &s.tasks[sj.firstTask+int32(k)]
			jr.Evictions += int(t.evictions)
			jr.Lost += t.lost
		}
		if first < 0 || jr.Submit < first {
			first = jr.Submit
		}
		if sj.started {
			jr.FirstStart = sj.first
			resp = append(resp, jr.Response())
		}
		if jr.Finished {
			jr.Done = sj.done
			jct = append(jct, jr.Completion())
			last = max(last, jr.Done)
		}
		r.Jobs[i] = jr
	}
	if s.cfg.records {
		r.Tasks = make([]TaskResult, len(s.tasks))
		for i := range s.tasks {
			t := &s.tasks[i]
			tr := TaskResult{ID: t.wt.ID, Job: s.jobs[t.job].wj.ID, Kind: t.wt.Kind, Submitted: t.submitted,
				Start: t.start, Finish: t.finish, Ideal: t.wt.True.Duration(), Compressed: t.compressed,
				Kills: int(t.kills), Evictions: int(t.evictions), Lost: t.lost, Locality: t.locality.level(), NoInput: t.locality == noInput}
			if t.ranOn >= 0 {
				tr.Node = s.cl.Nodes[t.ranOn].ID
			}
			r.Tasks[i] = tr
		}
	}
	var compressed time.Duration
	for i := range s.tasks {
		compressed += s.tasks[i].compressed
	}
	sum := &r.Summary
	sum.Jobs, sum.JobsFinished, sum.Tasks = len(s.jobs), s.jobsDone, len(s.tasks)
	if first >= 0 && last > first {
		sum.Makespan = last - first
	}
	sum.JobCompletion, sum.Response = dist(jct), dist(resp)
	sum.SmallTasks, sum.LargeTasks = dist(m.small), dist(m.large)
	sum.SmallRuns, sum.LargeRuns = dist(m.smallRun), dist(m.largeRun)
	sum.Jain, sum.JainSamples = meanJain(m.samples, func(sm *Sample) (int, float64) { return sm.ActiveQueues, sm.Jain })
	sum.BackloggedJain, sum.BackloggedJainSamples = meanJain(m.samples, func(sm *Sample) (int, float64) { return sm.Backlogged, sm.BackloggedJain })
	if s.cfg.heldShares {
		sum.HeldJain, _ = meanJain(m.samples, func(sm *Sample) (int, float64) { return sm.ActiveQueues, sm.HeldJain })
		sum.HeldBackloggedJain, _ = meanJain(m.samples, func(sm *Sample) (int, float64) { return sm.Backlogged, sm.HeldBackloggedJain })
	}
	capa := m.capacity.Float()
	if span := s.now.Seconds(); span > 0 {
		for k := 0; k < s.schema.Len(); k++ {
			if capa[k] > 0 {
				sum.Used[k] = m.usedInt[k] / span / capa[k]
				sum.Background[k] = m.bgInt[k] / span / capa[k]
			}
		}
	}
	if len(m.samples) > 0 {
		for _, sm := range m.samples {
			for k := range sum.Allocated {
				sum.Allocated[k] += sm.Allocated[k]
			}
		}
		for k := range sum.Allocated {
			sum.Allocated[k] /= float64(len(m.samples))
		}
	}
	sum.Placements, sum.PlacedPredicted, sum.PlacedCompressed = m.placements, m.placedPredicted, m.placedCompressed
	sum.OOMKills, sum.NodeKills, sum.Compressed = m.oomKills, m.nodeKills, compressed
	copy(sum.Locality[:], m.locality[:noInput])
	sum.NoInput = m.locality[noInput]
	sum.Heartbeats, sum.PlaceCalls, sum.Reports = m.heartbeats, m.placeCalls, m.reports
	sum.Backups, sum.BackupsWon = m.backups, m.backupsWon
	sum.Preemptions, sum.Reclaims, sum.PreemptedWork = m.preemptions, m.reclaims, m.preemptedWork
	sum.GangGathers, sum.PartialGangs = m.gangGathers, m.partialGangs
	sum.ModeChanges, sum.Recycles, sum.ObsRejected, sum.Events = m.modeChanges, m.recycles, m.obsRejected, m.events
	sum.Prediction, sum.Redivisions = m.pred.summary(), m.redivided
	sum.Colocated = m.colocated(s)
	sum.Mixed = m.mixedOutcome(s)
	if s.cfg.timing {
		r.Timing = m.timing.summary()
	}
	return r
}

func (t *timing) summary() *Timing {
	d := dist(t.d)
	var total time.Duration
	for _, x := range t.d {
		total += x
	}
	return &Timing{Calls: d.N, Total: total, Mean: d.Mean, P50: d.P50, P99: d.P99, Max: d.Max}
}

// dist summarises xs (sorting it): mean, nearest-rank percentiles, max.
func dist(xs []time.Duration) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	slices.Sort(xs)
	total := 0.0
	for _, x := range xs {
		total += float64(x)
	}
	pct := func(p float64) time.Duration {
		i := int(p*float64(len(xs))+0.999999999) - 1
		return xs[max(0, min(len(xs)-1, i))]
	}
	return Dist{N: len(xs), Mean: time.Duration(total / float64(len(xs))), P50: pct(0.50), P95: pct(0.95), P99: pct(0.99), Max: xs[len(xs)-1]}
}
