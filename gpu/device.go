package gpu

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Milli is one whole device in the unit of a share: shares are thousandths of a GPU.
const Milli = 1000

// MaxDevices is the most devices a node may have and a task may ask for.
const MaxDevices = 64

// Sentinel errors; every error of the package wraps one of them.
var (
	// ErrInvalid reports a malformed spec, demand, allocation or scorer setting.
	ErrInvalid = errors.New("invalid GPU value")
	// ErrNoRoom reports an allocation its devices cannot take.
	ErrNoRoom = errors.New("not enough free GPU")
)

// Spec is a node's GPUs: Count devices of one Model.
type Spec struct {
	// Model names the GPU model ("V100M32", "T4"); may be empty when the node has no
	// GPU or its model is unknown.
	Model string
	// Count is the number of devices, 0 to MaxDevices.
	Count int
}

// Validate reports a count out of range.
func (s Spec) Validate() error {
	if s.Count < 0 || s.Count > MaxDevices {
		return fmt.Errorf("gpu: %d devices: want 0 to %d: %w", s.Count, MaxDevices, ErrInvalid)
	}
	return nil
}

// Demand is what a task asks of a node's GPUs: a share of one device (Count 1, Milli
// below Milli), or Count whole devices (Milli = Milli), of one of Models. The zero
// Demand asks for none.
type Demand struct {
	// Count is the number of devices, 0 to MaxDevices.
	Count int
	// Milli is the share of each device, in thousandths: 1 to 1000 when Count is 1,
	// exactly 1000 when Count is more, 0 when Count is 0.
	Milli int64
	// Models lists the GPU models the task may run on; empty means any.
	Models []string
}

// Share returns the demand for milli thousandths of one device.
func Share(milli int64) Demand { return Demand{Count: 1, Milli: milli} }

// Whole returns the demand for n whole devices.
func Whole(n int) Demand { return Demand{Count: n, Milli: Milli} }

// Validate reports a demand that no node could read: a count out of range, a share
// outside (0, 1000], a share of several devices, or an empty model name.
func (d Demand) Validate() error {
	switch {
	case d.Count < 0 || d.Count > MaxDevices:
		return fmt.Errorf("gpu: demand of %d devices: want 0 to %d: %w", d.Count, MaxDevices, ErrInvalid)
	case d.Count == 0 && (d.Milli != 0 || len(d.Models) > 0):
		return fmt.Errorf("gpu: demand of no device with a share %d or models %v: %w", d.Milli, d.Models, ErrInvalid)
	case d.Count == 1 && (d.Milli <= 0 || d.Milli > Milli):
		return fmt.Errorf("gpu: share %d of one device: want 1 to %d: %w", d.Milli, Milli, ErrInvalid)
	case d.Count > 1 && d.Milli != Milli:
		return fmt.Errorf("gpu: share %d of each of %d devices: a task shares at most one device, so want %d: %w", d.Milli, d.Count, Milli, ErrInvalid)
	}
	if slices.Contains(d.Models, "") {
		return fmt.Errorf("gpu: empty model name in %q: %w", d.Models, ErrInvalid)
	}
	return nil
}

// IsZero reports whether the demand asks for no GPU.
func (d Demand) IsZero() bool { return d.Count == 0 }

// shapeValid reports whether a demand of at least one device has a count and share
// Validate accepts: a share of one device, or whole devices.
func (d Demand) shapeValid() bool {
	switch {
	case d.Count < 1 || d.Count > MaxDevices:
		return false
	case d.Count == 1:
		return d.Milli > 0 && d.Milli <= Milli
	}
	return d.Milli == Milli
}

// Shared reports whether the demand is a share of one device, less than all of it.
func (d Demand) Shared() bool { return d.Count == 1 && d.Milli < Milli }

// Total is the demand in thousandths of a device, summed over its devices.
func (d Demand) Total() int64 { return int64(d.Count) * d.Milli }

// Allows reports whether the demand may run on a device of model m.
func (d Demand) Allows(m string) bool { return len(d.Models) == 0 || slices.Contains(d.Models, m) }

// String formats the demand: "0.46 GPU", "2 GPU (T4|P100)".
func (d Demand) String() string {
	var s string
	switch {
	case d.Count == 0:
		return "no GPU"
	case d.Shared():
		s = strconv.FormatFloat(float64(d.Milli)/Milli, 'f', -1, 64) + " GPU"
	default:
		s = fmt.Sprintf("%d GPU", d.Count)
	}
	if len(d.Models) > 0 {
		s += " (" + strings.Join(d.Models, "|") + ")"
	}
	return s
}

// Allocation is the devices a placed task holds: Milli thousandths of each of
// Devices (indices into the node's Devices).
type Allocation struct {
	Devices []int
	Milli   int64
}

// IsZero reports whether the allocation holds no device.
func (a Allocation) IsZero() bool { return len(a.Devices) == 0 }

