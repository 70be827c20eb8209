package speculate

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// LATE's defaults, as Hadoop sets them (PRRL thesis Table 3.2; docs/methods.md §8).
const (
	// DefaultSpeculativeCap is the largest share of a job's running tasks that may have
	// a backup running (eq. 2.2).
	DefaultSpeculativeCap = 0.1
	// DefaultSlowTaskThreshold is slowTaskThreshold of eq. 2.3 / 3.3, in standard
	// deviations of the finished tasks' progress rates.
	DefaultSlowTaskThreshold = predict.DefaultSlowTaskThreshold
	// DefaultSlowNodeThreshold is slowNodeThreshold of eq. 2.1, in standard deviations
	// of the finished tasks' progress rates.
	DefaultSlowNodeThreshold = 1.0
	// DefaultMinRuntime is how long a task must have run before it may be backed up.
	DefaultMinRuntime = 60 * time.Second
)

// config holds the speculation thresholds shared by LATE and PRRL.
type config struct {
	cap        float64
	slowTask   float64
	slowNode   float64
	minRuntime time.Duration
}

func defaultConfig() config {
	return config{
		cap:        DefaultSpeculativeCap,
		slowTask:   DefaultSlowTaskThreshold,
		slowNode:   DefaultSlowNodeThreshold,
		minRuntime: DefaultMinRuntime,
	}
}

// Option configures NewLATE and NewPRRL. Every option is validated when the speculator
// is built; a bad one fails the constructor with an error naming it.
type Option func(*config) error

// WithSpeculativeCap sets speculativeCap (eq. 2.2): a backup may start only while
// backups running / tasks running < cap. It must be in (0, 1]; the default is
// DefaultSpeculativeCap.
func WithSpeculativeCap(x float64) Option {
	return func(c *config) error {
		if !(x > 0 && x <= 1) {
			return fieldErr("speculative cap", x, ErrInvalidOption)
		}
		c.cap = x
		return nil
	}
}

// WithSlowTaskThreshold sets slowTaskThreshold (eq. 2.3 / 3.3): a task is slow when its
// progress rate is more than this many standard deviations below the finished tasks'
// mean. It must be a finite number ≥ 0; the default is DefaultSlowTaskThreshold.
func WithSlowTaskThreshold(x float64) Option {
	return func(c *config) error {
		if !field.Finite(x) || x < 0 {
			return fieldErr("slow task threshold", x, ErrInvalidOption)
		}
		c.slowTask = x
		return nil
	}
}

// WithSlowNodeThreshold sets slowNodeThreshold (eq. 2.1): LATE launches no backup on a
// node whose finished tasks' mean rate is more than this many standard deviations below
// the mean of all finished tasks. It must be a finite number ≥ 0; the default is
// DefaultSlowNodeThreshold. PRRL does not use it (see PRRL).
func WithSlowNodeThreshold(x float64) Option {
	return func(c *config) error {
		if !field.Finite(x) || x < 0 {
			return fieldErr("slow node threshold", x, ErrInvalidOption)
		}
		c.slowNode = x
		return nil
	}
}

// WithMinRuntime sets how long a task must have run before it may be backed up (LATE's
// candidate condition 3; 60 s by default). It must be ≥ 0.
func WithMinRuntime(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fieldErr("minimum runtime", d, ErrInvalidOption)
		}
		c.minRuntime = d
		return nil
	}
}

