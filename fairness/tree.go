package fairness

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
)

// Tree is the three-level model of docs/methods.md §10, kept incrementally ordered:
// queues (which may nest), the jobs in them, and per job the count and demand of its
// pending tasks and the usage of its running ones. Each queue orders its children by a
// Policy (DRF by default, which makes the whole tree hierarchical DRF); a queue's counts
// and tuples are the sums over everything below it.
//
// Each queue keeps its eligible children — jobs with pending tasks and queues holding
// such a job, neither at its max share — in a B-tree ordered by the policy's key. A
// change to a job (tasks submitted, started, finished) re-keys only the job and its
// ancestors, O(depth × log n), so Next, the first job to offer resources to, costs
// O(depth × log n) and Walk visits jobs in offer order without sorting anything.
//
// Policies take every share against the cluster's capacity, which SetCapacity changes
// (re-keying everything). A Tree has a single owner: it is not safe for concurrent use.
type Tree struct {
	schema   *resource.Schema
	capacity resource.Tuple
	root     *tnode
	queues   map[string]*tnode
	jobs     map[string]*tnode
	seq      uint64
	free     bfree[seat, seatOrder] // the nodes of the queues' active sets
	bySlot   []*tnode               // the jobs by slot, once Resettle asked (slotted); nil before
	path     []*tnode               // Resettle's scratch
}

// tnode is a queue or a job in the tree. What its parent's active set compares comes
// first — the key and the sequence number, then the entry's ID, priority and
// submission time — so that a comparison, most often settled by the keys, reads the
// node's first bytes only (the key and the sequence number share a cache line unless
// the node's allocation splits them).
type tnode struct {
	key OrderKey // the parent's policy's key, valid while inParent
	seq uint64   // creation order: the final tie-break
	Entry
	parent   *tnode
	inParent bool // held in parent.active
	// firstOver lets the entity start a task over its max share while it has none
	// running (FirstTaskOverMax); beside inParent, in its padding.
	firstOver bool
	idx       int // index in parent.kids
	slot      int // a job's slot (Slot), −1 for none
	// queues only
	policy Policy
	kids   []*tnode
	active seatTree
}

// seat is a child's place in its parent's active set: the node, and what a walk reads
// of it, held in the set itself so that a walk over tens of thousands of jobs does not
// load each job's node (a cache miss a job). A node's seat is made when it enters the
// set (place, reseat), and its slot changes only while it is out (update).
type seat struct {
	n    *tnode
	slot int // the job's slot (Slot), −1 for none; seatQueue for a queue
}

// seatQueue is a queue's seat's slot.
const seatQueue = -2

// seatOf is node n's seat.
func seatOf(n *tnode) seat {
	if n.Kind != KindJob {
		return seat{n: n, slot: seatQueue}
	}
	return seat{n: n, slot: n.slot}
}

// lessNode orders the children in a queue's active set: compareEntries on their keys and
// entries, then creation order. It is written out, not a call of compareEntries, so
// that it inlines into the set's searches; TestLessNodeIsCompareEntries checks the two
// agree.
func lessNode(a, b *tnode) bool {
	for i := range a.key {
		if a.key[i] != b.key[i] {
			return a.key[i] < b.key[i]
		}
	}
	if a.Submitted != b.Submitted {
		return a.Submitted < b.Submitted
	}
	if a.ID != b.ID {
		return a.ID < b.ID
	}
	return a.seq < b.seq
}

// TreeOption configures a Tree. NewTree refuses a nil one (ErrNilOption).
type TreeOption func(*Tree) error

// WithPolicy sets the policy the root queue orders its children by, which queues added
// later inherit unless given their own (OrderedBy). The default is DRF, FGM's default
// (docs/methods.md §3).
func WithPolicy(p Policy) TreeOption {
	return func(t *Tree) error {
		if p == nil {
			return fmt.Errorf("fairness: tree policy: %w", ErrNilPolicy)
		}
		t.root.policy = p
		return nil
	}
}

