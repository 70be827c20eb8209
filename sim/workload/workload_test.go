package workload_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

func TestSchema(t *testing.T) {
	s := workload.Schema()
	assert.Same(t, s, workload.Schema())
	assert.Equal(t, "cpu[millicore,c] memory[byte] disk-io[byte/s,c] net-io[byte/s,c]", s.String())
	for slot, name := range map[int]string{workload.SlotCPU: "cpu", workload.SlotMemory: "memory", workload.SlotDiskIO: "disk-io", workload.SlotNetIO: "net-io"} {
		i, ok := s.Index(name)
		require.True(t, ok)
		assert.Equal(t, slot, i)
	}
	assert.Equal(t, s.MustTuple(1, 2, 0, 0), s.MustTuple(1, 2, 3, 4).Only(workload.YARNDims()))
}

func TestKindStrings(t *testing.T) {
	assert.Equal(t, "map", workload.Map.String())
	assert.Equal(t, "reduce", workload.Reduce.String())
	assert.Equal(t, "Kind(7)", workload.Kind(7).String())
	assert.Equal(t, [3]string{"read", "compute", "spill"}, workload.Map.StageNames())
	assert.Equal(t, [3]string{"shuffle", "sort", "reduce"}, workload.Reduce.StageNames())
}

// TestAppProfiles checks the task model's stage shapes: which stage is heavy on what.
func TestAppProfiles(t *testing.T) {
	for _, a := range workload.DefaultApps() {
		t.Run(a.Name, func(t *testing.T) {
			in := workload.DefaultBlockSize
			p, err := a.Profile(workload.Map, in, in/4, workload.Jitter{})
			require.NoError(t, err)
			require.Equal(t, 3, p.Len())
			read, compute, spill := p.Stage(0).Demand, p.Stage(1).Demand, p.Stage(2).Demand
			assert.Greater(t, read[workload.SlotDiskIO], int64(0), "read moves data from disk")
			assert.Zero(t, compute[workload.SlotDiskIO])
			assert.Greater(t, compute[workload.SlotCPU], read[workload.SlotCPU], "compute is the CPU-heavy stage")
			assert.Greater(t, spill[workload.SlotDiskIO], int64(0))
			assert.Greater(t, spill[workload.SlotMemory], read[workload.SlotMemory], "spill holds the sort buffer")
			// Read takes Startup + in/ReadRate; the average disk rate is in over that time.
			wantRead := a.Startup + time.Duration(float64(in)/float64(a.ReadRate)*float64(time.Second))
			assert.InDelta(t, float64(wantRead), float64(p.Stage(0).Duration), 2)
			assert.InDelta(t, float64(in)/wantRead.Seconds(), float64(read[workload.SlotDiskIO]), 1)

			q, err := a.Profile(workload.Reduce, workload.GiB, workload.GiB/2, workload.Jitter{})
			require.NoError(t, err)
			shuffle, sort, reduce := q.Stage(0).Demand, q.Stage(1).Demand, q.Stage(2).Demand
			assert.Greater(t, shuffle[workload.SlotNetIO], int64(0), "shuffle moves data over the network")
			assert.Zero(t, shuffle[workload.SlotDiskIO])
			assert.Greater(t, sort[workload.SlotCPU], shuffle[workload.SlotCPU])
			assert.Greater(t, sort[workload.SlotMemory], shuffle[workload.SlotMemory], "sort merges in memory")
			assert.Greater(t, reduce[workload.SlotDiskIO], int64(0), "reduce writes the output")

			// Nothing to move: every stage still lasts MinStageDuration, with no IO.
			z, err := a.Profile(workload.Reduce, 0, 0, workload.Jitter{})
			require.NoError(t, err)
			for i := 0; i < 3; i++ {
				assert.GreaterOrEqual(t, z.Stage(i).Duration, workload.MinStageDuration)
				assert.Zero(t, z.Stage(i).Demand[workload.SlotNetIO]+z.Stage(i).Demand[workload.SlotDiskIO])
			}
		})
	}
	// The Spark-like class caches its input: its compute stage holds far more memory.
	sp, wc := workload.SparkKMeans(), workload.WordCount()
	ps, _ := sp.Profile(workload.Map, 128*workload.MiB, 0, workload.Jitter{})
	pw, _ := wc.Profile(workload.Map, 128*workload.MiB, 0, workload.Jitter{})
	assert.Greater(t, ps.Peak()[workload.SlotMemory], pw.Peak()[workload.SlotMemory]+256*workload.MiB)
}

func TestAppProfileErrors(t *testing.T) {
	bad := func(f func(a *workload.AppClass)) workload.AppClass {
		a := workload.WordCount()
		f(&a)
		return a
	}
	for _, tc := range []struct {
		name  string
		app   workload.AppClass
		kind  workload.Kind
		in    int64
		out   int64
		j     workload.Jitter
		want  error
		field string
	}{
		{"empty name", bad(func(a *workload.AppClass) { a.Name = "" }), workload.Map, 1, 1, workload.Jitter{}, workload.ErrEmpty, "AppClass.Name"},
		{"zero rate", bad(func(a *workload.AppClass) { a.SortRate = 0 }), workload.Map, 1, 1, workload.Jitter{}, workload.ErrInvalidValue, "SortRate"},
		{"negative cpu", bad(func(a *workload.AppClass) { a.ReduceCPU = -1 }), workload.Map, 1, 1, workload.Jitter{}, workload.ErrInvalidValue, "ReduceCPU"},
		{"negative startup", bad(func(a *workload.AppClass) { a.Startup = -time.Second }), workload.Map, 1, 1, workload.Jitter{}, workload.ErrInvalidValue, "Startup"},
		{"NaN ratio", bad(func(a *workload.AppClass) { a.CacheRatio = math.NaN() }), workload.Map, 1, 1, workload.Jitter{}, workload.ErrInvalidValue, "CacheRatio"},
		{"negative ratio", bad(func(a *workload.AppClass) { a.MapOutputRatio = -0.5 }), workload.Map, 1, 1, workload.Jitter{}, workload.ErrInvalidValue, "MapOutputRatio"},
		{"bad kind", workload.WordCount(), workload.Kind(2), 1, 1, workload.Jitter{}, workload.ErrInvalidValue, "kind"},
		{"negative input", workload.WordCount(), workload.Map, -1, 1, workload.Jitter{}, workload.ErrInvalidValue, "input bytes"},
		{"negative output", workload.WordCount(), workload.Reduce, 1, -1, workload.Jitter{}, workload.ErrInvalidValue, "output bytes"},
		{"NaN jitter", workload.WordCount(), workload.Map, 1, 1, workload.Jitter{Sigma: math.NaN()}, workload.ErrInvalidValue, "jitter sigma"},
		{"jitter above 1", workload.WordCount(), workload.Map, 1, 1, workload.Jitter{Sigma: 1.5}, workload.ErrInvalidValue, "jitter sigma"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.app.Profile(tc.kind, tc.in, tc.out, tc.j)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
		})
	}
}

