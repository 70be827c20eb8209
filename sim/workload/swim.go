package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"time"
)

// SWIMJob is one line of a SWIM workload file (the Statistical Workload Injector for
// MapReduce, UC Berkeley; e.g. FB-2009_samples_24_times_1hr_0.tsv): a job, its arrival
// and its data sizes. Tasks are derived from it by FromSWIM.
type SWIMJob struct {
	// ID is column 1, e.g. "job0"; unique within a file.
	ID string
	// Submit is column 2: the submit time, seconds from the trace's start.
	Submit time.Duration
	// Gap is column 3: the gap since the previous job's submission, seconds.
	Gap time.Duration
	// InputBytes is column 4: the map input.
	InputBytes int64
	// ShuffleBytes is column 5: the data shuffled from maps to reduces.
	ShuffleBytes int64
	// OutputBytes is column 6: the reduce (final) output.
	OutputBytes int64
	// Line is the 1-based line of the file the job was read from (0 if built by hand).
	Line int
}

// MapTasks returns the number of map tasks FromSWIM derives for the job with the given
// block size: ceil(InputBytes / blockSize), and 1 for a job without input (SWIM replays
// such jobs as one empty map task: the job still exists and still shuffles and writes
// what the trace says). blockSize must be positive.
func (j SWIMJob) MapTasks(blockSize int64) int { return numMaps(j.InputBytes, max(1, blockSize)) }

// ReduceTasks returns the number of reduce tasks FromSWIM derives for the job:
// ceil(ShuffleBytes / bytesPerReduce), one reduce per bytesPerReduce of shuffle (1 GiB
// by default) and 0 for a job without shuffle (map-only; its maps write the output).
// bytesPerReduce must be positive.
func (j SWIMJob) ReduceTasks(bytesPerReduce int64) int {
	return numReduces(j.ShuffleBytes, max(1, bytesPerReduce))
}

// maxLine is the longest line ParseSWIM and ParsePlanetLab accept.
const maxLine = 1 << 20

var swimColumns = [6]string{"job id", "submit time", "gap", "input bytes", "shuffle bytes", "output bytes"}

// ParseSWIM reads a SWIM workload in its TSV format: one job a line, at least six
// fields separated by tabs (or spaces) — job id, submit time (s), gap since the
// previous submission (s), map input bytes, shuffle bytes, reduce output bytes. Times
// are non-negative decimal numbers of seconds; byte counts non-negative integers. Fields
// past the sixth (some SWIM files add input paths) are ignored, as are blank lines,
// lines starting with '#', a trailing '\r' and a UTF-8 byte-order mark at the start.
// Jobs are returned in file order.
//
// name names the input in errors: a malformed line gives a *ParseError
// "name:line:column: field: ..." wrapping ErrSyntax (not a number, too few fields, a
// line over 1 MiB), ErrInvalidValue (negative or out of range) or ErrDuplicateID (a job
// ID seen on an earlier line, which the message names); an input without jobs gives
// one wrapping ErrEmpty.
func ParseSWIM(r io.Reader, name string) ([]SWIMJob, error) {
	return parseSWIM(r, name, sizeHint(r))
}

// sizeHint guesses the bytes r holds, for pre-sizing; 0 when unknown.
func sizeHint(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }: // bytes.Reader, strings.Reader, bytes.Buffer
		return int64(v.Len())
	case *os.File:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return 0
}

