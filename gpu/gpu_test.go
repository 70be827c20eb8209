package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
)

// schema is the small schema of the scorer tests: CPU in millicores, memory in MiB.
var schema = resource.MustSchema(resource.CPU, resource.Memory)

// devices returns devices of model with the given free shares: New, then Take on
// every device not wholly free.
func devices(t testing.TB, model string, free ...int64) gpu.Devices {
	t.Helper()
	d, err := gpu.New(gpu.Spec{Model: model, Count: len(free)})
	require.NoError(t, err)
	for i, f := range free {
		if f < gpu.Milli {
			require.NoError(t, d.Take(gpu.Allocation{Devices: []int{i}, Milli: gpu.Milli - f}))
		}
	}
	return d
}

// frees lists d's free shares, device by device.
func frees(d *gpu.Devices) []int64 {
	out := make([]int64, d.Len())
	for i := range out {
		out[i] = d.Free(i)
	}
	return out
}

// known is the node most scorer tests use: four V100 devices with [1000, 300, 600,
// 1000] free (2900 in all, capacity 4000), a capacity of <4000 mCPU, 16000 MiB> with
// <2000, 8000> free.
func known(t testing.TB) (gpu.Devices, gpu.Node) {
	d := devices(t, "V100", 1000, 300, 600, 1000)
	return d, gpu.Node{Capacity: schema.MustTuple(4000, 16000), Free: schema.MustTuple(2000, 8000)}
}

// request is the CPU and memory every known-answer task asks for: <1000, 4000>.
var request = schema.MustTuple(1000, 4000)

func TestSpecValidate(t *testing.T) {
	for _, c := range []struct {
		spec gpu.Spec
		ok   bool
	}{
		{gpu.Spec{}, true},
		{gpu.Spec{Model: "T4", Count: 1}, true},
		{gpu.Spec{Count: gpu.MaxDevices}, true},
		{gpu.Spec{Count: -1}, false},
		{gpu.Spec{Model: "T4", Count: gpu.MaxDevices + 1}, false},
	} {
		err := c.spec.Validate()
		if c.ok {
			assert.NoError(t, err, "%+v", c.spec)
		} else {
			assert.ErrorIs(t, err, gpu.ErrInvalid, "%+v", c.spec)
		}
	}
}

func TestDemandValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		d    gpu.Demand
		ok   bool
	}{
		{"zero", gpu.Demand{}, true},
		{"smallest share", gpu.Share(1), true},
		{"largest share below whole", gpu.Share(999), true},
		{"one whole device as a share", gpu.Share(gpu.Milli), true},
		{"one whole device", gpu.Whole(1), true},
		{"two whole devices", gpu.Whole(2), true},
		{"most devices", gpu.Whole(gpu.MaxDevices), true},
		{"share with models", gpu.Demand{Count: 1, Milli: 500, Models: []string{"T4", "V100M32"}}, true},
		{"whole with a repeated model", gpu.Demand{Count: 2, Milli: gpu.Milli, Models: []string{"T4", "T4"}}, true},
		{"negative count", gpu.Demand{Count: -1, Milli: gpu.Milli}, false},
		{"too many devices", gpu.Whole(gpu.MaxDevices + 1), false},
		{"no device but a share", gpu.Demand{Milli: 5}, false},
		{"no device but a negative share", gpu.Demand{Milli: -5}, false},
		{"no device but models", gpu.Demand{Models: []string{"T4"}}, false},
		{"zero share", gpu.Share(0), false},
		{"negative share", gpu.Share(-1), false},
		{"share beyond whole", gpu.Share(gpu.Milli + 1), false},
		{"share of two devices", gpu.Demand{Count: 2, Milli: 500}, false},
		{"almost whole of two devices", gpu.Demand{Count: 2, Milli: 999}, false},
		{"more than whole of two devices", gpu.Demand{Count: 2, Milli: gpu.Milli + 1}, false},
		{"empty model name", gpu.Demand{Count: 1, Milli: 100, Models: []string{"T4", ""}}, false},
		{"only an empty model name", gpu.Demand{Count: 1, Milli: 100, Models: []string{""}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.d.Validate()
			if c.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, gpu.ErrInvalid), "%v does not wrap ErrInvalid", err)
			assert.False(t, errors.Is(err, gpu.ErrNoRoom), "%v wraps ErrNoRoom", err)
		})
	}
}

func TestDemandHelpers(t *testing.T) {
	assert.Equal(t, gpu.Demand{Count: 1, Milli: 300}, gpu.Share(300))
	assert.Equal(t, gpu.Demand{Count: 3, Milli: gpu.Milli}, gpu.Whole(3))

	for _, c := range []struct {
		d                      gpu.Demand
		zero, shared           bool
		total                  int64
		str                    string
		allowsV100, allowsNone bool // Allows("V100"), Allows("") (a node of unknown model)
	}{
		{gpu.Demand{}, true, false, 0, "no GPU", true, true},
		{gpu.Share(460), false, true, 460, "0.46 GPU", true, true},
		{gpu.Share(5), false, true, 5, "0.005 GPU", true, true},
		{gpu.Share(999), false, true, 999, "0.999 GPU", true, true},
		{gpu.Share(gpu.Milli), false, false, 1000, "1 GPU", true, true},
		{gpu.Whole(1), false, false, 1000, "1 GPU", true, true},
		{gpu.Whole(3), false, false, 3000, "3 GPU", true, true},
		{gpu.Demand{Count: 2, Milli: gpu.Milli, Models: []string{"T4", "P100"}}, false, false, 2000, "2 GPU (T4|P100)", false, false},
		{gpu.Demand{Count: 1, Milli: 250, Models: []string{"V100"}}, false, true, 250, "0.25 GPU (V100)", true, false},
	} {
		assert.Equal(t, c.zero, c.d.IsZero(), "%+v IsZero", c.d)
		assert.Equal(t, c.shared, c.d.Shared(), "%+v Shared", c.d)
		assert.Equal(t, c.total, c.d.Total(), "%+v Total", c.d)
		assert.Equal(t, c.str, c.d.String(), "%+v String", c.d)
		assert.Equal(t, c.allowsV100, c.d.Allows("V100"), "%+v Allows(V100)", c.d)
		assert.Equal(t, c.allowsNone, c.d.Allows(""), "%+v Allows(\"\")", c.d)
	}
	two := gpu.Demand{Count: 1, Milli: 100, Models: []string{"T4", "P100"}}
	assert.True(t, two.Allows("T4"))
	assert.True(t, two.Allows("P100"))
	assert.False(t, two.Allows("t4"), "model names are case-sensitive")
}

