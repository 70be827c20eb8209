package resource

import (
	"errors"
	"fmt"
	"math"
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
}

// The standard dimensions. Amounts are integers in the unit named.
var (
	// CPU is processor time in thousandths of a core (1000 = one core). Compressible.
	CPU = Dimension{Name: "cpu", Unit: "millicore", Compressible: true}
	// Memory is resident memory in bytes. Not compressible.
	Memory = Dimension{Name: "memory", Unit: "byte"}
	// DiskIO is disk bandwidth in bytes per second. Compressible.
	DiskIO = Dimension{Name: "disk-io", Unit: "byte/s", Compressible: true}
	// NetIO is network bandwidth in bytes per second. Compressible.
	NetIO = Dimension{Name: "net-io", Unit: "byte/s", Compressible: true}
	// Disk is local disk space in bytes. Not compressible.
	Disk = Dimension{Name: "disk", Unit: "byte"}
	// GPU is whole accelerator devices. Not compressible.
	GPU = Dimension{Name: "gpu", Unit: "device"}
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
// is empty, malformed or repeated, or when there are more than MaxDims dimensions.
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
	for i := 0; i < MaxDims; i++ {
		switch {
		case i >= s.n && t[i] != 0:
			return s.outsideErr(i, t[i])
		case t[i] < 0:
			return dimErr(s.DimName(i), t[i], ErrNegative)
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
// zero amounts ("cpu=2000,memory=4294967296"). The zero tuple formats as "". Parse reads
// it back.
func (s *Schema) Format(t Tuple) string {
	var b strings.Builder
	for i := 0; i < MaxDims; i++ {
		if t[i] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s.DimName(i))
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(t[i], 10))
	}
	return b.String()
}

// Parse reads a tuple written as comma-separated "name=amount" pairs, e.g.
// "cpu=2500, memory=4Gi". Spaces around names and amounts are ignored; a dimension may
// appear once. Amounts are non-negative integers in the dimension's base unit with an
// optional suffix: k, M, G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi (powers of
// 1024); an amount beyond the int64 range, suffix applied, fails with ErrOverflow. The
// empty string is the zero tuple.
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
		v, err := parseAmount(amount)
		if err != nil {
			de := &DimensionError{Dim: name, Value: amount, Err: err}
			if errors.Is(err, ErrOverflow) {
				de.Detail = fmt.Sprintf("%s is too large: at most %d in the base unit", amount, int64(math.MaxInt64))
			}
			return Tuple{}, de
		}
		t[i] = v
	}
	return t, nil
}

var suffixes = []struct {
	s string
	m int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"Pi", 1 << 50},
	{"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
}

func parseAmount(text string) (int64, error) {
	mult := int64(1)
	for _, sf := range suffixes {
		if strings.HasSuffix(text, sf.s) {
			text, mult = strings.TrimSuffix(text, sf.s), sf.m
			break
		}
	}
	if text == "" || text[0] == '+' || text[0] == '-' {
		if strings.HasPrefix(text, "-") {
			return 0, ErrNegative
		}
		return 0, ErrSyntax
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		// ParseInt reports a range error as soon as the digits read overflow, before it
		// reads the rest: the amount overflows only if the rest are digits too.
		if errors.Is(err, strconv.ErrRange) && strings.Trim(text, "0123456789") == "" {
			return 0, ErrOverflow
		}
		return 0, ErrSyntax
	}
	if v > (1<<63-1)/mult {
		return 0, ErrOverflow
	}
	return v * mult, nil
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
