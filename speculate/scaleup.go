package speculate

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Node is a server as the scale-up planner sees it: what it has and what its tasks
// hold.
type Node struct {
	// ID names the node; unique in a PlanInput.
	ID string
	// Capacity is the node's total resources.
	Capacity resource.Tuple
	// Allocated is what the node's tasks hold in total. It may exceed Capacity on a
	// compressible dimension (compressed tasks), never on a non-compressible one.
	Allocated resource.Tuple
}

// Straggler is a latency-sensitive task found slow by predict.DetectStraggler
// (docs/methods.md §11, S1–S4), with the resources it needs to catch up (ScaleUp computes
// an amount).
type Straggler struct {
	// Task and Node identify the task and where it runs.
	Task, Node string
	// Allocated is what the task holds now; a move needs Allocated + Extra on the new
	// node and frees Allocated on the old one.
	Allocated resource.Tuple
	// Extra is the expansion the task needs.
	Extra resource.Tuple
}

// BatchTask is a batch task the planner may shrink: reclaim its redundant allocation
// (predict.DetectRedundant, docs/methods.md §11 T1–T2) or preempt part of it. Shrinking
// does not kill the task.
type BatchTask struct {
	// Task and Node identify the task and where it runs.
	Task, Node string
	// Allocated is what the task holds now.
	Allocated resource.Tuple
	// Reclaimable is Rr, the redundant amount that can be taken back
	// (predict.Redundancy.Reclaimable); zero for a task that is not redundant.
	Reclaimable resource.Tuple
	// Preemptible is Rp, how much more the task may be shrunk by preemption; zero for
	// a task that may not be preempted. Reclaimable + Preemptible ≤ Allocated.
	Preemptible resource.Tuple
	// Priority orders preemption: lower priorities are preempted first.
	Priority int
}

// Shrunk is a batch task that an earlier plan reclaimed from or preempted, and that
// recovery may give resources back to.
type Shrunk struct {
	// Task and Node identify the task and where it runs.
	Task, Node string
	// Taken is what was taken from it and not yet given back.
	Taken resource.Tuple
	// Preempted reports that the amount was preempted (true) or reclaimed as
	// redundant (false). Preempted tasks get their resources back first.
	Preempted bool
}

// PlanInput is the state the scale-up planner decides on.
type PlanInput struct {
	// Nodes are the cluster's nodes; every node a task names must be here.
	Nodes []Node
	// Stragglers are the latency-sensitive tasks to expand.
	Stragglers []Straggler
	// NewDemand is the demand of newly arrived latency-sensitive tasks. The plan makes
	// room for it (R_NE includes it); placing the tasks is the scheduler's job.
	NewDemand resource.Tuple
	// Batch are the batch tasks that may be reclaimed from or preempted.
	Batch []BatchTask
	// Shrunk are the batch tasks waiting for resources taken from them earlier.
	Shrunk []Shrunk
}

// StepKind is the kind of a plan step.
type StepKind uint8

// The step kinds, in the order a plan lists them.
const (
	// Reclaim takes Step.Amount of a batch task's redundant allocation back.
	Reclaim StepKind = iota
	// Preempt shrinks a batch task's allocation by Step.Amount.
	Preempt
	// Expand grows a straggler's allocation in place by Step.Amount.
	Expand
	// Move moves a straggler from Step.From to Step.Node with the allocation
	// Step.Amount (its old allocation plus the expansion), freeing Step.Released on
	// Step.From.
	Move
	// Restore gives Step.Amount back to a batch task shrunk earlier.
	Restore
)

// String names the kind.
func (k StepKind) String() string {
	switch k {
	case Reclaim:
		return "reclaim"
	case Preempt:
		return "preempt"
	case Expand:
		return "expand"
	case Move:
		return "move"
	case Restore:
		return "restore"
	}
	return fmt.Sprintf("StepKind(%d)", uint8(k))
}

// Step is one action of a plan, for the embedder to carry out (resize or move a
// container).
type Step struct {
	// Kind is what to do.
	Kind StepKind
	// Task is the task acted on.
	Task string
	// Node is the node whose allocation changes: the task's node, or a Move's target.
	Node string
	// From is a Move's source node; empty otherwise.
	From string
	// For names the straggler a Reclaim or Preempt makes room for on its node (the
	// local top-up); empty for the cluster-wide ones of steps 5–7.
	For string
	// Amount is the change: taken by Reclaim and Preempt, added by Expand and Restore;
	// for Move the task's whole allocation on the target.
	Amount resource.Tuple
	// Released is what a Move frees on From: the task's old allocation.
	Released resource.Tuple
}

// Unserved is a straggler the plan could not expand: no node had room, even after what
// was reclaimed and preempted.
type Unserved struct {
	// Task and Node identify the straggler and where it runs.
	Task, Node string
	// Extra is the expansion it still needs.
	Extra resource.Tuple
}