// NewTree returns an empty tree for a cluster of the given capacity: a root queue with
// no children. It fails on a nil schema, a capacity that is not a valid amount for the
// schema, a nil policy, or a nil option.
func NewTree(schema *resource.Schema, capacity resource.Tuple, opts ...TreeOption) (*Tree, error) {
	if schema == nil {
		return nil, fmt.Errorf("fairness: nil schema: %w", resource.ErrSchemaMismatch)
	}
	if err := schema.Validate(capacity); err != nil {
		return nil, fieldErr("capacity", capacity, err)
	}
	t := &Tree{
		schema:   schema,
		capacity: capacity,
		queues:   make(map[string]*tnode),
		jobs:     make(map[string]*tnode),
		free:     bfree[seat, seatOrder]{degree: seatDegree, double: true},
	}
	t.root = t.newNode(Entry{Kind: KindQueue, Share: DefaultShare()}, nil)
	t.root.policy = DRF{}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("tree options[%d]", i), "nil", ErrNilOption)
		}
		if err := o(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Tree) newNode(e Entry, parent *tnode) *tnode {
	t.seq++
	n := &tnode{Entry: e, parent: parent, seq: t.seq}
	if e.Kind == KindQueue {
		n.active.free = &t.free
	}
	if parent != nil {
		n.idx = len(parent.kids)
		parent.kids = append(parent.kids, n)
	}
	return n
}

// Option configures a queue or a job added to, or updated in, a Tree. A nil Option is
// refused (ErrNilOption), changing nothing.
type Option func(*config)

type config struct {
	share     Share
	priority  int
	submitted time.Duration
	policy    Policy
	setPolicy bool
	slot      int
	setSlot   bool
	firstOver bool
}

// Weight sets the entity's weight among its siblings (default 1; must be positive and
// finite).
func Weight(w float64) Option { return func(c *config) { c.share.Weight = w } }

// MinShare sets the entity's min share, in its parent's policy's unit (default 0, none).
func MinShare(m float64) Option { return func(c *config) { c.share.Min = m } }

// MaxShare sets the entity's max share, in its parent's policy's unit (default 0, none).
func MaxShare(m float64) Option { return func(c *config) { c.share.Max = m } }

// FirstTaskOverMax sets whether the entity may start a task that takes it over its
// max share while it has no task running (default false: a max share is hard, as a
// YARN queue's maximum capacity is). On, a max share below one task's demand delays
// that task until the entity's other tasks have ended, but never stops it for good, as
// YARN lets a queue run one application master whatever its limit on them: a cap set
// below the whole cluster to leave room for other queues cannot then starve a job
// whose single task is larger than the cap. Admit applies it; the fairness order does
// not (an entity with nothing running is below any max share).
func FirstTaskOverMax(on bool) Option { return func(c *config) { c.firstOver = on } }

// WithShare sets weight, min and max share at once.
func WithShare(s Share) Option { return func(c *config) { c.share = s } }

// Priority sets the entity's priority for FIFO ordering (higher first; default 0).
func Priority(p int) Option { return func(c *config) { c.priority = p } }

// SubmittedAt sets when the entity arrived (default 0), the tie-break among equal keys.
func SubmittedAt(at time.Duration) Option { return func(c *config) { c.submitted = at } }

// OrderedBy sets the policy a queue orders its children by; without it a queue inherits
// its parent's. It applies to queues only.
func OrderedBy(p Policy) Option { return func(c *config) { c.policy, c.setPolicy = p, true } }

// Slot gives a job a slot: a non-negative integer of its owner's choosing (its index in
// the owner's own table of jobs, say) that WalkSlots hands back, so that an owner of
// many jobs walks them in fairness order without looking each up by ID. Jobs only; a
// job given none has slot −1.
func Slot(i int) Option { return func(c *config) { c.slot, c.setSlot = i, true } }

