package predict

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/google/btree"

	"github.com/finegrain/finegrain/stage"
)

// RuntimeEstimator is the progress model speculation reads (docs/methods.md §8, §9): for
// each running task its progress, rate and time left; per node the rate of the tasks it
// finished; for the finished tasks their mean and spread. It plays the part of Hadoop's
// TaskRuntimeEstimator (estimatedRuntime ↔ TaskProgress.TimeLeft, the per-node and
// finished statistics ↔ its thresholdRuntime inputs); ProgressTracker is the default,
// LATE's linear model, and an embedder may substitute a smoother or a learned one.
// Implementations must be safe for concurrent use.
type RuntimeEstimator interface {
	// Task returns the state of running task id as of now, or false when the task is
	// not running (never started, finished or abandoned).
	Task(id string, now time.Duration) (TaskProgress, bool)
	// Running appends the state of every running task as of now to dst, in ascending
	// order of task ID, and returns the extended slice.
	Running(now time.Duration, dst []TaskProgress) []TaskProgress
	// NodeRate returns the rate statistics of the tasks finished on node: the node's
	// task-processing rate is their mean (PRRL §3.2.2). false when none finished there.
	NodeRate(node string) (RateStats, bool)
	// Finished returns the rate statistics of all finished tasks, the input of the
	// slow-task test (eq. 3.3).
	Finished() RateStats
}

// ProgressObserver is how a progress model is fed (Hadoop's enrollAttempt and
// updateAttempt, plus the ends of an attempt). A rejected call changes nothing.
type ProgressObserver interface {
	// Start records that task id started on node at time at.
	Start(id, node string, at time.Duration) error
	// Update records the task's progress (eq. 3.1, in [0, 1]) as measured at time at.
	Update(id string, progress float64, at time.Duration) error
	// Finish records that the task completed at time at; its rate joins the finished
	// statistics of its node and of the whole.
	Finish(id string, at time.Duration) error
	// Abandon forgets a running task without counting it as finished (it failed, was
	// killed, or lost the race to its backup).
	Abandon(id string) error
}

// TaskProgress is a running task's state as of a given time, in the terms of
// docs/methods.md §8.
type TaskProgress struct {
	// Task and Node identify the task and the node it runs on.
	Task, Node string
	// Start is when the task started; Updated when its progress was last reported
	// (Start if never).
	Start, Updated time.Duration
	// Progress is the last reported progress, in [0, 1] (eq. 3.1).
	Progress float64
	// Elapsed is Trun, the time the task has been running: now − Start (counted from
	// Updated when now is earlier than the last report, never negative).
	Elapsed time.Duration
	// Rate is the progress rate, Progress / Elapsed per second (eq. 3.2); 0 when
	// Elapsed is 0.
	Rate float64
	// TimeLeft is (1 − Progress)/Rate (eq. 3.4): 0 when Progress is 1, stage.Forever
	// when Rate is 0.
	TimeLeft time.Duration
	// Slow reports the slow-task test (eq. 3.3) against the finished tasks, with the
	// tracker's threshold.
	Slow bool
}

type trackerConfig struct {
	slowThreshold float64
}

// TrackerOption configures NewProgressTracker.
type TrackerOption func(*trackerConfig) error

// WithSlowTaskThreshold sets LATE's slowTaskThreshold for TaskProgress.Slow (default
// DefaultSlowTaskThreshold); it must be a finite number ≥ 0.
func WithSlowTaskThreshold(x float64) TrackerOption {
	return func(c *trackerConfig) error {
		if !field.Finite(x) || x < 0 {
			return fieldErr("slow task threshold", x, ErrInvalidOption)
		}
		c.slowThreshold = x
		return nil
	}
}