// Plan is the scale-up planner's decision (docs/methods.md §11, steps 1–10 and recovery):
// steps to apply in order, and the accounting behind them.
type Plan struct {
	// Steps are the actions in the order to apply them: reclaims, preemptions,
	// expansions and moves, restores.
	Steps []Step
	// Idle is R_IDLE, the cluster's free resources: per node capacity − allocated,
	// negative parts counted as zero.
	Idle resource.Tuple
	// Need is R_NE: the stragglers' expansions plus the new latency-sensitive demand.
	Need resource.Tuple
	// Reclaimed and Preempted are what the plan takes from batch tasks, summed.
	Reclaimed, Preempted resource.Tuple
	// Available is R_M at the end: Idle + Reclaimed + Preempted.
	Available resource.Tuple
	// Restored is what the plan gives back to shrunk batch tasks, summed.
	Restored resource.Tuple
	// Unserved are the stragglers left unexpanded.
	Unserved []Unserved
}

// Covered reports whether the plan made enough room overall: Available covers Need.
func (p Plan) Covered() bool { return p.Available.Covers(p.Need) }

type plannerConfig struct {
	moves, recovery, topUp bool
}

// PlannerOption configures NewPlanner.
type PlannerOption func(*plannerConfig) error

// WithMoves sets whether a straggler whose node has no room may be moved to one that
// has (steps 4 and 9; default true).
func WithMoves(on bool) PlannerOption {
	return func(c *plannerConfig) error { c.moves = on; return nil }
}

// WithLocalTopUp sets whether a straggler that can neither expand in place nor move
// may have room made on its own node by reclaiming from, then preempting, the batch
// tasks there — only its deficit, and only when they can cover all of it (default
// true). See Planner.
func WithLocalTopUp(on bool) PlannerOption {
	return func(c *plannerConfig) error { c.topUp = on; return nil }
}

// WithRecovery sets whether plans give shrunk batch tasks their resources back when
// there is room (default true).
func WithRecovery(on bool) PlannerOption {
	return func(c *plannerConfig) error { c.recovery = on; return nil }
}

// Planner is the straggler scale-up planner for mixed workloads (docs/methods.md §11; the
// HUST patent). It protects latency-sensitive tasks with the least loss to batch
// work, without killing anything:
//
//	1     R_IDLE = the free resources; R_NE = the stragglers' expansions + the new
//	      latency-sensitive demand; R_M = R_IDLE
//	2     if R_IDLE covers R_NE go to 8, otherwise to 5
//	5–6   while R_M does not cover R_NE and redundant batch tasks remain, reclaim
//	      from one: R_M += Rr
//	7     while R_M does not cover R_NE and preemptible batch tasks remain, preempt
//	      one: R_M += Rp
//	8–9   (3–4) expand each straggler in place if its node has room, otherwise move
//	      it to a node that has room for its whole new allocation
//	10    end; when nothing had to be reclaimed or preempted, recovery gives batch
//	      tasks shrunk earlier their resources back, out of what R_NE leaves of
//	      R_IDLE, preempted tasks first
//
// The plan is data: a list of Steps the embedder applies in order (Apply does it on
// node totals and checks every step). A step never takes a node over its capacity on a
// dimension it adds to, so applying the plan never takes a non-compressible dimension
// over capacity.
//
// Readings, where the patent is silent or truncated (its text stops inside step 9):
//   - "R_IDLE > R_NE" and "R_M > R_NE" compare tuples; we read them as "covers on every
//     dimension" (≥), the complement of eq. 13's "less".
//   - Reclaim and preemption take only what is still missing: from each task, on each
//     dimension, the smaller of its Rr (Rp) and the remaining shortfall R_NE − R_M, and
//     nothing from a task that would not reduce the shortfall. The last task is shrunk
//     only as far as needed, so the plan never frees more than R_NE requires.
//   - Which task to reclaim or preempt first: tasks on the node of a straggler that
//     cannot expand in place come first (room there lets it expand in place), then
//     those covering more of the shortfall, then by task ID; preemption takes lower
//     Priority first.
//   - Stragglers are expanded largest expansion (as a share of their node) first; a
//     move goes to the node that keeps the most room (the largest smallest free share
//     after the move), then the smallest ID. A move needs the whole new allocation on
//     the target (the patent asks for "a node whose allocatable resources meet the
//     expansion"; a container moved there needs its old allocation too).
//   - R_M is a cluster-wide sum, so it can cover R_NE while no single node has room
//     for a straggler. Then (WithLocalTopUp, on by default) the planner reclaims from,
//     then preempts, the batch tasks on the straggler's own node — only the deficit,
//     and only when they can cover all of it — and expands it in place; those steps
//     name the straggler in Step.For. A straggler still without room is reported in
//     Plan.Unserved and nothing is taken for it.
//
// A Planner is immutable and safe for concurrent use.
type Planner struct {
	schema *resource.Schema
	cfg    plannerConfig
}

