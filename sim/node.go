package sim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// node is one simulated server: the tasks running on it and their fluid progress.
type node struct {
	idx  int32
	spec *workload.NodeSpec
	adv  resource.Tuple // the capacity the scheduler is told (WithReservedBackground)
	up   bool

	running []*exec // in start order: the last is the most recently started

	bg      resource.Tuple // background demand
	bgVer   uint64
	used    resource.Tuple // what the tasks get (allocated), background excluded
	bgUsed  resource.Tuple // what the background gets
	bgSeen  resource.Tuple // the background demand bgUsed was shared out of
	bgSq    bool           // the background gets less than its demand (bgRC > 0 somewhere)
	bgSpeed float64        // then the share of its demand it progresses at: 1 − its largest rc
	last    time.Duration  // progress is integrated up to here
	ver     uint64         // bumped at every reschedule; stale evNode events are dropped

	usedInt    resource.Vector // ∫ (used + bgUsed) dt since sampleFrom, unit·seconds
	bgInt      resource.Vector // ∫ bgUsed dt since reportFrom, unit·seconds
	reportFrom time.Duration   // the start of the window the next usage report covers
	sampleFrom time.Duration
	window     []predict.Interval

	resized bool // a run here was resized by a scale-up round (its limits are checked)

	nextBeat time.Duration
	beats    int // periodic beats so far: the agent samples every Sim.agentN
	extraDue bool
}

// exec is one run of a task on a node: the stage it is in, the work left in it, and
// the rate it progresses at (the fluid model of doc.go).
type exec struct {
	task     *simTask
	speed    float64 // the node's speed factor
	backup   bool    // a backup attempt (speculation)
	work     float64 // the run's total work (transfer and stages), seconds at rate 1
	done     float64 // work of the stages completed
	transfer float64 // work of moving the input, seconds

	idx       int            // current stage of task.wt.True; -1 while moving non-local input
	stageW    float64        // the current stage's work, seconds at rate 1 (stageWork)
	remaining float64        // work left in the stage, in seconds at rate 1
	rate      float64        // work per second now
	rcMax     float64        // the largest compression ratio on a dimension it uses now
	demand    resource.Tuple // the current stage's demand: the most it may use
	use       resource.Tuple // what it uses now (Variation): what the node shares out
	alloc     resource.Tuple // what it gets of use
	level     float64        // its compressible usage now, a share of demand (Variation)
	usage     usageModel
	peak      resource.Tuple // the most it used in the current stage
	ran       []ranStage     // the stages it completed, as they ran

	stageStart time.Duration
	stageInt   resource.Vector // ∫ alloc dt over the current stage (Oracle only)
	stageRC    resource.Vector // the largest compression per dimension in the stage
	obs        []stage.Stage   // the Oracle's observation
	obsRC      []resource.Vector
	anyRC      bool

	// The node agent's series (Measured): sampled from the start of the first stage.
	sampling  bool
	sampleAt  time.Duration   // start of the interval the next sample covers
	allocInt  resource.Vector // ∫ alloc dt since sampleAt
	sampleRC  resource.Vector // the largest compression per dimension since sampleAt
	sampleHWM resource.Tuple  // the most it used since sampleAt (read on memory)
	series    []predict.Sample
	seriesRC  []resource.Vector

	resize *resize // what scale-up rounds changed of its allocation; nil: nothing
}

// ranStage is a true stage as a run went through it: how long it took and the most it
// used (the truth a prediction is measured against).
type ranStage struct {
	dur  time.Duration
	peak resource.Tuple
}

// advance integrates node n's progress from n.last to t at the current rates.
func (s *Sim) advance(n *node, t time.Duration) {
	if t <= n.last {
		return
	}
	d := t - n.last
	dt := d.Seconds()
	fb := s.pol.Feedback
	for _, x := range n.running {
		x.remaining -= x.rate * dt
		if x.rcMax > 0 {
			x.task.compressed += d
		}
		if s.agent && x.sampling {
			for k := 0; k < s.schema.Len(); k++ {
				a := float64(x.alloc[k]) * dt
				x.allocInt[k] += a
				x.stageInt[k] += a
			}
		}
	}
	if fb {
		for k := 0; k < s.schema.Len(); k++ {
			n.usedInt[k] += float64(n.used[k]+n.bgUsed[k]) * dt
			n.bgInt[k] += float64(n.bgUsed[k]) * dt
		}
	}
	n.last = t
}

