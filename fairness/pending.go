package fairness

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/btree"
)

// Location is a node holding a replica of a task's input data, and the node's rack
// ("" when unknown: then the replica gives no rack locality).
type Location struct {
	// Node is the node's ID; required.
	Node string
	// Rack is the node's rack, or "" when unknown.
	Rack string
}

// PendingTask is a pending task as the task level of the three-level model of
// docs/methods.md §10 sees it: which job it belongs to, its place in the job's FIFO
// order, and where its input data is.
type PendingTask struct {
	// ID names the task; unique within a Pending.
	ID string
	// Job is the ID of the task's job.
	Job string
	// Priority orders the job's tasks: higher first.
	Priority int
	// Submitted orders tasks of equal priority: earlier first; then ID.
	Submitted time.Duration
	// Locations are where the task's input data is. A task without locations (a reduce
	// task, a service) has no data to be near: it counts as node-local on every node.
	Locations []Location
}

// Pending holds the pending tasks of many jobs, each job's in task order (priority, then
// submission, then ID), indexed by the nodes and racks holding their data, so that the
// task-selection step of Alg. 2.1 — a node-local task of this job, else a rack-local
// one, else any — costs O(log n) whatever the number of tasks. Add a task when it is
// submitted; Remove it when it starts or is cancelled.
//
// A Pending has a single owner: it is not safe for concurrent use.
type Pending struct {
	tasks  map[string]*ptask
	jobs   map[string]*pjob
	byNode map[string]*btree.BTreeG[located]
	byRack map[string]*btree.BTreeG[located]
	seq    uint64
	free   *btree.FreeListG[*ptask]
	lfree  *btree.FreeListG[located]
	// seek state, kept here so a lookup allocates nothing
	seekJob uint64
	found   *ptask
	seek    func(located) bool
}

// located is one entry of a node's or rack's index, holding the task's sort key inline
// so that a search compares within the index's own memory instead of chasing a pointer
// per comparison.
type located struct {
	job  uint64 // the job's sequence number: a job's tasks are contiguous
	prio int
	sub  time.Duration
	t    *ptask // nil in a search pivot, which sorts before every task of its job
}

func lessLocated(a, b located) bool {
	switch {
	case a.job != b.job:
		return a.job < b.job
	case a.prio != b.prio:
		return a.prio > b.prio
	case a.sub != b.sub:
		return a.sub < b.sub
	case a.t == nil || b.t == nil:
		return a.t == nil && b.t != nil
	}
	return a.t.ID < b.t.ID
}

// pivot sorts before every task of j in a node's or rack's index.
func pivot(j *pjob) located {
	return located{job: j.seq, prio: math.MaxInt, sub: math.MinInt64}
}

type pjob struct {
	id       string
	seq      uint64
	all      *btree.BTreeG[*ptask] // every task of the job
	anywhere *btree.BTreeG[*ptask] // the tasks without locations; nil until one comes
}

func (j *pjob) anyAnywhere() bool { return j.anywhere != nil && j.anywhere.Len() > 0 }

type ptask struct {
	PendingTask
	job *pjob
}

func (t *ptask) located() located {
	return located{job: t.job.seq, prio: t.Priority, sub: t.Submitted, t: t}
}

// onNode reports whether one of the task's replicas is on node.
func (t *ptask) onNode(node string) bool {
	for _, l := range t.Locations {
		if l.Node == node {
			return true
		}
	}
	return false
}

// inRack reports whether one of the task's replicas is in rack (never for "").
func (t *ptask) inRack(rack string) bool {
	for _, l := range t.Locations {
		if rack != "" && l.Rack == rack {
			return true
		}
	}
	return false
}

// eachPlace calls fn once for every distinct node, and once for every distinct named
// rack, holding a replica of the task.
func (t *ptask) eachPlace(node, rack func(string)) {
	for i, l := range t.Locations {
		first, firstRack := true, l.Rack != ""
		for _, e := range t.Locations[:i] {
			first = first && e.Node != l.Node
			firstRack = firstRack && e.Rack != l.Rack
		}
		if first {
			node(l.Node)
		}
		if firstRack {
			rack(l.Rack)
		}
	}
}

func taskOrder(a, b *ptask) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Submitted, b.Submitted); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func lessTask(a, b *ptask) bool { return taskOrder(a, b) < 0 }

// NewPending returns an empty pending-task index.
func NewPending() *Pending {
	p := &Pending{
		tasks:  make(map[string]*ptask),
		jobs:   make(map[string]*pjob),
		byNode: make(map[string]*btree.BTreeG[located]),
		byRack: make(map[string]*btree.BTreeG[located]),
		free:   btree.NewFreeListG[*ptask](btree.DefaultFreeListSize),
		lfree:  btree.NewFreeListG[located](btree.DefaultFreeListSize),
	}
	p.seek = func(x located) bool {
		if x.job == p.seekJob {
			p.found = x.t
		}
		return false
	}
	return p
}

// Len is the number of pending tasks.
func (p *Pending) Len() int { return len(p.tasks) }

// JobLen is the number of pending tasks of a job.
func (p *Pending) JobLen(job string) int {
	if j := p.jobs[job]; j != nil {
		return j.all.Len()
	}
	return 0
}

// Task returns a pending task.
func (p *Pending) Task(id string) (PendingTask, bool) {
	t, ok := p.tasks[id]
	if !ok {
		return PendingTask{}, false
	}
	out := t.PendingTask
	out.Locations = slices.Clone(t.Locations)
	return out, true
}

