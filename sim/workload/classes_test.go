package workload_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
)

func TestOpenBPodLatencySensitive(t *testing.T) {
	for _, tc := range []struct {
		qos  string
		want bool
	}{
		{"LS", true},
		{"ls", true},
		{"LSR", true},
		{"LSE", true},
		{"BE", false},
		{"Burstable", false},
		{"Guaranteed", false},
		{"", false},
		{"LS ", false}, // the parser trims fields; a hand-built pod is taken as written
		{"LSX", false},
	} {
		p := workload.OpenBPod{QoS: tc.qos}
		assert.Equal(t, tc.want, p.LatencySensitive(), "qos %q", tc.qos)
	}
}

// ceilTimes is ⌈f × d⌉, saturating at the largest time.Duration: the SLO rule.
func ceilTimes(f float64, d time.Duration) time.Duration {
	if v := math.Ceil(f * float64(d)); v < math.MaxInt64 {
		return time.Duration(v)
	}
	return math.MaxInt64
}

// The openb mapping on a small pod list: LS pods are latency-sensitive with an SLO of
// the factor times their run time; BE, Burstable, Guaranteed and qos-less pods are
// batch, without one.
func TestFromOpenBClasses(t *testing.T) {
	in := openBPodHead +
		"ls,1000,1024,0,0,,LS,Succeeded,0,100,1\n" +
		"be,1000,1024,0,0,,BE,Succeeded,10,70,11\n" +
		"burst,1000,1024,1,500,T4,Burstable,Succeeded,20,50,21\n" +
		"guar,1000,1024,0,0,,Guaranteed,Succeeded,30,90,31\n" +
		"none,1000,1024,0,0,,,Succeeded,40,45,41\n" +
		"ls-gpu,2000,2048,1,1000,,ls,Running,50,350,\n" +
		"ls-short,1000,1024,0,0,,LS,Succeeded,60,60,60\n"
	pods, err := workload.ParseOpenBPods(strings.NewReader(in), "pods")
	require.NoError(t, err)
	cl, err := workload.OpenBCluster("openb", openBNodes())
	require.NoError(t, err)

	want := map[string]time.Duration{ // run time of the latency-sensitive pods
		"ls": 100 * time.Second, "ls-gpu": 300 * time.Second, "ls-short": workload.MinStageDuration,
	}
	for _, tc := range []struct {
		name   string
		opts   []workload.Option
		factor float64
	}{
		{"default factor", nil, workload.DefaultSLOFactor},
		{"factor 2", []workload.Option{workload.WithSLOFactor(2)}, 2},
		{"factor 1", []workload.Option{workload.WithSLOFactor(1)}, 1},
		{"factor 1.25, share ignored", []workload.Option{workload.WithSLOFactor(1.25), workload.WithLatencySensitive(1)}, 1.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, st, err := workload.FromOpenB("x", pods, &cl, 1, tc.opts...)
			require.NoError(t, err)
			require.NoError(t, w.Validate())
			assert.Equal(t, len(pods), st.Used)
			for _, j := range w.Jobs {
				tk := j.Tasks[0]
				d, ls := want[tk.ID]
				assert.Equal(t, ls, tk.LatencySensitive, tk.ID)
				if !ls {
					assert.Zero(t, tk.SLO, tk.ID)
					continue
				}
				assert.Equal(t, d, tk.True.Duration(), tk.ID)
				assert.Equal(t, ceilTimes(tc.factor, d), tk.SLO, tk.ID)
			}
		})
	}

	// OpenBTask alone: the class, and the default factor.
	tk, err := workload.OpenBTask(&pods[0], time.Minute)
	require.NoError(t, err)
	assert.True(t, tk.LatencySensitive)
	assert.Equal(t, 90*time.Second, tk.SLO)
	tk, err = workload.OpenBTask(&pods[1], time.Minute)
	require.NoError(t, err)
	assert.False(t, tk.LatencySensitive)
	assert.Zero(t, tk.SLO)

	for _, f := range []float64{0.99, 0, -1, math.NaN(), math.Inf(1)} {
		_, _, err := workload.FromOpenB("x", pods, &cl, 1, workload.WithSLOFactor(f))
		assert.ErrorIs(t, err, workload.ErrInvalidOption, "factor %v", f)
		assert.ErrorContains(t, err, "SLO factor")
	}
	_, _, err = workload.FromOpenB("x", pods, &cl, 1, nil)
	assert.ErrorIs(t, err, workload.ErrInvalidOption)
}

