package workload

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Alibaba2017Task is one row of the batch_task table of Alibaba's cluster-trace-v2017
// (alibaba/clusterdata, about 1,300 machines running online services and batch jobs
// side by side): one task of a batch job, which runs Instances copies of the same
// binary with the same request on different input. It holds what the file says,
// including rows a simulation cannot use (see FromAlibaba2017).
type Alibaba2017Task struct {
	// Create is column 1, the task's creation time: whole seconds from the trace's
	// start. Negative for tasks created before the trace period (the trace's
	// documentation says so; 93 of the 40,000 rows of the shared sample).
	Create time.Duration
	// End is column 2, the time of the task's latest state change (its end, for a
	// Terminated task): whole seconds from the trace's start, possibly negative.
	End time.Duration
	// Job is column 3, the job ID (a non-negative integer).
	Job int64
	// Task is column 4, the task ID (a non-negative integer); the pair (Job, Task) is
	// unique within a file.
	Task int64
	// Instances is column 5, the number of instances of the task (0 to 2³¹−1).
	Instances int
	// Status is column 6 as written: Terminated, Waiting, Running, Failed (the trace's
	// documentation also names Ready and Cancelled); possibly empty.
	Status string
	// CPU is column 7, the CPUs requested per instance in hundredths of a core (50 =
	// half a core); meaningful only when HasCPU.
	CPU int64
	// HasCPU reports whether column 7 holds a value (Waiting tasks leave it empty).
	HasCPU bool
	// Memory is column 8, the memory requested per instance, normalised to [0, 1] (a
	// share of a machine's memory; the trace does not disclose the machines' size);
	// meaningful only when HasMemory.
	Memory float64
	// HasMemory reports whether column 8 holds a value.
	HasMemory bool
	// Line is the 1-based line of the file the row was read from (0 if built by hand).
	Line int
}

// alibaba2017Fields is the number of columns of batch_task.
const alibaba2017Fields = 8

var alibaba2017Columns = [alibaba2017Fields]string{
	"task create time", "task end time", "job id", "task id", "number of instances", "status",
	"cpu request", "memory request",
}

// maxInstances is the most instances a batch_task row may declare.
const maxInstances = math.MaxInt32

// utf8BOM is the byte-order mark some tools write at the start of a text file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// trimLine returns line b of a trace without its trailing '\r' and, when start (no
// line but blank ones read so far), without a leading UTF-8 byte-order mark: what every
// parser of the package does to a line before reading it.
func trimLine(b []byte, start bool) []byte {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if start {
		b = bytes.TrimPrefix(b, utf8BOM)
	}
	return b
}

