package stage_test

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// FuzzNewProfile checks that profile validation never panics, accepts exactly the
// stages with positive durations and valid demands, and that an accepted profile's
// duration, offsets and peak agree with its stages.
func FuzzNewProfile(f *testing.F) {
	f.Add(int64(time.Second), int64(1000), int64(2000), int64(time.Minute), int64(3000), int64(0), uint8(2))
	f.Add(int64(0), int64(1), int64(1), int64(1), int64(-1), int64(1), uint8(1))
	f.Add(int64(stage.Forever), int64(1), int64(1), int64(stage.Forever), int64(1), int64(1), uint8(2))
	f.Fuzz(func(t *testing.T, d1, c1, m1, d2, c2, m2 int64, n uint8) {
		all := []stage.Stage{
			{Duration: time.Duration(d1), Demand: tup(c1, m1)},
			{Duration: time.Duration(d2), Demand: tup(c2, m2)},
		}
		in := all[:int(n)%3]
		p, err := stage.NewProfile(schema, in...)
		valid := len(in) > 0
		for _, s := range in {
			valid = valid && s.Duration > 0 && s.Demand[0] >= 0 && s.Demand[1] >= 0
		}
		if (err == nil) != valid {
			t.Fatalf("NewProfile(%v) = %v, %v", in, p, err)
		}
		if err != nil {
			// A refused profile is the zero Profile, the empty one.
			if p.Len() != 0 || p.Offset(p.Len()) != 0 || p.Duration() != 0 || p.StageAt(0) != -1 {
				t.Fatalf("NewProfile(%v) refused with %v returned %v", in, err, p)
			}
			return
		}
		var peak resource.Tuple
		sum := time.Duration(0)
		for i, s := range in {
			if p.Offset(i) != sum {
				t.Fatalf("offset %d = %v, want %v", i, p.Offset(i), sum)
			}
			if sum > stage.Forever-s.Duration {
				sum = stage.Forever
			} else {
				sum += s.Duration
			}
			peak = peak.Max(s.Demand)
		}
		if p.Duration() != sum || p.Peak() != peak {
			t.Fatalf("profile %v: duration %v peak %v, want %v %v", p, p.Duration(), p.Peak(), sum, peak)
		}
	})
}

// FuzzTimeline drives a timeline with operations decoded from the input and checks that
// it never panics, never takes memory below zero, and that refused calls change nothing.
func FuzzTimeline(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("reserve release reserve trim earliest"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		tl, err := stage.NewTimeline(schema, tup(100, 100))
		if err != nil {
			t.Fatal(err)
		}
		var hs []stage.Handle
		for len(ops) >= 8 {
			op, a, b := ops[0]%4, binary.LittleEndian.Uint16(ops[1:3]), ops[3:8]
			ops = ops[8:]
			p, perr := stage.NewProfile(schema,
				stage.Stage{Duration: time.Duration(b[0]) - 10, Demand: tup(int64(b[1])-5, int64(b[2]))},
				stage.Stage{Duration: time.Duration(b[3]) + 1, Demand: tup(int64(b[4]), int64(b[4]/2))})
			start := time.Duration(a) - 100
			allow := tup(int64(b[2]%20), 0)
			before := tl.AppendSegments(nil, 0, stage.Forever)
			switch op {
			case 0:
				if perr != nil {
					continue
				}
				h, err := tl.Reserve(start, p, allow)
				if err == nil {
					hs = append(hs, h)
				} else if !sameSegments(before, tl.AppendSegments(nil, 0, stage.Forever)) {
					t.Fatalf("refused Reserve changed the timeline: %v", err)
				}
			case 1:
				if len(hs) > 0 {
					i := int(a) % len(hs)
					if err := tl.Release(hs[i]); err != nil {
						t.Fatal(err)
					}
					hs = append(hs[:i], hs[i+1:]...)
				} else if err := tl.Release(stage.Handle(a)); !errors.Is(err, stage.ErrUnknownReservation) {
					t.Fatalf("release of unknown handle: %v", err)
				}
			case 2:
				tl.Trim(start)
			case 3:
				if perr != nil {
					continue
				}
				if s, err := tl.EarliestFit(start, p, allow); err == nil {
					if err := tl.Check(s, p, allow); err != nil {
						t.Fatalf("EarliestFit gave %v, which does not fit: %v", s, err)
					}
				}
			}
			tl.Walk(0, stage.Forever, func(s stage.Segment) bool {
				if s.Free[1] < 0 || s.Free[0] < -20 {
					t.Fatalf("segment %v over-committed", s)
				}
				return true
			})
		}
	})
}

func sameSegments(a, b []stage.Segment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