// withoutClasses is w with every task batch and without an SLO.
func withoutClasses(w workload.Workload) workload.Workload {
	out := w
	out.Jobs = make([]workload.Job, len(w.Jobs))
	for i, j := range w.Jobs {
		j.Tasks = append([]workload.Task(nil), j.Tasks...)
		for k := range j.Tasks {
			j.Tasks[k].LatencySensitive, j.Tasks[k].SLO = false, 0
		}
		out.Jobs[i] = j
	}
	return out
}

// checkShare reports what is wrong with w, generated with a share frac of
// latency-sensitive jobs and SLO factor f, against plain, the same without the option:
// round(frac × jobs) jobs whose tasks are all latency-sensitive with SLO ⌈f × true
// run time⌉, the others batch without SLOs, and nothing else changed.
func checkShare(w, plain workload.Workload, frac, f float64) string {
	if err := w.Validate(); err != nil {
		return err.Error()
	}
	n := 0
	for _, j := range w.Jobs {
		ls := j.Tasks[0].LatencySensitive
		if ls {
			n++
		}
		for _, tk := range j.Tasks {
			switch {
			case tk.LatencySensitive != ls:
				return fmt.Sprintf("job %s: task %s latency-sensitive %v, its first task %v", j.ID, tk.ID, tk.LatencySensitive, ls)
			case ls && tk.SLO != ceilTimes(f, tk.True.Duration()):
				return fmt.Sprintf("task %s: SLO %v for a run time of %v, factor %v", tk.ID, tk.SLO, tk.True.Duration(), f)
			case !ls && tk.SLO != 0:
				return fmt.Sprintf("batch task %s: SLO %v", tk.ID, tk.SLO)
			}
		}
	}
	if want := int(math.Round(frac * float64(len(w.Jobs)))); n != want {
		return fmt.Sprintf("%d latency-sensitive jobs of %d, want %d (share %v)", n, len(w.Jobs), want, frac)
	}
	if !reflect.DeepEqual(withoutClasses(w), plain) {
		return "the share changed more than the classes and SLOs"
	}
	return ""
}

func TestWithLatencySensitive(t *testing.T) {
	gens := []struct {
		name string
		gen  func(opts ...workload.Option) (workload.Workload, error)
	}{
		{"FGM", func(opts ...workload.Option) (workload.Workload, error) {
			return workload.FGM(rng(5), append([]workload.Option{workload.WithTotalInput(3 * workload.GiB)}, opts...)...)
		}},
		{"Thesis", func(opts ...workload.Option) (workload.Workload, error) {
			mix := []workload.ThesisMix{{Class: workload.ThesisSmall, JobsPerQueue: 3}}
			return workload.Thesis(rng(5), mix, opts...)
		}},
		{"FromSWIM", func(opts ...workload.Option) (workload.Workload, error) {
			jobs := []workload.SWIMJob{{ID: "a", InputBytes: workload.GiB}, {ID: "b", Submit: time.Second, InputBytes: 10, ShuffleBytes: 10},
				{ID: "c", Submit: 2 * time.Second, InputBytes: workload.MiB}, {ID: "d", Submit: 3 * time.Second}}
			return workload.FromSWIM("fb", jobs, rng(5), opts...)
		}},
		{"FromAlibaba2017", func(opts ...workload.Option) (workload.Workload, error) {
			rows := []workload.Alibaba2017Task{aliRow(1, 1, 0, 100, 3, "Terminated", 50, 0.01), aliRow(2, 1, 10, 50, 2, "Terminated", 100, 0.1),
				aliRow(3, 1, 20, 80, 1, "Terminated", 100, 0.1)}
			w, _, err := workload.FromAlibaba2017("bt", rows, rng(5), opts...)
			return w, err
		}},
	}
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			plain, err := g.gen()
			require.NoError(t, err)
			for _, tk := range plain.Jobs[0].Tasks {
				require.False(t, tk.LatencySensitive, "every task is batch by default")
			}
			for _, tc := range []struct {
				frac, factor float64
			}{{0, 1.5}, {1, 1.5}, {0.5, 1.5}, {0.5, 3}, {0.01, 1.5}} {
				w, err := g.gen(workload.WithLatencySensitive(tc.frac), workload.WithSLOFactor(tc.factor))
				require.NoError(t, err)
				assert.Empty(t, checkShare(w, plain, tc.frac, tc.factor), "share %v, factor %v", tc.frac, tc.factor)
				if tc.frac == 0 {
					assert.Equal(t, plain, w, "share 0 gives the workload without the option")
				}
			}
			for _, frac := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
				_, err := g.gen(workload.WithLatencySensitive(frac))
				assert.ErrorIs(t, err, workload.ErrInvalidOption, "share %v", frac)
				assert.ErrorContains(t, err, "latency-sensitive share")
			}
			_, err = g.gen(workload.WithSLOFactor(0.5))
			assert.ErrorIs(t, err, workload.ErrInvalidOption)
			assert.ErrorContains(t, err, "SLO factor")
		})
	}
}

