package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Byte-size units, for readability.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// The slots of Schema's dimensions in a resource.Tuple.
const (
	// SlotCPU holds processor time in milli-cores (compressible).
	SlotCPU = 0
	// SlotMemory holds resident memory in bytes (not compressible).
	SlotMemory = 1
	// SlotDiskIO holds disk bandwidth in bytes/s (compressible).
	SlotDiskIO = 2
	// SlotNetIO holds network bandwidth in bytes/s (compressible).
	SlotNetIO = 3
)

var schema = resource.MustSchema(resource.CPU, resource.Memory, resource.DiskIO, resource.NetIO)

// Schema returns the schema of every tuple and profile of this package: cpu
// (milli-cores, compressible), memory (bytes), disk-io and net-io (bytes/s,
// compressible), in the slots SlotCPU..SlotNetIO. It returns the same pointer on every
// call.
func Schema() *resource.Schema { return schema }

// YARNDims is the mask of the dimensions a YARN-like request-based scheduler reserves:
// cpu and memory. YARN does not reserve disk or network bandwidth, so a baseline that
// mimics it should compare Task.Request.Only(YARNDims()) against capacity.
func YARNDims() resource.Mask { return 1<<SlotCPU | 1<<SlotMemory }

// MinStageDuration is the shortest stage the task model produces: every generated task
// has three stages, and a stage of a task with (almost) no data to move still takes
// this long (bookkeeping, opening files, reporting).
const MinStageDuration = 100 * time.Millisecond

// AppClass is the task model of one application: the rates and footprints from which
// Profile derives a task's true stages given its input and output bytes. Rates are
// bytes per second on a node of speed 1 with no contention; CPU amounts are
// milli-cores; memory amounts are bytes. All tasks of a class have the same shape and
// differ only by size (and jitter), which is what makes similar-task prediction work.
//
// Map task (execution stages, docs/methods.md §2):
//
//	read:    Startup + in/ReadRate;  cpu ReadCPU;    memory MapMemory;                 disk-io = in / duration
//	compute: in/ComputeRate;         cpu ComputeCPU; memory MapMemory + CacheRatio×in
//	spill:   out/SpillRate;          cpu SpillCPU;   memory MapMemory + CacheRatio×in + SortBuffer; disk-io = out / duration
//
// Reduce task:
//
//	shuffle: Startup + in/ShuffleRate; cpu ShuffleCPU; memory ReduceMemory;          net-io = in / duration
//	sort:    in/SortRate;              cpu SortCPU;    memory ReduceMemory + min(SortMemoryRatio×in, SortMemoryCap)
//	reduce:  in/ReduceRate;            cpu ReduceCPU;  memory ReduceMemory;          disk-io = out / duration
//
// Every stage lasts at least MinStageDuration. IO demands are the average rate over the
// stage, what a node agent sampling /proc would see.
type AppClass struct {
	// Name identifies the class; generated jobs use it as their Logic.
	Name string
	// MapOutputRatio is map output (spilled, then shuffled) bytes per input byte.
	MapOutputRatio float64
	// ReduceOutputRatio is final output bytes per shuffled byte.
	ReduceOutputRatio float64
	// Startup is added to every task's first stage: JVM or executor launch.
	Startup time.Duration

	ReadRate    int64   // map read stage: bytes/s read from disk
	ReadCPU     int64   // map read stage: milli-cores
	ComputeRate int64   // map compute stage: input bytes processed per second
	ComputeCPU  int64   // map compute stage: milli-cores
	SpillRate   int64   // map spill stage: bytes/s written to local disk
	SpillCPU    int64   // map spill stage: milli-cores
	MapMemory   int64   // map task: resident memory outside caches and buffers
	CacheRatio  float64 // map compute and spill stages: cached bytes per input byte (Spark-like; 0 for MapReduce)
	SortBuffer  int64   // map spill stage: sort buffer

	ShuffleRate     int64   // reduce shuffle stage: bytes/s fetched over the network
	ShuffleCPU      int64   // reduce shuffle stage: milli-cores
	SortRate        int64   // reduce sort stage: bytes/s merged
	SortCPU         int64   // reduce sort stage: milli-cores
	SortMemoryRatio float64 // reduce sort stage: in-memory merge bytes per shuffled byte ...
	SortMemoryCap   int64   // ... up to this many bytes
	ReduceRate      int64   // reduce stage: shuffled bytes processed per second
	ReduceCPU       int64   // reduce stage: milli-cores
	ReduceMemory    int64   // reduce task: resident memory outside the merge buffer
}

