package fairness

import (
	"cmp"
	"fmt"
	"time"
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

// PendingEntry is one pending task in a PendingIndex: the record the index links into
// its trees as it is, without a copy, so that an owner that keeps a record per task
// anyway embeds one there and the index costs it no more than its tree items. Fill its
// exported fields, then Insert it; do not change them while it is indexed (Indexed).
type PendingEntry[T any] struct {
	// ID names the task. It is the last key of the task order, so that no two entries
	// of a job are alike in the index's eyes: an entry alike in Priority, Submitted
	// and ID to one of its job's already indexed is refused.
	ID string
	// Job is the ID of the task's job.
	Job string
	// Priority orders the job's tasks: higher first.
	Priority int
	// Submitted orders tasks of equal priority: earlier first; then ID.
	Submitted time.Duration
	// Nodes are the nodes holding a replica of the task's input data. A task without
	// nodes (a reduce task, a service) has no data to be near: it counts as node-local
	// on every node.
	Nodes []string
	// Racks are the racks of Nodes, position by position ("" when unknown: then the
	// replica gives no rack locality); nil when every rack is unknown. The index only
	// reads it, so entries may share one slice.
	Racks []string
	// Owner is what the index hands back for the entry (Ascend, First): typically a
	// pointer to the record the entry is embedded in.
	Owner T
	// job is the job's record while the entry is indexed, its parked twin
	// (pjob.parked) while it is parked, and nil otherwise.
	job *pjob[T]
}

// Indexed reports whether the entry is in an index (pending; not parked).
func (e *PendingEntry[T]) Indexed() bool { return e.job != nil && !e.job.parked }

// Parked reports whether the entry is parked in an index (Park): it answers no query,
// but keeps its place in the index's node and rack tables until it is inserted again
// or deleted.
func (e *PendingEntry[T]) Parked() bool { return e.job != nil && e.job.parked }

// rack is the rack of Nodes[i].
func (e *PendingEntry[T]) rack(i int) string {
	if i < len(e.Racks) {
		return e.Racks[i]
	}
	return ""
}

// onNode reports whether one of the task's replicas is on node.
func (e *PendingEntry[T]) onNode(node string) bool {
	for _, n := range e.Nodes {
		if n == node {
			return true
		}
	}
	return false
}

// inRack reports whether one of the task's replicas is in rack (never for "").
func (e *PendingEntry[T]) inRack(rack string) bool {
	if rack == "" {
		return false
	}
	for _, r := range e.Racks {
		if r == rack {
			return true
		}
	}
	return false
}

// eachPlace calls fn once for every distinct node, and once for every distinct named
// rack, holding a replica of the task.
func (e *PendingEntry[T]) eachPlace(node, rack func(string)) {
	for i, n := range e.Nodes {
		r := e.rack(i)
		first, firstRack := true, r != ""
		for k, o := range e.Nodes[:i] {
			first = first && o != n
			firstRack = firstRack && e.rack(k) != r
		}
		if first {
			node(n)
		}
		if firstRack {
			rack(r)
		}
	}
}

// taskOrder is the order of a job's tasks: priority (higher first), then submission,
// then ID.
func taskOrder[T any](a, b *PendingEntry[T]) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Submitted, b.Submitted); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// place is the index of one node or rack: its located items in a tree, ordered by job
// and then task order, and each job's first entry there, which answers Best and First
// without a search of the tree.
//
// A parked entry (Park) stays in the tree, skipped by every read. A job's slot in first
// may hold one of its parked entries: one that comes before all of its pending entries
// here, as it was its first when it was parked. A read that meets it looks for the
// first pending entry after it, and keeps that (firstOf), so that Park itself touches
// no node or rack.
type place[T any] struct {
	items ltree[T]
	first firsts[T]
}

// firstOf returns the first pending entry of job j here, or nil.
func (pl *place[T]) firstOf(j *pjob[T]) *PendingEntry[T] {
	f := pl.first.get(j.seq)
	if f != nil && f.job != j { // parked since it was put there
		if f = pl.nextPending(j, f); f != nil {
			pl.first.set(j.seq, f)
		} else {
			pl.first.del(j.seq)
		}
	}
	return f
}

