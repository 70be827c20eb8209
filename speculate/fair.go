package speculate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// Location is a node holding a replica of a task's input data, and the node's rack
// ("" when unknown: then the replica gives no rack locality).
type Location struct {
	// Node holds the replica.
	Node string
	// Rack is the node's rack, "" when unknown.
	Rack string
}

// PendingTask is a task waiting for a slot, with where its input data is.
type PendingTask struct {
	// ID names the task; unique in a FairState.
	ID string
	// Locations are the replicas of the task's input. A task without locations (a
	// reduce task) has no data to be near: it is node-local everywhere.
	Locations []Location
}

// TaskTimer tells how long one of a job's tasks takes on a node, without waiting or
// transferring data: 1/progressRate(node) of eq. 3.5 for that job. Jobs differ
// (CPU-bound and IO-bound jobs rank hosts differently), which is why Alg. 4.1 builds one
// list per job. Implementations must be safe for concurrent use and return a duration
// ≥ 0.
type TaskTimer interface {
	TaskTime(node string) time.Duration
}

// NodeTimes is a TaskTimer from a table: ByNode[node], or Default for a node not in it.
type NodeTimes struct {
	// ByNode holds the task time on the nodes listed.
	ByNode map[string]time.Duration
	// Default is the task time elsewhere.
	Default time.Duration
}

// TaskTime implements TaskTimer.
func (t NodeTimes) TaskTime(node string) time.Duration {
	if d, ok := t.ByNode[node]; ok {
		return d
	}
	return t.Default
}

// RateTimes is a TaskTimer from a job's progress model (eq. 3.5): 1 over the mean rate
// of the job's tasks finished on the node; for a node that finished none, 1 over the
// mean rate of all the job's finished tasks; with none finished, Default.
type RateTimes struct {
	// Tasks is the job's progress model; nil gives Default everywhere.
	Tasks predict.RuntimeEstimator
	// Default is the task time when no task of the job has finished.
	Default time.Duration
}

// TaskTime implements TaskTimer.
func (t RateTimes) TaskTime(node string) time.Duration {
	if t.Tasks == nil {
		return t.Default
	}
	if st, ok := t.Tasks.NodeRate(node); ok && st.N > 0 && st.Mean > 0 && field.Finite(st.Mean) {
		return stage.Seconds(1 / st.Mean)
	}
	if fin := t.Tasks.Finished(); fin.N > 0 && fin.Mean > 0 && field.Finite(fin.Mean) {
		return stage.Seconds(1 / fin.Mean)
	}
	return t.Default
}

// JobOrder is the rule a pool orders its jobs by (docs/methods.md §10).
type JobOrder uint8

// The job orders.
const (
	// FairJobs: the lowest (running + pre-assigned)/weight first, then the earliest
	// submitted, then the smallest ID.
	FairJobs JobOrder = iota
	// FIFOJobs: the highest priority first, then the earliest submitted, then the
	// smallest ID.
	FIFOJobs
)

// String names the order.
func (o JobOrder) String() string {
	switch o {
	case FairJobs:
		return "fair"
	case FIFOJobs:
		return "fifo"
	}
	return fmt.Sprintf("JobOrder(%d)", uint8(o))
}

// PoolJob is a job as the pre-release list placement sees it.
type PoolJob struct {
	// ID names the job; unique in a FairState.
	ID string
	// Weight is the job's fair-share weight; 0 means 1.
	Weight float64
	// Priority orders jobs in a FIFO pool: higher first.
	Priority int
	// Submitted is when the job was submitted (≥ 0): earlier first among equals.
	Submitted time.Duration
	// Running is the number of the job's tasks running (≥ 0; a pool's jobs may run
	// at most 2^31 − 1 in all).
	Running int
	// Pending are the job's tasks waiting for a slot, in the order the job would run
	// them; the job's demand beyond its running tasks is their number.
	Pending []PendingTask
	// TaskTime is the job's task time per node (eq. 3.5). nil means the same
	// everywhere, so that only waiting and data transfer set finish times.
	TaskTime TaskTimer
}

