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

// checkTree verifies the step tree's invariants: every leaf at the same depth; nodes
// other than the root holding minFill to fanout entries (the root at least one, two if
// inner); times increasing, an inner entry's time the first of its child's; every inner
// entry's minimum equal to its child's minimum recomputed from the leaves; unused child
// slots nil; Len counting the steps; the first step at the origin.
func (tl *Timeline) checkTree() error {
	leafDepth, steps := -1, 0
	var visit func(nd *node, depth int, lo, hi time.Duration) (resource.Tuple, error)
	visit = func(nd *node, depth int, lo, hi time.Duration) (resource.Tuple, error) {
		n := len(nd.at)
		switch {
		case n > fanout || n < 1:
			return resource.Tuple{}, fmt.Errorf("node of %d entries", n)
		case len(nd.val) != n || (nd.leaf && len(nd.kids) != 0) || (!nd.leaf && len(nd.kids) != n):
			return resource.Tuple{}, fmt.Errorf("node of %d times, %d amounts, %d children (leaf %v)", n, len(nd.val), len(nd.kids), nd.leaf)
		case nd != tl.root && n < minFill:
			return resource.Tuple{}, fmt.Errorf("node of %d entries, fewer than %d", n, minFill)
		case nd == tl.root && !nd.leaf && n < 2:
			return resource.Tuple{}, fmt.Errorf("inner root of one entry")
		case nd.at[0] != lo:
			return resource.Tuple{}, fmt.Errorf("node begins at %v, its parent says %v", nd.at[0], lo)
		}
		for _, k := range nd.kids[len(nd.kids):cap(nd.kids)] {
			if k != nil {
				return resource.Tuple{}, fmt.Errorf("a child slot past the entries holds a node")
			}
		}
		var m resource.Tuple
		for i := 0; i < n; i++ {
			if end := nd.end(i, hi); nd.at[i] >= end && nd.at[i] != Forever { // Trim(Forever) leaves [Forever, Forever)
				return resource.Tuple{}, fmt.Errorf("entry %d: [%v, %v) empty or out of order", i, nd.at[i], end)
			}
			v := nd.val[i]
			if nd.leaf {
				steps++
			} else {
				sub, err := visit(nd.kids[i], depth+1, nd.at[i], nd.end(i, hi))
				if err != nil {
					return resource.Tuple{}, err
				}
				if sub != v {
					return resource.Tuple{}, fmt.Errorf("inner entry %d at %v holds minimum %v, its child's is %v", i, nd.at[i], v, sub)
				}
			}
			if i == 0 {
				m = v
			} else {
				lower(&m, &v)
			}
		}
		if nd.leaf {
			if leafDepth >= 0 && depth != leafDepth {
				return resource.Tuple{}, fmt.Errorf("leaves at depths %d and %d", leafDepth, depth)
			}
			leafDepth = depth
		}
		return m.Add(nd.add), nil
	}
	if _, err := visit(tl.root, 0, tl.origin, Forever); err != nil {
		return err
	}
	if steps != tl.len {
		return fmt.Errorf("%d steps, Len says %d", steps, tl.len)
	}
	return nil
}

// The model of the property below: free amounts per second over a horizon that the
// random reservations stay inside, enough for trees of three levels.
const (
	treeHorizon = 400 // seconds
	treeOps     = 200
)

var (
	treeSchema   = resource.MustSchema(resource.CPU, resource.Memory, resource.NetIO)
	treeCapacity = treeSchema.MustTuple(1000, 1000, 500)
)

type treeModel [treeHorizon]resource.Tuple

// treeHeld is a reservation a step-tree test holds: its handle, start (in seconds)
// and profile.
type treeHeld struct {
	h     Handle
	start int
	p     Profile
}

// freshTree returns an empty timeline of treeCapacity and its brute-force model.
func freshTree() (*Timeline, *treeModel) {
	tl, _ := NewTimeline(treeSchema, treeCapacity)
	m := new(treeModel)
	for i := range m {
		m[i] = treeCapacity
	}
	return tl, m
}

func (m *treeModel) apply(start int, p Profile, sign int64) {
	for t := start; t < start+int(p.Duration()/time.Second) && t < treeHorizon; t++ {
		d := p.At(time.Duration(t-start) * time.Second)
		if sign < 0 {
			m[t] = m[t].Sub(d)
		} else {
			m[t] = m[t].Add(d)
		}
	}
}

