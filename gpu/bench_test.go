package gpu_test

import (
	"math/rand"
	"testing"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

var (
	sinkF float64
	sinkA gpu.Allocation
)

// benchNode is an 8-device node, partly used: free [1000, 250, 600, 1000, 0, 750,
// 400, 1000], <32000 mCPU, 256000 MiB> with <12000, 100000> free.
func benchNode(b *testing.B) (gpu.Devices, gpu.Node) {
	d := devices(b, "V100", 1000, 250, 600, 1000, 0, 750, 400, 1000)
	return d, gpu.Node{Capacity: schema.MustTuple(32000, 256000), Free: schema.MustTuple(12000, 100000)}
}

// benchShapes is n distinct shapes: shares of 100 to 900 and 1 to 4 whole devices,
// with CPU and memory requests, weights skewed toward the first.
func benchShapes(b *testing.B, n int) []gpu.WeightedShape {
	r := rand.New(rand.NewSource(1))
	out := make([]gpu.WeightedShape, n)
	for i := range out {
		dem := gpu.Share(int64(1+i%9) * 100)
		if i%3 == 2 {
			dem = gpu.Whole(1 + i%4)
		}
		out[i] = gpu.WeightedShape{
			Shape:  gpu.Shape{Request: schema.MustTuple(int64(500+r.Intn(8000)), int64(1000+r.Intn(64000))), GPU: dem},
			Weight: float64(n - i),
		}
	}
	return out
}

func benchFGD(b *testing.B, n int) *gpu.FGD {
	f, err := gpu.NewFGD(benchShapes(b, n), 0)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func benchScore(b *testing.B, sc gpu.DeviceScorer, dem gpu.Demand) {
	d, n := benchNode(b)
	n.Devices = &d
	s := gpu.Shape{Request: schema.MustTuple(2000, 8000), GPU: dem}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, a, ok := sc.Score(n, s)
		if !ok {
			b.Fatal("does not fit")
		}
		sinkF, sinkA = x, a
	}
}

func BenchmarkScore(b *testing.B) {
	for _, c := range []struct {
		name string
		sc   func(*testing.B) gpu.DeviceScorer
	}{
		{"BestFit", func(*testing.B) gpu.DeviceScorer { return gpu.DeviceBestFit{} }},
		{"DotProduct", func(*testing.B) gpu.DeviceScorer { return gpu.DotProduct{} }},
		{"Packing", func(*testing.B) gpu.DeviceScorer { return gpu.Packing{} }},
		{"FGD20", func(b *testing.B) gpu.DeviceScorer { return benchFGD(b, 20) }},
		{"FGD100", func(b *testing.B) gpu.DeviceScorer { return benchFGD(b, 100) }},
	} {
		for _, dem := range []struct {
			name string
			d    gpu.Demand
		}{{"share", gpu.Share(300)}, {"whole2", gpu.Whole(2)}} {
			b.Run(c.name+"/"+dem.name, func(b *testing.B) { benchScore(b, c.sc(b), dem.d) })
		}
	}
}

func BenchmarkFrag(b *testing.B) {
	for _, n := range []int{20, 100} {
		b.Run(map[int]string{20: "shapes20", 100: "shapes100"}[n], func(b *testing.B) {
			f := benchFGD(b, n)
			d, node := benchNode(b)
			node.Devices = &d
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sinkF = f.Frag(node)
			}
		})
	}
}

func BenchmarkBestFit(b *testing.B) {
	d, _ := benchNode(b)
	dem := gpu.Share(300)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a, ok := d.BestFit(dem)
		if !ok {
			b.Fatal("does not fit")
		}
		sinkA = a
	}
}

func BenchmarkTypicalShapes(b *testing.B) {
	// 10,000 tasks of 100 distinct shapes.
	ws := benchShapes(b, 100)
	r := rand.New(rand.NewSource(2))
	tasks := make([]gpu.Shape, 10000)
	for i := range tasks {
		tasks[i] = ws[r.Intn(len(ws))].Shape
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := gpu.TypicalShapes(tasks, resource.Mask(0), 0.6)
		if err != nil {
			b.Fatal(err)
		}
		sinkF = float64(len(out))
	}
}
