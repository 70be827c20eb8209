package fairness

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/resource"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 1000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

// script is a stream of random numbers a property decodes into operations.
type script struct {
	xs []uint32
	i  int
}

func (s *script) next(n int) int {
	if s.i >= len(s.xs) {
		return 0
	}
	v := int(s.xs[s.i] % uint32(n))
	s.i++
	return v
}

func (s *script) done() bool { return s.i >= len(s.xs) }

func (s *script) pick(xs ...float64) float64 { return xs[s.next(len(xs))] }

func scripts(n int) gopter.Gen {
	return gen.SliceOfN(n, gen.UInt32()).Map(func(xs []uint32) *script { return &script{xs: xs} })
}

var twoDims = resource.MustSchema(resource.CPU, resource.Memory)

var policies = []Policy{FIFO{}, Fair{}, DRF{}, Capacity{}}

// eligible is, from scratch, whether n may be offered resources under its parent.
func (t *Tree) eligibleFresh(n *tnode) bool {
	if n.Kind == KindJob {
		if n.Pending == 0 {
			return false
		}
	} else {
		any := false
		for _, k := range n.kids {
			if t.eligibleFresh(k) {
				any = true
				break
			}
		}
		if !any {
			return false
		}
	}
	if n.Share.HasMax() {
		used, _ := n.parent.policy.Measure(&n.Entry, t.capacity)
		return used < n.Share.Max
	}
	return true
}

// refOrder is the offer order computed from scratch: every queue's eligible children
// sorted by their policy's key, depth first.
func (t *Tree) refOrder(q *tnode, out []string) []string {
	var kids []*tnode
	for _, k := range q.kids {
		if t.eligibleFresh(k) {
			kids = append(kids, k)
		}
	}
	keys := map[*tnode]OrderKey{}
	for _, k := range kids {
		keys[k] = q.policy.Key(&k.Entry, t.capacity)
	}
	sort.SliceStable(kids, func(a, b int) bool {
		if c := compareEntries(keys[kids[a]], &kids[a].Entry, keys[kids[b]], &kids[b].Entry); c != 0 {
			return c < 0
		}
		return kids[a].seq < kids[b].seq
	})
	for _, k := range kids {
		if k.Kind == KindJob {
			out = append(out, k.ID)
		} else {
			out = t.refOrder(k, out)
		}
	}
	return out
}

// check verifies the tree's internal invariants.
func (t *Tree) check() error {
	var rec func(q *tnode) error
	rec = func(q *tnode) error {
		var sum Entry
		eligible := 0
		for i, k := range q.kids {
			if k.parent != q || k.idx != i {
				return fmt.Errorf("%s %q: bad parent link", k.Kind, k.ID)
			}
			if k.Kind == KindQueue {
				if err := rec(k); err != nil {
					return err
				}
				if t.queues[k.ID] != k {
					return fmt.Errorf("queue %q not in the map", k.ID)
				}
			} else if t.jobs[k.ID] != k {
				return fmt.Errorf("job %q not in the map", k.ID)
			}
			sum.Running += k.Running
			sum.Pending += k.Pending
			sum.Usage = sum.Usage.Add(k.Usage)
			sum.Demand = sum.Demand.Add(k.Demand)
			el := t.eligibleFresh(k)
			if el != k.inParent {
				return fmt.Errorf("%s %q: eligible %v but in parent's set %v", k.Kind, k.ID, el, k.inParent)
			}
			if k.Kind == KindQueue {
				// Standing agrees with the order and the eligibility the tree keeps.
				st, err := t.Standing(k.ID)
				switch {
				case err != nil:
					return fmt.Errorf("queue %q: standing: %v", k.ID, err)
				case st.Key != q.policy.Key(&k.Entry, t.capacity):
					return fmt.Errorf("queue %q: standing key %v", k.ID, st.Key)
				case el && st.AtMax, !el && k.active.Len() > 0 && !st.AtMax:
					return fmt.Errorf("queue %q: eligible %v, standing at max %v", k.ID, el, st.AtMax)
				}
			}
			if el {
				eligible++
				if k.key != q.policy.Key(&k.Entry, t.capacity) {
					return fmt.Errorf("%s %q: stale key", k.Kind, k.ID)
				}
				if !q.active.has(k) {
					return fmt.Errorf("%s %q: not found in parent's set", k.Kind, k.ID)
				}
				var held seat
				q.active.Ascend(func(x seat) bool {
					if x.n == k {
						held = x
					}
					return held.n == nil
				})
				if held != seatOf(k) {
					return fmt.Errorf("%s %q: its seat %+v, not %+v", k.Kind, k.ID, held, seatOf(k))
				}
			}
		}
		if q.active.Len() != eligible {
			return fmt.Errorf("queue %q: %d in set, %d eligible", q.ID, q.active.Len(), eligible)
		}
		if q.Running != sum.Running || q.Pending != sum.Pending || q.Usage != sum.Usage || q.Demand != sum.Demand {
			return fmt.Errorf("queue %q: totals %+v are not the children's sum %+v", q.ID, q.Entry, sum)
		}
		return nil
	}
	if err := rec(t.root); err != nil {
		return err
	}
	var walked []string
	t.Walk(func(j string) bool { walked = append(walked, j); return true })
	if ref := t.refOrder(t.root, nil); !slices.Equal(walked, ref) {
		return fmt.Errorf("walk %v, from scratch %v", walked, ref)
	}
	next, ok := t.Next()
	if ok != (len(walked) > 0) || (ok && next != walked[0]) {
		return fmt.Errorf("next %q %v, walk %v", next, ok, walked)
	}
	return nil
}

