package predict_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/predict"
)

// fuzzEstimator is FuzzRestore's estimator: the golden checkpoint's configuration when
// bit 6 of bits is set, else the round-trip property's options for bits (ckOptions),
// holding a state of its own when learned is set.
func fuzzEstimator(t testing.TB, bits uint8, learned bool) *predict.SimilarTask {
	t.Helper()
	if bits&64 != 0 {
		if learned {
			return goldenEstimator(t)
		}
		e, err := predict.NewSimilarTask(cpuMem, goldenOpts...)
		require.NoError(t, err)
		return e
	}
	e := newEst(t, ckOptions(t, bits&63)...)
	if learned {
		if msg := ckRun(rng(int64(bits)), 4, e); msg != "" {
			t.Fatal(msg)
		}
	}
	return e
}

// FuzzRestore feeds Restore arbitrary input: it must never panic; it must refuse with
// ErrCheckpoint and leave the estimator's state exactly as it was; and what it accepts
// must round-trip — its Checkpoint restores into a fresh estimator of the same
// options, which writes the same bytes and answers the same estimates.
func FuzzRestore(f *testing.F) {
	f.Add(golden(f), uint8(64))
	f.Add(golden(f)[:200], uint8(64))
	f.Add([]byte(`{"format":"finegrain/predict.SimilarTask","version":1}`), uint8(0))
	for _, bits := range []uint8{0, 1, 2, 3, 5, 9, 17, 33, 63} {
		e := newEst(f, ckOptions(f, bits)...)
		if msg := ckRun(rng(int64(bits)+100), 10, e); msg != "" {
			f.Fatal(msg)
		}
		f.Add(checkpoint(f, e), bits)
	}
	f.Fuzz(func(t *testing.T, data []byte, bits uint8) {
		e := fuzzEstimator(t, bits, true)
		before := checkpoint(t, e)
		if err := e.Restore(bytes.NewReader(data)); err != nil {
			if !errors.Is(err, predict.ErrCheckpoint) {
				t.Fatalf("Restore's error does not wrap ErrCheckpoint: %v", err)
			}
			if after := checkpoint(t, e); !bytes.Equal(before, after) {
				t.Fatalf("the refused Restore (%v) changed the state:\n%s\nto\n%s", err, before, after)
			}
			return
		}
		out := checkpoint(t, e)
		g := fuzzEstimator(t, bits, false)
		if err := g.Restore(bytes.NewReader(out)); err != nil {
			t.Fatalf("Restore refuses what Checkpoint wrote of an accepted input: %v\n%s", err, out)
		}
		if again := checkpoint(t, g); !bytes.Equal(out, again) {
			t.Fatalf("the round trip changed the checkpoint:\n%s\nto\n%s", out, again)
		}
		if bits&64 == 0 {
			if msg := sameEstimates(e, g); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}
