package sim

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
)

// gpuCluster is n nodes of 16 cores and 64 GiB with spec's GPUs each.
func gpuCluster(n int, spec gpu.Spec) workload.Cluster {
	cl := workload.Cluster{Name: "gpu", IntraRackBandwidth: 1, CrossRackBandwidth: 1}
	for i := range n {
		cl.Nodes = append(cl.Nodes, workload.NodeSpec{ID: string(rune('a' + i)), Rack: "r", Capacity: tuple(16000, 64*gib, 0, 0), Speed: 1, GPU: spec})
	}
	return cl
}

func gpuTask(id string, cpu int64, d gpu.Demand) workload.Task {
	return workload.Task{ID: id, Request: tuple(cpu, gib, 0, 0), GPU: d, True: oneStage(time.Second, tuple(cpu, gib, 0, 0))}
}

// Known answer: two devices, tasks of 0.6 GPU each. The first two take a device each;
// every later one finds 0.4 free on each and is refused, although 0.8 is free in sum.
func TestFillKnownAnswer(t *testing.T) {
	cl := gpuCluster(1, gpu.Spec{Model: "T4", Count: 2})
	pool := []workload.Task{gpuTask("share", 1000, gpu.Share(600))}
	for _, p := range []Policy{GPUSharing("BestFit", gpu.DeviceBestFit{}), GPUSharing("Packing", gpu.Packing{}), DRF()} {
		r, err := Fill(pool, &cl, p, rand.New(rand.NewPCG(1, 2)), 1.5, 0.3)
		require.NoError(t, err, p.Name)
		assert.Equal(t, int64(2000), r.Capacity)
		assert.Equal(t, 2, r.Placed, p.Name)
		assert.Equal(t, 3, r.Failed, p.Name)
		want := []FillPoint{{0.3, 0.3, 1, 0}, {0.6, 0.6, 2, 0}, {0.9, 0.6, 2, 1}, {1.2, 0.6, 2, 2}, {1.5, 0.6, 2, 3}}
		require.Len(t, r.Points, len(want), p.Name)
		for i, w := range want {
			assert.InDelta(t, w.Arrived, r.Points[i].Arrived, 1e-9, p.Name)
			assert.InDelta(t, w.Allocated, r.Points[i].Allocated, 1e-9, p.Name)
			assert.Equal(t, w.Placed, r.Points[i].Placed, p.Name)
			assert.Equal(t, w.Failed, r.Points[i].Failed, p.Name)
		}
		pt, ok := r.At(0.9)
		assert.True(t, ok)
		assert.InDelta(t, 0.6, pt.Allocated, 1e-9)
		_, ok = r.At(2)
		assert.False(t, ok)
	}
}

func TestFillErrors(t *testing.T) {
	cl := gpuCluster(1, gpu.Spec{Model: "T4", Count: 2})
	pool := []workload.Task{gpuTask("share", 1000, gpu.Share(600))}
	p := GPUSharing("BestFit", gpu.DeviceBestFit{})
	r := rand.New(rand.NewPCG(1, 2))
	noGPU := gpuCluster(1, gpu.Spec{})
	cpuOnly := []workload.Task{gpuTask("cpu", 1000, gpu.Demand{})}
	for name, f := range map[string]func() error{
		"nil rand":    func() error { _, err := Fill(pool, &cl, p, nil, 1, 0.1); return err },
		"empty pool":  func() error { _, err := Fill(nil, &cl, p, r, 1, 0.1); return err },
		"zero upTo":   func() error { _, err := Fill(pool, &cl, p, r, 0, 0.1); return err },
		"NaN upTo":    func() error { _, err := Fill(pool, &cl, p, r, nan(), 0.1); return err },
		"zero step":   func() error { _, err := Fill(pool, &cl, p, r, 1, 0); return err },
		"tiny step":   func() error { _, err := Fill(pool, &cl, p, r, 1, 1e-9); return err },
		"no GPUs":     func() error { _, err := Fill(pool, &noGPU, p, r, 1, 0.1); return err },
		"no GPU pool": func() error { _, err := Fill(cpuOnly, &cl, p, r, 1, 0.1); return err },
		"bad cluster": func() error { _, err := Fill(pool, &workload.Cluster{}, p, r, 1, 0.1); return err },
		"wrong model": func() error {
			_, err := Fill([]workload.Task{gpuTask("v", 1, gpu.Demand{Count: 1, Milli: 1000, Models: []string{"V100"}})}, &cl, p, r, 1, 0.1)
			return err
		},
		"bad demand": func() error {
			_, err := Fill([]workload.Task{gpuTask("v", 1, gpu.Demand{Count: 2, Milli: 500})}, &cl, p, r, 1, 0.1)
			return err
		},
		"too many GPU": func() error {
			_, err := Fill([]workload.Task{gpuTask("v", 1, gpu.Whole(4))}, &cl, p, r, 1, 0.1)
			return err
		},
		"SLO on a batch task": func() error {
			tk := gpuTask("v", 1, gpu.Share(500))
			tk.SLO = time.Second
			_, err := Fill([]workload.Task{tk}, &cl, p, r, 1, 0.1)
			return err
		},
		"negative SLO": func() error {
			tk := gpuTask("v", 1, gpu.Share(500))
			tk.LatencySensitive, tk.SLO = true, -time.Second
			_, err := Fill([]workload.Task{tk}, &cl, p, r, 1, 0.1)
			return err
		},
	} {
		assert.ErrorIs(t, f(), ErrInvalidInput, name)
	}
}

