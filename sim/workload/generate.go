package workload

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// FGM generates the paper-like workload of the FGM evaluation (docs/methods.md §7, FGM
// §4.1): MapReduce- and Spark-like jobs whose input sizes follow the Facebook
// distribution, 400 GiB of input in total, submitted all at 0 (offline, the default) or
// as a Poisson process (WithOnline; the paper's online series scales the total from 50 to
// 400 GB with WithTotalInput). The same r state and options give the same workload.
//
// How jobs are drawn, in this order for each job: an input size from the distribution
// (WithInputSizes, FB2009 by default) truncated at the maximum job input, the last job
// taking only what remains so that the total is met exactly; a queue, uniformly
// (WithQueues); an application class by weight (WithApps); an over-estimate factor
// (WithOverestimate); the gap to the next arrival when online. Its tasks are derived as
// in FromSWIM (one map per block, one reduce per WithBytesPerReduce of shuffle), except
// that each map task outputs its input × the class's MapOutputRatio and each reduce its
// input × ReduceOutputRatio (rounded), the job's shuffle and output being the sums: so
// tasks of one class with the same input are exactly alike across jobs (but for
// jitter). Jobs are named job0000, job0001, ... in submission order; a job's Logic and
// Family are its class name, so full-block map tasks of the same class share a
// similarity key, and its other tasks a family. Every task is batch unless
// WithLatencySensitive makes a share of the jobs latency-sensitive (drawn last).
func FGM(r *rand.Rand, opts ...Option) (Workload, error) {
	if r == nil {
		return Workload{}, fieldErr("rand", nil, ErrNilRand)
	}
	c := defaults()
	if err := c.apply(opts); err != nil {
		return Workload{}, err
	}
	target := amount(float64(c.total) * c.scale)
	if target < 1 {
		target = 1
	}
	maxJob := min(DefaultMaxJobInput, max(1, target/4))
	if c.maxJob > 0 {
		maxJob = c.maxJob
	}
	maxJob = min(maxJob, target)

	// Draw the jobs' parameters first, so that the task count can be checked before
	// anything large is built.
	type draw struct {
		in      int64
		queue   string
		app     *AppClass
		factor  float64
		submit  time.Duration
		shuffle int64
	}
	var draws []draw
	tasks := 0
	now := time.Duration(0)
	for sum := int64(0); sum < target; {
		d := draw{in: min(max(1, c.sizes.Sample(r, maxJob)), maxJob, target-sum)}
		sum += d.in
		d.queue = c.queues[r.IntN(len(c.queues))]
		d.app = &c.apps[pick(r, c.weights, len(c.apps))]
		d.factor = c.overLo + (c.overHi-c.overLo)*r.Float64()
		d.submit = now
		if c.online {
			gap := math.Round(r.ExpFloat64() * float64(c.meanGap))
			if gap >= float64(stage.Forever-now) {
				now = stage.Forever // saturate rather than overflow
			} else {
				now += time.Duration(gap)
			}
		}
		d.shuffle = ratioTotal(d.in, c.blockSize, d.app.MapOutputRatio)
		maps, reduces := numMaps(d.in, c.blockSize), numReduces(d.shuffle, c.perReduce)
		var ok bool
		if tasks, ok = addTasks(tasks, maps, reduces, c.maxTasks); !ok {
			return Workload{}, tooManyTasks(fmt.Sprintf("jobs[%d] tasks", len(draws)), tasks, maps, reduces, c.maxTasks)
		}
		draws = append(draws, d)
	}
	mode := "offline"
	if c.online {
		mode = "online"
	}
	w := Workload{Name: fmt.Sprintf("fgm-%s-%s-%s", mode, c.sizes.Name(), sizeName(target))}
	w.Jobs = make([]Job, len(draws))
	width := digits(len(draws))
	for i, d := range draws {
		w.Jobs[i] = build(&w, &c, r, jobSpec{
			id: fmt.Sprintf("job%0*d", width, i), queue: d.queue, submit: d.submit,
			app: d.app, logic: d.app.Name, in: d.in, factor: d.factor,
		})
	}
	c.classify(&w, r)
	return w, nil
}