func TestAllocationClone(t *testing.T) {
	assert.True(t, gpu.Allocation{}.IsZero())
	assert.True(t, gpu.Allocation{Devices: []int{}, Milli: 5}.IsZero(), "no device is zero whatever the share")
	assert.Equal(t, gpu.Allocation{}, gpu.Allocation{Devices: []int{}, Milli: 5}.Clone(), "a zero allocation clones to the zero value")
	a := gpu.Allocation{Devices: []int{2, 0}, Milli: gpu.Milli}
	c := a.Clone()
	assert.Equal(t, a, c)
	c.Devices[0] = 7
	assert.Equal(t, []int{2, 0}, a.Devices, "the clone shares no array with the original")
}

func TestNew(t *testing.T) {
	for _, n := range []int{-1, gpu.MaxDevices + 1} {
		_, err := gpu.New(gpu.Spec{Model: "T4", Count: n})
		assert.ErrorIs(t, err, gpu.ErrInvalid, "count %d", n)
	}
	d, err := gpu.New(gpu.Spec{})
	require.NoError(t, err)
	assert.Equal(t, 0, d.Len())
	assert.Equal(t, int64(0), d.Capacity())
	assert.Equal(t, int64(0), d.FreeTotal())
	assert.Equal(t, 0, d.FullyFree())
	assert.Equal(t, "", d.Model())

	d, err = gpu.New(gpu.Spec{Model: "A100", Count: gpu.MaxDevices})
	require.NoError(t, err)
	assert.Equal(t, "A100", d.Model())
	assert.Equal(t, gpu.MaxDevices, d.Len())
	assert.Equal(t, int64(gpu.MaxDevices*gpu.Milli), d.Capacity())
	assert.Equal(t, d.Capacity(), d.FreeTotal())
	assert.Equal(t, gpu.MaxDevices, d.FullyFree())
	for i := 0; i < d.Len(); i++ {
		assert.Equal(t, int64(gpu.Milli), d.Free(i))
	}
}

func TestDevicesAccessors(t *testing.T) {
	d, _ := known(t)
	assert.Equal(t, "V100", d.Model())
	assert.Equal(t, 4, d.Len())
	assert.Equal(t, []int64{1000, 300, 600, 1000}, frees(&d))
	assert.Equal(t, int64(2900), d.FreeTotal())
	assert.Equal(t, int64(4000), d.Capacity())
	assert.Equal(t, 2, d.FullyFree())
}

func TestFits(t *testing.T) {
	d, _ := known(t)
	none := devices(t, "V100")
	eight := devices(t, "T4", 600, 600, 600, 600, 600, 600, 600, 600)
	for _, c := range []struct {
		name string
		d    *gpu.Devices
		dem  gpu.Demand
		fits bool
	}{
		{"zero demand", &d, gpu.Demand{}, true},
		{"zero demand on no device", &none, gpu.Demand{}, true},
		{"share on no device", &none, gpu.Share(1), false},
		{"share as large as the tightest device", &d, gpu.Share(300), true},
		{"share on the 600", &d, gpu.Share(600), true},
		{"share of a whole device", &d, gpu.Share(gpu.Milli), true},
		{"two whole of two free", &d, gpu.Whole(2), true},
		{"three whole of two free", &d, gpu.Whole(3), false},
		{"share of a model not the devices'", &d, gpu.Demand{Count: 1, Milli: 100, Models: []string{"T4"}}, false},
		{"share of one of the models", &d, gpu.Demand{Count: 1, Milli: 100, Models: []string{"T4", "V100"}}, true},
		{"8 × 0.6 free holds 0.6", &eight, gpu.Share(600), true},
		{"8 × 0.6 free does not hold 0.601", &eight, gpu.Share(601), false},
		{"8 × 0.6 free (4.8 in all) does not hold one whole", &eight, gpu.Whole(1), false},
	} {
		assert.Equal(t, c.fits, c.d.Fits(c.dem), c.name)
	}
}

func TestBestFit(t *testing.T) {
	d, _ := known(t) // free [1000, 300, 600, 1000]
	none := devices(t, "")
	ties := devices(t, "", 700, 400, 400, 700)
	for _, c := range []struct {
		name string
		d    *gpu.Devices
		dem  gpu.Demand
		want []int // nil: does not fit
	}{
		{"share of the tightest device's whole free", &d, gpu.Share(300), []int{1}},
		{"share below the tightest", &d, gpu.Share(1), []int{1}},
		{"share just above the tightest", &d, gpu.Share(301), []int{2}},
		{"share of the 600", &d, gpu.Share(600), []int{2}},
		{"share needing a free device: ties to the lowest", &d, gpu.Share(601), []int{0}},
		{"whole share", &d, gpu.Share(gpu.Milli), []int{0}},
		{"one whole", &d, gpu.Whole(1), []int{0}},
		{"two whole: the first free ones", &d, gpu.Whole(2), []int{0, 3}},
		{"three whole do not fit", &d, gpu.Whole(3), nil},
		{"model refused", &d, gpu.Demand{Count: 1, Milli: 10, Models: []string{"P100"}}, nil},
		{"no device", &none, gpu.Share(10), nil},
		{"tie between equal devices: lowest", &ties, gpu.Share(400), []int{1}},
		{"tie above them: lowest", &ties, gpu.Share(401), []int{0}},
	} {
		a, ok := c.d.BestFit(c.dem)
		if c.want == nil {
			assert.False(t, ok, c.name)
			assert.True(t, a.IsZero(), "%s: %v", c.name, a)
			continue
		}
		assert.True(t, ok, c.name)
		assert.Equal(t, gpu.Allocation{Devices: c.want, Milli: c.dem.Milli}, a, c.name)
	}
	a, ok := d.BestFit(gpu.Demand{})
	assert.True(t, ok, "the zero demand always fits")
	assert.Equal(t, gpu.Allocation{}, a)
	a, ok = none.BestFit(gpu.Demand{})
	assert.True(t, ok, "the zero demand fits no device too")
	assert.Equal(t, gpu.Allocation{}, a)
	assert.Equal(t, []int64{1000, 300, 600, 1000}, frees(&d), "BestFit takes nothing")
}

