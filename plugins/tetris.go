package plugins

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// TetrisConfig is Tetris' knobs (Grandl et al., "Multi-resource packing for cluster
// schedulers", SIGCOMM 2014; docs/methods.md §14). DefaultTetrisConfig holds the
// paper's values.
type TetrisConfig struct {
	// Fairness is the fairness knob f, in [0, 1): a heartbeat chooses only among the
	// ⌈(1−f)·J⌉ jobs first in the fairness order, of the J that may use the node. f = 0
	// considers every job (the most efficient packing); f close to 1 only the job
	// furthest below its fair share.
	Fairness float64
	// SRPTWeight is m in ε = m·ā/p̄, the weight of the shortest-remaining-work term
	// against alignment: ā and p̄ are the mean alignment and the mean remaining work
	// of the candidates, so that with m = 1 both terms are of the same magnitude, as
	// the paper sets ε. It must be finite and ≥ 0; 0 scores by alignment alone.
	SRPTWeight float64
	// RemotePenalty is the fraction r of its alignment a task loses when the node
	// does not hold its input (a locality worse than node-local): the paper's remote
	// penalty. It must be in [0, 1).
	RemotePenalty float64
}

// DefaultTetrisConfig is the paper's setting as this package reads it: fairness knob
// f = 0.25 (the value its evaluation settles on: near-fair at little cost in
// efficiency), ε = ā/p̄ (m = 1), remote penalty 10%.
func DefaultTetrisConfig() TetrisConfig {
	return TetrisConfig{Fairness: 0.25, SRPTWeight: 1, RemotePenalty: 0.1}
}

// Validate reports a knob out of range, wrapping cluster.ErrInvalid.
func (cfg TetrisConfig) Validate() error {
	if !(cfg.Fairness >= 0 && cfg.Fairness < 1) || !(cfg.SRPTWeight >= 0) || math.IsInf(cfg.SRPTWeight, 1) ||
		!(cfg.RemotePenalty >= 0 && cfg.RemotePenalty < 1) {
		return fmt.Errorf("plugins: tetris: fairness %v (want [0, 1)), SRPT weight %v (want finite ≥ 0), remote penalty %v (want [0, 1)): %w",
			cfg.Fairness, cfg.SRPTWeight, cfg.RemotePenalty, cluster.ErrInvalid)
	}
	return nil
}