// The default application classes, like the paper's MapReduce and Spark applications
// (FGM §4.1: "MapReduce, Spark and other frameworks ... Wikipedia data and random
// data"). The figures are chosen, not measured: per-task rates of one core of a 2012
// Xeon (E5-2670) reading from SAS disks, Hadoop 2 defaults for memory (1 GiB
// containers, 100–512 MiB sort buffers), and the well-known characters of the
// applications: WordCount is CPU-bound with a combiner (small map output), Sort moves
// all its data (output = input), Grep scans fast and emits almost nothing, a PageRank
// iteration joins a graph and emits more than it reads, and a Spark-like iterative
// application (k-means) caches its partition deserialised (≈3× its size on disk) and
// makes ten CPU-bound passes over it. On a 128 MiB block the map tasks last about 29 s,
// 7 s, 7 s, 23 s and 44 s; a reduce of 1 GiB 1.5 to 3 minutes. Each is a fresh copy; change fields to taste.
func WordCount() AppClass {
	return AppClass{
		Name: "wordcount", MapOutputRatio: 0.25, ReduceOutputRatio: 0.6, Startup: time.Second,
		ReadRate: 80 * MiB, ReadCPU: 300, ComputeRate: 5 * MiB, ComputeCPU: 1000,
		SpillRate: 60 * MiB, SpillCPU: 500, MapMemory: 768 * MiB, SortBuffer: 256 * MiB,
		ShuffleRate: 40 * MiB, ShuffleCPU: 200, SortRate: 40 * MiB, SortCPU: 900,
		SortMemoryRatio: 1, SortMemoryCap: GiB, ReduceRate: 10 * MiB, ReduceCPU: 1000, ReduceMemory: GiB,
	}
}

// Sort is the IO-bound TeraSort-like class; see WordCount for the defaults' rationale.
func Sort() AppClass {
	return AppClass{
		Name: "sort", MapOutputRatio: 1, ReduceOutputRatio: 1, Startup: time.Second,
		ReadRate: 100 * MiB, ReadCPU: 400, ComputeRate: 50 * MiB, ComputeCPU: 700,
		SpillRate: 50 * MiB, SpillCPU: 400, MapMemory: 512 * MiB, SortBuffer: 512 * MiB,
		ShuffleRate: 50 * MiB, ShuffleCPU: 300, SortRate: 30 * MiB, SortCPU: 1000,
		SortMemoryRatio: 1, SortMemoryCap: 2 * GiB, ReduceRate: 30 * MiB, ReduceCPU: 600, ReduceMemory: GiB,
	}
}

// Grep is the scan class with almost no output; see WordCount for the defaults'
// rationale.
func Grep() AppClass {
	return AppClass{
		Name: "grep", MapOutputRatio: 0.01, ReduceOutputRatio: 1, Startup: time.Second,
		ReadRate: 120 * MiB, ReadCPU: 400, ComputeRate: 25 * MiB, ComputeCPU: 900,
		SpillRate: 40 * MiB, SpillCPU: 200, MapMemory: 512 * MiB, SortBuffer: 64 * MiB,
		ShuffleRate: 20 * MiB, ShuffleCPU: 100, SortRate: 50 * MiB, SortCPU: 500,
		SortMemoryRatio: 0.5, SortMemoryCap: 256 * MiB, ReduceRate: 20 * MiB, ReduceCPU: 500, ReduceMemory: 512 * MiB,
	}
}

// PageRank is one MapReduce iteration of PageRank: CPU-heavy map whose output exceeds
// its input; see WordCount for the defaults' rationale.
func PageRank() AppClass {
	return AppClass{
		Name: "pagerank", MapOutputRatio: 1.3, ReduceOutputRatio: 0.8, Startup: time.Second,
		ReadRate: 80 * MiB, ReadCPU: 300, ComputeRate: 8 * MiB, ComputeCPU: 1000,
		SpillRate: 40 * MiB, SpillCPU: 600, MapMemory: GiB, SortBuffer: 384 * MiB,
		ShuffleRate: 40 * MiB, ShuffleCPU: 300, SortRate: 25 * MiB, SortCPU: 1000,
		SortMemoryRatio: 1, SortMemoryCap: 2 * GiB, ReduceRate: 8 * MiB, ReduceCPU: 1000, ReduceMemory: 1536 * MiB,
	}
}

// SparkKMeans is a Spark-like iterative application: short start-up (executors are
// reused), the partition cached in memory, ten CPU-bound passes, a small shuffle; see
// WordCount for the defaults' rationale.
func SparkKMeans() AppClass {
	return AppClass{
		Name: "spark-kmeans", MapOutputRatio: 0.05, ReduceOutputRatio: 0.2, Startup: 300 * time.Millisecond,
		ReadRate: 100 * MiB, ReadCPU: 500, ComputeRate: 3 * MiB, ComputeCPU: 1000,
		SpillRate: 40 * MiB, SpillCPU: 300, MapMemory: GiB, CacheRatio: 3, SortBuffer: 64 * MiB,
		ShuffleRate: 60 * MiB, ShuffleCPU: 200, SortRate: 60 * MiB, SortCPU: 700,
		SortMemoryRatio: 2, SortMemoryCap: 2 * GiB, ReduceRate: 20 * MiB, ReduceCPU: 800, ReduceMemory: 2 * GiB,
	}
}

