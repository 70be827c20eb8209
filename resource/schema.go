package resource

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxDims is the largest number of dimensions a Schema may have, and the length of a
// Tuple. Eight covers CPU, memory, disk and network bandwidth, disk space, GPUs and two
// custom dimensions while keeping a Tuple to one cache line.
const MaxDims = 8

// Dimension describes one kind of resource.
type Dimension struct {
	// Name identifies the dimension within a schema, e.g. "cpu". Non-empty, no spaces,
	// '=' or ','.
	Name string
	// Unit names the base unit amounts are counted in, e.g. "millicore" or "byte".
	// Informational only.
	Unit string
	// Compressible marks a resource a task can be given less of and still complete,
	// only slower (CPU time, disk or network bandwidth): docs/methods.md §1, Def. 1. Memory,
	// disk space and GPUs are not compressible.
	Compressible bool
	// BaseUnitsPerQuantity is how many base units the plain quantity 1 stands for when
	// amounts are written as text (Schema.Parse, Schema.Format), as in Kubernetes: CPU
	// counts millicores but "1" is one core, so its BaseUnitsPerQuantity is 1000 and
	// "cpu=2" is 2000 millicores, "cpu=500m" 500; memory counts bytes and "1" is one
	// byte, so its BaseUnitsPerQuantity is 1. It is a power of ten from 1 to 10^18; zero
	// means 1, the base unit itself.
	BaseUnitsPerQuantity int64
	// BinarySI marks a dimension counted in bytes (or bytes per second), whose amounts
	// Format writes with binary suffixes where they divide exactly ("16Gi", "1536Mi"),
	// as Kubernetes writes memory. It changes nothing in Parse, which reads every
	// suffix on every dimension.
	BinarySI bool
}

// The standard dimensions. Amounts are integers in the unit named; as text, CPU counts
// cores and the others their unit (see Dimension.BaseUnitsPerQuantity).
var (
	// CPU is processor time in thousandths of a core (1000 = one core); as text, "2" is
	// two cores and "500m" half a core. Compressible.
	CPU = Dimension{Name: "cpu", Unit: "millicore", Compressible: true, BaseUnitsPerQuantity: 1000}
	// Memory is resident memory in bytes ("16Gi"). Not compressible.
	Memory = Dimension{Name: "memory", Unit: "byte", BaseUnitsPerQuantity: 1, BinarySI: true}
	// DiskIO is disk bandwidth in bytes per second ("100Mi"). Compressible.
	DiskIO = Dimension{Name: "disk-io", Unit: "byte/s", Compressible: true, BaseUnitsPerQuantity: 1, BinarySI: true}
	// NetIO is network bandwidth in bytes per second ("10Mi"). Compressible.
	NetIO = Dimension{Name: "net-io", Unit: "byte/s", Compressible: true, BaseUnitsPerQuantity: 1, BinarySI: true}
	// Disk is local disk space in bytes ("100Gi"). Not compressible.
	Disk = Dimension{Name: "disk", Unit: "byte", BaseUnitsPerQuantity: 1, BinarySI: true}
	// GPU is whole accelerator devices ("2"). Not compressible. (Shares of one device
	// are package gpu's Demand, not this dimension.)
	GPU = Dimension{Name: "gpu", Unit: "device", BaseUnitsPerQuantity: 1}
)

// Schema names the dimensions of the tuples used together: which slot of a Tuple holds
// which resource, in what unit, and whether it is compressible. A Schema is immutable
// and safe for concurrent use. Tuples do not carry their schema; the types that hold
// tuples over time (profiles, timelines) do, and reject a mix of schemas.
type Schema struct {
	dims         [MaxDims]Dimension
	n            int
	compressible Mask
}

// NewSchema returns a schema of the given dimensions, in slot order. It fails when a name
// is empty, malformed or repeated, when a BaseUnitsPerQuantity is not 0 or a power of
// ten up to 10^18 (ErrInvalidScale), or when there are more than MaxDims dimensions.
func NewSchema(dims ...Dimension) (*Schema, error) {
	if len(dims) > MaxDims {
		return nil, &DimensionError{Dim: fmt.Sprintf("#%d", MaxDims), Value: len(dims), Err: ErrTooManyDimensions,
			Detail: fmt.Sprintf("%d given, at most %d", len(dims), MaxDims)}
	}
	s := &Schema{n: len(dims)}
	for i, d := range dims {
		if d.Name == "" || strings.ContainsAny(d.Name, "=, \t\n\r") {
			return nil, dimErr(fmt.Sprintf("#%d", i), d.Name, ErrInvalidName)
		}
		for j := 0; j < i; j++ {
			if dims[j].Name == d.Name {
				return nil, &DimensionError{Dim: d.Name, Value: i, Err: ErrDuplicateDimension,
					Detail: fmt.Sprintf("positions %d and %d", j, i)}
			}
		}
		if err := d.validScale(); err != nil {
			return nil, err
		}
		s.dims[i] = d
		if d.Compressible {
			s.compressible |= 1 << i
		}
	}
	return s, nil
}