// pick returns an index in [0, n) drawn by weight (nil weights: uniform).
func pick(r *rand.Rand, weights []float64, n int) int {
	if weights == nil {
		return r.IntN(n)
	}
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	x := r.Float64() * sum
	last := 0
	for i, w := range weights {
		if w == 0 {
			continue
		}
		last = i
		if x < w {
			return i
		}
		x -= w
	}
	return last
}

func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return max(d, 4)
}

func sizeName(b int64) string {
	switch {
	case b%GiB == 0:
		return fmt.Sprintf("%dGiB", b/GiB)
	case b%MiB == 0:
		return fmt.Sprintf("%dMiB", b/MiB)
	}
	return fmt.Sprintf("%dB", b)
}

// numMaps is the number of map tasks of a job with in bytes of input: one per block,
// and one (reading nothing) when there is no input.
func numMaps(in, block int64) int {
	if in <= 0 {
		return 1
	}
	return int((in-1)/block + 1)
}

// addTasks returns tasks, the tasks counted so far (at most limit), plus a job's maps
// and reduces (non-negative), and false when the sum would exceed limit. Each count is
// compared with what remains of the limit before it is added, so that no count,
// however large, can overflow the sum.
func addTasks(tasks, maps, reduces, limit int) (int, bool) {
	if maps > limit-tasks || reduces > limit-tasks-maps {
		return tasks, false
	}
	return tasks + maps + reduces, true
}

// tooManyTasks is the error for a job (named by field) whose maps and reduces would
// take the tasks counted so far past limit.
func tooManyTasks(field string, tasks, maps, reduces, limit int) error {
	return fieldErr(field, fmt.Sprintf("%d maps + %d reduces after %d tasks, more than %d in all (WithMaxTasks); use WithScale",
		maps, reduces, tasks, limit), ErrTooLarge)
}

// numReduces is the number of reduce tasks for shuffle bytes: one per perReduce bytes,
// none when there is no shuffle (a map-only job).
func numReduces(shuffle, perReduce int64) int {
	if shuffle <= 0 {
		return 0
	}
	return int((shuffle-1)/perReduce + 1)
}

// mulDiv returns a×b/c rounded down, for 0 ≤ b ≤ c, c > 0, a ≥ 0, without overflow.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c)) // hi < c because b ≤ c
	return int64(q)
}

// taskID returns job + sep + i in at least width digits, zero-padded.
func taskID(job, sep string, i, width int) string {
	var buf [64]byte
	b := append(buf[:0], job...)
	b = append(b, sep...)
	var num [20]byte
	n := strconv.AppendInt(num[:0], int64(i), 10)
	for k := len(n); k < width; k++ {
		b = append(b, '0')
	}
	return string(append(b, n...))
}

// ratioTotal is the sum over the parts of total split into chunks of part bytes (the
// last one partial) of amount(chunk × ratio): what the parts of a job produce when each
// produces ratio bytes per byte it reads.
func ratioTotal(total, part int64, ratio float64) int64 {
	if total <= 0 {
		return 0
	}
	full := total / part
	per, rest := amount(float64(part)*ratio), amount(float64(total-full*part)*ratio)
	if float64(full)*float64(per)+float64(rest) >= math.MaxInt64/2 {
		return math.MaxInt64 / 2 // saturate; such a job is refused as too large anyway
	}
	return full*per + rest
}

// addSat returns a + b for non-negative a and b, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// split returns the share of total of the i-th of the parts whole is cut into (chunks
// of part bytes, the last one partial; n parts in all): full parts get
// floor(total × part / whole) each and the last one what remains, so that full parts
// are alike and the shares add up to total. whole must be positive.
func split(total, whole, part int64, i, n int) int64 {
	if n <= 1 {
		return total
	}
	full := mulDiv(total, part, whole) // part < whole when there are several parts
	if i < n-1 {
		return full
	}
	return total - int64(n-1)*full
}

// jobSpec is what build needs to derive a job's tasks.
type jobSpec struct {
	id, queue, logic string
	submit           time.Duration
	app              *AppClass
	in               int64
	factor           float64
	// trace: the shuffle and output are given (FromSWIM) rather than derived from the
	// class's ratios.
	trace        bool
	shuffle, out int64
	// thesisTime > 0: a thesis job of class thesisClass, map-only, fixed time per task.
	thesisTime  time.Duration
	thesisClass string
}