func (t *Tree) configure(n *tnode, opts []Option) (config, error) {
	c := config{share: n.Share, priority: n.Priority, submitted: n.Submitted, policy: n.policy, slot: n.slot, firstOver: n.firstOver}
	for i, o := range opts {
		if o == nil {
			return c, fieldErr(fmt.Sprintf("options[%d]", i), "nil", ErrNilOption)
		}
		o(&c)
	}
	if err := c.share.validate(); err != nil {
		return c, err
	}
	if c.setSlot {
		if n.Kind != KindJob {
			return c, fieldErr("slot", c.slot, ErrInvalidKind)
		}
		if c.slot < 0 {
			return c, fieldErr("slot", c.slot, ErrInvalidCount)
		}
	}
	if c.setPolicy {
		if n.Kind != KindQueue {
			return c, fieldErr("policy", "OrderedBy", ErrInvalidKind)
		}
		if c.policy == nil {
			return c, fieldErr("policy", nil, ErrNilPolicy)
		}
	}
	return c, nil
}

func who(k Kind, id string) string { return fmt.Sprintf("%s %q", k, id) }

func (t *Tree) queue(id string) (*tnode, error) {
	if id == "" {
		return t.root, nil
	}
	if q, ok := t.queues[id]; ok {
		return q, nil
	}
	return nil, fieldErr("queue", id, ErrUnknownQueue)
}

func (t *Tree) job(id string) (*tnode, error) {
	if j, ok := t.jobs[id]; ok {
		return j, nil
	}
	return nil, fieldErr("job", id, ErrUnknownJob)
}

// AddQueue adds an empty queue under parent ("" for the root). The queue orders its
// children by the policy given with OrderedBy, else by its parent's policy at the time
// it is added. It fails on an empty or duplicate ID, an unknown parent or a bad option.
func (t *Tree) AddQueue(parent, id string, opts ...Option) error {
	return t.add(parent, id, KindQueue, opts)
}

// AddJob adds a job with no tasks to a queue ("" for the root). It fails on an empty or
// duplicate ID, an unknown queue or a bad option (OrderedBy does not apply to jobs).
func (t *Tree) AddJob(queue, id string, opts ...Option) error {
	return t.add(queue, id, KindJob, opts)
}

func (t *Tree) add(parent, id string, kind Kind, opts []Option) error {
	ids := t.queues
	if kind == KindJob {
		ids = t.jobs
	}
	if id == "" {
		return fieldErr(kind.String()+" ID", id, ErrInvalidID)
	}
	if _, dup := ids[id]; dup {
		return fieldErr(kind.String()+" ID", id, ErrDuplicate)
	}
	p, err := t.queue(parent)
	if err != nil {
		return err
	}
	probe := tnode{Entry: Entry{Kind: kind, Share: DefaultShare()}, slot: -1}
	c, err := t.configure(&probe, opts)
	if err != nil {
		return within(who(kind, id), err)
	}
	n := t.newNode(Entry{ID: id, Kind: kind, Priority: c.priority, Submitted: c.submitted, Share: c.share}, p)
	n.slot, n.firstOver = c.slot, c.firstOver
	if kind == KindJob {
		t.setSlot(n, -1)
	}
	if kind == KindQueue {
		n.policy = p.policy
		if c.setPolicy {
			n.policy = c.policy
		}
	}
	ids[id] = n
	return nil
}

// UpdateQueue changes a queue's weight, shares, priority, submission time or policy,
// re-ordering what the change affects. On error nothing changes.
func (t *Tree) UpdateQueue(id string, opts ...Option) error {
	if id == "" {
		return fieldErr("queue", id, ErrInvalidID)
	}
	q, err := t.queue(id)
	if err != nil {
		return err
	}
	return t.update(q, opts)
}