func TestTakeRelease(t *testing.T) {
	d, _ := known(t) // [1000, 300, 600, 1000]
	start := frees(&d)

	require.NoError(t, d.Take(gpu.Allocation{Devices: []int{1}, Milli: 300}))
	assert.Equal(t, []int64{1000, 0, 600, 1000}, frees(&d))
	require.NoError(t, d.Take(gpu.Allocation{Devices: []int{3, 0}, Milli: gpu.Milli}))
	assert.Equal(t, []int64{0, 0, 600, 0}, frees(&d))
	assert.Equal(t, 0, d.FullyFree())
	require.NoError(t, d.Release(gpu.Allocation{Devices: []int{0, 3}, Milli: gpu.Milli}))
	require.NoError(t, d.Release(gpu.Allocation{Devices: []int{1}, Milli: 300}))
	assert.Equal(t, start, frees(&d))

	require.NoError(t, d.Take(gpu.Allocation{}), "the zero allocation takes nothing")
	require.NoError(t, d.Release(gpu.Allocation{}), "the zero allocation returns nothing")
	require.NoError(t, d.Take(gpu.Allocation{Devices: []int{}, Milli: -3}), "no device is the zero allocation")
	assert.Equal(t, start, frees(&d))

	malformed := []gpu.Allocation{
		{Devices: []int{4}, Milli: 100},
		{Devices: []int{-1}, Milli: 100},
		{Devices: []int{0, 2, 0}, Milli: 100},
		{Devices: []int{0}, Milli: 0},
		{Devices: []int{0}, Milli: -5},
		{Devices: []int{0}, Milli: gpu.Milli + 1},
		{Devices: []int{0, 1, 2, 3, 0}, Milli: 1},
	}
	for _, a := range malformed {
		assert.ErrorIs(t, d.Take(a), gpu.ErrInvalid, "take %v", a)
		assert.Equal(t, start, frees(&d), "a refused take of %v changes nothing", a)
		assert.ErrorIs(t, d.Release(a), gpu.ErrInvalid, "release %v", a)
		assert.Equal(t, start, frees(&d), "a refused release of %v changes nothing", a)
	}

	// Device 0 has room for 400, device 1 has not: neither changes.
	err := d.Take(gpu.Allocation{Devices: []int{0, 1}, Milli: 400})
	assert.ErrorIs(t, err, gpu.ErrNoRoom)
	assert.False(t, errors.Is(err, gpu.ErrInvalid), "not enough free is not malformed: %v", err)
	assert.Equal(t, start, frees(&d))
	assert.ErrorIs(t, d.Take(gpu.Allocation{Devices: []int{2}, Milli: 601}), gpu.ErrNoRoom)
	assert.Equal(t, start, frees(&d))

	// Device 1 could take 100 back, device 0 is whole: neither changes.
	assert.ErrorIs(t, d.Release(gpu.Allocation{Devices: []int{1, 0}, Milli: 100}), gpu.ErrInvalid)
	assert.Equal(t, start, frees(&d))
	assert.ErrorIs(t, d.Release(gpu.Allocation{Devices: []int{1}, Milli: 701}), gpu.ErrInvalid, "beyond whole by 1")
	assert.Equal(t, start, frees(&d))
	require.NoError(t, d.Release(gpu.Allocation{Devices: []int{1}, Milli: 700}), "exactly whole again")
	assert.Equal(t, []int64{1000, 1000, 600, 1000}, frees(&d))
}

func TestDevicesClone(t *testing.T) {
	d, _ := known(t)
	c := d.Clone()
	assert.Equal(t, d.Model(), c.Model())
	assert.Equal(t, frees(&d), frees(&c))
	require.NoError(t, c.Take(gpu.Allocation{Devices: []int{0}, Milli: 1000}))
	assert.Equal(t, []int64{1000, 300, 600, 1000}, frees(&d), "taking from the clone leaves the original")
	require.NoError(t, d.Take(gpu.Allocation{Devices: []int{2}, Milli: 600}))
	assert.Equal(t, []int64{0, 300, 600, 1000}, frees(&c), "taking from the original leaves the clone")
}

// shape is the known-answer task: <1000 mCPU, 4000 MiB> and dem.
func shape(dem gpu.Demand) gpu.Shape { return gpu.Shape{Request: request, GPU: dem} }