// state is everything observable about the tree.
func (t *Tree) state() []any {
	var out []any
	ids := func(m map[string]*tnode) []string {
		var s []string
		for id := range m {
			s = append(s, id)
		}
		slices.Sort(s)
		return s
	}
	for _, id := range ids(t.queues) {
		q := t.queues[id]
		out = append(out, q.Entry, q.parent.ID, fmt.Sprintf("%T", q.policy))
	}
	for _, id := range ids(t.jobs) {
		out = append(out, t.jobs[id].Entry, t.jobs[id].parent.ID)
	}
	var walked []string
	t.Walk(func(j string) bool { walked = append(walked, j); return true })
	return append(out, t.root.Entry, t.capacity, walked)
}

func (s *script) tuple(hi int) resource.Tuple {
	return twoDims.MustTuple(int64(s.next(hi)), int64(s.next(hi)))
}

func (s *script) options(queue bool) []Option {
	var opts []Option
	for range s.next(4) {
		switch s.next(7) {
		case 0:
			opts = append(opts, Weight(s.pick(1, 2, 0.5, 3, 0, -1, math.NaN())))
		case 1:
			opts = append(opts, MinShare(s.pick(0, 0.1, 1, 2, 0.4, -1)))
		case 2:
			opts = append(opts, MaxShare(s.pick(0, 0.3, 2, 5, 0.6, math.Inf(1), math.NaN())))
		case 3:
			opts = append(opts, Priority(s.next(3)))
		case 4:
			opts = append(opts, SubmittedAt(time.Duration(s.next(4))))
		case 5:
			if queue || s.next(4) == 0 {
				opts = append(opts, OrderedBy(policies[s.next(len(policies))]))
			}
		case 6:
			opts = append(opts, FirstTaskOverMax(s.next(2) == 0))
		}
	}
	return opts
}

// run applies one random operation; it returns whether the tree accepted it.
func (t *Tree) run(s *script) (string, error) {
	q := []string{"", "q0", "q1", "q2", "q3"}[s.next(5)]
	q2 := []string{"q0", "q1", "q2", "q3", "nope"}[s.next(5)]
	j := []string{"j0", "j1", "j2", "j3", "j4", "j5", "nope"}[s.next(7)]
	switch op := s.next(14); op {
	case 13:
		return "resize", t.checkResize(j, s.tuple(3), s.tuple(4))
	case 12:
		return "admit", t.checkAdmit(j, s.tuple(8))
	case 0:
		return "add queue", t.AddQueue(q, q2, s.options(true)...)
	case 1:
		return "add job", t.AddJob(q, j, s.options(false)...)
	case 2:
		n := s.next(5) - 1
		return "add pending", t.AddPending(j, n, s.tuple(5).Scale(float64(max(n, 1))))
	case 3:
		return "start", t.Start(j, s.tuple(4), s.tuple(4))
	case 4:
		return "allocate", t.Allocate(j, s.tuple(4))
	case 5:
		return "release", t.Release(j, s.tuple(3))
	case 6:
		return "remove pending", t.RemovePending(j, s.next(3), s.tuple(3))
	case 7:
		return "remove job", t.RemoveJob(j)
	case 8:
		return "remove queue", t.RemoveQueue(q2)
	case 9:
		return "update job", t.UpdateJob(j, s.options(false)...)
	case 10:
		return "update queue", t.UpdateQueue(q2, s.options(true)...)
	default:
		return "capacity", t.SetCapacity(s.tuple(40))
	}
}