// build derives a job's tasks (appending its blocks to w.Blocks) and returns the job.
//
// Map tasks: one per block of c.blockSize bytes, the last one partial; one map task
// reading nothing when the job has no input. Reduce tasks: one per c.perReduce bytes of
// shuffle, the last one partial; none without shuffle. Each task's output:
//   - generated jobs: input × the class's MapOutputRatio (maps) or ReduceOutputRatio
//     (reduces), rounded; the job's shuffle and output are the sums. Tasks of the same
//     class and input size are then exactly alike, across jobs.
//   - trace jobs: the trace's shuffle (or, for a job without shuffle, its output) split
//     among the maps, and its output among the reduces, in proportion to their input:
//     every full part gets floor(total × part / whole), the last part the rest.
//   - thesis jobs: a tenth of the input.
//
// Requests: per kind, the largest true peak of the job's tasks of that kind,
// over-estimated by s.factor.
func build(w *Workload, c *config, r *rand.Rand, s jobSpec) Job {
	j := Job{ID: s.id, Queue: s.queue, Submit: s.submit, App: s.app.Name, Logic: s.logic, Family: s.app.Name, InputBytes: s.in}
	switch {
	case s.thesisTime > 0:
		j.App, j.Family = s.thesisClass, ""
	case s.trace:
		j.ShuffleBytes, j.OutputBytes = s.shuffle, s.out
	default:
		j.ShuffleBytes = ratioTotal(s.in, c.blockSize, s.app.MapOutputRatio)
	}
	jit := Jitter{Rand: r, Sigma: c.jitter}
	nm, nr := numMaps(s.in, c.blockSize), numReduces(j.ShuffleBytes, c.perReduce)
	j.Tasks = make([]Task, 0, nm+nr)
	blockIdx := make([]int, nm)
	mapOut := j.ShuffleBytes
	if s.trace && j.ShuffleBytes == 0 {
		mapOut = j.OutputBytes
	}
	var peak resource.Tuple
	for i := 0; i < nm; i++ {
		t := Task{ID: taskID(s.id, "/m", i, 5), Kind: Map}
		var out int64
		if s.in > 0 {
			t.InputBytes = min(c.blockSize, s.in-int64(i)*c.blockSize)
			blockIdx[i] = len(w.Blocks)
			w.Blocks = append(w.Blocks, t.InputBytes)
			t.Blocks = blockIdx[i : i+1 : i+1]
		}
		switch {
		case s.thesisTime > 0:
			out = t.InputBytes / 10
			j.OutputBytes += out
			t.True = thesisProfile(t.InputBytes, out, s.thesisTime, jit)
		case s.trace && s.in > 0:
			out = split(mapOut, s.in, c.blockSize, i, nm)
		case s.trace:
			out = mapOut
		default:
			out = amount(float64(t.InputBytes) * s.app.MapOutputRatio)
		}
		if s.thesisTime == 0 {
			t.True = s.app.profile(Map, t.InputBytes, out, jit)
		}
		peak = peak.Max(t.True.Peak())
		j.Tasks = append(j.Tasks, t)
	}
	req := overestimate(peak, s.factor, c.rounding)
	for i := range j.Tasks {
		j.Tasks[i].Request = req
	}
	peak = resource.Tuple{}
	for i := 0; i < nr; i++ {
		in := min(c.perReduce, j.ShuffleBytes-int64(i)*c.perReduce)
		var out int64
		if s.trace {
			out = split(j.OutputBytes, j.ShuffleBytes, c.perReduce, i, nr)
		} else {
			out = amount(float64(in) * s.app.ReduceOutputRatio)
			j.OutputBytes = addSat(j.OutputBytes, out)
		}
		t := Task{ID: taskID(s.id, "/r", i, 4), Kind: Reduce, InputBytes: in}
		t.True = s.app.profile(Reduce, in, out, jit)
		peak = peak.Max(t.True.Peak())
		j.Tasks = append(j.Tasks, t)
	}
	if nr > 0 {
		req = overestimate(peak, s.factor, c.rounding)
		for i := nm; i < len(j.Tasks); i++ {
			j.Tasks[i].Request = req
		}
	}
	return j
}

