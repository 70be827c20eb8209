package sim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

// taskState is where a task is in the simulation.
type taskState uint8

const (
	tWaiting  taskState = iota // not submitted yet: job not arrived, or a reduce waiting for its maps
	tPending                   // submitted, waiting for a placement
	tPlaced                    // placed with a future start (push mode), not running yet
	tRunning                   // running on a node
	tDone                      // finished
	tReserved                  // kept waiting for a permit (a gang member, push mode); counted as pending
)

type simTask struct {
	wt        *workload.Task
	job       int32
	state     taskState
	attempt   uint32 // placements so far; a stale evStart carries an older one
	node      int32  // node of the current placement, -1 when none
	ranOn     int32  // node of the last run that finished
	exec      *exec
	hold      stage.Profile  // what the scheduler holds for its current placement
	predicted bool           // hold is a predicted profile, not the request
	peak      resource.Tuple // what the scheduler holds for it (its fairness usage) while placed

	submitted, start, finish time.Duration
	firstStart               time.Duration // when its first run started; -1 before
	compressed               time.Duration // time spent running compressed, all attempts
	kills                    int32
	evictions                int32         // runs evicted by preemption
	lost                     time.Duration // run time of the evicted runs
	locality                 runLocality

	backup     *exec          // the running backup attempt (speculation), nil when none
	backupNode int32          // its node
	backupPeak resource.Tuple // what the scheduler holds for it
}

type simJob struct {
	wj          *workload.Job
	queue       int
	maps, left  int // map tasks not finished; tasks not finished
	first, done time.Duration
	started     bool
	firstTask   int32 // index of the job's first task in Sim.tasks

	// Gangs (wj.MinMember > 1): placed counts the job's tasks placed (running, or with
	// a future start); gathered says whether MinMember of them, finished ones
	// included, have been placed together since the job last lost every placed task
	// to a kill, a failure or an eviction (the scheduler's rule,
	// finegrain.Job.MinMember). For the decision being
	// applied: touched marks a job placed in it, added counts its placements there
	// (kills during the decision do not undo them: the scheduler placed them
	// together), and wasGathered is gathered before its first one.
	placed, added         int
	gathered, wasGathered bool
	touched               bool
}

// Sim is one simulation: a workload on a cluster under a policy. Build it with New and
// run it once with Run; the package-level Run does both.
type Sim struct {
	cfg    config
	w      *workload.Workload
	cl     *workload.Cluster
	pol    Policy
	sched  Scheduler
	schema *resource.Schema
	mask   resource.Mask // the request dimensions told to the scheduler

	q       queue
	now     time.Duration
	ran     bool
	nodes   []*node
	nodeIdx map[string]int32
	jobs    []simJob
	tasks   []simTask
	byID    map[string]int32
	queues  []string
	qIdx    map[string]int
	blocks  [][]int // replica node indices per block

	pending, running, finished, jobsDone int
	startSeq                             uint64
	reportN                              int // agent samples per usage report
	agentN                               int // heartbeats per agent sample
	retry                                []int32
	retryDue, inRetry                    bool
	holdRetry, retryHeld                 bool          // push: a settle reports its finishes before a retry round
	progressAt                           time.Duration // the last arrival, placement, finish or repair
	failures                             []NodeFailure
	touched                              []int32 // gang jobs placed in the decision being applied
	mixedPriorities                      bool    // the jobs do not all have the same priority
	gangs                                bool    // some job is a gang (MinMember > 1)
	agent                                bool    // node agents sample the tasks' usage (Feedback, ScaleUp)
	hasLS                                bool    // some task is latency-sensitive

	m metrics
}

