package workload_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/finegrain/finegrain/sim/workload"
)

// BenchmarkFGMOffline generates the default paper-like workload: 400 GiB, about 360
// jobs and 4,000 tasks.
func BenchmarkFGMOffline(b *testing.B) {
	b.ReportAllocs()
	tasks := 0
	for i := 0; i < b.N; i++ {
		w, err := workload.FGM(rng(uint64(i)))
		if err != nil {
			b.Fatal(err)
		}
		tasks += w.NumTasks()
	}
	b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkThesisMixed generates the thesis' experiment 4 at full size: 510 jobs,
// 111,000 tasks.
func BenchmarkThesisMixed(b *testing.B) {
	mix, _ := workload.ThesisExperiment(4)
	b.ReportAllocs()
	tasks := 0
	for i := 0; i < b.N; i++ {
		w, err := workload.Thesis(rng(uint64(i)), mix)
		if err != nil {
			b.Fatal(err)
		}
		tasks += w.NumTasks()
	}
	b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkPlaceReplicas places the 3,200 blocks of 400 GiB on the thesis' 90 nodes, and
// 32,000 blocks on 1,000 nodes (20 racks of 50).
func BenchmarkPlaceReplicas(b *testing.B) {
	thesis, _ := workload.ThesisCluster()
	big, _ := workload.FGMCluster(workload.WithRacks(20), workload.WithNodesPerRack(50))
	for _, tc := range []struct {
		cl     workload.Cluster
		blocks int
	}{{thesis, 3200}, {big, 32000}} {
		b.Run(fmt.Sprintf("nodes=%d", len(tc.cl.Nodes)), func(b *testing.B) {
			blocks := make([]int64, tc.blocks)
			for i := range blocks {
				blocks[i] = workload.DefaultBlockSize
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := workload.PlaceReplicas(&tc.cl, blocks, 3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseSWIMSynthetic parses 10,000 generated lines (no data files needed).
func BenchmarkParseSWIMSynthetic(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&buf, "job%d\t%d\t%d\t%d\t%d\t%d\n", i, i*3, 3, int64(i)*7919*1024, int64(i)*104729, i*31)
	}
	parse(b, buf.Bytes())
}

// BenchmarkParseSWIMFB2010 parses the real FB-2010 trace (24,442 jobs, 899 kB).
func BenchmarkParseSWIMFB2010(b *testing.B) {
	data, err := os.ReadFile(dataFile(b, fb2010File))
	if err != nil {
		b.Fatal(err)
	}
	parse(b, data)
}

func parse(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := workload.ParseSWIM(bytes.NewReader(data), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromSWIMFB2010 builds the FB-2010 trace scaled by 1/1000 into a workload
// (24,442 jobs, about 33,000 tasks).
func BenchmarkFromSWIMFB2010(b *testing.B) {
	jobs, err := workload.LoadSWIM(dataFile(b, fb2010File))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	tasks := 0
	for i := 0; i < b.N; i++ {
		w, err := workload.FromSWIM("FB-2010", jobs, rng(1), workload.WithScale(0.001))
		if err != nil {
			b.Fatal(err)
		}
		tasks += w.NumTasks()
	}
	b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkProfile derives one jittered map-task profile.
func BenchmarkProfile(b *testing.B) {
	a := workload.SparkKMeans()
	j := workload.Jitter{Rand: rng(1), Sigma: 0.05}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := a.Profile(workload.Map, workload.DefaultBlockSize, workload.DefaultBlockSize/20, j); err != nil {
			b.Fatal(err)
		}
	}
}
