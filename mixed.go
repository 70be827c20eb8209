package finegrain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// Mixed workloads (docs/methods.md §11): latency-sensitive tasks with service-level
// objectives beside batch work. A scale-up round finds the latency-sensitive tasks
// that will miss their objective (S1–S4) and the batch tasks that hold more than they
// use (T1–T2), plans (steps 1–10 and recovery, speculate.Planner) and carries the plan
// out on the state: stragglers grown in place or moved, batch tasks shrunk — never
// killed — and given back what they lost once there is room.

// DefaultExpectedUtilisation is U_ECRU, the expected cluster utilisation of the
// resource-redundant test (ScaleUpConfig.ExpectedUtilisation), on every compressible
// dimension: a batch task whose measured peak is below 80% of its allocation on a
// dimension holds more than it needs there.
const DefaultExpectedUtilisation = 0.8

// DefaultPreemptibleShare is how much of a batch task's allocation on the compressible
// dimensions scale-up rounds may take, by reclaim and preemption together
// (ScaleUpConfig.PreemptibleShare): half, so that a shrunk task runs at no less than
// half speed.
const DefaultPreemptibleShare = 0.5

// ScaleUpConfig configures the scale-up rounds (WithScaleUp, Scheduler.ScaleUp).
type ScaleUpConfig struct {
	// ExpectedUtilisation is U_ECRU per dimension, in [0, 1]: T2 finds a batch task
	// redundant on a dimension where its measured peak (ReportRunning) is below this
	// share of its allocation, and reclaims down to the allocation that peak would
	// use at exactly this share (predict.DetectRedundant). 0 on a dimension never
	// reclaims there. The zero vector means DefaultExpectedUtilisation on every
	// compressible dimension and 0 on the others: the peak is the peak so far, and a
	// task whose memory grows past what a reclaim left it is killed by its
	// container's limit. Set a non-compressible dimension to reclaim it anyway; a task
	// that has failed before (Failed) is then reclaimed on the compressible dimensions
	// only, so that such a kill does not repeat round after round.
	ExpectedUtilisation resource.Vector
	// PreemptibleShare is how much of a batch task's allocation — as it was before
	// any round shrank it — rounds may take on the compressible dimensions, reclaim
	// and preemption together: a task is never shrunk there below 1 − share of that
	// allocation (a peak measured near zero, between two stages, would otherwise
	// reclaim it to a standstill). Preemption takes compressible dimensions only:
	// taking memory a task uses would kill it. In (0, 1]; 0 means
	// DefaultPreemptibleShare. A NonPreemptible task is never preempted.
	PreemptibleShare float64
	// IdleOnly grows stragglers out of idle room alone: no batch task is offered to
	// the planner, so nothing is reclaimed or preempted (nor restored).
	IdleOnly bool
	// Planner configures the planner (moves, the local top-up, recovery; all on by
	// default).
	Planner []speculate.PlannerOption
	// Parallelism is how many goroutines share the two steps of a round that read
	// the state only: listing the running tasks — the tests of S1–S4 and T1–T2, at
	// thousands of tasks the round's largest step —, each goroutine over a run of
	// nodes, and working out what each planned change makes its task hold (at most
	// one goroutine a node, or a change). Planning and changing the state run on the
	// caller's goroutine, and the scheduler's lock is held throughout. The round is
	// the same whatever the number. 0 and 1 run the whole round on the caller's
	// goroutine, the default: on a machine whose cores are busy, a round waits for
	// its slowest goroutine to get one. Set it to runtime.GOMAXPROCS(0) where cores
	// are free: at 10,000 running tasks a round is then about a tenth shorter on two
	// cores. Not negative.
	Parallelism int
}

// WithScaleUp configures the scale-up rounds (Scheduler.ScaleUp). New fails on an
// expected utilisation outside [0, 1], a preemptible share outside [0, 1], a negative
// parallelism, or an invalid planner option.
func WithScaleUp(cfg ScaleUpConfig) Option {
	return func(c *config) error {
		if !(cfg.PreemptibleShare >= 0 && cfg.PreemptibleShare <= 1) {
			return fmt.Errorf("finegrain: scale-up preemptible share %v, want 0..1: %w", cfg.PreemptibleShare, ErrInvalid)
		}
		if cfg.Parallelism < 0 {
			return fmt.Errorf("finegrain: scale-up parallelism %d, want 0 or more: %w", cfg.Parallelism, ErrInvalid)
		}
		c.scaleUp = cfg
		c.scaleUp.Planner = slices.Clone(cfg.Planner)
		return nil
	}
}

// scaleUp is the scheduler's scale-up machinery: its planner, and the batch tasks its
// rounds shrank and have not given everything back to.
type scaleUp struct {
	planner     *speculate.Planner
	expected    resource.Vector
	redundant   predict.RedundancyTest // T1–T2 against expected
	share       float64
	idleOnly    bool
	shrunk      map[*cluster.TaskInfo]shrinkage // the batch tasks rounds shrank, by their records: no hash of an ID
	degraded    map[string]float64              // the nodes with a recycle signal pending, and their stretch (Recycle)
	newDemand   resource.Tuple                  // the requests of the latency-sensitive tasks submitted since the last round
	input       speculate.PlanInput             // the last round's planner input, emptied: its lists' room
	parallelism int                             // ScaleUpConfig.Parallelism
	nodes       []*cluster.NodeInfo             // planInput's scratch: the nodes in ID order
	listers     []*lister                       // planInput's listers, kept with their room
	changes     []taskChange                    // carryOut's changes, emptied: their room (mergeSteps)
	byTask      map[string]int                  // mergeSteps' scratch: a task's change, by its ID
	stages      []stage.Stage                   // UndoScale's scratch for shifted
}