func parseSWIM(r io.Reader, name string, size int64) ([]SWIMJob, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	// SWIM lines are about 40 bytes; a good guess saves the slice and map regrowth.
	guess := int(min(size/32, 1<<16))
	jobs := make([]SWIMJob, 0, guess)
	seen := make(map[string]int, guess)
	line := 0
	start := true // no line but blank ones read yet
	var f [6][]byte
	for sc.Scan() {
		line++
		b := trimLine(sc.Bytes(), start)
		n := 0
		for i := 0; i < len(b); {
			for i < len(b) && (b[i] == '\t' || b[i] == ' ') {
				i++
			}
			if i == len(b) {
				break
			}
			s := i
			for i < len(b) && b[i] != '\t' && b[i] != ' ' {
				i++
			}
			if n < len(f) {
				f[n] = b[s:i]
			}
			n++
		}
		if n == 0 {
			continue
		}
		start = false
		if f[0][0] == '#' {
			continue
		}
		if n < 6 {
			return nil, colErr(name, line, n+1, swimColumns[n], "", fmt.Errorf("%w: missing (want 6 fields, got %d)", ErrSyntax, n))
		}
		j := SWIMJob{ID: string(f[0]), Line: line}
		if k, dup := seen[j.ID]; dup {
			return nil, colErr(name, line, 1, swimColumns[0], j.ID, fmt.Errorf("%w (first on line %d)", ErrDuplicateID, k))
		}
		var err error
		if j.Submit, err = parseSeconds(f[1]); err != nil {
			return nil, colErr(name, line, 2, swimColumns[1], string(f[1]), err)
		}
		if j.Gap, err = parseSeconds(f[2]); err != nil {
			return nil, colErr(name, line, 3, swimColumns[2], string(f[2]), err)
		}
		for c, dst := range []*int64{&j.InputBytes, &j.ShuffleBytes, &j.OutputBytes} {
			if *dst, err = parseBytes(f[3+c]); err != nil {
				return nil, colErr(name, line, 4+c, swimColumns[3+c], string(f[3+c]), err)
			}
		}
		seen[j.ID] = line
		jobs = append(jobs, j)
	}
	if err := sc.Err(); err != nil {
		return nil, scanErr(name, line+1, err)
	}
	if len(jobs) == 0 {
		return nil, lineErr(name, line, "", fmt.Errorf("%w: no jobs", ErrEmpty))
	}
	return jobs, nil
}

// LoadSWIM reads the SWIM workload file at path (see ParseSWIM); errors name the path.
func LoadSWIM(path string) ([]SWIMJob, error) { return load(path, ParseSWIM) }

// load opens the file at path and parses it with parse, which names it by its path.
func load[T any](path string, parse func(io.Reader, string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("workload: %w", err)
	}
	defer f.Close()
	return parse(f, path)
}

// scanErr is the error for a read that failed at line: a line over maxLine, or the
// reader's own error.
func scanErr(file string, line int, err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return lineErr(file, line, "", fmt.Errorf("%w: line longer than %d bytes", ErrSyntax, maxLine))
	}
	return lineErr(file, line, "", err)
}

// parseBytes reads a non-negative decimal integer.
func parseBytes(b []byte) (int64, error) {
	if len(b) > 0 && b[0] == '-' {
		return 0, fmt.Errorf("%w: negative", ErrInvalidValue)
	}
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: not an integer", ErrSyntax)
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: not an integer", ErrSyntax)
		}
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, fmt.Errorf("%w: too large", ErrInvalidValue)
		}
		v = v*10 + d
	}
	return v, nil
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// maxSeconds is the largest time in seconds a Duration holds.
const maxSeconds = float64(math.MaxInt64) / float64(time.Second)

// parseSeconds reads a non-negative number of seconds: exactly (to the nanosecond,
// rounding further digits half up) when written as digits[.digits], through
// strconv.ParseFloat otherwise (exponents, "inf").
func parseSeconds(b []byte) (time.Duration, error) {
	whole, frac, dot := bytes.Cut(b, []byte{'.'})
	if v, err := parseBytes(whole); err == nil && (!dot || isDigits(frac)) && (len(whole) > 0 || len(frac) > 0) {
		if v > math.MaxInt64/int64(time.Second) {
			return 0, fmt.Errorf("%w: too large", ErrInvalidValue)
		}
		d := time.Duration(v) * time.Second
		var ns int64
		for i := 0; i < 9; i++ {
			ns *= 10
			if i < len(frac) {
				ns += int64(frac[i] - '0')
			}
		}
		if len(frac) > 9 && frac[9] >= '5' {
			ns++
		}
		if d > time.Duration(math.MaxInt64)-time.Duration(ns) {
			return 0, fmt.Errorf("%w: too large", ErrInvalidValue)
		}
		return d + time.Duration(ns), nil
	} else if errors.Is(err, ErrInvalidValue) {
		return 0, err
	}
	x, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%w: not a number", ErrSyntax)
	case math.IsNaN(x):
		return 0, fmt.Errorf("%w: not a number", ErrSyntax)
	case x < 0:
		return 0, fmt.Errorf("%w: negative", ErrInvalidValue)
	case err != nil || x >= maxSeconds:
		return 0, fmt.Errorf("%w: too large", ErrInvalidValue)
	}
	return time.Duration(math.Round(x * float64(time.Second))), nil
}