// nextPending returns the first pending entry of job j after e (which the tree holds)
// in the tree, or nil for none.
func (pl *place[T]) nextPending(j *pjob[T], e *PendingEntry[T]) *PendingEntry[T] {
	var c lcursor[T]
	c.seekItem(&pl.items, located[T]{job: j.seq, e: e})
	for x, ok := c.item(); ok && x.job == j.seq; x, ok = c.item() {
		c.next()
		if x.e != e && x.e.job == j {
			return x.e
		}
	}
	return nil
}

// places are the indexes of the nodes, or of the racks, by ID. The last looked up is
// kept: a heartbeat asks about one node, and its rack, for job after job, while the
// tasks it starts leave the indexes of other nodes (which do not go through the
// cache). Adding or dropping an index keeps the cache right.
type places[T any] struct {
	m      map[string]*place[T]
	key    string    // the last ID looked up, when cached
	last   *place[T] // its index, or nil for none
	cached bool
}

// get returns the index of a node or rack, or nil when it has no entries.
func (ps *places[T]) get(key string) *place[T] {
	if ps.cached && key == ps.key {
		return ps.last
	}
	pl := ps.m[key]
	ps.key, ps.last, ps.cached = key, pl, true
	return pl
}

// first returns the index of a node or rack (nil for none) and the first entry of job j
// there (nil for none).
func (ps *places[T]) first(key string, j *pjob[T]) (*place[T], *PendingEntry[T]) {
	pl := ps.get(key)
	if pl == nil {
		return nil, nil
	}
	return pl, pl.firstOf(j)
}

// firstOf returns the first entry of job j at a node or rack, or nil.
func (ps *places[T]) firstOf(key string, j *pjob[T]) *PendingEntry[T] {
	_, f := ps.first(key, j)
	return f
}

// add adds the index of a node or rack that had none.
func (ps *places[T]) add(key string, pl *place[T]) {
	ps.m[key] = pl
	if ps.cached && ps.key == key {
		ps.last = pl
	}
}

// drop drops the index of a node or rack left without entries.
func (ps *places[T]) drop(key string) {
	delete(ps.m, key)
	if ps.cached && ps.key == key {
		ps.last = nil
	}
}

type pjob[T any] struct {
	id    string
	owner *PendingIndex[T] // the index holding the record
	gone  bool             // dropped: its last entry was deleted
	// parked: this is the twin of the record main, which the job's parked entries
	// point to, so that an entry tells it is parked without a field of its own (its
	// owner's record keeps its size).
	parked   bool
	main     *pjob[T] // of a twin: the job's record
	twin     *pjob[T] // of a record: its twin, once an entry of the job is parked
	seq      uint64
	all      *jtree[T]        // every task of the job
	anywhere *jtree[T]        // the tasks without nodes; nil until one comes
	first    *PendingEntry[T] // the first of all, kept for First
}

func (j *pjob[T]) anyAnywhere() bool { return j.anywhere != nil && j.anywhere.Len() > 0 }

// parkedTwin returns the twin of record j, for its parked entries.
func (j *pjob[T]) parkedTwin() *pjob[T] {
	if j.twin == nil {
		j.twin = &pjob[T]{id: j.id, owner: j.owner, parked: true, main: j, seq: j.seq}
	}
	return j.twin
}

// heldBy reports whether j is index p's current record of its job: not another
// index's, and not dropped since.
func (j *pjob[T]) heldBy(p *PendingIndex[T]) bool { return j.owner == p && !j.gone }

