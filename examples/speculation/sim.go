package main

// The example's discrete-event simulation. It is deliberately small and self-contained
// (the project's full simulator lives in package sim); everything it assumes is listed
// in the header comment of main.go.

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/speculate"
)

// Model parameters (see main.go's header comment).
const (
	heartbeat     = 3 * time.Second // a node reports progress and asks for work this often
	stragglerProb = 0.10            // chance that an attempt (original or backup) straggles
	slowMin       = 1.5             // a straggler runs this much slower …
	slowMax       = 4.0             // … up to this much, drawn uniformly
)

// model says when a straggler starts to straggle: from a progress drawn uniformly in
// [0, onsetMax]; 0 makes it slow from its start.
type model struct {
	onsetMax float64
}

// jobSpec describes one job of a scenario: a WordCount-like job reads one input block
// per map task; a Pi-like job reads nothing.
type jobSpec struct {
	name     string
	maps     int
	taskTime time.Duration // one map on a normal node, without data transfer
	input    bool
}

// scenario is a set of jobs submitted together at time 0.
type scenario struct {
	name string
	jobs []jobSpec
}

// result is one run's outcome.
type result struct {
	launched, won int
	jobDone       []time.Duration // each job's completion time (submitted at 0)
	makespan      time.Duration
	backupTime    time.Duration // slot time backups held, winners and losers
}

// attempt is one run of a task on a node: the original or a backup.
type attempt struct {
	task   *task
	backup bool
	node   *node
	start  time.Duration
	d0     time.Duration // run time without a slowdown: transfer + compute at node speed
	onset  float64       // progress at which the slowdown starts (1: never)
	slow   float64       // slowdown factor after the onset
	end    time.Duration // when it finishes, unless killed
	killed bool
}

// progress is the attempt's progress at t, in [0, 1]: linear at 1/d0 until the onset,
// then slow times slower.
func (a *attempt) progress(t time.Duration) float64 {
	e := float64(t - a.start)
	d0 := float64(a.d0)
	var p float64
	if e < a.onset*d0 {
		p = e / d0
	} else {
		p = a.onset + (e-a.onset*d0)/(d0*a.slow)
	}
	return min(max(p, 0), 1)
}

type task struct {
	id     string
	num    int // index over the whole scenario, for the seeded draws
	job    *job
	block  int           // input block, -1 for none
	base   time.Duration // compute time on a normal node
	orig   *attempt
	backup *attempt
	done   bool
}

type job struct {
	id      string
	tasks   map[string]*task
	order   []*task // in task order
	tracker *predict.ProgressTracker
	backups map[string]bool     // tasks with a backup running
	onNode  map[string][]string // task → node of its original (no second attempt there)
	left    int                 // tasks not done
	end     time.Duration
}

type node struct {
	idx     int
	id      string
	speed   float64
	slots   int
	running []*attempt
}