// UpdateJob changes a job's weight, shares, priority or submission time. On error
// nothing changes.
func (t *Tree) UpdateJob(id string, opts ...Option) error {
	j, err := t.job(id)
	if err != nil {
		return err
	}
	return t.update(j, opts)
}

func (t *Tree) update(n *tnode, opts []Option) error {
	c, err := t.configure(n, opts)
	if err != nil {
		return within(who(n.Kind, n.ID), err)
	}
	t.detach(n)
	old := n.slot
	n.Share, n.Priority, n.Submitted, n.slot, n.firstOver = c.share, c.priority, c.submitted, c.slot, c.firstOver
	if n.Kind == KindJob && n.slot != old {
		t.setSlot(n, old)
	}
	if c.setPolicy {
		n.policy = c.policy
		t.rebuild(n, false)
	}
	t.attach(n)
	return nil
}

// RemoveJob removes a job, with its pending and running tasks, from the tree.
func (t *Tree) RemoveJob(id string) error {
	j, err := t.job(id)
	if err != nil {
		return err
	}
	t.change(j, -j.Running, -j.Pending, resource.Tuple{}.Sub(j.Usage), resource.Tuple{}.Sub(j.Demand))
	t.unlink(j)
	delete(t.jobs, id)
	old := j.slot
	j.slot = -1
	t.setSlot(j, old)
	return nil
}

// RemoveQueue removes an empty queue. It fails on the root, an unknown queue, or a queue
// that still holds queues or jobs.
func (t *Tree) RemoveQueue(id string) error {
	if id == "" {
		return fieldErr("queue", id, ErrInvalidID)
	}
	q, err := t.queue(id)
	if err != nil {
		return err
	}
	if len(q.kids) > 0 {
		return fieldErr(who(KindQueue, id)+" children", len(q.kids), ErrNotEmpty)
	}
	t.unlink(q) // an empty queue is never eligible: its parent's order is unaffected
	delete(t.queues, id)
	return nil
}

// unlink takes n out of its parent's kids. n must not be in its parent's active set: a
// job with nothing pending, or an empty queue.
func (t *Tree) unlink(n *tnode) {
	p := n.parent
	last := len(p.kids) - 1
	p.kids[n.idx] = p.kids[last]
	p.kids[n.idx].idx = n.idx
	p.kids[last] = nil
	p.kids = p.kids[:last]
	n.parent = nil
}

// AddPending records tasks more tasks submitted to a job, asking for demand in total.
// tasks must be positive.
func (t *Tree) AddPending(job string, tasks int, demand resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if tasks <= 0 || tasks > math.MaxInt-t.root.Pending {
		// The root counts every pending task: a count that fits beside its total fits
		// beside every queue's and job's.
		return fieldErr(who(KindJob, job)+" tasks", tasks, ErrInvalidCount)
	}
	if err := t.schema.Validate(demand); err != nil {
		return fieldErr(who(KindJob, job)+" demand", demand, err)
	}
	t.change(j, 0, tasks, resource.Tuple{}, demand)
	return nil
}

// RemovePending records tasks pending tasks of a job withdrawn (cancelled) without
// running, asking for demand in total. It fails when the job has fewer pending tasks or
// its pending demand does not cover demand.
func (t *Tree) RemovePending(job string, tasks int, demand resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if err := t.checkTake(tasks, demand, j.Pending, j.Demand, "pending"); err != nil {
		return within(who(KindJob, job), err)
	}
	t.change(j, 0, -tasks, resource.Tuple{}, resource.Tuple{}.Sub(demand))
	return nil
}

// Start records one pending task of a job starting: it leaves the pending tasks with its
// request and joins the running ones holding usage (often the same tuple; usage may
// differ when the scheduler allocates a predicted profile's peak rather than the
// request). It fails when the job has no pending task or its pending demand does not
// cover request.
func (t *Tree) Start(job string, request, usage resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if err := t.checkTake(1, request, j.Pending, j.Demand, "pending"); err != nil {
		return within(who(KindJob, job), err)
	}
	if err := t.schema.Validate(usage); err != nil {
		return fieldErr(who(KindJob, job)+" usage", usage, err)
	}
	t.change(j, 1, -1, usage, resource.Tuple{}.Sub(request))
	return nil
}