// DefaultApps returns the five default classes: WordCount, Sort, Grep, PageRank,
// SparkKMeans.
func DefaultApps() []AppClass {
	return []AppClass{WordCount(), Sort(), Grep(), PageRank(), SparkKMeans()}
}

// Validate checks the class: a non-empty name, positive rates, non-negative CPU,
// memory and start-up, finite non-negative ratios.
func (a *AppClass) Validate() error {
	if a.Name == "" {
		return fieldErr("AppClass.Name", a.Name, ErrEmpty)
	}
	f := func(n string) string { return "AppClass(" + a.Name + ")." + n }
	for _, r := range []struct {
		name string
		v    int64
	}{{"ReadRate", a.ReadRate}, {"ComputeRate", a.ComputeRate}, {"SpillRate", a.SpillRate},
		{"ShuffleRate", a.ShuffleRate}, {"SortRate", a.SortRate}, {"ReduceRate", a.ReduceRate}} {
		if r.v <= 0 {
			return fieldErr(f(r.name), r.v, ErrInvalidValue)
		}
	}
	for _, r := range []struct {
		name string
		v    int64
	}{{"ReadCPU", a.ReadCPU}, {"ComputeCPU", a.ComputeCPU}, {"SpillCPU", a.SpillCPU},
		{"ShuffleCPU", a.ShuffleCPU}, {"SortCPU", a.SortCPU}, {"ReduceCPU", a.ReduceCPU},
		{"MapMemory", a.MapMemory}, {"SortBuffer", a.SortBuffer}, {"SortMemoryCap", a.SortMemoryCap},
		{"ReduceMemory", a.ReduceMemory}, {"Startup", int64(a.Startup)}} {
		if r.v < 0 {
			return fieldErr(f(r.name), r.v, ErrInvalidValue)
		}
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"MapOutputRatio", a.MapOutputRatio}, {"ReduceOutputRatio", a.ReduceOutputRatio},
		{"CacheRatio", a.CacheRatio}, {"SortMemoryRatio", a.SortMemoryRatio}} {
		if !field.Finite(r.v) || r.v < 0 {
			return fieldErr(f(r.name), r.v, ErrInvalidValue)
		}
	}
	return nil
}

// Jitter perturbs the task model so that tasks are not exact copies: every stage's
// duration and every stage's CPU and memory demand is multiplied by exp(Sigma × Z),
// Z a standard normal draw from Rand clipped to [−3, 3] (IO demands follow from the
// jittered duration). The zero Jitter (or a nil Rand, or Sigma 0) perturbs nothing.
type Jitter struct {
	// Rand is the caller-owned source of the draws.
	Rand *rand.Rand
	// Sigma is the log-normal spread; 0.05 means about ±5%. Must be in [0, 1].
	Sigma float64
}

func (j Jitter) factor() float64 {
	if j.Rand == nil || j.Sigma == 0 {
		return 1
	}
	z := max(-3, min(3, j.Rand.NormFloat64()))
	return math.Exp(j.Sigma * z)
}

// Profile returns the true stage profile (Schema()) of a task of kind k of this class
// that reads in bytes and writes out bytes: for a map task, in is its block and out
// its share of the map output; for a reduce task, in is its share of the shuffle and
// out its share of the job's output. The profile always has three stages, named by
// k.StageNames(). It fails on an invalid class or jitter, an unknown kind, or negative
// byte counts.
func (a *AppClass) Profile(k Kind, in, out int64, j Jitter) (stage.Profile, error) {
	if err := a.Validate(); err != nil {
		return stage.Profile{}, err
	}
	switch {
	case k > Reduce:
		return stage.Profile{}, fieldErr("kind", k, ErrInvalidValue)
	case in < 0:
		return stage.Profile{}, fieldErr("input bytes", in, ErrInvalidValue)
	case out < 0:
		return stage.Profile{}, fieldErr("output bytes", out, ErrInvalidValue)
	case !field.Finite(j.Sigma) || j.Sigma < 0 || j.Sigma > 1:
		return stage.Profile{}, fieldErr("jitter sigma", j.Sigma, ErrInvalidValue)
	}
	return a.profile(k, in, out, j), nil
}

