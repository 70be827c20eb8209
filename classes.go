package finegrain

import (
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
)

// This file keeps, for every job, the distinct demands of its pending tasks — its
// demand classes — so that a heartbeat can pass over a job none of whose tasks can
// start on the node without looking its tasks up. A job's map tasks share one key and
// one request, so a job has one or two classes; the check costs an estimate per class
// and heartbeat.
//
// The checks are exact in what they refuse:
//
//   - A task starting now on a node must find its first stage's non-compressible
//     demand free now (the timeline never lets a non-compressible amount go below
//     zero, whatever the matcher), and a task matched by its request must find all of
//     its request free (match.RequestQuantity compares the request with the least free
//     amount over the run, which is at most what is free now).
//   - Undeclared tasks of one class are matched against the same profile (the key's
//     prediction, or the request held for the duration), so once one did not fit the
//     node, none of the class fits it for the rest of the heartbeat: a heartbeat only
//     takes resources from its node.
//
// A job they pass over could not have started a task; a job they let through is
// matched as before. Jobs with more than maxClasses classes are always let through,
// so that the checks cost O(1) a job.

// maxClasses bounds the classes the checks look at for one job.
const maxClasses = 8

// classID identifies a demand class: tasks that ask a node for the same thing now.
type classID struct {
	key      predict.Key
	request  resource.Tuple
	duration time.Duration  // the declared duration a request is held for
	declared bool           // the tasks declare their profiles
	first    resource.Tuple // declared: the first stage's non-compressible demand
}

// demandClass is one class of a job's pending tasks.
type demandClass struct {
	id classID
	n  int // pending tasks in the class

	// What the class needs free now, worked out once per heartbeat (the estimate does
	// not change within one).
	beat uint64
	need resource.Tuple
	dims resource.Mask
}

// classOf is the demand class of task t.
func (s *Scheduler) classOf(t *task) classID {
	if t.spec.Profile.Len() > 0 {
		return classID{key: t.spec.Key, declared: true, first: t.spec.Profile.Stage(0).Demand.Only(s.schema.NonCompressible())}
	}
	return classID{key: t.spec.Key, request: t.spec.Request, duration: t.spec.Duration}
}

// addPending counts task t among its job's pending demand classes, and the
// scheduler's.
func (s *Scheduler) addPending(j *job, t *task) {
	id := s.classOf(t)
	if c := s.classes[id]; c != nil {
		c.n++
	} else {
		s.classes[id] = &demandClass{id: id, n: 1}
	}
	if i, ok := j.classIdx[id]; ok {
		j.classes[i].n++
		return
	}
	if j.classIdx == nil {
		j.classIdx = map[classID]int{}
	}
	j.classIdx[id] = len(j.classes)
	j.classes = append(j.classes, demandClass{id: id, n: 1})
}

// removePending takes task t out of its job's pending demand classes, and the
// scheduler's.
func (s *Scheduler) removePending(j *job, t *task) {
	id := s.classOf(t)
	if c := s.classes[id]; c != nil {
		if c.n--; c.n == 0 {
			delete(s.classes, id)
		}
	}
	i, ok := j.classIdx[id]
	if !ok {
		return
	}
	if j.classes[i].n--; j.classes[i].n > 0 {
		return
	}
	last := len(j.classes) - 1
	if i != last {
		j.classes[i] = j.classes[last]
		j.classIdx[j.classes[i].id] = i
	}
	j.classes = j.classes[:last]
	delete(j.classIdx, id)
}

// needs sets what a task of class c needs free on a node to start now, and on which
// dimensions: for a declared or predicted profile, its first stage's non-compressible
// demand; for a task matched by its request, all of the request.
func (s *Scheduler) needs(c *demandClass) {
	if c.beat == s.beat {
		return
	}
	c.beat = s.beat
	c.need, c.dims = c.id.request, s.schema.All()
	switch {
	case c.id.declared:
		c.need, c.dims = c.id.first, s.schema.NonCompressible()
	case s.cfg.predict && c.id.key.Logic != "":
		if p, ok := s.estimator.Estimate(c.id.key); ok && s.schema.Equal(p.Schema()) {
			c.need, c.dims = p.Stage(0).Demand, s.schema.NonCompressible()
		}
	}
}

// cannotStart reports whether no pending task of job j can start now on a node with
// free resources free, by the checks of the file comment.
func (s *Scheduler) cannotStart(j *job, free resource.Tuple) bool {
	if len(j.classes) > maxClasses {
		return false
	}
	for i := range j.classes {
		c := &j.classes[i]
		if _, refused := s.refused[c.id]; refused {
			continue
		}
		s.needs(c)
		if covers(free, c.need, c.dims) {
			return false
		}
	}
	return true
}

// noneCanStart reports whether no pending task at all can start now on a node with
// free resources free: the checks of cannotStart over the scheduler's classes, for a
// heartbeat to end before walking the jobs. With more than maxGlobalClasses classes it
// does not look and reports false.
func (s *Scheduler) noneCanStart(free resource.Tuple) bool {
	if len(s.classes) > maxGlobalClasses {
		return false
	}
	for _, c := range s.classes {
		s.needs(c)
		if covers(free, c.need, c.dims) {
			return false
		}
	}
	return true
}

// maxGlobalClasses bounds the classes noneCanStart looks at.
const maxGlobalClasses = 256

// refuse remembers, for the rest of the heartbeat, that task t's class does not fit the
// node, when other jobs have tasks of the class (t's job is passed over anyway).
// Declared profiles are not remembered (two may share a first stage only).
func (s *Scheduler) refuse(t *task) {
	if t.spec.Profile.Len() > 0 {
		return
	}
	id := s.classOf(t)
	j := s.jobs[t.spec.Job]
	i, ok := j.classIdx[id]
	if g := s.classes[id]; ok && g != nil && g.n > j.classes[i].n {
		s.refused[id] = struct{}{}
	}
}

// covers reports whether free[k] ≥ need[k] on every dimension k of dims.
func covers(free, need resource.Tuple, dims resource.Mask) bool {
	for k := range free {
		if dims.Has(k) && free[k] < need[k] {
			return false
		}
	}
	return true
}
