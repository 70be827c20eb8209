package stage

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
)

// nearForever is where the reservations of TestStepTreeNearForever start: some
// seconds before Forever, so that stage boundaries saturate at Forever.
const nearForever = Forever - 60*time.Second

// foreverModel is the free amounts of a timeline as a list of reservations: what
// every reservation holds at t subtracted from the capacity.
type foreverModel struct {
	origin time.Duration
	held   map[Handle]treeHeldAt
}

// treeHeldAt is a reservation the model holds: its start and profile, and whether it
// is suspended.
type treeHeldAt struct {
	start  time.Duration
	p      Profile
	lifted bool
}

// at is the free amount at t.
func (m *foreverModel) at(t time.Duration) resource.Tuple {
	free := treeCapacity
	for _, r := range m.held {
		if r.lifted || t < r.start {
			continue
		}
		free = free.Sub(r.p.At(t - r.start))
	}
	return free
}

// segments are the model's constant segments over [origin, Forever), adjacent equal
// ones merged.
func (m *foreverModel) segments() []Segment {
	cuts := []time.Duration{m.origin}
	for _, r := range m.held {
		for i := 0; i <= r.p.Len(); i++ {
			if t := AddSat(r.start, r.p.Offset(i)); t > m.origin && t < Forever {
				cuts = append(cuts, t)
			}
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []Segment
	for i, c := range cuts {
		end := Forever
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		free := m.at(c)
		if k := len(out); k > 0 && out[k-1].Free == free {
			out[k-1].End = end
			continue
		}
		out = append(out, Segment{Start: c, End: end, Free: free})
	}
	return out
}

// randForeverProfile is 1–5 stages, some of a few seconds, some unending or long
// enough that a start near Forever saturates.
func randForeverProfile(r *rand.Rand) Profile {
	st := make([]Stage, 1+r.Intn(5))
	for i := range st {
		d := time.Duration(1+r.Intn(20)) * time.Second
		switch r.Intn(6) {
		case 0:
			d = Forever
		case 1:
			d = Forever - time.Duration(r.Intn(3))
		case 2:
			d = time.Duration(1 + r.Intn(3))
		}
		st[i] = Stage{Duration: d, Demand: treeSchema.MustTuple(int64(r.Intn(200)), int64(r.Intn(200)), int64(r.Intn(100)))}
	}
	return MustProfile(treeSchema, st...)
}

// randForeverTime is a time near Forever, Forever itself now and then, or near zero.
func randForeverTime(r *rand.Rand) time.Duration {
	switch r.Intn(8) {
	case 0:
		return Forever - time.Duration(r.Intn(4))
	case 1:
		return time.Duration(r.Intn(30)) * time.Second
	}
	return nearForever + time.Duration(r.Intn(60))*time.Second + time.Duration(r.Intn(3))
}

// TestStepTreeNearForever drives a timeline with reservations that start within a
// minute of Forever (and at Forever, and near zero), with unending and
// saturating stages, releases, suspensions, resumptions and trims close to Forever,
// and checks after each step the tree's invariants, every segment against a model
// that sums the reservations held, MinFree, WalkShort and Check against brute force,
// and EarliestFit against the stepwise algorithm.
func TestStepTreeNearForever(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 60
	props := gopter.NewProperties(params)
	props.Property("times near Forever: the tree agrees with a model of its reservations", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		tl, _ := NewTimeline(treeSchema, treeCapacity)
		m := &foreverModel{held: map[Handle]treeHeldAt{}}
		var hs []Handle
		for op := 0; op < 120; op++ {
			var what string
			switch x := r.Intn(20); {
			case x < 1:
				now := max(tl.Origin(), nearForever+time.Duration(r.Intn(60))*time.Second)
				if r.Intn(8) == 0 {
					now = Forever - time.Duration(r.Intn(2))
				}
				what = fmt.Sprintf("Trim(%v)", now)
				tl.Trim(now)
				m.origin = max(m.origin, now)
			case x < 5 && len(hs) > 0:
				j := r.Intn(len(hs))
				what = fmt.Sprintf("Release(%d)", hs[j])
				if err := tl.Release(hs[j]); err != nil {
					return what + ": " + err.Error()
				}
				delete(m.held, hs[j])
				hs = slices.Delete(hs, j, j+1)
			case x < 7 && len(hs) > 0:
				h := hs[r.Intn(len(hs))]
				rv := m.held[h]
				if rv.lifted {
					what = fmt.Sprintf("Resume(%d)", h)
					if err := tl.Resume(h); err != nil {
						return what + ": " + err.Error()
					}
				} else {
					what = fmt.Sprintf("Suspend(%d)", h)
					if err := tl.Suspend(h); err != nil {
						return what + ": " + err.Error()
					}
				}
				rv.lifted = !rv.lifted
				m.held[h] = rv
			default:
				start, p := max(randForeverTime(r), tl.Origin()), randForeverProfile(r)
				allow := treeSchema.MustTuple(int64(r.Intn(100)), 0, int64(r.Intn(50)))
				what = fmt.Sprintf("Reserve(%v, %v)", start, p)
				want := fitsModel(m, start, p, allow)
				h, err := tl.Reserve(start, p, allow)
				if (err == nil) != want {
					return fmt.Sprintf("after op %d, %s: error %v, the model says fits %v", op, what, err, want)
				}
				if err == nil {
					m.held[h] = treeHeldAt{start: start, p: p}
					hs = append(hs, h)
				}
			}
			if err := tl.checkTree(); err != nil {
				return fmt.Sprintf("after op %d, %s: %v", op, what, err)
			}
			var got []Segment
			tl.Walk(0, Forever, func(s Segment) bool {
				got = append(got, s)
				return true
			})
			if want := m.segments(); !slices.Equal(got, want) && !(tl.Origin() == Forever && len(got) == 0) {
				return fmt.Sprintf("after op %d, %s: segments %v, model %v", op, what, got, want)
			}
			if tl.Len() != len(got) && tl.Origin() < Forever {
				return fmt.Sprintf("after op %d, %s: Len %d, %d segments", op, what, tl.Len(), len(got))
			}
			a, b := randForeverTime(r), randForeverTime(r)
			from, to := min(a, b), max(a, b)+1
			if to < from { // saturated
				to = Forever
			}
			if got, want := tl.MinFree(from, to), bruteMin(tl, from, to); got != want {
				return fmt.Sprintf("after op %d, %s: MinFree(%v, %v) = %v, walk says %v", op, what, from, to, got, want)
			}
			start, p := max(randForeverTime(r), tl.Origin()), randForeverProfile(r)
			allow := treeSchema.MustTuple(int64(r.Intn(300)), 0, int64(r.Intn(100)))
			if err := tl.Check(start, p, allow); (err == nil) != fitsModel(m, start, p, allow) {
				return fmt.Sprintf("after op %d, %s: Check(%v, %v, %v) = %v, the model disagrees", op, what, start, p, allow, err)
			}
			got2, gotErr := tl.EarliestFit(start, p, allow)
			want2, wantErr := tl.earliestFitStepwise(max(start, tl.origin), p, allow)
			if got2 != want2 || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				return fmt.Sprintf("after op %d, %s: EarliestFit(%v, %v, %v) = %v, %v; stepwise %v, %v", op, what, start, p, allow, got2, gotErr, want2, wantErr)
			}
			if gotErr == nil && tl.Check(got2, p, allow) != nil {
				return fmt.Sprintf("after op %d, %s: EarliestFit(%v, %v, %v) = %v, which does not fit", op, what, start, p, allow, got2)
			}
			var pieces, brute []piece
			tl.WalkShort(start, p, allow, func(j int, s Segment) bool {
				pieces = append(pieces, piece{j, s})
				return true
			})
			for j := 0; j < p.Len(); j++ {
				from, to := AddSat(start, p.Offset(j)), AddSat(start, p.Offset(j+1))
				d := p.Stage(j).Demand
				tl.Walk(from, to, func(s Segment) bool {
					if below(&s.Free, &resource.Tuple{d[0] - allow[0], d[1] - allow[1], d[2] - allow[2]}) {
						brute = append(brute, piece{j, s})
					}
					return true
				})
			}
			if !slices.Equal(pieces, brute) {
				return fmt.Sprintf("after op %d, %s: WalkShort(%v, %v, %v) = %v, brute force %v", op, what, start, p, allow, pieces, brute)
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

// fitsModel reports whether p, started at start with allowance allow, fits the model:
// on every dimension a stage demands, the free amount less the demand stays at or
// above −allow (0 on memory) over the stage, from the origin on.
func fitsModel(m *foreverModel, start time.Duration, p Profile, allow resource.Tuple) bool {
	for _, s := range m.segments() {
		for j := 0; j < p.Len(); j++ {
			from, to := max(AddSat(start, p.Offset(j)), m.origin), AddSat(start, p.Offset(j+1))
			if from >= to || s.End <= from || s.Start >= to {
				continue
			}
			d := p.Stage(j).Demand
			for k := 0; k < treeSchema.Len(); k++ {
				if d[k] > 0 && s.Free[k]-d[k] < -allow[k] {
					return false
				}
			}
		}
	}
	return true
}