func TestOverestimate(t *testing.T) {
	s := workload.Schema()
	got, err := workload.Overestimate(s.MustTuple(1000, 1000*workload.MiB, 50*workload.MiB, 0), 1.3, workload.DefaultRequestRounding())
	require.NoError(t, err)
	// 1300 milli-cores (a multiple of 100); 1300 MiB rounded up to 1408 MiB (11 × 128);
	// 65 MiB/s; 0 stays 0.
	assert.Equal(t, s.MustTuple(1300, 1408*workload.MiB, 65*workload.MiB, 0), got)
	got, err = workload.Overestimate(s.MustTuple(1001, 3), 1, resource.Tuple{})
	require.NoError(t, err)
	assert.Equal(t, s.MustTuple(1001, 3), got, "factor 1 without rounding is the peak")

	for _, tc := range []struct {
		name     string
		peak     resource.Tuple
		factor   float64
		rounding resource.Tuple
		field    string
	}{
		{"zero factor", s.MustTuple(1), 0, resource.Tuple{}, "overestimate factor"},
		{"NaN factor", s.MustTuple(1), math.NaN(), resource.Tuple{}, "overestimate factor"},
		{"infinite factor", s.MustTuple(1), math.Inf(1), resource.Tuple{}, "overestimate factor"},
		{"negative peak", resource.Tuple{0, -1}, 1, resource.Tuple{}, "peak[memory]"},
		{"negative rounding", s.MustTuple(1), 1, resource.Tuple{0, 0, -5}, "rounding[disk-io]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.Overestimate(tc.peak, tc.factor, tc.rounding)
			assert.ErrorIs(t, err, workload.ErrInvalidValue)
			assert.ErrorContains(t, err, tc.field)
		})
	}
}

func TestFGMOffline(t *testing.T) {
	w, err := workload.FGM(rng(1))
	require.NoError(t, err)
	require.NoError(t, w.Validate())
	assert.Equal(t, "fgm-offline-FB-2009-400GiB", w.Name)
	assert.Equal(t, workload.DefaultTotalInput, w.TotalInput())
	assert.Equal(t, []string{"queue1", "queue2", "queue3"}, w.Queues())
	var blocks int64
	for _, b := range w.Blocks {
		blocks += b
		assert.LessOrEqual(t, b, workload.DefaultBlockSize)
	}
	assert.Equal(t, w.TotalInput(), blocks, "the blocks hold the input")
	apps := map[string]bool{}
	for i, j := range w.Jobs {
		assert.Zero(t, j.Submit, "offline: all at 0")
		assert.LessOrEqual(t, j.InputBytes, workload.DefaultMaxJobInput)
		assert.Equal(t, j.App, j.Logic)
		apps[j.App] = true
		if i > 0 {
			assert.Less(t, w.Jobs[i-1].ID, j.ID, "IDs sort in submission order")
		}
	}
	assert.Len(t, apps, 5)
	// Full-block map tasks of one class share a similarity key across jobs.
	keys := map[workload.SimilarityKey]int{}
	for _, j := range w.Jobs {
		for k := range j.Tasks {
			keys[j.Key(&j.Tasks[k])]++
		}
	}
	assert.Greater(t, keys[workload.SimilarityKey{Logic: "wordcount/map", InputSize: workload.DefaultBlockSize, Family: "wordcount/map"}], 100)
}

func TestFGMOnlineAndOptions(t *testing.T) {
	gap := 2 * time.Second
	w, err := workload.FGM(rng(2), workload.WithOnline(gap), workload.WithTotalInput(50*workload.GiB),
		workload.WithScale(0.5), workload.WithQueues("a", "b"), workload.WithInputSizes(workload.FB2010()),
		workload.WithApps([]workload.AppClass{workload.Sort(), workload.Grep()}, []float64{1, 0}),
		workload.WithJitter(0), workload.WithOverestimate(2, 2), workload.WithRequestRounding(resource.Tuple{}),
		workload.WithBlockSize(64*workload.MiB), workload.WithBytesPerReduce(256*workload.MiB), workload.WithMaxJobInput(workload.GiB))
	require.NoError(t, err)
	require.NoError(t, w.Validate())
	assert.Equal(t, "fgm-online-FB-2010-25GiB", w.Name)
	assert.Equal(t, 25*workload.GiB, w.TotalInput())
	assert.Equal(t, []string{"a", "b"}, w.Queues())
	assert.Zero(t, w.Jobs[0].Submit)
	last := w.Jobs[len(w.Jobs)-1].Submit
	// Poisson arrivals: the mean gap is near 2 s (loosely: n is in the hundreds).
	mean := last / time.Duration(len(w.Jobs)-1)
	assert.InDelta(t, gap.Seconds(), mean.Seconds(), 0.5)
	for _, j := range w.Jobs {
		assert.Equal(t, "sort", j.App, "a zero weight is never drawn")
		assert.LessOrEqual(t, j.InputBytes, workload.GiB)
		for _, tk := range j.Tasks {
			assert.LessOrEqual(t, tk.InputBytes, 256*workload.MiB)
			if tk.Kind == workload.Map {
				assert.LessOrEqual(t, tk.InputBytes, 64*workload.MiB)
				assert.Len(t, tk.Blocks, 1)
			} else {
				assert.Empty(t, tk.Blocks)
			}
		}
	}
	// Over-estimate 2 without rounding, no jitter: the request is exactly twice the peak.
	j := w.Jobs[0]
	var peak resource.Tuple
	for _, tk := range j.Tasks {
		if tk.Kind == workload.Map {
			peak = peak.Max(tk.True.Peak())
		}
	}
	assert.Equal(t, peak.Scale(2), j.Tasks[0].Request)
}

func TestFGMErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   workload.Option
		want  error
		field string
	}{
		{"scale zero", workload.WithScale(0), workload.ErrInvalidOption, "scale"},
		{"scale NaN", workload.WithScale(math.NaN()), workload.ErrInvalidOption, "scale"},
		{"scale huge", workload.WithScale(1e6), workload.ErrInvalidOption, "scale"},
		{"no queues", workload.WithQueues(), workload.ErrInvalidOption, "queues"},
		{"empty queue", workload.WithQueues("a", ""), workload.ErrInvalidOption, "queues[1]"},
		{"duplicate queue", workload.WithQueues("a", "a"), workload.ErrDuplicateID, "queues[1]"},
		{"block size", workload.WithBlockSize(0), workload.ErrInvalidOption, "block size"},
		{"per reduce", workload.WithBytesPerReduce(-1), workload.ErrInvalidOption, "bytes per reduce"},
		{"overestimate low", workload.WithOverestimate(0, 1), workload.ErrInvalidOption, "overestimate low"},
		{"overestimate high below low", workload.WithOverestimate(1.5, 1.2), workload.ErrInvalidOption, "overestimate high"},
		{"overestimate NaN", workload.WithOverestimate(1, math.NaN()), workload.ErrInvalidOption, "overestimate high"},
		{"rounding negative", workload.WithRequestRounding(resource.Tuple{-1}), resource.ErrNegative, "request rounding"},
		{"rounding outside schema", workload.WithRequestRounding(resource.Tuple{0, 0, 0, 0, 7}), resource.ErrOutsideSchema, "request rounding"},
		{"jitter", workload.WithJitter(-0.1), workload.ErrInvalidOption, "jitter"},
		{"max tasks", workload.WithMaxTasks(0), workload.ErrInvalidOption, "max tasks"},
		{"total", workload.WithTotalInput(0), workload.ErrInvalidOption, "total input"},
		{"online", workload.WithOnline(0), workload.ErrInvalidOption, "mean interarrival"},
		{"sizes", workload.WithInputSizes(nil), workload.ErrInvalidOption, "input sizes"},
		{"nil table", workload.WithInputSizes((*workload.QuantileTable)(nil)), workload.ErrInvalidOption, "input sizes"},
		{"max job", workload.WithMaxJobInput(-5), workload.ErrInvalidOption, "max job input"},
		{"no apps", workload.WithApps(nil, nil), workload.ErrInvalidOption, "apps"},
		{"weights length", workload.WithApps(workload.DefaultApps(), []float64{1}), workload.ErrInvalidOption, "app weights"},
		{"weight NaN", workload.WithApps([]workload.AppClass{workload.Grep()}, []float64{math.NaN()}), workload.ErrInvalidOption, "app weights[0]"},
		{"weights zero", workload.WithApps([]workload.AppClass{workload.Grep()}, []float64{0}), workload.ErrInvalidOption, "app weights"},
		{"invalid app", workload.WithApps([]workload.AppClass{{Name: "x"}}, nil), workload.ErrInvalidValue, "ReadRate"},
		{"duplicate app", workload.WithApps([]workload.AppClass{workload.Grep(), workload.Grep()}, nil), workload.ErrDuplicateID, "apps[1].Name"},
		{"too many tasks", workload.WithMaxTasks(10), workload.ErrTooLarge, "tasks"},
		{"zero table", workload.WithInputSizes(&workload.QuantileTable{}), workload.ErrInvalidOption, "input sizes"},
		{"nil option", nil, workload.ErrInvalidOption, "options[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.FGM(rng(1), tc.opt)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
			if tc.want != workload.ErrTooLarge && tc.want != workload.ErrInvalidOption {
				assert.ErrorIs(t, err, workload.ErrInvalidOption, "option errors wrap ErrInvalidOption too")
			}
		})
	}
	_, err := workload.FGM(nil)
	assert.ErrorIs(t, err, workload.ErrNilRand)
}

// maxSizes is an InputSizes that always draws the largest size allowed.
type maxSizes struct{}

func (maxSizes) Name() string                         { return "max" }
func (maxSizes) Sample(_ *rand.Rand, max int64) int64 { return max }

// Options whose task counts, each representable, add up past any int: the count is
// checked against what remains of WithMaxTasks before each addition, so it cannot wrap.
func TestFGMTaskCountOverflow(t *testing.T) {
	huge := []workload.Option{workload.WithTotalInput(math.MaxInt64), workload.WithMaxJobInput(math.MaxInt64),
		workload.WithApps([]workload.AppClass{workload.Sort()}, nil), workload.WithInputSizes(maxSizes{})}
	for _, tc := range []struct {
		name  string
		opts  []workload.Option
		field string
	}{
		{"maps and reduces overflow", append(huge, workload.WithBlockSize(1), workload.WithBytesPerReduce(1)), "jobs[0] tasks"},
		{"maps alone exceed", append(huge, workload.WithBlockSize(1)), "jobs[0] tasks"},
		{"limit reached by a later job", []workload.Option{workload.WithMaxTasks(50)}, "tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.FGM(rng(1), tc.opts...)
			assert.ErrorIs(t, err, workload.ErrTooLarge)
			assert.ErrorContains(t, err, tc.field)
			assert.ErrorContains(t, err, "WithMaxTasks")
		})
	}
}

func TestThesis(t *testing.T) {
	mix, err := workload.ThesisExperiment(4)
	require.NoError(t, err)
	w, err := workload.Thesis(rng(3), mix, workload.WithScale(0.1))
	require.NoError(t, err)
	require.NoError(t, w.Validate())
	// 10 small, 5 normal, 2 large per queue, 3 queues.
	require.Len(t, w.Jobs, 3*17)
	count := map[string]int{}
	for i, j := range w.Jobs {
		assert.Equal(t, []string{"queue1", "queue2", "queue3"}[i%3], j.Queue, "queues interleave round-robin")
		assert.Zero(t, j.Submit)
		count[j.App]++
		var class workload.ThesisClass
		switch j.App {
		case "small":
			class = workload.ThesisSmall
		case "normal":
			class = workload.ThesisNormal
		case "large":
			class = workload.ThesisLarge
		}
		assert.Equal(t, "thesis-"+class.Name, j.Logic)
		require.Len(t, j.Tasks, class.Blocks)
		assert.Equal(t, int64(class.Blocks)*workload.DefaultBlockSize, j.InputBytes)
		for _, tk := range j.Tasks {
			assert.Equal(t, workload.Map, tk.Kind)
			assert.Equal(t, class.TaskTime, tk.True.Duration(), "Table 4.2: the task time on a normal node")
			assert.True(t, tk.Request.Covers(tk.True.Peak()), "request covers the peak")
			assert.Equal(t, workload.Schema().MustTuple(1000, workload.GiB), tk.Request.Only(workload.YARNDims()))
		}
	}
	assert.Equal(t, map[string]int{"small": 30, "normal": 15, "large": 6}, count)

	for n, want := range map[int]int{1: 100, 2: 50, 3: 20} {
		mix, err := workload.ThesisExperiment(n)
		require.NoError(t, err)
		require.Len(t, mix, 1)
		assert.Equal(t, want, mix[0].JobsPerQueue)
	}
	assert.Equal(t, workload.ThesisClass{Name: "large", Blocks: 800, TaskTime: 800 * time.Second}, workload.ThesisLarge)
}