// PendingIndex holds the pending tasks of many jobs as entries their owner keeps
// (PendingEntry), each job's in task order (priority, then submission, then ID), indexed
// by the nodes and racks holding their data, so that the task-selection step of Alg. 2.1
// — a node-local task of this job, else a rack-local one, else any — costs O(1) (Best,
// First) or O(log n) (Ascend past the first task) whatever the number of tasks. Insert
// an entry when its task is submitted; Delete it when it starts or is cancelled
// (O(log n) each). An owner whose started tasks may come back to pending Parks an
// entry when its task starts instead (its job's tree only: the node and rack tables
// keep it, skipped), Inserts it again if it comes back (a hash probe per node and
// rack) and Deletes it when it ends. An owner without records of its own uses
// Pending, which keeps them by task ID.
//
// Per task the index holds one item in its job's tree (a pointer), and one in the tree of
// every distinct node and named rack of its replicas (a pointer and the job's sequence
// number): nothing is allocated per task but tree nodes, and no map is keyed by task.
// Each node and rack also keeps, per job with a task there, the job's first entry there
// (a table of 16-byte slots, a quarter to three quarters full: about 24 bytes a job and
// place), and each job its first entry of all, so that whether a job has a task at a
// node or rack, and which comes first, costs a hash probe, not a tree search; and the
// node and rack last asked about are remembered, as a heartbeat asks about one node for
// job after job.
//
// A PendingIndex has a single owner: it is not safe for concurrent use. Use it by
// pointer: a copy of it does not hold the entries inserted into the original
// (Delete refuses them).
type PendingIndex[T any] struct {
	n      int
	parked int // entries parked
	jobs   map[string]*pjob[T]
	byNode places[T]
	byRack places[T]
	seq    uint64
	jfree  bfree[*PendingEntry[T], entryOrder[T]] // the nodes of the job trees
	lfree  bfree[located[T], locatedOrder[T]]     // the nodes of the node and rack trees
}

// NewPendingIndex returns an empty index of entries owned by T.
func NewPendingIndex[T any]() *PendingIndex[T] {
	p := &PendingIndex[T]{
		jobs:   make(map[string]*pjob[T]),
		byNode: places[T]{m: make(map[string]*place[T])},
		byRack: places[T]{m: make(map[string]*place[T])},
		jfree:  bfree[*PendingEntry[T], entryOrder[T]]{degree: jobDegree},
		lfree:  bfree[located[T], locatedOrder[T]]{degree: locatedDegree},
	}
	return p
}

// Len is the number of entries indexed.
func (p *PendingIndex[T]) Len() int { return p.n }

// JobLen is the number of entries of a job indexed.
func (p *PendingIndex[T]) JobLen(job string) int {
	if j := p.jobs[job]; j != nil {
		return j.all.Len()
	}
	return 0
}

// Insert indexes entry e. It fails, changing nothing, on a nil entry or one already
// indexed (or parked in another index), an empty task or job ID, an empty node, Racks
// of another length than Nodes (but nil), or an entry alike in Priority, Submitted and
// ID to one of its job's already indexed (ErrDuplicate). An entry parked in this index
// (Park) takes up its places in the node and rack tables again, unless its job's
// pending entries all left the index since: then it is filed anew.
func (p *PendingIndex[T]) Insert(e *PendingEntry[T]) error {
	switch {
	case e == nil:
		return fieldErr("task", "nil", ErrInvalidID)
	case e.job != nil && (!e.job.parked || e.job.owner != p):
		return fieldErr("task ID", e.ID, ErrDuplicate)
	case e.ID == "":
		return fieldErr("task ID", e.ID, ErrInvalidID)
	case e.Job == "":
		return fieldErr(fmt.Sprintf("task %q job", e.ID), e.Job, ErrInvalidID)
	case e.Racks != nil && len(e.Racks) != len(e.Nodes):
		return fieldErr(fmt.Sprintf("task %q racks", e.ID), len(e.Racks), ErrInvalidLocation)
	}
	for i, n := range e.Nodes {
		if n == "" {
			return fieldErr(fmt.Sprintf("task %q location %d node", e.ID, i), n, ErrInvalidLocation)
		}
	}
	j := p.jobs[e.Job]
	if j == nil {
		p.seq++
		j = &pjob[T]{id: e.Job, owner: p, seq: p.seq, all: p.jobTree()}
		p.jobs[e.Job] = j
	}
	if _, ok := j.all.Insert(e); !ok {
		return fieldErr("task ID", e.ID, ErrDuplicate)
	}
	if j.first == nil || taskOrder(e, j.first) < 0 {
		j.first = e
	}
	if len(e.Nodes) == 0 {
		if j.anywhere == nil {
			j.anywhere = p.jobTree()
		}
		j.anywhere.Insert(e)
	}
	p.n++
	if e.job != nil { // parked here
		if e.job.main == j {
			// Back where it was parked: it only becomes its job's first again where
			// it comes before the job's first pending entry.
			e.job = j
			p.parked--
			e.eachPlace(
				func(n string) { unpark(p.byNode.m[n], j.seq, e) },
				func(r string) { unpark(p.byRack.m[r], j.seq, e) })
			return nil
		}
		p.purge(e) // filed under the number of a record since dropped
	}
	e.job = j
	e.eachPlace(
		func(n string) { p.index(&p.byNode, n, e) },
		func(r string) { p.index(&p.byRack, r, e) })
	return nil
}