// ThesisClass is a job type of the PRRL thesis' simulation (Table 4.2): jobs of Blocks
// input blocks, one map task per block, each taking TaskTime on a normal node.
type ThesisClass struct {
	// Name is "small", "normal" or "large" for the thesis' classes.
	Name string
	// Blocks is the number of 128 MB blocks, hence map tasks, of a job.
	Blocks int
	// TaskTime is one task's processing time on a node of speed 1 (a "normal" node),
	// excluding any data transfer.
	TaskTime time.Duration
}

// The job types of the PRRL thesis' Table 4.2 ("task processing time of different job
// types"): data size 800×128M / 300×128M / 60×128M, "task processing time on a normal
// node" 800 s / 300 s / 60 s.
//
// Reading: the column heading says task processing time, so TaskTime is each task's
// time — a large job's 800 tasks take 800 s each — not the job's total (which would be
// 1 s per task, shorter than the 6.4 s it takes to move a block within a rack, making
// the thesis' W1 = 5 s, W2 = 20 s delay-scheduling waits meaningless). docs/methods.md
// §10 states the table the same way.
var (
	ThesisSmall  = ThesisClass{Name: "small", Blocks: 60, TaskTime: 60 * time.Second}
	ThesisNormal = ThesisClass{Name: "normal", Blocks: 300, TaskTime: 300 * time.Second}
	ThesisLarge  = ThesisClass{Name: "large", Blocks: 800, TaskTime: 800 * time.Second}
)

// ThesisMix says how many jobs of a class each queue submits.
type ThesisMix struct {
	Class        ThesisClass
	JobsPerQueue int
}

// ThesisExperiment returns the job mix of the PRRL thesis' experiment n (§4.3.2), each
// of 3 queues submitting at once: 1 → 100 small jobs; 2 → 50 normal; 3 → 20 large;
// 4 → all of them (100 small, 50 normal and 20 large).
func ThesisExperiment(n int) ([]ThesisMix, error) {
	small, normal, large := ThesisMix{ThesisSmall, 100}, ThesisMix{ThesisNormal, 50}, ThesisMix{ThesisLarge, 20}
	switch n {
	case 1:
		return []ThesisMix{small}, nil
	case 2:
		return []ThesisMix{normal}, nil
	case 3:
		return []ThesisMix{large}, nil
	case 4:
		return []ThesisMix{small, normal, large}, nil
	}
	return nil, fieldErr("thesis experiment", n, ErrInvalidValue)
}