func buildConfig(opts []Option) (config, error) {
	cfg := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return config{}, fieldErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

// Speculator decides, when a free resource asks a job for work, whether to start one of
// the job's unstarted tasks, back up one of its running tasks, or do nothing
// (docs/methods.md §8, §9). LATE and PRRL implement it; an embedder may substitute its
// own. Implementations must be safe for concurrent use.
type Speculator interface {
	// Speculate returns the decision for the free resource described by req, offered
	// to job. It fails on bad input (see Job and Request) and then decides nothing.
	Speculate(job Job, req Request) (Decision, error)
}

// Job is what a speculator needs to know about the job a free resource is offered to.
type Job struct {
	// Tasks is the progress model of the job's running tasks — their progress, rate and
	// time left, the per-node and overall statistics of the finished ones (docs/methods.md
	// §8). It describes the original attempts; backups are told through Backups. One
	// predict.ProgressTracker per job (or per job and task kind) fits. Required.
	Tasks predict.RuntimeEstimator
	// Unstarted is the number of the job's tasks not started yet. A new task always
	// comes before a backup (Alg. 3.1 line 2, as in Hadoop): when it is positive the
	// decision is RunUnstarted.
	Unstarted int
	// Backups holds the running tasks that have a backup attempt running (value true).
	// Such a task is not backed up again (LATE's condition 2), and their number is the
	// speculativeTaskCount of the cap (eq. 2.2).
	Backups map[string]bool
	// FailedOn lists, per task, the nodes where an attempt of it failed: the task is
	// not backed up on those nodes (LATE's condition 1).
	FailedOn map[string][]string
}

// BusySlot is a slot (a container, a share of a node) that a running task holds and
// will release when the task ends: a pre-release resource of docs/methods.md §9 and §10.
type BusySlot struct {
	// Task is the running task holding the slot.
	Task string
	// Node is the node the slot is on.
	Node string
	// TimeLeft is when the slot frees, as an offset from now: the task's time left
	// (eq. 3.4). Must be ≥ 0.
	TimeLeft time.Duration
}

// Request describes the free resource asking for work.
type Request struct {
	// Node is the node of the free slot. Required.
	Node string
	// Now is the current time (an offset from the embedder's epoch, ≥ 0); progress is
	// read as of now.
	Now time.Duration
	// Busy lists busy slots other than those of the job's own running tasks that PRRL
	// should count as pre-release resources — slots of other jobs the embedder knows
	// the time left of. The job's own running tasks always count. LATE ignores it.
	Busy []BusySlot
}

// Action is what a speculator decided.
type Action uint8

// The actions.
const (
	// None: the free resource gets nothing from this job. Decision.Reason says why.
	None Action = iota
	// RunUnstarted: start one of the job's unstarted tasks on the free resource (the
	// embedder picks which, e.g. by data locality).
	RunUnstarted
	// Backup: start a backup attempt of Decision.Task on the free resource.
	Backup
)

// String names the action.
func (a Action) String() string {
	switch a {
	case None:
		return "none"
	case RunUnstarted:
		return "run-unstarted"
	case Backup:
		return "backup"
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// Reason says why a speculator decided what it did.
type Reason uint8

// The reasons.
const (
	// ReasonUnstarted: the job has unstarted tasks, which come first.
	ReasonUnstarted Reason = iota
	// ReasonBackup: a task is backed up.
	ReasonBackup
	// ReasonNoSlowTask: no running task is a candidate — none is slow (eq. 3.3), or
	// every slow one is too young, already backed up, or failed on this node.
	ReasonNoSlowTask
	// ReasonSlowNode: the requesting node is too slow to host a backup (LATE, eq. 2.1).
	ReasonSlowNode
	// ReasonAtCap: as many backups run as the speculative cap allows (eq. 2.2).
	ReasonAtCap
	// ReasonFasterResources: at least as many faster resources will free up as there
	// are slow tasks, so the slow tasks wait for those (PRRL, Alg. 3.1 step 3: M > N).
	ReasonFasterResources
	// ReasonNotFaster: the backup would not finish before the task it backs up (PRRL,
	// Alg. 3.1 step 4).
	ReasonNotFaster
)

// String names the reason.
func (r Reason) String() string {
	switch r {
	case ReasonUnstarted:
		return "unstarted task first"
	case ReasonBackup:
		return "backup"
	case ReasonNoSlowTask:
		return "no slow task"
	case ReasonSlowNode:
		return "slow node"
	case ReasonAtCap:
		return "at speculative cap"
	case ReasonFasterResources:
		return "faster resources will free up"
	case ReasonNotFaster:
		return "backup would not finish first"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Decision is a speculator's answer and the figures it rests on.
type Decision struct {
	// Action is what to do with the free resource.
	Action Action
	// Reason says why.
	Reason Reason
	// Task is the task to back up (Action Backup); empty otherwise.
	Task string
	// TimeLeft is the backed-up task's time left (eq. 3.4); for PRRL's ReasonNotFaster
	// it is that of the task the free resource was compared with, slowTask[M].
	TimeLeft time.Duration
	// Finish is how long a backup would take on the requesting resource,
	// 1/progressRate(node) (eq. 3.5); 0 when not computed.
	Finish time.Duration
	// SlowTasks is the number of candidate slow tasks (N of Alg. 3.1).
	SlowTasks int
	// Resources is the size of the pre-release resource list, the requesting resource
	// included (M of Alg. 3.1); 0 for LATE.
	Resources int
}

// BackupFinish is eq. 3.5 and 3.6: how long after now a backup started on a node whose
// task-processing rate is nodeRate (progress per second) finishes, when the slot frees
// after wait — 1.0/nodeRate + wait. wait is 0 for a free resource (eq. 3.5) and the time
// left of the task holding a pre-release resource (eq. 3.6). A rate of 0 never finishes
// (stage.Forever); the result saturates at stage.Forever. It fails on a negative or NaN
// rate or a negative wait.
func BackupFinish(nodeRate float64, wait time.Duration) (time.Duration, error) {
	if !(nodeRate >= 0) || math.IsInf(nodeRate, 0) {
		return 0, fieldErr("node rate", nodeRate, ErrInvalidValue)
	}
	if wait < 0 {
		return 0, fieldErr("wait", wait, ErrBadTime)
	}
	return backupFinish(nodeRate, wait), nil
}

func backupFinish(rate float64, wait time.Duration) time.Duration {
	if !(rate > 0) {
		return stage.Forever
	}
	return stage.AddSat(stage.Seconds(1/rate), wait)
}

// scratch is the per-decision working memory, pooled so that a decision allocates
// nothing once warm.
type scratch struct {
	tasks []predict.TaskProgress
	slow  []slowEntry
	rates map[string]float64
}

var scratchPool = sync.Pool{New: func() any { return &scratch{rates: make(map[string]float64)} }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	const keep = 1 << 18 // do not pin huge buffers
	if cap(s.tasks) > keep || cap(s.slow) > keep || len(s.rates) > keep {
		return
	}
	clear(s.tasks) // drop string references
	s.tasks = s.tasks[:0]
	s.slow = s.slow[:0]
	clear(s.rates)
	scratchPool.Put(s)
}

// snapshot is a validated view of a job as of a request.
type snapshot struct {
	tasks    []predict.TaskProgress
	finished predict.RateStats
	backups  int
}

// checkRequest validates what every speculator reads.
func checkRequest(job Job, req Request) error {
	if job.Tasks == nil {
		return fieldErr("Job.Tasks", "nil", ErrInvalidValue)
	}
	if job.Unstarted < 0 {
		return fieldErr("Job.Unstarted", job.Unstarted, ErrInvalidValue)
	}
	if req.Node == "" {
		return fieldErr("Request.Node", req.Node, ErrEmptyID)
	}
	if req.Now < 0 {
		return fieldErr("Request.Now", req.Now, ErrBadTime)
	}
	for i, b := range req.Busy {
		if f, v, err := checkBusy(b); err != nil {
			return fieldErr(fmt.Sprintf("Request.Busy[%d].%s", i, f), v, err)
		}
	}
	return nil
}

// checkBusy returns the field of b that is bad, its value and the sentinel, or a nil
// error.
func checkBusy(b BusySlot) (string, any, error) {
	switch {
	case b.Task == "":
		return "Task", b.Task, ErrEmptyID
	case b.Node == "":
		return "Node", b.Node, ErrEmptyID
	case b.TimeLeft < 0:
		return "TimeLeft", b.TimeLeft, ErrBadTime
	}
	return "", nil, nil
}

// load reads and validates the job's running tasks and finished statistics into s.
func load(job Job, req Request, s *scratch) (snapshot, error) {
	s.tasks = job.Tasks.Running(req.Now, s.tasks[:0])
	snap := snapshot{tasks: s.tasks, finished: job.Tasks.Finished()}
	if f, v := checkStats(snap.finished); f != "" {
		return snapshot{}, fieldErr("Job.Tasks.Finished()."+f, v, ErrInvalidValue)
	}
	for i := range snap.tasks {
		t := &snap.tasks[i]
		if err := checkProgress(i, t); err != nil {
			return snapshot{}, err
		}
		if i > 0 && t.Task <= snap.tasks[i-1].Task {
			if t.Task == snap.tasks[i-1].Task {
				return snapshot{}, fieldErr(fmt.Sprintf("Job.Tasks.Running()[%d].Task", i), t.Task, ErrDuplicate)
			}
			return snapshot{}, fieldErr(fmt.Sprintf("Job.Tasks.Running()[%d].Task", i), t.Task+" (not in ascending ID order)", ErrInvalidValue)
		}
	}
	for task, on := range job.Backups {
		if on {
			snap.backups++
		}
		if task == "" {
			return snapshot{}, fieldErr("Job.Backups", task, ErrEmptyID)
		}
	}
	return snap, nil
}

func checkProgress(i int, t *predict.TaskProgress) error {
	tf := func(f string) string { return fmt.Sprintf("Job.Tasks.Running()[%d].%s", i, f) }
	switch {
	case t.Task == "":
		return fieldErr(tf("Task"), t.Task, ErrEmptyID)
	case t.Node == "":
		return fieldErr(tf("Node"), t.Node, ErrEmptyID)
	case !(t.Progress >= 0 && t.Progress <= 1):
		return fieldErr(tf("Progress"), t.Progress, ErrBadProgress)
	case !field.Finite(t.Rate) || t.Rate < 0:
		return fieldErr(tf("Rate"), t.Rate, ErrInvalidValue)
	case t.Elapsed < 0:
		return fieldErr(tf("Elapsed"), t.Elapsed, ErrBadTime)
	case t.TimeLeft < 0:
		return fieldErr(tf("TimeLeft"), t.TimeLeft, ErrBadTime)
	}
	return nil
}

// checkStats returns the field of r that is not a finite number ≥ 0, and its value; ""
// when all are.
func checkStats(r predict.RateStats) (string, any) {
	switch {
	case r.N < 0:
		return "N", r.N
	case !field.Finite(r.Mean) || r.Mean < 0:
		return "Mean", r.Mean
	case !field.Finite(r.Std) || r.Std < 0:
		return "Std", r.Std
	}
	return "", nil
}

// candidate reports LATE's candidate conditions 1–4 for task t and the requesting node:
// not failed there before, no backup running, run longer than the minimum runtime, and
// slow by eq. 3.3 (predict.IsSlowTask with the configured threshold).
func (c *config) candidate(job Job, node string, t *predict.TaskProgress, fin predict.RateStats) bool {
	if t.Progress >= 1 || t.Elapsed <= c.minRuntime || job.Backups[t.Task] {
		return false
	}
	if !predict.IsSlowTask(t.Rate, fin, c.slowTask) {
		return false
	}
	for _, n := range job.FailedOn[t.Task] {
		if n == node {
			return false
		}
	}
	return true
}

// atCap reports whether eq. 2.2 forbids another backup: backups/running ≥ cap.
func (c *config) atCap(backups, running int) bool {
	return running == 0 || float64(backups) >= c.cap*float64(running)
}

// nodeRate returns the task-processing rate of node (PRRL §3.2.2: the mean progress
// rate of the tasks finished there), caching it in rates.
//
// Reading: the thesis does not say what rate a node that has finished none of the job's
// tasks has; we take the mean rate of all finished tasks, i.e. an average node.
func nodeRate(est predict.RuntimeEstimator, node string, fin predict.RateStats, rates map[string]float64) (float64, error) {
	if r, ok := rates[node]; ok {
		return r, nil
	}
	r := fin.Mean
	if st, ok := est.NodeRate(node); ok && st.N > 0 {
		if f, v := checkStats(st); f != "" {
			return 0, fieldErr(fmt.Sprintf("Job.Tasks.NodeRate(%q).%s", node, f), v, ErrInvalidValue)
		}
		r = st.Mean
	}
	rates[node] = r
	return r, nil
}