// shrinkage is what rounds took from a running batch task's run and have not given
// back.
type shrinkage struct {
	run       uint64 // the run shrunk (cluster.TaskInfo.RunID): a later run holds its all
	taken     resource.Tuple
	preempted bool
}

// arrived counts the latency-sensitive tasks of specs, just submitted, as new demand
// for the next round.
func (u *scaleUp) arrived(specs []Task) {
	for i := range specs {
		if specs[i].Class == LatencySensitive {
			u.newDemand = u.newDemand.Add(specs[i].Request)
		}
	}
}

// newScaleUp builds the machinery of cfg for schema.
func newScaleUp(schema *resource.Schema, cfg ScaleUpConfig) (*scaleUp, error) {
	u := &scaleUp{expected: cfg.ExpectedUtilisation, share: cfg.PreemptibleShare, idleOnly: cfg.IdleOnly, parallelism: cfg.Parallelism, shrunk: map[*cluster.TaskInfo]shrinkage{}, degraded: map[string]float64{}}
	if u.expected == (resource.Vector{}) {
		u.expected = resource.Uniform(schema.Compressible(), DefaultExpectedUtilisation)
	}
	if err := schema.ValidateRatios(u.expected, 1, false); err != nil {
		return nil, fmt.Errorf("finegrain: scale-up expected utilisation: %w: %w", ErrInvalid, err)
	}
	u.redundant, _ = predict.NewRedundancyTest(schema, u.expected) // valid: checked just now
	if u.share == 0 {
		u.share = DefaultPreemptibleShare
	}
	p, err := speculate.NewPlanner(schema, cfg.Planner...)
	if err != nil {
		return nil, fmt.Errorf("finegrain: scale-up planner: %w: %w", ErrInvalid, err)
	}
	u.planner = p
	return u, nil
}

// ScaleAction is one change a scale-up round made to a running task's allocation, for
// the embedder to carry out on the task's container (resize it in place, or start it
// on another node and stop the old one). The scheduler's state holds the change
// already; UndoScale takes it back when the embedder cannot carry it out.
type ScaleAction struct {
	// Kind is what was done: speculate.Reclaim or speculate.Preempt shrink a batch
	// task, speculate.Expand grows a straggler in place, speculate.Move moves one,
	// speculate.Restore gives a shrunk batch task back what it lost. A task that the
	// plan both reclaims from and preempts gets one action, Preempt, of their sum.
	Kind speculate.StepKind
	// Task is the task changed.
	Task string
	// Node is where it runs afterwards; From is a Move's old node, else empty.
	Node, From string
	// Amount is what was taken (Reclaim, Preempt) or added (Expand, Move, Restore).
	Amount resource.Tuple
	// Allocation is what the task holds now, afterwards.
	Allocation resource.Tuple
}

// ScaleSkip is a planned change the state refused — the planner sees constant
// allocations, the state the tasks' whole stage profiles ahead, so a grow that fits
// now may not fit a later stage — or a straggler the round could not size.
type ScaleSkip struct {
	// Task is the task concerned.
	Task string
	// Kind is the step refused; for a straggler not sized, speculate.Expand.
	Kind speculate.StepKind
	// Err says why.
	Err error
}

// ScaleUpRound is what one scale-up round found, planned and did.
type ScaleUpRound struct {
	// At is the round's time.
	At time.Duration
	// Stragglers are the latency-sensitive tasks found slow (S1–S4), in ID order,
	// with the verdict.
	Stragglers []StragglerFound
	// Plan is the planner's decision and accounting (speculate.Plan).
	Plan speculate.Plan
	// Actions are the changes made, in the order made: shrinks, then grows and moves,
	// then restores.
	Actions []ScaleAction
	// Skipped are the planned changes the state refused, and stragglers not sized.
	Skipped []ScaleSkip
}

// StragglerFound is a latency-sensitive task a round found slow.
type StragglerFound struct {
	// Task is the task.
	Task string
	// Verdict is the straggler test's outcome (predict.DetectStraggler).
	Verdict predict.StragglerVerdict
	// Extra is the expansion it needs to meet its objective (speculate.ScaleUp).
	Extra resource.Tuple
}

// ScaleUp runs one scale-up round at now (docs/methods.md §11), kill-free:
//
//  1. Every running latency-sensitive task with an SLO and at least four progress
//     reports (Progress) is tested (S1–S4, predict.DetectStraggler); a straggler's
//     expansion is sized by speculate.ScaleUp.
//  2. Every running batch task is offered to the planner: what T1–T2 find redundant
//     against its measured peak (ReportRunning) is reclaimable — on the compressible
//     dimensions by default (ScaleUpConfig.ExpectedUtilisation) — and the rest of
//     PreemptibleShare of its compressible allocation is preemptible unless it is
//     NonPreemptible: rounds take at most that share of it, reclaim and preemption
//     together.
//  3. The planner (speculate.Planner) decides on the nodes' allocations now: R_NE is
//     the stragglers' expansions plus the requests of the latency-sensitive tasks
//     submitted since the last round that still wait; batch tasks shrunk by earlier
//     rounds are given back what they lost when nothing had to be taken.
//  4. The plan is carried out on the state, one change a task (cluster.State.Resize,
//     Migrate, CommitChange): shrinks first, then grows and moves, then restores. A
//     task's allocation is what it holds now; a change adds to or takes from every
//     stage it has left (never below zero), so a staged profile keeps its shape.
//
// Nothing is evicted: a shrunk batch task runs on with less. Tasks holding a backup
// attempt, backups and tasks already changing are left out. Without latency-sensitive
// tasks a round plans nothing but recovery. The round's actions are for the embedder
// to carry out on the containers. It fails, changing nothing, on a time going
// backwards.
func (s *Scheduler) ScaleUp(now time.Duration) (ScaleUpRound, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.eventTime("scale-up round", "", now)
	if err != nil {
		return ScaleUpRound{}, err
	}
	s.fw.Advance(at)
	u := s.scale
	round := ScaleUpRound{At: at}
	in := s.planInput(u, &round)
	plan, err := u.planner.Plan(in)
	if err != nil { // the input is the state's own: a planner refusal is a bug of ours
		return round, fmt.Errorf("finegrain: scale-up round at %v: %w", at, err)
	}
	round.Plan = plan
	s.carryOut(u, plan, &round)
	u.keepRoom(in)
	return round, nil
}