// optional returns o as a list of options, none when o is nil (a nil Option is an
// error in itself).
func optional(o workload.Option) []workload.Option {
	if o == nil {
		return nil
	}
	return []workload.Option{o}
}

func TestThesisErrors(t *testing.T) {
	ok := []workload.ThesisMix{{Class: workload.ThesisSmall, JobsPerQueue: 1}}
	for _, tc := range []struct {
		name  string
		mix   []workload.ThesisMix
		opt   workload.Option
		want  error
		field string
	}{
		{"no mix", nil, nil, workload.ErrEmpty, "mix"},
		{"no jobs", []workload.ThesisMix{{Class: workload.ThesisSmall}}, nil, workload.ErrEmpty, "no jobs"},
		{"unnamed class", []workload.ThesisMix{{Class: workload.ThesisClass{Blocks: 1, TaskTime: time.Minute}, JobsPerQueue: 1}}, nil, workload.ErrEmpty, "mix[0].Class.Name"},
		{"no blocks", []workload.ThesisMix{{Class: workload.ThesisClass{Name: "x", TaskTime: time.Minute}, JobsPerQueue: 1}}, nil, workload.ErrInvalidValue, "Class.Blocks"},
		{"short task", []workload.ThesisMix{{Class: workload.ThesisClass{Name: "x", Blocks: 1, TaskTime: time.Millisecond}, JobsPerQueue: 1}}, nil, workload.ErrInvalidValue, "Class.TaskTime"},
		{"negative jobs", []workload.ThesisMix{{Class: workload.ThesisSmall, JobsPerQueue: -1}}, nil, workload.ErrInvalidValue, "JobsPerQueue"},
		{"bad option", ok, workload.WithJitter(2), workload.ErrInvalidOption, "jitter"},
		{"too many tasks", ok, workload.WithMaxTasks(100), workload.ErrTooLarge, "tasks"},
		{"absurdly many jobs", []workload.ThesisMix{{Class: workload.ThesisLarge, JobsPerQueue: math.MaxInt}}, workload.WithScale(1000), workload.ErrTooLarge, "tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.Thesis(rng(1), tc.mix, optional(tc.opt)...)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
		})
	}
	_, err := workload.Thesis(nil, ok)
	assert.ErrorIs(t, err, workload.ErrNilRand)
	_, err = workload.ThesisExperiment(5)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
}

func TestFromSWIM(t *testing.T) {
	jobs := []workload.SWIMJob{
		{ID: "late", Submit: 30 * time.Second, InputBytes: 300 * workload.MiB, ShuffleBytes: 2*workload.GiB + 1, OutputBytes: 1000},
		{ID: "empty", Submit: 10 * time.Second, ShuffleBytes: 5, OutputBytes: 7},
		{ID: "maponly", Submit: 10 * time.Second, InputBytes: 10, OutputBytes: 99},
	}
	w, err := workload.FromSWIM("fb", jobs, rng(4), workload.WithJitter(0))
	require.NoError(t, err)
	require.NoError(t, w.Validate())
	require.Len(t, w.Jobs, 3)
	assert.Equal(t, []string{"empty", "maponly", "late"}, []string{w.Jobs[0].ID, w.Jobs[1].ID, w.Jobs[2].ID}, "by submit time, ties in trace order")
	e, m, l := w.Jobs[0], w.Jobs[1], w.Jobs[2]
	assert.Equal(t, "fb/empty", e.Logic)
	require.Len(t, e.Tasks, 2)
	assert.Equal(t, workload.Map, e.Tasks[0].Kind)
	assert.Zero(t, e.Tasks[0].InputBytes)
	assert.Empty(t, e.Tasks[0].Blocks, "an empty map reads no block")
	assert.Equal(t, workload.Reduce, e.Tasks[1].Kind)
	assert.Equal(t, int64(5), e.Tasks[1].InputBytes)
	require.Len(t, m.Tasks, 1, "map-only")
	assert.Equal(t, 3, l.NumTasks(workload.Map))
	assert.Equal(t, 3, l.NumTasks(workload.Reduce))
	assert.Equal(t, []int64{workload.GiB, workload.GiB, 1}, []int64{l.Tasks[3].InputBytes, l.Tasks[4].InputBytes, l.Tasks[5].InputBytes})
	assert.Equal(t, []int64{128 * workload.MiB, 128 * workload.MiB, 44 * workload.MiB}, []int64{l.Tasks[0].InputBytes, l.Tasks[1].InputBytes, l.Tasks[2].InputBytes})
	// Blocks in the table: the maps' inputs, in order, after the two earlier jobs' blocks.
	assert.Equal(t, []int64{10, 128 * workload.MiB, 128 * workload.MiB, 44 * workload.MiB}, w.Blocks)
	assert.Equal(t, []int{1}, l.Tasks[0].Blocks)

	scaled, err := workload.FromSWIM("", jobs, rng(4), workload.WithScale(0.5))
	require.NoError(t, err)
	assert.Equal(t, "swim", scaled.Name)
	assert.Equal(t, 150*workload.MiB, scaled.Jobs[2].InputBytes)
	assert.Equal(t, "swim/late", scaled.Jobs[2].Logic)
}

func TestFromSWIMErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		jobs  []workload.SWIMJob
		opt   workload.Option
		want  error
		field string
	}{
		{"none", nil, nil, workload.ErrEmpty, "jobs"},
		{"empty id", []workload.SWIMJob{{}}, nil, workload.ErrEmpty, "jobs[0]().ID"},
		{"negative submit", []workload.SWIMJob{{ID: "a", Submit: -1}}, nil, workload.ErrInvalidValue, "jobs[0](a).Submit"},
		{"negative input", []workload.SWIMJob{{ID: "a", InputBytes: -1}}, nil, workload.ErrInvalidValue, "InputBytes"},
		{"negative shuffle", []workload.SWIMJob{{ID: "a", ShuffleBytes: -1}}, nil, workload.ErrInvalidValue, "ShuffleBytes"},
		{"negative output", []workload.SWIMJob{{ID: "a", OutputBytes: -1}}, nil, workload.ErrInvalidValue, "OutputBytes"},
		{"duplicate", []workload.SWIMJob{{ID: "a"}, {ID: "a"}}, nil, workload.ErrDuplicateID, "jobs[1](a).ID"},
		{"too many tasks", []workload.SWIMJob{{ID: "a", InputBytes: workload.TiB}}, nil, workload.ErrTooLarge, "tasks"},
		{"bad option", []workload.SWIMJob{{ID: "a"}}, workload.WithBlockSize(0), workload.ErrInvalidOption, "block size"},
		// 1 map + MaxInt64 reduces, each an int, wrap to a negative sum.
		{"task count overflow", []workload.SWIMJob{{ID: "a", ShuffleBytes: math.MaxInt64}}, workload.WithBytesPerReduce(1), workload.ErrTooLarge, "jobs[0](a).tasks"},
		{"task count overflow after scaling", []workload.SWIMJob{{ID: "b", ShuffleBytes: 7e16}}, workload.WithScale(455), workload.ErrTooLarge, "jobs[0](b).tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := optional(tc.opt)
			if tc.want == workload.ErrTooLarge {
				opts = append(opts, workload.WithMaxTasks(1000))
			}
			_, err := workload.FromSWIM("x", tc.jobs, rng(1), opts...)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
		})
	}
	_, err := workload.FromSWIM("x", []workload.SWIMJob{{ID: "a"}}, nil)
	assert.ErrorIs(t, err, workload.ErrNilRand)
}

// validWorkload is a small generated workload for the Validate table.
func validWorkload(t *testing.T) workload.Workload {
	w, err := workload.FGM(rng(9), workload.WithTotalInput(workload.GiB), workload.WithMaxJobInput(300*workload.MiB))
	require.NoError(t, err)
	require.NoError(t, w.Validate())
	require.Greater(t, len(w.Jobs), 1)
	return w
}

func TestValidate(t *testing.T) {
	other := stage.MustProfile(resource.MustSchema(resource.CPU), stage.Stage{Duration: time.Second})
	for _, tc := range []struct {
		name  string
		edit  func(w *workload.Workload)
		want  error
		field string
	}{
		{"no jobs", func(w *workload.Workload) { w.Jobs = nil }, workload.ErrEmpty, "Jobs"},
		{"negative block", func(w *workload.Workload) { w.Blocks[0] = -1 }, workload.ErrInvalidValue, "Blocks[0]"},
		{"empty job id", func(w *workload.Workload) { w.Jobs[0].ID = "" }, workload.ErrEmpty, "Jobs[0]().ID"},
		{"empty queue", func(w *workload.Workload) { w.Jobs[1].Queue = "" }, workload.ErrEmpty, "Jobs[1]"},
		{"empty logic", func(w *workload.Workload) { w.Jobs[0].Logic = "" }, workload.ErrEmpty, "Logic"},
		{"negative submit", func(w *workload.Workload) { w.Jobs[0].Submit = -1 }, workload.ErrInvalidValue, "Submit"},
		{"out of order", func(w *workload.Workload) { w.Jobs[0].Submit = time.Hour }, workload.ErrInvalidValue, "Jobs[1]"},
		{"negative input", func(w *workload.Workload) { w.Jobs[0].InputBytes = -1 }, workload.ErrInvalidValue, "InputBytes"},
		{"negative shuffle", func(w *workload.Workload) { w.Jobs[0].ShuffleBytes = -1 }, workload.ErrInvalidValue, "ShuffleBytes"},
		{"negative output", func(w *workload.Workload) { w.Jobs[0].OutputBytes = -1 }, workload.ErrInvalidValue, "OutputBytes"},
		{"no tasks", func(w *workload.Workload) { w.Jobs[0].Tasks = nil }, workload.ErrEmpty, "Tasks"},
		{"duplicate job", func(w *workload.Workload) { w.Jobs[1].ID = w.Jobs[0].ID }, workload.ErrDuplicateID, "Jobs[1]"},
		{"empty task id", func(w *workload.Workload) { w.Jobs[0].Tasks[0].ID = "" }, workload.ErrEmpty, "Tasks[0]().ID"},
		{"bad kind", func(w *workload.Workload) { w.Jobs[0].Tasks[0].Kind = 5 }, workload.ErrInvalidValue, "Kind"},
		{"negative task input", func(w *workload.Workload) { w.Jobs[0].Tasks[0].InputBytes = -1 }, workload.ErrInvalidValue, "Tasks[0]"},
		{"no profile", func(w *workload.Workload) { w.Jobs[0].Tasks[0].True = stage.Profile{} }, stage.ErrEmptyProfile, "True"},
		{"other schema", func(w *workload.Workload) { w.Jobs[0].Tasks[0].True = other }, resource.ErrSchemaMismatch, "True"},
		{"duplicate task", func(w *workload.Workload) { w.Jobs[1].Tasks[0].ID = w.Jobs[0].Tasks[0].ID }, workload.ErrDuplicateID, "Jobs[1]"},
		{"negative request", func(w *workload.Workload) { w.Jobs[0].Tasks[0].Request[0] = -1 }, resource.ErrNegative, "Request"},
		{"request outside schema", func(w *workload.Workload) { w.Jobs[0].Tasks[0].Request[6] = 1 }, resource.ErrOutsideSchema, "Request"},
		{"block out of range", func(w *workload.Workload) { w.Jobs[0].Tasks[0].Blocks = []int{len(w.Blocks)} }, workload.ErrInvalidValue, "Blocks[0]"},
		{"negative block index", func(w *workload.Workload) { w.Jobs[0].Tasks[0].Blocks = []int{-1} }, workload.ErrInvalidValue, "Blocks[0]"},
		{"negative min member", func(w *workload.Workload) { w.Jobs[0].MinMember = -1 }, workload.ErrInvalidValue, "Jobs[0](job0000).MinMember = -1"},
		{"gang larger than its maps", func(w *workload.Workload) { w.Jobs[0].MinMember = w.Jobs[0].NumTasks(workload.Map) + 1 },
			workload.ErrInvalidValue, "more than the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := validWorkload(t)
			tc.edit(&w)
			err := w.Validate()
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
		})
	}
}

