package fairness

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// FuzzTree drives a tree with operations decoded from arbitrary bytes — IDs, weights,
// shares, counts and tuples a user might pass — and checks that it never panics, that
// its incremental order always equals the order computed from scratch, and that a
// rejected call changes nothing.
func FuzzTree(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte("queue job pending start release remove"))
	f.Fuzz(func(t *testing.T, data []byte) {
		xs := make([]uint32, len(data)/2)
		for i := range xs {
			xs[i] = uint32(binary.LittleEndian.Uint16(data[2*i:]))
		}
		s := &script{xs: xs}
		tree, err := NewTree(twoDims, twoDims.MustTuple(20, 20), WithPolicy(policies[s.next(len(policies))]))
		if err != nil {
			t.Fatal(err)
		}
		for !s.done() {
			before := tree.state()
			name, err := tree.run(s)
			if err != nil && name != "admit" {
				if !reflect.DeepEqual(before, tree.state()) {
					t.Fatalf("rejected %s (%v) changed the tree", name, err)
				}
			}
			if err := tree.check(); err != nil {
				t.Fatalf("after %s: %v", name, err)
			}
		}
	})
}

// FuzzShareOptions checks that a queue or job is accepted exactly when its weight, min
// and max share are valid, and then holds exactly those values.
func FuzzShareOptions(f *testing.F) {
	f.Add(1.0, 0.0, 0.0, true)
	f.Add(0.0, 1.0, 0.5, false)
	f.Add(math.NaN(), -1.0, math.Inf(1), true)
	f.Fuzz(func(t *testing.T, w, lo, hi float64, queue bool) {
		tree, _ := NewTree(twoDims, twoDims.MustTuple(10, 10))
		add := tree.AddJob
		if queue {
			add = tree.AddQueue
		}
		err := add("", "x", Weight(w), MinShare(lo), MaxShare(hi))
		valid := w > 0 && !math.IsInf(w, 1) && lo >= 0 && !math.IsInf(lo, 1) && hi >= 0 &&
			(hi == 0 || math.IsInf(hi, 1) || lo <= hi)
		if valid != (err == nil) {
			t.Fatalf("weight %v min %v max %v: valid %v, error %v", w, lo, hi, valid, err)
		}
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || tree.Len() != 0 || len(tree.queues) != 0 {
				t.Fatalf("bad rejection %v", err)
			}
			return
		}
		var e Entry
		if queue {
			e, _ = tree.Queue("x")
		} else {
			e, _ = tree.Job("x")
		}
		if e.Share != (Share{Weight: w, Min: lo, Max: hi}) {
			t.Fatalf("stored %+v", e.Share)
		}
	})
}

// FuzzWaterFill checks that WaterFill never panics and that what it returns respects
// every claim's bounds and the capacity.
func FuzzWaterFill(f *testing.F) {
	f.Add(10.0, 1.0, 0.0, 0.0, 5.0, 2.0, 3.0, 4.0, 100.0)
	f.Add(0.0, 1e-300, 1e300, 1e300, math.Inf(1), 1e300, 0.0, 0.0, math.Inf(1))
	f.Add(1e300, 1e-300, 1e300, 0.0, math.Inf(1), 1e-300, 1e299, 0.0, 1e300)
	f.Add(5.0, 1e-310, 3.0, 0.0, 10.0, 1e300, 0.0, 4.0, 0.4)
	f.Add(8e300, 1e-300, 3e300, 0.0, math.Inf(1), 5e-300, 1e299, 0.0, 3e300)
	// Sums past the float range: the min shares, the weights, and a capacity at its top.
	f.Add(1.0, 1.0, 1e308, 0.0, math.Inf(1), 1.0, 1e308, 0.0, math.Inf(1))
	f.Add(10.0, math.MaxFloat64, 3.0, 0.0, math.Inf(1), math.MaxFloat64, 0.0, 0.0, 4.0)
	f.Add(math.MaxFloat64, 1.0, math.MaxFloat64/2, 0.0, math.Inf(1), 3.0, 0.0, 0.0, math.Inf(1))
	f.Add(math.MaxFloat64, 1.0, math.MaxFloat64*0.75, 0.0, math.Inf(1), 1.0, math.MaxFloat64*0.75, 0.0, math.Inf(1))
	f.Fuzz(func(t *testing.T, capacity, w1, min1, max1, d1, w2, min2, max2, d2 float64) {
		claims := []Claim{{w1, min1, max1, d1}, {w2, min2, max2, d2}}
		got, err := WaterFill(capacity, claims)
		if err != nil {
			return
		}
		sum, sumLo, sumHi := 0.0, 0.0, 0.0
		los := make([]float64, len(claims))
		for i, x := range got {
			c := claims[i]
			hi := c.Demand
			if c.Max > 0 {
				hi = min(hi, c.Max)
			}
			los[i] = min(c.Min, hi)
			sumLo += los[i]
			sumHi += hi
			if math.IsNaN(x) || x < 0 || x > hi {
				t.Fatalf("claim %d %+v got %v", i, c, x)
			}
			sum += x
		}
		want := min(capacity, sumHi)
		if math.IsInf(sum, 1) { // shares near the top of the float range: halve them
			sum, want = 0, want/2
			for _, x := range got {
				sum += x / 2
			}
		}
		if math.Abs(sum-want) > 1e-9*want {
			t.Fatalf("shares %v add up to %v, want %v", got, sum, want)
		}
		if sumLo <= capacity {
			for i, x := range got {
				if x < los[i]*(1-1e-9) {
					t.Fatalf("claim %d got %v below its min %v", i, x, los[i])
				}
			}
		}
	})
}