// event is a heartbeat of a node or the end of an attempt.
type event struct {
	at   time.Duration
	seq  int
	node *node
	att  *attempt
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// world is one simulation run.
type world struct {
	cl       *workload.Cluster
	model    model
	replicas [][]int
	blockLen []int64
	nodes    []*node
	jobs     []*job
	pending  *fairness.Pending
	spec     speculate.Speculator // nil: no speculation
	passBusy bool                 // tell the speculator of other jobs' busy slots (PRRL)
	seed     uint64
	q        eventQueue
	seq      int
	jobsLeft int
	res      result
	scratch  []predict.TaskProgress

	// Busy-slot lists for PRRL (see busySlots).
	busyAt    time.Duration
	busyAll   []speculate.BusySlot
	busyOwner []int
	busyJob   [][]speculate.BusySlot
	busyBufs  [][]speculate.BusySlot
}

func (w *world) push(e event) {
	e.seq = w.seq
	w.seq++
	heap.Push(&w.q, e)
}

// simulate runs a scenario on the cluster under a speculator (nil for none) with the
// given seed and returns the outcome. The seed fixes the workload's jitter, the replica
// placement, the heartbeat phases and every attempt's straggler draw, so that the
// policies compared face exactly the same cluster and tasks.
func simulate(cl *workload.Cluster, sc scenario, m model, spec speculate.Speculator, passBusy bool, seed uint64) (result, error) {
	r := rand.New(rand.NewPCG(seed, 1))
	w := &world{cl: cl, model: m, spec: spec, passBusy: passBusy, seed: seed, pending: fairness.NewPending()}
	for i, ns := range cl.Nodes {
		w.nodes = append(w.nodes, &node{idx: i, id: ns.ID, speed: ns.Speed, slots: ns.Slots})
	}
	// The jobs: workload.Thesis builds map-only jobs of a class (one task per 128 MiB
	// block, lasting the class's task time on a normal node, with 5% jitter).
	num := 0
	for k, js := range sc.jobs {
		wl, err := workload.Thesis(r, []workload.ThesisMix{{Class: workload.ThesisClass{Name: js.name, Blocks: js.maps, TaskTime: js.taskTime}, JobsPerQueue: 1}},
			workload.WithQueues("default"), workload.WithJitter(0.05))
		if err != nil {
			return result{}, err
		}
		if len(wl.Jobs) != 1 {
			return result{}, fmt.Errorf("workload.Thesis gave %d jobs, want 1", len(wl.Jobs))
		}
		wj := wl.Jobs[0]
		tr, err := predict.NewProgressTracker()
		if err != nil {
			return result{}, err
		}
		j := &job{id: fmt.Sprintf("%s-%d", js.name, k+1), tasks: map[string]*task{}, tracker: tr,
			backups: map[string]bool{}, onNode: map[string][]string{}, left: len(wj.Tasks)}
		w.jobs = append(w.jobs, j)
		for ti, wt := range wj.Tasks {
			t := &task{id: fmt.Sprintf("%s/m%03d", j.id, ti), num: num, job: j, block: -1, base: wt.True.Duration()}
			num++
			if js.input && len(wt.Blocks) > 0 {
				t.block = len(w.blockLen)
				w.blockLen = append(w.blockLen, wl.Blocks[wt.Blocks[0]])
			}
			j.tasks[t.id] = t
			j.order = append(j.order, t)
		}
	}
	// Replicas of every input block, placed for load balance as the thesis does.
	if len(w.blockLen) > 0 {
		rep, err := workload.PlaceReplicas(cl, w.blockLen, workload.DefaultReplication)
		if err != nil {
			return result{}, err
		}
		w.replicas = rep
	}
	// The pending index learns every task and where its data is.
	for _, j := range w.jobs {
		for i, t := range j.order {
			var locs []fairness.Location
			if t.block >= 0 {
				for _, n := range w.replicas[t.block] {
					locs = append(locs, fairness.Location{Node: cl.Nodes[n].ID, Rack: cl.Nodes[n].Rack})
				}
			}
			if err := w.pending.Add(fairness.PendingTask{ID: t.id, Job: j.id, Submitted: time.Duration(i), Locations: locs}); err != nil {
				return result{}, err
			}
		}
	}
	w.jobsLeft = len(w.jobs)
	// Heartbeats start at a random phase per node.
	for _, n := range w.nodes {
		w.push(event{at: time.Duration(r.Int64N(int64(heartbeat))), node: n})
	}
	for w.q.Len() > 0 && w.jobsLeft > 0 {
		e := heap.Pop(&w.q).(event)
		var err error
		if e.att != nil {
			err = w.finish(e.att, e.at)
		} else {
			err = w.beat(e.node, e.at)
			if w.jobsLeft > 0 {
				w.push(event{at: e.at + heartbeat, node: e.node})
			}
		}
		if err != nil {
			return result{}, err
		}
	}
	if w.jobsLeft > 0 {
		return result{}, fmt.Errorf("simulation stopped with %d jobs unfinished", w.jobsLeft)
	}
	for _, j := range w.jobs {
		w.res.jobDone = append(w.res.jobDone, j.end)
		w.res.makespan = max(w.res.makespan, j.end)
	}
	return w.res, nil
}

// beat is a heartbeat of node n at t: it reports the progress of the originals running
// there, then offers each free slot to the jobs in FIFO order.
func (w *world) beat(n *node, t time.Duration) error {
	for _, a := range n.running {
		if !a.backup {
			if err := a.task.job.tracker.Update(a.task.id, a.progress(t), t); err != nil {
				return err
			}
		}
	}
	w.busyAt = -1 // the busy-slot lists are built afresh, on demand, at each heartbeat
	for len(n.running) < n.slots {
		started, err := w.offer(n, t)
		if err != nil {
			return err
		}
		if !started {
			break // every job declined; the state is unchanged, so the other free slots would be declined too
		}
	}
	return nil
}

// offer offers one free slot on n to the jobs, first job first, and reports whether
// one took it.
func (w *world) offer(n *node, t time.Duration) (bool, error) {
	rack := w.cl.Nodes[n.idx].Rack
	for k, j := range w.jobs {
		if j.left == 0 {
			continue
		}
		unstarted := w.pending.JobLen(j.id)
		if w.spec == nil {
			if unstarted == 0 {
				continue
			}
			return true, w.startNew(j, n, rack, t)
		}
		var busy []speculate.BusySlot
		if w.passBusy && unstarted == 0 && len(w.jobs) > 1 {
			busy = w.busySlots(k, t)
		}
		d, err := w.spec.Speculate(speculate.Job{Tasks: j.tracker, Unstarted: unstarted, Backups: j.backups, FailedOn: j.onNode},
			speculate.Request{Node: n.id, Now: t, Busy: busy})
		if err != nil {
			return false, err
		}
		switch d.Action {
		case speculate.RunUnstarted:
			return true, w.startNew(j, n, rack, t)
		case speculate.Backup:
			tk := j.tasks[d.Task]
			if tk == nil || tk.done || tk.backup != nil {
				return false, fmt.Errorf("speculator backed up %q, which cannot have a backup", d.Task)
			}
			tk.backup = w.launch(tk, n, true, t)
			j.backups[tk.id] = true
			w.res.launched++
			return true, nil
		}
	}
	return false, nil
}

// startNew starts the job's pending task with the best locality on n.
func (w *world) startNew(j *job, n *node, rack string, t time.Duration) error {
	id, _, ok := w.pending.First(j.id, n.id, rack, fairness.OffSwitch)
	if !ok {
		return fmt.Errorf("job %s has no pending task", j.id)
	}
	if err := w.pending.Remove(id); err != nil {
		return err
	}
	tk := j.tasks[id]
	tk.orig = w.launch(tk, n, false, t)
	j.onNode[id] = []string{n.id}
	return j.tracker.Start(id, n.id, t)
}

// launch starts an attempt of tk on n at t and schedules its end.
func (w *world) launch(tk *task, n *node, backup bool, t time.Duration) *attempt {
	transfer := time.Duration(0)
	if tk.block >= 0 {
		l, _ := w.cl.Locality(n.idx, w.replicas[tk.block])
		transfer = w.cl.TransferTime(w.blockLen[tk.block], l)
	}
	a := &attempt{task: tk, backup: backup, node: n, start: t, onset: 1, slow: 1,
		d0: transfer + time.Duration(float64(tk.base)/n.speed)}
	// The straggler draw depends only on the seed, the task and which attempt this is.
	kind := uint64(0)
	if backup {
		kind = 1
	}
	r := rand.New(rand.NewPCG(w.seed, (1<<32)+uint64(tk.num)*2+kind))
	if r.Float64() < stragglerProb {
		a.onset = w.model.onsetMax * r.Float64()
		a.slow = slowMin + (slowMax-slowMin)*r.Float64()
	}
	a.end = t + time.Duration(a.onset*float64(a.d0)+(1-a.onset)*float64(a.d0)*a.slow)
	n.running = append(n.running, a)
	w.push(event{at: a.end, att: a})
	return a
}

// finish ends attempt a at t: the task is done, the other attempt is killed.
func (w *world) finish(a *attempt, t time.Duration) error {
	if a.killed {
		return nil
	}
	tk, j := a.task, a.task.job
	remove(a)
	tk.done = true
	delete(j.backups, tk.id)
	other := tk.backup
	if a.backup {
		other = tk.orig
		w.res.won++
		// The original lost: forget it, and record the backup's run as a finished task
		// on its node, so that the node's rate counts it.
		if err := j.tracker.Abandon(tk.id); err != nil {
			return err
		}
		if err := j.tracker.Start(tk.id+"/backup", a.node.id, a.start); err != nil {
			return err
		}
		if err := j.tracker.Finish(tk.id+"/backup", t); err != nil {
			return err
		}
	} else if err := j.tracker.Finish(tk.id, t); err != nil {
		return err
	}
	if a.backup {
		w.res.backupTime += t - a.start
	}
	if other != nil && !other.killed {
		other.killed = true
		remove(other)
		if other.backup {
			w.res.backupTime += t - other.start
		}
	}
	j.left--
	if j.left == 0 {
		j.end = t
		w.jobsLeft--
	}
	return nil
}

// busySlots lists the slots that other jobs' originals hold than job k, and when they
// free (their time left as their job's tracker estimates it): the extra pre-release
// resources PRRL may count (speculate.Request.Busy). The lists are built once per
// heartbeat, when first needed, in reused buffers.
func (w *world) busySlots(k int, t time.Duration) []speculate.BusySlot {
	if w.busyAt != t {
		w.busyAt = t
		w.busyAll, w.busyOwner = w.busyAll[:0], w.busyOwner[:0]
		for i, j := range w.jobs {
			w.scratch = j.tracker.Running(t, w.scratch[:0])
			for _, tp := range w.scratch {
				w.busyAll = append(w.busyAll, speculate.BusySlot{Task: tp.Task, Node: tp.Node, TimeLeft: tp.TimeLeft})
				w.busyOwner = append(w.busyOwner, i)
			}
		}
		if len(w.busyJob) != len(w.jobs) {
			w.busyJob = make([][]speculate.BusySlot, len(w.jobs))
		}
		for i := range w.busyJob {
			w.busyJob[i] = nil
		}
	}
	if w.busyJob[k] == nil {
		buf := w.busyBuf(k)
		for i, b := range w.busyAll {
			if w.busyOwner[i] != k {
				buf = append(buf, b)
			}
		}
		w.busyJob[k] = buf
		w.busyBufs[k] = buf
	}
	return w.busyJob[k]
}

// busyBuf returns job k's reusable buffer, emptied.
func (w *world) busyBuf(k int) []speculate.BusySlot {
	for len(w.busyBufs) <= k {
		w.busyBufs = append(w.busyBufs, nil)
	}
	return w.busyBufs[k][:0]
}

func remove(a *attempt) {
	run := a.node.running
	for i, x := range run {
		if x == a {
			a.node.running = append(run[:i], run[i+1:]...)
			return
		}
	}
}
