package predict

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// What a key keeps is bounded whatever the length of the series it learns from: a
// history of fixed size, and at most the segmenter's cap of stages.
func TestKeyMemoryIsBounded(t *testing.T) {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 30
	props := gopter.NewProperties(p)
	schema := resource.Standard()
	props.Property("per-key state does not grow with the series", prop.ForAll(func(seed uint64, k, b int) string {
		s, err := NewSimilarTask(schema, WithHistory(k, b))
		if err != nil {
			return err.Error()
		}
		key := Key{Logic: "x", InputSize: 1}
		for i, n := range []int{1, 10, 1000, 4000 + int(seed%4000)} {
			var sr Series
			for j := 0; j < n; j++ {
				u := schema.MustTuple(int64(100+(uint64(j)*7919+seed)%1000), int64(1+(j*104729+i)%4096)<<20)
				sr.Samples = append(sr.Samples, Sample{At: time.Duration(j) * time.Second, Usage: u})
			}
			sr.End = time.Duration(n) * time.Second
			if err := s.Observe(key, Observation{Series: sr}); err != nil {
				return err.Error()
			}
			s.Redivide()
			e := s.load(s.canon(key))
			h := e.hist
			if len(h.peak) != k*b*schema.Len() || len(h.rc) != k*b || len(h.rcObs) != k || h.n > k {
				return fmt.Sprintf("after %d samples the history holds %d peaks, %d ratios, %d observations", n, len(h.peak), len(h.rc), h.n)
			}
			if len(e.dur) > DefaultMaxStages || len(e.dem) != len(e.dur) {
				return fmt.Sprintf("after %d samples the estimate has %d stages", n, len(e.dur))
			}
		}
		return ""
	}, gen.UInt64(), gen.IntRange(1, 16), gen.IntRange(2, 64)))
	props.TestingRun(t)
}

// Keys evicted or forgotten while no re-division runs are not kept: the list of keys
// awaiting re-division stays bounded by the keys held, and an evicted key's history
// goes at once.
func TestDirtyListBoundedWithoutRedivide(t *testing.T) {
	schema := resource.Standard()
	s, err := NewSimilarTask(schema, WithMaxKeys(4))
	if err != nil {
		t.Fatal(err)
	}
	sr := Series{Samples: []Sample{{At: 0, Usage: schema.MustTuple(100, 1<<20)}}, End: time.Second}
	var first *entry
	for i := 0; i < 10000; i++ {
		if err := s.Observe(Key{Logic: fmt.Sprint(i), InputSize: 1}, Observation{Series: sr}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = s.load(Key{Logic: "0", InputSize: 1})
		}
		if len(s.dirty) > 2*s.count+17 {
			t.Fatalf("after %d keys, %d awaiting re-division for %d held", i+1, len(s.dirty), s.count)
		}
	}
	if !first.gone.Load() || first.hist != nil {
		t.Fatal("an evicted key kept its history")
	}
}

// A key whose durations saturate (profiles summing past stage.Forever) is re-divided
// like any other.
func TestRedivideSaturatedDurations(t *testing.T) {
	schema := resource.Standard()
	s, _ := NewSimilarTask(schema)
	key := Key{Logic: "long", InputSize: 1}
	half := stage.Forever / 2
	two := stage.MustProfile(schema, stage.Stage{Duration: half, Demand: schema.MustTuple(1000, 1<<30)}, stage.Stage{Duration: half, Demand: schema.MustTuple(4000, 1<<30)})
	four := stage.MustProfile(schema,
		stage.Stage{Duration: half / 2, Demand: schema.MustTuple(1000, 1<<30)}, stage.Stage{Duration: half / 2, Demand: schema.MustTuple(4000, 1<<30)},
		stage.Stage{Duration: half / 2, Demand: schema.MustTuple(1000, 1<<30)}, stage.Stage{Duration: half / 2, Demand: schema.MustTuple(4000, 1<<30)})
	if err := s.Observe(key, Observation{Profile: two}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < DefaultHistory; i++ {
		if err := s.Observe(key, Observation{Profile: four}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Redivide(); n != 1 {
		t.Fatalf("re-divided %d keys, want 1", n)
	}
	if p, _ := s.Estimate(key); p.Len() != 4 {
		t.Fatalf("%d stages, want 4: %v", p.Len(), p)
	}
}

// A restored history holds only the observations the checkpoint gave it, and takes its
// full size when next added to, its observations kept in order: it then holds what
// the original's does.
func TestRestoredHistoryGrows(t *testing.T) {
	schema := resource.Standard()
	orig, err := NewSimilarTask(schema, WithHistory(4, 8))
	if err != nil {
		t.Fatal(err)
	}
	key := Key{Logic: "x", InputSize: 1}
	obs := func(cpu int64, stages int) Observation {
		st := make([]stage.Stage, stages)
		for i := range st {
			st[i] = stage.Stage{Duration: time.Duration(i+1) * time.Second, Demand: schema.MustTuple(cpu*int64(i+1), 1<<20)}
		}
		return Observation{Profile: stage.MustProfile(schema, st...)}
	}
	for i := 0; i < 2; i++ {
		if err := orig.Observe(key, obs(int64(100*(i+1)), i+1)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := orig.Checkpoint(&buf); err != nil {
		t.Fatal(err)
	}
	restored, _ := NewSimilarTask(schema, WithHistory(4, 8))
	if err := restored.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	h := restored.load(key).hist
	if h.n != 2 || len(h.peak) != 2*8*schema.Len() || len(h.rc) != 2*8 || len(h.count) != 2 {
		t.Fatalf("restored: %d observations in %d peaks, %d ratios, %d counts", h.n, len(h.peak), len(h.rc), len(h.count))
	}
	for i := 0; i < 5; i++ { // past the history's 4: the oldest replaced
		for _, e := range []*SimilarTask{orig, restored} {
			if err := e.Observe(key, obs(int64(300+i), 3)); err != nil {
				t.Fatal(err)
			}
		}
		h, o := restored.load(key).hist, orig.load(key).hist
		if len(h.peak) != 4*8*schema.Len() || len(h.rc) != 4*8 || len(h.rcObs) != 4 || len(h.count) != 4 {
			t.Fatalf("after %d more: %d peaks, %d ratios", i+1, len(h.peak), len(h.rc))
		}
		if !reflect.DeepEqual(h.copyObs(), o.copyObs()) {
			t.Fatalf("after %d more: %v, the original %v", i+1, h.copyObs(), o.copyObs())
		}
	}
}