// settle ends the stages that are done on node n at now, finishes the tasks whose last
// stage ended, and reschedules the node.
func (s *Sim) settle(n *node) error {
	s.advance(n, s.now)
	var buf [8]*exec
	done := buf[:0]
	keep := n.running[:0]
	for _, x := range n.running {
		if s.step(x) {
			keep = append(keep, x)
		} else {
			done = append(done, x)
		}
	}
	clear(n.running[len(keep):])
	n.running = keep
	if err := s.reschedule(n); err != nil {
		return err
	}
	// Every run that ended is reported before the reduce tasks a finish submits are
	// placed (push mode): a placement must not see, and perhaps evict, a task that
	// has in fact finished.
	s.holdRetry = true
	for _, x := range done {
		if !x.backup && x.task.predicted {
			s.m.predicted(x.task.hold, x.ran)
		}
		var obs *predict.Observation
		switch {
		case !s.pol.Feedback:
		case s.cfg.observe == Oracle:
			o, err := x.oracle(s.schema)
			if err != nil {
				s.holdRetry = false
				return err
			}
			obs = &o
		default:
			obs = s.measured(x)
		}
		if err := s.finish(x.task, x, n, obs); err != nil {
			s.holdRetry = false
			return err
		}
	}
	s.holdRetry = false
	if s.retryHeld {
		s.retryHeld = false
		return s.retryPush()
	}
	return nil
}

// step moves x past every stage it has completed; false when the task is done.
func (s *Sim) step(x *exec) bool {
	for x.remaining <= x.rate*1e-9 { // less than a nanosecond of work left
		s.endStage(x)
		x.done += x.stageWork()
		if x.idx+1 >= x.task.wt.True.Len() {
			return false
		}
		s.enterStage(x, x.idx+1)
	}
	return true
}

func (s *Sim) enterStage(x *exec, i int) {
	st := x.task.wt.True.Stage(i)
	x.idx, x.stageW, x.demand = i, st.Duration.Seconds(), st.Demand
	x.remaining = x.stageW
	x.stageStart, x.stageInt, x.stageRC, x.peak = s.now, resource.Vector{}, resource.Vector{}, resource.Tuple{}
	if !x.sampling {
		x.sampling, x.sampleAt, x.sampleHWM = true, s.now, resource.Tuple{}
	}
	s.applyUsage(x)
}

// endStage records the stage x just completed: as it ran (for the prediction error),
// and as the Oracle ablation hands it over (feedback).
func (s *Sim) endStage(x *exec) {
	if x.idx < 0 {
		return
	}
	d := max(s.now-x.stageStart, 1)
	x.ran = append(x.ran, ranStage{dur: d, peak: x.peak})
	if !s.pol.Feedback || s.cfg.observe != Oracle {
		return
	}
	x.anyRC = x.anyRC || x.stageRC != resource.Vector{}
	x.obs = append(x.obs, stage.Stage{Duration: d, Demand: s.reading(x.stageInt, d, x.peak)})
	x.obsRC = append(x.obsRC, x.stageRC)
}

// startExec starts task t on node n at now (n advanced to now): first the transfer of
// its non-local input, then its true stages.
func (s *Sim) startExec(t *simTask, n *node) {
	x, loc := s.newExec(t, n, false)
	t.locality = loc
	s.m.locality[loc]++
	n.running = append(n.running, x)
	t.state, t.start, t.exec = tRunning, s.now, x
	if t.firstStart < 0 {
		t.firstStart = s.now
	}
	s.running++
}

// runLocality is where a run read its input: a fairness.Level, or noInput for a run that
// read no input block. It indexes metrics.locality.
type runLocality uint8

const noInput runLocality = 3

// level is l as a fairness.Level: NodeLocal for noInput.
func (l runLocality) level() fairness.Level {
	if l == noInput {
		return fairness.NodeLocal
	}
	return fairness.Level(l)
}

// newExec is a run of task t on node n from now, and the locality of its input there.
func (s *Sim) newExec(t *simTask, n *node, backup bool) (*exec, runLocality) {
	s.startSeq++
	x := &exec{task: t, speed: n.spec.Speed, work: t.wt.True.Duration().Seconds(), level: 1, backup: backup}
	if !s.cfg.variation.constant() {
		run := uint64(t.attempt) << 1
		if backup {
			run |= 1
		}
		x.usage = newUsage(t.wt.ID, run)
		x.level = s.cfg.variation.Level
	}
	loc := noInput
	var transfer time.Duration
	var moved int64
	for _, b := range t.wt.Blocks {
		l, ok := s.cl.Locality(int(n.idx), s.blocks[b])
		bl := runLocality(l)
		if !ok {
			bl = noInput
		}
		if loc == noInput || bl > loc {
			loc = bl
		}
		if d := s.cl.TransferTime(s.w.Blocks[b], l); d > 0 {
			transfer += d
			moved += s.w.Blocks[b]
		}
	}
	if transfer > 0 {
		x.idx, x.remaining, x.stageStart = -1, transfer.Seconds(), s.now
		x.transfer = transfer.Seconds()
		x.stageW = x.transfer
		x.work += x.transfer
		x.demand[workload.SlotMemory] = t.wt.True.Stage(0).Demand[workload.SlotMemory]
		x.demand[workload.SlotNetIO] = max(1, int64(float64(moved)/transfer.Seconds()))
		x.use = x.demand
	} else {
		s.enterStage(x, 0)
	}
	return x, loc
}

