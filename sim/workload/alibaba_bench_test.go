package workload_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/finegrain/finegrain/sim/workload"
)

// readData reads a shared data file, skipping the benchmark when it is absent.
func readData(b *testing.B, rel string) []byte {
	data, err := os.ReadFile(dataFile(b, rel))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// benchParse runs parse over data, reporting bytes/s and rows/s.
func benchParse(b *testing.B, data []byte, parse func([]byte) (int, error)) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rows := 0
	for i := 0; i < b.N; i++ {
		n, err := parse(data)
		if err != nil {
			b.Fatal(err)
		}
		rows += n
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkParseAlibaba2017 parses the shared batch_task sample (40,000 rows, 2 MB).
func BenchmarkParseAlibaba2017(b *testing.B) {
	benchParse(b, readData(b, alibaba2017File), func(data []byte) (int, error) {
		rows, err := workload.ParseAlibaba2017(bytes.NewReader(data), "bench")
		return len(rows), err
	})
}

// BenchmarkParseOpenBPods parses the openb gpuspec10 pod list (8,152 pods, 580 kB).
func BenchmarkParseOpenBPods(b *testing.B) {
	benchParse(b, readData(b, openBDir+"openb_pod_list_gpuspec10.csv"), func(data []byte) (int, error) {
		pods, err := workload.ParseOpenBPods(bytes.NewReader(data), "bench")
		return len(pods), err
	})
}

// BenchmarkParseOpenBNodes parses the openb list of all nodes (1,523 nodes, 52 kB).
func BenchmarkParseOpenBNodes(b *testing.B) {
	benchParse(b, readData(b, openBDir+"openb_node_list_all_node.csv"), func(data []byte) (int, error) {
		nodes, err := workload.ParseOpenBNodes(bytes.NewReader(data), "bench")
		return len(nodes), err
	})
}

// BenchmarkFromAlibaba2017 builds the batch_task sample at 1/100 of its instances into
// a workload (5,759 jobs, 77,928 tasks).
func BenchmarkFromAlibaba2017(b *testing.B) {
	rows, err := workload.LoadAlibaba2017(dataFile(b, alibaba2017File))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	tasks := 0
	for i := 0; i < b.N; i++ {
		w, _, err := workload.FromAlibaba2017("bench", rows, rng(1), workload.WithScale(0.01))
		if err != nil {
			b.Fatal(err)
		}
		tasks += w.NumTasks()
	}
	b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "tasks/s")
}