func TestBestFitScorer(t *testing.T) {
	d, n := known(t)
	n.Devices = &d
	// CPU (2000 − 1000)/4000 = 0.25, memory (8000 − 4000)/16000 = 0.25,
	// GPU (2900 − 300)/4000 = 0.65: 1 − (0.25 + 0.25 + 0.65)/3 = 1 − 1.15/3.
	x, a, ok := gpu.DeviceBestFit{}.Score(n, shape(gpu.Share(300)))
	require.True(t, ok)
	assert.InDelta(t, 1-1.15/3, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{1}, Milli: 300}, a)
	// Two whole: GPU (2900 − 2000)/4000 = 0.225: 1 − 0.725/3.
	x, a, ok = gpu.DeviceBestFit{}.Score(n, shape(gpu.Whole(2)))
	require.True(t, ok)
	assert.InDelta(t, 1-0.725/3, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{0, 3}, Milli: gpu.Milli}, a)
	// CPU only: 1 − (0.25 + 0.65)/2.
	x, _, ok = gpu.DeviceBestFit{Dims: 1 << 0}.Score(n, shape(gpu.Share(300)))
	require.True(t, ok)
	assert.InDelta(t, 1-0.9/2, x, 1e-12)
	// No GPU demand: GPU 2900/4000 = 0.725: 1 − 1.225/3; no device chosen.
	x, a, ok = gpu.DeviceBestFit{}.Score(n, shape(gpu.Demand{}))
	require.True(t, ok)
	assert.InDelta(t, 1-1.225/3, x, 1e-12)
	assert.True(t, a.IsZero())
	// A node without devices: its GPU term is 0, 1 − 0.5/3, so a task without GPU
	// demand prefers it to the node with devices (1 − 1.225/3).
	none := devices(t, "")
	x, _, ok = gpu.DeviceBestFit{}.Score(gpu.Node{Capacity: n.Capacity, Free: n.Free, Devices: &none}, shape(gpu.Demand{}))
	require.True(t, ok)
	assert.InDelta(t, 1-0.5/3, x, 1e-12)
	// A tighter node scores higher.
	tight := devices(t, "V100", 300, 300, 300, 300)
	y, _, ok := gpu.DeviceBestFit{}.Score(gpu.Node{Capacity: n.Capacity, Free: n.Free, Devices: &tight}, shape(gpu.Share(300)))
	require.True(t, ok)
	x, _, _ = gpu.DeviceBestFit{}.Score(n, shape(gpu.Share(300)))
	assert.Greater(t, y, x)
	// Not fitting.
	x, a, ok = gpu.DeviceBestFit{}.Score(n, shape(gpu.Whole(3)))
	assert.False(t, ok)
	assert.Zero(t, x)
	assert.True(t, a.IsZero())
}

func TestDotProductScorer(t *testing.T) {
	d, n := known(t)
	n.Devices = &d
	// Base: CPU (1000/4000)(2000/4000) = 0.125, memory (4000/16000)(8000/16000) = 0.125.
	// A share of 300 on each device: 0.3 × free/1000 — device 0: 0.3, device 1: 0.09,
	// device 2: 0.18, device 3 as device 0 — so device 1, 1 − (0.25 + 0.09)/3.
	x, a, ok := gpu.DotProduct{}.Score(n, shape(gpu.Share(300)))
	require.True(t, ok)
	assert.InDelta(t, 1-0.34/3, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{1}, Milli: 300}, a)
	// A share of 500 fits devices 0, 2 and 3: 0.5 × 1 = 0.5, 0.5 × 0.6 = 0.3: device 2.
	x, a, ok = gpu.DotProduct{}.Score(n, shape(gpu.Share(500)))
	require.True(t, ok)
	assert.InDelta(t, 1-0.55/3, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{2}, Milli: 500}, a)
	// Two whole: (2000/4000)(2900/4000) = 0.3625, devices by best fit.
	x, a, ok = gpu.DotProduct{}.Score(n, shape(gpu.Whole(2)))
	require.True(t, ok)
	assert.InDelta(t, 1-0.6125/3, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{0, 3}, Milli: gpu.Milli}, a)
	// Memory only: 1 − (0.125 + 0.09)/2.
	x, _, ok = gpu.DotProduct{Dims: 1 << 1}.Score(n, shape(gpu.Share(300)))
	require.True(t, ok)
	assert.InDelta(t, 1-0.215/2, x, 1e-12)
	// No GPU demand: the GPU term is 0: 1 − 0.25/3.
	x, a, ok = gpu.DotProduct{}.Score(n, shape(gpu.Demand{}))
	require.True(t, ok)
	assert.InDelta(t, 1-0.25/3, x, 1e-12)
	assert.True(t, a.IsZero())
	// No devices: the GPU term is 0 there too, 1 − 0.25/3: the same score, so a task
	// without GPU demand is not steered onto (nor off) GPU nodes.
	none := devices(t, "")
	x, _, ok = gpu.DotProduct{}.Score(gpu.Node{Capacity: n.Capacity, Free: n.Free, Devices: &none}, shape(gpu.Demand{}))
	require.True(t, ok)
	assert.InDelta(t, 1-0.25/3, x, 1e-12)
	// Model refused.
	_, a, ok = gpu.DotProduct{}.Score(n, shape(gpu.Demand{Count: 1, Milli: 1, Models: []string{"T4"}}))
	assert.False(t, ok)
	assert.True(t, a.IsZero())
}

func TestPackingScorer(t *testing.T) {
	d, n := known(t) // [1000, 300, 600, 1000]: partly used
	n.Devices = &d
	for _, c := range []struct {
		dem  gpu.Demand
		want float64
		devs []int
	}{
		// On shared devices alone: 1 − (free × 100/1000)/10 /100, the least free first.
		{gpu.Share(300), (100 - 30/10) / 100.0, []int{1}}, // device 1: 300 free → 0.97
		{gpu.Share(250), 0.97, []int{1}},
		{gpu.Share(500), (100 - 60/10) / 100.0, []int{2}}, // device 2: 600 free → 0.94
		// Taking fully free devices of a used node: (50 − fresh)/100.
		{gpu.Share(700), 0.49, []int{0}},
		{gpu.Whole(1), 0.49, []int{0}},
		{gpu.Whole(2), 0.48, []int{0, 3}},
	} {
		x, a, ok := gpu.Packing{}.Score(n, shape(c.dem))
		require.True(t, ok, "%v", c.dem)
		assert.InDelta(t, c.want, x, 1e-12, "%v", c.dem)
		assert.Equal(t, gpu.Allocation{Devices: c.devs, Milli: c.dem.Milli}, a, "%v", c.dem)
	}
	// An empty node: (33 − devices)/100.
	for _, c := range []struct {
		count int
		want  float64
	}{{1, 0.32}, {4, 0.29}, {8, 0.25}} {
		e, err := gpu.New(gpu.Spec{Count: c.count})
		require.NoError(t, err)
		x, a, ok := gpu.Packing{}.Score(gpu.Node{Devices: &e}, shape(gpu.Share(300)))
		require.True(t, ok)
		assert.InDelta(t, c.want, x, 1e-12, "%d free devices", c.count)
		assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: 300}, a)
	}
	// No GPU demand: 0, no device.
	x, a, ok := gpu.Packing{}.Score(n, shape(gpu.Demand{}))
	assert.True(t, ok)
	assert.Zero(t, x)
	assert.True(t, a.IsZero())
	// Not fitting.
	_, _, ok = gpu.Packing{}.Score(n, shape(gpu.Whole(3)))
	assert.False(t, ok)
}

