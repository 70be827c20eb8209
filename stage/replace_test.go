package stage_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/stage"
)

// TestPropReplaceIsSuspendReserveRelease: on twin timelines built by the same random
// reservations, replacing a random reservation with a random profile leaves one
// timeline as Suspend, Reserve (Resume on a refusal) and Release leave the other: the
// same error, handle, segments, reservations and Version; and, after either, the
// timeline agrees with the brute-force model.
func TestPropReplaceIsSuspendReserveRelease(t *testing.T) {
	replaced, refused := 0, 0
	props := gopter.NewProperties(params())
	props.Property("Replace is Suspend, Reserve and Release", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		var tls [2]*stage.Timeline
		for i := range tls {
			tls[i], _ = stage.NewTimeline(schema, capacity)
		}
		m := newModel()
		var hs []held
		for step := 0; step < 30; step++ {
			start, p, allow := r.Intn(40), randProfile(r), randAllow(r)
			if len(hs) == 0 || r.Intn(3) == 0 {
				h0, err0 := tls[0].Reserve(time.Duration(start)*time.Second, p, allow)
				h1, err1 := tls[1].Reserve(time.Duration(start)*time.Second, p, allow)
				if h0 != h1 || (err0 == nil) != (err1 == nil) {
					return fmt.Sprintf("step %d: the twins reserve differently", step)
				}
				if err0 == nil {
					m.apply(start, p, -1)
					hs = append(hs, held{h0, start, p})
				}
				continue
			}
			j := r.Intn(len(hs))
			old := hs[j]
			h0, err0 := tls[0].Replace(old.h, time.Duration(start)*time.Second, p, allow)
			if err := tls[1].Suspend(old.h); err != nil {
				return err.Error()
			}
			h1, err1 := tls[1].Reserve(time.Duration(start)*time.Second, p, allow)
			if err1 != nil {
				_ = tls[1].Resume(old.h)
			} else {
				_ = tls[1].Release(old.h)
			}
			if fmt.Sprint(err0) != fmt.Sprint(err1) || h0 != h1 {
				return fmt.Sprintf("step %d: Replace gives %d, %v; the three calls %d, %v", step, h0, err0, h1, err1)
			}
			if err0 == nil {
				replaced++
				m.apply(old.start, old.p, +1)
				m.apply(start, p, -1)
				hs[j] = held{h0, start, p}
			} else {
				refused++
			}
			a, b := tls[0].AppendSegments(nil, 0, stage.Forever), tls[1].AppendSegments(nil, 0, stage.Forever)
			if fmt.Sprint(a) != fmt.Sprint(b) || tls[0].Version() != tls[1].Version() || tls[0].Reservations() != tls[1].Reservations() {
				return fmt.Sprintf("step %d: the twins differ: %v (version %d), %v (version %d)", step, a, tls[0].Version(), b, tls[1].Version())
			}
			if !agrees(tls[0], m) {
				return fmt.Sprintf("step %d: the timeline disagrees with the model", step)
			}
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	if replaced == 0 || refused == 0 {
		t.Fatalf("%d replaced, %d refused: both must happen", replaced, refused)
	}
}

// TestReplaceRefusals: a handle not held, or suspended, is refused, changing nothing.
func TestReplaceRefusals(t *testing.T) {
	tl, err := stage.NewTimeline(schema, capacity)
	require.NoError(t, err)
	p := stage.MustProfile(schema, stage.Stage{Duration: time.Second, Demand: tup(1, 1)})
	h, err := tl.Reserve(0, p, tup(0, 0))
	require.NoError(t, err)
	v := tl.Version()
	_, err = tl.Replace(h+1, 0, p, tup(0, 0))
	require.ErrorIs(t, err, stage.ErrUnknownReservation)
	assert.Equal(t, v, tl.Version())
	require.NoError(t, tl.Suspend(h))
	v = tl.Version()
	_, err = tl.Replace(h, 0, p, tup(0, 0))
	require.ErrorIs(t, err, stage.ErrUnknownReservation)
	assert.Equal(t, v, tl.Version())
	assert.Equal(t, 1, tl.Reservations())
}
