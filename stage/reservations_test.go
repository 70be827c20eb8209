package stage_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// heldRes is what the model of a timeline's reservations knows of one.
type heldRes struct {
	start  time.Duration
	p      stage.Profile
	lifted bool
}

// A timeline's reservations, kept in a list by handle (reservations.go), answer as a
// map of the held handles would: random reserves, releases, replacements, suspensions
// and resumptions (some reservations live long among short ones, so that the list
// compacts around them) against a map, checking after each that every handle ever
// issued is found exactly when the map holds it, with its start and profile; that the
// count is the map's; that new handles increase; that a refused call (a released or
// unknown handle, a suspension twice, a resumption of a reservation not suspended, a
// replacement of a suspended one) fails with ErrUnknownReservation and changes nothing;
// and that a clone answers the same and stays as it was when the original changes.
func TestReservationListProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("the reservation list answers as a map of held handles", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		tl, err := stage.NewTimeline(schema, tup(1<<40, 1<<40))
		if err != nil {
			return err.Error()
		}
		model := map[stage.Handle]heldRes{}
		var issued []stage.Handle
		var clone *stage.Timeline
		var cloned map[stage.Handle]heldRes
		pick := func() stage.Handle {
			if len(issued) == 0 || r.Intn(10) == 0 {
				return stage.Handle(r.Intn(3)) // 0 is never issued; 1, 2 may be
			}
			return issued[r.Intn(len(issued))]
		}
		for op := range 200 {
			var what string
			h := pick()
			m, held := model[h]
			before := tl.Version()
			var err error
			valid := true // whether the model accepts the call
			switch x := r.Intn(10); {
			case x < 4:
				start, p := time.Duration(r.Intn(60))*time.Second, randProfile(r)
				what = fmt.Sprintf("Reserve(%v, %v)", start, p)
				var nh stage.Handle
				if nh, err = tl.Reserve(start, p, resource.Tuple{}); err == nil {
					if len(issued) > 0 && nh <= issued[len(issued)-1] {
						return fmt.Sprintf("op %d, %s: handle %d after %d", op, what, nh, issued[len(issued)-1])
					}
					issued = append(issued, nh)
					model[nh] = heldRes{start: start, p: p}
				}
			case x < 6:
				what, valid = fmt.Sprintf("Release(%d)", h), held
				if err = tl.Release(h); err == nil {
					delete(model, h)
				}
			case x < 7:
				start, p := time.Duration(r.Intn(60))*time.Second, randProfile(r)
				what, valid = fmt.Sprintf("Replace(%d, %v, %v)", h, start, p), held && !m.lifted
				var nh stage.Handle
				if nh, err = tl.Replace(h, start, p, resource.Tuple{}); err == nil {
					delete(model, h)
					issued = append(issued, nh)
					model[nh] = heldRes{start: start, p: p}
				}
			case x < 8:
				what, valid = fmt.Sprintf("Suspend(%d)", h), held && !m.lifted
				if err = tl.Suspend(h); err == nil {
					m.lifted = true
					model[h] = m
				}
			case x < 9:
				what, valid = fmt.Sprintf("Resume(%d)", h), held && m.lifted
				if err = tl.Resume(h); err == nil {
					m.lifted = false
					model[h] = m
				}
			default:
				what = "Clone"
				clone, cloned = tl.Clone(), map[stage.Handle]heldRes{}
				for k, v := range model {
					cloned[k] = v
				}
			}
			switch {
			case err != nil && (valid || !errors.Is(err, stage.ErrUnknownReservation) || tl.Version() != before):
				return fmt.Sprintf("op %d, %s: %v (the model accepts it: %v; version %d → %d)", op, what, err, valid, before, tl.Version())
			case err == nil && !valid:
				return fmt.Sprintf("op %d, %s: accepted, the model refuses it", op, what)
			}
			if msg := sameReservations(tl, model, issued); msg != "" {
				return fmt.Sprintf("op %d, %s: %s", op, what, msg)
			}
			if clone != nil {
				if msg := sameReservations(clone, cloned, issued); msg != "" {
					return fmt.Sprintf("op %d, %s: the clone: %s", op, what, msg)
				}
			}
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// sameReservations compares what tl reads back of every handle issued with model.
func sameReservations(tl *stage.Timeline, model map[stage.Handle]heldRes, issued []stage.Handle) string {
	if tl.Reservations() != len(model) {
		return fmt.Sprintf("%d reservations, the model holds %d", tl.Reservations(), len(model))
	}
	for _, h := range append([]stage.Handle{0}, issued...) {
		start, p, ok := tl.Lookup(h)
		m, want := model[h]
		if ok != want || ok && (start != m.start || !p.Same(m.p)) {
			return fmt.Sprintf("Lookup(%d) = %v, %v, %v; the model holds %v: %+v", h, start, p, ok, want, m)
		}
	}
	return ""
}