// keepRoom keeps the lists of in, a round's planner input, emptied, for the next
// round to fill: rounds are periodic and list about as much each time, and a list of
// every running task is megabytes at 10,000 of them. What they held is cleared, so
// that the room keeps no task's ID alive.
func (u *scaleUp) keepRoom(in speculate.PlanInput) {
	clear(in.Nodes)
	clear(in.Batch)
	clear(in.Stragglers)
	clear(in.Shrunk)
	u.input = speculate.PlanInput{Nodes: in.Nodes[:0], Batch: in.Batch[:0], Stragglers: in.Stragglers[:0], Shrunk: in.Shrunk[:0]}
}

// planInput builds the planner's input from the state at the round's time; stragglers
// that cannot be sized go to round.Skipped. The tasks it lists are running tasks of
// the state, named by their IDs.
func (s *Scheduler) planInput(u *scaleUp, round *ScaleUpRound) speculate.PlanInput {
	st, at := s.state, round.At
	for t, r := range u.shrunk {
		if t.State() != Running || t.RunID() != r.run {
			// Its run ended — finished, failed, evicted, its node lost — and perhaps
			// it runs again, placed anew on all it asks for: nothing to give back.
			delete(u.shrunk, t)
		}
	}
	in := u.input
	u.input = speculate.PlanInput{} // the round owns the room until keepRoom
	nodes := u.nodes[:0]
	for n := range st.Nodes() { // in ID order
		nodes = append(nodes, n)
	}
	u.nodes = nodes
	verdicts, skipped := u.listTasks(s, nodes, &in, at)
	round.Skipped = append(round.Skipped, skipped...)
	// The new latency-sensitive demand: what arrived since the last round and still
	// waits. A backlog that waits on is not made room for again round after round.
	in.NewDemand = u.newDemand.Min(st.PendingLatencySensitive())
	u.newDemand = resource.Tuple{}
	for _, t := range slices.SortedFunc(maps.Keys(u.shrunk), byTaskID) {
		r, id := u.shrunk[t], t.ID()
		if k, _ := t.Change(); k != cluster.NoChange {
			continue
		}
		in.Shrunk = append(in.Shrunk, speculate.Shrunk{Task: id, Node: t.Node().ID(), Taken: r.taken, Preempted: r.preempted})
	}
	round.Stragglers = found(in.Stragglers, verdicts)
	for _, l := range u.listers {
		l.done()
	}
	clear(u.nodes) // the round's nodes are not kept alive by the scratch
	return in
}

// listTasks lists the tasks of nodes, in ID order, into in — its Nodes, sized to
// nodes, and its Batch and Stragglers, emptied — for a round at at, on
// scaleUp.workers goroutines, each over a run of nodes; it returns the stragglers'
// verdicts and the stragglers that could not be sized, in node order. A run of nodes
// has no more batch tasks than tasks: each lister lists its batch tasks into
// in.Batch's room from the number of tasks on the nodes before its run, and the runs
// are closed up after; stragglers, few, each lists in its own room.
func (u *scaleUp) listTasks(s *Scheduler, nodes []*cluster.NodeInfo, in *speculate.PlanInput, at time.Duration) ([]predict.StragglerVerdict, []ScaleSkip) {
	in.Nodes = slices.Grow(in.Nodes[:0], len(nodes))[:len(nodes)]
	workers := u.workers(len(nodes))
	u.ensureListers(workers)
	room := 0
	for w := range workers {
		lo, hi := chunk(len(nodes), workers, w)
		u.listers[w].from = room
		for _, n := range nodes[lo:hi] {
			room += n.NumTasks()
		}
	}
	full := slices.Grow(in.Batch[:0], room)
	for w, l := range u.listers[:workers] {
		to := room
		if w+1 < workers {
			to = u.listers[w+1].from
		}
		l.batch = full[l.from:l.from:to]
	}
	lead := u.listers[0]
	lead.stragglers = in.Stragglers[:0]
	split(len(nodes), workers, func(w, lo, hi int) {
		u.listers[w].list(u, s, nodes[lo:hi], in.Nodes[lo:hi], at)
	})
	in.Batch, in.Stragglers = full[:len(lead.batch)], lead.stragglers
	verdicts, skipped := lead.verdicts, lead.skipped
	for _, l := range u.listers[1:workers] {
		in.Batch = append(in.Batch, l.batch...) // within the room, down from l's run
		in.Stragglers = append(in.Stragglers, l.stragglers...)
		verdicts = append(verdicts, l.verdicts...)
		skipped = append(skipped, l.skipped...)
	}
	clear(full[len(in.Batch):room]) // what closing up the runs left behind
	for _, l := range u.listers[:workers] {
		l.batch = nil // in.Batch's room, which keepRoom keeps
	}
	lead.stragglers, lead.verdicts, lead.skipped = nil, verdicts, skipped // emptied by done
	return verdicts, skipped
}