// ParseAlibaba2017 reads the batch_task table of Alibaba's cluster-trace-v2017: one
// task a line, eight comma-separated fields — task create time, task end time (whole
// seconds, possibly negative), job id, task id, number of instances (non-negative
// integers), status (text), CPUs requested per instance in hundredths of a core (a
// non-negative integer) and memory requested per instance normalised to [0, 1] (a
// decimal number). The last two may be empty (HasCPU, HasMemory). Spaces, tabs and
// carriage returns around fields (so CRLF line ends), blank lines and a UTF-8
// byte-order mark are ignored.
// A first line whose first field starts with a letter is a header (the shared sample
// has one, "task_create_time, task_end_time, job_id, ..."; the published trace has
// none) and is skipped; it must still have eight fields. Rows are returned in file
// order.
//
// The parser reports what the file says: rows a simulation cannot use — a status other
// than Terminated, empty requests, an end before the creation, no instances — are
// returned as they are, and FromAlibaba2017 skips them under its documented rule.
//
// name names the input in errors: a malformed line gives a *ParseError
// "name:line:column: field: ..." wrapping ErrSyntax (not eight fields, not a number,
// NaN or infinite memory, a line over 1 MiB), ErrInvalidValue (a negative ID, instance
// count or CPU request, memory outside [0, 1], a number out of range) or
// ErrDuplicateID (a (job, task) pair seen on an earlier line, which the message names);
// an input without rows gives one wrapping ErrEmpty.
func ParseAlibaba2017(r io.Reader, name string) ([]Alibaba2017Task, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	// Rows are about 50 bytes; a good guess saves the slice and map regrowth.
	guess := int(min(sizeHint(r)/40, 1<<17))
	rows := make([]Alibaba2017Task, 0, guess)
	type key struct{ job, task int64 }
	seen := make(map[key]int, guess)
	statuses := map[string]string{}
	line := 0
	first := true
	var f [alibaba2017Fields + 1][]byte
	for sc.Scan() {
		line++
		b := trimLine(sc.Bytes(), first)
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		n := splitFields(f[:], b, ',')
		header := first && len(f[0]) > 0 && isLetter(f[0][0])
		first = false
		if n != alibaba2017Fields {
			if n < alibaba2017Fields {
				return nil, colErr(name, line, n+1, alibaba2017Columns[n], "", fmt.Errorf("%w: missing (want %d fields, got %d)", ErrSyntax, alibaba2017Fields, n))
			}
			return nil, colErr(name, line, alibaba2017Fields+1, "extra field", string(f[alibaba2017Fields]), fmt.Errorf("%w: want %d fields, got %d", ErrSyntax, alibaba2017Fields, n))
		}
		if header {
			continue
		}
		t := Alibaba2017Task{Line: line}
		var err error
		col := 0
		fail := func(err error) error {
			return colErr(name, line, col+1, alibaba2017Columns[col], string(f[col]), err)
		}
		for col = 0; col < 2; col++ {
			dst := &t.Create
			if col == 1 {
				dst = &t.End
			}
			if *dst, err = parseWholeSeconds(f[col]); err != nil {
				return nil, fail(err)
			}
		}
		for col = 2; col < 4; col++ {
			dst := &t.Job
			if col == 3 {
				dst = &t.Task
			}
			if *dst, err = parseBytes(f[col]); err != nil {
				return nil, fail(err)
			}
		}
		col = 4
		v, err := parseBytes(f[col])
		if err == nil && v > maxInstances {
			err = fmt.Errorf("%w: more than %d instances", ErrInvalidValue, maxInstances)
		}
		if err != nil {
			return nil, fail(err)
		}
		t.Instances = int(v)
		col = 5
		s, ok := statuses[string(f[col])]
		if !ok {
			s = string(f[col])
			statuses[s] = s
		}
		t.Status = s
		col = 6
		if len(f[col]) > 0 {
			t.CPU, err = parseBytes(f[col])
			if err == nil && t.CPU > math.MaxInt64/10 {
				err = fmt.Errorf("%w: too large", ErrInvalidValue)
			}
			if err != nil {
				return nil, fail(err)
			}
			t.HasCPU = true
		}
		col = 7
		if len(f[col]) > 0 {
			if t.Memory, err = parseShare(f[col]); err != nil {
				return nil, fail(err)
			}
			t.HasMemory = true
		}
		k := key{t.Job, t.Task}
		if at, dup := seen[k]; dup {
			col = 3
			return nil, fail(fmt.Errorf("%w: job %d task %d (first on line %d)", ErrDuplicateID, t.Job, t.Task, at))
		}
		seen[k] = line
		rows = append(rows, t)
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(name, line+1, err)
	}
	if len(rows) == 0 {
		return nil, lineErr(name, line, "", fmt.Errorf("%w: no tasks", ErrEmpty))
	}
	return rows, nil
}

// LoadAlibaba2017 reads the batch_task file at path (see ParseAlibaba2017); errors
// name the path.
func LoadAlibaba2017(path string) ([]Alibaba2017Task, error) { return load(path, ParseAlibaba2017) }