// Tetris (Pass) is pull mode's task choice by Tetris' packing heuristic
// (docs/methods.md §14), in place of DelayScheduling. While the heartbeat's node has
// room (the NodeGate plugins) and the JobFilter plugins let the heartbeat go on:
//
//  1. The jobs with pending tasks not passed over in this heartbeat, and let through
//     by the JobFilter plugins, are taken in the fairness order (cluster.State.Walk);
//     of these J jobs, only the first ⌈(1−f)·J⌉ compete (TetrisConfig.Fairness).
//  2. Each competing job offers the task the cycle would place: its first pending task
//     at the best locality it has on the node (there are no locality waits: Tetris
//     has none). The task scores a − ε·w: a is the alignment (match.Alignment, the
//     dot product of the task's peak demand and the node's least free amount over
//     the task's window, both over the node's capacity: match.ScoreServer with the
//     task's hold profile, so that a predicted stage profile is aligned over its
//     stage window), times 1 − RemotePenalty when the task is not node-local; w is
//     the job's remaining work; ε = m·ā/p̄ over the competing tasks (the paper
//     averages over the tasks it considers; here, those of this choice).
//  3. The best-scoring task is tried (framework.Cycle.Try; on equal scores the job
//     first in the fairness order). A job whose try is refused is passed over for the
//     rest of the heartbeat; as DelayScheduling does, a task that fits no node even
//     empty does not hold its job's other tasks back, and a gang that has not
//     gathered offers its next member when one does not fit this node. A gang member
//     a Permit plugin keeps waiting leaves its job in the competition.
//
// Remaining work (this package's reading of "remaining work" from what the state
// knows): the sum over the job's pending tasks of their demand, each dimension over
// the node's capacity, times their duration in seconds: a declared profile's stages
// task by task; for undeclared tasks, per demand class (cluster.Class), the predicted
// profile's demand over time when the key has a prediction (NewTetris with a
// Prediction), otherwise the request times the declared duration, or times one second
// when the duration is unknown — the job's pending demand. Running tasks' remaining
// time is not counted: the state does not know it.
//
// Cost: a heartbeat's first choice walks the jobs (as a DelayScheduling pass does);
// each later one keeps the jobs it took, in the fairness order, and brings them up to
// date as a walk would find them (tetriskeep.go). After a start only the started
// job's entry in the fairness tree changed: the job and its queues' blocks of jobs
// move to their new places (cluster.Resettle; any other change walks afresh). Of the
// other jobs only those DemandClasses may now refuse are asked again — the class that
// let each through was refused since, or its need is no longer free, which heaps of
// the needs by dimension tell — as any other would be let through again without a
// look-up (DemandClasses.stillLets); with JobFilter plugins other than DemandClasses
// alone, every choice walks. Then the competing jobs are scored. A job's candidate
// task, its hold profile's peak and window, and its remaining work are worked out once
// per heartbeat and again only after the job is tried; alignment's factors are taken
// apart — the task's peak over the node's capacity when the job is picked, the node's
// least free amount over each window from now once per choice, as rows where it
// changes (a window past the last change has the last row; a binary search gives
// another's; the same value as Timeline.MinFree) — and summed in match.Alignment's
// order, to the same score. The demand step runs once per demand class per
// heartbeat, and a class's work once per heartbeat, from an estimate read through a
// predict.Ref and worked out again only when the estimate or the capacity changed.
// The decisions are those of walking the order and scoring afresh for every choice,
// the estimator's use of keys included.
type Tetris struct {
	cfg      TetrisConfig
	pred     *Prediction // nil: remaining work from requests only
	try      DelayScheduling
	walkEach bool // tests: walk the order for every choice and score plainly (the pass as it was: the reference)

	// The jobs that may compete, in the fairness order, kept from choice to choice in
	// a heartbeat (update, tetriskeep.go).
	jobs     []tetrisJob
	gen      uint64         // the cycle jobs is of; 0: none
	version  uint64         // the state's QueuesVersion jobs is up to date with
	at       int            // the index in jobs of the job chosen last; −1: none
	keep     bool           // jobs may be kept: the JobFilter plugins are none, or classes alone
	classes  *DemandClasses // the only JobFilter plugin, whose answers are kept; nil: none
	lets     []tetrisLet    // by job index: what let a kept job through classes
	needs    [resource.MaxDims]needHeap
	seq      uint32   // the number of the latest let
	bulk     bool     // a walk is under way: need items are heapified after it
	marked   []uint64 // by job index: the round in which the job is to be looked at again
	round    uint64   // rechecks so far
	refusals uint64   // classes' refusals (marks) seen
	walks    int      // tests: the choices made after a walk
	updates  int      // tests: the choices made from the kept jobs

	// Scratch reused from heartbeat to heartbeat.
	c     *framework.Cycle
	visit func(*cluster.JobInfo) bool // t.collect, bound once
	ids   []string
	cands []tetrisCand
	picks []tetrisPick    // by job index: the job's candidate task in this cycle
	holds []classHold     // by class slot: the hold profile of the class's tasks
	works []classWork     // by class slot: one pending task's work on the cycle's node
	segs  []stage.Segment // the node's timeline from now
	mins  []resource.Tuple
	node  tetrisNode
}

// tetrisCand is a competing job's candidate as a choice scores it: align is NaN when
// the job has none.
type tetrisCand struct {
	align float64
	work  float64
}