// Pool is a queue of jobs (the top level of docs/methods.md §10).
type Pool struct {
	// ID names the pool; unique in a FairState.
	ID string
	// MinShare is the configured minimum share, in slots (≥ 0).
	MinShare int
	// Weight is the pool's fair-share weight; 0 means 1.
	Weight float64
	// Order is how the pool orders its jobs.
	Order JobOrder
	// Jobs are the pool's jobs. The pool's running tasks and demand are theirs summed.
	Jobs []PoolJob
}

// FairState is the scheduler state the pre-release list placement reads: the pools and
// their jobs, the busy slots that will free (every running task, with its time left),
// and the racks of the nodes. It is an input type of its own so that any scheduler can
// build it from its queues, jobs and running tasks.
type FairState struct {
	// Pools are the queues, each with its jobs.
	Pools []Pool
	// Busy are the slots held by running tasks, each a candidate pre-release resource
	// (Alg. 4.1 iterates over all running tasks).
	Busy []BusySlot
	// Racks maps every node that appears — the requesting one and those of Busy — to
	// its rack ("" when unknown).
	Racks map[string]string
}

// PreAssignment is a busy slot Alg. 4.2 promised to a job while deciding: the job will
// be better served when that slot frees than by the requesting one.
type PreAssignment struct {
	// Pool and Job received the promise.
	Pool, Job string
	// Slot is the busy slot promised.
	Slot BusySlot
	// Finish is the job's task finish time on that slot: its time left + the job's
	// task time there + the transfer time.
	Finish time.Duration
}

// Placement is the outcome of Alg. 4.2 for one free slot.
type Placement struct {
	// Assigned reports whether the slot gets a task. When false, every pool with
	// waiting tasks was promised faster busy slots, or no task waits.
	Assigned bool
	// Pool, Job and Task name the task to run on the slot.
	Pool, Job, Task string
	// Locality is the task's data locality on the slot's node.
	Locality fairness.Level
	// Finish is the job's task finish time on the slot: task time + transfer time.
	Finish time.Duration
	// PreAssigned lists, in order, the busy slots promised to other jobs before the
	// decision. The promises hold for this decision only: Alg. 4.2 starts afresh at
	// every request.
	PreAssigned []PreAssignment
}

// PreRelease is one entry of a job's pre-release list (Alg. 4.1).
type PreRelease struct {
	// Slot is the busy slot.
	Slot BusySlot
	// Locality is the job's best data locality on the slot's node.
	Locality fairness.Level
	// Finish is the job's task finish time there: time left + task time + transfer.
	Finish time.Duration
}

// Network defaults: the thesis's simulated cluster (§4.3.1).
const (
	// DefaultBlockSize is the input block size: 128 MiB.
	DefaultBlockSize = 128 << 20
	// DefaultRackBandwidth is the bandwidth within a rack: 20 MiB/s, so a block moves
	// in 6.4 s, as in the thesis.
	DefaultRackBandwidth = 20 << 20
	// DefaultCrossRackBandwidth is the bandwidth between racks: 5 MiB/s, 25.6 s a block.
	DefaultCrossRackBandwidth = 5 << 20
)

type placerConfig struct {
	block        int64
	rack, across float64
}

// PlacerOption configures NewFairPlacer.
type PlacerOption func(*placerConfig) error

// WithBlockSize sets the bytes a non-local task transfers (default DefaultBlockSize);
// it must be > 0.
func WithBlockSize(bytes int64) PlacerOption {
	return func(c *placerConfig) error {
		if bytes <= 0 {
			return fieldErr("block size", bytes, ErrInvalidOption)
		}
		c.block = bytes
		return nil
	}
}

// WithRackBandwidth sets the bandwidth within a rack, in bytes per second (default
// DefaultRackBandwidth); it must be a finite number > 0.
func WithRackBandwidth(bytesPerSecond float64) PlacerOption {
	return func(c *placerConfig) error {
		if !(bytesPerSecond > 0) || !field.Finite(bytesPerSecond) {
			return fieldErr("rack bandwidth", bytesPerSecond, ErrInvalidOption)
		}
		c.rack = bytesPerSecond
		return nil
	}
}