// NewPlanner returns a planner for tuples of schema, with moves and recovery on unless
// opts turn them off. It fails on a nil schema or an invalid option.
func NewPlanner(schema *resource.Schema, opts ...PlannerOption) (*Planner, error) {
	if schema == nil {
		return nil, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	cfg := plannerConfig{moves: true, recovery: true, topUp: true}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Planner{schema: schema, cfg: cfg}, nil
}

// fits reports whether free has room for req on every dimension req asks for.
func fits(free, req resource.Tuple) bool {
	for d := range req {
		if req[d] > 0 && free[d] < req[d] {
			return false
		}
	}
	return true
}

// positive returns t with negative slots set to zero.
func positive(t resource.Tuple) resource.Tuple { return t.Max(resource.Tuple{}) }

// addChecked returns a + b, and false when a dimension's sum overflows int64 (the sum
// is then not to be used). A sum overflows when its sign differs from both addends';
// the signs of those differences, or-ed together, tell it without a branch a
// dimension.
func addChecked(a, b resource.Tuple) (resource.Tuple, bool) {
	var over int64
	for d := range a {
		s := a[d] + b[d]
		over |= (a[d] ^ s) & (b[d] ^ s)
		a[d] = s
	}
	return a, over >= 0
}

// run is the working state of one Plan call. Tasks and nodes are referred to by their
// index in the input; at says where each task is.
type run struct {
	p     *Planner
	in    PlanInput
	at    nodeIndex
	free  []resource.Tuple // per node: capacity − allocated, as the plan goes
	most  resource.Tuple   // at least the largest free amount of any node, per dimension (roomFor)
	taken []taken          // what the plan took from the batch tasks it took from
	slot  []int32          // per batch task: 1 + its place in taken, 0 for none; nil until the plan takes
	local localTasks       // per node: its batch tasks, for the local top-up
	avail resource.Tuple   // R_M
	plan  Plan
}

// nodeIndex is where the input's tasks are: the index in PlanInput.Nodes of each
// straggler's, batch task's and shrunk task's node, by the task's index in its list.
type nodeIndex struct {
	straggler, batch, shrunk []int
}

// Plan decides steps 1–10 and recovery for in. It fails — and plans nothing — on a task
// or node with an empty or duplicate ID, a task on a node not in in.Nodes, an amount
// that is negative or outside the schema, a node allocated over its capacity on a
// non-compressible dimension, a batch task whose Reclaimable + Preemptible exceeds its
// allocation, listed tasks holding more than their node has allocated, or sums too
// large for int64.
func (p *Planner) Plan(in PlanInput) (Plan, error) {
	at, err := p.validate(in)
	if err != nil {
		return Plan{}, err
	}
	r := &run{p: p, in: in, at: at, free: make([]resource.Tuple, len(in.Nodes))}
	// A straggler's expansion mostly takes a step and a reclaim or two, a restore one:
	// room for that much saves the long list's first copies as it grows (step).
	if guess := 2*len(in.Stragglers) + len(in.Shrunk); guess > 0 {
		r.plan.Steps = make([]Step, 0, guess+8)
		r.taken = make([]taken, 0, len(in.Stragglers)+8)
	}
	for i, n := range in.Nodes {
		r.free[i] = n.Capacity.Sub(n.Allocated)
		r.most = r.most.Max(r.free[i])
		r.plan.Idle, _ = addChecked(r.plan.Idle, positive(r.free[i])) // checked in validate
	}
	r.plan.Need = in.NewDemand
	for i := range in.Stragglers {
		r.plan.Need, _ = addChecked(r.plan.Need, in.Stragglers[i].Extra)
	}
	r.avail = r.plan.Idle
	needed := !r.avail.Covers(r.plan.Need) // step 2
	if needed {
		hot := make([]bool, len(in.Nodes))
		for i := range in.Stragglers {
			if n := at.straggler[i]; !fits(r.free[n], in.Stragglers[i].Extra) {
				hot[n] = true
			}
		}
		short0 := positive(r.plan.Need.Sub(r.avail))
		for _, preempt := range []bool{false, true} { // steps 5–6, then 7
			if r.avail.Covers(r.plan.Need) {
				break
			}
			q := r.shrinkQueue(hot, short0, preempt)
			for !r.avail.Covers(r.plan.Need) {
				i, ok := q.pop()
				if !ok {
					break
				}
				r.shrink(i, preempt, positive(r.plan.Need.Sub(r.avail)), "")
			}
		}
	}
	r.expand() // steps 3–4, 8–9
	r.plan.Available = r.avail
	if p.cfg.recovery && !needed && r.plan.Reclaimed.IsZero() && r.plan.Preempted.IsZero() {
		r.recover()
	}
	if len(r.plan.Steps) == 0 {
		r.plan.Steps = nil // no room kept for a plan without steps
	}
	return r.plan, nil
}

// shrink takes from batch task i the part of its remaining reclaimable (preemptible)
// amount that is within limit, and plans the step; for names the straggler a local
// top-up serves.
func (r *run) shrink(i int, preempt bool, limit resource.Tuple, forTask string) resource.Tuple {
	t := &r.in.Batch[i]
	rem, kind := r.left(i, preempt), Reclaim
	if preempt {
		kind = Preempt
	}
	take := rem.Min(limit)
	if take.IsZero() {
		return take
	}
	if r.slot == nil {
		r.slot = make([]int32, len(r.in.Batch))
	}
	if r.slot[i] == 0 {
		r.taken = append(r.taken, taken{})
		r.slot[i] = int32(len(r.taken))
	}
	tk := &r.taken[r.slot[i]-1]
	if preempt {
		tk.preempted = tk.preempted.Add(take)
		r.plan.Preempted = r.plan.Preempted.Add(take)
	} else {
		tk.reclaimed = tk.reclaimed.Add(take)
		r.plan.Reclaimed = r.plan.Reclaimed.Add(take)
	}
	r.step(Step{Kind: kind, Task: t.Task, Node: t.Node, For: forTask, Amount: take})
	n := r.at.batch[i]
	r.free[n] = r.free[n].Add(take)
	r.most = r.most.Max(r.free[n])
	r.avail = r.avail.Add(take)
	return take
}

// taken is what a plan took from a batch task: reclaimed and preempted.
type taken struct {
	reclaimed, preempted resource.Tuple
}

// left is what the plan may still take from batch task i: of its reclaimable amount,
// or of its preemptible amount when preempt.
func (r *run) left(i int, preempt bool) resource.Tuple {
	b := &r.in.Batch[i]
	var tk *taken
	if r.slot != nil && r.slot[i] > 0 {
		tk = &r.taken[r.slot[i]-1]
	}
	switch {
	case tk == nil && preempt:
		return b.Preemptible
	case tk == nil:
		return b.Reclaimable
	case preempt:
		return b.Preemptible.Sub(tk.preempted)
	}
	return b.Reclaimable.Sub(tk.reclaimed)
}

// step adds st to the plan's steps. A plan may have thousands: their room doubles when
// it runs out (append grows a long slice by a quarter, copying it over and over).
func (r *run) step(st Step) {
	if len(r.plan.Steps) == cap(r.plan.Steps) {
		r.plan.Steps = slices.Grow(r.plan.Steps, max(len(r.plan.Steps), 8))
	}
	r.plan.Steps = append(r.plan.Steps, st)
}

// shrinkCand is a batch task that can help with the shortfall, with what orders it
// among the others (see shrinkQueue).
type shrinkCand struct {
	task  string // its ID, the last tie-break
	i     int    // index into in.Batch
	prio  int
	score float64 // the largest share of the shortfall it covers on one dimension
	hot   bool    // on the node of a straggler that cannot expand in place
}

// shrinkQueue hands out the batch tasks that can help with a shortfall in the order
// steps 5–7 take them (see Planner's Readings): preemption lower Priority first, then
// the tasks on a straggler's node, then those covering more of the shortfall, then by
// task ID. It is a binary heap: steps 5–7 stop as soon as R_M covers R_NE, so a plan
// that needs a few of many tasks orders only those.
type shrinkQueue struct {
	cands   []shrinkCand
	preempt bool
}

// shrinkQueue queues the batch tasks that can help with the shortfall short0: those
// with some reclaimable (preempt: preemptible) amount on a dimension short0 lacks.
func (r *run) shrinkQueue(hot []bool, short0 resource.Tuple, preempt bool) *shrinkQueue {
	q := &shrinkQueue{cands: make([]shrinkCand, 0, len(r.in.Batch)), preempt: preempt}
	for i := range r.in.Batch {
		t := &r.in.Batch[i]
		amount := &t.Reclaimable
		if preempt {
			amount = &t.Preemptible
		}
		score := 0.0
		for d := range amount {
			if short0[d] > 0 && amount[d] > 0 {
				score = max(score, float64(min(amount[d], short0[d]))/float64(short0[d]))
			}
		}
		if score == 0 {
			continue
		}
		q.cands = append(q.cands, shrinkCand{task: t.Task, i: i, prio: t.Priority, score: score, hot: hot[r.at.batch[i]]})
	}
	for k := len(q.cands)/2 - 1; k >= 0; k-- {
		q.down(k)
	}
	return q
}

// before reports whether candidate a is taken before b.
func (q *shrinkQueue) before(a, b *shrinkCand) bool {
	if q.preempt && a.prio != b.prio {
		return a.prio < b.prio
	}
	if a.hot != b.hot {
		return a.hot
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return a.task < b.task
}

// pop returns the index into in.Batch of the next task to take, and false when none
// is left.
func (q *shrinkQueue) pop() (int, bool) {
	if len(q.cands) == 0 {
		return 0, false
	}
	i := q.cands[0].i
	last := len(q.cands) - 1
	q.cands[0] = q.cands[last]
	q.cands = q.cands[:last]
	q.down(0)
	return i, true
}

// down sifts the candidate at k down to its place in the heap.
func (q *shrinkQueue) down(k int) {
	c := q.cands
	for {
		first, l := k, 2*k+1
		if l < len(c) && q.before(&c[l], &c[first]) {
			first = l
		}
		if l+1 < len(c) && q.before(&c[l+1], &c[first]) {
			first = l + 1
		}
		if first == k {
			return
		}
		c[k], c[first] = c[first], c[k]
		k = first
	}
}

// expand plans steps 8–9 (and 3–4): each straggler in place, else moved, else — with
// the local top-up — in place after shrinking batch tasks on its node, else unserved.
func (r *run) expand() {
	in := r.in
	order := make([]int, 0, len(in.Stragglers))
	share := make([]float64, len(in.Stragglers))
	for i := range in.Stragglers {
		s := &in.Stragglers[i]
		if s.Extra.IsZero() {
			continue
		}
		order = append(order, i)
		share[i] = s.Extra.DominantShare(in.Nodes[r.at.straggler[i]].Capacity)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(share[b], share[a]); c != 0 {
			return c
		}
		return cmp.Compare(in.Stragglers[a].Task, in.Stragglers[b].Task)
	})
	for _, i := range order {
		s := &in.Stragglers[i]
		n := r.at.straggler[i]
		if fits(r.free[n], s.Extra) {
			r.free[n] = r.free[n].Sub(s.Extra)
			r.step(Step{Kind: Expand, Task: s.Task, Node: s.Node, Amount: s.Extra})
			continue
		}
		if r.p.cfg.moves {
			whole := s.Allocated.Add(s.Extra) // checked in validate
			if t := r.roomFor(n, whole); t >= 0 {
				r.free[t] = r.free[t].Sub(whole)
				r.free[n] = r.free[n].Add(s.Allocated)
				r.most = r.most.Max(r.free[n])
				r.step(Step{Kind: Move, Task: s.Task, Node: in.Nodes[t].ID, From: s.Node, Amount: whole, Released: s.Allocated})
				continue
			}
		}
		if r.p.cfg.topUp && r.topUp(s, n) {
			r.free[n] = r.free[n].Sub(s.Extra)
			r.step(Step{Kind: Expand, Task: s.Task, Node: s.Node, Amount: s.Extra})
			continue
		}
		r.plan.Unserved = append(r.plan.Unserved, Unserved{Task: s.Task, Node: s.Node, Extra: s.Extra})
	}
}

// topUp makes room for straggler s on its node n by reclaiming, then preempting, from
// the batch tasks on n — only the deficit, and only if the node can cover all of it.
func (r *run) topUp(s *Straggler, n int) bool {
	deficit := s.Extra.Sub(r.free[n]).Only(mask(s.Extra))
	deficit = positive(deficit)
	local := r.local.on(r, n)
	var can resource.Tuple // what the node's tasks can give towards the deficit
	for _, i := range local {
		if can.Covers(deficit) {
			break // it only grows
		}
		can, _ = addChecked(can, r.left(i, false).Add(r.left(i, true)).Min(deficit))
	}
	if !can.Covers(deficit) {
		return false
	}
	for _, preempt := range []bool{false, true} {
		for _, i := range local {
			if deficit.IsZero() {
				return true
			}
			deficit = deficit.Sub(r.shrink(i, preempt, deficit, s.Task))
		}
	}
	return deficit.IsZero()
}

// localTasks lists the batch tasks of each node, lowest priority first, then by ID —
// the order of the local top-up. The lists are laid end to end, node by node, when a
// top-up first needs one, and each is sorted when first asked for.
type localTasks struct {
	tasks  []int  // indexes into in.Batch; node n's are tasks[start[n]:start[n+1]]
	start  []int  // by node, where its tasks begin; one more for the end
	sorted []bool // by node, whether its tasks are in top-up order yet
}

// on is node n's batch tasks in top-up order.
func (l *localTasks) on(r *run, n int) []int {
	if l.start == nil {
		l.start = make([]int, len(r.in.Nodes)+1)
		for _, m := range r.at.batch {
			l.start[m+1]++
		}
		for m := range r.in.Nodes {
			l.start[m+1] += l.start[m]
		}
		l.tasks = make([]int, len(r.in.Batch))
		next := slices.Clone(l.start[:len(r.in.Nodes)])
		for i, m := range r.at.batch {
			l.tasks[next[m]] = i
			next[m]++
		}
		l.sorted = make([]bool, len(r.in.Nodes))
	}
	local := l.tasks[l.start[n]:l.start[n+1]]
	if !l.sorted[n] {
		slices.SortFunc(local, func(a, b int) int {
			if c := cmp.Compare(r.in.Batch[a].Priority, r.in.Batch[b].Priority); c != 0 {
				return c
			}
			return cmp.Compare(r.in.Batch[a].Task, r.in.Batch[b].Task)
		})
		l.sorted[n] = true
	}
	return local
}

// mask is the set of dimensions where t is positive.
func mask(t resource.Tuple) resource.Mask {
	var m resource.Mask
	for d, x := range t {
		if x > 0 {
			m |= 1 << d
		}
	}
	return m
}

// roomFor is bestTarget on the plan's free amounts, at once −1 when no node has room
// for req on some dimension: a saturated cluster makes every straggler look. Each
// look brings r.most down to the largest free amounts it saw, so that the stragglers
// after a fruitless look skip theirs while no node gains room.
func (r *run) roomFor(from int, req resource.Tuple) int {
	if !fits(r.most, req) {
		return -1
	}
	best, most := bestTarget(r.in.Nodes, r.free, from, req)
	r.most = most
	return best
}

// bestTarget returns the node other than from with room for req that keeps the most
// room — the largest smallest free share after the move — or −1; and the largest free
// amount of any node (from included), per dimension.
func bestTarget(nodes []Node, free []resource.Tuple, from int, req resource.Tuple) (int, resource.Tuple) {
	best, bestSlack := -1, 0.0
	var most resource.Tuple
	for t := range nodes {
		if t == 0 {
			most = free[t]
		} else {
			most = most.Max(free[t])
		}
		if t == from || !fits(free[t], req) {
			continue
		}
		slack := math.Inf(1)
		for d, c := range nodes[t].Capacity {
			if c > 0 {
				slack = min(slack, float64(free[t][d]-req[d])/float64(c))
			}
		}
		if best < 0 || slack > bestSlack || slack == bestSlack && nodes[t].ID < nodes[best].ID {
			best, bestSlack = t, slack
		}
	}
	return best, most
}

// recover plans the resource recovery: shrunk tasks get back what their node has free,
// within what R_NE leaves of R_IDLE, preempted tasks first, then by task ID.
func (r *run) recover() {
	in := r.in
	surplus := positive(r.plan.Idle.Sub(r.plan.Need))
	order := make([]int, len(in.Shrunk))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ra, rb := &in.Shrunk[a], &in.Shrunk[b]
		if ra.Preempted != rb.Preempted {
			if ra.Preempted {
				return -1
			}
			return 1
		}
		return cmp.Compare(ra.Task, rb.Task)
	})
	for _, i := range order {
		s := &in.Shrunk[i]
		n := r.at.shrunk[i]
		give := s.Taken.Min(positive(r.free[n])).Min(surplus)
		if give.IsZero() {
			continue
		}
		r.free[n] = r.free[n].Sub(give)
		surplus = surplus.Sub(give)
		r.plan.Restored = r.plan.Restored.Add(give)
		r.step(Step{Kind: Restore, Task: s.Task, Node: s.Node, Amount: give})
	}
}