// unpark makes parked entry e, an item of pl of the job numbered seq, pending there
// again: the job's first here when it comes before the entry in the job's slot (which
// may be e itself, parked there).
func unpark[T any](pl *place[T], seq uint64, e *PendingEntry[T]) {
	if f := pl.first.get(seq); f == nil || taskOrder(e, f) < 0 {
		pl.first.set(seq, e)
	}
}

// index puts entry e in the index of the node or rack key of m.
func (p *PendingIndex[T]) index(m *places[T], key string, e *PendingEntry[T]) {
	pl := m.m[key] // not through the cache, which serves the heartbeat's lookups
	if pl == nil {
		pl = new(place[T])
		pl.items.free = &p.lfree
		m.add(key, pl)
	}
	seq := e.job.seq
	switch pred, _ := pl.items.Insert(located[T]{job: seq, e: e}); {
	case pred.e == nil || pred.job != seq: // the job's first item here
		pl.first.set(seq, e)
	case pred.e.job != e.job: // after a parked one: first if before the job's slot
		if f := pl.first.get(seq); f == nil || taskOrder(e, f) < 0 {
			pl.first.set(seq, e)
		}
	}
}

// unindex takes entry e out of the index of the node or rack key of m, and drops the
// index when it is left empty.
func (p *PendingIndex[T]) unindex(m *places[T], key string, e *PendingEntry[T]) {
	pl := m.m[key]
	seq := e.job.seq
	_, pred, succ := pl.items.Delete(located[T]{job: seq, e: e})
	switch {
	case pl.items.Len() == 0:
		m.drop(key)
	case pred.e != nil && pred.job == seq && pred.e.job == e.job && !e.job.parked:
		// After a pending entry of its job: not in the job's slot.
	case pl.first.get(seq) != e:
	case succ.e != nil && succ.job == seq:
		// Its successor, pending or parked, comes before all of the job's pending
		// entries left here.
		pl.first.set(seq, succ.e)
	default:
		pl.first.del(seq)
	}
}

// purge takes parked entry e out of the node and rack tables.
func (p *PendingIndex[T]) purge(e *PendingEntry[T]) {
	e.eachPlace(
		func(n string) { p.unindex(&p.byNode, n, e) },
		func(r string) { p.unindex(&p.byRack, r, e) })
	e.job = nil
	p.parked--
}

// Delete drops entry e from the index (its task started, or was cancelled), or a
// parked one (Park) from the node and rack tables it is kept in. It fails, changing
// nothing, on an entry this index does not hold (a copy of one it holds included: the
// index links entries by address).
func (p *PendingIndex[T]) Delete(e *PendingEntry[T]) error {
	if e != nil && e.job != nil && e.job.parked && e.job.owner == p {
		p.purge(e)
		return nil
	}
	return p.take(e, false)
}

// Park takes pending entry e out of the index's answers as Delete does, but leaves it
// filed in the node and rack tables, so that an Insert of e again (its task came back
// to pending: a reservation given back, an eviction) costs a hash probe per node and
// rack instead of a tree insert, and Park itself touches no node or rack table (where
// e was its job's first pending entry, the next read about the job there looks for
// the next one, once). A parked entry answers no query (Len, Ascend, First, Best), and
// keeps nothing of the index alive but its tree items and the job slots it holds: Delete
// it when its task is done for good (it finished, or was cancelled), or Insert it
// again. A job whose pending entries all leave loses its record as with Delete; its
// parked entries are then filed anew when they come back. While e is parked its owner
// must not change its fields, Racks included: to file it under other racks, Delete it
// and Insert it. Park fails, changing nothing, as Delete does on an entry not pending
// in this index.
func (p *PendingIndex[T]) Park(e *PendingEntry[T]) error { return p.take(e, true) }

