package gpu_test

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

func params() *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	p.MinSuccessfulTests = 2000
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with p.SetSeed(seed)).
	return p
}

var models = []string{"T4", "V100", "A100"}

// randModels is no model (any) half the time, else one or two of models.
func randModels(r *rand.Rand) []string {
	switch r.Intn(4) {
	case 0:
		return []string{models[r.Intn(len(models))]}
	case 1:
		return []string{models[r.Intn(len(models))], models[r.Intn(len(models))]}
	}
	return nil
}

// randDevices is up to 9 devices of a random model (or none), some partly or wholly
// taken, free shares drawn so that ties and exact fits are common.
func randDevices(r *rand.Rand) gpu.Devices {
	model := ""
	if r.Intn(4) > 0 {
		model = models[r.Intn(len(models))]
	}
	d, err := gpu.New(gpu.Spec{Model: model, Count: r.Intn(10)})
	if err != nil {
		panic(err)
	}
	for i := 0; i < d.Len(); i++ {
		var take int64
		switch r.Intn(5) {
		case 0, 1: // whole
		case 2:
			take = gpu.Milli
		case 3:
			take = int64(r.Intn(11)) * 100
		default:
			take = int64(r.Intn(gpu.Milli + 1))
		}
		if take > 0 {
			if err := d.Take(gpu.Allocation{Devices: []int{i}, Milli: take}); err != nil {
				panic(err)
			}
		}
	}
	return d
}

// randDemand is a valid demand: none, a share (often a round one), or whole devices
// (mostly up to 3, else up to 10), with models at random.
func randDemand(r *rand.Rand) gpu.Demand {
	var d gpu.Demand
	switch r.Intn(5) {
	case 0:
		return gpu.Demand{}
	case 1, 2:
		d = gpu.Share(1 + int64(r.Intn(gpu.Milli)))
		if r.Intn(2) == 0 {
			d = gpu.Share(int64(1+r.Intn(10)) * 100)
		}
	default:
		d = gpu.Whole(1 + r.Intn(3))
		if r.Intn(4) == 0 {
			d = gpu.Whole(1 + r.Intn(10))
		}
	}
	d.Models = randModels(r)
	return d
}

// randNode is a node of schema with random capacity, free amounts within it, and
// devices.
func randNode(r *rand.Rand, d *gpu.Devices) gpu.Node {
	var c, f resource.Tuple
	for k := 0; k < schema.Len(); k++ {
		if r.Intn(8) > 0 {
			c[k] = 1 + int64(r.Intn(8000))
			f[k] = int64(r.Intn(int(c[k]) + 1))
		}
	}
	return gpu.Node{Capacity: c, Free: f, Devices: d}
}

// randShape is a task shape whose request fits free (the scorers' precondition).
func randShape(r *rand.Rand, free resource.Tuple) gpu.Shape {
	var q resource.Tuple
	for k := 0; k < schema.Len(); k++ {
		if free[k] > 0 && r.Intn(3) > 0 {
			q[k] = int64(r.Intn(int(free[k]) + 1))
		}
	}
	return gpu.Shape{Request: q, GPU: randDemand(r)}
}

// randFGD is an FGD scorer of 1 to 6 random shapes, reading all dimensions or one.
func randFGD(r *rand.Rand) *gpu.FGD {
	var ws []gpu.WeightedShape
	for i := 0; i <= r.Intn(6); i++ {
		var q resource.Tuple
		for k := 0; k < schema.Len(); k++ {
			q[k] = int64(r.Intn(5000))
		}
		ws = append(ws, gpu.WeightedShape{Shape: gpu.Shape{Request: q, GPU: randDemand(r)}, Weight: 0.01 + r.Float64()*10})
	}
	var dims resource.Mask
	if r.Intn(2) == 0 {
		dims = 1 << r.Intn(schema.Len())
	}
	f, err := gpu.NewFGD(ws, dims)
	if err != nil {
		panic(err)
	}
	return f
}