// stageWork is the work of the stage x is in (the transfer while idx is -1).
func (x *exec) stageWork() float64 { return x.stageW }

// progress is the share of its work run x has done, in [0, 1] (node advanced to now).
func (x *exec) progress() float64 {
	if x.work <= 0 {
		return 0
	}
	p := (x.done + x.stageWork() - max(x.remaining, 0)) / x.work
	return min(max(p, 0), 1)
}

// reschedule recomputes node n's shares and rates (killing tasks on a non-compressible
// overrun) and schedules its next stage end.
func (s *Sim) reschedule(n *node) error {
	if err := s.recompute(n); err != nil {
		return err
	}
	n.ver++
	next := time.Duration(-1)
	for _, x := range n.running {
		if x.rate <= 0 {
			continue
		}
		ns := math.Ceil(x.remaining / x.rate * 1e9)
		if !(ns < float64(stage.Forever-s.now)) {
			continue // beyond the end of time: the task never finishes
		}
		d := max(time.Duration(ns), 1)
		if next < 0 || s.now+d < next {
			next = s.now + d
		}
	}
	if next >= 0 {
		s.q.push(next, evNode, n.idx, uint32(n.ver))
	}
	return nil
}

// recompute applies the execution model on node n at now: kill the most recently
// started tasks while the true demand exceeds a non-compressible capacity; then, on
// every compressible dimension whose demand exceeds the capacity, share it out as the
// Yield model says (Proportional: every user gets C/D of its demand, rc = 1 − C/D,
// eq. 1; ColocatedFirst: the co-located applications first, the tasks the rest), and
// a task progresses at its speed × (1 − rcMax)/(1 + p) where rcMax is the largest rc
// on the dimensions it uses (eq. 5).
func (s *Sim) recompute(n *node) error {
	capa := n.spec.Capacity
	dims := s.schema.Len()
	comp := s.schema.Compressible()
	var d resource.Tuple
	for {
		if n.resized {
			// A run over a non-compressible limit a shrink set is killed first: its
			// container's limit, not the node, stops it.
			if i := slices.IndexFunc(n.running, s.overLimit); i >= 0 {
				x := n.running[i]
				n.running = slices.Delete(n.running, i, i+1)
				if err := s.kill(x, true); err != nil {
					return err
				}
				continue
			}
		}
		d = n.bg
		for _, x := range n.running {
			if x.resize != nil {
				d = d.Add(s.effective(x))
				continue
			}
			d = d.Add(x.use)
		}
		var over resource.Mask
		for k := 0; k < dims; k++ {
			if !comp.Has(k) && d[k] > capa[k] {
				over |= 1 << k
			}
		}
		if over == 0 || len(n.running) == 0 {
			break
		}
		i := s.victim(n, over)
		x := n.running[i]
		n.running = slices.Delete(n.running, i, i+1)
		if err := s.kill(x, false); err != nil {
			return err
		}
	}
	rc, bgRC := s.cfg.yield.squeeze(capa, d, n.bg, comp, dims)
	var used resource.Tuple
	for _, x := range n.running {
		if x.resize != nil {
			used = used.Add(s.rateResized(x, rc))
			continue
		}
		x.alloc, x.rcMax = share(x.use, rc, dims), 0
		for k := 0; k < dims; k++ {
			if rc[k] > 0 && x.use[k] > 0 {
				x.rcMax = max(x.rcMax, rc[k])
				x.stageRC[k] = max(x.stageRC[k], rc[k])
				x.sampleRC[k] = max(x.sampleRC[k], rc[k])
			}
		}
		speed := x.speed
		if x.idx < 0 {
			speed = 1 // moving input is bound by the network, not the node's speed
		}
		x.rate = speed
		if x.rcMax > 0 {
			x.rate = speed * (1 - x.rcMax) / (1 + s.cfg.penalty) // eq. 5
		}
		used = used.Add(x.alloc)
	}
	s.m.setUsed(s, n, used, share(n.bg, bgRC, dims), bgRC)
	return nil
}