// Allocate records one more task of a job running and holding usage, without taking it
// from the pending tasks (a speculative copy, a task the caller does not count as
// pending). Allocate does not enforce max shares; ask Admit first.
func (t *Tree) Allocate(job string, usage resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if err := t.schema.Validate(usage); err != nil {
		return fieldErr(who(KindJob, job)+" usage", usage, err)
	}
	t.change(j, 1, 0, usage, resource.Tuple{})
	return nil
}

// Release records one running task of a job ending and giving back usage. It fails when
// the job has no running task or does not hold usage.
func (t *Tree) Release(job string, usage resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if err := t.checkTake(1, usage, j.Running, j.Usage, "running"); err != nil {
		return within(who(KindJob, job), err)
	}
	t.change(j, -1, 0, resource.Tuple{}.Sub(usage), resource.Tuple{})
	return nil
}

func (t *Tree) checkTake(tasks int, amount resource.Tuple, have int, held resource.Tuple, what string) error {
	if tasks <= 0 {
		return fieldErr("tasks", tasks, ErrInvalidCount)
	}
	if tasks > have {
		return fieldErr(fmt.Sprintf("%s tasks (has %d)", what, have), tasks, ErrUnderflow)
	}
	if err := t.schema.Validate(amount); err != nil {
		return fieldErr("amount", amount, err)
	}
	if !held.Covers(amount) {
		return fieldErr(fmt.Sprintf("%s amount (holds %v)", what, held), amount, ErrUnderflow)
	}
	return nil
}

// Admit reports whether one more task of a job holding usage keeps the job and every
// queue above it within its max share, as measured by the policy ordering it: nil when
// it does, else an error wrapping ErrOverMax that names the first entity (from the job
// up) it would take over. This is the Capacity policy's "elastic up to the maximum".
// An entity configured with FirstTaskOverMax(true) and no task running is not checked.
func (t *Tree) Admit(job string, usage resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if err := t.schema.Validate(usage); err != nil {
		return fieldErr(who(KindJob, job)+" usage", usage, err)
	}
	for n := j; n.parent != nil; n = n.parent {
		if !n.Share.HasMax() || n.firstOver && n.Running == 0 {
			continue
		}
		e := n.Entry
		e.Running++
		e.Usage = e.Usage.Add(usage)
		used, _ := n.parent.policy.Measure(&e, t.capacity)
		if used > n.Share.Max {
			return fieldErr(fmt.Sprintf("%s %q share after allocation (max %v)", n.Kind, n.ID, n.Share.Max), used, ErrOverMax)
		}
	}
	return nil
}

// Resize records one running task of a job changing, in place, from holding from to
// holding to: the job keeps its running count, and its usage (and its ancestors') moves
// by to − from at once, as Allocate(job, to) then Release(job, from) would leave it, but
// with one re-seat. Like Allocate it does not enforce max shares. It fails, changing
// nothing, when the job has no running task, when from or to is invalid, or when the
// job does not hold from.
func (t *Tree) Resize(job string, from, to resource.Tuple) error {
	j, err := t.job(job)
	if err != nil {
		return err
	}
	if err := t.checkTake(1, from, j.Running, j.Usage, "running"); err != nil {
		return within(who(KindJob, job), err)
	}
	if err := t.schema.Validate(to); err != nil {
		return fieldErr(who(KindJob, job)+" usage", to, err)
	}
	t.change(j, 0, 0, to.Sub(from), resource.Tuple{})
	return nil
}