// A gang gathers from the job's first batch: its map tasks, or all its tasks when it
// has none (a reduce-only job submits them all at once).
func TestValidateMinMember(t *testing.T) {
	w := validWorkload(t)
	j := &w.Jobs[0]
	maps := j.NumTasks(workload.Map)
	require.Greater(t, len(j.Tasks), maps, "the job has reduce tasks")
	j.MinMember = maps
	require.NoError(t, w.Validate(), "every map task is a member")
	j.MinMember = maps + 1
	require.ErrorIs(t, w.Validate(), workload.ErrInvalidValue, "a reduce task cannot be a member")
	for i := range j.Tasks {
		j.Tasks[i].Kind = workload.Reduce
		j.Tasks[i].Blocks = nil
	}
	j.MinMember = len(j.Tasks)
	require.NoError(t, w.Validate(), "without maps, every task is in the first batch")
	j.MinMember = len(j.Tasks) + 1
	require.ErrorIs(t, w.Validate(), workload.ErrInvalidValue)
}

func TestClusters(t *testing.T) {
	fgm, err := workload.FGMCluster()
	require.NoError(t, err)
	require.NoError(t, fgm.Validate())
	assert.Len(t, fgm.Nodes, 23)
	assert.Equal(t, []string{"rack1"}, fgm.Racks())
	assert.Equal(t, "node01", fgm.Nodes[0].ID)
	assert.Equal(t, workload.Schema().MustTuple(16000, 32*workload.GiB), fgm.Nodes[0].Capacity.Only(workload.YARNDims()))
	assert.Equal(t, workload.FGMCapacity().Scale(23), fgm.Capacity())

	th, err := workload.ThesisCluster()
	require.NoError(t, err)
	require.NoError(t, th.Validate())
	assert.Len(t, th.Nodes, 90)
	assert.Equal(t, []string{"rack1", "rack2", "rack3"}, th.Racks())
	speeds := map[string]map[float64]int{}
	for _, n := range th.Nodes {
		if speeds[n.Rack] == nil {
			speeds[n.Rack] = map[float64]int{}
		}
		speeds[n.Rack][n.Speed]++
		assert.Equal(t, 4, n.Slots)
	}
	for _, r := range th.Racks() {
		assert.Equal(t, map[float64]int{0.8: 10, 1: 10, 1.2: 10}, speeds[r])
	}
	// docs/methods.md §10 / thesis §4.3.1: a 128 MB block moves in 6.4 s within a rack,
	// 25.6 s across.
	assert.Equal(t, 6400*time.Millisecond, th.TransferTime(workload.DefaultBlockSize, fairness.RackLocal))
	assert.Equal(t, 25600*time.Millisecond, th.TransferTime(workload.DefaultBlockSize, fairness.OffSwitch))
	assert.Zero(t, th.TransferTime(workload.DefaultBlockSize, fairness.NodeLocal))
	assert.Zero(t, th.TransferTime(workload.DefaultBlockSize, fairness.NodeLocal))
	assert.Zero(t, th.TransferTime(-1, fairness.OffSwitch))

	// Locality: node 0 and 1 share rack1, node 30 is in rack2.
	assertLocality(t, fairness.NodeLocal, th, 0, []int{5, 0})
	assertLocality(t, fairness.RackLocal, th, 1, []int{0, 30})
	assertLocality(t, fairness.OffSwitch, th, 31, []int{0, 1})
	l, input := th.Locality(0, nil)
	assert.Equal(t, fairness.NodeLocal, l)
	assert.False(t, input, "no replicas: no input")
	assertLocality(t, fairness.OffSwitch, th, -1, []int{0})

	small, err := workload.ThesisCluster(workload.WithRacks(2), workload.WithNodesPerRack(4), workload.WithSlots(2),
		workload.WithBandwidth(100, 10), workload.WithNodeCapacity(workload.Schema().MustTuple(2000)))
	require.NoError(t, err)
	assert.Len(t, small.Nodes, 8)
	assert.Equal(t, []float64{0.8, 1, 1, 1.2}, []float64{small.Nodes[0].Speed, small.Nodes[1].Speed, small.Nodes[2].Speed, small.Nodes[3].Speed})
	assert.Equal(t, "rack2-node04", small.Nodes[7].ID)
	assert.Equal(t, int64(100), small.IntraRackBandwidth)

	big, err := workload.FGMCluster(workload.WithRacks(4), workload.WithNodesPerRack(250))
	require.NoError(t, err)
	assert.Len(t, big.Nodes, 1000)
	assert.Equal(t, "node0001", big.Nodes[0].ID)
	assert.Equal(t, "rack4", big.Nodes[999].Rack)
}

func TestClusterErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opt   workload.ClusterOption
		want  error
		field string
	}{
		{"racks", workload.WithRacks(0), workload.ErrInvalidOption, "racks"},
		{"nodes", workload.WithNodesPerRack(-1), workload.ErrInvalidOption, "nodes per rack"},
		{"slots", workload.WithSlots(-1), workload.ErrInvalidOption, "slots"},
		{"intra", workload.WithBandwidth(0, 1), workload.ErrInvalidOption, "intra-rack"},
		{"cross", workload.WithBandwidth(1, 0), workload.ErrInvalidOption, "cross-rack"},
		{"capacity", workload.WithNodeCapacity(resource.Tuple{-1}), resource.ErrNegative, "node capacity"},
		{"nil option", nil, workload.ErrInvalidOption, "cluster options[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.FGMCluster(tc.opt)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
			_, err = workload.ThesisCluster(tc.opt)
			assert.ErrorIs(t, err, tc.want)
		})
	}
	for _, tc := range []struct {
		name           string
		racks, perRack int
	}{
		{"million and one", 1_000_001, 1},
		{"four million", 2000, 2000},
		{"product wraps", 1 << 62, 4}, // 2⁶⁴ wraps to 0
		{"product overflows", math.MaxInt, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, build := range []func(...workload.ClusterOption) (workload.Cluster, error){workload.FGMCluster, workload.ThesisCluster} {
				_, err := build(workload.WithRacks(tc.racks), workload.WithNodesPerRack(tc.perRack))
				assert.ErrorIs(t, err, workload.ErrInvalidOption)
				assert.ErrorContains(t, err, "nodes")
			}
		})
	}
	_, err := workload.FGMCluster(workload.WithRacks(1000), workload.WithNodesPerRack(1000))
	require.NoError(t, err, "a million nodes are allowed")

	for _, tc := range []struct {
		name  string
		edit  func(c *workload.Cluster)
		want  error
		field string
	}{
		{"no nodes", func(c *workload.Cluster) { c.Nodes = nil }, workload.ErrEmpty, "Nodes"},
		{"intra", func(c *workload.Cluster) { c.IntraRackBandwidth = 0 }, workload.ErrInvalidValue, "IntraRackBandwidth"},
		{"cross", func(c *workload.Cluster) { c.CrossRackBandwidth = -1 }, workload.ErrInvalidValue, "CrossRackBandwidth"},
		{"empty id", func(c *workload.Cluster) { c.Nodes[1].ID = "" }, workload.ErrEmpty, "Nodes[1]().ID"},
		{"empty rack", func(c *workload.Cluster) { c.Nodes[1].Rack = "" }, workload.ErrEmpty, "Rack"},
		{"speed", func(c *workload.Cluster) { c.Nodes[1].Speed = math.NaN() }, workload.ErrInvalidValue, "Speed"},
		{"zero speed", func(c *workload.Cluster) { c.Nodes[1].Speed = 0 }, workload.ErrInvalidValue, "Speed"},
		{"slots", func(c *workload.Cluster) { c.Nodes[1].Slots = -1 }, workload.ErrInvalidValue, "Slots"},
		{"capacity", func(c *workload.Cluster) { c.Nodes[1].Capacity[7] = 1 }, resource.ErrOutsideSchema, "Capacity"},
		{"duplicate", func(c *workload.Cluster) { c.Nodes[2].ID = c.Nodes[0].ID }, workload.ErrDuplicateID, "Nodes[2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := workload.ThesisCluster()
			require.NoError(t, err)
			tc.edit(&c)
			err = c.Validate()
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
			_, err = workload.PlaceReplicas(&c, []int64{1}, 3)
			assert.ErrorIs(t, err, tc.want, "placement validates the cluster")
		})
	}
}