// MustSchema is NewSchema for dimensions known to be valid; it panics on error.
func MustSchema(dims ...Dimension) *Schema {
	s, err := NewSchema(dims...)
	if err != nil {
		panic(err)
	}
	return s
}

// Standard returns a schema of the six standard dimensions, in this slot order:
// cpu, memory, disk-io, net-io, disk, gpu.
func Standard() *Schema { return standard }

var standard = MustSchema(CPU, Memory, DiskIO, NetIO, Disk, GPU)

// Len is the number of dimensions.
func (s *Schema) Len() int { return s.n }

// Dim returns the dimension in slot i; i must be in [0, Len()).
func (s *Schema) Dim(i int) Dimension { return s.dims[i] }

// Dims returns a copy of the dimensions in slot order.
func (s *Schema) Dims() []Dimension { return append([]Dimension(nil), s.dims[:s.n]...) }

// Index returns the slot of the named dimension.
func (s *Schema) Index(name string) (int, bool) {
	for i := 0; i < s.n; i++ {
		if s.dims[i].Name == name {
			return i, true
		}
	}
	return -1, false
}

// Compressible is the mask of the compressible dimensions.
func (s *Schema) Compressible() Mask { return s.compressible }

// NonCompressible is the mask of the dimensions in the schema that are not compressible.
func (s *Schema) NonCompressible() Mask { return s.All() &^ s.compressible }

// All is the mask of every dimension in the schema.
func (s *Schema) All() Mask { return Mask(1<<s.n - 1) }

// Split returns the compressible and the non-compressible parts of t (Alg. 2's sc, sn).
func (s *Schema) Split(t Tuple) (compressible, nonCompressible Tuple) {
	return t.Only(s.compressible), t.Only(s.NonCompressible())
}

// Equal reports whether two schemas have the same dimensions in the same slots. Values
// built for equal schemas may be mixed.
func (s *Schema) Equal(o *Schema) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	return *s == *o
}

// DimName returns the name of slot i, or "#i" past the schema's last dimension.
func (s *Schema) DimName(i int) string {
	if i >= 0 && i < s.n {
		return s.dims[i].Name
	}
	return fmt.Sprintf("#%d", i)
}

// Make returns the tuple holding the named amounts; dimensions not named are zero. It
// fails on an unknown name or a negative amount. Names are checked in sorted order, so
// the error reported for several bad entries is deterministic.
func (s *Schema) Make(amounts map[string]int64) (Tuple, error) {
	names := make([]string, 0, len(amounts))
	for name := range amounts {
		names = append(names, name)
	}
	slices.Sort(names)
	var t Tuple
	for _, name := range names {
		i, ok := s.Index(name)
		if !ok {
			return Tuple{}, s.unknownErr(name, amounts[name])
		}
		v := amounts[name]
		if v < 0 {
			return Tuple{}, dimErr(name, v, ErrNegative)
		}
		t[i] = v
	}
	return t, nil
}

// FromSlice returns the tuple whose first len(amounts) slots hold amounts, in schema
// order. It fails when there are more amounts than dimensions or any is negative.
func (s *Schema) FromSlice(amounts ...int64) (Tuple, error) {
	if len(amounts) > s.n {
		return Tuple{}, s.outsideErr(s.n, amounts[s.n])
	}
	var t Tuple
	copy(t[:], amounts)
	if err := s.Validate(t); err != nil {
		return Tuple{}, err
	}
	return t, nil
}

// MustTuple is FromSlice for amounts known to be valid; it panics on error.
func (s *Schema) MustTuple(amounts ...int64) Tuple {
	t, err := s.FromSlice(amounts...)
	if err != nil {
		panic(err)
	}
	return t
}

// Validate checks that t is a valid amount for this schema: no negative amount, and
// nothing in the slots past the last dimension.
func (s *Schema) Validate(t Tuple) error {
	for i := 0; i < s.n; i++ {
		if t[i] < 0 {
			return dimErr(s.DimName(i), t[i], ErrNegative)
		}
	}
	for i := s.n; i < MaxDims; i++ {
		if t[i] != 0 {
			return s.outsideErr(i, t[i])
		}
	}
	return nil
}