// Thesis generates the PRRL thesis' workload (docs/methods.md §10, thesis §4.3.1): every
// queue (WithQueues; three by default) submits the mix at time 0 — JobsPerQueue jobs of
// each class, times WithScale (rounded, at least one) — in an order shuffled per queue
// with r; the queues' jobs are interleaved round-robin (queue1's first, queue2's first,
// ...) and named job00000, job00001, ... in that order, which is the submission order a
// FIFO scheduler sees. Jobs are map-only: one task per block (WithBlockSize, 128 MiB by
// default), lasting the class's TaskTime on a normal node. A task's true profile has
// the three map stages — read 10% of the time (0.3 core, disk-io), compute 80% (1
// core), spill 10% (0.5 core, writing a tenth of the block) — with 1 GiB of memory
// throughout, so that a node of ThesisCluster (4 cores, 4 slots) runs four at once. The
// request is the peak (WithOverestimate defaults to [1, 1] here) and jitter defaults to
// 0. Jobs of a class share the Logic "thesis-<class>", so all their tasks are similar.
// Every task is batch unless WithLatencySensitive makes a share of the jobs
// latency-sensitive (drawn last).
func Thesis(r *rand.Rand, mix []ThesisMix, opts ...Option) (Workload, error) {
	if r == nil {
		return Workload{}, fieldErr("rand", nil, ErrNilRand)
	}
	if len(mix) == 0 {
		return Workload{}, fieldErr("mix", 0, ErrEmpty)
	}
	c := defaults()
	c.overLo, c.overHi, c.jitter = 1, 1, 0
	if err := c.apply(opts); err != nil {
		return Workload{}, err
	}
	var classes []ThesisClass
	tasksPerQueue := 0
	for i, m := range mix {
		f := func(n string) string { return fmt.Sprintf("mix[%d].%s", i, n) }
		switch {
		case m.Class.Name == "":
			return Workload{}, fieldErr(f("Class.Name"), m.Class.Name, ErrEmpty)
		case m.Class.Blocks <= 0:
			return Workload{}, fieldErr(f("Class.Blocks"), m.Class.Blocks, ErrInvalidValue)
		case m.Class.TaskTime < MinStageDuration*10:
			return Workload{}, fieldErr(f("Class.TaskTime"), fmt.Sprintf("%v, want at least %v", m.Class.TaskTime, MinStageDuration*10), ErrInvalidValue)
		case m.JobsPerQueue < 0:
			return Workload{}, fieldErr(f("JobsPerQueue"), m.JobsPerQueue, ErrInvalidValue)
		case float64(m.Class.Blocks)*float64(c.blockSize) >= math.MaxInt64/2:
			return Workload{}, fieldErr(f("Class.Blocks"), fmt.Sprintf("%d blocks of %d bytes", m.Class.Blocks, c.blockSize), ErrTooLarge)
		}
		nf := 0.0
		if m.JobsPerQueue > 0 {
			nf = max(1, math.Round(float64(m.JobsPerQueue)*c.scale))
		}
		// Checked in floating point first: the product may not fit an int.
		if float64(tasksPerQueue)+nf*float64(m.Class.Blocks) > float64(c.maxTasks)/float64(len(c.queues)) {
			return Workload{}, fieldErr("tasks", fmt.Sprintf("more than %d (WithMaxTasks); use WithScale", c.maxTasks), ErrTooLarge)
		}
		n := int(nf)
		for k := 0; k < n; k++ {
			classes = append(classes, m.Class)
		}
		tasksPerQueue += n * m.Class.Blocks
	}
	if len(classes) == 0 {
		return Workload{}, fieldErr("mix", "no jobs", ErrEmpty)
	}
	orders := make([][]ThesisClass, len(c.queues))
	for q := range orders {
		orders[q] = append([]ThesisClass(nil), classes...)
		r.Shuffle(len(orders[q]), func(a, b int) { orders[q][a], orders[q][b] = orders[q][b], orders[q][a] })
	}
	var w Workload
	w.Name = fmt.Sprintf("thesis-%d-queues-%d-jobs", len(c.queues), len(classes)*len(c.queues))
	w.Jobs = make([]Job, 0, len(classes)*len(c.queues))
	width := max(5, digits(cap(w.Jobs)))
	app := thesisApp
	for k := range classes {
		for q := range c.queues {
			cl := orders[q][k]
			factor := c.overLo + (c.overHi-c.overLo)*r.Float64()
			w.Jobs = append(w.Jobs, build(&w, &c, r, jobSpec{
				id: fmt.Sprintf("job%0*d", width, len(w.Jobs)), queue: c.queues[q], app: &app,
				logic: "thesis-" + cl.Name, in: int64(cl.Blocks) * c.blockSize, factor: factor,
				thesisTime: cl.TaskTime, thesisClass: cl.Name,
			}))
		}
	}
	c.classify(&w, r)
	return w, nil
}

// thesisApp stands in for the application of thesis jobs; only its name is used.
var thesisApp = AppClass{Name: "thesis"}

// thesisProfile is a thesis map task reading in bytes and writing out bytes in total
// time d on a normal node.
func thesisProfile(in, out int64, d time.Duration, j Jitter) stage.Profile {
	secs := d.Seconds()
	st := [3]stage.Stage{
		mkStage(j, 0.1*secs, 300, GiB, in, SlotDiskIO),
		mkStage(j, 0.8*secs, 1000, GiB, 0, 0),
		mkStage(j, 0.1*secs, 500, GiB, out, SlotDiskIO),
	}
	if j.Sigma == 0 || j.Rand == nil {
		// Exact: the three stages add up to d.
		st[0].Duration = d / 10
		st[2].Duration = d / 10
		st[1].Duration = d - 2*(d/10)
	}
	return stage.MustProfile(schema, st[:]...)
}