// splitFields splits b at every sep, trims spaces, tabs and '\r' around each field,
// stores the first len(dst) fields in dst and returns how many fields b has.
func splitFields(dst [][]byte, b []byte, sep byte) int {
	n := 0
	for {
		i := bytes.IndexByte(b, sep)
		field := b
		if i >= 0 {
			field = b[:i]
		}
		if n < len(dst) {
			dst[n] = trimField(field)
		}
		n++
		if i < 0 {
			return n
		}
		b = b[i+1:]
	}
}

// trimField trims spaces, tabs and '\r' around b.
func trimField(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// parseWholeSeconds reads a whole number of seconds, possibly negative.
func parseWholeSeconds(b []byte) (time.Duration, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
			return 0, fmt.Errorf("%w: not an integer", ErrSyntax)
		}
	}
	v, err := parseBytes(b)
	if err != nil {
		return 0, err
	}
	if v > math.MaxInt64/int64(time.Second) {
		return 0, fmt.Errorf("%w: too large", ErrInvalidValue)
	}
	if neg {
		v = -v
	}
	return time.Duration(v) * time.Second, nil
}

// parseShare reads a decimal number in [0, 1].
func parseShare(b []byte) (float64, error) {
	x, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: not a number", ErrSyntax)
	case !field.Finite(x) && (err == nil || math.IsNaN(x)):
		return 0, fmt.Errorf("%w: not a finite number", ErrSyntax)
	case !(x >= 0 && x <= 1):
		return 0, fmt.Errorf("%w: outside [0, 1]", ErrInvalidValue)
	}
	return x + 0, nil // + 0 turns -0 into 0
}

// DefaultAlibaba2017MachineMemory is the memory of one machine of cluster-trace-v2017
// that FromAlibaba2017 multiplies the trace's normalised memory requests by: 64 GiB.
// The trace discloses no memory size (its documentation says memory is normalised for
// confidentiality, and the question is open on the alibaba/clusterdata tracker); it
// does say the machines have 64 CPUs, and 64 GiB, 1 GiB per CPU, is the figure chosen
// here. The sample's median request, 0.0054, is then about 354 MiB an instance; set
// another size with WithMachineMemory.
const DefaultAlibaba2017MachineMemory = 64 * GiB

// maxMachineMemory bounds WithMachineMemory: 1 PiB.
const maxMachineMemory = 1 << 50

// WithMachineMemory sets the memory of one machine, in bytes, that FromAlibaba2017
// multiplies the trace's normalised memory requests by (other generators ignore it).
// Default DefaultAlibaba2017MachineMemory (64 GiB). Must be positive and at most 1 PiB.
func WithMachineMemory(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 || bytes > maxMachineMemory {
			return optErr("machine memory", bytes)
		}
		c.machine = bytes
		return nil
	}
}

// Alibaba2017Stats says what FromAlibaba2017 made of the rows it was given. Every row is
// either used or skipped for exactly one reason, the first that applies in the order of
// the fields below: Rows = Used + NotTerminated + NoRequest + BadTimes + NoInstances.
type Alibaba2017Stats struct {
	// Rows is the number of rows given.
	Rows int
	// Used is the number of rows turned into tasks.
	Used int
	// NotTerminated counts rows skipped because their status is not "Terminated"
	// (Waiting, Running, Failed, ...): they did not run to completion in the trace, so
	// their times do not say how long they take.
	NotTerminated int
	// NoRequest counts Terminated rows skipped because their CPU or memory request is
	// empty.
	NoRequest int
	// BadTimes counts rows skipped because their End is not after their Create.
	BadTimes int
	// NoInstances counts rows skipped because they have no instances.
	NoInstances int
	// Jobs is the number of jobs built: the trace jobs with at least one used row.
	Jobs int
	// Instances is the number of trace instances of the used rows, before WithScale.
	Instances int64
	// Tasks is the number of tasks built.
	Tasks int
}

// Skipped returns the number of rows skipped, for all reasons.
func (s Alibaba2017Stats) Skipped() int {
	return s.NotTerminated + s.NoRequest + s.BadTimes + s.NoInstances
}