// New validates the workload, the cluster and the options, builds the policy's
// scheduler, places the input replicas and returns a simulation ready to Run. The
// workload and cluster are read, never modified; they must not change until Run
// returns.
func New(w *workload.Workload, cl *workload.Cluster, p Policy, opts ...Option) (*Sim, error) {
	if w == nil || cl == nil {
		return nil, fieldErr("workload/cluster", nil, ErrInvalidInput)
	}
	cfg := defaultConfig()
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("options[%d]", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("sim: workload: %w: %w", ErrInvalidInput, err)
	}
	if err := cl.Validate(); err != nil {
		return nil, fmt.Errorf("sim: cluster: %w: %w", ErrInvalidInput, err)
	}
	if p.Name == "" {
		return nil, fieldErr("policy.Name", p.Name, ErrInvalidInput)
	}
	if p.Push {
		cfg.mode = Push
	}
	s := &Sim{cfg: cfg, w: w, cl: cl, pol: p, schema: workload.Schema(), mask: p.requestDims()}
	s.nodeIdx = make(map[string]int32, len(cl.Nodes))
	for i := range cl.Nodes {
		s.nodeIdx[cl.Nodes[i].ID] = int32(i)
	}
	down := map[string]time.Duration{} // for overlapping failures: when the node is back
	for i, f := range cfg.failures {
		if _, ok := s.nodeIdx[f.Node]; !ok {
			return nil, fieldErr(fmt.Sprintf("failures[%d].Node", i), f.Node, ErrInvalidInput)
		}
		if back, ok := down[f.Node]; ok && (back == 0 || f.At < back) {
			return nil, fieldErr(fmt.Sprintf("failures[%d].At", i), f.At, ErrInvalidInput)
		}
		down[f.Node] = 0
		if f.Down > 0 {
			down[f.Node] = f.At + f.Down
		}
	}
	s.failures = cfg.failures
	repl := cfg.replication
	if repl > len(cl.Nodes) {
		if cfg.replGiven {
			return nil, fieldErr("replication", fmt.Sprintf("%d for %d nodes", repl, len(cl.Nodes)), ErrInvalidOption)
		}
		repl = len(cl.Nodes) // the default, capped as documented
	}
	var err error
	if s.blocks, err = workload.PlaceReplicas(cl, w.Blocks, repl); err != nil {
		return nil, fmt.Errorf("sim: replicas: %w: %w", ErrInvalidInput, err)
	}
	if s.sched, err = p.build(s.schema); err != nil {
		return nil, err
	}
	if _, ok := s.sched.(scaleUpper); p.ScaleUp && !ok {
		return nil, fieldErr("policy "+p.Name+".ScaleUp", "a scheduler without ScaleUp", ErrInvalidInput)
	}
	s.agent = p.Feedback || p.ScaleUp
	s.queues = w.Queues()
	s.qIdx = make(map[string]int, len(s.queues))
	for i, q := range s.queues {
		s.qIdx[q] = i
		if p.Queue == nil {
			err = s.sched.AddQueue("", q)
		} else {
			err = s.sched.AddQueue("", q, p.Queue(q, len(s.queues))...)
		}
		if err != nil {
			return nil, fmt.Errorf("sim: queue %q: %w: %w", q, ErrScheduler, err)
		}
	}
	s.nodes = make([]*node, len(cl.Nodes))
	for i := range cl.Nodes {
		spec := &cl.Nodes[i]
		n := &node{idx: int32(i), spec: spec, up: true, adv: spec.Capacity}
		if cfg.reserve && cfg.background != nil {
			// What an operator leaves to the other applications: their non-compressible
			// demand at the start, taken out of what the scheduler is told.
			bg, next := cfg.background.Load(i, spec.Capacity, 0)
			if err := s.checkBackground(spec.ID, 0, bg, next); err != nil {
				return nil, err
			}
			for k := 0; k < s.schema.Len(); k++ {
				if !s.schema.Compressible().Has(k) && bg[k] > 0 {
					n.adv[k] = max(0, n.adv[k]-bg[k])
				}
			}
		}
		s.nodes[i] = n
		if err := s.sched.AddNode(finegrain.Node{ID: spec.ID, Rack: spec.Rack, Capacity: n.adv, GPU: spec.GPU}); err != nil {
			return nil, fmt.Errorf("sim: node %q: %w: %w", spec.ID, ErrScheduler, err)
		}
	}
	n := w.NumTasks()
	s.tasks = make([]simTask, 0, n)
	s.byID = make(map[string]int32, n)
	s.jobs = make([]simJob, len(w.Jobs))
	for j := range w.Jobs {
		wj := &w.Jobs[j]
		s.mixedPriorities = s.mixedPriorities || wj.Priority != w.Jobs[0].Priority
		s.gangs = s.gangs || wj.MinMember > 1
		s.jobs[j] = simJob{wj: wj, queue: s.qIdx[wj.Queue], maps: wj.NumTasks(workload.Map), left: len(wj.Tasks), firstTask: int32(len(s.tasks))}
		for k := range wj.Tasks {
			s.byID[wj.Tasks[k].ID] = int32(len(s.tasks))
			s.hasLS = s.hasLS || wj.Tasks[k].LatencySensitive
			s.tasks = append(s.tasks, simTask{wt: &wj.Tasks[k], job: int32(j), node: -1, ranOn: -1, firstStart: -1})
		}
	}
	// The node agents sample every agentN heartbeats; a usage report holds reportN
	// samples.
	s.agentN = int((cfg.agentEvery + cfg.heartbeat - 1) / cfg.heartbeat)
	agent := time.Duration(s.agentN) * cfg.heartbeat
	s.reportN = int((cfg.reportEvery + agent - 1) / agent)
	s.m.init(s)
	return s, nil
}

// Run simulates the workload on the cluster under the policy, with the options, and
// returns what happened: Run(w, cl, p, opts...) is New(...) then Sim.Run.
func Run(w *workload.Workload, cl *workload.Cluster, p Policy, opts ...Option) (*Result, error) {
	s, err := New(w, cl, p, opts...)
	if err != nil {
		return nil, err
	}
	return s.Run()
}