// WithCrossRackBandwidth sets the bandwidth between racks, in bytes per second
// (default DefaultCrossRackBandwidth); it must be a finite number > 0.
func WithCrossRackBandwidth(bytesPerSecond float64) PlacerOption {
	return func(c *placerConfig) error {
		if !(bytesPerSecond > 0) || !field.Finite(bytesPerSecond) {
			return fieldErr("cross-rack bandwidth", bytesPerSecond, ErrInvalidOption)
		}
		c.across = bytesPerSecond
		return nil
	}
}

// FairPlacer is the pre-release resource list fair scheduler (docs/methods.md §10; PRRL
// thesis ch. 4, Alg. 4.1 and 4.2): a placement policy the Scheduler can use instead of
// delay scheduling. Delay scheduling makes a job that has no local task pass the free
// slot to the next job and wait (W1, W2); the pre-release list instead promises the job
// the busy slot where its task would finish soonest and keeps the turn order, so it needs
// no wait parameters and does not trade fairness for locality.
//
// When a slot on a node frees and asks for work (Alg. 4.2):
//
//	loop:
//	  pools still needing slots: waiting tasks > slots pre-assigned to the pool;
//	  none → assign nothing;
//	  pick a pool by the fair rule; in it, among the jobs still needing slots, pick a
//	  job by the pool's order (FairJobs or FIFOJobs);
//	  build the job's pre-release list (Alg. 4.1): the busy slots not yet pre-assigned
//	  on which the job's task would finish sooner than on the free slot, where
//	    finish(busy)  = time left + task time(job, node) + transfer(job, node)
//	    finish(free)  = task time(job, free node) + transfer(job, free node)
//	  and transfer is 0 node-local, block size/rack bandwidth rack-local, block
//	  size/cross-rack bandwidth off-switch;
//	  empty → give the free slot to the job: a node-local task, else a rack-local one,
//	  else its first task; done;
//	  else pre-assign the list's first slot to the job and loop.
//
// Fair rule for pools: a pool is below its min share when running + pre-assigned <
// min(MinShare, demand), demand = running + waiting; such pools come first, the lowest
// (running + pre-assigned)/min(MinShare, demand) first; otherwise the lowest
// (running + pre-assigned)/weight; ties by pool ID.
//
// Reading: the thesis (§4.2.1) also subtracts the pool's pre-assigned count from the
// min share ("the configured min share and the demand, minus poolPreAssignNum"), and
// docs/methods.md §10 restates it as min(MinShare, demand) − preAssign. Counting the
// pre-assigned slots in the numerator and again in the denominator would count each
// promise twice and make a pool look satisfied at half its min share, so we count them
// once, in the numerator, as Hadoop's fair scheduler counts running tasks.
//
// A job's best locality on a node decides its transfer time there: node-local if one
// of its waiting tasks has data on the node (or has no data), rack-local if one has
// data in the node's rack, off-switch otherwise. Equal finish times go to the slot on
// the smaller node ID, then task ID. A FairPlacer is immutable and safe for concurrent
// use; Place does not modify the state it is given.
type FairPlacer struct {
	cfg placerConfig
}

// NewFairPlacer returns a placer with the thesis's network (128 MiB blocks, 20 MiB/s in
// a rack, 5 MiB/s across racks) changed by opts. It fails on an invalid option.
func NewFairPlacer(opts ...PlacerOption) (*FairPlacer, error) {
	cfg := placerConfig{block: DefaultBlockSize, rack: DefaultRackBandwidth, across: DefaultCrossRackBandwidth}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &FairPlacer{cfg: cfg}, nil
}

// Transfer is the time a task at the given locality spends fetching its input block.
func (f *FairPlacer) Transfer(l fairness.Level) time.Duration {
	switch l {
	case fairness.NodeLocal:
		return 0
	case fairness.RackLocal:
		return stage.Seconds(float64(f.cfg.block) / f.cfg.rack)
	}
	return stage.Seconds(float64(f.cfg.block) / f.cfg.across)
}

// placeJob is the working state of one job during a decision.
type placeJob struct {
	pool    int
	job     *PoolJob
	weight  float64
	pre     int
	indexed bool
	anyData bool // some waiting task has no locations: node-local everywhere
	nodes   map[string]struct{}
	racks   map[string]struct{}
	times   map[string]time.Duration
}

