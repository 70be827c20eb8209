package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Workload is a set of jobs to run, independent of any scheduler: what arrives when,
// what each task really uses (which no scheduler sees), what its user declares, and
// which input blocks it reads. Generators (FGM, Thesis, FromSWIM) return workloads in
// submission order; a hand-built one should pass Validate before a simulator uses it.
//
// A Workload is plain data: copying it shares the job and task slices, and it is not
// safe to modify while another goroutine reads it. Profiles inside are immutable.
type Workload struct {
	// Name describes the workload, e.g. "fgm-offline-400GiB".
	Name string
	// Jobs in submission order: by Submit, ties in slice order (the order a FIFO
	// scheduler serves jobs submitted at the same instant). Job IDs sort in this order
	// for generated workloads.
	Jobs []Job
	// Blocks holds the size in bytes of every input block; Task.Blocks index into it.
	// PlaceReplicas places these blocks on a Cluster.
	Blocks []int64
}

// Job is a set of tasks submitted together by one user to one queue.
//
// Execution semantics the simulator follows (as Hadoop MapReduce does without reduce
// slow-start): a job's map tasks are runnable from Submit; its reduce tasks become
// runnable when every map task of the job has finished. A job completes when all its
// tasks have.
type Job struct {
	// ID identifies the job; unique within the workload.
	ID string
	// Queue names the queue (pool, user) the job is submitted to.
	Queue string
	// Submit is when the job arrives, from the workload's epoch (0 = simulation start).
	Submit time.Duration
	// App names the application class the job runs (AppClass.Name), or a size class
	// ("small", "normal", "large") for the PRRL thesis workload; for reporting.
	App string
	// Logic identifies the job's execution logic (docs/methods.md §2, Def. 3): FGM uses the
	// MD5 of the application code and its arguments; here it is an opaque string, the same
	// for jobs running the same application with the same arguments. A task's logic is
	// Logic plus its kind (see Job.Key).
	Logic string
	// Family names the application the job runs, its code without the arguments that
	// make Logic (predict.Key.Family): jobs of one Family but different Logic run the
	// same code on other arguments or data, so an estimator that has not seen a
	// task's logic may predict it from the family's tasks of a similar input size.
	// Empty when the application is not known. FGM and FromSWIM set it to the
	// application class's name (AppClass.Name); Thesis (whose Logic is already its
	// class's), FromAlibaba2017 (whose sample names no application) and FromOpenB
	// leave it empty.
	Family string
	// InputBytes is the job's total input (the sum of its map tasks' input).
	InputBytes int64
	// ShuffleBytes is the data moved from map to reduce tasks (the sum of the reduce
	// tasks' input); 0 for a map-only job.
	ShuffleBytes int64
	// OutputBytes is the job's final output.
	OutputBytes int64
	// Priority orders jobs under priority-aware policies (FIFO with priorities, the
	// FIFO rule of docs/methods.md §10): higher first. It is also the preemption
	// priority of the job's tasks (finegrain.Job.Priority): with priority preemption on
	// (finegrain.WithPreemption), a task may evict running tasks of jobs of lower
	// priority. Generators leave it 0.
	Priority int
	// MinMember makes the job a gang (finegrain.Job.MinMember): none of its tasks runs
	// until MinMember of them can run together. 0 or 1: no gang. The members gather
	// from the job's first batch of tasks — its map tasks, or all its tasks when it has
	// none — since its reduce tasks become runnable only when every map task has
	// finished; so MinMember must not exceed that batch (Validate). Once gathered, the
	// rest of the job (its reduce tasks, re-runs) starts as it fits. Generators leave it
	// 0.
	MinMember int
	// Tasks are the job's map tasks followed by its reduce tasks.
	Tasks []Task
}

// Kind is the type of a task: part of its execution logic.
type Kind uint8

const (
	// Map reads one input block: stages read (disk-io heavy), compute (cpu heavy), spill
	// (disk-io and memory).
	Map Kind = iota
	// Reduce processes a share of the job's shuffle: stages shuffle (net-io), sort (cpu
	// and memory), reduce (cpu and disk-io, writing the output).
	Reduce
)