// workers is how many goroutines share a step of a round over n items (nodes, or
// changes): ScaleUpConfig.Parallelism, never more than one an item, never none.
func (u *scaleUp) workers(n int) int {
	return max(1, min(u.parallelism, n))
}

// ensureListers makes sure that u has the scratch of k goroutines (listers).
func (u *scaleUp) ensureListers(k int) {
	for len(u.listers) < k {
		u.listers = append(u.listers, &lister{})
	}
}

// split runs fn over [0, n) cut into workers runs of consecutive items, at once:
// fn(w, lo, hi) for run w, the first on the caller's goroutine, each of the others on
// its own. It returns when all have.
func split(n, workers int, fn func(w, lo, hi int)) {
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := chunk(n, workers, w)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	lo, hi := chunk(n, workers, 0)
	fn(0, lo, hi)
	wg.Wait()
}

// chunk is run w of [0, n) cut into workers runs (split): [lo, hi), empty past n.
func chunk(n, workers, w int) (lo, hi int) {
	per := (n + workers - 1) / workers
	return min(w*per, n), min((w+1)*per, n)
}

// A lister lists the running tasks of a run of nodes for a round's planner input
// (planInput): its stragglers and batch tasks, in node ID order. A round's listers
// run at once, each on its own nodes with its own scratch, reading the state and the
// round's machinery only; the scheduler keeps them, and their lists' room, from round
// to round. They are the scratch of the goroutines that prepare the round's changes
// too (carryOut).
type lister struct {
	batch      []speculate.BatchTask // a run of the input's Batch room, from from on
	from       int
	stragglers []speculate.Straggler
	verdicts   []predict.StragglerVerdict // stragglers' verdicts
	skipped    []ScaleSkip                // stragglers that could not be sized
	onNode     []candidate                // one node's tasks (candidates)
	samples    []predict.ProgressSample
	prio       jobPriority
	stages     []stage.Stage // the stages of a changed reservation (shifted)
}

// list lists the tasks of nodes for a round at at, and sets out[i] to node i as the
// planner sees it.
func (l *lister) list(u *scaleUp, s *Scheduler, nodes []*cluster.NodeInfo, out []speculate.Node, at time.Duration) {
	st, schema := s.state, s.schema
	nc := schema.NonCompressible()
	for i, n := range nodes {
		id, capacity := n.ID(), n.Capacity()
		allocated := capacity.Sub(n.Timeline().FreeAt(at)).Max(resource.Tuple{})
		// A node whose capacity shrank below what it holds (UpdateNode) is full, not
		// over: the planner refuses a non-compressible dimension over capacity.
		for d := range allocated {
			if nc.Has(d) {
				allocated[d] = min(allocated[d], capacity[d])
			}
		}
		out[i] = speculate.Node{ID: id, Capacity: capacity, Allocated: allocated}
		bounded := l.candidates(n, at, allocated)
		var listed resource.Tuple
		skips := len(l.skipped)
		for _, c := range l.onNode {
			t, held := c.task, c.held
			if bounded && !allocated.Covers(listed.Add(held)) {
				continue // what the node holds is not all the tasks': leave the rest out
			}
			switch t.Class() {
			case cluster.LatencySensitive:
				if t.SLO() <= 0 {
					continue
				}
				l.samples = t.ProgressSamples(l.samples[:0])
				if len(l.samples) < 4 {
					continue
				}
				v, err := predict.DetectStraggler(l.samples, t.Start(), t.SLO())
				if err != nil || !v.Straggler {
					continue
				}
				extra, err := speculate.ScaleUp(schema, v, at, t.Start(), t.SLO(), held)
				if err != nil {
					l.skipped = append(l.skipped, ScaleSkip{Task: t.ID(), Kind: speculate.Expand, Err: err})
					continue
				}
				if extra.IsZero() {
					continue
				}
				l.stragglers = append(l.stragglers, speculate.Straggler{Task: t.ID(), Node: id, Allocated: held, Extra: extra})
				l.verdicts = append(l.verdicts, v)
			default:
				if u.idleOnly {
					continue
				}
				l.batch = append(l.batch, speculate.BatchTask{Task: t.ID(), Node: id, Allocated: held, Priority: l.prio.of(st, t.Job())})
				l.shrinkable(u, &l.batch[len(l.batch)-1], schema, t)
			}
			if bounded {
				listed = listed.Add(held)
			}
		}
		// The node's tasks may have been looked at in any order (candidates): its
		// skips are reported in ID order.
		slices.SortFunc(l.skipped[skips:], func(a, b ScaleSkip) int { return strings.Compare(a.Task, b.Task) })
	}
}

// done empties l after a round, keeping its lists' room but none of what they held:
// the scratch keeps no task alive.
func (l *lister) done() {
	clear(l.batch)
	clear(l.stragglers)
	clear(l.skipped)
	clear(l.onNode)
	l.batch, l.stragglers, l.verdicts, l.skipped, l.onNode = l.batch[:0], l.stragglers[:0], l.verdicts[:0], l.skipped[:0], l.onNode[:0]
	l.prio = jobPriority{}
}

// byTaskID orders tasks by their IDs.
func byTaskID(a, b *cluster.TaskInfo) int { return strings.Compare(a.ID(), b.ID()) }