// ValidateAllowance checks that t is a valid compression allowance for this schema: a
// valid amount that is zero on every non-compressible dimension.
func (s *Schema) ValidateAllowance(t Tuple) error {
	if err := s.Validate(t); err != nil {
		return err
	}
	for i := 0; i < s.n; i++ {
		if t[i] != 0 && !s.compressible.Has(i) {
			return dimErr(s.dims[i].Name, t[i], ErrNotCompressible)
		}
	}
	return nil
}

// ValidateRatios checks that every ratio is a number in [0, max], that the slots past
// the schema are zero, and, when compressibleOnly is set, that non-compressible
// dimensions are zero.
func (s *Schema) ValidateRatios(v Vector, max float64, compressibleOnly bool) error {
	for i := 0; i < MaxDims; i++ {
		r := v[i]
		switch {
		case r != r || r < 0 || r > max: // r != r: NaN
			return dimErr(s.DimName(i), r, ErrInvalidRatio)
		case i >= s.n && r != 0:
			return s.outsideErr(i, r)
		case compressibleOnly && r != 0 && !s.compressible.Has(i):
			return dimErr(s.DimName(i), r, ErrNotCompressible)
		}
	}
	return nil
}

// Format writes t as "name=amount" pairs separated by commas, in slot order, omitting
// zero amounts. Each amount is written as a Kubernetes resource quantity by
// Dimension.FormatAmount: CPU in whole cores when it is a multiple of 1000 millicores,
// else in millicores ("cpu=2", "cpu=2500m"); bytes and bytes per second with the largest
// binary suffix that divides them exactly, else the largest decimal one, else none, the
// shorter where both divide ("memory=16Gi", "memory=1536Mi", "disk=1T",
// "net-io=12345"); device counts plain ("gpu=1"). The zero tuple formats as "". Parse
// reads the text back to t exactly.
//
// Slots past the schema's last dimension are written in base units under their "#i"
// names, which Parse refuses: only a valid tuple round-trips.
func (s *Schema) Format(t Tuple) string {
	var b []byte
	for i := 0; i < MaxDims; i++ {
		if t[i] == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, s.DimName(i)...)
		b = append(b, '=')
		if i < s.n {
			b = s.dims[i].appendAmount(b, t[i])
		} else {
			b = strconv.AppendInt(b, t[i], 10)
		}
	}
	return string(b)
}

// Parse reads a tuple written as comma-separated "name=amount" pairs, e.g.
// "cpu=2.5, memory=4Gi". Spaces around names and amounts are ignored; a dimension may
// appear once; dimensions not named are zero; the empty string is the zero tuple.
//
// Each amount is a Kubernetes resource quantity read by Dimension.ParseAmount, in the
// dimension's whole quantities: "cpu=2" is two cores (2000 millicores), "cpu=500m" half
// a core, "cpu=1.5" 1500 millicores, "memory=16Gi" 17179869184 bytes, "memory=1e3" 1000
// bytes. An amount finer than the base unit is rounded up to it, as Kubernetes does
// ("cpu=0.1m" is 1 millicore). Parse fails, changing nothing, on a pair without '='
// (ErrSyntax), an unknown or repeated dimension (ErrUnknownDimension,
// ErrDuplicateDimension), an amount that is not a quantity (ErrSyntax), is negative
// (ErrNegative) or is beyond the int64 range in base units (ErrOverflow); all but the
// first inside a *DimensionError naming the dimension.
func (s *Schema) Parse(text string) (Tuple, error) {
	var t Tuple
	var seen Mask
	if strings.TrimSpace(text) == "" {
		return t, nil
	}
	for _, field := range strings.Split(text, ",") {
		name, amount, ok := strings.Cut(field, "=")
		name, amount = strings.TrimSpace(name), strings.TrimSpace(amount)
		if !ok || name == "" {
			return Tuple{}, fmt.Errorf("resource: parse %q: want name=amount, got %q: %w", text, field, ErrSyntax)
		}
		i, known := s.Index(name)
		if !known {
			return Tuple{}, s.unknownErr(name, amount)
		}
		if seen.Has(i) {
			return Tuple{}, &DimensionError{Dim: name, Value: amount, Err: ErrDuplicateDimension,
				Detail: fmt.Sprintf("given twice in %q", text)}
		}
		seen |= 1 << i
		v, err := s.dims[i].ParseAmount(amount)
		if err != nil {
			return Tuple{}, err
		}
		t[i] = v
	}
	return t, nil
}

// String describes the schema, e.g. "cpu[millicore,c] memory[byte]"; ",c" marks a
// compressible dimension.
func (s *Schema) String() string {
	var b strings.Builder
	for i := 0; i < s.n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		d := s.dims[i]
		b.WriteString(d.Name)
		b.WriteByte('[')
		b.WriteString(d.Unit)
		if d.Compressible {
			b.WriteString(",c")
		}
		b.WriteByte(']')
	}
	return b.String()
}