// TestPackingEmptyNodeTier checks the tiers Packing's doc promises for a node whose
// devices are all free: a score in [0, 1/3], less the more devices the node has, so
// below any partly used node's ([1/3, 0.5]), up to gpu.MaxDevices (the study's
// max(33 − n, n)/100 would grow again from 18 devices and leave the tier from 34).
func TestPackingEmptyNodeTier(t *testing.T) {
	prev := math.Inf(1)
	var bad []string
	for count := 1; count <= gpu.MaxDevices; count++ {
		e, err := gpu.New(gpu.Spec{Count: count})
		require.NoError(t, err)
		x, _, ok := gpu.Packing{}.Score(gpu.Node{Devices: &e}, shape(gpu.Share(300)))
		require.True(t, ok)
		if x > 1.0/3 || x > prev {
			bad = append(bad, fmt.Sprintf("%d devices: %v", count, x))
		}
		prev = x
	}
	assert.Empty(t, bad, "empty nodes scoring above 1/3 or above an empty node with fewer devices")
}

// ws is a weighted shape.
func ws(s gpu.Shape, w float64) gpu.WeightedShape { return gpu.WeightedShape{Shape: s, Weight: w} }

// workload is the known FGD workload: a share of 500 three times as often as one
// whole device.
func workload(t testing.TB) *gpu.FGD {
	f, err := gpu.NewFGD([]gpu.WeightedShape{
		{Shape: gpu.Shape{GPU: gpu.Share(500)}, Weight: 3},
		{Shape: gpu.Shape{GPU: gpu.Whole(1)}, Weight: 1},
	}, 0)
	require.NoError(t, err)
	return f
}

func TestFGDFrag(t *testing.T) {
	f := workload(t)
	shapes := f.Shapes()
	require.Len(t, shapes, 2)
	assert.InDelta(t, 0.75, shapes[0].Weight, 1e-12, "weights normalised")
	assert.InDelta(t, 0.25, shapes[1].Weight, 1e-12)

	d, n := known(t) // [1000, 300, 600, 1000]
	n.Devices = &d
	// Share of 500: devices 0, 2, 3 hold it, device 1's 300 cannot: 300.
	// One whole: devices 0 and 3 hold it; 300 + 600 cannot: 900.
	// 0.75 × 300 + 0.25 × 900 = 450.
	assert.InDelta(t, 450, f.Frag(n), 1e-9)

	// All free: every shape fits and no device is short: 0.
	e := devices(t, "V100", 1000, 1000)
	assert.InDelta(t, 0, f.Frag(gpu.Node{Free: n.Free, Devices: &e}), 1e-9)
	// Nothing free: 0, whatever the shapes.
	full := devices(t, "V100", 0, 0)
	assert.InDelta(t, 0, f.Frag(gpu.Node{Free: n.Free, Devices: &full}), 1e-9)
	// [400, 400]: the share fits no device (800, all free), nor does the whole (800).
	small := devices(t, "V100", 400, 400)
	assert.InDelta(t, 800, f.Frag(gpu.Node{Free: n.Free, Devices: &small}), 1e-9)
	// [1000, 500, 0]: the share: 0 (500 holds it); the whole: 500. 0.25 × 500 = 125.
	mixed := devices(t, "V100", 1000, 500, 0)
	assert.InDelta(t, 125, f.Frag(gpu.Node{Free: n.Free, Devices: &mixed}), 1e-9)

	// A shape the node cannot host counts all 2900 free: a CPU request beyond the
	// free 2000, a model the node has not, more whole devices than are free, no GPU.
	for _, c := range []struct {
		name  string
		other gpu.Shape
		want  float64 // 0.5 × 300 (the share of 500 with a CPU request that fits) + 0.5 × other's
	}{
		{"CPU beyond free", gpu.Shape{Request: schema.MustTuple(3000, 0), GPU: gpu.Share(500)}, 0.5*300 + 0.5*2900},
		{"other model", gpu.Shape{GPU: gpu.Demand{Count: 1, Milli: 500, Models: []string{"T4"}}}, 0.5*300 + 0.5*2900},
		{"allowed model", gpu.Shape{GPU: gpu.Demand{Count: 1, Milli: 500, Models: []string{"T4", "V100"}}}, 0.5*300 + 0.5*300},
		{"three whole of two", gpu.Shape{GPU: gpu.Whole(3)}, 0.5*300 + 0.5*2900},
		{"two whole of two", gpu.Shape{GPU: gpu.Whole(2)}, 0.5*300 + 0.5*900},
		{"no GPU", gpu.Shape{Request: schema.MustTuple(100, 0)}, 0.5*300 + 0.5*2900},
	} {
		g, err := gpu.NewFGD([]gpu.WeightedShape{
			{Shape: gpu.Shape{Request: schema.MustTuple(1000, 0), GPU: gpu.Share(500)}, Weight: 1},
			{Shape: c.other, Weight: 1},
		}, 0)
		require.NoError(t, err, c.name)
		assert.InDelta(t, c.want, g.Frag(n), 1e-9, c.name)
	}
	// Read on memory only, the CPU request beyond free is not seen: 0.5 × 300 + 0.5 × 300.
	g, err := gpu.NewFGD([]gpu.WeightedShape{
		{Shape: gpu.Shape{Request: schema.MustTuple(1000, 0), GPU: gpu.Share(500)}, Weight: 1},
		{Shape: gpu.Shape{Request: schema.MustTuple(3000, 0), GPU: gpu.Share(500)}, Weight: 1},
	}, 1<<1)
	require.NoError(t, err)
	assert.InDelta(t, 300, g.Frag(n), 1e-9)
	// Memory beyond free is seen on memory: 0.5 × 300 + 0.5 × 2900.
	g, err = gpu.NewFGD([]gpu.WeightedShape{
		{Shape: gpu.Shape{GPU: gpu.Share(500)}, Weight: 1},
		{Shape: gpu.Shape{Request: schema.MustTuple(0, 9000), GPU: gpu.Share(500)}, Weight: 1},
	}, 1<<1)
	require.NoError(t, err)
	assert.InDelta(t, 1600, g.Frag(n), 1e-9)
}