// found lists stragglers, whose verdicts are verdicts, in task ID order, as a round
// reports them; nil for none.
func found(stragglers []speculate.Straggler, verdicts []predict.StragglerVerdict) []StragglerFound {
	if len(stragglers) == 0 {
		return nil
	}
	order := make([]int32, len(stragglers))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(stragglers[a].Task, stragglers[b].Task) })
	out := make([]StragglerFound, len(order))
	for k, i := range order {
		out[k] = StragglerFound{Task: stragglers[i].Task, Verdict: verdicts[i], Extra: stragglers[i].Extra}
	}
	return out
}

// candidate is a task a round may change — running, neither a backup nor backed up,
// holding no change — and what it holds at the round's time.
type candidate struct {
	task *cluster.TaskInfo
	held resource.Tuple
}

// candidates sets l.onNode to the tasks of node n that a round at at may change, and
// reports whether what n has allocated bounds the list. When it covers what they hold
// (false), the order does not matter: planInput lists them all. Otherwise (true) they
// are in ID order, in which planInput lists them until the node holds no more.
func (l *lister) candidates(n *cluster.NodeInfo, at time.Duration, allocated resource.Tuple) bool {
	l.onNode = l.onNode[:0]
	var total resource.Tuple
	n.RangeTasks(func(t *cluster.TaskInfo) bool {
		if t.State() != Running || t.BackupOf() != nil || t.Backup() != nil {
			return true
		}
		if k, _ := t.Change(); k != cluster.NoChange {
			return true
		}
		held := t.HeldAt(at)
		total = total.Add(held)
		l.onNode = append(l.onNode, candidate{task: t, held: held})
		return true
	})
	if allocated.Covers(total) {
		return false
	}
	slices.SortFunc(l.onNode, func(a, b candidate) int { return strings.Compare(a.task.ID(), b.task.ID()) })
	return true
}

// jobPriority is the priority of the job last asked for: the tasks of a node, and of
// neighbouring nodes, mostly belong to few jobs.
type jobPriority struct {
	job      string
	priority int
	known    bool
}

// of is the priority of job, which state st holds.
func (p *jobPriority) of(st *cluster.State, job string) int {
	if !p.known || job != p.job {
		j, _ := st.Job(job)
		p.job, p.priority, p.known = job, j.Spec().Priority, true
	}
	return p.priority
}

// shrinkable sets what the planner may take from batch task t, which b lists with
// what it holds now (b.Allocated): what T1–T2 find reclaimable against its measured
// peak, and what preemption may take.
func (l *lister) shrinkable(u *scaleUp, b *speculate.BatchTask, schema *resource.Schema, t *cluster.TaskInfo) {
	held := b.Allocated
	if peak, ok := t.UsedPeak(); ok {
		if r, err := u.redundant.Reclaimable(peak, held); err == nil {
			b.Reclaimable = r
		}
		if t.Failures() > 0 {
			// A run of it was lost — perhaps for using more memory than a reclaim
			// had left it, its peak so far not its peak —, and this run's peak so far
			// says no more: reclaiming its memory again could kill it again, round
			// after round. Only the compressible dimensions are reclaimed.
			for d := range b.Reclaimable {
				if !schema.Compressible().Has(d) {
					b.Reclaimable[d] = 0
				}
			}
		}
	}
	taken := u.shrunk[t].taken
	before := held.Add(taken) // its allocation before any round shrank it
	preemptible := t.Preemptible()
	for d := range schema.Len() { // past the schema every amount is zero
		if !schema.Compressible().Has(d) {
			continue
		}
		// Rounds take at most share of it in all: a peak measured near zero (a task
		// between stages) would otherwise reclaim it to a standstill.
		b.Reclaimable[d] = max(0, min(b.Reclaimable[d], int64(u.share*float64(before[d]))-taken[d]))
		if preemptible {
			// Reclaim and preemption together, in this round and the earlier ones,
			// leave it at least 1 − share of its allocation (or what reclaim alone
			// leaves): what this round reclaims counts as what earlier rounds took.
			left := held[d] - b.Reclaimable[d]
			allowed := int64(u.share*float64(before[d])) - taken[d] - b.Reclaimable[d]
			b.Preemptible[d] = max(0, min(left, allowed))
		}
	}
}

// carryOut applies plan to the state: one change a task, shrinks first, then grows
// and moves, then restores; a change the state refuses is skipped and reported. The
// tasks the plan names are the state's (planInput). What each change makes its task
// hold is worked out first, for all of them at once (prepare): a task's change reads
// only its own reservation, which no other change of the round touches.
func (s *Scheduler) carryOut(u *scaleUp, plan speculate.Plan, round *ScaleUpRound) {
	changes, shrinks := u.mergeSteps(plan.Steps)
	if len(changes) == 0 {
		return
	}
	defer u.forget(changes)
	if len(u.shrunk) == 0 && shrinks > 0 {
		u.shrunk = make(map[*cluster.TaskInfo]shrinkage, shrinks) // room for what the shrinks record
	}
	workers := u.workers(len(changes))
	u.ensureListers(workers)
	split(len(changes), workers, func(w, lo, hi int) {
		l := u.listers[w]
		for i := lo; i < hi; i++ {
			s.prepare(&changes[i], round.At, &l.stages)
		}
	})
	round.Actions = make([]ScaleAction, 0, len(changes))
	for phase := range phases {
		for i := range changes {
			c := &changes[i]
			if c.phase != phase {
				continue
			}
			a, err := s.change(c, round.At)
			if err != nil {
				round.Skipped = append(round.Skipped, ScaleSkip{Task: c.first.Task, Kind: c.kind, Err: err})
				continue
			}
			round.Actions = append(round.Actions, a)
			u.record(c.task, c.kind, c.amount)
		}
	}
	if len(round.Actions) == 0 {
		round.Actions = nil
	}
}