// ProgressTracker is the default RuntimeEstimator and ProgressObserver: LATE's progress
// model (docs/methods.md §8). The rate of a running task is its last reported progress
// over the time it has run (eq. 3.2), its time left the remaining progress at that rate
// (eq. 3.4); a finished task's rate is 1 over its run time. Finished tasks are kept only
// as running statistics (per node and overall, Welford's method), so memory grows with
// running tasks and nodes, not with history.
//
// One tracker describes one population of comparable tasks — LATE compares a task with
// the finished tasks of the same job, and PRRL notes that a node may be slow for maps and
// fast for reduces — so use one per job, or per job and task kind.
//
// ProgressTracker is safe for concurrent use.
type ProgressTracker struct {
	cfg trackerConfig

	mu       sync.RWMutex
	running  map[string]*taskState
	byID     *btree.BTreeG[*taskState] // the running tasks in ID order, for Running, but those in added
	added    []*taskState              // tasks started since Running last brought byID up to date
	nodes    map[string]*rateAcc
	finished rateAcc
	spare    []*taskState // states of tasks forgotten, for reuse by Start (at most maxSpare)
}

const (
	// maxSpare bounds the task states a ProgressTracker keeps for reuse.
	maxSpare = 1024
)

type taskState struct {
	id, node       string
	start, updated time.Duration
	progress       float64
	added          int // 1 + its position in ProgressTracker.added; 0 once in byID
}

// NewProgressTracker returns an empty tracker. It fails on an invalid option.
func NewProgressTracker(opts ...TrackerOption) (*ProgressTracker, error) {
	cfg := trackerConfig{slowThreshold: DefaultSlowTaskThreshold}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &ProgressTracker{
		cfg:     cfg,
		running: make(map[string]*taskState),
		byID:    btree.NewG(16, func(a, b *taskState) bool { return a.id < b.id }),
		nodes:   make(map[string]*rateAcc),
	}, nil
}

// Start implements ProgressObserver. It fails on an empty ID or node, or an ID already
// running.
func (t *ProgressTracker) Start(id, node string, at time.Duration) error {
	if id == "" {
		return fieldErr("task", id, ErrEmptyID)
	}
	if node == "" {
		return fieldErr("node", node, ErrEmptyID)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.running[id]; ok {
		return fieldErr("task", id, ErrDuplicateTask)
	}
	var ts *taskState
	if k := len(t.spare); k > 0 {
		ts, t.spare = t.spare[k-1], t.spare[:k-1]
	} else {
		ts = new(taskState)
	}
	*ts = taskState{id: id, node: node, start: at, updated: at}
	t.running[id] = ts
	// The task joins the ordered index only when Running next asks for it: a tracker
	// whose Running is not called (the cluster's; a job's until it has no pending
	// task left to speculate on) never orders its tasks, and a task that starts and
	// ends in between costs no search of the index. The first Running after many
	// starts orders them all, under the write lock.
	t.added = append(t.added, ts)
	ts.added = len(t.added)
	return nil
}

// index brings the ordered index up to date with the tasks started. The caller holds
// t.mu for writing.
func (t *ProgressTracker) index() {
	for i, ts := range t.added {
		ts.added = 0
		t.byID.ReplaceOrInsert(ts)
		t.added[i] = nil
	}
	t.added = t.added[:0]
}

// Update implements ProgressObserver. It fails on an unknown task, a progress outside
// [0, 1] or below the last one reported, or a time before the task's start or its last
// report.
func (t *ProgressTracker) Update(id string, progress float64, at time.Duration) error {
	if err := checkProgress("progress", progress); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.running[id]
	if s == nil {
		return fieldErr("task", id, ErrUnknownTask)
	}
	if at < s.updated {
		return fieldErr("update time", at, ErrBadTime)
	}
	if progress < s.progress {
		return fieldErr("progress", progress, ErrBadProgress)
	}
	s.progress, s.updated = progress, at
	return nil
}

// Finish implements ProgressObserver. It fails on an unknown task, or a time that is
// not after the start or is before the last report.
func (t *ProgressTracker) Finish(id string, at time.Duration) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.running[id]
	if s == nil {
		return fieldErr("task", id, ErrUnknownTask)
	}
	if at <= s.start || at-s.start <= 0 { // the second: the difference overflowed
		return fieldErr("finish time", at, ErrBadDuration)
	}
	if at < s.updated {
		return fieldErr("finish time", at, ErrBadTime)
	}
	rate := 1 / (at - s.start).Seconds()
	acc := t.nodes[s.node]
	if acc == nil {
		acc = new(rateAcc)
		t.nodes[s.node] = acc
	}
	acc.add(rate)
	t.finished.add(rate)
	t.forget(s)
	return nil
}