func TestFGDScore(t *testing.T) {
	f := workload(t)
	d, n := known(t) // [1000, 300, 600, 1000], Frag 450 (TestFGDFrag)
	n.Devices = &d
	n.Free, n.Capacity = resource.Tuple{}, resource.Tuple{} // the workload reads no dimension
	// A share of 300 on
	//   device 0 → [700, 300, 600, 1000]: share 300, whole 700+300+600 = 1600: 225 + 400 = 625;
	//   device 1 → [1000, 0, 600, 1000]: share 0, whole 600: 150;
	//   device 2 → [1000, 300, 300, 1000]: share 600, whole 600: 450 + 150 = 600;
	//   device 3 as device 0.
	// Device 1 removes 450 − 150 = 300: sigmoid(0.3).
	x, a, ok := f.Score(n, gpu.Shape{GPU: gpu.Share(300)})
	require.True(t, ok)
	assert.InDelta(t, 1/(1+math.Exp(-0.3)), x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{1}, Milli: 300}, a)
	// One whole: device 0 (best fit) → [0, 300, 600, 1000]: share 300, whole 900:
	// 225 + 225 = 450, no change: 0.5.
	x, a, ok = f.Score(n, gpu.Shape{GPU: gpu.Whole(1)})
	require.True(t, ok)
	assert.InDelta(t, 0.5, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{0}, Milli: gpu.Milli}, a)
	// Two whole → [0, 300, 600, 0]: the share 300, the whole 900 all (none free): 225 + 225.
	x, a, ok = f.Score(n, gpu.Shape{GPU: gpu.Whole(2)})
	require.True(t, ok)
	assert.InDelta(t, 0.5, x, 1e-12)
	assert.Equal(t, gpu.Allocation{Devices: []int{0, 3}, Milli: gpu.Milli}, a)
	// Not fitting.
	x, a, ok = f.Score(n, gpu.Shape{GPU: gpu.Whole(3)})
	assert.False(t, ok)
	assert.Zero(t, x)
	assert.True(t, a.IsZero())
}

// FGD takes the device that leaves less fragmentation, where best fit takes the
// tightest: with shares of 500 expected, a share of 100 goes on the device with 600
// free (500 left, still useful) rather than the one with 550 (450 left, wasted).
func TestFGDPrefersLessFragmentation(t *testing.T) {
	f, err := gpu.NewFGD([]gpu.WeightedShape{{Shape: gpu.Shape{GPU: gpu.Share(500)}, Weight: 1}}, 0)
	require.NoError(t, err)
	d := devices(t, "V100", 600, 550, 1000)
	n := gpu.Node{Devices: &d}
	best, ok := d.BestFit(gpu.Share(100))
	require.True(t, ok)
	assert.Equal(t, []int{1}, best.Devices, "best fit takes the tightest")
	// Frag before: every device holds 500: 0. After device 0: [500, 550, 1000]: 0;
	// device 1: [600, 450, 1000]: 450; device 2: [600, 550, 900]: 0 (a tie, device 0
	// first). sigmoid(0) = 0.5.
	x, a, ok := f.Score(n, gpu.Shape{GPU: gpu.Share(100)})
	require.True(t, ok)
	assert.Equal(t, []int{0}, a.Devices)
	assert.InDelta(t, 0.5, x, 1e-12)

	// Between two nodes, the one whose fragmentation the task reduces: a share of 500
	// on [1000, 500] fills the 500 (frag 0.25 × 500 = 125 → 0) and scores above [1000,
	// 1000] (0 → 125).
	w := workload(t)
	partly := devices(t, "V100", 1000, 500)
	empty := devices(t, "V100", 1000, 1000)
	xp, ap, ok := w.Score(gpu.Node{Devices: &partly}, gpu.Shape{GPU: gpu.Share(500)})
	require.True(t, ok)
	xe, ae, ok := w.Score(gpu.Node{Devices: &empty}, gpu.Shape{GPU: gpu.Share(500)})
	require.True(t, ok)
	assert.InDelta(t, 1/(1+math.Exp(-0.125)), xp, 1e-12)
	assert.InDelta(t, 1/(1+math.Exp(0.125)), xe, 1e-12)
	assert.Equal(t, []int{1}, ap.Devices)
	assert.Equal(t, []int{0}, ae.Devices)
}