// change applies a delta to a job and its ancestors, keeping the ordered sets right.
// Each level is re-seated bottom-up (reseat): one whose key and eligibility the delta
// leaves as they were (pending tasks added to a job that has some, under a policy
// that keys by usage) keeps its place without a delete and an insert.
func (t *Tree) change(j *tnode, running, pending int, usage, demand resource.Tuple) {
	for n := j; n != nil; n = n.parent {
		n.Running += running
		n.Pending += pending
		n.Usage = n.Usage.Add(usage)
		n.Demand = n.Demand.Add(demand)
	}
	for n := j; n.parent != nil; n = n.parent {
		t.reseat(n)
	}
}

// reseat brings n's place in its parent's active set up to date after its stats
// changed (its children's places already are): as detach and place, but a node that
// stays eligible under the same key is left where it is, and one that stays eligible
// under another is moved (seatTree.Rekey: within its leaf when its place is there). The
// set afterwards holds the same nodes under the same keys either way, and so orders
// them alike.
func (t *Tree) reseat(n *tnode) {
	key, ok := t.eligibleKey(n)
	if n.inParent {
		switch {
		case ok && key == n.key:
			return
		case ok:
			n.parent.active.Rekey(n, key)
			return
		}
		n.parent.active.Delete(seatOf(n)) // under its old key
		n.inParent = false
	}
	if ok {
		n.key = key
		n.parent.active.Insert(seatOf(n))
		n.inParent = true
	}
}

// eligibleKey returns n's key under its parent's policy, and whether n is eligible
// for its parent's active set: it has pending work (a job with pending tasks, a queue
// with an eligible child) and is not at its max share.
func (t *Tree) eligibleKey(n *tnode) (OrderKey, bool) {
	p := n.parent.policy
	switch {
	case n.Kind == KindJob && n.Pending == 0, n.Kind == KindQueue && n.active.Len() == 0:
		return OrderKey{}, false
	}
	if n.Share.HasMax() {
		if used, _ := p.Measure(&n.Entry, t.capacity); used >= n.Share.Max {
			return OrderKey{}, false
		}
	}
	return p.Key(&n.Entry, t.capacity), true
}

// detach takes n and its ancestors out of their parents' active sets, before their
// stats (and so their keys) change.
func (t *Tree) detach(n *tnode) {
	for ; n.parent != nil; n = n.parent {
		if n.inParent {
			n.parent.active.Delete(seatOf(n))
			n.inParent = false
		}
	}
}

// attach re-keys n and its ancestors and puts the eligible ones back, bottom-up, so a
// queue's eligibility sees its children's.
func (t *Tree) attach(n *tnode) {
	for ; n != nil && n.parent != nil; n = n.parent {
		t.place(n)
	}
}

// place computes n's key under its parent's policy and inserts n in its parent's active
// set when eligible: it has pending work (a job with pending tasks, a queue with an
// eligible child) and is not at its max share.
func (t *Tree) place(n *tnode) {
	key, ok := t.eligibleKey(n)
	if !ok {
		return
	}
	n.key = key
	n.parent.active.Insert(seatOf(n))
	n.inParent = true
}

// rebuild recomputes n's active set from its kids (and, when deep, theirs first).
func (t *Tree) rebuild(n *tnode, deep bool) {
	n.active.Clear()
	for _, k := range n.kids {
		k.inParent = false
		if deep && k.Kind == KindQueue {
			t.rebuild(k, true)
		}
		t.place(k)
	}
}

// Capacity is the cluster capacity every share is taken against.
func (t *Tree) Capacity() resource.Tuple { return t.capacity }

// Schema is the schema of every tuple in the tree.
func (t *Tree) Schema() *resource.Schema { return t.schema }

// SetCapacity changes the cluster capacity (nodes joined or left) and re-orders the
// whole tree, O(n log n). On error nothing changes.
func (t *Tree) SetCapacity(c resource.Tuple) error {
	if err := t.schema.Validate(c); err != nil {
		return fieldErr("capacity", c, err)
	}
	if c == t.capacity {
		return nil
	}
	t.capacity = c
	t.rebuild(t.root, true)
	return nil
}