// Clone returns a copy that shares nothing with a.
func (a Allocation) Clone() Allocation {
	if a.IsZero() {
		return Allocation{}
	}
	return Allocation{Devices: slices.Clone(a.Devices), Milli: a.Milli}
}

// Devices is one node's GPUs: each device's free share. It has one owner and is not
// safe for concurrent use; Clone copies it.
type Devices struct {
	model string
	free  []int64
}

// New returns the devices of spec, all free. It fails on an invalid spec.
func New(spec Spec) (Devices, error) {
	if err := spec.Validate(); err != nil {
		return Devices{}, err
	}
	d := Devices{model: spec.Model, free: make([]int64, spec.Count)}
	for i := range d.free {
		d.free[i] = Milli
	}
	return d, nil
}

// Clone returns an independent copy.
func (d *Devices) Clone() Devices { return Devices{model: d.model, free: slices.Clone(d.free)} }

// Model is the devices' model.
func (d *Devices) Model() string { return d.model }

// Len is the number of devices.
func (d *Devices) Len() int { return len(d.free) }

// Free is device i's free share, in thousandths.
func (d *Devices) Free(i int) int64 { return d.free[i] }

// FreeTotal is the free share summed over the devices, in thousandths.
func (d *Devices) FreeTotal() int64 {
	var s int64
	for _, f := range d.free {
		s += f
	}
	return s
}

// Capacity is the devices' total, in thousandths: Len × Milli.
func (d *Devices) Capacity() int64 { return int64(len(d.free)) * Milli }

// FullyFree counts the devices nothing uses.
func (d *Devices) FullyFree() int { return d.count(Milli) }

// count counts the devices with at least milli free.
func (d *Devices) count(milli int64) int {
	n := 0
	for _, f := range d.free {
		if f >= milli {
			n++
		}
	}
	return n
}

// Fits reports whether dem can be allocated now: its models allow the devices', and
// dem.Count devices each have dem.Milli free. The zero demand always fits; a demand
// with a count or share out of range (Validate) never does.
func (d *Devices) Fits(dem Demand) bool {
	switch {
	case dem.Count == 0:
		return true
	case !dem.shapeValid():
		return false
	}
	return dem.Allows(d.model) && d.count(dem.Milli) >= dem.Count
}

// BestFit returns the allocation of dem that leaves the least free share on the
// devices it uses: for a share, the device with the least free share that holds it;
// for whole devices, the first free ones. Ties go to the lowest index. It reports
// false when dem does not fit (Fits), and the zero allocation for the zero demand.
func (d *Devices) BestFit(dem Demand) (Allocation, bool) {
	if dem.Count == 0 {
		return Allocation{}, true
	}
	if !d.Fits(dem) {
		return Allocation{}, false
	}
	if dem.Count == 1 {
		best := -1
		for i, f := range d.free {
			if f >= dem.Milli && (best < 0 || f < d.free[best]) {
				best = i
			}
		}
		return Allocation{Devices: []int{best}, Milli: dem.Milli}, true
	}
	a := Allocation{Devices: make([]int, 0, dem.Count), Milli: dem.Milli}
	for i, f := range d.free {
		if f >= dem.Milli && len(a.Devices) < dem.Count {
			a.Devices = append(a.Devices, i)
		}
	}
	return a, true
}

// check reports an allocation whose indices are out of range or repeated, or whose
// share is outside (0, Milli].
func (d *Devices) check(a Allocation) error {
	if a.Milli <= 0 || a.Milli > Milli || len(a.Devices) > len(d.free) {
		return fmt.Errorf("gpu: allocation %v of %d devices: %w", a, len(d.free), ErrInvalid)
	}
	for k, i := range a.Devices {
		if i < 0 || i >= len(d.free) || slices.Contains(a.Devices[:k], i) {
			return fmt.Errorf("gpu: allocation %v of %d devices: %w", a, len(d.free), ErrInvalid)
		}
	}
	return nil
}

// Take allocates a. It fails, changing nothing, on a malformed allocation or one a
// device has not the share free for.
func (d *Devices) Take(a Allocation) error {
	if a.IsZero() {
		return nil
	}
	if err := d.check(a); err != nil {
		return err
	}
	for _, i := range a.Devices {
		if d.free[i] < a.Milli {
			return fmt.Errorf("gpu: device %d has %d free, allocation wants %d: %w", i, d.free[i], a.Milli, ErrNoRoom)
		}
	}
	for _, i := range a.Devices {
		d.free[i] -= a.Milli
	}
	return nil
}

// Release returns a, taken earlier. It fails, changing nothing, on a malformed
// allocation or one that would leave a device more than whole.
func (d *Devices) Release(a Allocation) error {
	if a.IsZero() {
		return nil
	}
	if err := d.check(a); err != nil {
		return err
	}
	for _, i := range a.Devices {
		if d.free[i]+a.Milli > Milli {
			return fmt.Errorf("gpu: release of %d on device %d with %d free: %w", a.Milli, i, d.free[i], ErrInvalid)
		}
	}
	for _, i := range a.Devices {
		d.free[i] += a.Milli
	}
	return nil
}