// randTreeProfile is 1–5 stages of 1–30 s (a fifth of them up to the horizon long, a
// few unending), demanding small amounts, so that many reservations overlap, the step
// function has hundreds of steps and updates cover whole subtrees.
func randTreeProfile(r *rand.Rand) Profile {
	st := make([]Stage, 1+r.Intn(5))
	for i := range st {
		d := time.Duration(1+r.Intn(30)) * time.Second
		switch r.Intn(30) {
		case 0:
			d = Forever
		case 1, 2, 3, 4, 5, 6:
			d = time.Duration(1+r.Intn(treeHorizon)) * time.Second
		}
		st[i] = Stage{Duration: d, Demand: treeSchema.MustTuple(int64(r.Intn(40)), int64(r.Intn(40)), int64(r.Intn(20)))}
	}
	return MustProfile(treeSchema, st...)
}

// bruteMin is the per-dimension minimum of the segments Walk visits over [from, to), or
// the free amount at from when the window is empty (after clipping to the origin).
func bruteMin(tl *Timeline, from, to time.Duration) resource.Tuple {
	if to <= max(from, tl.Origin()) {
		return tl.FreeAt(from)
	}
	var m resource.Tuple
	first := true
	tl.Walk(from, to, func(s Segment) bool {
		if first {
			m, first = s.Free, false
		} else {
			m = m.Min(s.Free)
		}
		return true
	})
	return m
}

// piece is what WalkShort reports.
type piece struct {
	stage int
	seg   Segment
}

// checkWalkShort compares WalkShort for a random profile, start and slack with brute
// force: every stage's window walked segment by segment, keeping the segments below the
// stage's demand less the slack. It also stops the walk after a random number of pieces
// and checks that what was reported is the brute force's beginning.
func checkWalkShort(r *rand.Rand, tl *Timeline, origin int) string {
	p := randTreeProfile(r)
	if r.Intn(2) == 0 { // larger demands, so that more pieces are short
		st := p.Stages()
		for i := range st {
			st[i].Demand = st[i].Demand.Add(treeSchema.MustTuple(int64(r.Intn(1000)), int64(r.Intn(1000)), int64(r.Intn(500))))
		}
		p = MustProfile(treeSchema, st...)
	}
	start := time.Duration(max(0, origin-10+r.Intn(treeHorizon)))*time.Second + time.Duration(r.Intn(4))*time.Second/4
	var slack resource.Tuple
	if r.Intn(2) == 0 {
		slack = treeSchema.MustTuple(int64(r.Intn(300)), 0, int64(r.Intn(100)))
	}
	var want, got []piece
	for j := 0; j < p.Len(); j++ {
		from, to := AddSat(start, p.Offset(j)), AddSat(start, p.Offset(j+1))
		d := p.Stage(j).Demand
		tl.Walk(from, to, func(s Segment) bool {
			for k := range d {
				if s.Free[k] < d[k]-slack[k] {
					want = append(want, piece{j, s})
					break
				}
			}
			return true
		})
	}
	tl.WalkShort(start, p, slack, func(j int, s Segment) bool {
		got = append(got, piece{j, s})
		return true
	})
	if !slices.Equal(got, want) {
		return fmt.Sprintf("WalkShort(%v, %v, %v) = %v, brute force %v", start, p, slack, got, want)
	}
	stop := r.Intn(len(want) + 1)
	got = got[:0]
	tl.WalkShort(start, p, slack, func(j int, s Segment) bool {
		got = append(got, piece{j, s})
		return len(got) < stop
	})
	if stop > 0 && !slices.Equal(got, want[:stop]) {
		return fmt.Sprintf("WalkShort(%v, %v, %v) stopped after %d = %v, brute force %v", start, p, slack, stop, got, want)
	}
	return ""
}