func TestNewFGDRejects(t *testing.T) {
	ok := gpu.WeightedShape{Shape: gpu.Shape{GPU: gpu.Share(100)}, Weight: 1}
	with := func(w float64) gpu.WeightedShape { s := ok; s.Weight = w; return s }
	for _, c := range []struct {
		name   string
		shapes []gpu.WeightedShape
	}{
		{"nil", nil},
		{"empty", []gpu.WeightedShape{}},
		{"zero weight", []gpu.WeightedShape{ok, with(0)}},
		{"negative weight", []gpu.WeightedShape{with(-1), ok}},
		{"NaN weight", []gpu.WeightedShape{with(math.NaN())}},
		{"+Inf weight", []gpu.WeightedShape{ok, with(math.Inf(1))}},
		{"-Inf weight", []gpu.WeightedShape{with(math.Inf(-1))}},
		{"invalid demand", []gpu.WeightedShape{ok, {Shape: gpu.Shape{GPU: gpu.Demand{Count: 2, Milli: 500}}, Weight: 1}}},
		{"empty model", []gpu.WeightedShape{{Shape: gpu.Shape{GPU: gpu.Demand{Count: 1, Milli: 5, Models: []string{""}}}, Weight: 1}}},
	} {
		f, err := gpu.NewFGD(c.shapes, 0)
		assert.ErrorIs(t, err, gpu.ErrInvalid, c.name)
		assert.Nil(t, f, c.name)
	}
	// A shape without GPU demand is valid (it counts every free share as fragmentation).
	f, err := gpu.NewFGD([]gpu.WeightedShape{{Shape: gpu.Shape{}, Weight: 2}, ok}, 0)
	require.NoError(t, err)
	assert.Len(t, f.Shapes(), 2)
}

func TestFGDShapesAreCopies(t *testing.T) {
	models := []string{"T4"}
	in := []gpu.WeightedShape{{Shape: gpu.Shape{GPU: gpu.Demand{Count: 1, Milli: 500, Models: models}}, Weight: 4}}
	f, err := gpu.NewFGD(in, 0)
	require.NoError(t, err)
	models[0] = "V100"
	in[0].Weight = 100
	out := f.Shapes()
	require.Len(t, out, 1)
	assert.Equal(t, []string{"T4"}, out[0].GPU.Models, "NewFGD keeps its own models")
	assert.InDelta(t, 1, out[0].Weight, 1e-12, "one shape: weight 1")
	out[0].Weight = 7
	assert.InDelta(t, 1, f.Shapes()[0].Weight, 1e-12, "Shapes returns a copy")

	t4 := devices(t, "T4", 1000, 400)
	v100 := devices(t, "V100", 1000, 400)
	assert.InDelta(t, 400, f.Frag(gpu.Node{Devices: &t4}), 1e-9, "on T4 only the 400 is short")
	assert.InDelta(t, 1400, f.Frag(gpu.Node{Devices: &v100}), 1e-9, "V100 is not allowed: all free")
}

// TestNewFGDNormalisesHugeWeights checks NewFGD's promise that the weights are
// normalised to sum to 1 (Shapes) for any positive finite weights: two weights of
// math.MaxFloat64 would overflow a plain sum to +Inf and every normalised weight to 0.
func TestNewFGDNormalisesHugeWeights(t *testing.T) {
	f, err := gpu.NewFGD([]gpu.WeightedShape{
		{Shape: gpu.Shape{GPU: gpu.Share(500)}, Weight: math.MaxFloat64},
		{Shape: gpu.Shape{GPU: gpu.Whole(1)}, Weight: math.MaxFloat64},
	}, 0)
	if err != nil {
		assert.ErrorIs(t, err, gpu.ErrInvalid, "a refusal must say invalid")
		return
	}
	sum := 0.0
	for _, s := range f.Shapes() {
		sum += s.Weight
	}
	assert.InDelta(t, 1, sum, 1e-9, "weights %v", f.Shapes())
	d := devices(t, "V100", 1000, 400)
	// Both shapes fit (device 0 is whole), and device 1's 400 is below either's share.
	assert.InDelta(t, 400, f.Frag(gpu.Node{Devices: &d}), 1e-6, "0.5 × 400 + 0.5 × 400")
}

func TestTypicalShapes(t *testing.T) {
	s1 := gpu.Shape{Request: schema.MustTuple(1000, 0), GPU: gpu.Share(500)}
	s2 := gpu.Shape{Request: schema.MustTuple(2000, 0), GPU: gpu.Whole(1)}
	s3 := gpu.Shape{Request: schema.MustTuple(1000, 0), GPU: gpu.Demand{Count: 1, Milli: 500, Models: []string{"T4"}}}
	s4 := gpu.Shape{Request: schema.MustTuple(500, 0)}
	// Counts: s1 3, s2 2, s3 2 (s2 appears first), s4 1: 8 tasks.
	tasks := []gpu.Shape{s2, s1, s3, s1, s2, s1, s3, s4}
	for _, c := range []struct {
		coverage float64
		want     []gpu.WeightedShape
	}{
		{0.3, []gpu.WeightedShape{ws(s1, 3)}},                       // 2.4 tasks: s1's 3
		{0.375, []gpu.WeightedShape{ws(s1, 3)}},                     // exactly 3
		{0.5, []gpu.WeightedShape{ws(s1, 3), ws(s2, 2)}},            // 4: 3 + 2
		{0.625, []gpu.WeightedShape{ws(s1, 3), ws(s2, 2)}},          // exactly 5
		{0.7, []gpu.WeightedShape{ws(s1, 3), ws(s2, 2), ws(s3, 2)}}, // 5.6: 7
		{1, []gpu.WeightedShape{ws(s1, 3), ws(s2, 2), ws(s3, 2), ws(s4, 1)}},
	} {
		got, err := gpu.TypicalShapes(tasks, 0, c.coverage)
		require.NoError(t, err, "coverage %v", c.coverage)
		assert.Equal(t, c.want, got, "coverage %v", c.coverage)
	}

	// On memory only, tasks that differ in CPU alone are one shape, read without CPU.
	a := gpu.Shape{Request: schema.MustTuple(1000, 2048), GPU: gpu.Share(250)}
	b := gpu.Shape{Request: schema.MustTuple(3000, 2048), GPU: gpu.Share(250)}
	c := gpu.Shape{Request: schema.MustTuple(1000, 4096), GPU: gpu.Share(250)}
	got, err := gpu.TypicalShapes([]gpu.Shape{a, c, b}, 1<<1, 1)
	require.NoError(t, err)
	assert.Equal(t, []gpu.WeightedShape{
		ws(gpu.Shape{Request: schema.MustTuple(0, 2048), GPU: gpu.Share(250)}, 2),
		ws(gpu.Shape{Request: schema.MustTuple(0, 4096), GPU: gpu.Share(250)}, 1),
	}, got)
	got, err = gpu.TypicalShapes([]gpu.Shape{a, c, b}, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, []gpu.WeightedShape{ws(a, 1), ws(c, 1), ws(b, 1)}, got, "all dimensions: three shapes, in order of appearance")

	// The shapes feed NewFGD.
	ws, err := gpu.TypicalShapes(tasks, 0, 0.6)
	require.NoError(t, err)
	_, err = gpu.NewFGD(ws, 0)
	assert.NoError(t, err)

	for _, bad := range []float64{0, -0.1, 1.0000001, 2, math.NaN(), math.Inf(1)} {
		_, err := gpu.TypicalShapes(tasks, 0, bad)
		assert.ErrorIs(t, err, gpu.ErrInvalid, "coverage %v", bad)
	}
	_, err = gpu.TypicalShapes(nil, 0, 0.5)
	assert.ErrorIs(t, err, gpu.ErrInvalid, "no tasks")
	_, err = gpu.TypicalShapes([]gpu.Shape{s1, {GPU: gpu.Share(0)}}, 0, 0.5)
	assert.ErrorIs(t, err, gpu.ErrInvalid, "an invalid demand")
}