// grows reports whether c adds to its task (an expansion, a move, a restore) rather
// than taking from it (a reclaim, a preemption).
func (c *taskChange) grows() bool {
	return c.kind != speculate.Reclaim && c.kind != speculate.Preempt
}

// forget empties changes, the round's, and keeps their room for the next round
// (mergeSteps): rounds are periodic and make about as many changes each time. The
// room keeps no task, profile or error alive.
func (u *scaleUp) forget(changes []taskChange) {
	clear(changes)
	u.changes = changes[:0]
	clear(u.byTask)
}

// The phases of a round's changes, in the order they are made.
const (
	phaseShrink  = iota // reclaims and preemptions
	phaseGrow           // expansions and moves
	phaseRestore        // restores
	phases
)

// taskChange is the one change a round makes to a task: the plan's steps for it
// merged — the kind and amount of their sum — and the phase it is made in.
type taskChange struct {
	first  *speculate.Step // the task's first step: its task and node, a move's release
	kind   speculate.StepKind
	amount resource.Tuple
	phase  int
	// What prepare found: the task; what it holds at the round's time; what it is to
	// hold from then on, or why it cannot (err); by how much a move grows it.
	task  *cluster.TaskInfo
	held  resource.Tuple
	hold  stage.Profile
	err   error
	delta resource.Tuple
}

// mergeSteps merges the steps of each task into one change — a batch task reclaimed
// from and preempted in one plan gets one shrink of the sum, a Preempt — and lists
// the changes in the order of their tasks' first steps, with the number of shrinks,
// in the room u keeps for them (forget empties it).
func (u *scaleUp) mergeSteps(steps []speculate.Step) ([]taskChange, int) {
	if len(steps) == 0 {
		return nil, 0
	}
	shrinks := 0
	changes := slices.Grow(u.changes[:0], len(steps))
	if u.byTask == nil {
		u.byTask = make(map[string]int, len(steps))
	}
	byTask := u.byTask
	for i := range steps {
		st := &steps[i]
		if k, ok := byTask[st.Task]; ok {
			m := &changes[k]
			m.amount = m.amount.Add(st.Amount)
			if st.Kind == speculate.Preempt {
				m.kind = speculate.Preempt
			}
			continue
		}
		phase := phaseRestore
		switch st.Kind {
		case speculate.Reclaim, speculate.Preempt:
			phase = phaseShrink
			shrinks++
		case speculate.Expand, speculate.Move:
			phase = phaseGrow
		}
		byTask[st.Task] = len(changes)
		changes = append(changes, taskChange{first: st, kind: st.Kind, amount: st.Amount, phase: phase})
	}
	return changes, shrinks
}

// record keeps what a change of kind took from, or gave back to, task t: amount.
func (u *scaleUp) record(t *cluster.TaskInfo, kind speculate.StepKind, amount resource.Tuple) {
	r := u.shrunk[t]
	switch kind {
	case speculate.Reclaim, speculate.Preempt:
		r.run, r.taken = t.RunID(), r.taken.Add(amount)
		r.preempted = r.preempted || kind == speculate.Preempt
	case speculate.Restore:
		r.taken = r.taken.Sub(amount).Max(resource.Tuple{})
	default:
		return
	}
	if r.taken.IsZero() {
		delete(u.shrunk, t)
		return
	}
	u.shrunk[t] = r
}

// prepare works out change c at the round's time at: its task, what the task holds
// then, and what the change makes it hold from then on, with scratch for the stages.
// It reads the state only.
func (s *Scheduler) prepare(c *taskChange, at time.Duration, scratch *[]stage.Stage) {
	c.task, _ = s.state.Task(c.first.Task)
	c.held = c.task.HeldAt(at)
	c.delta = c.amount
	if c.kind == speculate.Move {
		c.delta = c.amount.Sub(c.first.Released).Max(resource.Tuple{})
	}
	c.hold, c.err = shifted(s.schema, c.task, at, c.delta, c.grows(), scratch)
}

// change carries change c, prepared, out on its task at the round's time at: a
// resize by its amount, or a move to its node, held and committed at once.
func (s *Scheduler) change(c *taskChange, at time.Duration) (ScaleAction, error) {
	if c.err != nil {
		return ScaleAction{}, c.err
	}
	st, t, held, hold := c.first, c.task, c.held, c.hold
	grow := c.grows()
	r := cluster.Reservation{Start: at, Hold: hold, Predicted: t.Planned() > 0}
	if !grow {
		// A shrink frees room, but the node may be over-committed on a compressible
		// dimension already (tasks placed with compression): allow the new reservation
		// what the node lacks there now, which it held before the shrink.
		least := t.Node().Timeline().MinFree(at, stage.Forever)
		for d := range least {
			if s.schema.Compressible().Has(d) && least[d] < 0 {
				r.Allowance[d] = -least[d]
			}
		}
	}
	a := ScaleAction{Kind: c.kind, Task: t.ID(), Node: st.Node, Amount: c.amount}
	var to *cluster.NodeInfo // nil: in place
	if c.kind == speculate.Move {
		var ok bool
		if to, ok = s.state.Node(st.Node); !ok {
			return ScaleAction{}, fmt.Errorf("finegrain: move task %q to node %q: %w", t.ID(), st.Node, ErrUnknownNode)
		}
		a.From, a.Amount = t.Node().ID(), c.delta
	}
	// Rounds, undos and recycles decide a change when they make it: it is kept at once.
	if err := s.state.ChangeNow(t, to, r); err != nil {
		return ScaleAction{}, err
	}
	// The task now holds hold from at on: its first stage now.
	a.Allocation = hold.Demand(0)
	if !grow {
		a.Amount = held.Sub(a.Allocation) // what was taken, once floored at zero
	}
	return a, nil
}