// checkAdmit checks Admit against the outcome: a task it admits leaves everything on
// the path within its max share, but an entity that lets its first task over it
// (FirstTaskOverMax) and has none running; one it refuses would take something over.
func (t *Tree) checkAdmit(job string, usage resource.Tuple) error {
	err := t.Admit(job, usage)
	if err != nil && !errors.Is(err, ErrOverMax) {
		return err
	}
	var exempt []bool // per entity on the path, from the job up
	for n := t.jobs[job]; n.parent != nil; n = n.parent {
		exempt = append(exempt, n.firstOver && n.Running == 0)
	}
	if err := t.Allocate(job, usage); err != nil {
		return fmt.Errorf("allocate after admit: %w", err)
	}
	over, i := false, 0
	for n := t.jobs[job]; n.parent != nil; n, i = n.parent, i+1 {
		used, _ := n.parent.policy.Measure(&n.Entry, t.capacity)
		over = over || (!exempt[i] && n.Share.HasMax() && used > n.Share.Max)
	}
	if rerr := t.Release(job, usage); rerr != nil {
		return fmt.Errorf("release after admit: %w", rerr)
	}
	if over != (err != nil) {
		return fmt.Errorf("admit %v said %v, but the allocation goes over: %v", usage, err, over)
	}
	return nil
}

// checkResize resizes a running task of job from from to to, and checks that
// Release(to) and Allocate(from) then leave the tree exactly as before — the same
// entries and order — before making the resize again.
func (t *Tree) checkResize(job string, from, to resource.Tuple) error {
	before := fmt.Sprint(t.state())
	if err := t.Resize(job, from, to); err != nil {
		return err
	}
	if err := t.Release(job, to); err != nil {
		return fmt.Errorf("release after resize: %w", err)
	}
	if err := t.Allocate(job, from); err != nil {
		return fmt.Errorf("allocate after resize: %w", err)
	}
	if after := fmt.Sprint(t.state()); after != before {
		return fmt.Errorf("resize %v → %v undone by release and allocate: tree %s, was %s", from, to, after, before)
	}
	return t.Resize(job, from, to)
}

func TestTreeProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("incremental order equals the order from scratch; rejected calls change nothing",
		prop.ForAll(func(s *script) string {
			tree, err := NewTree(twoDims, twoDims.MustTuple(20, 20), WithPolicy(policies[s.next(len(policies))]))
			if err != nil {
				return err.Error()
			}
			for step := 0; !s.done(); step++ {
				before := tree.state()
				name, err := tree.run(s)
				if name == "admit" && err != nil && !errors.Is(err, ErrUnknownJob) && !errors.Is(err, resource.ErrNegative) {
					return err.Error()
				}
				if err != nil && !reflect.DeepEqual(before, tree.state()) {
					return fmt.Sprintf("step %d: rejected %s (%v) changed the tree", step, name, err)
				}
				if err := tree.check(); err != nil {
					return fmt.Sprintf("step %d after %s: %v", step, name, err)
				}
			}
			return ""
		}, scripts(300)))
	props.TestingRun(t)
}

func TestSortProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	entries := func(s *script) []Entry {
		es := make([]Entry, s.next(8))
		for i := range es {
			es[i] = Entry{ID: fmt.Sprint("e", i), Kind: Kind(s.next(3)), Priority: s.next(3),
				Submitted: time.Duration(s.next(3)), Running: s.next(4), Pending: s.next(4),
				Share: Share{Weight: s.pick(1, 2, 0.5), Min: s.pick(0, 0.2, 2), Max: s.pick(0, 3, math.Inf(1))},
				Usage: s.tuple(6), Demand: s.tuple(6)}
		}
		return es
	}
	props.Property("Sort orders by key, submission, ID; any input permutation gives the same order",
		prop.ForAll(func(s *script) string {
			p := policies[s.next(len(policies))]
			c := s.tuple(12)
			es := entries(s)
			shuffled := slices.Clone(es)
			for i := len(shuffled) - 1; i > 0; i-- {
				j := s.next(i + 1)
				shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
			}
			if err := Sort(twoDims, p, c, es); err != nil {
				return err.Error()
			}
			if err := Sort(twoDims, p, c, shuffled); err != nil {
				return err.Error()
			}
			if !reflect.DeepEqual(es, shuffled) {
				return "order depends on the input order"
			}
			for i := 1; i < len(es); i++ {
				a, b := &es[i-1], &es[i]
				if compareEntries(p.Key(a, c), a, p.Key(b, c), b) >= 0 {
					return fmt.Sprintf("%s before %s out of order", a.ID, b.ID)
				}
				for _, k := range p.Key(a, c) {
					if math.IsNaN(k) {
						return "NaN key"
					}
				}
			}
			return ""
		}, scripts(120)))
	props.TestingRun(t)
}

func TestWaterFillProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	const eps = 1e-9
	props.Property("water-filling: bounds, sum, min shares, weighted equality", prop.ForAll(func(s *script) string {
		capacity := float64(s.next(100))
		claims := make([]Claim, 1+s.next(6))
		var sumLo, sumHi float64
		lo, hi := make([]float64, len(claims)), make([]float64, len(claims))
		for i := range claims {
			c := Claim{Weight: s.pick(0.5, 1, 2, 3, 0.1), Min: s.pick(0, 0, 5, 10, 30), Demand: s.pick(0, 3, 10, 40, math.Inf(1))}
			c.Max = s.pick(0, math.Inf(1), c.Min, c.Min+7, c.Min+20)
			claims[i] = c
			hi[i] = c.Demand
			if c.Max > 0 {
				hi[i] = min(hi[i], c.Max)
			}
			lo[i] = min(c.Min, hi[i])
			sumLo += lo[i]
			sumHi += hi[i]
		}
		got, err := WaterFill(capacity, claims)
		if err != nil {
			return err.Error()
		}
		sum := 0.0
		for i, x := range got {
			sum += x
			if x < -eps || x > hi[i]+eps {
				return fmt.Sprintf("claim %d got %v outside [0, %v]", i, x, hi[i])
			}
			if sumLo <= capacity && x < lo[i]-eps {
				return fmt.Sprintf("claim %d got %v below its feasible min %v", i, x, lo[i])
			}
		}
		want := min(capacity, sumHi)
		if math.Abs(sum-want) > eps*max(1, want) {
			return fmt.Sprintf("shares add up to %v, want %v", sum, want)
		}
		if sumHi <= capacity {
			return ""
		}
		// Max-min: a claim strictly above its lower bound has a weighted share no larger
		// than that of any claim strictly below its upper bound.
		for i := range got {
			for j := range got {
				if got[i] > lo[i]+eps && got[j] < hi[j]-eps && sumLo < capacity &&
					got[i]/claims[i].Weight > got[j]/claims[j].Weight+eps {
					return fmt.Sprintf("claim %d (%v/%v) above claim %d (%v/%v)", i, got[i], claims[i].Weight, j, got[j], claims[j].Weight)
				}
			}
		}
		return ""
	}, scripts(40)))
	props.TestingRun(t)
}