// Add indexes a pending task. It fails, changing nothing, on an empty task or job ID, a
// duplicate task ID, or a location without a node.
func (p *Pending) Add(t PendingTask) error {
	switch {
	case t.ID == "":
		return fieldErr("task ID", t.ID, ErrInvalidID)
	case t.Job == "":
		return fieldErr(fmt.Sprintf("task %q job", t.ID), t.Job, ErrInvalidID)
	}
	if _, dup := p.tasks[t.ID]; dup {
		return fieldErr("task ID", t.ID, ErrDuplicate)
	}
	for i, l := range t.Locations {
		if l.Node == "" {
			return fieldErr(fmt.Sprintf("task %q location %d node", t.ID, i), l.Node, ErrInvalidLocation)
		}
	}
	pt := &ptask{PendingTask: t}
	pt.Locations = slices.Clone(t.Locations)
	j := p.jobs[t.Job]
	if j == nil {
		p.seq++
		j = &pjob{id: t.Job, seq: p.seq, all: btree.NewWithFreeListG(16, lessTask, p.free)}
		p.jobs[t.Job] = j
	}
	pt.job = j
	j.all.ReplaceOrInsert(pt)
	if len(pt.Locations) == 0 {
		if j.anywhere == nil {
			j.anywhere = btree.NewWithFreeListG(16, lessTask, p.free)
		}
		j.anywhere.ReplaceOrInsert(pt)
	}
	pt.eachPlace(
		func(n string) { p.index(p.byNode, n).ReplaceOrInsert(pt.located()) },
		func(r string) { p.index(p.byRack, r).ReplaceOrInsert(pt.located()) })
	p.tasks[t.ID] = pt
	return nil
}

func (p *Pending) index(m map[string]*btree.BTreeG[located], key string) *btree.BTreeG[located] {
	t := m[key]
	if t == nil {
		t = btree.NewWithFreeListG(16, lessLocated, p.lfree)
		m[key] = t
	}
	return t
}

// Remove drops a pending task (it started, or was cancelled). It fails on an unknown
// task.
func (p *Pending) Remove(id string) error {
	pt, ok := p.tasks[id]
	if !ok {
		return fieldErr("task", id, ErrUnknownTask)
	}
	delete(p.tasks, id)
	unindex := func(m map[string]*btree.BTreeG[located], key string) {
		t := m[key]
		t.Delete(pt.located())
		if t.Len() == 0 {
			delete(m, key)
		}
	}
	pt.eachPlace(
		func(n string) { unindex(p.byNode, n) },
		func(r string) { unindex(p.byRack, r) })
	j := pt.job
	j.all.Delete(pt)
	if len(pt.Locations) == 0 {
		j.anywhere.Delete(pt)
	}
	if j.all.Len() == 0 {
		delete(p.jobs, j.id)
	}
	return nil
}

// firstOf returns the job's first task in a node's or rack's index.
func (p *Pending) firstOf(t *btree.BTreeG[located], j *pjob) *ptask {
	if t == nil {
		return nil
	}
	p.seekJob = j.seq
	t.AscendGreaterOrEqual(pivot(j), p.seek)
	found := p.found
	p.found = nil
	return found
}

// Best returns the best locality any pending task of a job has on a node in a rack
// ("" for none): what Delay.Offer needs. ok is false when the job has no pending task.
func (p *Pending) Best(job, node, rack string) (l Level, ok bool) {
	j := p.jobs[job]
	switch {
	case j == nil:
		return 0, false
	case j.anyAnywhere() || p.firstOf(p.byNode[node], j) != nil:
		return NodeLocal, true
	case rack != "" && p.firstOf(p.byRack[rack], j) != nil:
		return RackLocal, true
	}
	return OffSwitch, true
}

// Ascend calls fn with a job's pending tasks that may run on a node in a rack at
// locality worst or better, best locality first and in task order within a level, until
// fn returns false: the node-local tasks, then those without locations (also
// node-local), then (when worst ≥ RackLocal) the rack-local ones, then (when worst is
// OffSwitch) the rest. Each task is visited once, with its locality. fn must not change
// the index. An unknown job has no tasks.
func (p *Pending) Ascend(job, node, rack string, worst Level, fn func(id string, l Level) bool) {
	j := p.jobs[job]
	if j == nil {
		return
	}
	more := p.ascendIndex(p.byNode[node], j, func(x *ptask) bool { return fn(x.ID, NodeLocal) })
	if more && j.anyAnywhere() {
		j.anywhere.Ascend(func(x *ptask) bool {
			more = fn(x.ID, NodeLocal)
			return more
		})
	}
	if !more || worst < RackLocal {
		return
	}
	if rack != "" {
		more = p.ascendIndex(p.byRack[rack], j, func(x *ptask) bool {
			if x.onNode(node) {
				return true
			}
			return fn(x.ID, RackLocal)
		})
	}
	if !more || worst < OffSwitch {
		return
	}
	j.all.Ascend(func(x *ptask) bool {
		if len(x.Locations) == 0 || x.onNode(node) || x.inRack(rack) {
			return true
		}
		return fn(x.ID, OffSwitch)
	})
}

func (p *Pending) ascendIndex(t *btree.BTreeG[located], j *pjob, fn func(*ptask) bool) bool {
	if t == nil {
		return true
	}
	more := true
	t.AscendGreaterOrEqual(pivot(j), func(x located) bool {
		if x.job != j.seq {
			return false
		}
		more = fn(x.t)
		return more
	})
	return more
}

// First returns a job's first task by Ascend's order at locality worst or better, and
// its locality.
func (p *Pending) First(job, node, rack string, worst Level) (id string, l Level, ok bool) {
	p.Ascend(job, node, rack, worst, func(i string, lv Level) bool {
		id, l, ok = i, lv, true
		return false
	})
	return id, l, ok
}