// UndoScale carries out, at now, the inverse of action a, which a scale-up round
// made (ScaleUpRound.Actions) and the embedder could not carry out on the task's
// container — its orchestrator cannot resize or move it, or refused to — so that the
// state holds what the container does: a shrink (Reclaim, Preempt) is given back, a
// grow (Expand, Restore) taken back, a Move moved back to a.From less its expansion.
// What the rounds count as taken from a batch task, which recovery gives back, follows:
// an undone shrink is no longer owed, an undone Restore is owed again.
//
// Undo a round's actions in the reverse of their order: the room a shrink freed may
// have gone to a grow of the same round, and until that grow is undone the shrink's
// give-back does not fit. Like a round's own changes, the inverse adds to or takes
// from every stage the task has left: a shrink that floored a later stage at zero is
// given back a.Amount there too.
//
// It fails, changing nothing, on a time going backwards or an invalid kind or amount
// (ErrInvalid), an unknown task (ErrUnknownTask), a task that no longer runs on
// a.Node or holds a change (ErrState), a Move whose old node is gone
// (ErrUnknownNode), or a give-back that no longer fits its node (an error wrapping
// stage.ErrNoRoom).
func (s *Scheduler) UndoScale(a ScaleAction, now time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, err := s.eventTime("undo of a scale action of task", a.Task, now)
	if err != nil {
		return err
	}
	if a.Kind > speculate.Restore {
		return fmt.Errorf("finegrain: undo of a scale action of task %q: kind %v: %w", a.Task, a.Kind, ErrInvalid)
	}
	if err := s.schema.Validate(a.Amount); err != nil {
		return fmt.Errorf("finegrain: undo of a scale action of task %q: amount: %w: %w", a.Task, ErrInvalid, err)
	}
	t, err := s.task(a.Task)
	if err != nil {
		return err
	}
	if t.State() != Running || t.Node() == nil {
		return stateErr("undo of a scale action of task", a.Task, t.State())
	}
	if n := t.Node().ID(); n != a.Node {
		return fmt.Errorf("finegrain: undo of a scale action of task %q: it runs on node %q, not %q: %w", a.Task, n, a.Node, ErrState)
	}
	if k, _ := t.Change(); k != cluster.NoChange {
		return fmt.Errorf("finegrain: undo of a scale action of task %q: it holds a change (%v): %w", a.Task, k, ErrState)
	}
	s.fw.Advance(at)
	grow := a.Kind == speculate.Reclaim || a.Kind == speculate.Preempt
	hold, err := shifted(s.schema, t, at, a.Amount, grow, &s.scale.stages)
	if err != nil {
		return err
	}
	r := cluster.Reservation{Start: at, Hold: hold, Predicted: t.Planned() > 0}
	var back *cluster.NodeInfo // nil: in place
	if a.Kind == speculate.Move {
		var ok bool
		if back, ok = s.state.Node(a.From); !ok {
			return fmt.Errorf("finegrain: undo the move of task %q back to node %q: %w", a.Task, a.From, ErrUnknownNode)
		}
	}
	if err := s.state.ChangeNow(t, back, r); err != nil {
		return fmt.Errorf("finegrain: undo of a scale action of task %q: %w", a.Task, err)
	}
	switch a.Kind {
	case speculate.Reclaim, speculate.Preempt:
		s.scale.record(t, speculate.Restore, a.Amount)
	case speculate.Restore:
		s.scale.record(t, speculate.Reclaim, a.Amount)
	}
	return nil
}

// shifted is what task t holds from at on, with delta added to every stage it has
// left (grow) or taken from it, never below zero: a staged reservation keeps its
// shape. A task with no stage left holds delta (or nothing) until it ends. The
// stages are built in *scratch, which keeps their room.
func shifted(schema *resource.Schema, t *cluster.TaskInfo, at time.Duration, delta resource.Tuple, grow bool, scratch *[]stage.Stage) (stage.Profile, error) {
	stages := t.AppendHeldFrom((*scratch)[:0], at)
	if len(stages) == 0 {
		stages = append(stages, stage.Stage{Duration: stage.Forever})
	}
	*scratch = stages
	for i := range stages {
		d := &stages[i].Demand
		if grow {
			*d = d.Add(delta)
		} else {
			*d = d.Sub(delta).Max(resource.Tuple{})
		}
	}
	p, err := stage.NewProfile(schema, stages...)
	if err != nil {
		return stage.Profile{}, fmt.Errorf("finegrain: resize task %q: %w: %w", t.ID(), ErrInvalid, err)
	}
	return p, nil
}

// Allocation is what a placed task holds on its node (Scheduler.Allocation): what a
// scale-up round's resizes and moves leave it, for the embedder to size its container.
type Allocation struct {
	// Node is the node the task is on.
	Node string
	// Held is what it holds at the time asked.
	Held resource.Tuple
	// Ahead is what it holds from then on, stage by stage; empty when nothing.
	Ahead stage.Profile
}