// checkEarliestFit compares EarliestFit, which jumps past every piece in the way at
// once, with earliestFitStepwise, one conflict at a time (the algorithm before the
// step tree): the same start, or the same error, for a random profile (now and then
// one that fits nowhere), start and allowance.
func checkEarliestFit(r *rand.Rand, tl *Timeline, origin int) string {
	p := randTreeProfile(r)
	st := p.Stages()
	for i := range st {
		switch r.Intn(8) {
		case 0: // more than the capacity: no start fits
			st[i].Demand[1] = treeCapacity[1] + 1
		case 1, 2, 3:
			st[i].Demand = st[i].Demand.Add(treeSchema.MustTuple(int64(r.Intn(900)), int64(r.Intn(900)), int64(r.Intn(450))))
		}
	}
	p = MustProfile(treeSchema, st...)
	from := time.Duration(max(0, origin-10+r.Intn(treeHorizon))) * time.Second
	var allow resource.Tuple
	if r.Intn(2) == 0 {
		allow = treeSchema.MustTuple(int64(r.Intn(300)), 0, int64(r.Intn(100)))
	}
	got, gotErr := tl.EarliestFit(from, p, allow)
	want, wantErr := tl.earliestFitStepwise(max(from, tl.origin), p, allow)
	if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		return fmt.Sprintf("EarliestFit(%v, %v, %v) = %v, %v; stepwise %v, %v", from, p, allow, got, gotErr, want, wantErr)
	}
	if gotErr == nil && tl.Check(got, p, allow) != nil {
		return fmt.Sprintf("EarliestFit(%v, %v, %v) = %v, which does not fit", from, p, allow, got)
	}
	return ""
}