// FuzzJain checks that Jain's index of valid allocations lies in [1/n, 1].
func FuzzJain(f *testing.F) {
	f.Add(1.0, 2.0, 3.0)
	f.Add(0.0, 0.0, 1e308)
	f.Fuzz(func(t *testing.T, a, b, c float64) {
		j, err := Jain([]float64{a, b, c})
		if err != nil {
			return
		}
		if !(j >= 1.0/3 && j <= 1) {
			t.Fatalf("Jain(%v, %v, %v) = %v", a, b, c, j)
		}
	})
}

// FuzzDelay checks that NewDelay accepts exactly the valid thresholds and that offers
// and heartbeats at arbitrary times never panic and launch only what Allowed permits.
func FuzzDelay(f *testing.F) {
	f.Add(int64(5e9), int64(20e9), false, []byte{0, 1, 2, 3})
	f.Add(int64(math.MaxInt64), int64(1), true, []byte{})
	f.Add(int64(-1), int64(0), false, []byte{9})
	f.Fuzz(func(t *testing.T, a, b int64, skips bool, ops []byte) {
		opt := WithWaits(time.Duration(a), time.Duration(b))
		if skips {
			opt = WithSkips(int(a), int(b))
		}
		d, err := NewDelay(opt)
		valid := a >= 0 && b >= 0 && a <= math.MaxInt64-b
		if valid != (err == nil) {
			t.Fatalf("thresholds %d, %d: valid %v, error %v", a, b, valid, err)
		}
		if err != nil {
			return
		}
		now := time.Duration(0)
		for _, op := range ops {
			if op&3 == 3 {
				next := now + time.Duration(op)*time.Second
				if err := d.Heartbeat(next); err != nil {
					t.Fatal(err)
				}
				now = next
				if d.Heartbeat(now-1) == nil {
					t.Fatal("time went backwards unnoticed")
				}
				continue
			}
			job, best := string('a'+rune(op>>4&3)), Level(op&3)
			allowed := d.Allowed(job)
			if _, ok, err := d.Offer(job, best); err != nil || ok != (best <= allowed) {
				t.Fatalf("offer %v allowed %v: %v %v", best, allowed, ok, err)
			}
		}
	})
}