// Same seed, same fill; another seed draws another sequence.
func TestFillDeterministic(t *testing.T) {
	cl := gpuCluster(4, gpu.Spec{Model: "T4", Count: 4})
	pool := []workload.Task{gpuTask("a", 2000, gpu.Share(300)), gpuTask("b", 4000, gpu.Share(700)), gpuTask("c", 8000, gpu.Whole(2)), gpuTask("d", 6000, gpu.Demand{})}
	shapes := make([]gpu.Shape, len(pool))
	for i, t := range pool {
		shapes[i] = gpu.Shape{Request: t.Request, GPU: t.GPU}
	}
	typical, err := gpu.TypicalShapes(shapes, resource.Mask(1<<workload.SlotCPU), 1)
	require.NoError(t, err)
	fgd, err := gpu.NewFGD(typical, resource.Mask(1<<workload.SlotCPU))
	require.NoError(t, err)
	for _, p := range []Policy{GPUSharing("DotProduct", gpu.DotProduct{}), GPUSharing("FGD", fgd)} {
		a, err := Fill(pool, &cl, p, rand.New(rand.NewPCG(7, 8)), 1.3, 0.05)
		require.NoError(t, err)
		b, err := Fill(pool, &cl, p, rand.New(rand.NewPCG(7, 8)), 1.3, 0.05)
		require.NoError(t, err)
		assert.Equal(t, a, b, p.Name)
		last := a.Points[len(a.Points)-1]
		assert.LessOrEqual(t, last.Allocated, 1.0, p.Name)
		assert.GreaterOrEqual(t, last.Arrived, 1.3-1e-9, p.Name)
		for i := 1; i < len(a.Points); i++ {
			assert.GreaterOrEqual(t, a.Points[i].Allocated, a.Points[i-1].Allocated, "allocation never shrinks: nothing ends")
		}
	}
}

// openBPool loads the shared openb node list and a pod list, or skips.
func openBPool(tb testing.TB, pods string) (workload.Cluster, []workload.Task, []gpu.Shape) {
	tb.Helper()
	dir := filepath.Join("..", "..", "shared", "data", "alibaba", "gpu-v2023")
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("openb trace not found at %s: %v", dir, err)
	}
	nodes, err := workload.LoadOpenBNodes(filepath.Join(dir, "openb_node_list_all_node.csv"))
	require.NoError(tb, err)
	cl, err := workload.OpenBCluster("openb", nodes)
	require.NoError(tb, err)
	list, err := workload.LoadOpenBPods(filepath.Join(dir, pods))
	require.NoError(tb, err)
	var pool []workload.Task
	var shapes []gpu.Shape
	for i := range list {
		t, err := workload.OpenBTask(&list[i], time.Second)
		require.NoError(tb, err)
		pool = append(pool, t)
		shapes = append(shapes, gpu.Shape{Request: t.Request, GPU: t.GPU})
	}
	return cl, pool, shapes
}