// take is Delete of a pending entry, or Park.
func (p *PendingIndex[T]) take(e *PendingEntry[T], park bool) error {
	if e == nil || e.job == nil || e.job.parked || !e.job.heldBy(p) {
		id := "nil"
		if e != nil {
			id = e.ID
		}
		return fieldErr("task", id, ErrUnknownTask)
	}
	j := e.job
	// The trees find items by their keys, which a copy of an indexed entry shares:
	// take e out of its job's tree first, and only if that is e itself. The job's
	// first entry, the one a heartbeat most often starts, is its tree's least: it
	// leaves without a comparison.
	if j.first == e {
		j.all.DeleteMin()
	} else if held, _, _ := j.all.Delete(e); !held {
		return fieldErr("task", e.ID, ErrUnknownTask)
	}
	if park {
		// Its items stay where they are, and so do the job's slots that hold it.
		e.job = j.parkedTwin()
		p.parked++
	} else {
		e.eachPlace(
			func(n string) { p.unindex(&p.byNode, n, e) },
			func(r string) { p.unindex(&p.byRack, r, e) })
		e.job = nil
	}
	if len(e.Nodes) == 0 {
		j.anywhere.Delete(e)
	}
	if j.first == e {
		j.first, _ = j.all.Min()
	}
	if j.all.Len() == 0 {
		delete(p.jobs, j.id)
		j.gone = true
	}
	p.n--
	return nil
}

// Parked is the number of entries parked in the index (Park).
func (p *PendingIndex[T]) Parked() int { return p.parked }

// Best returns the best locality any pending task of a job has on a node in a rack
// ("" for none): what Delay.Offer needs. ok is false when the job has no pending task.
func (p *PendingIndex[T]) Best(job, node, rack string) (l Level, ok bool) {
	return p.best(p.jobs[job], node, rack)
}

// BestByRef is Best for job, looked up through ref (JobRef); a nil ref is none.
func (p *PendingIndex[T]) BestByRef(ref *JobRef[T], job, node, rack string) (l Level, ok bool) {
	return p.best(p.job(ref, job), node, rack)
}

func (p *PendingIndex[T]) best(j *pjob[T], node, rack string) (l Level, ok bool) {
	switch {
	case j == nil:
		return 0, false
	case j.anyAnywhere() || p.byNode.firstOf(node, j) != nil:
		return NodeLocal, true
	case rack != "" && p.byRack.firstOf(rack, j) != nil:
		return RackLocal, true
	}
	return OffSwitch, true
}

// Ascend calls fn with a job's entries that may run on a node in a rack at locality
// worst or better, best locality first and in task order within a level, until fn
// returns false: the node-local tasks, then those without nodes (also node-local), then
// (when worst ≥ RackLocal) the rack-local ones, then (when worst is OffSwitch) the rest.
// Each entry is visited once, with its locality. fn must not change the index. An
// unknown job has no entries.
func (p *PendingIndex[T]) Ascend(job, node, rack string, worst Level, fn func(e *PendingEntry[T], l Level) bool) {
	p.ascend(p.jobs[job], node, rack, worst, fn)
}

// AscendByRef is Ascend for job, looked up through ref (JobRef); a nil ref is none.
func (p *PendingIndex[T]) AscendByRef(ref *JobRef[T], job, node, rack string, worst Level, fn func(e *PendingEntry[T], l Level) bool) {
	p.ascend(p.job(ref, job), node, rack, worst, fn)
}

// AscendJob calls fn with all of a job's entries in task order, until fn returns
// false, reading only the job's own tree (none of the node and rack tables): O(n) for
// the job's n entries. fn must not change the index. An unknown job has no entries.
func (p *PendingIndex[T]) AscendJob(job string, fn func(e *PendingEntry[T]) bool) {
	if j := p.jobs[job]; j != nil {
		j.all.Ascend(fn)
	}
}