// Run runs the simulation to the end: until every job has finished, or the time limit.
// A Sim runs once; a second call fails. On ErrTimeLimit the Result is returned too,
// with the unfinished jobs marked.
func (s *Sim) Run() (*Result, error) {
	if s.ran {
		return nil, fieldErr("Sim.Run", "second call", ErrInvalidInput)
	}
	s.ran = true
	for j := range s.jobs {
		s.q.push(s.jobs[j].wj.Submit, evArrival, int32(j), 0)
	}
	h := s.cfg.heartbeat
	for i, n := range s.nodes {
		// Nodes heartbeat in a fixed stagger across the period, as real ones drift apart.
		n.nextBeat = time.Duration(float64(h) * float64(i) / float64(len(s.nodes)))
		s.q.push(n.nextBeat, evBeat, int32(i), 0)
		if err := s.loadBackground(n, 0); err != nil {
			return nil, err
		}
	}
	for i, f := range s.failures {
		s.q.push(f.At, evFail, int32(i), 0)
	}
	if s.cfg.mode == Push {
		s.q.push(h, evRetry, 0, 0)
	}
	s.q.push(0, evSample, 0, 0)
	if s.pol.Feedback {
		s.q.push(s.cfg.redivideEvery, evRedivide, 0, 0)
	}
	if s.pol.ScaleUp {
		s.q.push(s.cfg.scaleUpEvery, evScaleUp, 0, 0)
	}
	var err error
	for s.q.len() > 0 && s.jobsDone < len(s.jobs) {
		ev := s.q.pop()
		if ev.at > s.cfg.timeLimit {
			s.now = s.cfg.timeLimit
			err = fmt.Errorf("sim: %d of %d jobs unfinished at %v: %w", len(s.jobs)-s.jobsDone, len(s.jobs), s.now, ErrTimeLimit)
			break
		}
		s.now = ev.at
		s.m.events++
		if err = s.handle(ev); err != nil {
			return nil, err
		}
		if s.running == 0 && s.pending > 0 && s.now-s.progressAt > StallLimit {
			err = fmt.Errorf("sim: %d of %d jobs unfinished at %v, no task placed for %v: %w", len(s.jobs)-s.jobsDone, len(s.jobs), s.now, StallLimit, ErrTimeLimit)
			break
		}
	}
	if err == nil && s.jobsDone < len(s.jobs) {
		err = fmt.Errorf("sim: %d of %d jobs unfinished, nothing left to happen: %w", len(s.jobs)-s.jobsDone, len(s.jobs), ErrTimeLimit)
	}
	r := s.m.result(s)
	if s.cfg.progress != nil {
		s.cfg.progress(s.progress())
	}
	return r, err
}

func (s *Sim) progress() Progress {
	return Progress{Now: s.now, Finished: s.finished, Total: len(s.tasks), Jobs: s.jobsDone, JobsTotal: len(s.jobs)}
}

func (s *Sim) handle(ev event) error {
	switch ev.kind {
	case evNode:
		n := s.nodes[ev.a]
		if n.up && uint32(n.ver) == ev.b {
			return s.settle(n)
		}
	case evBackground:
		n := s.nodes[ev.a]
		if uint32(n.bgVer) == ev.b {
			s.advance(n, s.now)
			if err := s.loadBackground(n, s.now); err != nil {
				return err
			}
			if n.up {
				return s.reschedule(n)
			}
		}
	case evFail:
		return s.fail(int(ev.a))
	case evRepair:
		return s.repair(int(ev.a))
	case evStart:
		t := &s.tasks[ev.a]
		if t.state == tPlaced && t.attempt == ev.b {
			n := s.nodes[t.node]
			s.advance(n, s.now)
			s.startExec(t, n)
			return s.reschedule(n)
		}
	case evArrival:
		return s.arrive(int(ev.a))
	case evBeat:
		return s.beat(s.nodes[ev.a])
	case evExtra:
		n := s.nodes[ev.a]
		n.extraDue = false
		if n.up && s.asksForWork() {
			return s.heartbeat(n)
		}
	case evRetry:
		if ev.b == 0 { // the periodic one
			s.q.push(s.now+s.cfg.heartbeat, evRetry, 0, 0)
		} else {
			s.retryDue = false
		}
		return s.retryPush()
	case evSample:
		s.sample()
		s.q.push(s.now+s.cfg.sampleEvery, evSample, 0, 0)
	case evRedivide:
		s.redivide()
		s.q.push(s.now+s.cfg.redivideEvery, evRedivide, 0, 0)
	case evScaleUp:
		s.q.push(s.now+s.cfg.scaleUpEvery, evScaleUp, 0, 0)
		return s.scaleUpRound()
	}
	return nil
}

// arrive submits job j and its map tasks (and its reduce tasks if it has no map).
func (s *Sim) arrive(j int) error {
	sj := &s.jobs[j]
	wj := sj.wj
	if err := s.sched.SubmitJob(finegrain.Job{ID: wj.ID, Queue: wj.Queue, Priority: wj.Priority, Submitted: wj.Submit, MinMember: wj.MinMember}); err != nil {
		return fmt.Errorf("sim: job %q: %w: %w", wj.ID, ErrScheduler, err)
	}
	s.m.active[sj.queue]++
	s.progressAt = s.now
	kind := workload.Map
	if sj.maps == 0 {
		kind = workload.Reduce
	}
	return s.submit(j, kind)
}