// tetrisPick is a job's candidate in a cycle: its task and what does not change until
// the job is tried again (other jobs' starts change only the node's free resources).
type tetrisPick struct {
	// What each choice reads first, together.
	gen   uint64 // the cycle it was worked out in; 0: to work out again
	job   *cluster.JobInfo
	level fairness.Level
	work  float64       // the job's remaining work
	end   time.Duration // the end of the hold profile's window from the cycle's time
	// keep is what the alignment is multiplied by for the locality: 1 node-local,
	// else 1 − RemotePenalty (the same product as the plain pass's, and no branch on
	// a locality that varies from job to job).
	keep float64
	// norm is the peak over the node's capacity, clamped to [0, 1], in the node's
	// dimensions (tetrisNode.dims): alignment's factors for the task.
	norm [resource.MaxDims]float64

	peak resource.Tuple // the hold profile's peak
	dur  time.Duration  // the hold profile's duration
}

// tetrisNode is the heartbeat's node as alignment reads it: its capacity, the
// dimensions of that with a positive amount (those match.Alignment counts), and, for
// each choice, its free window from now.
type tetrisNode struct {
	gen      uint64 // the cycle it is of
	capacity resource.Tuple
	dims     []int
	// starts[i] is the start of the i-th segment from now at which the least free
	// amount from now, over the capacity, changes (the first segment's start for the
	// first); rows[i] is that amount from starts[i] until starts[i+1], clamped to
	// [0, 1], in dims (len(dims) values a row), and the row after the last the amount
	// free at the instant now; zero a row of zeros, for a timeline without segments.
	// A segment that changes no row is left out: a window ending in it has the row
	// of the segments before it, and the search for a window's row is shorter (on a
	// node whose tasks all started by now, one row).
	starts []time.Duration
	rows   []float64
	zero   []float64
}

type classHold struct {
	gen, serial uint64
	hold        stage.Profile
}

// classWork is one pending task of a class's work on the cycle's node (gen, serial:
// the cycle and the class it is of), and what is kept while the slot holds the class
// (of: its serial): the class's reference to its key's estimate, and what the work was
// last worked out from — the estimate, or the request when there was none — and on
// what capacity.
type classWork struct {
	gen, serial uint64
	work        float64
	of          uint64
	ref         predict.Ref // when hasRef
	hasRef      bool
	done        bool           // work is from's, predicted or not, on capacity
	predicted   bool           // from is the estimate, not the request
	from        stage.Profile  // the estimate
	capacity    resource.Tuple // the capacity
}

// NewTetris returns the pass with cfg; pred (nil for none) predicts the profiles
// remaining work counts for classes with a prediction. It fails on a knob out of
// range (TetrisConfig.Validate).
func NewTetris(cfg TetrisConfig, pred *Prediction) (*Tetris, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tetris{cfg: cfg, pred: pred, try: *NewDelayScheduling(nil), at: -1}
	t.visit = t.collect
	return t, nil
}

// Name implements framework.Plugin.
func (*Tetris) Name() string { return "Tetris" }

// Config is the pass's knobs.
func (t *Tetris) Config() TetrisConfig { return t.cfg }

// Pass implements framework.PassPlugin.
func (t *Tetris) Pass(c *framework.Cycle, n *cluster.NodeInfo) error {
	defer func() { t.c, t.gen, t.at = nil, 0, -1 }()
	t.gen, t.at = 0, -1
	for c.Room() && c.FilterPass() {
		j, best, ok := t.choose(c, n)
		if !ok {
			return nil
		}
		task, level, ok := c.State().FirstPending(j, n, best)
		if !ok { // its chosen task is gone: the job has nothing at that level now
			t.picks[j.Index()].gen = 0
			c.SkipJob(j, framework.Skip{})
			continue
		}
		s, _ := t.try.try(c, j, n, task, level, false)
		t.picks[j.Index()].gen = 0 // its pending tasks changed
		if s.Code == framework.Wait || s.OK() {
			continue
		}
		c.SkipJob(j, framework.Skip{})
		if s.Code == framework.Closed {
			return nil
		}
	}
	return nil
}