// FromSWIM turns the jobs of a SWIM trace into a workload (see ParseSWIM), in
// submission order (by Submit, ties in the given order). name (e.g. the file's base
// name; "swim" if empty) prefixes the jobs' Logic.
//
// Task derivation, documented for comparison with other simulators:
//   - byte counts are first multiplied by WithScale (rounded);
//   - map tasks: one per block of WithBlockSize bytes (128 MiB), ceil(input / block),
//     the last one partial; a job without input gets one map task reading nothing;
//   - reduce tasks: one per WithBytesPerReduce bytes of shuffle (1 GiB),
//     ceil(shuffle / 1 GiB), the last one partial; none when the shuffle is 0, and then
//     the maps write the job's output;
//   - map output (= shuffle, or output for map-only jobs) is split among the maps in
//     proportion to their input, the output among the reduces in proportion to their
//     shuffle;
//   - each job draws a queue (WithQueues) and an application class (WithApps), whose
//     rates and footprints give the true profiles; the sizes come from the trace. The
//     trace's jobs are all different, so each job's Logic is name + "/" + ID: its own
//     full-block map tasks share a similarity key, other jobs' do not. Its Family is
//     the class's name: the jobs of one class run the same application, and an
//     estimator that learns families (predict.WithFamily) predicts a job's tasks from
//     the class's earlier tasks of a similar size.
//   - every task is batch (the trace is of Hadoop jobs), unless WithLatencySensitive
//     makes a share of the jobs latency-sensitive (drawn last).
//
// It fails on a nil r, an invalid option, a job with an empty or duplicate ID or a
// negative field, or more tasks than WithMaxTasks (FB-2010 unscaled has about 8.6
// million map tasks: use WithScale(0.001) or so).
func FromSWIM(name string, jobs []SWIMJob, r *rand.Rand, opts ...Option) (Workload, error) {
	if r == nil {
		return Workload{}, fieldErr("rand", nil, ErrNilRand)
	}
	if len(jobs) == 0 {
		return Workload{}, fieldErr("jobs", 0, ErrEmpty)
	}
	c := defaults()
	if err := c.apply(opts); err != nil {
		return Workload{}, err
	}
	if name == "" {
		name = "swim"
	}
	seen := make(map[string]int, len(jobs))
	scaled := make([]SWIMJob, len(jobs))
	tasks := 0
	for i, j := range jobs {
		f := func(n string) string { return fmt.Sprintf("jobs[%d](%s).%s", i, j.ID, n) }
		switch {
		case j.ID == "":
			return Workload{}, fieldErr(f("ID"), j.ID, ErrEmpty)
		case j.Submit < 0:
			return Workload{}, fieldErr(f("Submit"), j.Submit, ErrInvalidValue)
		case j.InputBytes < 0:
			return Workload{}, fieldErr(f("InputBytes"), j.InputBytes, ErrInvalidValue)
		case j.ShuffleBytes < 0:
			return Workload{}, fieldErr(f("ShuffleBytes"), j.ShuffleBytes, ErrInvalidValue)
		case j.OutputBytes < 0:
			return Workload{}, fieldErr(f("OutputBytes"), j.OutputBytes, ErrInvalidValue)
		}
		if k, dup := seen[j.ID]; dup {
			return Workload{}, fieldErr(f("ID"), fmt.Sprintf("%s (also jobs[%d])", j.ID, k), ErrDuplicateID)
		}
		seen[j.ID] = i
		if c.scale != 1 {
			j.InputBytes = amount(float64(j.InputBytes) * c.scale)
			j.ShuffleBytes = amount(float64(j.ShuffleBytes) * c.scale)
			j.OutputBytes = amount(float64(j.OutputBytes) * c.scale)
		}
		maps, reduces := j.MapTasks(c.blockSize), j.ReduceTasks(c.perReduce)
		var ok bool
		if tasks, ok = addTasks(tasks, maps, reduces, c.maxTasks); !ok {
			return Workload{}, tooManyTasks(f("tasks"), tasks, maps, reduces, c.maxTasks)
		}
		scaled[i] = j
	}
	slices.SortStableFunc(scaled, func(a, b SWIMJob) int {
		switch {
		case a.Submit < b.Submit:
			return -1
		case a.Submit > b.Submit:
			return 1
		}
		return 0
	})
	w := Workload{Name: name, Jobs: make([]Job, len(scaled))}
	for i, j := range scaled {
		queue := c.queues[r.IntN(len(c.queues))]
		app := &c.apps[pick(r, c.weights, len(c.apps))]
		factor := c.overLo + (c.overHi-c.overLo)*r.Float64()
		w.Jobs[i] = build(&w, &c, r, jobSpec{
			id: j.ID, queue: queue, submit: j.Submit, app: app, logic: name + "/" + j.ID,
			in: j.InputBytes, trace: true, shuffle: j.ShuffleBytes, out: j.OutputBytes, factor: factor,
		})
	}
	c.classify(&w, r)
	return w, nil
}