// BenchmarkFillOpenB is the ATC'23 fill experiment on the openb trace (gpushare40 pods,
// 1,523 nodes, 6,212 GPUs) up to 130% of the GPU capacity, per scorer: the wall time of
// one replay.
func BenchmarkFillOpenB(b *testing.B) {
	cl, pool, shapes := openBPool(b, "openb_pod_list_gpushare40.csv")
	cpu := resource.Mask(1 << workload.SlotCPU)
	typical, err := gpu.TypicalShapes(shapes, cpu, 1)
	require.NoError(b, err)
	fgd, err := gpu.NewFGD(typical, cpu)
	require.NoError(b, err)
	for _, p := range []Policy{GPUSharing("BestFit", gpu.DeviceBestFit{}), GPUSharing("DotProduct", gpu.DotProduct{}), GPUSharing("Packing", gpu.Packing{}), GPUSharing("FGD", fgd)} {
		b.Run(p.Name, func(b *testing.B) {
			b.ReportAllocs()
			var r *FillResult
			for range b.N {
				if r, err = Fill(pool, &cl, p, rand.New(rand.NewPCG(1, 2)), 1.3, 0.01); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Placed+r.Failed)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
			last := r.Points[len(r.Points)-1]
			b.ReportMetric(100*(1-last.Allocated), "%unallocated")
		})
	}
}

// The simulator hands tasks' GPU demands to the scheduler: three tasks of one whole
// GPU each on a node of two GPUs (and room for all three otherwise) run two, then one,
// in both modes; without the demand all three run at once.
func TestRunRespectsGPUs(t *testing.T) {
	cl := gpuCluster(1, gpu.Spec{Model: "T4", Count: 2})
	for _, mode := range []Mode{Pull, Push} {
		for _, d := range []gpu.Demand{gpu.Whole(1), {}} {
			w := workload.Workload{Name: "gpu"}
			for i := range 3 {
				j := handJob(string(rune('a'+i)), "q", 0, tuple(1000, gib, 0, 0), oneStage(10*time.Second, tuple(1000, gib, 0, 0)))
				j.Tasks[0].GPU = d
				w.Jobs = append(w.Jobs, j)
			}
			require.NoError(t, w.Validate())
			r, err := Run(&w, &cl, DRF(), WithMode(mode))
			require.NoError(t, err)
			want := 10 * time.Second
			if !d.IsZero() {
				want = 20 * time.Second
			}
			assert.InDelta(t, want.Seconds(), r.Summary.Makespan.Seconds(), 1.5, "mode %v, demand %v", mode, d)
		}
	}
}

// One point a step, each at the arrival that reached it, whatever the rounding of
// k × step: ten devices filled one whole device at a time.
func TestFillPointsAlignWithSteps(t *testing.T) {
	cl := gpuCluster(1, gpu.Spec{Model: "T4", Count: 10})
	pool := []workload.Task{gpuTask("one", 100, gpu.Whole(1))}
	for _, tc := range []struct{ upTo, step float64 }{{0.3, 0.1}, {0.6, 0.2}, {0.7, 0.1}, {1.3, 0.1}, {0.75, 0.1}} {
		r, err := Fill(pool, &cl, GPUSharing("BestFit", gpu.DeviceBestFit{}), rand.New(rand.NewPCG(1, 2)), tc.upTo, tc.step)
		require.NoError(t, err, tc)
		n := int(tc.upTo/tc.step + 1e-9)
		require.Len(t, r.Points, n, tc)
		for k, p := range r.Points {
			want := float64(k+1) * tc.step
			assert.InDelta(t, want, p.Arrived, 1e-9, "%v point %d", tc, k)
			assert.InDelta(t, min(want, 1), p.Allocated, 1e-9, "%v point %d", tc, k)
		}
		_, ok := r.At(float64(n) * tc.step)
		assert.True(t, ok, tc)
	}
}

// Every task arrives as a job of its own at priority 0, so a policy with priority
// preemption evicts nothing, and its fill equals the plain policy's.
func TestFillWithPreemptingPolicy(t *testing.T) {
	cl := gpuCluster(2, gpu.Spec{Model: "T4", Count: 2})
	pool := []workload.Task{gpuTask("a", 1000, gpu.Share(600)), gpuTask("b", 1000, gpu.Whole(1))}
	plain := GPUSharing("BestFit", gpu.DeviceBestFit{})
	preempting := plain
	preempting.Options = append(slices.Clone(plain.Options), finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: true}))
	a, err := Fill(pool, &cl, plain, rand.New(rand.NewPCG(3, 4)), 1.3, 0.1)
	require.NoError(t, err)
	b, err := Fill(pool, &cl, preempting, rand.New(rand.NewPCG(3, 4)), 1.3, 0.1)
	require.NoError(t, err)
	assert.Equal(t, a.Points, b.Points)
}