type placePool struct {
	pool    *Pool
	weight  float64
	running int
	waiting int
	pre     int
	jobs    []int // indexes into the job slice
}

// Place runs Alg. 4.2 for the free slot on node. It fails when node or a busy slot's
// node is not in state.Racks, on an empty or duplicate ID, a negative count, time or
// task time, a NaN or negative weight, or an unknown job order; it then decides nothing.
func (f *FairPlacer) Place(state FairState, node string) (Placement, error) {
	pools, jobs, err := f.prepare(state, node)
	if err != nil {
		return Placement{}, err
	}
	tabu := make([]bool, len(state.Busy))
	var out Placement
	for {
		p := choosePool(pools)
		if p < 0 {
			return out, nil
		}
		pl := &pools[p]
		j := chooseJob(pl, jobs)
		pj := &jobs[j]
		free, _, err := f.finishOn(state, pj, node, 0)
		if err != nil {
			return Placement{}, err
		}
		best, bestFinish := -1, time.Duration(0)
		for i, b := range state.Busy {
			if tabu[i] {
				continue
			}
			fin, _, err := f.finishOn(state, pj, b.Node, b.TimeLeft)
			if err != nil {
				return Placement{}, err
			}
			if fin >= free {
				continue
			}
			if best < 0 || fin < bestFinish || fin == bestFinish && slotBefore(b, state.Busy[best]) {
				best, bestFinish = i, fin
			}
		}
		if best < 0 {
			out.Assigned = true
			out.Pool, out.Job = pl.pool.ID, pj.job.ID
			out.Task, out.Locality = chooseTask(pj.job, node, state.Racks[node])
			out.Finish = free
			return out, nil
		}
		tabu[best] = true
		pj.pre++
		pl.pre++
		out.PreAssigned = append(out.PreAssigned, PreAssignment{Pool: pl.pool.ID, Job: pj.job.ID, Slot: state.Busy[best], Finish: bestFinish})
	}
}

// PreReleaseList is Alg. 4.1 for one job and the free slot on node, with no slot
// pre-assigned yet: the busy slots on which the job's task would finish sooner than on
// the free slot, fastest first. It fails on the inputs Place fails on, and on a job ID
// the state does not hold.
func (f *FairPlacer) PreReleaseList(state FairState, job, node string) ([]PreRelease, error) {
	_, jobs, err := f.prepare(state, node)
	if err != nil {
		return nil, err
	}
	j := slices.IndexFunc(jobs, func(p placeJob) bool { return p.job.ID == job })
	if j < 0 {
		return nil, fieldErr("job", job, ErrUnknownJob)
	}
	pj := &jobs[j]
	free, _, err := f.finishOn(state, pj, node, 0)
	if err != nil {
		return nil, err
	}
	var list []PreRelease
	for _, b := range state.Busy {
		fin, loc, err := f.finishOn(state, pj, b.Node, b.TimeLeft)
		if err != nil {
			return nil, err
		}
		if fin < free {
			list = append(list, PreRelease{Slot: b, Locality: loc, Finish: fin})
		}
	}
	slices.SortFunc(list, func(a, b PreRelease) int {
		if c := cmp.Compare(a.Finish, b.Finish); c != 0 {
			return c
		}
		if slotBefore(a.Slot, b.Slot) {
			return -1
		}
		return 1
	})
	return list, nil
}

func slotBefore(a, b BusySlot) bool {
	if a.Node != b.Node {
		return a.Node < b.Node
	}
	return a.Task < b.Task
}

// finishOn is the job's task finish time on a slot of node that frees after wait.
func (f *FairPlacer) finishOn(state FairState, pj *placeJob, node string, wait time.Duration) (time.Duration, fairness.Level, error) {
	loc := pj.locality(node, state.Racks[node])
	tt := time.Duration(0)
	if pj.job.TaskTime != nil {
		if d, ok := pj.times[node]; ok {
			tt = d
		} else {
			tt = pj.job.TaskTime.TaskTime(node)
			if tt < 0 {
				return 0, 0, fieldErr(fmt.Sprintf("job %q TaskTime(%q)", pj.job.ID, node), tt, ErrBadTime)
			}
			if pj.times == nil {
				pj.times = make(map[string]time.Duration)
			}
			pj.times[node] = tt
		}
	}
	return stage.AddSat(stage.AddSat(wait, tt), f.Transfer(loc)), loc, nil
}