// String returns "map" or "reduce".
func (k Kind) String() string {
	switch k {
	case Map:
		return "map"
	case Reduce:
		return "reduce"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// StageNames returns the names of the three stages every generated task of this kind
// has, in order. For reduce tasks they are also the phases K = 0, 1, 2 of the LATE
// progress model (docs/methods.md §8, eq. 3.1).
func (k Kind) StageNames() [3]string {
	if k == Reduce {
		return [3]string{"shuffle", "sort", "reduce"}
	}
	return [3]string{"read", "compute", "spill"}
}

// Task is one unit of work of a job, run in one container or slot.
type Task struct {
	// ID identifies the task; unique within the workload ("<job>/m00012",
	// "<job>/r0003" for generated ones).
	ID string
	// Kind is map or reduce.
	Kind Kind
	// Logic, when set, tells apart tasks of one job that run different code — the
	// stages of a DAG job, as in the Alibaba batch trace — within the job's Logic: it
	// joins the similarity key (Job.Key). Generators of MapReduce jobs leave it empty.
	Logic string
	// InputBytes is the data the task processes: its block for a map task, its share of
	// the shuffle for a reduce task. With the job's logic and the kind it forms the
	// similarity key (Job.Key).
	InputBytes int64
	// True is what the task really uses, stage by stage, when it runs alone on a node
	// of speed 1 with everything it demands: the ground truth a simulator runs, which
	// no scheduler sees. Its schema is Schema(). On a node of speed s every stage lasts
	// Duration/s; under compression it stretches by eq. 5 (resource.CompressedDuration).
	True stage.Profile
	// Request is what the user declares for the task (the container size): usually
	// the true peak times an over-estimate factor, rounded up (see Overestimate). All
	// tasks of one kind in a job declare the same request, as YARN containers do.
	// YARN-like schedulers reserve only its cpu and memory (YARNDims).
	Request resource.Tuple
	// Blocks lists the input blocks the task reads, as indices into Workload.Blocks;
	// it prefers nodes holding a replica of them (data locality). Generated map tasks
	// read exactly one block, except an empty map task (a job without input), which
	// reads none; reduce tasks read none.
	Blocks []int
	// GPU is what the task asks of a node's GPU devices (finegrain.Task.GPU), held
	// while it runs; zero for none. GPU-sharing traces (FromOpenB) set it.
	GPU gpu.Demand
	// LatencySensitive marks a latency-sensitive task (finegrain.Task.Class
	// finegrain.LatencySensitive); false: batch. FromOpenB sets it from the pod's qos;
	// the generators for a share of jobs (WithLatencySensitive).
	LatencySensitive bool
	// SLO is the longest run time, from the task's start, that still meets its
	// service-level objective (finegrain.Task.SLO); 0: none. Only a latency-sensitive
	// task may have one. The loaders and generators set it by WithSLOFactor.
	SLO time.Duration
}

// SimilarityKey identifies a class of similar tasks (docs/methods.md §2, Def. 3): the
// same execution logic on the same amount of input. Its fields match predict.Key, so a
// simulator converts one with predict.Key(k).
type SimilarityKey struct {
	// Logic is the job's Logic, "/", and the task kind, e.g. "wordcount/map".
	Logic string
	// InputSize is the task's InputBytes.
	InputSize int64
	// Family is the job's Family, "/", and the task kind, e.g. "wordcount/map";
	// empty when the job has no Family.
	Family string
}

// Key returns the similarity key of task t of job j: the job's Logic, the task's own
// Logic when it has one, and its kind, with its input size, and likewise its family
// when the job has one. Map tasks of full blocks of jobs with the same Logic share a
// key, so an estimator learns from the first of them; the last, partial block of each
// job has a key of its own, which an estimator with family learning
// (predict.WithFamily) predicts from the family's tasks of a similar size.
func (j *Job) Key(t *Task) SimilarityKey {
	var own string
	if t.Logic != "" {
		own = t.Logic + "/"
	}
	k := SimilarityKey{Logic: j.Logic + "/" + own + t.Kind.String(), InputSize: t.InputBytes}
	if j.Family != "" {
		k.Family = j.Family + "/" + own + t.Kind.String()
	}
	return k
}

// NumTasks returns the number of the job's tasks of kind k.
func (j *Job) NumTasks(k Kind) int {
	n := 0
	for i := range j.Tasks {
		if j.Tasks[i].Kind == k {
			n++
		}
	}
	return n
}

// firstBatch is the number of tasks runnable when the job arrives: its map tasks, or
// all its tasks when it has none.
func (j *Job) firstBatch() int {
	if n := j.NumTasks(Map); n > 0 {
		return n
	}
	return len(j.Tasks)
}

// NumTasks returns the number of tasks of all jobs.
func (w *Workload) NumTasks() int {
	n := 0
	for i := range w.Jobs {
		n += len(w.Jobs[i].Tasks)
	}
	return n
}

// TotalInput returns the sum of the jobs' InputBytes.
func (w *Workload) TotalInput() int64 {
	var n int64
	for i := range w.Jobs {
		n += w.Jobs[i].InputBytes
	}
	return n
}

// Queues returns the distinct queue names of the jobs, sorted.
func (w *Workload) Queues() []string {
	var qs []string
	for i := range w.Jobs {
		qs = append(qs, w.Jobs[i].Queue)
	}
	slices.Sort(qs)
	return slices.Compact(qs)
}

// Validate checks what a simulator relies on and reports the first problem, naming the
// job, task and field: at least one job; job IDs non-empty and unique; queue and logic
// non-empty; Submit, byte counts non-negative; jobs in non-decreasing Submit order;
// every job with at least one task; MinMember not negative and at most the job's first
// batch of tasks (its map tasks, or all its tasks when it has none); task IDs non-empty
// and unique across the workload;
// a known Kind; non-negative InputBytes; a True profile with stages in Schema(); a
// Request valid in Schema(); block indices within Blocks; block sizes non-negative; an
// SLO not negative, and none on a batch task.
// A Request below the true peak is allowed (an under-declaring user, whose task a
// simulator may kill like an OOM); use Covers to check. A nil workload fails too.
func (w *Workload) Validate() error {
	if w == nil {
		return fieldErr("workload", "nil", ErrInvalidValue)
	}
	if len(w.Jobs) == 0 {
		return fieldErr("Jobs", 0, ErrEmpty)
	}
	for i, b := range w.Blocks {
		if b < 0 {
			return fieldErr(fmt.Sprintf("Blocks[%d]", i), b, ErrInvalidValue)
		}
	}
	s := Schema()
	jobs := make(map[string]int, len(w.Jobs))
	tasks := make(map[string]string, w.NumTasks())
	for i := range w.Jobs {
		j := &w.Jobs[i]
		f := func(name string) string { return fmt.Sprintf("Jobs[%d](%s).%s", i, j.ID, name) }
		switch {
		case j.ID == "":
			return fieldErr(f("ID"), j.ID, ErrEmpty)
		case j.Queue == "":
			return fieldErr(f("Queue"), j.Queue, ErrEmpty)
		case j.Logic == "":
			return fieldErr(f("Logic"), j.Logic, ErrEmpty)
		case j.Submit < 0:
			return fieldErr(f("Submit"), j.Submit, ErrInvalidValue)
		case i > 0 && j.Submit < w.Jobs[i-1].Submit:
			return fieldErr(f("Submit"), fmt.Sprintf("%v before the previous job's %v", j.Submit, w.Jobs[i-1].Submit), ErrInvalidValue)
		case j.InputBytes < 0:
			return fieldErr(f("InputBytes"), j.InputBytes, ErrInvalidValue)
		case j.ShuffleBytes < 0:
			return fieldErr(f("ShuffleBytes"), j.ShuffleBytes, ErrInvalidValue)
		case j.OutputBytes < 0:
			return fieldErr(f("OutputBytes"), j.OutputBytes, ErrInvalidValue)
		case len(j.Tasks) == 0:
			return fieldErr(f("Tasks"), 0, ErrEmpty)
		case j.MinMember < 0:
			return fieldErr(f("MinMember"), j.MinMember, ErrInvalidValue)
		}
		if first := j.firstBatch(); j.MinMember > first {
			return fieldErr(f("MinMember"), fmt.Sprintf("%d, more than the %d task(s) of its first batch (its map tasks, or all its tasks without maps)", j.MinMember, first), ErrInvalidValue)
		}
		if k, dup := jobs[j.ID]; dup {
			return fieldErr(f("ID"), fmt.Sprintf("%s (also Jobs[%d])", j.ID, k), ErrDuplicateID)
		}
		jobs[j.ID] = i
		for k := range j.Tasks {
			t := &j.Tasks[k]
			g := func(name string) string { return fmt.Sprintf("Jobs[%d](%s).Tasks[%d](%s).%s", i, j.ID, k, t.ID, name) }
			switch {
			case t.ID == "":
				return fieldErr(g("ID"), t.ID, ErrEmpty)
			case t.Kind > Reduce:
				return fieldErr(g("Kind"), t.Kind, ErrInvalidValue)
			case t.InputBytes < 0:
				return fieldErr(g("InputBytes"), t.InputBytes, ErrInvalidValue)
			case t.True.Len() == 0:
				return fieldErr(g("True"), t.True, stage.ErrEmptyProfile)
			case t.SLO < 0:
				return fieldErr(g("SLO"), t.SLO, ErrInvalidValue)
			case t.SLO > 0 && !t.LatencySensitive:
				return fieldErr(g("SLO"), fmt.Sprintf("%v on a batch task (only a latency-sensitive task may have one)", t.SLO), ErrInvalidValue)
			case !s.Equal(t.True.Schema()):
				return fieldErr(g("True")+" schema", fmt.Sprintf("%v, the workload's %v", t.True.Schema(), s), resource.ErrSchemaMismatch)
			}
			if other, dup := tasks[t.ID]; dup {
				return fieldErr(g("ID"), fmt.Sprintf("%s (also in job %s)", t.ID, other), ErrDuplicateID)
			}
			tasks[t.ID] = j.ID
			if err := s.Validate(t.Request); err != nil {
				return fieldErr(g("Request"), s.Format(t.Request), err)
			}
			if err := t.GPU.Validate(); err != nil {
				return fieldErr(g("GPU"), t.GPU, fmt.Errorf("%w: %w", ErrInvalidValue, err))
			}
			for b, blk := range t.Blocks {
				if blk < 0 || blk >= len(w.Blocks) {
					return fieldErr(g(fmt.Sprintf("Blocks[%d]", b)), blk, ErrInvalidValue)
				}
			}
		}
	}
	return nil
}