// validate checks in and returns where its tasks are. Inputs rarely name a task twice:
// it checks them once without looking for repeats, hashing the task IDs as it goes,
// and again with a set of the IDs seen when two hashes are equal — so that the error
// it returns is the first in input order either way.
func (p *Planner) validate(in PlanInput) (nodeIndex, error) {
	ids := newTaskIDs(len(in.Stragglers) + len(in.Batch))
	at, err := p.check(in, &ids)
	if ids.maybeRepeated() {
		ids = taskIDs{seen: make(map[string]struct{}, len(in.Stragglers)+len(in.Batch))}
		at, err = p.check(in, &ids)
	}
	return at, err
}

// check checks in, telling ids each task ID in input order, and returns where its
// tasks are.
func (p *Planner) check(in PlanInput, ids *taskIDs) (nodeIndex, error) {
	s := p.schema
	var at nodeIndex
	idx := make(map[string]int, len(in.Nodes))
	listed := make([]resource.Tuple, len(in.Nodes))
	var idle resource.Tuple
	for i, n := range in.Nodes {
		field := func(f string) string { return fmt.Sprintf("Nodes[%d].%s", i, f) }
		if n.ID == "" {
			return nodeIndex{}, fieldErr(field("ID"), n.ID, ErrEmptyID)
		}
		if _, dup := idx[n.ID]; dup {
			return nodeIndex{}, fieldErr(field("ID"), n.ID, ErrDuplicate)
		}
		if err := s.Validate(n.Capacity); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Capacity"))
		}
		if err := s.Validate(n.Allocated); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Allocated"))
		}
		if !n.Capacity.Only(s.NonCompressible()).Covers(n.Allocated.Only(s.NonCompressible())) {
			return nodeIndex{}, fieldErr(field("Allocated"), s.Format(n.Allocated)+" > capacity "+s.Format(n.Capacity), ErrOverCapacity)
		}
		var ok bool
		if idle, ok = addChecked(idle, positive(n.Capacity.Sub(n.Allocated))); !ok {
			return nodeIndex{}, fieldErr("Nodes", "free resources sum overflows int64", ErrInvalidValue)
		}
		idx[n.ID] = i
	}
	lastNode, lastIdx := "", 0 // a node's tasks mostly come one after another
	// task checks a task's ID and node, returning the node's index.
	task := func(field func(string) string, id, node string) (int, error) {
		if id == "" {
			return 0, fieldErr(field("Task"), id, ErrEmptyID)
		}
		if ids.repeated(id) {
			return 0, fieldErr(field("Task"), id, ErrDuplicate)
		}
		if node == "" {
			return 0, fieldErr(field("Node"), node, ErrEmptyID)
		}
		if node == lastNode {
			return lastIdx, nil
		}
		n, ok := idx[node]
		if !ok {
			return 0, fieldErr(field("Node"), node, ErrUnknownNode)
		}
		lastNode, lastIdx = node, n
		return n, nil
	}
	if err := s.Validate(in.NewDemand); err != nil {
		return nodeIndex{}, wrapf(err, "NewDemand")
	}
	need := in.NewDemand
	at.straggler = make([]int, len(in.Stragglers))
	for i := range in.Stragglers {
		st := &in.Stragglers[i]
		field := func(f string) string { return fmt.Sprintf("Stragglers[%d].%s", i, f) }
		n, err := task(field, st.Task, st.Node)
		if err != nil {
			return nodeIndex{}, err
		}
		at.straggler[i] = n
		if err := s.Validate(st.Allocated); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Allocated"))
		}
		if err := s.Validate(st.Extra); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Extra"))
		}
		var ok1, ok2, ok3 bool
		need, ok1 = addChecked(need, st.Extra)
		_, ok2 = addChecked(st.Allocated, st.Extra)
		listed[n], ok3 = addChecked(listed[n], st.Allocated)
		if !ok1 || !ok2 || !ok3 {
			return nodeIndex{}, fieldErr(field("Extra"), "amounts sum overflows int64", ErrInvalidValue)
		}
	}
	at.batch = make([]int, len(in.Batch))
	for i := range in.Batch {
		b := &in.Batch[i]
		field := func(f string) string { return fmt.Sprintf("Batch[%d].%s", i, f) }
		n, err := task(field, b.Task, b.Node)
		if err != nil {
			return nodeIndex{}, err
		}
		at.batch[i] = n
		if err := s.Validate(b.Allocated); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Allocated"))
		}
		if err := s.Validate(b.Reclaimable); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Reclaimable"))
		}
		if err := s.Validate(b.Preemptible); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Preemptible"))
		}
		shrink, ok := addChecked(b.Reclaimable, b.Preemptible)
		if !ok || !b.Allocated.Covers(shrink) {
			return nodeIndex{}, fieldErr(field("Preemptible"), fmt.Sprintf("reclaimable %s + preemptible %s > allocated %s",
				s.Format(b.Reclaimable), s.Format(b.Preemptible), s.Format(b.Allocated)), ErrInconsistent)
		}
		if listed[n], ok = addChecked(listed[n], b.Allocated); !ok {
			return nodeIndex{}, fieldErr(field("Allocated"), "amounts sum overflows int64", ErrInvalidValue)
		}
	}
	for i, n := range in.Nodes {
		if !n.Allocated.Covers(listed[i]) {
			return nodeIndex{}, fieldErr(fmt.Sprintf("Nodes[%d].Allocated", i),
				fmt.Sprintf("%s < %s held by the tasks listed on %s", s.Format(n.Allocated), s.Format(listed[i]), n.ID), ErrInconsistent)
		}
	}
	shrunk := make(map[string]struct{}, len(in.Shrunk))
	at.shrunk = make([]int, len(in.Shrunk))
	for i, r := range in.Shrunk {
		field := func(f string) string { return fmt.Sprintf("Shrunk[%d].%s", i, f) }
		if r.Task == "" {
			return nodeIndex{}, fieldErr(field("Task"), r.Task, ErrEmptyID)
		}
		if _, dup := shrunk[r.Task]; dup {
			return nodeIndex{}, fieldErr(field("Task"), r.Task, ErrDuplicate)
		}
		shrunk[r.Task] = struct{}{}
		n, ok := idx[r.Node]
		if !ok {
			if r.Node == "" {
				return nodeIndex{}, fieldErr(field("Node"), r.Node, ErrEmptyID)
			}
			return nodeIndex{}, fieldErr(field("Node"), r.Node, ErrUnknownNode)
		}
		at.shrunk[i] = n
		if err := s.Validate(r.Taken); err != nil {
			return nodeIndex{}, wrapf(err, "%s", field("Taken"))
		}
	}
	return at, nil
}

