package cluster

import (
	"iter"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file keeps, for every job and for the cluster, the distinct demands of the
// pending tasks — their demand classes — so that a pull cycle can tell without looking
// tasks up that none of a job's tasks can start on a node (plugins.DemandClasses). A
// job's map tasks share one key and one request, so a job has one or two classes.

// ClassID identifies a demand class: tasks that ask a node for the same thing now.
// Undeclared tasks of one class are matched against the same profile (their key's
// prediction, or their request held for their duration).
type ClassID struct {
	// Key is the tasks' similarity key.
	Key predict.Key
	// Request and Duration are the tasks' request and declared duration (undeclared
	// tasks).
	Request  resource.Tuple
	Duration time.Duration
	// Declared is set for tasks that declare their profiles; First is then the
	// declared first stage's non-compressible demand (two such tasks may share only
	// that).
	Declared bool
	First    resource.Tuple
	// Failures is the tasks' failed runs (TaskInfo.Failures): a task that failed may
	// be placed on more than its class's plan, so it shares a class only with tasks
	// that failed as often.
	Failures uint8
}

// Class is a demand class with its pending tasks.
type Class struct {
	ID ClassID
	// Slot is the class's small integer, unique among the classes with pending tasks
	// and reused once a class has none, for plugins that keep per-class scratch in a
	// slice (State.ClassSlots bounds it).
	Slot int
	// Serial numbers the class among every class the state ever held: a slot's
	// scratch is the class's while the serials match.
	Serial uint64
	// N counts the pending tasks of the class (of the job, in JobInfo.Classes; of the
	// cluster, in State.Classes).
	N int
}

// ClassOf is task t's demand class.
func (s *State) ClassOf(t *TaskInfo) ClassID {
	if p := t.Declared(); p.Len() > 0 {
		return ClassID{Key: t.Key(), Declared: true, First: p.Stage(0).Demand.Only(s.schema.NonCompressible()), Failures: t.failures}
	}
	return ClassID{Key: t.Key(), Request: t.demand.request, Duration: t.demand.duration, Failures: t.failures}
}

// Classes yields the cluster's demand classes in the order of their slots, the same
// for the same history of calls: a plugin that asks about classes until one answers
// (and the estimator it asks counts each question as a use of the class's key) makes
// the same decisions run after run.
func (s *State) Classes() iter.Seq[*Class] {
	return func(yield func(*Class) bool) {
		for _, c := range s.byslot {
			if c != nil && !yield(c) {
				return
			}
		}
	}
}

// NumClasses is how many demand classes have pending tasks.
func (s *State) NumClasses() int { return len(s.classes) }

// pendingClass is task t's class (ClassOf) when it has pending tasks, else nil. A
// class its demand record remembers (demand.classes) answers without a hash of the
// ClassID when it is that of an undeclared task with t's key and failures (the rest of
// the ID is the record's) and still has pending tasks (it holds its slot).
func (s *State) pendingClass(t *TaskInfo) *Class {
	if c := t.demand.classes[t.failures%uint8(len(t.demand.classes))]; c != nil && s.byslot[c.Slot] == c &&
		c.ID.Failures == t.failures && c.ID.Key.Logic == t.key.logic && c.ID.Key.InputSize == t.key.size && t.Declared().Len() == 0 {
		return c
	}
	c := s.classes[s.ClassOf(t)]
	if c != nil {
		t.demand.remember(t, c)
	}
	return c
}

// ClassPending is how many pending tasks of the cluster are of class id.
func (s *State) ClassPending(id ClassID) int {
	if c := s.classes[id]; c != nil {
		return c.N
	}
	return 0
}

// ClassSlots bounds Class.Slot: every slot is below it.
func (s *State) ClassSlots() int { return s.nslots }

// addPending counts task t among its job's pending demand classes, and the cluster's.
func (s *State) addPending(j *JobInfo, t *TaskInfo) {
	c := s.pendingClass(t)
	if c != nil {
		c.N++
	} else {
		id := s.ClassOf(t)
		slot := s.nslots
		if k := len(s.slots); k > 0 {
			slot, s.slots = s.slots[k-1], s.slots[:k-1]
		} else {
			s.nslots++
		}
		s.serial++
		c = &Class{ID: id, Slot: slot, Serial: s.serial, N: 1}
		s.classes[id] = c
		if slot == len(s.byslot) {
			s.byslot = append(s.byslot, nil)
		}
		s.byslot[slot] = c
		t.demand.remember(t, c)
	}
	if i, ok := j.classIdx[c.Slot]; ok {
		j.classes[i].N++
		return
	}
	if j.classIdx == nil {
		j.classIdx = map[int]int{}
	}
	j.classIdx[c.Slot] = len(j.classes)
	j.classes = append(j.classes, Class{ID: c.ID, Slot: c.Slot, Serial: c.Serial, N: 1})
	s.classSets++
	j.classSet = s.classSets
}

// removePending takes pending task t out of its job's pending demand classes, and
// the cluster's. A job's classes are indexed by slot: the slot of a class with pending
// tasks is its own, and is handed out again only once the class has none, in any job.
func (s *State) removePending(j *JobInfo, t *TaskInfo) {
	c := s.pendingClass(t) // never nil: t is pending
	slot := c.Slot
	if c.N--; c.N == 0 {
		delete(s.classes, c.ID)
		s.byslot[slot] = nil
		s.slots = append(s.slots, slot)
	}
	i := j.classIdx[slot]
	if j.classes[i].N--; j.classes[i].N > 0 {
		return
	}
	last := len(j.classes) - 1
	if i != last {
		j.classes[i] = j.classes[last]
		j.classIdx[j.classes[i].Slot] = i
	}
	j.classes = j.classes[:last]
	delete(j.classIdx, slot)
	s.classSets++
	j.classSet = s.classSets
}