// ascend is Ascend for the job whose record is j (nil: no entries).
func (p *PendingIndex[T]) ascend(j *pjob[T], node, rack string, worst Level, fn func(e *PendingEntry[T], l Level) bool) {
	if j == nil {
		return
	}
	more, skip := true, ""
	if pl, f := p.byNode.first(node, j); f != nil {
		more, skip = ascendPlace(pl, j, f, "", NodeLocal, fn), node
	}
	if more && j.anyAnywhere() {
		j.anywhere.Ascend(func(x *PendingEntry[T]) bool {
			more = fn(x, NodeLocal)
			return more
		})
	}
	if !more || worst < RackLocal {
		return
	}
	if rack != "" {
		if pl, f := p.byRack.first(rack, j); f != nil {
			// Only a job with entries on node has entries there to skip.
			more = ascendPlace(pl, j, f, skip, RackLocal, fn)
		}
	}
	if !more || worst < OffSwitch {
		return
	}
	j.all.Ascend(func(x *PendingEntry[T]) bool {
		if len(x.Nodes) == 0 || x.onNode(node) || x.inRack(rack) {
			return true
		}
		return fn(x, OffSwitch)
	})
}

// ascendPlace calls fn with the pending entries of job j at a node or rack, in task
// order, but those on node skip, until fn returns false; first is the job's first
// pending entry there. It reports whether fn asked for more. The tree is searched only when fn
// asks for more than the first.
func ascendPlace[T any](pl *place[T], j *pjob[T], first *PendingEntry[T], skip string, l Level, fn func(*PendingEntry[T], Level) bool) bool {
	if (skip == "" || !first.onNode(skip)) && !fn(first, l) {
		return false
	}
	// The job's items before its first pending one are all parked: start there.
	var c lcursor[T]
	c.seekItem(&pl.items, located[T]{job: j.seq, e: first})
	for x, ok := c.item(); ok && x.job == j.seq; x, ok = c.item() {
		c.next()
		if x.e != first && x.e.job == j && (skip == "" || !x.e.onNode(skip)) && !fn(x.e, l) {
			return false
		}
	}
	return true
}

// First returns a job's first entry by Ascend's order at locality worst or better, and
// its locality. It compares no keys: a node's or rack's first entry of each job is kept
// (a job without an entry at node has none on node, so that its first in rack is
// rack-local; a job without an entry at node or rack, nor one without nodes, has its
// first of all off-switch).
func (p *PendingIndex[T]) First(job, node, rack string, worst Level) (e *PendingEntry[T], l Level, ok bool) {
	return p.first(p.jobs[job], node, rack, worst)
}

// FirstByRef is First for job, looked up through ref (JobRef); a nil ref is none.
func (p *PendingIndex[T]) FirstByRef(ref *JobRef[T], job, node, rack string, worst Level) (e *PendingEntry[T], l Level, ok bool) {
	return p.first(p.job(ref, job), node, rack, worst)
}

// first is First for the job whose record is j (nil: no entries).
func (p *PendingIndex[T]) first(j *pjob[T], node, rack string, worst Level) (e *PendingEntry[T], l Level, ok bool) {
	if j == nil {
		return nil, 0, false
	}
	if f := p.byNode.firstOf(node, j); f != nil {
		return f, NodeLocal, true
	}
	if j.anyAnywhere() {
		f, _ := j.anywhere.Min()
		return f, NodeLocal, true
	}
	if worst < RackLocal {
		return nil, 0, false
	}
	if rack != "" {
		if f := p.byRack.firstOf(rack, j); f != nil {
			return f, RackLocal, true
		}
	}
	if worst < OffSwitch {
		return nil, 0, false
	}
	return j.first, OffSwitch, true
}

// JobRef remembers where a PendingIndex keeps one job's entries, for an owner that
// keeps a record per job anyway: the queries that take one (FirstByRef, AscendByRef)
// answer as First and Ascend do, but look the job up by ID only when the reference
// holds nothing current — it is new (the zero JobRef), was filled by another index or
// for another job, or the job's entries all left the index since (the index then drops
// its record). A heartbeat asks about job after job in fairness order, each a lookup
// by ID otherwise. A JobRef is not safe for concurrent use, nor is the index.
type JobRef[T any] struct {
	j *pjob[T] // nil: nothing looked up, or the job had no entries
}