// taskIDs is what check knows of the task IDs it has seen: their hashes, in an
// open-addressing set (seen nil), or the IDs themselves (seen set), which tell a
// repeat.
type taskIDs struct {
	seed   maphash.Seed
	hashes []uint64 // a power of two of slots, each a hash with its lowest bit set, or 0 for none
	equal  bool     // two IDs hashed alike
	seen   map[string]struct{}
}

// newTaskIDs is a taskIDs that hashes up to n IDs.
func newTaskIDs(n int) taskIDs {
	slots := 16
	for slots < n+n/2 { // at most two thirds full
		slots *= 2
	}
	return taskIDs{seed: maphash.MakeSeed(), hashes: make([]uint64, slots)}
}

// repeated reports whether id was seen before — always false while only hashes are
// kept — and records it.
func (t *taskIDs) repeated(id string) bool {
	if t.seen == nil {
		h := maphash.String(t.seed, id) | 1
		mask := uint64(len(t.hashes) - 1)
		for i := h & mask; ; i = (i + 1) & mask {
			switch t.hashes[i] {
			case 0:
				t.hashes[i] = h
				return false
			case h:
				t.equal = true
				return false
			}
		}
	}
	if _, dup := t.seen[id]; dup {
		return true
	}
	t.seen[id] = struct{}{}
	return false
}