// locality is the job's best locality on node (in rack).
func (pj *placeJob) locality(node, rack string) fairness.Level {
	if !pj.indexed {
		pj.indexed = true
		pj.nodes = make(map[string]struct{})
		pj.racks = make(map[string]struct{})
		for _, t := range pj.job.Pending {
			if len(t.Locations) == 0 {
				pj.anyData = true
			}
			for _, l := range t.Locations {
				pj.nodes[l.Node] = struct{}{}
				if l.Rack != "" {
					pj.racks[l.Rack] = struct{}{}
				}
			}
		}
	}
	if _, ok := pj.nodes[node]; ok || pj.anyData {
		return fairness.NodeLocal
	}
	if _, ok := pj.racks[rack]; ok && rack != "" {
		return fairness.RackLocal
	}
	return fairness.OffSwitch
}

// chooseTask picks the job's task for the free slot: the first node-local one, else
// the first rack-local one, else the first.
func chooseTask(job *PoolJob, node, rack string) (string, fairness.Level) {
	rackLocal := -1
	for i, t := range job.Pending {
		if len(t.Locations) == 0 {
			return t.ID, fairness.NodeLocal
		}
		for _, l := range t.Locations {
			if l.Node == node {
				return t.ID, fairness.NodeLocal
			}
			if rackLocal < 0 && rack != "" && l.Rack == rack {
				rackLocal = i
			}
		}
	}
	if rackLocal >= 0 {
		return job.Pending[rackLocal].ID, fairness.RackLocal
	}
	return job.Pending[0].ID, fairness.OffSwitch
}

// choosePool returns the pool the fair rule picks among those still needing slots, or
// −1 when none does.
func choosePool(pools []placePool) int {
	best := -1
	var bestNeedy bool
	var bestRatio float64
	for i := range pools {
		p := &pools[i]
		if p.waiting <= p.pre {
			continue
		}
		used := float64(p.running + p.pre)
		target := min(p.pool.MinShare, p.running+p.waiting)
		needy := p.running+p.pre < target
		var ratio float64
		if needy {
			ratio = used / float64(max(target, 1))
		} else {
			ratio = used / p.weight
		}
		better := best < 0 ||
			needy && !bestNeedy ||
			needy == bestNeedy && (ratio < bestRatio || ratio == bestRatio && p.pool.ID < pools[best].pool.ID)
		if better {
			best, bestNeedy, bestRatio = i, needy, ratio
		}
	}
	return best
}

// chooseJob returns the job the pool's order picks among those still needing slots;
// the pool has one (its waiting tasks exceed its pre-assignments).
func chooseJob(p *placePool, jobs []placeJob) int {
	best := -1
	for _, j := range p.jobs {
		pj := &jobs[j]
		if len(pj.job.Pending) <= pj.pre {
			continue
		}
		if best < 0 || jobBefore(p.pool.Order, pj, &jobs[best]) {
			best = j
		}
	}
	return best
}

func jobBefore(order JobOrder, a, b *placeJob) bool {
	if order == FIFOJobs {
		if a.job.Priority != b.job.Priority {
			return a.job.Priority > b.job.Priority
		}
	} else {
		ra := float64(a.job.Running+a.pre) / a.weight
		rb := float64(b.job.Running+b.pre) / b.weight
		if ra != rb {
			return ra < rb
		}
	}
	if a.job.Submitted != b.job.Submitted {
		return a.job.Submitted < b.job.Submitted
	}
	return a.job.ID < b.job.ID
}

