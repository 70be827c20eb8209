package resource

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Tuple is an amount of every resource dimension: the R = <R1..Rn> of docs/methods.md §1,
// eq. 9. Slot i holds the amount of the schema's dimension i in its base unit; slots past
// the schema's last dimension are zero. A Tuple is a comparable value (== compares every
// slot) and its arithmetic allocates nothing.
//
// Amounts are signed so that differences (free = capacity − reserved, possibly negative
// on a compressed dimension) stay in the same type. Arithmetic saturates: a sum,
// difference or product beyond the int64 range is math.MaxInt64 or math.MinInt64, never
// a wrapped value of the other sign, so an overflow can never make a full node look
// free. CheckedAdd reports an overflow instead, for callers that must refuse it.
type Tuple [MaxDims]int64

// Add returns t + o, element-wise (eq. 10), saturating.
func (t Tuple) Add(o Tuple) Tuple {
	for i := range t {
		t[i] = addSat(t[i], o[i])
	}
	return t
}

// CheckedAdd returns t + o and true, or the saturated sum and false when some element
// overflows.
func (t Tuple) CheckedAdd(o Tuple) (Tuple, bool) {
	ok := true
	for i := range t {
		var in bool
		t[i], in = addChecked(t[i], o[i])
		ok = ok && in
	}
	return t, ok
}

// Sub returns t − o, element-wise, saturating.
func (t Tuple) Sub(o Tuple) Tuple {
	for i := range t {
		t[i] = subSat(t[i], o[i])
	}
	return t
}

// addSat is a + b, saturating.
func addSat(a, b int64) int64 {
	s, _ := addChecked(a, b)
	return s
}

// addChecked is a + b, saturating, and whether it stayed in range: the sum overflows
// when both operands have the same sign and the wrapped result the other.
func addChecked(a, b int64) (int64, bool) {
	s := a + b
	if (a^s)&(b^s) < 0 {
		if a < 0 {
			return math.MinInt64, false
		}
		return math.MaxInt64, false
	}
	return s, true
}

// subSat is a − b, saturating.
func subSat(a, b int64) int64 {
	s := a - b
	if (a^b)&(a^s) < 0 {
		if a < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}

// mulSat is a × b, saturating.
func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	// p/b recovers a unless the product wrapped; the one wrap it misses is
	// MinInt64 × −1, whose quotient wraps back to MinInt64.
	if p/b != a || (b == -1 && a == math.MinInt64) {
		if (a < 0) != (b < 0) {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return p
}

// Mul returns the element-wise product t × o (eq. 11), saturating.
func (t Tuple) Mul(o Tuple) Tuple {
	for i := range t {
		t[i] = mulSat(t[i], o[i])
	}
	return t
}

// Scale returns c × t (eq. 12). Each product is rounded to the nearest integer, halves
// away from zero, and saturates at the int64 range; a NaN factor gives the zero tuple.
func (t Tuple) Scale(c float64) Tuple {
	for i := range t {
		t[i] = roundSat(float64(t[i]) * c)
	}
	return t
}

// ScaleEach returns t scaled dimension by dimension: slot i becomes v[i] × t[i], rounded
// as Scale rounds. With v a vector of compression ratios, c.ScaleEach(rc) is the amount
// of capacity c that compression frees (Alg. 2's rc × N).
func (t Tuple) ScaleEach(v Vector) Tuple {
	for i := range t {
		t[i] = roundSat(float64(t[i]) * v[i])
	}
	return t
}

// Min returns the element-wise minimum of t and o.
func (t Tuple) Min(o Tuple) Tuple {
	for i := range t {
		t[i] = min(t[i], o[i])
	}
	return t
}

// Max returns the element-wise maximum of t and o.
func (t Tuple) Max(o Tuple) Tuple {
	for i := range t {
		t[i] = max(t[i], o[i])
	}
	return t
}

// AnyLess is the paper's "less" relation (eq. 13): it reports whether ANY slot of t is
// smaller than the same slot of o. It is not an order — it is neither antisymmetric nor
// transitive — but a test of coverage: available.AnyLess(demand) means some demand is
// not met. It is exactly !t.Covers(o).
func (t Tuple) AnyLess(o Tuple) bool {
	for i := range t {
		if t[i] < o[i] {
			return true
		}
	}
	return false
}

// Covers reports whether every slot of t is at least the same slot of o: available
// covers demand, or demand fits in available. It is the complement of AnyLess.
func (t Tuple) Covers(o Tuple) bool { return !t.AnyLess(o) }

// CoversOn reports whether t is at least o in every slot of m: Covers on those
// dimensions only.
func (t Tuple) CoversOn(o Tuple, m Mask) bool {
	for i := range t {
		if m&(1<<i) != 0 && t[i] < o[i] {
			return false
		}
	}
	return true
}

// FitsIn reports whether t fits in capacity: capacity.Covers(t).
func (t Tuple) FitsIn(capacity Tuple) bool { return capacity.Covers(t) }

// IsZero reports whether every slot is zero.
func (t Tuple) IsZero() bool { return t == Tuple{} }

// HasNegative reports whether some slot is below zero.
func (t Tuple) HasNegative() bool { return t.AnyLess(Tuple{}) }

// Only returns t with the slots outside m set to zero: the compressible or the
// non-compressible projection of a tuple when m is Schema.Compressible or
// Schema.NonCompressible.
func (t Tuple) Only(m Mask) Tuple {
	for i := range t {
		if m&(1<<i) == 0 {
			t[i] = 0
		}
	}
	return t
}

// Shares returns t's share of capacity in each slot, t[i]/capacity[i]. A slot with zero
// capacity has share 0 when t is zero there and +Inf when t is positive (a demand no
// amount of that capacity can meet).
func (t Tuple) Shares(capacity Tuple) Vector {
	var v Vector
	for i := range t {
		v[i] = share(t[i], capacity[i])
	}
	return v
}

// DominantShare returns the largest of t's shares of capacity (see Shares): the
// quantity dominant resource fairness equalises. It is 0 for the zero tuple.
func (t Tuple) DominantShare(capacity Tuple) float64 {
	d := 0.0
	for i := range t {
		d = max(d, share(t[i], capacity[i]))
	}
	return d
}

func share(a, c int64) float64 {
	switch {
	case c != 0:
		return float64(a) / float64(c)
	case a == 0:
		return 0
	case a > 0:
		return math.Inf(1)
	default:
		return math.Inf(-1)
	}
}

// String formats t as "<a b c ...>" up to its last non-zero slot ("<>" for zero). Use
// Schema.Format for names.
func (t Tuple) String() string {
	last := -1
	for i := range t {
		if t[i] != 0 {
			last = i
		}
	}
	var b strings.Builder
	b.WriteByte('<')
	for i := 0; i <= last; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(t[i], 10))
	}
	b.WriteByte('>')
	return b.String()
}

// Sum returns the element-wise sum of ts.
func Sum(ts ...Tuple) Tuple {
	var s Tuple
	for _, t := range ts {
		s = s.Add(t)
	}
	return s
}

// Mask is a set of slots, bit i for slot i.
type Mask uint8

// Has reports whether slot i is in the set.
func (m Mask) Has(i int) bool { return i >= 0 && i < MaxDims && m&(1<<i) != 0 }

// Len is the number of slots in the set.
func (m Mask) Len() int { return bits.OnesCount8(uint8(m)) }

// roundSat rounds x to the nearest int64, halves away from zero, saturating at the int64
// range; NaN gives 0.
func roundSat(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(x))
}