// Allocation is what task id, reserved, booked or running, holds at time at on its
// node. It fails on an unknown task (ErrUnknownTask) or one that is not placed
// (ErrState).
func (s *Scheduler) Allocation(id string, at time.Duration) (Allocation, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.task(id)
	if err != nil {
		return Allocation{}, err
	}
	if t.Node() == nil {
		return Allocation{}, stateErr("allocation of task", id, t.State())
	}
	return Allocation{Node: t.Node().ID(), Held: t.HeldAt(at), Ahead: t.HeldFrom(at)}, nil
}

// Recycled is what Scheduler.Recycle did on a degrading node.
type Recycled struct {
	// Node is the node recycled; At the time.
	Node string
	At   time.Duration
	// Stretch is how much longer than expected its tasks took (policy.Change.Stretch).
	Stretch float64
	// Goal is what the moves aimed to take off the node: (1 − 1/Stretch) of what its
	// tasks held.
	Goal resource.Tuple
	// Moved is what the moves took off.
	Moved resource.Tuple
	// Actions are the moves made (speculate.Move), for the embedder to carry out.
	Actions []ScaleAction
	// Stayed lists, in the order tried, the tasks that could move nowhere.
	Stayed []string
}

// recycleTargets is how many nodes, roomiest first, a task to recycle is offered to.
const recycleTargets = 16

// Recycle relieves node id, which Alg. 3 found stopped and degrading — the
// policy.Change that ReportUsage returned for it had Recycle set — by moving running
// tasks off it, kill-free, with the machinery of the scale-up rounds
// (cluster.State.Migrate): "recycle the resources of s" (docs/methods.md §5).
//
// Reading: the patent says neither what nor how much to recycle. Its tasks took
// Stretch times as long as expected, so the node serves about 1/Stretch of its load at
// the expected speed; Recycle moves tasks until (1 − 1/Stretch) of what its tasks hold
// has gone, on every dimension they hold. Batch tasks go first, then latency-sensitive
// ones; within a class, the lowest job priority first, then the largest share of the
// node, then by ID. A task moves with what it holds from now on, to the first of the
// 16 roomiest nodes (by the free index) that is not stopped (Alg. 3's
// StopAllocation) and has room for it; one that fits nowhere stays. Nothing is
// evicted. The signal is used up: a second call fails until the node degrades again.
//
// It fails, changing nothing, on an unknown node, a node with no recycle signal
// pending (ErrInvalid), or a time going backwards.
func (s *Scheduler) Recycle(id string, now time.Duration) (Recycled, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.state.Node(id)
	if !ok {
		return Recycled{}, fmt.Errorf("finegrain: recycle node %q: %w", id, ErrUnknownNode)
	}
	stretch, ok := s.scale.degraded[id]
	if !ok {
		return Recycled{}, fmt.Errorf("finegrain: recycle node %q: no recycle signal pending (policy.Change.Recycle): %w", id, ErrInvalid)
	}
	at, err := s.eventTime("recycle of node", id, now)
	if err != nil {
		return Recycled{}, err
	}
	delete(s.scale.degraded, id)
	s.fw.Advance(at)
	out := Recycled{Node: id, At: at, Stretch: stretch}
	type candidate struct {
		t     *cluster.TaskInfo
		held  resource.Tuple
		prio  int
		share float64
	}
	var cands []candidate
	var total resource.Tuple
	n.RangeTasks(func(t *cluster.TaskInfo) bool {
		if k, _ := t.Change(); t.State() != Running || t.BackupOf() != nil || t.Backup() != nil || k != cluster.NoChange {
			return true
		}
		j, _ := s.state.Job(t.Job())
		held := t.HeldAt(at)
		total = total.Add(held)
		cands = append(cands, candidate{t: t, held: held, prio: j.Spec().Priority, share: held.DominantShare(n.Capacity())})
		return true
	})
	slices.SortFunc(cands, func(a, b candidate) int {
		switch {
		case a.t.Class() != b.t.Class():
			return int(a.t.Class()) - int(b.t.Class()) // Batch first
		case a.prio != b.prio:
			return a.prio - b.prio
		case a.share != b.share:
			if a.share > b.share {
				return -1
			}
			return 1
		}
		return strings.Compare(a.t.ID(), b.t.ID())
	})
	for d := range total {
		out.Goal[d] = int64(float64(total[d]) * (1 - 1/stretch))
	}
	dim := s.state.IndexDim()
	for _, c := range cands {
		if out.Moved.Covers(out.Goal) {
			break
		}
		ahead := c.t.HeldFrom(at)
		if ahead.Len() == 0 || c.held.IsZero() {
			continue // it holds nothing: moving it frees nothing
		}
		var targets []*cluster.NodeInfo
		s.state.ByFree(c.held[dim], func(m *cluster.NodeInfo) bool {
			if mode, _ := s.adjuster.Lookup(m.ID()); m != n && mode != policy.ModeStopAllocation {
				targets = append(targets, m)
			}
			return len(targets) < recycleTargets
		})
		moved := false
		for _, m := range targets {
			r := cluster.Reservation{Start: at, Hold: ahead, Predicted: c.t.Planned() > 0}
			if s.state.ChangeNow(c.t, m, r) != nil {
				continue
			}
			out.Moved = out.Moved.Add(c.held)
			out.Actions = append(out.Actions, ScaleAction{Kind: speculate.Move, Task: c.t.ID(), Node: m.ID(), From: id, Allocation: c.t.HeldAt(at)})
			moved = true
			break
		}
		if !moved {
			out.Stayed = append(out.Stayed, c.t.ID())
		}
	}
	return out, nil
}