// Competing is how many of j jobs compete under fairness knob f: ⌈(1−f)·j⌉, at
// least one when j > 0 (a product within 1e-9 of an integer counts as that integer,
// so that rounding in 1−f does not add a job: f = 0.99 of 100 jobs is 1).
func Competing(f float64, j int) int {
	if j <= 0 {
		return 0
	}
	k := int(math.Ceil((1-f)*float64(j) - 1e-9))
	return min(max(k, 1), j)
}

// choose scores the competing jobs' tasks and returns the best one's job and the
// locality it is tried at; false when no job competes.
func (t *Tetris) choose(c *framework.Cycle, n *cluster.NodeInfo) (*cluster.JobInfo, fairness.Level, bool) {
	st := c.State()
	t.c, t.cands = c, t.cands[:0]
	if t.update(c) {
		t.updates++
	} else {
		t.walk(c)
		t.walks++
	}
	t.at = -1
	k := Competing(t.cfg.Fairness, len(t.jobs))
	if k == 0 {
		return nil, 0, false
	}
	if len(t.picks) < st.JobSlots() {
		t.picks = append(t.picks, make([]tetrisPick, st.JobSlots()-len(t.picks))...)
	}
	t.setNode(c.Gen(), n.Capacity())
	t.window(n.Timeline(), c.Now())
	gen := c.Gen()
	if t.walkEach {
		return t.choosePlainly(c, n, k)
	}
	// Each competing job's alignment and work, in order (len(t.cands) == k), summed as
	// the plain pass sums them.
	t.cands = slices.Grow(t.cands[:0], k)[:k]
	sumA, sumW, first := 0.0, 0.0, -1
	last, from := t.lastRow() // row's, taken once
	for i := range t.jobs[:k] {
		e := &t.jobs[i]
		pk := &t.picks[e.idx]
		cd := &t.cands[i]
		if pk.gen != gen || pk.job != e.job {
			if !t.pick(c, e.job, n, pk) {
				cd.align = math.NaN() // no candidate: its score, NaN, is never the best
				continue
			}
		}
		a := alignRow(&pk.norm, t.rowWith(pk.end, last, from))
		if a != a {
			a = 0
		}
		a *= pk.keep
		cd.align, cd.work = a, pk.work
		sumA += a
		sumW += pk.work
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil, 0, false
	}
	eps := 0.0
	if sumW > 0 {
		eps = t.cfg.SRPTWeight * sumA / sumW
	}
	bi, bs := first, math.Inf(-1)
	for i, cd := range t.cands[first:] {
		if s := cd.align - eps*cd.work; s > bs {
			bi, bs = first+i, s
		}
	}
	t.at = bi
	return t.jobs[bi].job, t.picks[t.jobs[bi].idx].level, true
}

// choosePlainly is choose's scoring as the pass did it before the factors were taken
// apart (walkEach, the reference): each candidate aligned with match.Alignment over
// the window's least free amount.
func (t *Tetris) choosePlainly(c *framework.Cycle, n *cluster.NodeInfo, k int) (*cluster.JobInfo, fairness.Level, bool) {
	type cand struct {
		at    int
		level fairness.Level
		align float64
		work  float64
	}
	var cands []cand
	sumA, sumW := 0.0, 0.0
	for i := range t.jobs[:k] {
		e := &t.jobs[i]
		pk := &t.picks[e.idx]
		if pk.gen != c.Gen() || pk.job != e.job {
			if !t.pick(c, e.job, n, pk) {
				continue
			}
		}
		a := match.Alignment{}.Score(t.node.capacity, t.minFree(c.Now(), pk.dur), pk.peak)
		if a != a {
			a = 0
		}
		if pk.level > fairness.NodeLocal {
			a *= 1 - t.cfg.RemotePenalty
		}
		cands = append(cands, cand{at: i, level: pk.level, align: a, work: pk.work})
		sumA += a
		sumW += pk.work
	}
	if len(cands) == 0 {
		return nil, 0, false
	}
	eps := 0.0
	if sumW > 0 {
		eps = t.cfg.SRPTWeight * sumA / sumW
	}
	bi, bs := 0, math.Inf(-1)
	for i, cd := range cands {
		if s := cd.align - eps*cd.work; s > bs {
			bi, bs = i, s
		}
	}
	t.at = cands[bi].at
	return t.jobs[t.at].job, cands[bi].level, true
}