// submit makes job j's tasks of kind k pending.
func (s *Sim) submit(j int, k workload.Kind) error {
	sj := &s.jobs[j]
	batch := make([]finegrain.Task, 0, len(sj.wj.Tasks))
	var ids []int32
	for i := range sj.wj.Tasks {
		wt := &sj.wj.Tasks[i]
		if wt.Kind != k {
			continue
		}
		ti := sj.firstTask + int32(i)
		ft := finegrain.Task{ID: wt.ID, Job: sj.wj.ID, Request: wt.Request.Only(s.mask), Submitted: s.now, GPU: wt.GPU,
			Class: taskClass(wt), SLO: wt.SLO}
		ft.Key = predict.Key(sj.wj.Key(wt))
		if len(wt.Blocks) > 0 {
			for _, b := range wt.Blocks {
				for _, ni := range s.blocks[b] {
					ft.Inputs = appendUnique(ft.Inputs, s.cl.Nodes[ni].ID)
				}
			}
		}
		batch = append(batch, ft)
		ids = append(ids, ti)
	}
	if len(batch) == 0 {
		return nil
	}
	if err := s.sched.Submit(batch...); err != nil {
		return fmt.Errorf("sim: job %q: %w: %w", sj.wj.ID, ErrScheduler, err)
	}
	for _, ti := range ids {
		t := &s.tasks[ti]
		t.state, t.submitted = tPending, s.now
		s.pending++
		s.m.pendingAdd(s, t, 1)
	}
	if s.cfg.mode == Push {
		s.retry = append(s.retry, ids...)
		if s.holdRetry {
			s.retryHeld = true
			return nil
		}
		return s.retryPush()
	}
	return nil
}