func randScorers(r *rand.Rand) []gpu.DeviceScorer {
	var dims resource.Mask
	if r.Intn(2) == 0 {
		dims = resource.Mask(r.Intn(4))
	}
	return []gpu.DeviceScorer{gpu.DeviceBestFit{Dims: dims}, gpu.DotProduct{Dims: dims}, gpu.Packing{}, randFGD(r)}
}

// validFor reports why a is not a valid allocation of dem on d: exactly Count distinct
// in-range devices, each Milli, each with that much free; "" when it is.
func validFor(d *gpu.Devices, dem gpu.Demand, a gpu.Allocation) string {
	if len(a.Devices) != dem.Count || (dem.Count > 0 && a.Milli != dem.Milli) {
		return fmt.Sprintf("allocation %v for %v: want %d devices of %d", a, dem, dem.Count, dem.Milli)
	}
	for k, i := range a.Devices {
		switch {
		case i < 0 || i >= d.Len():
			return fmt.Sprintf("allocation %v for %v: device %d of %d", a, dem, i, d.Len())
		case slices.Contains(a.Devices[:k], i):
			return fmt.Sprintf("allocation %v for %v: device %d twice", a, dem, i)
		case d.Free(i) < a.Milli:
			return fmt.Sprintf("allocation %v for %v: device %d has %d free", a, dem, i, d.Free(i))
		}
	}
	if dem.Count > 0 && !dem.Allows(d.Model()) {
		return fmt.Sprintf("allocation %v for %v on model %q", a, dem, d.Model())
	}
	return ""
}

// roundTrip reports why taking a then releasing it does not restore d exactly.
func roundTrip(d *gpu.Devices, a gpu.Allocation) string {
	before := frees(d)
	if err := d.Take(a); err != nil {
		return fmt.Sprintf("take %v of %v: %v", a, before, err)
	}
	for _, i := range a.Devices {
		if d.Free(i) != before[i]-a.Milli {
			return fmt.Sprintf("take %v of %v: device %d has %d free", a, before, i, d.Free(i))
		}
	}
	if err := d.Release(a); err != nil {
		return fmt.Sprintf("release %v: %v", a, err)
	}
	if after := frees(d); !slices.Equal(before, after) {
		return fmt.Sprintf("take and release %v: %v became %v", a, before, after)
	}
	return ""
}

func TestAllocationProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("BestFit: ok iff Fits, a valid allocation, the tightest device or the first whole ones; take+release restores", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		d := randDevices(r)
		dem := randDemand(r)
		if r.Intn(3) == 0 && d.Model() != "" {
			dem.Models = append(dem.Models, d.Model()) // often allowed
		}
		a, ok := d.BestFit(dem)
		if ok != d.Fits(dem) {
			return fmt.Sprintf("%v on %v (%q): BestFit ok %v, Fits %v", dem, frees(&d), d.Model(), ok, !ok)
		}
		if !ok {
			if !a.IsZero() {
				return fmt.Sprintf("%v on %v: not ok but %v", dem, frees(&d), a)
			}
			// Brute force: fewer than Count devices have the share, or the model is not allowed.
			n := 0
			for i := 0; i < d.Len(); i++ {
				if d.Free(i) >= dem.Milli {
					n++
				}
			}
			if n >= dem.Count && dem.Allows(d.Model()) {
				return fmt.Sprintf("%v on %v (%q): refused, but %d devices hold it", dem, frees(&d), d.Model(), n)
			}
			return ""
		}
		if msg := validFor(&d, dem, a); msg != "" {
			return msg
		}
		switch {
		case dem.Count == 1:
			for i := 0; i < d.Len(); i++ {
				f, got := d.Free(i), d.Free(a.Devices[0])
				if f >= dem.Milli && (f < got || (f == got && i < a.Devices[0])) {
					return fmt.Sprintf("%v on %v: device %v, but device %d is tighter or earlier", dem, frees(&d), a.Devices, i)
				}
			}
		case dem.Count > 1:
			var want []int
			for i := 0; i < d.Len() && len(want) < dem.Count; i++ {
				if d.Free(i) == gpu.Milli {
					want = append(want, i)
				}
			}
			if !slices.Equal(want, a.Devices) {
				return fmt.Sprintf("%v on %v: devices %v, want the first free ones %v", dem, frees(&d), a.Devices, want)
			}
		}
		return roundTrip(&d, a)
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))

	var placed struct{ share, whole, refused int }
	props.Property("every scorer: ok iff Fits, a valid allocation, a score in [0, 1], the devices unchanged", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		d := randDevices(r)
		n := randNode(r, &d)
		s := randShape(r, n.Free)
		if r.Intn(3) == 0 && d.Model() != "" && s.GPU.Count > 0 {
			s.GPU.Models = append(s.GPU.Models, d.Model())
		}
		fits := d.Fits(s.GPU)
		switch {
		case !fits:
			placed.refused++
		case s.GPU.Shared():
			placed.share++
		case s.GPU.Count > 0:
			placed.whole++
		}
		for _, sc := range randScorers(r) {
			before := d.Clone()
			x, a, ok := sc.Score(n, s)
			if d.Model() != before.Model() || !slices.Equal(frees(&d), frees(&before)) {
				return fmt.Sprintf("%T scoring %v changed the devices %v to %v", sc, s.GPU, frees(&before), frees(&d))
			}
			if ok != fits {
				return fmt.Sprintf("%T: %v on %v (%q): ok %v, Fits %v", sc, s.GPU, frees(&d), d.Model(), ok, fits)
			}
			if !ok {
				if !a.IsZero() || x != 0 {
					return fmt.Sprintf("%T: %v on %v: not ok but %v, %v", sc, s.GPU, frees(&d), x, a)
				}
				continue
			}
			if !(x >= 0 && x <= 1) {
				return fmt.Sprintf("%T: %v on %v, node %+v, request %v: score %v", sc, s.GPU, frees(&d), n, s.Request, x)
			}
			if msg := validFor(&d, s.GPU, a); msg != "" {
				return fmt.Sprintf("%T: %s", sc, msg)
			}
			if msg := roundTrip(&d, a); msg != "" {
				return fmt.Sprintf("%T: %s", sc, msg)
			}
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))

	props.Property("take of any allocation: accepted iff well-formed with room, all or nothing; release restores", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		d := randDevices(r)
		if d.Len() == 0 {
			return ""
		}
		a := gpu.Allocation{Milli: int64(r.Intn(gpu.Milli+2)) - int64(r.Intn(2))}
		for k := r.Intn(d.Len() + 2); k > 0; k-- {
			a.Devices = append(a.Devices, r.Intn(d.Len()+1)-r.Intn(2))
		}
		before := frees(&d)
		want := true // an allocation Take must accept: no device, or distinct in-range devices with a share in (0, 1000] free
		for k, i := range a.Devices {
			if i < 0 || i >= len(before) || slices.Contains(a.Devices[:k], i) || a.Milli <= 0 || a.Milli > gpu.Milli || before[i] < a.Milli {
				want = false
			}
		}
		if err := d.Take(a); err != nil {
			if want {
				return fmt.Sprintf("take %v of %v refused: %v", a, before, err)
			}
			if after := frees(&d); !slices.Equal(before, after) {
				return fmt.Sprintf("refused take %v (%v) changed %v to %v", a, err, before, after)
			}
			return ""
		}
		if !want {
			return fmt.Sprintf("take %v of %v accepted", a, before)
		}
		if err := d.Release(a); err != nil {
			return fmt.Sprintf("release %v after its take: %v", a, err)
		}
		if after := frees(&d); !slices.Equal(before, after) {
			return fmt.Sprintf("take and release %v: %v became %v", a, before, after)
		}
		return ""
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	t.Logf("scorers: %d shares placed, %d whole placed, %d refused", placed.share, placed.whole, placed.refused)
	if min(placed.share, placed.whole, placed.refused) < 200 {
		t.Errorf("scorers: %d shares placed, %d whole placed, %d refused: too few to mean much", placed.share, placed.whole, placed.refused)
	}
}