// FuzzPending checks that Add accepts exactly well-formed tasks and that a task added
// can be found at its node and removed again.
func FuzzPending(f *testing.F) {
	f.Add("t", "j", "n", "r", 1)
	f.Add("", "j", "", "", 0)
	f.Fuzz(func(t *testing.T, id, job, node, rack string, prio int) {
		p := NewPending()
		task := PendingTask{ID: id, Job: job, Priority: prio, Locations: []Location{{Node: node, Rack: rack}}}
		err := p.Add(task)
		if (id != "" && job != "" && node != "") != (err == nil) {
			t.Fatalf("add %+v: %v", task, err)
		}
		if err != nil {
			if p.Len() != 0 {
				t.Fatal("rejected task indexed")
			}
			return
		}
		if l, ok := p.Best(job, node, ""); !ok || l != NodeLocal {
			t.Fatalf("best on its node: %v %v", l, ok)
		}
		if got, l, ok := p.First(job, "other"+node, rack, OffSwitch); !ok || got != id || (rack != "" && l != RackLocal) {
			t.Fatalf("first elsewhere: %q %v %v", got, l, ok)
		}
		if err := p.Remove(id); err != nil || p.Len() != 0 || p.JobLen(job) != 0 {
			t.Fatalf("remove: %v", err)
		}
	})
}

// TestWaterFillExtremes pins the cases whose breakpoints leave the float range.
func TestWaterFillExtremes(t *testing.T) {
	for _, c := range []struct {
		capacity float64
		claims   []Claim
	}{
		{1e301, []Claim{{1e-300, 1e300, 0, math.Inf(1)}, {1e-300, 1e299, 0, 1e300}}},
		{5, []Claim{{1e-310, 3, 0, 10}, {1e300, 0, 4, 4}}},
		{1, []Claim{{5e-324, 0.5, 0, 1}, {5e-324, 0.25, 0, 1}}},
		// Found by FuzzWaterFill: a weight ratio of 1e610 underflowed to 0, and a share
		// rounded above its demand.
		{5, []Claim{{1e-310, 3, 0, 10}, {1e300, 0, 4, 0.4}}},
		{1e300, []Claim{{1e-300, 5e299, 0, math.Inf(1)}, {1e-300, 1e299, 0, 1e300}}},
		{8e300, []Claim{{1e-300, 3e300, 0, math.Inf(1)}, {5e-300, 1e299, 0, 3e300}}},
	} {
		got, err := WaterFill(c.capacity, c.claims)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for i, x := range got {
			hi := c.claims[i].Demand
			if c.claims[i].Max > 0 {
				hi = min(hi, c.claims[i].Max)
			}
			if math.IsNaN(x) || x < min(c.claims[i].Min, hi)*(1-1e-12) || x > hi {
				t.Fatalf("%+v: claim %d got %v", c, i, x)
			}
			sum += x
		}
		if sum > c.capacity*(1+1e-9) || sum < c.capacity*(1-1e-9) {
			t.Fatalf("%+v: shares %v add up to %v", c, got, sum)
		}
	}
}

// FuzzLocalityClock builds the clock rule from arbitrary waits and asks it about
// arbitrary states and times: NewLocalityClock fails exactly on a negative wait or a
// sum past the int64 range, never panics, and the level it allows never falls as time
// passes and is never better than the level last launched at.
func FuzzLocalityClock(f *testing.F) {
	f.Add(int64(5e9), int64(20e9), uint8(0), int64(0), int64(3e9), int64(7e9))
	f.Add(int64(-1), int64(0), uint8(1), int64(0), int64(0), int64(0))
	f.Add(int64(math.MaxInt64), int64(1), uint8(2), int64(-5), int64(math.MinInt64), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, w1, w2 int64, level uint8, since, a, b int64) {
		c, err := NewLocalityClock(time.Duration(w1), time.Duration(w2))
		bad := w1 < 0 || w2 < 0 || w1 > math.MaxInt64-w2
		if bad != (err != nil) {
			t.Fatalf("NewLocalityClock(%d, %d): err %v", w1, w2, err)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidWait) {
				t.Fatalf("error %v is not ErrInvalidWait", err)
			}
			return
		}
		l := Level(level % 3)
		s := ClockState{Level: l, Since: time.Duration(since)}
		if a > b {
			a, b = b, a
		}
		x, y := c.Allowed(s, time.Duration(a)), c.Allowed(s, time.Duration(b))
		if x > y || x < l || y > OffSwitch {
			t.Fatalf("state %v, waits %d/%d: allowed %v at %d, %v at %d", s, w1, w2, x, a, y, b)
		}
	})
}
