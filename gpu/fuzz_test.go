package gpu_test

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/finegrain/finegrain/gpu"
)

// FuzzDemand checks that Validate never panics and accepts exactly the demands the
// package doc describes — no device and nothing else; a share in [1, 1000] of one
// device; Count in [2, MaxDevices] whole devices; no empty model name — that every
// error wraps ErrInvalid, and that on devices drawn from the input, BestFit and every
// scorer agree with Fits and return only valid allocations, which Take and Release
// apply and undo exactly.
func FuzzDemand(f *testing.F) {
	f.Add(0, int64(0), "")
	f.Add(1, int64(460), "T4|V100")
	f.Add(1, int64(1000), "")
	f.Add(1, int64(1001), "T4")
	f.Add(2, int64(1000), "V100|")
	f.Add(2, int64(999), "")
	f.Add(-1, int64(1000), "")
	f.Add(65, int64(1000), "")
	f.Add(0, int64(0), "T4")
	f.Add(0, int64(7), "")
	f.Add(64, int64(1000), "A100|A100")
	f.Fuzz(func(t *testing.T, count int, milli int64, names string) {
		var ms []string
		if names != "" {
			ms = strings.Split(names, "|")
		}
		dem := gpu.Demand{Count: count, Milli: milli, Models: ms}
		err := dem.Validate()
		want := !slices.Contains(ms, "")
		switch {
		case count < 0 || count > gpu.MaxDevices:
			want = false
		case count == 0:
			want = want && milli == 0 && len(ms) == 0
		case count == 1:
			want = want && milli >= 1 && milli <= gpu.Milli
		default:
			want = want && milli == gpu.Milli
		}
		if (err == nil) != want {
			t.Fatalf("Validate(%+v) = %v, want valid %v", dem, err, want)
		}
		if err != nil {
			if !errors.Is(err, gpu.ErrInvalid) {
				t.Fatalf("Validate(%+v) = %v: not ErrInvalid", dem, err)
			}
			return
		}
		if dem.Total() != int64(count)*milli || dem.IsZero() != (count == 0) || dem.Shared() != (count == 1 && milli < gpu.Milli) || dem.String() == "" {
			t.Fatalf("%+v: Total %d, IsZero %v, Shared %v, String %q", dem, dem.Total(), dem.IsZero(), dem.Shared(), dem.String())
		}
		r := rand.New(rand.NewSource(int64(count)*1_000_003 ^ milli ^ int64(len(names))<<40))
		for k := 0; k < 4; k++ {
			d := randDevices(r)
			if k%2 == 1 && len(ms) > 0 {
				// Devices of a model the demand allows.
				d2, err := gpu.New(gpu.Spec{Model: ms[r.Intn(len(ms))], Count: d.Len()})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < d.Len(); i++ {
					if d.Free(i) < gpu.Milli {
						if err := d2.Take(gpu.Allocation{Devices: []int{i}, Milli: gpu.Milli - d.Free(i)}); err != nil {
							t.Fatal(err)
						}
					}
				}
				d = d2
			}
			a, ok := d.BestFit(dem)
			if ok != d.Fits(dem) {
				t.Fatalf("%v on %v (%q): BestFit ok %v, Fits %v", dem, frees(&d), d.Model(), ok, !ok)
			}
			if ok {
				if msg := validFor(&d, dem, a); msg != "" {
					t.Fatal(msg)
				}
				if msg := roundTrip(&d, a); msg != "" {
					t.Fatal(msg)
				}
			}
			n := randNode(r, &d)
			s := gpu.Shape{Request: n.Free, GPU: dem}
			for _, sc := range randScorers(r) {
				x, a, ok := sc.Score(n, s)
				if ok != d.Fits(dem) || (ok && !(x >= 0 && x <= 1)) {
					t.Fatalf("%T: %v on %v: %v, %v, %v", sc, dem, frees(&d), x, a, ok)
				}
				if ok {
					if msg := validFor(&d, dem, a); msg != "" {
						t.Fatalf("%T: %s", sc, msg)
					}
				}
			}
		}
	})
}

// FuzzDevices drives the devices of New(Spec{Count: n}) with Take and Release calls
// decoded from the input and checks, against a model of each device's free share, that
// no call panics, that a call is accepted exactly when it is well formed and every
// device it names has the room (Take: the share free; Release: the share taken), that
// an accepted call moves exactly its devices by its share and a refused one changes
// nothing, and so that no device's free share ever leaves [0, 1000].
//
// Each operation is 6 bytes: kind (bit 0: take or release) and device count (bits
// 1–2, 0 to 3); a 16-bit share in [-100, 1102]; three device indices in [-1, n].
func FuzzDevices(f *testing.F) {
	f.Add(uint8(4), []byte{0, 0x2c, 0x01, 1, 0, 0})
	f.Add(uint8(2), []byte{2, 0xe8, 0x03, 1, 1, 0, 3, 0xe8, 0x03, 1, 2, 0, 1, 0x64, 0x00, 1, 0, 0})
	f.Add(uint8(8), []byte("take release take take release release take"))
	f.Add(uint8(65), []byte{0, 1, 2, 3, 4, 5})
	f.Add(uint8(0), []byte{0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, n uint8, ops []byte) {
		count := int(n) % (gpu.MaxDevices + 2)
		d, err := gpu.New(gpu.Spec{Model: "T4", Count: count})
		if count > gpu.MaxDevices {
			if !errors.Is(err, gpu.ErrInvalid) {
				t.Fatalf("New(%d devices) = %v, want ErrInvalid", count, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		model := make([]int64, count)
		for i := range model {
			model[i] = gpu.Milli
		}
		for ; len(ops) >= 6; ops = ops[6:] {
			take := ops[0]&1 == 0
			k := int(ops[0]>>1) & 3
			milli := int64(binary.LittleEndian.Uint16(ops[1:3]))%1203 - 100
			a := gpu.Allocation{Milli: milli}
			for _, b := range ops[3 : 3+k] {
				a.Devices = append(a.Devices, int(b)%(count+2)-1)
			}
			ok := true // what the model expects
			if len(a.Devices) > 0 {
				ok = milli > 0 && milli <= gpu.Milli
				for j, i := range a.Devices {
					switch {
					case i < 0 || i >= count || slices.Contains(a.Devices[:j], i):
						ok = false
					case take && model[i] < milli, !take && model[i]+milli > gpu.Milli:
						ok = false
					}
				}
			}
			if take {
				err = d.Take(a)
			} else {
				err = d.Release(a)
			}
			if (err == nil) != ok {
				t.Fatalf("take %v, %v on %v: %v, want accepted %v", take, a, model, err, ok)
			}
			if err != nil && !errors.Is(err, gpu.ErrInvalid) && !errors.Is(err, gpu.ErrNoRoom) {
				t.Fatalf("take %v, %v: error %v wraps no sentinel", take, a, err)
			}
			if err == nil {
				for _, i := range a.Devices {
					if take {
						model[i] -= milli
					} else {
						model[i] += milli
					}
				}
			}
			if got := frees(&d); !slices.Equal(got, model) {
				t.Fatalf("after take %v, %v (err %v): free %v, want %v", take, a, err, got, model)
			}
			var total int64
			for i, x := range model {
				if x < 0 || x > gpu.Milli {
					t.Fatalf("device %d has %d free", i, x)
				}
				total += x
			}
			if d.FreeTotal() != total || d.Capacity() != int64(count)*gpu.Milli {
				t.Fatalf("FreeTotal %d, Capacity %d; want %d, %d", d.FreeTotal(), d.Capacity(), total, count*gpu.Milli)
			}
		}
	})
}