func TestPlaceReplicas(t *testing.T) {
	c, err := workload.ThesisCluster(workload.WithRacks(2), workload.WithNodesPerRack(3))
	require.NoError(t, err)
	// Known answer, racks {0,1,2} and {3,4,5}, equal blocks:
	// b0: least loaded = 0; same rack → 1; other rack → 3.
	// b1: least loaded = 2; same rack (0, 1 loaded) → 0; other rack → 4.
	// b2: least loaded = 5; same rack → 3; other rack → 1.
	got, err := workload.PlaceReplicas(&c, []int64{10, 10, 10}, 3)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 3}, {2, 0, 4}, {5, 3, 1}}, got)

	one, err := workload.FGMCluster(workload.WithNodesPerRack(3))
	require.NoError(t, err)
	got, err = workload.PlaceReplicas(&one, []int64{5, 5}, 3)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 2}, {0, 1, 2}}, got, "one rack: the third goes to any other node")

	lone, err := workload.FGMCluster(workload.WithRacks(3), workload.WithNodesPerRack(1))
	require.NoError(t, err)
	got, err = workload.PlaceReplicas(&lone, []int64{5}, 3)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{0, 1, 2}}, got, "one node per rack: the second goes to another rack")

	got, err = workload.PlaceReplicas(&c, nil, 1)
	require.NoError(t, err)
	assert.Empty(t, got)

	_, err = workload.PlaceReplicas(&c, []int64{1}, 0)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	_, err = workload.PlaceReplicas(&c, []int64{1}, 7)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorContains(t, err, "replicas")
	_, err = workload.PlaceReplicas(&c, []int64{1, -1}, 3)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorContains(t, err, "blocks[1]")
	_, err = workload.PlaceReplicas(nil, []int64{1}, 1)
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorContains(t, err, "cluster")
	assert.ErrorIs(t, (*workload.Cluster)(nil).Validate(), workload.ErrInvalidValue)
	assert.ErrorIs(t, (*workload.Workload)(nil).Validate(), workload.ErrInvalidValue)
}

func TestQuantileTable(t *testing.T) {
	q, err := workload.NewQuantileTable("t", []workload.Knot{{0, 10}, {0.5, 10}, {0.75, 1000}, {1, 100000}})
	require.NoError(t, err)
	assert.Equal(t, "t", q.Name())
	assert.Equal(t, 10.0, q.Min())
	assert.Equal(t, 100000.0, q.Max())
	assert.Equal(t, 10.0, q.Quantile(0.3), "a flat segment: an atom at 10")
	assert.InDelta(t, 100, q.Quantile(0.625), 1e-9, "log-linear: half way from 10 to 1000 is 100")
	assert.InDelta(t, 0.625, q.CDF(100), 1e-12)
	assert.Equal(t, 0.5, q.CDF(10), "the atom's mass is below or at 10")
	assert.Equal(t, 0.0, q.CDF(9.99))
	assert.Equal(t, 1.0, q.CDF(1e6))
	assert.Equal(t, 0.0, q.CDF(math.NaN()))
	assert.Equal(t, 10.0, q.Quantile(math.NaN()))
	assert.Equal(t, 100000.0, q.Quantile(2))
	assert.Len(t, q.Knots(), 4)
	// Mean without truncation: half at 10, a quarter log-uniform on [10, 1000], a quarter
	// on [1000, 1e5]; the log-uniform mean on [a, b] is (b − a)/ln(b/a).
	want := 0.5*10 + 0.25*(990/math.Log(100)) + 0.25*(99000/math.Log(100))
	assert.InDelta(t, want, q.Mean(0), want*1e-4)
	assert.InDelta(t, 10, q.Mean(10), 1e-9, "truncated at the atom")
	assert.Equal(t, 1.0, q.KS(nil), "no positive size")
	assert.Equal(t, 1.0, q.KS([]int64{0, -3}), "no positive size")

	for _, tc := range []struct {
		name  string
		knots []workload.Knot
		want  error
		field string
	}{
		{"one knot", []workload.Knot{{0, 1}}, workload.ErrEmpty, "knots"},
		{"first not 0", []workload.Knot{{0.1, 1}, {1, 2}}, workload.ErrInvalidValue, "knots[0].P"},
		{"last not 1", []workload.Knot{{0, 1}, {0.9, 2}}, workload.ErrInvalidValue, "knots[1].P"},
		{"P not increasing", []workload.Knot{{0, 1}, {0.5, 2}, {0.5, 3}, {1, 4}}, workload.ErrInvalidValue, "knots[2].P"},
		{"P NaN", []workload.Knot{{0, 1}, {math.NaN(), 2}, {1, 4}}, workload.ErrInvalidValue, "knots[1].P"},
		{"bytes below 1", []workload.Knot{{0, 0.5}, {1, 2}}, workload.ErrInvalidValue, "knots[0].Bytes"},
		{"bytes infinite", []workload.Knot{{0, 1}, {1, math.Inf(1)}}, workload.ErrInvalidValue, "knots[1].Bytes"},
		{"bytes decreasing", []workload.Knot{{0, 5}, {1, 2}}, workload.ErrInvalidValue, "knots[1].Bytes"},
		{"bytes beyond int64", []workload.Knot{{0, 1}, {1, 1e19}}, workload.ErrInvalidValue, "knots[1].Bytes"},
		{"bytes 2^63", []workload.Knot{{0, 1}, {1, math.MaxInt64}}, workload.ErrInvalidValue, "knots[1].Bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.NewQuantileTable("x", tc.knots)
			assert.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.field)
		})
	}
	_, err = workload.FitQuantileTable("x", []int64{0, 0}, workload.FitProbabilities())
	assert.ErrorIs(t, err, workload.ErrEmpty)
	_, err = workload.FitQuantileTable("x", []int64{5}, []float64{0, 2})
	assert.ErrorIs(t, err, workload.ErrInvalidValue)
	assert.ErrorContains(t, err, "ps[1]")
	_, err = workload.FitQuantileTable("x", []int64{5, 6}, []float64{0, 0.5})
	assert.ErrorIs(t, err, workload.ErrInvalidValue, "must end at 1")

	// A fit to sizes 1..1000 reproduces their quantiles (to three digits).
	var sizes []int64
	for i := int64(1); i <= 1000; i++ {
		sizes = append(sizes, i)
	}
	f, err := workload.FitQuantileTable("u", sizes, workload.FitProbabilities())
	require.NoError(t, err)
	assert.Equal(t, 1.0, f.Min())
	assert.Equal(t, 1000.0, f.Max())
	assert.InDelta(t, 500, f.Quantile(0.5), 2)
	assert.Less(t, f.KS(sizes), 0.01)
}