// The true-usage model of FromAlibaba2017: the share of a task's duration each stage
// takes, and each stage's cpu and memory as a share of the task's drawn level.
var (
	aliStageShare = [3]float64{0.1, 0.8, 0.1}
	aliCPUShape   = [3]float64{0.6, 1, 0.7}
	aliMemShape   = [3]float64{0.5, 1, 1}
)

// The range of a trace task's drawn usage level, a share of its request.
const (
	aliLevelLo = 0.4
	aliLevelHi = 0.9
)

// FromAlibaba2017 turns rows of cluster-trace-v2017's batch_task table (see
// ParseAlibaba2017) into a workload, and says what it used and skipped. name (e.g. the
// file's base name; "alibaba2017" if empty) prefixes the jobs' Logic.
//
// Which rows are used: a row is used when its status is "Terminated", both its
// requests are present, its End is after its Create and it has instances; the others
// are skipped and counted in the stats under the first of these reasons that applies
// (status, request, times, instances). Of the shared 40,000-row sample, 33,308 rows
// are used (6,679 skipped for their status, 13 for their times).
//
// What is built:
//   - one job per trace job with a used row, with ID "j<job id>", submitted at the
//     earliest Create of its used rows, rebased so that the first job arrives at 0;
//     jobs in submission order, ties by job ID. Each job draws a queue uniformly from
//     WithQueues. App is "batch".
//   - one task per instance of each used row, ID "j<job>/t<task>/i00000", ...; with
//     WithScale, ceil(instances × scale) tasks, at least one. All are map tasks without
//     input blocks (the sample has no data sizes) and all are runnable when the job
//     arrives: the trace's task-level DAG dependencies are not in batch_task and are not
//     modelled.
//   - instances of one trace task are similar tasks: the job's Logic is name + "/j<job>"
//     and every instance's Task.Logic is "t<task>", so Job.Key gives the instances of
//     one trace task one key and different trace tasks different keys, and an
//     estimator learns each trace task from its siblings. The sample has no data
//     sizes: InputBytes is 0 (as are the job's InputBytes and the workload's Blocks).
//   - requests, per instance, from the trace: cpu = hundredths of a core × 10
//     milli-cores, memory = the normalised request × WithMachineMemory (64 GiB by
//     default) rounded up to a whole byte, no disk-io or net-io. WithOverestimate and
//     WithRequestRounding do not apply: the trace says what users declared.
//   - every task is batch: batch_task is the trace's batch side alone (its online
//     services are in other tables, container_event and container_usage, which this
//     loader does not read), unless WithLatencySensitive makes a share of the jobs
//     latency-sensitive, with SLOs by WithSLOFactor.
//
// The true usage is a seeded model, since the trace's batch_task table has requests and
// times only. Each trace task draws, in this order, a cpu level and a memory level,
// each uniform in [0.4, 0.9] of its request; its instances have three stages —
// start-up, steady, tail — lasting 10%, 80% and 10% of End − Create, using 60%, 100%
// and 70% of the cpu level and 50%, 100% and 100% of the memory level (memory rises,
// then stays), each demand rounded down, so no stage demands more than the request and
// the true memory peak never exceeds the requested memory. Every instance of a trace
// task has this shape; each instance's stages are stretched together by its own
// log-normal jitter factor (WithJitter's sigma, drawn as Jitter does), and every stage
// lasts at least MinStageDuration. End − Create spans the whole trace task, from its
// creation to its last state change, so it includes the time its instances waited and,
// when they ran in waves, every wave: an upper bound on one instance's run time, used
// for want of the instance table.
//
// Options used: WithScale, WithMaxTasks, WithQueues, WithJitter, WithMachineMemory,
// WithLatencySensitive and WithSLOFactor; the others are ignored. Draws from r, in this
// order, for each job in submission order: its queue, then for each of its trace tasks
// in order the cpu level, the memory level, and one jitter draw per instance (none
// when sigma is 0); then the latency-sensitive jobs (WithLatencySensitive). The same r
// state, rows and options give the same workload. It fails on a nil r, no
// rows, an invalid option, a row that ParseAlibaba2017 would not return (a negative ID,
// instance count or CPU request, memory outside [0, 1], a (job, task) pair given
// twice), no usable row (ErrEmpty), or more tasks than WithMaxTasks (ErrTooLarge; the
// sample has 5,046,025 instances in used rows, so use WithScale(0.01) or so). The stats
// count every row also when the error is ErrEmpty or ErrTooLarge (Tasks stays 0 then),
// and as far as the rows were examined on an invalid row.
func FromAlibaba2017(name string, rows []Alibaba2017Task, r *rand.Rand, opts ...Option) (Workload, Alibaba2017Stats, error) {
	st := Alibaba2017Stats{Rows: len(rows)}
	if r == nil {
		return Workload{}, st, fieldErr("rand", nil, ErrNilRand)
	}
	if len(rows) == 0 {
		return Workload{}, st, fieldErr("rows", 0, ErrEmpty)
	}
	c := defaults()
	if err := c.apply(opts); err != nil {
		return Workload{}, st, err
	}
	if name == "" {
		name = "alibaba2017"
	}
	machine := c.machine
	if machine == 0 {
		machine = DefaultAlibaba2017MachineMemory
	}

	// Check and classify the rows; group the used ones by job.
	type key struct{ job, task int64 }
	seen := make(map[key]int, len(rows))
	byJob := make(map[int64][]int)
	var jobIDs []int64
	tasks := int64(0)
	for i := range rows {
		t := &rows[i]
		f := func(n string) string { return fmt.Sprintf("rows[%d](j%d/t%d).%s", i, t.Job, t.Task, n) }
		switch {
		case t.Job < 0:
			return Workload{}, st, fieldErr(f("Job"), t.Job, ErrInvalidValue)
		case t.Task < 0:
			return Workload{}, st, fieldErr(f("Task"), t.Task, ErrInvalidValue)
		case t.Instances < 0 || t.Instances > maxInstances:
			return Workload{}, st, fieldErr(f("Instances"), t.Instances, ErrInvalidValue)
		case t.HasCPU && (t.CPU < 0 || t.CPU > math.MaxInt64/10):
			return Workload{}, st, fieldErr(f("CPU"), t.CPU, ErrInvalidValue)
		case t.HasMemory && !(t.Memory >= 0 && t.Memory <= 1):
			return Workload{}, st, fieldErr(f("Memory"), t.Memory, ErrInvalidValue)
		}
		k := key{t.Job, t.Task}
		if at, dup := seen[k]; dup {
			return Workload{}, st, fieldErr(f("Task"), fmt.Sprintf("%d (also rows[%d])", t.Task, at), ErrDuplicateID)
		}
		seen[k] = i
		switch {
		case t.Status != "Terminated":
			st.NotTerminated++
			continue
		case !t.HasCPU || !t.HasMemory:
			st.NoRequest++
			continue
		case t.End <= t.Create:
			st.BadTimes++
			continue
		case t.Instances == 0:
			st.NoInstances++
			continue
		}
		st.Used++
		st.Instances += int64(t.Instances)
		if _, ok := byJob[t.Job]; !ok {
			jobIDs = append(jobIDs, t.Job)
		}
		byJob[t.Job] = append(byJob[t.Job], i)
		tasks = min(tasks+scaledInstances(t.Instances, c.scale), math.MaxInt64/2) // saturate
	}
	if st.Used == 0 {
		return Workload{}, st, fieldErr("rows", fmt.Sprintf("none of %d usable (%d not Terminated, %d without requests, %d ending before they start, %d without instances)",
			st.Rows, st.NotTerminated, st.NoRequest, st.BadTimes, st.NoInstances), ErrEmpty)
	}

	if tasks > int64(c.maxTasks) {
		return Workload{}, st, fieldErr("tasks", fmt.Sprintf("%d, more than %d (WithMaxTasks); use WithScale", tasks, c.maxTasks), ErrTooLarge)
	}

	// Order the jobs by submission, their rows by creation.
	type jobRef struct {
		id     int64
		submit time.Duration
		rows   []int
	}
	jobs := make([]jobRef, len(jobIDs))
	for i, id := range jobIDs {
		rs := byJob[id]
		slices.SortFunc(rs, func(a, b int) int {
			if c := cmp.Compare(rows[a].Create, rows[b].Create); c != 0 {
				return c
			}
			return cmp.Compare(rows[a].Task, rows[b].Task)
		})
		jobs[i] = jobRef{id: id, submit: rows[rs[0]].Create, rows: rs}
	}
	slices.SortFunc(jobs, func(a, b jobRef) int {
		if c := cmp.Compare(a.submit, b.submit); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	st.Jobs = len(jobs)

	base := jobs[0].submit
	w := Workload{Name: name, Jobs: make([]Job, len(jobs))}
	jit := Jitter{Rand: r, Sigma: c.jitter}
	for i, jr := range jobs {
		id := "j" + strconv.FormatInt(jr.id, 10)
		j := Job{
			ID: id, Queue: c.queues[r.IntN(len(c.queues))], Submit: subSat(jr.submit, base),
			App: "batch", Logic: name + "/" + id,
		}
		n := 0
		for _, ri := range jr.rows {
			n += int(scaledInstances(rows[ri].Instances, c.scale)) // at most c.maxTasks
		}
		j.Tasks = make([]Task, 0, n)
		for _, ri := range jr.rows {
			t := &rows[ri]
			var req resource.Tuple
			req[SlotCPU] = t.CPU * 10
			req[SlotMemory] = int64(math.Ceil(t.Memory * float64(machine)))
			levelCPU := aliLevelLo + (aliLevelHi-aliLevelLo)*r.Float64()
			levelMem := aliLevelLo + (aliLevelHi-aliLevelLo)*r.Float64()
			var demand [3]resource.Tuple
			for s := range demand {
				demand[s][SlotCPU] = int64(math.Floor(aliCPUShape[s] * levelCPU * float64(req[SlotCPU])))
				demand[s][SlotMemory] = int64(math.Floor(aliMemShape[s] * levelMem * float64(req[SlotMemory])))
			}
			secs := (float64(t.End) - float64(t.Create)) / float64(time.Second)
			prefix := id + "/t" + strconv.FormatInt(t.Task, 10)
			var shared stage.Profile
			for k, m := 0, int(scaledInstances(t.Instances, c.scale)); k < m; k++ {
				p := shared
				if f := jit.factor(); f != 1 || p.Len() == 0 {
					var sts [3]stage.Stage
					for s := range sts {
						sts[s] = stage.Stage{Duration: durationOf(aliStageShare[s] * secs * f), Demand: demand[s]}
					}
					p = stage.MustProfile(schema, sts[:]...) // valid by construction
					if f == 1 {
						shared = p // without jitter, siblings share one profile
					}
				}
				j.Tasks = append(j.Tasks, Task{
					ID: taskID(prefix, "/i", k, 5), Kind: Map, Logic: "t" + strconv.FormatInt(t.Task, 10), True: p, Request: req,
				})
			}
		}
		st.Tasks += len(j.Tasks)
		w.Jobs[i] = j
	}
	c.classify(&w, r)
	return w, st, nil
}

// scaledInstances is the number of tasks FromAlibaba2017 builds for n instances:
// ceil(n × scale), at least 1.
func scaledInstances(n int, scale float64) int64 {
	if scale == 1 {
		return max(1, int64(n))
	}
	return max(1, int64(math.Ceil(float64(n)*scale)))
}

// subSat returns a − b for a ≥ b, saturating at stage.Forever.
func subSat(a, b time.Duration) time.Duration {
	if d := a - b; d >= 0 {
		return d
	}
	return stage.Forever
}