// Water-filling is linear in the amounts and depends on the weights' ratios only, so
// scaling either by a power of two scales the shares alike, or not at all — also when
// the scaled sums no longer fit a float (Σ min, Σ demand, Σ weight = +Inf).
func TestWaterFillScaleProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	const eps = 1e-9
	const up = 0x1p1017 // 99 × 2^1017 < MaxFloat64; 7 claims × 30 × 2^1017 is not
	props.Property("water-filling scales with the amounts and ignores the weights' scale", prop.ForAll(func(s *script) string {
		capacity := float64(s.next(100))
		claims := make([]Claim, 1+s.next(6))
		for i := range claims {
			c := Claim{Weight: s.pick(0.5, 1, 2, 3, 0.1), Min: s.pick(0, 0, 5, 10, 30), Demand: s.pick(0, 3, 10, 40, math.Inf(1))}
			c.Max = s.pick(0, math.Inf(1), c.Min, c.Min+7, c.Min+20)
			claims[i] = c
		}
		want, err := WaterFill(capacity, claims)
		if err != nil {
			return err.Error()
		}
		big := slices.Clone(claims)
		heavy := slices.Clone(claims)
		for i := range claims {
			big[i].Min *= up
			big[i].Max *= up
			big[i].Demand *= up
			heavy[i].Weight *= 0x1p1021 // 3 × 2^1021 < MaxFloat64; two such weights are not
		}
		gotBig, err := WaterFill(capacity*up, big)
		if err != nil {
			return err.Error()
		}
		gotHeavy, err := WaterFill(capacity, heavy)
		if err != nil {
			return err.Error()
		}
		for i := range want {
			if x := gotBig[i] / up; math.Abs(x-want[i]) > eps*max(1, capacity) {
				return fmt.Sprintf("amounts × 2^1017: claim %d got %v × 2^1017, want %v", i, x, want[i])
			}
			if x := gotHeavy[i]; math.Abs(x-want[i]) > eps*max(1, capacity) {
				return fmt.Sprintf("weights × 2^1021: claim %d got %v, want %v", i, x, want[i])
			}
		}
		return ""
	}, scripts(40)))
	props.TestingRun(t)
}

func TestJainProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	xs := gen.SliceOf(gen.Float64Range(0, 1e6)).SuchThat(func(x []float64) bool { return len(x) > 0 })
	props.Property("Jain index lies in [1/n, 1]", prop.ForAll(func(x []float64) bool {
		j, err := Jain(x)
		return err == nil && j >= 1/float64(len(x)) && j <= 1
	}, xs))
	props.Property("Jain index is scale-invariant", prop.ForAll(func(x []float64, c float64) bool {
		a, _ := Jain(x)
		y := make([]float64, len(x))
		for i := range x {
			y[i] = x[i] * c
		}
		b, _ := Jain(y)
		return math.Abs(a-b) < 1e-9
	}, xs, gen.Float64Range(1e-3, 1e3)))
	props.Property("equal allocations score 1, one winner 1/n", prop.ForAll(func(v float64, n int) bool {
		eq := slices.Repeat([]float64{v}, n)
		one := make([]float64, n)
		one[0] = v
		a, _ := Jain(eq)
		b, _ := Jain(one)
		return math.Abs(a-1) < 1e-12 && math.Abs(b-1/float64(n)) < 1e-12
	}, gen.Float64Range(1e-3, 1e6), gen.IntRange(1, 50)))
	props.TestingRun(t)
}

func TestDRFProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("DRF on a Tree is progressive filling: dominant shares never drop, the lowest weighted share goes next, nothing left that fits",
		prop.ForAll(func(s *script) string {
			capacity := twoDims.MustTuple(int64(1+s.next(40)), int64(1+s.next(40)))
			users := make([]User, 1+s.next(5))
			tree, _ := NewTree(twoDims, capacity)
			for i := range users {
				users[i] = User{Task: twoDims.MustTuple(int64(s.next(6)), int64(1+s.next(6))), Weight: s.pick(1, 2, 0.5, 3)}
				id := fmt.Sprint("u", i)
				if err := tree.AddJob("", id, Weight(users[i].Weight), SubmittedAt(time.Duration(i))); err != nil {
					return err.Error()
				}
				if err := tree.AddPending(id, 1000, users[i].Task.Scale(1000)); err != nil {
					return err.Error()
				}
			}
			want, err := ProgressiveFilling(twoDims, capacity, users)
			if err != nil {
				return err.Error()
			}
			free := capacity
			got := make([]int, len(users))
			last := make([]float64, len(users))
			for {
				id, ok := tree.Next()
				if !ok {
					break
				}
				var u int
				fmt.Sscanf(id, "u%d", &u)
				// The chosen user has the lowest weighted dominant share among those still
				// taking tasks.
				mine := DRF{}.Key(&tree.jobs[id].Entry, capacity)
				for v := range users {
					other := tree.jobs[fmt.Sprint("u", v)]
					if other.Pending > 0 && (DRF{}).Key(&other.Entry, capacity)[1] < mine[1] {
						return fmt.Sprintf("%s chosen over %s with a lower share", id, other.ID)
					}
				}
				if !free.Covers(users[u].Task) {
					e := tree.jobs[id].Entry
					if err := tree.RemovePending(id, e.Pending, e.Demand); err != nil {
						return err.Error()
					}
					continue
				}
				free = free.Sub(users[u].Task)
				got[u]++
				if err := tree.Start(id, users[u].Task, users[u].Task); err != nil {
					return err.Error()
				}
				ds := tree.jobs[id].Usage.DominantShare(capacity)
				if ds < last[u] {
					return fmt.Sprintf("%s's dominant share dropped from %v to %v", id, last[u], ds)
				}
				last[u] = ds
			}
			if !slices.Equal(got, want) {
				return fmt.Sprintf("tree gave %v, progressive filling %v", got, want)
			}
			for i, u := range users {
				if free.Covers(u.Task) {
					return fmt.Sprintf("user %d's task %v still fits in %v", i, u.Task, free)
				}
			}
			return ""
		}, scripts(20)))
	props.TestingRun(t)
}

func TestDelayProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("Offer launches exactly at or above Allowed, at best, resetting the wait; waits only grow while skipping",
		prop.ForAll(func(s *script) string {
			var opt DelayOption
			if s.next(2) == 0 {
				opt = WithWaits(time.Duration(s.next(5))*time.Second, time.Duration(s.next(5))*time.Second)
			} else {
				opt = WithSkips(s.next(4), s.next(4))
			}
			d, err := NewDelay(opt)
			if err != nil {
				return err.Error()
			}
			now := time.Duration(0)
			jobs := []string{"a", "b", "c"}
			for !s.done() {
				if s.next(3) == 0 {
					prev := map[string]JobWait{}
					for _, j := range jobs {
						prev[j] = d.State(j)
					}
					now += time.Duration(s.next(4)) * time.Second
					if err := d.Heartbeat(now); err != nil {
						return err.Error()
					}
					for _, j := range jobs {
						st := d.State(j)
						if st.Wait < prev[j].Wait || st.Skips != prev[j].Skips || st.Level != prev[j].Level || st.Skipped {
							return fmt.Sprintf("heartbeat changed %s from %+v to %+v", j, prev[j], st)
						}
					}
					continue
				}
				j := jobs[s.next(3)]
				best := Level(s.next(3))
				allowed, before := d.Allowed(j), d.State(j)
				l, ok, err := d.Offer(j, best)
				if err != nil {
					return err.Error()
				}
				st := d.State(j)
				switch {
				case ok != (best <= allowed):
					return fmt.Sprintf("offer %v to %s allowed %v: launched %v", best, j, allowed, ok)
				case ok && (l != best || st.Wait != 0 || st.Skips != 0 || st.Skipped):
					return fmt.Sprintf("launch at %v left %+v", l, st)
				case !ok && (!st.Skipped || st.Wait != before.Wait || st.Level != before.Level || (d.SkipCount() && st.Skips != before.Skips+1)):
					return fmt.Sprintf("skip left %+v (was %+v)", st, before)
				}
			}
			return ""
		}, scripts(60)))
	props.Property("zero waits never delay", prop.ForAll(func(s *script) bool {
		d, _ := NewDelay(WithWaits(0, 0))
		for !s.done() {
			if _, ok, _ := d.Offer(fmt.Sprint(s.next(3)), Level(s.next(3))); !ok {
				return false
			}
		}
		return true
	}, scripts(30)))
	props.TestingRun(t)
}

func TestPendingProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	nodes := []Location{{"n0", "r0"}, {"n1", "r0"}, {"n2", "r1"}, {"n3", "r1"}, {"n4", ""}}
	props.Property("Ascend visits each task once, at its true locality, in order; Best is the best",
		prop.ForAll(func(s *script) string {
			p := NewPending()
			model := map[string]PendingTask{}
			for !s.done() {
				id := fmt.Sprint("t", s.next(30))
				if s.next(4) == 0 {
					err := p.Remove(id)
					if _, ok := model[id]; ok != (err == nil) {
						return fmt.Sprintf("remove %s: %v", id, err)
					}
					delete(model, id)
					continue
				}
				task := PendingTask{ID: id, Job: fmt.Sprint("j", s.next(3)), Priority: s.next(2), Submitted: time.Duration(s.next(5))}
				for range s.next(4) {
					task.Locations = append(task.Locations, nodes[s.next(len(nodes))])
				}
				err := p.Add(task)
				if _, dup := model[id]; dup != (err != nil) {
					return fmt.Sprintf("add %s: %v", id, err)
				}
				if err == nil {
					model[id] = task
				}
			}
			if p.Len() != len(model) {
				return fmt.Sprintf("len %d, model %d", p.Len(), len(model))
			}
			level := func(t PendingTask, node, rack string) Level {
				if len(t.Locations) == 0 {
					return NodeLocal
				}
				l := OffSwitch
				for _, loc := range t.Locations {
					if loc.Node == node {
						return NodeLocal
					}
					if rack != "" && loc.Rack == rack {
						l = RackLocal
					}
				}
				return l
			}
			for _, job := range []string{"j0", "j1", "j2"} {
				for _, at := range append(nodes, Location{"n9", "r1"}, Location{"n9", "r9"}) {
					for worst := NodeLocal; worst <= OffSwitch; worst++ {
						seen := map[string]bool{}
						var prev *PendingTask
						var prevLevel Level
						prevAnywhere := false
						bad := ""
						p.Ascend(job, at.Node, at.Rack, worst, func(id string, l Level) bool {
							task, ok := model[id]
							switch {
							case !ok || task.Job != job:
								bad = "visited " + id + " of another job"
							case seen[id]:
								bad = "visited " + id + " twice"
							case l != level(task, at.Node, at.Rack) || l > worst:
								bad = fmt.Sprintf("%s at %v, truly %v", id, l, level(task, at.Node, at.Rack))
							case prev != nil && l < prevLevel:
								bad = "levels go backwards at " + id
							case prev != nil && l == prevLevel && prevAnywhere == (len(task.Locations) == 0) &&
								taskOrder(entryOf(*prev), entryOf(task)) > 0:
								bad = "task order broken at " + id
							}
							seen[id] = true
							prev, prevLevel, prevAnywhere = &task, l, len(task.Locations) == 0
							return bad == ""
						})
						if bad != "" {
							return bad
						}
						want, best := 0, OffSwitch+1
						for _, task := range model {
							if task.Job == job {
								if l := level(task, at.Node, at.Rack); l <= worst {
									want++
								}
								best = min(best, level(task, at.Node, at.Rack))
							}
						}
						if len(seen) != want {
							return fmt.Sprintf("%s on %v up to %v: visited %d of %d", job, at, worst, len(seen), want)
						}
						l, ok := p.Best(job, at.Node, at.Rack)
						if ok != (best <= OffSwitch) || (ok && l != best) {
							return fmt.Sprintf("best %v %v, want %v", l, ok, best)
						}
					}
				}
			}
			return ""
		}, scripts(80)))
	props.TestingRun(t)
}

// entryOf is task t's order keys as an entry, for taskOrder.
func entryOf(t PendingTask) *PendingEntry[struct{}] {
	return &PendingEntry[struct{}]{ID: t.ID, Job: t.Job, Priority: t.Priority, Submitted: t.Submitted}
}

// ownedTask is a record of an owner that keeps its tasks itself, with its entry
// embedded, as package cluster's TaskInfo does.
type ownedTask struct {
	entry PendingEntry[*ownedTask]
}

func TestPendingIndexProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	nodes := []Location{{"n0", "r0"}, {"n1", "r0"}, {"n2", "r1"}, {"n3", "r1"}, {"n4", ""}}
	// The racks of single-replica tasks, shared by every entry as an owner may share them.
	oneRack := map[string][]string{"r0": {"r0"}, "r1": {"r1"}}
	props.Property("a PendingIndex of owned entries answers as a Pending of the same tasks; "+
		"Owner comes back; refused inserts and deletes change nothing",
		prop.ForAll(func(s *script) string {
			p, idx := NewPending(), NewPendingIndex[*ownedTask]()
			owned := map[string]*ownedTask{}
			var gone []*ownedTask // deleted: no longer indexed
			for !s.done() {
				id := fmt.Sprint("t", s.next(30))
				if s.next(4) == 0 {
					o := owned[id]
					if o == nil {
						if len(gone) > 0 && idx.Delete(&gone[s.next(len(gone))].entry) == nil {
							return "deleted an entry not indexed"
						}
						continue
					}
					if err := p.Remove(id); err != nil {
						return "remove: " + err.Error()
					}
					if err := idx.Delete(&o.entry); err != nil || o.entry.Indexed() {
						return fmt.Sprintf("delete %s: %v, indexed %v", id, err, o.entry.Indexed())
					}
					if idx.Delete(&o.entry) == nil {
						return "deleted " + id + " twice"
					}
					delete(owned, id)
					gone = append(gone, o)
					continue
				}
				task := PendingTask{ID: id, Job: fmt.Sprint("j", s.next(3)), Priority: s.next(2), Submitted: time.Duration(s.next(5))}
				for range s.next(4) {
					task.Locations = append(task.Locations, nodes[s.next(len(nodes))])
				}
				o := &ownedTask{entry: PendingEntry[*ownedTask]{ID: task.ID, Job: task.Job, Priority: task.Priority, Submitted: task.Submitted}}
				o.entry.Owner = o
				for _, l := range task.Locations {
					o.entry.Nodes = append(o.entry.Nodes, l.Node)
				}
				switch {
				case len(task.Locations) == 1 && oneRack[task.Locations[0].Rack] != nil:
					o.entry.Racks = oneRack[task.Locations[0].Rack]
				case len(task.Locations) > 0:
					for _, l := range task.Locations {
						o.entry.Racks = append(o.entry.Racks, l.Rack)
					}
				}
				if old := owned[id]; old != nil {
					// A second entry of the same ID: refused when its job, priority and
					// submission are those of the indexed one.
					alike := old.entry.Job == task.Job && old.entry.Priority == task.Priority && old.entry.Submitted == task.Submitted
					if n, err := idx.Len(), idx.Insert(&o.entry); alike != errors.Is(err, ErrDuplicate) || (err != nil && (idx.Len() != n || o.entry.Indexed())) {
						return fmt.Sprintf("insert a second %s (alike %v): %v", id, alike, err)
					} else if err == nil {
						_ = idx.Delete(&o.entry)
					}
					continue
				}
				if err := p.Add(task); err != nil {
					return "add: " + err.Error()
				}
				if err := idx.Insert(&o.entry); err != nil || !o.entry.Indexed() {
					return fmt.Sprintf("insert %s: %v", id, err)
				}
				if idx.Insert(&o.entry) == nil {
					return "inserted " + id + " twice"
				}
				owned[id] = o
			}
			if idx.Len() != p.Len() || idx.Len() != len(owned) {
				return fmt.Sprintf("len %d, Pending's %d, owned %d", idx.Len(), p.Len(), len(owned))
			}
			type visit struct {
				id string
				l  Level
			}
			for _, job := range []string{"j0", "j1", "j2", "j9"} {
				if idx.JobLen(job) != p.JobLen(job) {
					return fmt.Sprintf("job %s: %d entries, Pending %d", job, idx.JobLen(job), p.JobLen(job))
				}
				for _, at := range append(nodes, Location{"n9", "r1"}, Location{"n9", "r9"}) {
					for worst := NodeLocal; worst <= OffSwitch; worst++ {
						var want, got []visit
						p.Ascend(job, at.Node, at.Rack, worst, func(id string, l Level) bool {
							want = append(want, visit{id, l})
							return true
						})
						bad := ""
						idx.Ascend(job, at.Node, at.Rack, worst, func(e *PendingEntry[*ownedTask], l Level) bool {
							if e.Owner != owned[e.ID] || &e.Owner.entry != e {
								bad = "owner of " + e.ID + " lost"
							}
							got = append(got, visit{e.ID, l})
							return true
						})
						if bad != "" {
							return bad
						}
						if !slices.Equal(got, want) {
							return fmt.Sprintf("%s on %v up to %v: %v, Pending %v", job, at, worst, got, want)
						}
						e, l, ok := idx.First(job, at.Node, at.Rack, worst)
						if ok != (len(want) > 0) || (ok && (e.ID != want[0].id || l != want[0].l)) {
							return fmt.Sprintf("%s on %v up to %v: first %v %v %v", job, at, worst, e, l, ok)
						}
						l, ok = idx.Best(job, at.Node, at.Rack)
						if wl, wok := p.Best(job, at.Node, at.Rack); l != wl || ok != wok {
							return fmt.Sprintf("%s on %v: best %v %v, Pending %v %v", job, at, l, ok, wl, wok)
						}
					}
				}
			}
			return ""
		}, scripts(80)))
	props.TestingRun(t)
}