// TestStepTreeProperties drives a timeline with random Reserve, Release, Suspend,
// Resume and Trim calls and checks, after each, the tree's invariants (checkTree), every
// step against the per-second model, and the range queries against brute force: MinFree
// over random windows against the minimum of Walk's segments (and the model), WalkBelow
// against Walk filtered by the floor, and WalkShort against Walk over each stage's
// window filtered by the stage's demand less the slack; and EarliestFit against the
// stepwise algorithm it replaced.
func TestStepTreeProperties(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 100
	props := gopter.NewProperties(params)
	props.Property("the step tree keeps its invariants, and its range queries equal brute-force walks", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		tl, m := freshTree()
		var hs []treeHeld
		lifted := map[Handle]bool{}
		origin := 0
		for op := 0; op < treeOps; op++ {
			var what string
			x := r.Intn(20)
			if op < treeOps/2 {
				x = 20 // first build a tree of a few hundred steps, three levels deep
			}
			switch {
			case x < 2 && origin < treeHorizon/2:
				origin += r.Intn(10)
				what = fmt.Sprintf("Trim(%ds)", origin)
				tl.Trim(time.Duration(origin) * time.Second)
			case x < 6 && len(hs) > 0:
				j := r.Intn(len(hs))
				what = fmt.Sprintf("Release(%d)", hs[j].h)
				if err := tl.Release(hs[j].h); err != nil {
					return what + ": " + err.Error()
				}
				if !lifted[hs[j].h] {
					m.apply(hs[j].start, hs[j].p, +1)
				}
				delete(lifted, hs[j].h)
				hs = append(hs[:j], hs[j+1:]...)
			case x < 8 && len(hs) > 0:
				x := hs[r.Intn(len(hs))]
				if lifted[x.h] {
					what = fmt.Sprintf("Resume(%d)", x.h)
					if err := tl.Resume(x.h); err != nil {
						return what + ": " + err.Error()
					}
					m.apply(x.start, x.p, -1)
					delete(lifted, x.h)
				} else {
					what = fmt.Sprintf("Suspend(%d)", x.h)
					if err := tl.Suspend(x.h); err != nil {
						return what + ": " + err.Error()
					}
					m.apply(x.start, x.p, +1)
					lifted[x.h] = true
				}
			default:
				start, p := origin+r.Intn(treeHorizon/2), randTreeProfile(r)
				allow := treeSchema.MustTuple(int64(r.Intn(100)), 0, int64(r.Intn(50)))
				what = fmt.Sprintf("Reserve(%ds, %v)", start, p)
				h, err := tl.Reserve(time.Duration(start)*time.Second, p, allow)
				if err == nil {
					m.apply(start, p, -1)
					hs = append(hs, treeHeld{h, start, p})
				}
			}
			if op < treeOps/2 {
				continue
			}
			if err := tl.checkTree(); err != nil {
				return fmt.Sprintf("after op %d, %s: %v", op, what, err)
			}
			for s := origin; s < treeHorizon; s++ {
				if got := tl.FreeAt(time.Duration(s) * time.Second); got != m[s] {
					return fmt.Sprintf("after op %d, %s: free at %ds %v, model %v", op, what, s, got, m[s])
				}
			}
			for q := 0; q < 8; q++ {
				a, b := r.Intn(treeHorizon+20), r.Intn(treeHorizon+20)
				from, to := time.Duration(min(a, b))*time.Second, time.Duration(max(a, b)+1)*time.Second
				if q == 0 {
					to = Forever
				}
				got, want := tl.MinFree(from, to), bruteMin(tl, from, to)
				if got != want {
					return fmt.Sprintf("after op %d, %s: MinFree(%v, %v) = %v, walk says %v", op, what, from, to, got, want)
				}
				if a, b := max(min(a, b), origin), max(a, b)+1; q > 0 && a < b && b <= treeHorizon {
					lo := m[a]
					for s := a; s < b; s++ {
						lo = lo.Min(m[s])
					}
					if got != lo {
						return fmt.Sprintf("after op %d, %s: MinFree(%v, %v) = %v, model %v", op, what, from, to, got, lo)
					}
				}
				floor := want.Add(treeSchema.MustTuple(int64(r.Intn(30)), int64(r.Intn(30)), int64(r.Intn(30))))
				var all, found []Segment
				tl.Walk(from, to, func(s Segment) bool {
					if below(&s.Free, &floor) {
						all = append(all, s)
					}
					return true
				})
				tl.WalkBelow(from, to, floor, func(s Segment) bool {
					found = append(found, s)
					return true
				})
				if !slices.Equal(all, found) {
					return fmt.Sprintf("after op %d, %s: WalkBelow(%v, %v, %v) = %v, walk says %v", op, what, from, to, floor, found, all)
				}
			}
			if msg := checkWalkShort(r, tl, origin); msg != "" {
				return fmt.Sprintf("after op %d, %s: %s", op, what, msg)
			}
			if msg := checkEarliestFit(r, tl, origin); msg != "" {
				return fmt.Sprintf("after op %d, %s: %s", op, what, msg)
			}
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
}

// FuzzStepTree drives a timeline with operations decoded from the input — reservations
// (some unending, some with allowances), releases, suspensions and resumptions, trims —
// and checks after each that the tree keeps its invariants and that MinFree and
// WalkShort agree with brute-force walks.
func FuzzStepTree(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23})
	f.Add([]byte("reserve, reserve, suspend, reserve, resume, release, trim, reserve forever"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		tl, _ := NewTimeline(treeSchema, treeCapacity)
		var hs []Handle
		for len(ops) >= 6 {
			op, a, b, c, d, e := ops[0]%8, int(ops[1]), int(ops[2]), int(ops[3]), int(ops[4]), int(ops[5])
			ops = ops[6:]
			switch op {
			case 0, 1, 2, 3:
				dur := time.Duration(1+b%40) * time.Second / 4
				if c == 255 {
					dur = Forever
				}
				p := MustProfile(treeSchema,
					Stage{Duration: dur, Demand: treeSchema.MustTuple(int64(c*4), int64(d*4), int64(e*2))},
					Stage{Duration: time.Duration(1+e%20) * time.Second / 4, Demand: treeSchema.MustTuple(int64(d*3), int64(c), int64(b))})
				start := tl.Origin() + time.Duration(a)*time.Second/4
				if h, err := tl.Reserve(start, p, treeSchema.MustTuple(int64(e*2), 0, int64(b))); err == nil {
					hs = append(hs, h)
				}
			case 4:
				if len(hs) > 0 {
					i := a % len(hs)
					if err := tl.Release(hs[i]); err != nil {
						t.Fatal(err)
					}
					hs = append(hs[:i], hs[i+1:]...)
				}
			case 5:
				if len(hs) > 0 {
					h := hs[a%len(hs)]
					if tl.Suspend(h) != nil && tl.Resume(h) != nil {
						t.Fatalf("handle %d neither suspends nor resumes", h)
					}
				}
			case 6:
				tl.Trim(tl.Origin() + time.Duration(a%16)*time.Second/4)
			case 7:
				if a == 255 {
					tl.Trim(Forever)
				}
			}
			if err := tl.checkTree(); err != nil {
				t.Fatal(err)
			}
			from := tl.Origin() + time.Duration(b)*time.Second/4
			to := from + time.Duration(1+c)*time.Second/4
			if d%8 == 0 {
				to = Forever
			}
			if got, want := tl.MinFree(from, to), bruteMin(tl, from, to); got != want {
				t.Fatalf("MinFree(%v, %v) = %v, walk says %v", from, to, got, want)
			}
			if msg := checkWalkShort(rand.New(rand.NewSource(int64(a*65536+b*256+c))), tl, int(tl.Origin()/time.Second)); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}