// rateResized sets the share, compression and rate of run x, which a scale-up round
// resized, on a node whose compressible dimensions are compressed by rc, and returns
// what x gets. Its demand on the node is its effective usage (grown, or capped by its
// shrink); it gets (1 − rc_k) of it, as every run does. On a dimension its shrink caps
// at f_k of its usage, its compression is 1 − f_k(1 − rc_k) of that usage — f_k's eq. 5
// compression on an uncontended node, the node's rc_k with no shrink —, and it
// progresses at speed × up × (1 − rc_max)/(1 + p) (eq. 5), rc_max the largest over
// the dimensions it uses, or at speed × up uncompressed.
func (s *Sim) rateResized(x *exec, rc resource.Vector) resource.Tuple {
	dims := s.schema.Len()
	shrink, up := s.resized(x)
	x.alloc, x.rcMax = share(s.effective(x), rc, dims), 0
	for k := 0; k < dims; k++ {
		if x.use[k] <= 0 {
			continue
		}
		r := rc[k]
		if shrink[k] < 1 {
			r = 1 - shrink[k]*(1-rc[k])
		}
		if r > 0 {
			x.rcMax = max(x.rcMax, r)
			x.stageRC[k] = max(x.stageRC[k], r)
			x.sampleRC[k] = max(x.sampleRC[k], r)
		}
	}
	speed := x.speed
	if x.idx < 0 {
		speed = 1 // moving input is bound by the network, not the node's speed
	}
	x.rate = speed * up
	if x.rcMax > 0 {
		x.rate = speed * up * (1 - x.rcMax) / (1 + s.cfg.penalty) // eq. 5
	}
	return x.alloc
}

// victim is the run on node n killed for an overrun of the dimensions in over: the
// most recently started of the runs using more than the scheduler holds for them at
// their progress on one of those dimensions (YARN's container monitor and the kubelet's
// eviction go for the containers over their allocation), or, when none is — the
// overrun is the background's, or the scheduler's books are wrong — the most recently
// started of all, as an OOM killer of the newest would. The oldest run is never the
// victim while others run, so it finishes if it fits beside the background alone, and
// no two runs can take turns killing each other for ever.
func (s *Sim) victim(n *node, over resource.Mask) int {
	for i := len(n.running) - 1; i > 0; i-- {
		x := n.running[i]
		hold := x.task.backupPeak
		switch {
		case x.resize != nil:
			hold = x.resize.held // what the scale-up rounds left it
		case !x.backup:
			// At the end of the plan (a run finishing at this instant) the plan's last
			// stage still holds.
			d := x.task.hold.Duration()
			hold = x.task.hold.At(time.Duration(min(x.progress()*float64(d), float64(d-1))))
		}
		for k := 0; k < s.schema.Len(); k++ {
			if over.Has(k) && x.use[k] > hold[k] {
				return i
			}
		}
	}
	return len(n.running) - 1
}

// share is demand with every dimension k reduced to (1 − rc[k]) of itself, rounded
// down so that the shares of a compressed dimension never add up to more than its
// capacity.
func share(demand resource.Tuple, rc resource.Vector, dims int) resource.Tuple {
	out := demand
	for k := 0; k < dims; k++ {
		if rc[k] > 0 && demand[k] > 0 {
			out[k] = int64(float64(demand[k]) * (1 - rc[k]))
		}
	}
	return out
}

// stopExec ends x's run without a finish (its node failed).
func stopExec(x *exec) { x.task.exec = nil }

// loadBackground sets node n's background load at t and schedules its next change. It
// fails, changing nothing, when the background breaks its contract (checkBackground).
func (s *Sim) loadBackground(n *node, t time.Duration) error {
	b := s.cfg.background
	if b == nil {
		return nil
	}
	d, next := b.Load(int(n.idx), n.spec.Capacity, t)
	if err := s.checkBackground(n.spec.ID, t, d, next); err != nil {
		return err
	}
	n.bg = d
	n.bgVer++
	if next < stage.Forever {
		s.q.push(next, evBackground, n.idx, uint32(n.bgVer))
	}
	return nil
}

// checkBackground checks what a Background returned for node at t: a demand that is
// not negative and has nothing outside the schema's dimensions, and a next change
// after t. The error wraps ErrInvalidInput and names the node, the time and the value.
func (s *Sim) checkBackground(node string, t time.Duration, d resource.Tuple, next time.Duration) error {
	for k, v := range d {
		switch {
		case k >= s.schema.Len() && v != 0:
			return fieldErr(fmt.Sprintf("background of node %q at %v: demand[%d], outside the schema's %d dimensions", node, t, k, s.schema.Len()), v, ErrInvalidInput)
		case v < 0:
			return fieldErr(fmt.Sprintf("background of node %q at %v: demand[%d] (%s)", node, t, k, s.schema.DimName(k)), v, ErrInvalidInput)
		}
	}
	if next <= t {
		return fieldErr(fmt.Sprintf("background of node %q at %v: next change, not after %v", node, t, t), next, ErrInvalidInput)
	}
	return nil
}