// TypicalShapes and NewFGD refuse a request with a negative amount, naming the task (or
// shape), the slot and the amount; it once came back as a typical shape.
func TestShapesRejectNegativeRequests(t *testing.T) {
	ok := gpu.Shape{Request: schema.MustTuple(1000, 0), GPU: gpu.Share(500)}
	for _, c := range []struct {
		name    string
		request resource.Tuple
		dims    resource.Mask
		msg     string
	}{
		{"first slot", resource.Tuple{-5}, 0, "task 1: request <-5>: amount -5 in slot 0"},
		{"second slot", resource.Tuple{1000, -1}, 0, "task 1: request <1000 -1>: amount -1 in slot 1"},
		{"a slot past the schema", resource.Tuple{7: -2}, 0, "amount -2 in slot 7"},
		{"a slot the mask does not read", resource.Tuple{1000, -1}, 1 << 0, "amount -1 in slot 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := gpu.Shape{Request: c.request, GPU: gpu.Share(500)}
			got, err := gpu.TypicalShapes([]gpu.Shape{ok, bad}, c.dims, 0.5)
			assert.ErrorIs(t, err, gpu.ErrInvalid)
			assert.ErrorIs(t, err, resource.ErrNegative)
			assert.ErrorContains(t, err, c.msg)
			assert.Nil(t, got)

			f, err := gpu.NewFGD([]gpu.WeightedShape{{Shape: ok, Weight: 1}, {Shape: bad, Weight: 1}}, c.dims)
			assert.ErrorIs(t, err, gpu.ErrInvalid)
			assert.ErrorIs(t, err, resource.ErrNegative)
			assert.ErrorContains(t, err, "shape 1: request")
			assert.Nil(t, f)
		})
	}
	// A zero request is a request.
	got, err := gpu.TypicalShapes([]gpu.Shape{{GPU: gpu.Share(500)}}, 0, 1)
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

// TestTypicalShapesKeepsDistinctShapes checks that TypicalShapes counts distinct
// shapes apart: a share of 1 on model "00" is not a share of 100 on any model, and
// model "a|b" is not models "a" and "b" (a key made by printing the fields together
// would confuse both).
func TestTypicalShapesKeepsDistinctShapes(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b gpu.Demand
	}{
		{"milli and model run together", gpu.Demand{Count: 1, Milli: 1, Models: []string{"00"}}, gpu.Share(100)},
		{"milli and a numeric model", gpu.Demand{Count: 1, Milli: 10, Models: []string{"80"}}, gpu.Demand{Count: 1, Milli: 108, Models: []string{"0"}}},
		{"a model with the separator", gpu.Demand{Count: 1, Milli: 100, Models: []string{"a|b"}}, gpu.Demand{Count: 1, Milli: 100, Models: []string{"a", "b"}}},
	} {
		got, err := gpu.TypicalShapes([]gpu.Shape{{GPU: c.a}, {GPU: c.b}}, 0, 1)
		require.NoError(t, err, c.name)
		assert.Equal(t, []gpu.WeightedShape{ws(gpu.Shape{GPU: c.a}, 1), ws(gpu.Shape{GPU: c.b}, 1)}, got, c.name)
	}
}

func TestScorersOnTheKnownNodeAgree(t *testing.T) {
	// Every scorer refuses what Fits refuses, and the zero demand is always ok.
	d, n := known(t)
	n.Devices = &d
	for _, sc := range []gpu.DeviceScorer{gpu.DeviceBestFit{}, gpu.DotProduct{}, gpu.Packing{}, workload(t)} {
		name := fmt.Sprintf("%T", sc)
		for _, dem := range []gpu.Demand{{}, gpu.Share(1), gpu.Share(600), gpu.Share(601), gpu.Whole(2), gpu.Whole(3), {Count: 1, Milli: 5, Models: []string{"T4"}}} {
			x, a, ok := sc.Score(n, shape(dem))
			assert.Equal(t, d.Fits(dem), ok, "%s %v", name, dem)
			assert.GreaterOrEqual(t, x, 0.0, "%s %v", name, dem)
			assert.LessOrEqual(t, x, 1.0, "%s %v", name, dem)
			assert.Len(t, a.Devices, map[bool]int{true: dem.Count, false: 0}[ok], "%s %v", name, dem)
		}
		assert.Equal(t, []int64{1000, 300, 600, 1000}, frees(&d), "%s changes no device", name)
	}
}