// pick works out job j's candidate on node n into pk: its first pending task at its
// best locality there, that task's hold profile, and the job's remaining work; false
// when it has no pending task.
func (t *Tetris) pick(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo, pk *tetrisPick) bool {
	st := c.State()
	task, level, ok := st.FirstPending(j, n, fairness.OffSwitch) // at its best locality
	if !ok {
		return false
	}
	hold := t.hold(c, j, task)
	*pk = tetrisPick{gen: c.Gen(), job: j, level: level, peak: hold.Peak(), dur: hold.Duration(), work: t.remaining(c, j, n), keep: 1}
	if level > fairness.NodeLocal {
		pk.keep = 1 - t.cfg.RemotePenalty
	}
	t.factors(pk, c.Now())
	return true
}

// factors works out what alignment reads of candidate pk from its peak and duration:
// its window's end from now, and its peak over the node's capacity (norm).
func (t *Tetris) factors(pk *tetrisPick, now time.Duration) {
	pk.end = stage.AddSat(now, pk.dur)
	for d, k := range t.node.dims {
		pk.norm[d] = unitShare(pk.peak[k], t.node.capacity[k])
	}
}

// setNode takes the capacity of the node of cycle gen, and its dimensions, for the
// cycle's alignments.
func (t *Tetris) setNode(gen uint64, capacity resource.Tuple) {
	nd := &t.node
	if nd.gen == gen {
		return
	}
	nd.gen, nd.capacity, nd.dims = gen, capacity, nd.dims[:0]
	for k := range nd.capacity {
		if nd.capacity[k] > 0 {
			nd.dims = append(nd.dims, k)
		}
	}
	nd.zero = append(nd.zero[:0], make([]float64, len(nd.dims))...)
}

// window takes timeline tl from now for minFree and row: its segments, their running
// minimum and that over the capacity where it changes.
func (t *Tetris) window(tl *stage.Timeline, now time.Duration) {
	nd := &t.node
	t.segs = tl.AppendSegments(t.segs[:0], now, stage.Forever)
	t.mins = t.mins[:0]
	nd.starts, nd.rows = nd.starts[:0], nd.rows[:0]
	w := len(nd.dims)
	m := tl.Capacity()
	for _, sg := range t.segs {
		m = m.Min(sg.Free)
		t.mins = append(t.mins, m)
		nd.rows = t.appendRow(nd.rows, m)
		if r := len(nd.starts); r > 0 && slices.Equal(nd.rows[(r-1)*w:r*w], nd.rows[r*w:]) {
			nd.rows = nd.rows[:r*w] // the row of the segments before
			continue
		}
		nd.starts = append(nd.starts, sg.Start)
	}
	if len(t.segs) > 0 {
		nd.rows = t.appendRow(nd.rows, t.segs[0].Free)
	}
}

// appendRow appends free over the node's capacity, clamped to [0, 1], in its
// dimensions.
func (t *Tetris) appendRow(rows []float64, free resource.Tuple) []float64 {
	for _, k := range t.node.dims {
		rows = append(rows, unitShare(free[k], t.node.capacity[k]))
	}
	return rows
}

// unitShare is amount over capacity (positive), clamped to [0, 1], as match.Alignment
// takes it.
func unitShare(amount, capacity int64) float64 {
	x := float64(amount) / float64(capacity)
	switch {
	case !(x > 0):
		return 0
	case x > 1:
		return 1
	}
	return x
}