// profile is Profile for validated arguments.
func (a *AppClass) profile(k Kind, in, out int64, j Jitter) stage.Profile {
	fin, fout := float64(in), float64(out)
	startup := a.Startup.Seconds()
	var st [3]stage.Stage
	if k == Map {
		st[0] = mkStage(j, startup+fin/float64(a.ReadRate), a.ReadCPU, a.MapMemory, in, SlotDiskIO)
		cache := a.CacheRatio * fin
		st[1] = mkStage(j, fin/float64(a.ComputeRate), a.ComputeCPU, a.MapMemory+amount(cache), 0, 0)
		st[2] = mkStage(j, fout/float64(a.SpillRate), a.SpillCPU, a.MapMemory+amount(cache)+a.SortBuffer, out, SlotDiskIO)
	} else {
		st[0] = mkStage(j, startup+fin/float64(a.ShuffleRate), a.ShuffleCPU, a.ReduceMemory, in, SlotNetIO)
		merge := min(amount(a.SortMemoryRatio*fin), a.SortMemoryCap)
		st[1] = mkStage(j, fin/float64(a.SortRate), a.SortCPU, a.ReduceMemory+merge, 0, 0)
		st[2] = mkStage(j, fin/float64(a.ReduceRate), a.ReduceCPU, a.ReduceMemory, out, SlotDiskIO)
	}
	return stage.MustProfile(schema, st[:]...) // valid by construction
}

// mkStage builds one stage lasting secs (jittered, at least MinStageDuration) that
// demands cpu and mem (jittered) and moves io bytes on slot ioSlot at the average rate.
func mkStage(j Jitter, secs float64, cpu, mem, io int64, ioSlot int) stage.Stage {
	d := durationOf(secs * j.factor())
	var t resource.Tuple
	t[SlotCPU] = amount(float64(cpu) * j.factor())
	t[SlotMemory] = amount(float64(mem) * j.factor())
	if io > 0 {
		t[ioSlot] = max(1, amount(float64(io)/d.Seconds()))
	}
	return stage.Stage{Duration: d, Demand: t}
}

// durationOf converts seconds to a Duration of at least MinStageDuration.
func durationOf(secs float64) time.Duration {
	d := secs * float64(time.Second)
	if !(d >= float64(MinStageDuration)) { // also NaN
		return MinStageDuration
	}
	if d >= float64(stage.Forever) {
		return stage.Forever
	}
	return time.Duration(math.Round(d))
}

// amount rounds x to a non-negative int64, saturating.
func amount(x float64) int64 {
	switch {
	case !(x > 0):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(x))
}

// Overestimate returns what a user declares for a task whose true peak is peak: every
// dimension multiplied by factor, rounded up to a multiple of the same dimension of
// rounding (0 = to a whole unit). With factor ≥ 1 the result covers peak. It fails on a
// factor that is not a positive finite number, or a negative peak or rounding.
//
// Users over-declare because a container that is too small is killed (memory) or slow
// (cpu); request-based schedulers then hold the declared amount for the whole task.
// The generators draw one factor per job, uniform in [1.2, 1.5] by default
// (WithOverestimate), and round cpu up to 100 milli-cores, memory to 128 MiB and
// bandwidth to 1 MiB/s (WithRequestRounding) — a finer grid than YARN's defaults (whole
// vcores, 1 GiB), which would swamp the over-estimate.
func Overestimate(peak resource.Tuple, factor float64, rounding resource.Tuple) (resource.Tuple, error) {
	if !field.Finite(factor) || factor <= 0 {
		return resource.Tuple{}, fieldErr("overestimate factor", factor, ErrInvalidValue)
	}
	for i := range peak {
		if peak[i] < 0 {
			return resource.Tuple{}, fieldErr(fmt.Sprintf("peak[%s]", schema.DimName(i)), peak[i], ErrInvalidValue)
		}
		if rounding[i] < 0 {
			return resource.Tuple{}, fieldErr(fmt.Sprintf("rounding[%s]", schema.DimName(i)), rounding[i], ErrInvalidValue)
		}
	}
	return overestimate(peak, factor, rounding), nil
}

func overestimate(peak resource.Tuple, factor float64, rounding resource.Tuple) resource.Tuple {
	var r resource.Tuple
	for i, p := range peak {
		if p == 0 {
			continue
		}
		x := float64(p) * factor
		var v int64
		if x >= math.MaxInt64/2 {
			v = math.MaxInt64 / 2
		} else {
			v = int64(math.Ceil(x))
		}
		if factor >= 1 && v < p { // float rounding never undercuts the peak
			v = p
		}
		if g := rounding[i]; g > 1 && v%g != 0 && v < math.MaxInt64/2-g {
			v += g - v%g
		}
		r[i] = v
	}
	return r
}