// Len is the number of jobs in the tree.
func (t *Tree) Len() int { return len(t.jobs) }

// Queue returns a snapshot of a queue's entry ("" for the root, whose counts and tuples
// are the cluster's totals).
func (t *Tree) Queue(id string) (Entry, error) {
	q, err := t.queue(id)
	if err != nil {
		return Entry{}, err
	}
	return q.Entry, nil
}

// Job returns a snapshot of a job's entry.
func (t *Tree) Job(id string) (Entry, error) {
	j, err := t.job(id)
	if err != nil {
		return Entry{}, err
	}
	return j.Entry, nil
}

// Parent returns the ID of the queue holding a queue or job of the given kind ("" for
// the root).
func (t *Tree) Parent(kind Kind, id string) (string, error) {
	var n *tnode
	var err error
	switch kind {
	case KindQueue:
		if id == "" {
			return "", fieldErr("queue", id, ErrInvalidID)
		}
		n, err = t.queue(id)
	case KindJob:
		n, err = t.job(id)
	default:
		return "", fieldErr("kind", kind, ErrInvalidKind)
	}
	if err != nil {
		return "", err
	}
	return n.parent.ID, nil
}

// Next returns the job to offer resources to first: from the root down, the first
// eligible child of each queue in its policy's order (docs/methods.md §10: pick a queue,
// then a job). ok is false when no job has pending tasks within its max share.
func (t *Tree) Next() (job string, ok bool) {
	n := t.root
	for n.Kind == KindQueue {
		c, ok := n.active.Min()
		if !ok {
			return "", false
		}
		n = c.n
	}
	return n.ID, true
}

// Walk calls fn with every eligible job in offer order — each queue's eligible children
// in its policy's order, depth first — until fn returns false. This is Alg. 2.1's
// "for each queue … for each job", for a scheduler that passes over jobs (no task fits,
// delay scheduling). fn must not change the tree; stop the walk, change, walk again.
func (t *Tree) Walk(fn func(job string) bool) {
	t.walk(t.root, func(j seat) bool { return fn(j.n.ID) })
}

// WalkSlots is Walk handing fn each job's slot (Slot; −1 for a job given none)
// instead of its ID.
func (t *Tree) WalkSlots(fn func(slot int) bool) {
	t.walk(t.root, func(j seat) bool { return fn(j.slot) })
}

// walk calls fn with the seat of every eligible job under queue q, in offer order,
// until fn returns false; it reads the node of no job.
func (t *Tree) walk(q *tnode, fn func(seat) bool) bool {
	return q.active.Ascend(func(c seat) bool {
		if c.slot != seatQueue {
			return fn(c)
		}
		return t.walk(c.n, fn)
	})
}

// Order is Walk as an iterator over job IDs, for use with range.
func (t *Tree) Order() iter.Seq[string] {
	return func(yield func(string) bool) { t.Walk(yield) }
}

// WalkChildren calls fn with the eligible children of one queue ("" for the root), in
// its policy's order, until fn returns false: one level of the three-level model, as
// PRRL's Alg. 4.2 picks a pool and then a job.
func (t *Tree) WalkChildren(queue string, fn func(id string, kind Kind) bool) error {
	q, err := t.queue(queue)
	if err != nil {
		return err
	}
	q.active.Ascend(func(c seat) bool { return fn(c.n.ID, c.n.Kind) })
	return nil
}

// Snapshot returns, for a queue ("" for the root), every child's entry (eligible or
// not) in ID order, then kind: a consistent view for reports and for WaterFill.
func (t *Tree) Snapshot(queue string) ([]Entry, error) {
	q, err := t.queue(queue)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(q.kids))
	for _, k := range q.kids {
		out = append(out, k.Entry)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := cmp.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return cmp.Compare(a.Kind, b.Kind)
	})
	return out, nil
}