func TestValidateClasses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(tk *workload.Task)
		field string
	}{
		{"SLO on a batch task", func(tk *workload.Task) { tk.SLO = time.Second }, "Tasks[0](job0000/m00000).SLO"},
		{"negative SLO", func(tk *workload.Task) { tk.LatencySensitive, tk.SLO = true, -1 }, "Tasks[0](job0000/m00000).SLO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := validWorkload(t)
			tc.edit(&w.Jobs[0].Tasks[0])
			err := w.Validate()
			assert.ErrorIs(t, err, workload.ErrInvalidValue)
			assert.ErrorContains(t, err, tc.field)
		})
	}
	w := validWorkload(t)
	w.Jobs[0].Tasks[0].LatencySensitive = true
	assert.NoError(t, w.Validate(), "latency-sensitive without an SLO")
	w.Jobs[0].Tasks[0].SLO = time.Minute
	assert.NoError(t, w.Validate(), "latency-sensitive with an SLO")
}

// Over random FGM workloads, shares and factors: exactly round(share × jobs) jobs are
// latency-sensitive, each task of theirs with the factor's SLO, and the workload is the
// one without the option but for that. gopter's seed is fresh on every run and printed
// when the property fails.
func TestLatencySensitiveProperty(t *testing.T) {
	p := gopter.NewProperties(params())
	p.Property("a share of latency-sensitive jobs changes only classes and SLOs", prop.ForAll(
		func(seed uint64, total int64, frac, factor float64) string {
			plain, err := small(seed, total)
			if err != nil {
				return err.Error()
			}
			w, err := small(seed, total, workload.WithLatencySensitive(frac), workload.WithSLOFactor(factor))
			if err != nil {
				return err.Error()
			}
			return checkShare(w, plain, frac, factor)
		},
		gen.UInt64(), gen.Int64Range(1, 2*workload.GiB), gen.Float64Range(0, 1), gen.Float64Range(1, 10),
	))
	p.TestingRun(t)
}

// FuzzClassOptions checks WithLatencySensitive and WithSLOFactor on any values: they are
// refused, with an option error, exactly when the share is outside [0, 1] or the factor
// below 1 or not finite; otherwise the workload is the one without them but for the
// classes and SLOs they give.
func FuzzClassOptions(f *testing.F) {
	f.Add(uint64(1), 0.5, 1.5)
	f.Add(uint64(2), 0.0, 1.0)
	f.Add(uint64(3), 1.0, 1e300)
	f.Add(uint64(4), -0.5, 0.9)
	f.Add(uint64(5), math.NaN(), math.Inf(1))
	f.Fuzz(func(t *testing.T, seed uint64, frac, factor float64) {
		w, err := small(seed, 500*workload.MiB, workload.WithLatencySensitive(frac), workload.WithSLOFactor(factor))
		bad := !(frac >= 0 && frac <= 1) || !(factor >= 1) || math.IsInf(factor, 1)
		if bad != (err != nil) {
			t.Fatalf("share %v, factor %v: error %v", frac, factor, err)
		}
		if err != nil {
			if !errors.Is(err, workload.ErrInvalidOption) {
				t.Fatalf("share %v, factor %v: %v is not an option error", frac, factor, err)
			}
			return
		}
		plain, err := small(seed, 500*workload.MiB)
		if err != nil {
			t.Fatal(err)
		}
		if msg := checkShare(w, plain, frac, factor); msg != "" {
			t.Fatal(msg)
		}
	})
}