// taskClass is workload task t's class: the workload says latency-sensitive or not,
// and package workload stays free of the scheduler's types.
func taskClass(t *workload.Task) finegrain.TaskClass {
	if t.LatencySensitive {
		return finegrain.LatencySensitive
	}
	return finegrain.Batch
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// beat is node n's periodic tick: a usage sample (and report), then a heartbeat.
func (s *Sim) beat(n *node) error {
	n.nextBeat = s.now + s.cfg.heartbeat
	s.q.push(n.nextBeat, evBeat, n.idx, 0)
	if !n.up {
		return nil
	}
	s.advance(n, s.now)
	n.beats++
	if s.agent && n.beats%s.agentN == 0 {
		s.sampleTasks(n)
		if s.pol.Feedback {
			if err := s.usageSample(n); err != nil {
				return err
			}
		}
	}
	if !s.cfg.variation.constant() && len(n.running) > 0 {
		for _, x := range n.running {
			s.redraw(x)
		}
		if err := s.reschedule(n); err != nil {
			return err
		}
	}
	if s.pol.Progress || s.pol.ScaleUp {
		if err := s.reportProgress(n); err != nil {
			return err
		}
	}
	if s.asksForWork() {
		return s.heartbeat(n)
	}
	return nil
}

// asksForWork reports whether a node heartbeats the scheduler for work: in pull mode,
// while tasks are pending, or always when the policy reports progress (a node may then
// take a backup).
func (s *Sim) asksForWork() bool {
	return s.cfg.mode == Pull && (s.pending > 0 || s.pol.Progress)
}

// heartbeat asks the scheduler what to start on n and starts it.
func (s *Sim) heartbeat(n *node) error {
	var start time.Time
	if s.cfg.timing {
		start = time.Now()
	}
	d, err := s.sched.Heartbeat(n.spec.ID, s.now)
	if s.cfg.timing {
		s.m.timing.add(time.Since(start))
	}
	s.m.heartbeats++
	if err != nil {
		return fmt.Errorf("sim: heartbeat of %q at %v: %w: %w", n.spec.ID, s.now, ErrScheduler, err)
	}
	return s.apply(d.Assignments, d.Evicted)
}

// apply carries out one scheduler decision — a heartbeat's, or a push placement's with
// the assignments Permitted returned after it: the placements, and the evictions the
// scheduler made (those the assignments carry and the others), each exactly once. A
// victim that was running before the decision stops first, so that its room is free
// before anything starts; a victim placed by the decision itself (evicted later in the
// same heartbeat) starts and stops at once, losing nothing. Then gangs are checked:
// one that had not gathered and now runs fewer than its MinMember tasks counts as a
// partial run (Summary.PartialGangs).
func (s *Sim) apply(as []finegrain.Assignment, evicted []finegrain.Eviction) error {
	n := len(evicted)
	for i := range as {
		n += len(as[i].Evicted)
	}
	if n == 0 {
		s.countGangs(as)
		for i := range as {
			if err := s.assign(&as[i]); err != nil {
				return err
			}
		}
		s.checkGangs()
		return nil
	}
	all := make([]*finegrain.Eviction, 0, n)
	for i := range as {
		for k := range as[i].Evicted {
			all = append(all, &as[i].Evicted[k])
		}
	}
	for k := range evicted {
		all = append(all, &evicted[k])
	}
	seen := make(map[string]bool, n)
	later := make(map[string]*finegrain.Eviction, n) // evictions not carried out yet
	for _, e := range all {
		if seen[e.Task] {
			return fmt.Errorf("sim: task %q evicted twice in one decision at %v: %w", e.Task, s.now, ErrScheduler)
		}
		seen[e.Task] = true
		ti, ok := s.byID[e.Task]
		if !ok {
			return fmt.Errorf("sim: eviction of unknown task %q at %v: %w", e.Task, s.now, ErrScheduler)
		}
		if st := s.tasks[ti].state; st != tRunning && st != tPlaced {
			later[e.Task] = e
			continue
		}
		if err := s.evict(e); err != nil {
			return err
		}
	}
	s.countGangs(as)
	for i := range as {
		if err := s.assign(&as[i]); err != nil {
			return err
		}
		if e, ok := later[as[i].Task]; ok && as[i].BackupOf == "" {
			delete(later, e.Task)
			if err := s.evict(e); err != nil {
				return err
			}
		}
	}
	for _, e := range all { // in the scheduler's order, for a deterministic message
		if _, ok := later[e.Task]; ok {
			return fmt.Errorf("sim: eviction of task %q at %v, which is not placed: %w", e.Task, s.now, ErrScheduler)
		}
	}
	s.checkGangs()
	return nil
}

// evict stops task t's run (or its future start) for eviction e, which the scheduler
// has made: the task is pending again there. Nothing is reported back (it is not a
// failure). The run time it had done is lost (TaskResult.Lost, Summary.PreemptedWork);
// a backup of it stops too, as the scheduler dropped it.
func (s *Sim) evict(e *finegrain.Eviction) error {
	ti := s.byID[e.Task]
	t := &s.tasks[ti]
	if t.node < 0 || s.nodes[t.node].spec.ID != e.Node {
		where := "no node"
		if t.node >= 0 {
			where = fmt.Sprintf("node %q", s.nodes[t.node].spec.ID)
		}
		return fmt.Errorf("sim: eviction of task %q from node %q at %v, but it is placed on %s: %w", e.Task, e.Node, s.now, where, ErrScheduler)
	}
	if e.Reason != finegrain.Preempted && e.Reason != finegrain.Reclaimed {
		return fmt.Errorf("sim: eviction of task %q at %v for reason %v: %w", e.Task, s.now, e.Reason, ErrScheduler)
	}
	var lost time.Duration
	if t.state == tRunning {
		lost = s.now - t.start
		s.running--
		if err := s.stopRun(t.exec, t.node); err != nil {
			return err
		}
	}
	if t.backup != nil {
		if err := s.stopBackup(t); err != nil {
			return err
		}
	}
	s.m.unplaced(s, t)
	t.state, t.node, t.exec = tPending, -1, nil
	t.evictions++
	t.lost += lost
	s.pending++
	s.m.pendingAdd(s, t, 1)
	s.m.evicted(s, e, lost)
	s.unplaceGang(t, true)
	if s.cfg.mode == Push {
		s.retry = append(s.retry, ti)
	}
	return nil
}

// countGangs counts the placements of gang members among as before any of them
// starts: the scheduler placed them together, so a run the execution model kills
// while the others start does not leave the gang with none placed.
func (s *Sim) countGangs(as []finegrain.Assignment) {
	if !s.gangs {
		return
	}
	for i := range as {
		ti, ok := s.byID[as[i].Task]
		if !ok || as[i].BackupOf != "" {
			continue // assign refuses an unknown task; a backup is no member
		}
		j := s.tasks[ti].job
		sj := &s.jobs[j]
		if sj.wj.MinMember <= 1 {
			continue
		}
		if !sj.touched {
			sj.touched, sj.wasGathered, sj.added = true, sj.gathered, 0
			s.touched = append(s.touched, j)
		}
		sj.placed++
		sj.added++
	}
}

// unplaceGang counts the end of task t's placement for its job's gang: a gang that
// loses its last placed task (lost: a kill, a failure, an eviction; not a finish)
// must gather again.
func (s *Sim) unplaceGang(t *simTask, lost bool) {
	sj := &s.jobs[t.job]
	if sj.wj.MinMember <= 1 {
		return
	}
	sj.placed--
	if sj.placed == 0 && lost {
		sj.gathered = false
	}
}

// checkGangs looks at the gangs placed in the decision just applied: one that had not
// gathered has if the decision placed enough of its tasks to bring them, with those
// finished, to MinMember (and it still has one placed), and ran partially if it
// placed fewer.
func (s *Sim) checkGangs() {
	for _, j := range s.touched {
		sj := &s.jobs[j]
		sj.touched = false
		finished := len(sj.wj.Tasks) - sj.left // they count toward MinMember, as in Volcano
		switch {
		case sj.wasGathered:
		case sj.added+finished >= sj.wj.MinMember:
			sj.gathered = sj.placed > 0
			s.m.gangGathers++
		default:
			s.m.partialGangs++
		}
	}
	s.touched = s.touched[:0]
}

// assign carries out a placement the scheduler made.
func (s *Sim) assign(a *finegrain.Assignment) error {
	if a.BackupOf != "" {
		return s.startBackup(a)
	}
	ti, ok := s.byID[a.Task]
	if !ok || (s.tasks[ti].state != tPending && s.tasks[ti].state != tReserved) {
		return fmt.Errorf("sim: assignment of task %q, which is not pending: %w", a.Task, ErrScheduler)
	}
	ni, ok := s.nodeIdx[a.Node]
	if !ok || !s.nodes[ni].up {
		return fmt.Errorf("sim: assignment of task %q to node %q, which is not up: %w", a.Task, a.Node, ErrScheduler)
	}
	t := &s.tasks[ti]
	sj := &s.jobs[t.job]
	start := a.Start
	if start < s.now {
		// A gang member the scheduler kept waiting comes back with the start of its
		// reservation; it starts now, when it is allowed.
		if sj.wj.MinMember <= 1 {
			return fmt.Errorf("sim: assignment of task %q starts at %v, before now %v: %w", a.Task, a.Start, s.now, ErrScheduler)
		}
		start = s.now
	}
	n := s.nodes[ni]
	t.attempt++
	t.node = ni
	s.progressAt = s.now
	t.peak = a.Profile.Peak()
	t.hold, t.predicted = a.Profile, a.Predicted
	s.pending--
	s.m.pendingAdd(s, t, -1)
	s.m.placed(s, t, a)
	if !sj.started {
		sj.started, sj.first = true, start
	}
	if start > s.now {
		t.state = tPlaced
		s.q.push(start, evStart, ti, t.attempt)
		return nil
	}
	s.advance(n, s.now)
	s.startExec(t, n)
	return s.reschedule(n)
}

// retryPush tries to place pending tasks in order of their job's priority (higher
// first), then submission order (push mode), as Kubernetes' scheduling queue sorts
// pods, stopping after pushRetries failures in a row. Tasks that become pending during the round (a
// placement that is killed at once) wait for the next round.
func (s *Sim) retryPush() error {
	if s.inRetry {
		s.wantRetry()
		return nil
	}
	s.inRetry = true
	defer func() { s.inRetry = false }()
	batch := s.retry
	s.retry = nil
	if s.mixedPriorities {
		slices.SortStableFunc(batch, func(a, b int32) int {
			return cmp.Compare(s.jobs[s.tasks[b].job].wj.Priority, s.jobs[s.tasks[a].job].wj.Priority)
		})
	}
	if slices.ContainsFunc(batch, func(ti int32) bool { return s.tasks[ti].state == tReserved }) {
		// Waits end with time, not only with placements: let the scheduler see it.
		if err := s.sched.(permitter).ExpirePermits(s.now); err != nil {
			return fmt.Errorf("sim: expire permit waits at %v: %w: %w", s.now, ErrScheduler, err)
		}
	}
	keep := make([]int32, 0, len(batch))
	fails, i := 0, 0
	for ; i < len(batch) && fails < s.cfg.pushRetries; i++ {
		ti := batch[i]
		t := &s.tasks[ti]
		if t.state == tReserved {
			waiting, err := s.stillWaiting(t)
			if err != nil {
				return err
			}
			if waiting {
				keep = append(keep, ti)
				continue
			}
		}
		if t.state != tPending {
			continue
		}
		var start time.Time
		if s.cfg.timing {
			start = time.Now()
		}
		a, err := s.sched.Place(t.wt.ID, s.now)
		if s.cfg.timing {
			s.m.timing.add(time.Since(start))
		}
		s.m.placeCalls++
		var permitted []finegrain.Assignment
		if p, ok := s.sched.(permitter); ok {
			permitted = p.Permitted()
		}
		if err == nil {
			fails = 0
			if err := s.apply(append([]finegrain.Assignment{a}, permitted...), nil); err != nil {
				return err
			}
			continue
		}
		if !errors.Is(err, finegrain.ErrNotPlaced) {
			return fmt.Errorf("sim: place %q at %v: %w: %w", t.wt.ID, s.now, ErrScheduler, err)
		}
		var evicted []finegrain.Eviction
		var perr *finegrain.PlacementError
		if errors.As(err, &perr) {
			evicted = perr.Evicted
		}
		keep = append(keep, ti)
		if perr != nil && perr.Reason == finegrain.PermitWaiting {
			// Reserved, waiting for the rest of its gang: not a failure. Permitted will
			// return it when the gang is complete.
			if _, ok := s.sched.(permitter); !ok {
				return fmt.Errorf("sim: place %q at %v: kept waiting by a scheduler that has no Permitted and State: %w", t.wt.ID, s.now, ErrScheduler)
			}
			fails = 0
			t.state = tReserved
		} else {
			fails++
		}
		if err := s.apply(permitted, evicted); err != nil {
			return err
		}
	}
	keep = append(keep, batch[i:]...)
	s.retry = append(keep, s.retry...)
	return nil
}

// stillWaiting reports whether task t, kept waiting for a permit (push mode), still
// is; when the scheduler has rolled it back to pending (its wait timed out, or its
// node left), t is pending again here too.
func (s *Sim) stillWaiting(t *simTask) (bool, error) {
	st, ok := s.sched.(permitter).TaskState(t.wt.ID) // tReserved only with a permitter
	switch {
	case ok && st == finegrain.Reserved:
		return true, nil
	case ok && st == finegrain.Pending:
		t.state = tPending
		return false, nil
	}
	return false, fmt.Errorf("sim: task %q, kept waiting for a permit, is %v (known %v) at %v: %w", t.wt.ID, st, ok, s.now, ErrScheduler)
}

// wantRetry asks for a push retry round now (once).
func (s *Sim) wantRetry() {
	if s.cfg.mode == Push && !s.retryDue {
		s.retryDue = true
		s.q.push(s.now, evRetry, 0, 1)
	}
}

// wantHeartbeat asks for an out-of-band heartbeat of n now (pull mode).
func (s *Sim) wantHeartbeat(n *node) {
	if s.cfg.mode == Pull && !n.extraDue {
		n.extraDue = true
		s.q.push(s.now, evExtra, n.idx, 0)
	}
}

// finish reports the end of task t's run x on node n to the scheduler (under the
// backup's ID when x is t's backup), ends the other attempt if any, and moves the job
// along.
func (s *Sim) finish(t *simTask, x *exec, n *node, obs *predict.Observation) error {
	id := t.wt.ID
	if x.backup {
		id = finegrain.BackupID(id)
	}
	err := s.sched.Finished(id, s.now, obs)
	if err != nil {
		if errors.Is(err, finegrain.ErrState) || errors.Is(err, finegrain.ErrUnknownTask) {
			return fmt.Errorf("sim: finish of %q at %v: %w: %w", t.wt.ID, s.now, ErrScheduler, err)
		}
		s.m.obsRejected++ // the task finished; only its observation was refused
	}
	if x.backup {
		s.m.backupsWon++
		t.backup = nil
		s.endBackup(t) // the backup's share of the fairness metric
		if err := s.stopRun(t.exec, t.node); err != nil {
			return err
		}
	} else if t.backup != nil { // the scheduler ended the backup with the task
		if err := s.stopBackup(t); err != nil {
			return err
		}
	}
	t.state, t.finish, t.ranOn, t.node, t.exec = tDone, s.now, n.idx, -1, nil
	s.unplaceGang(t, false)
	s.running--
	s.finished++
	s.progressAt = s.now
	s.m.taskDone(s, t)
	sj := &s.jobs[t.job]
	sj.left--
	if t.wt.Kind == workload.Map {
		sj.maps--
		if sj.maps == 0 && sj.left > 0 {
			if err := s.submit(int(t.job), workload.Reduce); err != nil {
				return err
			}
		}
	}
	if sj.left == 0 {
		sj.done = s.now
		s.jobsDone++
		s.m.active[sj.queue]--
	}
	s.wantHeartbeat(n)
	s.wantRetry()
	return nil
}

// kill ends task t's run as a failure (a non-compressible overrun of its node, or of
// the limit a scale-up round's shrink set when shrink is true): the scheduler gets it
// back as pending.
func (s *Sim) kill(x *exec, shrink bool) error {
	t := x.task
	if x.backup {
		// Only the backup is lost; the task runs on.
		if err := s.sched.Failed(finegrain.BackupID(t.wt.ID), s.now); err != nil {
			return fmt.Errorf("sim: kill of the backup of %q at %v: %w: %w", t.wt.ID, s.now, ErrScheduler, err)
		}
		t.backup = nil
		s.endBackup(t)
		s.m.killed(shrink)
		return nil
	}
	if err := s.sched.Failed(t.wt.ID, s.now); err != nil {
		return fmt.Errorf("sim: kill of %q at %v: %w: %w", t.wt.ID, s.now, ErrScheduler, err)
	}
	if t.backup != nil { // the scheduler dropped the backup with its task
		if err := s.stopBackup(t); err != nil {
			return err
		}
	}
	s.m.unplaced(s, t)
	t.state, t.node, t.exec = tPending, -1, nil
	s.unplaceGang(t, true)
	t.kills++
	s.running--
	s.pending++
	s.m.pendingAdd(s, t, 1)
	s.m.killed(shrink)
	if s.cfg.mode == Push {
		s.retry = append(s.retry, s.byID[t.wt.ID])
	}
	// No out-of-band heartbeat or retry round: the overrun may persist (background
	// memory the scheduler cannot see), and an immediate re-placement on the same node
	// would be killed again at the same instant. The next periodic one offers it.
	return nil
}

// fail takes failure i's node out of the cluster.
func (s *Sim) fail(i int) error {
	f := s.failures[i]
	n := s.nodes[s.nodeIdx[f.Node]]
	if !n.up {
		return nil
	}
	s.advance(n, s.now)
	ids, err := s.sched.RemoveNode(f.Node, s.now)
	if err != nil {
		return fmt.Errorf("sim: failure of %q at %v: %w: %w", f.Node, s.now, ErrScheduler, err)
	}
	for _, x := range n.running {
		if x.backup { // the scheduler dropped it
			x.task.backup = nil
			s.endBackup(x.task)
			s.m.nodeKills++
		}
		stopExec(x)
	}
	n.running = n.running[:0]
	for _, id := range ids {
		ti, ok := s.byID[id]
		if !ok {
			return fmt.Errorf("sim: failure of %q requeued unknown task %q: %w", f.Node, id, ErrScheduler)
		}
		t := &s.tasks[ti]
		if t.backup != nil { // the scheduler dropped it with its task
			if err := s.stopBackup(t); err != nil {
				return err
			}
		}
		switch t.state {
		case tRunning:
			s.running--
		case tPlaced:
		default:
			return fmt.Errorf("sim: failure of %q requeued task %q, which was not placed: %w", f.Node, id, ErrScheduler)
		}
		s.m.unplaced(s, t)
		t.state, t.node, t.exec = tPending, -1, nil
		s.unplaceGang(t, true)
		s.pending++
		s.m.pendingAdd(s, t, 1)
		s.m.nodeKills++
		if s.cfg.mode == Push {
			s.retry = append(s.retry, ti)
		}
	}
	n.up = false
	n.ver++
	if err := s.recompute(n); err != nil { // nothing runs: usage drops to the background
		return err
	}
	if f.Down > 0 {
		s.q.push(f.At+f.Down, evRepair, int32(i), 0)
	}
	s.wantRetry()
	return nil
}

// repair brings failure i's node back, empty.
func (s *Sim) repair(i int) error {
	f := s.failures[i]
	n := s.nodes[s.nodeIdx[f.Node]]
	if err := s.sched.AddNode(finegrain.Node{ID: n.spec.ID, Rack: n.spec.Rack, Capacity: n.adv, GPU: n.spec.GPU}); err != nil {
		return fmt.Errorf("sim: repair of %q at %v: %w: %w", f.Node, s.now, ErrScheduler, err)
	}
	s.advance(n, s.now)
	n.up = true
	s.progressAt = s.now
	n.window = n.window[:0]
	n.usedInt, n.sampleFrom = resource.Vector{}, s.now
	n.bgInt, n.reportFrom = resource.Vector{}, s.now
	s.wantRetry()
	return nil
}

// usageSample records node n's usage since its last sample as one interval of eq. 16's
// window, and sends the window when it is full.
func (s *Sim) usageSample(n *node) error {
	dt := s.now - n.sampleFrom
	if dt <= 0 {
		return nil
	}
	free, err := s.sched.NodeFree(n.spec.ID, s.now)
	if err != nil {
		return fmt.Errorf("sim: free of %q at %v: %w: %w", n.spec.ID, s.now, ErrScheduler, err)
	}
	capa := n.spec.Capacity
	var iv predict.Interval
	// Reserved is what the scheduler holds on the node: what it was told, less free.
	reserved := n.adv.Sub(free)
	iv.Duration = dt
	sec := dt.Seconds()
	comp := s.schema.Compressible()
	for k := 0; k < s.schema.Len(); k++ {
		// As the task samples: an average from counters on the compressible
		// dimensions, what is held now on the others.
		act := int64(n.usedInt[k]/sec + 0.5)
		if !comp.Has(k) {
			act = n.used[k] + n.bgUsed[k]
		}
		iv.Actual[k] = act
		iv.Predicted[k] = max(0, reserved[k])
		iv.Idle[k] = max(0, capa[k]-act)
	}
	n.window = append(n.window, iv)
	n.usedInt, n.sampleFrom = resource.Vector{}, s.now
	if len(n.window) < s.reportN {
		return nil
	}
	// The node agent also reports what the other applications (the background) used
	// over the window, as it measured them — their CPU averaged, their memory as held
	// at the last sample — for a scheduler that can hold it
	// (finegrain.Scheduler.SetExternalLoad); under WithReservedBackground the capacity
	// it was told already leaves it out.
	if ext, ok := s.sched.(externalLoader); ok && s.cfg.background != nil && !s.cfg.reserve {
		load := n.bgUsed
		if span := (s.now - n.reportFrom).Seconds(); span > 0 {
			for k := 0; k < s.schema.Len(); k++ {
				if comp.Has(k) {
					load[k] = int64(n.bgInt[k]/span + 0.5)
				}
			}
		}
		if _, err := ext.SetExternalLoad(n.spec.ID, s.now, load); err != nil {
			return fmt.Errorf("sim: external load of %q at %v: %w: %w", n.spec.ID, s.now, ErrScheduler, err)
		}
	}
	n.bgInt, n.reportFrom = resource.Vector{}, s.now
	c, err := s.sched.ReportUsage(n.spec.ID, s.now, n.window)
	n.window = n.window[:0]
	if err != nil {
		return fmt.Errorf("sim: usage report of %q at %v: %w: %w", n.spec.ID, s.now, ErrScheduler, err)
	}
	s.m.reports++
	if c.From != c.To {
		s.m.modeChanges++
	}
	if c.Recycle {
		s.m.recycles++
	}
	return nil
}
