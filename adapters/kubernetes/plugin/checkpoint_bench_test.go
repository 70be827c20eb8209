package plugin

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"
	"time"

	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/stage"
)

// BenchmarkCheckpointSize measures what a checkpoint of the plugin's estimator takes in
// its ConfigMap: keys of two-stage CPU and memory profiles, each learned from three
// pods, saved (SaveEstimates' encoding) and gzip-compressed as writeCheckpoint does;
// it reports the JSON and the compressed bytes a key.
//
//	go test -run '^$' -bench CheckpointSize -benchtime 1x ./plugin/
func BenchmarkCheckpointSize(b *testing.B) {
	sc, err := newScheme(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, keys := range []int{1000, defaultLearnedKeys} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			b.ReportAllocs()
			est, err := predict.NewSimilarTask(sc.schema, predict.WithMaxKeys(keys))
			if err != nil {
				b.Fatal(err)
			}
			for i := range keys {
				k := predict.Key{Logic: fmt.Sprintf("team-%d/finegrain.io/logic=job-%d", i%50, i), InputSize: int64(i%7) << 30}
				for r := range 3 {
					p, err := stage.NewProfile(sc.schema,
						stage.Stage{Duration: time.Duration(30+i%60+r) * time.Second, Demand: sc.schema.MustTuple(int64(500+i%700+13*r), int64(1<<30+i*4096+777*r))},
						stage.Stage{Duration: time.Duration(60+i%90) * time.Second, Demand: sc.schema.MustTuple(int64(100+i%300+r), int64(1<<29+i*512+r))})
					if err != nil {
						b.Fatal(err)
					}
					if err := est.Observe(k, predict.Observation{Profile: p}); err != nil {
						b.Fatal(err)
					}
				}
			}
			var raw, gz bytes.Buffer
			b.ResetTimer()
			for range b.N {
				raw.Reset()
				gz.Reset()
				if err := est.Checkpoint(&raw); err != nil {
					b.Fatal(err)
				}
				w := gzip.NewWriter(&gz)
				if _, err := w.Write(raw.Bytes()); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(raw.Len())/float64(keys), "json-B/key")
			b.ReportMetric(float64(gz.Len())/float64(keys), "gzip-B/key")
			b.ReportMetric(float64(gz.Len()), "gzip-B")
		})
	}
}