// rowWith is the node's least free amount over [now, end), over its capacity (window):
// minFree's, normalised, given the last row and where it starts (lastRow), which a
// choice takes once for all its candidates. A window that outlasts every change of the
// amount (the common case: the node's tasks started by now) has the last row without
// a search.
func (t *Tetris) rowWith(end time.Duration, last []float64, from time.Duration) []float64 {
	if from < end {
		return last
	}
	return t.search(end)
}

// alignRow is the alignment of a task whose peak over the node's capacity is norm
// with row, the node's least free amount over the task's window over its capacity.
func alignRow(norm *[resource.MaxDims]float64, row []float64) float64 {
	if len(row) == 0 {
		return 0
	}
	sum := 0.0
	for d, f := range row {
		sum += norm[d] * f
	}
	return sum / float64(len(row))
}

// lastRow is the last change of the node's least free amount (row), and when it
// starts; math.MaxInt64 when the timeline has no segments (no window outlasts it).
func (t *Tetris) lastRow() ([]float64, time.Duration) {
	nd := &t.node
	n, w := len(nd.starts), len(nd.dims)
	if n == 0 {
		return nil, math.MaxInt64
	}
	return nd.rows[(n-1)*w : n*w], nd.starts[n-1]
}

// search is rowWith's row for a window that ends at the last change or before it: a
// binary search of the changes.
func (t *Tetris) search(end time.Duration) []float64 {
	nd := &t.node
	w, n := len(nd.dims), len(nd.starts)
	if n == 0 {
		return nd.zero
	}
	i, hi := 0, n // i: the first change at end or later
	for i < hi {
		if m := int(uint(i+hi) >> 1); nd.starts[m] < end {
			i = m + 1
		} else {
			hi = m
		}
	}
	if i == 0 { // an empty window: the instant now
		return nd.rows[n*w : (n+1)*w]
	}
	return nd.rows[(i-1)*w : i*w]
}

// minFree is the node's least free amount over [now, now+d), as its timeline's MinFree
// (and so match.WindowFree without a match result) gives it, from the segments window
// took: a binary search instead of a walk.
func (t *Tetris) minFree(now, d time.Duration) resource.Tuple {
	if len(t.segs) == 0 {
		return resource.Tuple{}
	}
	end := stage.AddSat(now, d)
	i, _ := slices.BinarySearchFunc(t.segs, end, func(sg stage.Segment, e time.Duration) int { return cmp.Compare(sg.Start, e) })
	if i == 0 { // an empty window: the instant now
		return t.segs[0].Free
	}
	return t.mins[i-1]
}

// hold is the profile task of job j would hold on the heartbeat's node (the demand
// step's Hold), kept per class for the cycle: undeclared tasks of one class have the
// same.
func (t *Tetris) hold(c *framework.Cycle, j *cluster.JobInfo, task *cluster.TaskInfo) stage.Profile {
	if task.Declared().Len() > 0 || task.Failures() > 0 { // not the class's profile
		a, _ := c.Prepare(task, nil, c.Now())
		return a.Demand.Hold
	}
	id := c.State().ClassOf(task)
	var cl *cluster.Class
	for i := range j.Classes() {
		if j.Classes()[i].ID == id {
			cl = &j.Classes()[i]
			break
		}
	}
	if cl == nil { // not pending: cannot happen for a task FirstPending returned
		a, _ := c.Prepare(task, nil, c.Now())
		return a.Demand.Hold
	}
	for len(t.holds) <= cl.Slot {
		t.holds = append(t.holds, classHold{})
	}
	h := &t.holds[cl.Slot]
	if h.gen != c.Gen() || h.serial != cl.Serial {
		a, _ := c.Prepare(task, nil, c.Now())
		*h = classHold{gen: c.Gen(), serial: cl.Serial, hold: a.Demand.Hold}
	}
	return h.hold
}

