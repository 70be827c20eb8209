package plugins

import (
	"fmt"
	"math"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// DemandClasses (JobFilter) passes over, in a pull cycle, a job none of whose pending
// tasks can start on the node, without looking its tasks up, and ends the heartbeat
// before the walk when no pending task at all can (cluster.Class: the distinct
// demands of the pending tasks). The checks are exact in what they refuse:
//
//   - A task starting now must find its first stage's non-compressible demand free
//     now (the timeline never lets a non-compressible amount go below zero, whatever
//     the matcher), and a task matched by its request must find all of its request
//     free (match.RequestQuantity compares the request with the least free amount
//     over the run, at most what is free now).
//
//   - Undeclared tasks of one class are matched against the same profile, so once one
//     did not fit the node (NoRoom), none of the class fits it for the rest of the
//     heartbeat: a heartbeat only takes resources from its node. The refusal is
//     remembered when other jobs have tasks of the class.
//
//   - With FirstStageWindow, a predicted task (undeclared, never failed) must fit its
//     first stage over the stage's whole window on the node, as the node's
//     fine-grained matcher checks it (StageMatch): most tasks that do not fit a node
//     fail in their first stage, short of CPU a few seconds in, which the amount free
//     now does not show.
//
// A job it passes over could not have started a task; a job it lets through is
// matched as usual. Jobs with more than 8 classes are let through, and the
// whole-cluster check looks at most at 256 classes, so that the checks cost O(1) a
// job. When the whole-cluster check ends the heartbeat, no job is walked and no skip
// is recorded: its Stop is NoClassFits. A job whose classes' needs are all fixed (by
// request, or a declared profile) is refused, when it is, from one record of their
// least need, kept while its set of classes stays (cluster.JobInfo.ClassSet), without
// a look at each class: the same answer at a cache miss instead of several.
type DemandClasses struct {
	demand    *Prediction
	stages    *StageMatch   // FirstStageWindow: the matcher a predicted first stage's window is checked by; nil: none
	needs     []classNeed   // by class slot
	windows   []classWindow // by class slot, with FirstStageWindow
	refused   []uint64      // by class slot: the cycle in which the class was refused
	serials   []uint64      // by class slot: the serial of the class refused
	latest    uint64        // the cycle of the latest refusal remembered: refused holds no other cycle's
	marks     uint64        // the refusals remembered so far, for a pass that keeps what let jobs through (classLet)
	jobs      []jobNeed     // by job slot: the least its classes need (leastOf)
	noLeast   bool          // tests: look at the classes every time
	leastHits int           // tests: refusals the least need gave
}

// jobNeed is the least that any class of a job needs on each dimension every one of
// its classes checks, for a set of classes whose needs depend on no estimate (fixed):
// when what is free falls short of it on one such dimension, every class falls short
// there, and FilterJob refuses the job without looking at its classes — a few cache
// misses a job in a walk over tens of thousands of them.
type jobNeed struct {
	set   uint64        // the job's class set (cluster.JobInfo.ClassSet) this is of
	dims  resource.Mask // the dimensions every class checks; 0: no quick refusal
	least resource.Tuple
}

// classNeed is what a class needs free on a node to start now, worked out once per
// cycle (the estimate does not change within one) — or once for the class, when no
// estimate can ever change it (fixed) — and the class's reference to its key's
// estimate, kept from cycle to cycle while the slot holds the class.
type classNeed struct {
	gen, serial uint64
	need        resource.Tuple
	dims        resource.Mask
	fixed       bool        // the class's need does not depend on an estimate
	ref         predict.Ref // the class's key's estimate, when hasRef
	hasRef      bool
}

// classWindow is what FirstStageWindow keeps of a class, by class slot, apart from
// classNeed so that the need stays small when the check is off: the predicted first
// stage alone, and the check's last answer for the cycle, node timeline version and
// class serial it was given for.
type classWindow struct {
	first                         stage.Profile
	hasFirst                      bool // first is the class's (set when its need is worked out)
	winGen, winVersion, winSerial uint64
	winFits                       bool
}

const (
	maxClasses       = 8   // the most classes FilterJob looks at for one job
	maxGlobalClasses = 256 // the most classes FilterPass looks at
)

// NewDemandClasses returns the demand-class filter, predicting as p does.
func NewDemandClasses(p *Prediction) (*DemandClasses, error) {
	if p == nil {
		return nil, fmt.Errorf("plugins: demand classes: nil prediction: %w", cluster.ErrInvalid)
	}
	return &DemandClasses{demand: p}, nil
}

// FirstStageWindow makes the filter check a predicted class's first stage over its
// whole window on the node, as m's fine-grained matcher would (nil m: off, the
// default). The reference scheduler turns it on with its StageMatch. The check is
// exact in what it refuses: a job it passes over would have had its task refused there
// (NoRoom) had it been tried, with the same consequences for the fair packing bound
// (DelayScheduling's floor: under the clock rule, only for a job that would have
// launched rather than waited for locality), and the job's skip says NoClassFits
// instead.
func (d *DemandClasses) FirstStageWindow(m *StageMatch) { d.stages = m }

// Name implements framework.Plugin.
func (*DemandClasses) Name() string { return "DemandClasses" }

// FilterPass implements framework.JobFilterPlugin.
func (d *DemandClasses) FilterPass(c *framework.Cycle, _ *cluster.NodeInfo) framework.Status {
	st := c.State()
	if st.NumClasses() > maxGlobalClasses {
		return framework.Status{}
	}
	free := c.Free()
	for cl := range st.Classes() {
		if n := d.need(c, cl); free.CoversOn(n.need, n.dims) {
			return framework.Status{}
		}
	}
	if st.NumClasses() == 0 {
		return framework.Close(framework.NoPending)
	}
	return framework.Close(framework.NoClassFits)
}

// FilterJob implements framework.JobFilterPlugin.
func (d *DemandClasses) FilterJob(c *framework.Cycle, j *cluster.JobInfo, node *cluster.NodeInfo) framework.Status {
	classes := j.Classes()
	if len(classes) > maxClasses {
		return framework.Status{}
	}
	free := c.Free()
	if q := d.leastOf(j); q != nil && !free.CoversOn(q.least, q.dims) {
		d.leastHits++
		return framework.Refuse(framework.NoClassFits) // as the classes below would
	}
	for i := range classes {
		cl := &classes[i]
		if d.refusedNow(c, cl.Slot, cl.Serial) {
			continue
		}
		if n := d.need(c, cl); free.CoversOn(n.need, n.dims) && d.windowFits(c, node, cl) {
			return framework.Status{}
		}
	}
	return framework.Refuse(framework.NoClassFits)
}

// leastOf is the least need of job j's classes (jobNeed), or nil when there is none
// to refuse by: one of its classes' needs depends on an estimate, or is not known yet
// (need has not been asked about it since it joined). It asks need nothing, so that
// it makes no estimate a walk would not have made: the record is put together from
// needs already worked out, and kept while the job's set of classes is the same, as a
// fixed need stays its class's for good.
func (d *DemandClasses) leastOf(j *cluster.JobInfo) *jobNeed {
	if d.noLeast {
		return nil
	}
	i, set := j.Index(), j.ClassSet()
	if i < len(d.jobs) && d.jobs[i].set == set {
		if q := &d.jobs[i]; q.dims != 0 {
			return q
		}
		return nil
	}
	q := jobNeed{set: set, dims: ^resource.Mask(0)}
	for k := range q.least {
		q.least[k] = math.MaxInt64
	}
	for _, cl := range j.Classes() {
		if cl.Slot >= len(d.needs) || d.needs[cl.Slot].serial != cl.Serial {
			return nil // not worked out yet: ask again next time
		}
		n := &d.needs[cl.Slot]
		if !n.fixed {
			q.dims = 0
			break
		}
		q.dims &= n.dims
		for k := range q.least {
			q.least[k] = min(q.least[k], n.need[k])
		}
	}
	if len(d.jobs) <= i {
		d.jobs = append(d.jobs, make([]jobNeed, i+1-len(d.jobs))...)
	}
	d.jobs[i] = q
	if q.dims == 0 {
		return nil
	}
	return &d.jobs[i]
}

// refusedNow reports whether the class of slot and serial was refused on the node in
// cycle c (Refused). Most cycles remember no refusal, and a walk asks about every
// class of every job it reaches: the answer is then had without reading the slot's
// record, a cache miss a class in a walk over tens of thousands of jobs.
func (d *DemandClasses) refusedNow(c *framework.Cycle, slot int, serial uint64) bool {
	return d.latest == c.Gen() && slot < len(d.refused) && d.refused[slot] == c.Gen() && d.serials[slot] == serial
}

// classLet is what let a job through FilterJob in a cycle, for a pass that keeps the
// jobs let through from one choice to the next (Tetris): the first of its classes not
// refused whose need was free, or its having too many classes to be looked at.
type classLet struct {
	all    bool   // more than maxClasses classes: let through without a look
	slot   int    // the class's slot
	serial uint64 // and serial
	need   resource.Tuple
	dims   resource.Mask
}

// letThrough is what let job j through FilterJob, which just did in cycle c; false
// with FirstStageWindow, whose answer depends on the node's timeline too. It looks up
// nothing FilterJob did not: the needs of the classes it went through are the cycle's.
func (d *DemandClasses) letThrough(c *framework.Cycle, j *cluster.JobInfo) (classLet, bool) {
	classes := j.Classes()
	switch {
	case d.stages != nil:
		return classLet{}, false
	case len(classes) > maxClasses:
		return classLet{all: true}, true
	}
	free := c.Free()
	for i := range classes {
		cl := &classes[i]
		if d.refusedNow(c, cl.Slot, cl.Serial) {
			continue
		}
		if n := d.need(c, cl); free.CoversOn(n.need, n.dims) {
			return classLet{slot: cl.Slot, serial: cl.Serial, need: n.need, dims: n.dims}, true
		}
	}
	return classLet{}, false
}

// stillLets reports whether FilterJob would let a job through again in cycle c, free
// being what is free on the node now, as l let it through (letThrough) in this cycle
// with the job's classes as they still are: the class of l is not refused since and
// its need is still free. FilterJob would then go through the same classes as before
// (those ahead of l's were refused or did not fit, and still do not: a heartbeat's
// starts only take what is free) and look up nothing new, so that not calling it
// changes nothing. False means FilterJob must be asked.
func (d *DemandClasses) stillLets(c *framework.Cycle, l *classLet, free resource.Tuple) bool {
	return l.all || !d.refusedNow(c, l.slot, l.serial) && free.CoversOn(l.need, l.dims)
}

// windowFits reports whether class cl, whose need was just worked out, fits its first
// stage's window on node at the cycle's time (FirstStageWindow; true when off or not
// predicted), remembered for the cycle while the node's timeline does not change.
func (d *DemandClasses) windowFits(c *framework.Cycle, node *cluster.NodeInfo, cl *cluster.Class) bool {
	if d.stages == nil || node == nil || cl.Slot >= len(d.windows) {
		return true // off, or the need was worked out before FirstStageWindow
	}
	n := &d.windows[cl.Slot]
	if !n.hasFirst {
		return true
	}
	v := node.Timeline().Version()
	if n.winGen == c.Gen() && n.winVersion == v && n.winSerial == cl.Serial {
		return n.winFits
	}
	n.winFits = d.stages.firstFits(c, node, c.Now(), n.first)
	n.winGen, n.winVersion, n.winSerial = c.Gen(), v, cl.Serial
	return n.winFits
}

// Refused implements framework.JobFilterPlugin: a NoRoom refusal of an undeclared
// task is remembered for its class when other jobs have tasks of the class. A task
// that failed is not matched against its class's profile (Prediction raises it), so
// its refusal says nothing of the others.
func (d *DemandClasses) Refused(c *framework.Cycle, a *framework.Attempt, st framework.Status) {
	if st.Reason != framework.NoRoom || a.Backup || a.Task.Declared().Len() > 0 || a.Task.Failures() > 0 {
		return
	}
	state := c.State()
	id := state.ClassOf(a.Task)
	j, _ := state.Job(a.Task.Job())
	for _, cl := range j.Classes() {
		if cl.ID != id || state.ClassPending(id) <= cl.N {
			continue
		}
		for len(d.refused) <= cl.Slot {
			d.refused = append(d.refused, 0)
			d.serials = append(d.serials, 0)
		}
		d.refused[cl.Slot], d.serials[cl.Slot] = c.Gen(), cl.Serial
		d.latest = c.Gen()
		d.marks++
		return
	}
}

// need is what a task of class cl needs free on a node to start now, and on which
// dimensions: for a declared or predicted profile, its first stage's non-compressible
// demand; for a task matched by its request, all of the request.
func (d *DemandClasses) need(c *framework.Cycle, cl *cluster.Class) *classNeed {
	for len(d.needs) <= cl.Slot {
		d.needs = append(d.needs, classNeed{})
	}
	n := &d.needs[cl.Slot]
	if n.serial == cl.Serial && (n.fixed || n.gen == c.Gen()) {
		return n
	}
	if n.serial != cl.Serial { // a new class in the slot
		n.ref, n.hasRef = d.demand.refer(cl.ID.Key)
	}
	schema := c.State().Schema()
	n.gen, n.serial = c.Gen(), cl.Serial
	n.need, n.dims = cl.ID.Request, schema.All()
	n.fixed = cl.ID.Declared || !d.demand.predicts(cl.ID.Key)
	var first *stage.Stage // the predicted first stage, for FirstStageWindow
	if cl.ID.Declared {
		n.need, n.dims = cl.ID.First, schema.NonCompressible()
	} else if p, ok := d.estimate(c.State(), n, cl); ok {
		n.need, n.dims = p.Stage(0).Demand, schema.NonCompressible()
		// A failed task is not placed on its class's profile (Prediction raises it).
		if cl.ID.Failures == 0 {
			s0 := p.Stage(0)
			first = &s0
		}
	}
	if d.stages != nil {
		d.setFirst(schema, cl.Slot, first)
	}
	return n
}

// setFirst makes the window record of class slot i hold first stage s alone (nil:
// none, the window is not checked), its profile built anew only when s changed.
func (d *DemandClasses) setFirst(schema *resource.Schema, i int, s *stage.Stage) {
	for len(d.windows) <= i {
		d.windows = append(d.windows, classWindow{})
	}
	w := &d.windows[i]
	switch {
	case s == nil:
		w.hasFirst = false
	case w.first.Len() == 1 && w.first.Stage(0) == *s:
		w.hasFirst = true
	default:
		p, err := stage.NewProfile(schema, *s)
		w.first, w.hasFirst = p, err == nil
		w.winGen = 0 // another stage: the last answer is not its
	}
}

// estimate is the prediction for undeclared class cl, whose scratch is n: read
// through the class's reference to its key's estimate when the estimator hands them
// out, so that the class's need costs no lookup of its key from cycle to cycle; the
// answer, and the estimator's record of use, are Prediction.Estimate's.
func (d *DemandClasses) estimate(st *cluster.State, n *classNeed, cl *cluster.Class) (stage.Profile, bool) {
	if !n.hasRef {
		return d.demand.Estimate(st, cl.ID.Key)
	}
	return d.demand.estimateRef(st, &n.ref)
}