// job returns job's record (nil: it has no entries), through ref (nil: none) when ref
// holds it.
func (p *PendingIndex[T]) job(ref *JobRef[T], job string) *pjob[T] {
	if ref == nil {
		return p.jobs[job]
	}
	if j := ref.j; j != nil && j.heldBy(p) && j.id == job {
		return j
	}
	j := p.jobs[job]
	ref.j = j
	return j
}

// Pending holds the pending tasks of many jobs, each job's in task order (priority, then
// submission, then ID), indexed by the nodes and racks holding their data, so that the
// task-selection step of Alg. 2.1 — a node-local task of this job, else a rack-local
// one, else any — costs O(1) (Best, First) or O(log n) (Ascend past the first task)
// whatever the number of tasks. Add a task when it is submitted; Remove it when it
// starts or is cancelled. It is a PendingIndex that keeps the entries itself, by task
// ID.
//
// A Pending has a single owner: it is not safe for concurrent use.
type Pending struct {
	idx   *PendingIndex[struct{}]
	tasks map[string]*PendingEntry[struct{}]
}

// NewPending returns an empty pending-task index.
func NewPending() *Pending {
	return &Pending{idx: NewPendingIndex[struct{}](), tasks: make(map[string]*PendingEntry[struct{}])}
}

// Len is the number of pending tasks.
func (p *Pending) Len() int { return len(p.tasks) }

// JobLen is the number of pending tasks of a job.
func (p *Pending) JobLen(job string) int { return p.idx.JobLen(job) }

// Task returns a pending task.
func (p *Pending) Task(id string) (PendingTask, bool) {
	e, ok := p.tasks[id]
	if !ok {
		return PendingTask{}, false
	}
	out := PendingTask{ID: e.ID, Job: e.Job, Priority: e.Priority, Submitted: e.Submitted}
	if len(e.Nodes) > 0 {
		out.Locations = make([]Location, len(e.Nodes))
		for i, n := range e.Nodes {
			out.Locations[i] = Location{Node: n, Rack: e.rack(i)}
		}
	}
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
	e := &PendingEntry[struct{}]{ID: t.ID, Job: t.Job, Priority: t.Priority, Submitted: t.Submitted}
	if k := len(t.Locations); k > 0 {
		// One array for both: the nodes, then their racks.
		places := make([]string, 2*k)
		e.Nodes, e.Racks = places[:k:k], places[k:]
		for i, l := range t.Locations {
			e.Nodes[i], e.Racks[i] = l.Node, l.Rack
		}
	}
	if err := p.idx.Insert(e); err != nil {
		return err
	}
	p.tasks[t.ID] = e
	return nil
}

// Remove drops a pending task (it started, or was cancelled). It fails on an unknown
// task.
func (p *Pending) Remove(id string) error {
	e, ok := p.tasks[id]
	if !ok {
		return fieldErr("task", id, ErrUnknownTask)
	}
	delete(p.tasks, id)
	return p.idx.Delete(e)
}

// Best returns the best locality any pending task of a job has on a node in a rack
// ("" for none): what Delay.Offer needs. ok is false when the job has no pending task.
func (p *Pending) Best(job, node, rack string) (l Level, ok bool) {
	return p.idx.Best(job, node, rack)
}

// Ascend calls fn with a job's pending tasks that may run on a node in a rack at
// locality worst or better, best locality first and in task order within a level, until
// fn returns false: the node-local tasks, then those without locations (also
// node-local), then (when worst ≥ RackLocal) the rack-local ones, then (when worst is
// OffSwitch) the rest. Each task is visited once, with its locality. fn must not change
// the index. An unknown job has no tasks.
func (p *Pending) Ascend(job, node, rack string, worst Level, fn func(id string, l Level) bool) {
	p.idx.Ascend(job, node, rack, worst, func(e *PendingEntry[struct{}], l Level) bool { return fn(e.ID, l) })
}

// First returns a job's first task by Ascend's order at locality worst or better, and
// its locality.
func (p *Pending) First(job, node, rack string, worst Level) (id string, l Level, ok bool) {
	e, l, ok := p.idx.First(job, node, rack, worst)
	if !ok {
		return "", 0, false
	}
	return e.ID, l, true
}