// remaining is job j's remaining work on node n (Tetris' doc comment): per class for
// undeclared tasks, per task for declared ones (a declared class shares only its
// first stage's non-compressible demand).
func (t *Tetris) remaining(c *framework.Cycle, j *cluster.JobInfo, n *cluster.NodeInfo) float64 {
	w := 0.0
	capacity := n.Capacity()
	classes := j.Classes()
	declared := false
	for i := range classes {
		cl := &classes[i]
		if cl.ID.Declared {
			declared = true
			continue
		}
		for len(t.works) <= cl.Slot {
			t.works = append(t.works, classWork{})
		}
		cw := &t.works[cl.Slot]
		if cw.gen != c.Gen() || cw.serial != cl.Serial {
			cw.work = t.classWork(c.State(), cw, cl, capacity)
			cw.gen, cw.serial = c.Gen(), cl.Serial
		}
		w += float64(cl.N) * cw.work
	}
	if declared {
		c.State().AscendPending(j, n, fairness.OffSwitch, func(task *cluster.TaskInfo, _ fairness.Level) bool {
			if p := task.Declared(); p.Len() > 0 {
				w += profileWork(p, capacity)
			}
			return true
		})
	}
	return w
}

// profileWork is profile p's work on a node of capacity: each stage's demand over
// capacity, summed over dimensions, times its seconds.
func profileWork(p stage.Profile, capacity resource.Tuple) float64 {
	w := 0.0
	for i := 0; i < p.Len(); i++ {
		s := p.Stage(i)
		w += normSum(s.Demand, capacity) * s.Duration.Seconds()
	}
	return w
}

// classWork is one pending task of undeclared class cl's work on a node of capacity,
// cw being the class's scratch: demand over capacity, summed over dimensions, times
// seconds — of the predicted profile when the key has a prediction, else of the
// request. The estimate is asked for as before, once a cycle (through the class's
// reference to its key, estimate), and the work is worked out again only when the
// estimate or the capacity is another than it was last worked out for.
func (t *Tetris) classWork(st *cluster.State, cw *classWork, cl *cluster.Class, capacity resource.Tuple) float64 {
	if cw.of != cl.Serial { // a new class in the slot
		*cw = classWork{of: cl.Serial}
		if t.pred != nil {
			cw.ref, cw.hasRef = t.pred.refer(cl.ID.Key)
		}
	}
	var prof stage.Profile
	predicted := false
	if t.pred != nil {
		if p, ok := t.estimate(st, cw, cl.ID.Key); ok && p.Duration() != stage.Forever {
			prof, predicted = p, true
		}
	}
	if !t.walkEach && cw.done && cw.predicted == predicted && cw.from.Same(prof) && cw.capacity == capacity {
		return cw.work
	}
	var w float64
	if predicted {
		w = profileWork(prof, capacity)
	} else {
		d, r := cl.ID.Duration, cl.ID.Request
		if d <= 0 {
			d = time.Second
		}
		w = normSum(r, capacity) * d.Seconds()
	}
	cw.done, cw.predicted, cw.from, cw.capacity = true, predicted, prof, capacity
	return w
}

// estimate is Prediction.Estimate for key, the key of the class whose scratch is cw:
// read through the class's reference to it when the estimator hands them out, which
// answers, and records the use, as Estimate does. The reference pass asks by key.
func (t *Tetris) estimate(st *cluster.State, cw *classWork, key predict.Key) (stage.Profile, bool) {
	if !cw.hasRef || t.walkEach {
		return t.pred.Estimate(st, key)
	}
	return t.pred.estimateRef(st, &cw.ref)
}

// normSum is the sum over dimensions with a positive capacity of demand over
// capacity.
func normSum(demand, capacity resource.Tuple) float64 {
	s := 0.0
	for k := range capacity {
		if capacity[k] > 0 {
			s += float64(demand[k]) / float64(capacity[k])
		}
	}
	return s
}