func TestEmbeddedTables(t *testing.T) {
	for _, q := range []*workload.QuantileTable{workload.FB2009(), workload.FB2010()} {
		assert.Len(t, q.Knots(), len(workload.FitProbabilities()))
		assert.True(t, strings.HasPrefix(q.Name(), "FB-20"))
	}
	// Published facts of FB-2010 (see the data README): median ≈ 10 MB, p90 ≈ 30 GB,
	// p99 ≈ 1.1 TB, max ≈ 11.7 TB.
	fb := workload.FB2010()
	assert.InEpsilon(t, 10e6, fb.Quantile(0.5), 0.25)
	assert.InEpsilon(t, 30e9, fb.Quantile(0.9), 0.1)
	assert.InEpsilon(t, 1.1e12, fb.Quantile(0.99), 0.05)
	assert.InEpsilon(t, 11.7e12, fb.Max(), 0.01)
}

// fixedSizes is a custom InputSizes: every job the same size (clamped by the generator).
type fixedSizes int64

func (f fixedSizes) Name() string                   { return "fixed" }
func (f fixedSizes) Sample(*rand.Rand, int64) int64 { return int64(f) }

func TestCustomInputSizes(t *testing.T) {
	w, err := workload.FGM(rng(1), workload.WithInputSizes(fixedSizes(300*workload.MiB)), workload.WithTotalInput(workload.GiB), workload.WithMaxJobInput(workload.GiB))
	require.NoError(t, err)
	assert.Equal(t, "fgm-offline-fixed-1GiB", w.Name)
	require.Len(t, w.Jobs, 4)
	assert.Equal(t, []int64{300 * workload.MiB, 300 * workload.MiB, 300 * workload.MiB, 124 * workload.MiB},
		[]int64{w.Jobs[0].InputBytes, w.Jobs[1].InputBytes, w.Jobs[2].InputBytes, w.Jobs[3].InputBytes}, "the last job takes what remains")
	// Out-of-range samples are clamped to [1, max job input].
	w, err = workload.FGM(rng(1), workload.WithInputSizes(fixedSizes(0)), workload.WithTotalInput(3))
	require.NoError(t, err)
	assert.Len(t, w.Jobs, 3)
	w, err = workload.FGM(rng(1), workload.WithInputSizes(fixedSizes(workload.TiB)), workload.WithTotalInput(workload.GiB))
	require.NoError(t, err)
	assert.Len(t, w.Jobs, 4, "jobs capped at a quarter of the total")
}

// The similarity key's family: the job's application and the task's kind, for the
// loaders that know the application (the generator, SWIM); none for a job without one.
func TestKeyFamily(t *testing.T) {
	tests := []struct {
		name string
		job  workload.Job
		task workload.Task
		want workload.SimilarityKey
	}{
		{"family and kind", workload.Job{Logic: "swim/job7", Family: "sort"}, workload.Task{Kind: workload.Reduce, InputBytes: 9},
			workload.SimilarityKey{Logic: "swim/job7/reduce", InputSize: 9, Family: "sort/reduce"}},
		{"a task's own logic joins both", workload.Job{Logic: "dag/j1", Family: "spark-sql"}, workload.Task{Logic: "t3"},
			workload.SimilarityKey{Logic: "dag/j1/t3/map", Family: "spark-sql/t3/map"}},
		{"no family", workload.Job{Logic: "ali/j1", App: "batch"}, workload.Task{Logic: "t3"},
			workload.SimilarityKey{Logic: "ali/j1/t3/map"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.job.Key(&tt.task))
		})
	}

	jobs := []workload.SWIMJob{{ID: "a", InputBytes: 300 << 20, ShuffleBytes: 1 << 20}, {ID: "b", InputBytes: 1}}
	w, err := workload.FromSWIM("swim", jobs, rng(1))
	require.NoError(t, err)
	for _, j := range w.Jobs {
		assert.NotEmpty(t, j.Family)
		assert.Equal(t, j.App, j.Family, "SWIM jobs' family is the application class drawn for them")
	}
	g, err := workload.FGM(rng(1), workload.WithScale(0.01))
	require.NoError(t, err)
	assert.Equal(t, g.Jobs[0].App, g.Jobs[0].Family)
}

// assertLocality asserts that cl.Locality(node, replicas) is want, with input.
func assertLocality(t *testing.T, want fairness.Level, cl workload.Cluster, node int, replicas []int) {
	t.Helper()
	l, input := cl.Locality(node, replicas)
	assert.Equal(t, want, l)
	assert.True(t, input)
}