// Abandon implements ProgressObserver. It fails on an unknown task.
func (t *ProgressTracker) Abandon(id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.running[id]
	if s == nil {
		return fieldErr("task", id, ErrUnknownTask)
	}
	t.forget(s)
	return nil
}

// forget drops running task s; its state is kept for reuse (nothing else refers to
// it: readers get copies).
func (t *ProgressTracker) forget(s *taskState) {
	delete(t.running, s.id)
	if i := s.added - 1; i >= 0 {
		// Not indexed yet: it leaves the list, the last one taking its place.
		last := len(t.added) - 1
		t.added[i] = t.added[last]
		t.added[i].added = i + 1
		t.added[last] = nil
		t.added = t.added[:last]
	} else {
		t.byID.Delete(s)
	}
	if len(t.spare) < maxSpare {
		*s = taskState{}
		t.spare = append(t.spare, s)
	}
}

// Task implements RuntimeEstimator.
func (t *ProgressTracker) Task(id string, now time.Duration) (TaskProgress, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	s := t.running[id]
	if s == nil {
		return TaskProgress{}, false
	}
	return t.view(id, s, now, t.finished.stats()), true
}

// Running implements RuntimeEstimator.
func (t *ProgressTracker) Running(now time.Duration, dst []TaskProgress) []TaskProgress {
	t.mu.RLock()
	for len(t.added) > 0 {
		t.mu.RUnlock()
		t.mu.Lock()
		t.index()
		t.mu.Unlock()
		t.mu.RLock()
	}
	defer t.mu.RUnlock()
	fin := t.finished.stats()
	t.byID.Ascend(func(s *taskState) bool {
		dst = append(dst, t.view(s.id, s, now, fin))
		return true
	})
	return dst
}

func (t *ProgressTracker) view(id string, s *taskState, now time.Duration, fin RateStats) TaskProgress {
	v := TaskProgress{Task: id, Node: s.node, Start: s.start, Updated: s.updated, Progress: s.progress}
	at := max(now, s.updated)
	if at > s.start {
		v.Elapsed = at - s.start
		if v.Elapsed < 0 { // the difference overflowed
			v.Elapsed = stage.Forever
		}
		v.Rate = s.progress / v.Elapsed.Seconds()
	}
	v.TimeLeft = timeLeft(v.Progress, v.Rate)
	v.Slow = IsSlowTask(v.Rate, fin, t.cfg.slowThreshold)
	return v
}

// NodeRate implements RuntimeEstimator.
func (t *ProgressTracker) NodeRate(node string) (RateStats, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if acc := t.nodes[node]; acc != nil {
		return acc.stats(), true
	}
	return RateStats{}, false
}

// NodeStats is one node's entry in ProgressTracker.Nodes.
type NodeStats struct {
	Node string
	RateStats
}

// Nodes appends the rate statistics of every node that finished a task to dst, in
// ascending order of node ID (for LATE's slow-node test, eq. 2.1).
func (t *ProgressTracker) Nodes(dst []NodeStats) []NodeStats {
	t.mu.RLock()
	defer t.mu.RUnlock()
	first := len(dst)
	for n, acc := range t.nodes {
		dst = append(dst, NodeStats{Node: n, RateStats: acc.stats()})
	}
	slices.SortFunc(dst[first:], func(a, b NodeStats) int { return cmp.Compare(a.Node, b.Node) })
	return dst
}

// Finished implements RuntimeEstimator.
func (t *ProgressTracker) Finished() RateStats {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.finished.stats()
}

// Len is the number of running tasks.
func (t *ProgressTracker) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.running)
}

var _ interface {
	RuntimeEstimator
	ProgressObserver
} = (*ProgressTracker)(nil)