// prepare validates state and builds the working state of a decision.
func (f *FairPlacer) prepare(state FairState, node string) ([]placePool, []placeJob, error) {
	if node == "" {
		return nil, nil, fieldErr("node", node, ErrEmptyID)
	}
	if _, ok := state.Racks[node]; !ok {
		return nil, nil, fieldErr("node", node, ErrUnknownNode)
	}
	for n := range state.Racks {
		if n == "" {
			return nil, nil, fieldErr("Racks", n, ErrEmptyID)
		}
	}
	busy := make(map[string]struct{}, len(state.Busy))
	for i, b := range state.Busy {
		bf := func(f string) string { return fmt.Sprintf("Busy[%d].%s", i, f) }
		if f, v, err := checkBusy(b); err != nil {
			return nil, nil, fieldErr(bf(f), v, err)
		}
		if _, ok := state.Racks[b.Node]; !ok {
			return nil, nil, fieldErr(bf("Node"), b.Node, ErrUnknownNode)
		}
		if _, dup := busy[b.Task]; dup {
			return nil, nil, fieldErr(bf("Task"), b.Task, ErrDuplicate)
		}
		busy[b.Task] = struct{}{}
	}
	pools := make([]placePool, len(state.Pools))
	var jobs []placeJob
	poolIDs := make(map[string]struct{}, len(state.Pools))
	jobIDs := make(map[string]struct{})
	taskIDs := make(map[string]struct{})
	for i := range state.Pools {
		p := &state.Pools[i]
		pf := func(f string) string { return fmt.Sprintf("Pools[%d].%s", i, f) }
		switch {
		case p.ID == "":
			return nil, nil, fieldErr(pf("ID"), p.ID, ErrEmptyID)
		case p.MinShare < 0:
			return nil, nil, fieldErr(pf("MinShare"), p.MinShare, ErrInvalidValue)
		case !field.Finite(p.Weight) || p.Weight < 0:
			return nil, nil, fieldErr(pf("Weight"), p.Weight, ErrInvalidValue)
		case p.Order != FairJobs && p.Order != FIFOJobs:
			return nil, nil, fieldErr(pf("Order"), p.Order, ErrInvalidValue)
		}
		if _, dup := poolIDs[p.ID]; dup {
			return nil, nil, fieldErr(pf("ID"), p.ID, ErrDuplicate)
		}
		poolIDs[p.ID] = struct{}{}
		pools[i] = placePool{pool: p, weight: orOne(p.Weight)}
		for k := range p.Jobs {
			j := &p.Jobs[k]
			jf := func(f string) string { return fmt.Sprintf("Pools[%d].Jobs[%d].%s", i, k, f) }
			switch {
			case j.ID == "":
				return nil, nil, fieldErr(jf("ID"), j.ID, ErrEmptyID)
			case !field.Finite(j.Weight) || j.Weight < 0:
				return nil, nil, fieldErr(jf("Weight"), j.Weight, ErrInvalidValue)
			case j.Submitted < 0:
				return nil, nil, fieldErr(jf("Submitted"), j.Submitted, ErrBadTime)
			case j.Running < 0 || pools[i].running > math.MaxInt32-j.Running:
				return nil, nil, fieldErr(jf("Running"), j.Running, ErrInvalidValue)
			}
			if _, dup := jobIDs[j.ID]; dup {
				return nil, nil, fieldErr(jf("ID"), j.ID, ErrDuplicate)
			}
			jobIDs[j.ID] = struct{}{}
			for t, task := range j.Pending {
				tf := func(f string) string { return fmt.Sprintf("Pools[%d].Jobs[%d].Pending[%d].%s", i, k, t, f) }
				if task.ID == "" {
					return nil, nil, fieldErr(tf("ID"), task.ID, ErrEmptyID)
				}
				if _, dup := taskIDs[task.ID]; dup {
					return nil, nil, fieldErr(tf("ID"), task.ID, ErrDuplicate)
				}
				taskIDs[task.ID] = struct{}{}
				for l, loc := range task.Locations {
					if loc.Node == "" {
						return nil, nil, fieldErr(tf(fmt.Sprintf("Locations[%d].Node", l)), loc.Node, ErrEmptyID)
					}
				}
			}
			pools[i].running += j.Running
			pools[i].waiting += len(j.Pending)
			pools[i].jobs = append(pools[i].jobs, len(jobs))
			jobs = append(jobs, placeJob{pool: i, job: j, weight: orOne(j.Weight)})
		}
	}
	return pools, jobs, nil
}

func orOne(w float64) float64 {
	if w == 0 {
		return 1
	}
	return w
}