// maybeRepeated reports whether two of the IDs hashed may be the same: two hashes are.
func (t *taskIDs) maybeRepeated() bool { return t.equal }

// Apply returns the nodes as they are after the steps, applied in order: each step's
// amounts are added to or taken from the Allocated of the nodes it names. It checks
// every step as it goes and fails — returning nothing — on a node not in nodes, an
// allocation that would fall below zero, or a step that would take a non-compressible
// dimension over capacity. nodes is not modified.
func (p *Planner) Apply(nodes []Node, steps []Step) ([]Node, error) {
	out := slices.Clone(nodes)
	idx := make(map[string]int, len(out))
	for i, n := range out {
		idx[n.ID] = i
	}
	nc := p.schema.NonCompressible()
	change := func(i int, node string, t resource.Tuple, add bool) error {
		n, ok := idx[node]
		if !ok {
			return fieldErr(fmt.Sprintf("Steps[%d].Node", i), node, ErrUnknownNode)
		}
		if err := p.schema.Validate(t); err != nil {
			return wrapf(err, "Steps[%d]", i)
		}
		a := out[n].Allocated
		if add {
			if _, ok := addChecked(a, t); !ok {
				return fieldErr(fmt.Sprintf("Steps[%d].Amount", i), p.schema.Format(t), ErrInvalidValue)
			}
			a = a.Add(t)
			for d := range a {
				if nc.Has(d) && t[d] > 0 && a[d] > out[n].Capacity[d] {
					return fieldErr(fmt.Sprintf("Steps[%d] (%s %s on %s)", i, steps[i].Kind, steps[i].Task, node),
						p.schema.DimName(d)+" "+p.schema.Dim(d).FormatAmount(a[d])+" > capacity "+p.schema.Dim(d).FormatAmount(out[n].Capacity[d]), ErrOverCapacity)
				}
			}
		} else {
			a = a.Sub(t)
			if a.HasNegative() {
				return fieldErr(fmt.Sprintf("Steps[%d] (%s %s on %s)", i, steps[i].Kind, steps[i].Task, node), p.schema.Format(t), ErrInconsistent)
			}
		}
		out[n].Allocated = a
		return nil
	}
	for i, st := range steps {
		var err error
		switch st.Kind {
		case Reclaim, Preempt:
			err = change(i, st.Node, st.Amount, false)
		case Expand, Restore:
			err = change(i, st.Node, st.Amount, true)
		case Move:
			if err = change(i, st.Node, st.Amount, true); err == nil {
				err = change(i, st.From, st.Released, false)
			}
		default:
			err = fieldErr(fmt.Sprintf("Steps[%d].Kind", i), st.Kind, ErrInvalidValue)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ScaleUp returns the extra resources a straggler needs to finish within its objective
// (docs/methods.md §11), from the verdict predict.DetectStraggler gave at time now (its
// last sample), the task's start and T_SLO, and its allocation.
//
// Reading: the patent does not say how much to add. At its current speed v2 the task
// needs v.Finish − now more; it has start + slo − now left. Work is conserved under
// more resources as under compression (eq. 4), so the compressible allocation must grow
// by the factor k = (v.Finish − now)/(start + slo − now): Extra = ⌈(k − 1) × allocated⌉
// on the compressible dimensions, nothing on the others (their amount does not set the
// speed), and zero when k ≤ 1. It fails with ErrCannotMeet when the task makes no
// progress (v.Finish is stage.Forever) or the objective's time has passed, and on a
// negative time, a non-positive slo, now before start, or an invalid allocation.
func ScaleUp(schema *resource.Schema, v predict.StragglerVerdict, now, start, slo time.Duration, allocated resource.Tuple) (resource.Tuple, error) {
	switch {
	case schema == nil:
		return resource.Tuple{}, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	case start < 0:
		return resource.Tuple{}, fieldErr("start", start, ErrBadTime)
	case now < start:
		return resource.Tuple{}, fieldErr("now", now, ErrBadTime)
	case slo <= 0:
		return resource.Tuple{}, fieldErr("T_SLO", slo, ErrInvalidValue)
	case v.Finish < 0:
		return resource.Tuple{}, fieldErr("verdict finish", v.Finish, ErrBadTime)
	}
	if err := schema.Validate(allocated); err != nil {
		return resource.Tuple{}, wrapf(err, "allocated")
	}
	if v.Finish == stage.Forever {
		return resource.Tuple{}, fieldErr("verdict finish", "never (no progress)", ErrCannotMeet)
	}
	deadline := stage.AddSat(start, slo)
	if deadline <= now {
		return resource.Tuple{}, fieldErr("T_SLO", fmt.Sprintf("%v: deadline %v passed at %v", slo, deadline, now), ErrCannotMeet)
	}
	if v.Finish <= deadline {
		return resource.Tuple{}, nil
	}
	k := float64(v.Finish-now) / float64(deadline-now)
	var extra resource.Tuple
	for d := 0; d < schema.Len(); d++ {
		if schema.Dim(d).Compressible && allocated[d] > 0 {
			x := math.Ceil(float64(allocated[d]) * (k - 1))
			if x >= math.MaxInt64 {
				return resource.Tuple{}, fieldErr("extra "+schema.DimName(d), x, ErrCannotMeet)
			}
			extra[d] = int64(x)
		}
	}
	return extra, nil
}
