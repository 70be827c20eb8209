package resource

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// quantityHint is what Parse accepts, for its syntax errors.
const quantityHint = "want a quantity such as 500m, 2, 1.5, 16Gi or 1e3"

// scaleExp returns p where the dimension's BaseUnitsPerQuantity is 10^p (zero counts as
// one), or false when it is not a power of ten in [1, 10^18].
func (d Dimension) scaleExp() (int, bool) {
	s := d.BaseUnitsPerQuantity
	if s == 0 {
		return 0, true
	}
	p := 0
	for ; s > 1 && s%10 == 0; s /= 10 {
		p++
	}
	return p, s == 1
}

// validScale checks BaseUnitsPerQuantity.
func (d Dimension) validScale() error {
	if _, ok := d.scaleExp(); !ok {
		return &DimensionError{Dim: d.Name, Value: d.BaseUnitsPerQuantity, Err: ErrInvalidScale,
			Detail: fmt.Sprintf("BaseUnitsPerQuantity %d: want 0 (meaning 1) or a power of ten from 1 to 10^18", d.BaseUnitsPerQuantity)}
	}
	return nil
}

// ParseAmount reads one amount of this dimension written as a Kubernetes resource
// quantity and returns it in base units; Schema.Parse reads each amount of a tuple with
// it. The grammar is the Kubernetes one:
//
//	quantity = [sign] number [suffix]
//	sign     = "+" | "-"
//	number   = digits | digits "." [digits] | "." digits
//	suffix   = binary SI: Ki Mi Gi Ti Pi Ei (powers of 1024)
//	         | decimal SI: n u m k M G T P E (10^-9, 10^-6, 10^-3, 10^3 ... 10^18)
//	         | ("e" | "E") [sign] digits   (a power of ten)
//
// A plain number counts whole quantities of the dimension, BaseUnitsPerQuantity base
// units each: for CPU "2" is 2000 millicores, "1.5" is 1500, "500m" is 500 and "1e3" is
// 1000000; for memory "16Gi" is 17179869184 bytes and "1e3" is 1000.
//
// An amount finer than the base unit is rounded up to the next whole base unit, as
// Kubernetes does (Quantity.MilliValue, Quantity.Value): cpu "0.1m" is 1 millicore and
// memory "0.3" is 1 byte, so a demand is never understated. It fails with ErrNegative
// on a negative amount ("-0" is zero), with ErrOverflow on one beyond the int64 range
// in base units, and with ErrSyntax on anything else that is not a quantity ("NaN",
// "1_000", "2 Gi", "0x10", and a sign or point without digits, which Kubernetes reads
// as zero), each inside a *DimensionError naming the dimension; with ErrInvalidScale
// when BaseUnitsPerQuantity is one NewSchema refuses.
func (d Dimension) ParseAmount(text string) (int64, error) {
	if err := d.validScale(); err != nil {
		return 0, err
	}
	p, _ := d.scaleExp()
	v, err := parseQuantity(text, p)
	if err != nil {
		de := &DimensionError{Dim: d.Name, Value: text, Err: err}
		switch err {
		case ErrSyntax:
			de.Detail = fmt.Sprintf("%q: %s", text, quantityHint)
		case ErrOverflow:
			de.Detail = fmt.Sprintf("%s is too large: at most %s", text, d.FormatAmount(math.MaxInt64))
		}
		return 0, de
	}
	return v, nil
}

// parseQuantity reads text as a quantity and returns ceil(text × 10^p): the amount in
// base units of a dimension whose quantity is 10^p base units. It returns ErrSyntax,
// ErrNegative or ErrOverflow, bare.
func parseQuantity(text string, p int) (int64, error) {
	i, neg := 0, false
	if i < len(text) && (text[i] == '+' || text[i] == '-') {
		neg = text[i] == '-'
		i++
	}
	intStart := i
	for i < len(text) && isDigit(text[i]) {
		i++
	}
	intPart := text[intStart:i]
	var frac string
	if i < len(text) && text[i] == '.' {
		i++
		fracStart := i
		for i < len(text) && isDigit(text[i]) {
			i++
		}
		frac = text[fracStart:i]
	}
	if intPart == "" && frac == "" {
		return 0, ErrSyntax
	}
	exp10, exp2, ok := quantitySuffix(text[i:])
	if !ok {
		return 0, ErrSyntax
	}

	// The value is digits × 10^exp10 × 2^exp2, digits the significant digits as an
	// integer: no leading zeros, and trailing zeros moved into exp10.
	digits := strings.TrimLeft(intPart+frac, "0")
	exp10 += int64(p) - int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	exp10 += int64(len(digits) - len(trimmed))
	digits = trimmed
	if digits == "" {
		return 0, nil // zero, whatever its sign and suffix
	}
	if neg {
		return 0, ErrNegative
	}
	n := int64(len(digits))
	switch {
	case n-1+exp10 >= 19: // at least 10^19, past the int64 range
		return 0, ErrOverflow
	case n+exp10+19 <= 0: // below 10^(n+exp10) × 2^60 < 1: rounds up to 1
		return 1, nil
	}
	// Now |exp10| ≤ n + 19: the powers of ten below have about as many digits as the text.
	if n <= 19 && exp10 >= 0 {
		m, _ := strconv.ParseUint(digits, 10, 64) // at most 19 digits: fits
		hi, lo := bits.Mul64(m, pow10(int(exp10)))
		if hi != 0 || lo > math.MaxInt64>>exp2 {
			return 0, ErrOverflow
		}
		return int64(lo << exp2), nil
	}
	// Otherwise exp10 < 0 (with exp10 ≥ 0, more than 19 digits overflowed above):
	// digits × 2^exp2 / 10^−exp10, rounded up.
	num, _ := new(big.Int).SetString(digits, 10)
	num.Lsh(num, exp2)
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(-exp10), nil)
	var rem big.Int
	num.QuoRem(num, den, &rem)
	if rem.Sign() != 0 {
		num.Add(num, big.NewInt(1)) // round up
	}
	if !num.IsInt64() {
		return 0, ErrOverflow
	}
	return num.Int64(), nil
}

// quantitySuffix reads a quantity's suffix: its power of ten and its power of two.
func quantitySuffix(s string) (exp10 int64, exp2 uint, ok bool) {
	switch s {
	case "":
		return 0, 0, true
	case "Ki", "Mi", "Gi", "Ti", "Pi", "Ei":
		return 0, 10 * uint(1+strings.IndexByte("KMGTPE", s[0])), true
	case "n":
		return -9, 0, true
	case "u":
		return -6, 0, true
	case "m":
		return -3, 0, true
	case "k", "M", "G", "T", "P", "E":
		return 3 * int64(1+strings.IndexByte("kMGTPE", s[0])), 0, true
	}
	if s[0] != 'e' && s[0] != 'E' {
		return 0, 0, false
	}
	s = s[1:]
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, 0, false
	}
	// Clamp the exponent: anything beyond ±2^40 is far past where the value
	// overflows or rounds up to one base unit, for any text that fits in memory.
	const clamp = 1 << 40
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, 0, false
		}
		if exp10 < clamp {
			exp10 = exp10*10 + int64(s[i]-'0')
		}
	}
	exp10 = min(exp10, clamp)
	if neg {
		exp10 = -exp10
	}
	return exp10, 0, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// pow10 is 10^e for e in [0, 19].
func pow10(e int) uint64 {
	r := uint64(1)
	for ; e > 0; e-- {
		r *= 10
	}
	return r
}

// FormatAmount writes an amount of this dimension, given in base units, as a Kubernetes
// resource quantity that ParseAmount reads back exactly; Schema.Format writes each
// amount of a tuple with it. The form follows Kubernetes' canonical one:
//
//   - A whole number of quantities (a multiple of BaseUnitsPerQuantity) is written in
//     quantities: cpu 2000 millicores is "2", gpu 3 is "3". On a BinarySI dimension it
//     takes the largest binary suffix that divides it exactly (memory 17179869184 is
//     "16Gi", 1610612736 is "1536Mi"), else the largest decimal suffix that does (1000000000
//     is "1G"), else none (1000000001); where both divide, the shorter text wins, binary
//     on a tie: 10^12 is "1T", not "976562500Ki".
//   - Any other amount is written with the coarsest of the suffixes m, u and n that
//     states it as a whole number (cpu 2500 millicores is "2500m"), or failing that as a
//     decimal fraction (a dimension of 100 base units per quantity writes 150 as "1.5").
//
// Zero is "0". A negative amount (a difference, in a message) is written as its
// magnitude with a minus sign; ParseAmount refuses it. A dimension whose
// BaseUnitsPerQuantity NewSchema would refuse writes plain base units.
func (d Dimension) FormatAmount(v int64) string {
	return string(d.appendAmount(nil, v))
}

func (d Dimension) appendAmount(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u // two's complement: right for math.MinInt64 too
	}
	p, ok := d.scaleExp()
	if !ok {
		return strconv.AppendUint(b, u, 10)
	}
	scale := pow10(p)
	if u%scale != 0 {
		// The coarsest of m, u, n (10^-3, 10^-6, 10^-9 quantities) that divides it.
		for _, sf := range [...]struct {
			exp int
			s   string
		}{{3, "m"}, {6, "u"}, {9, "n"}} {
			if sf.exp <= p && u%pow10(p-sf.exp) == 0 {
				b = strconv.AppendUint(b, u/pow10(p-sf.exp), 10)
				return append(b, sf.s...)
			}
		}
		b = strconv.AppendUint(b, u/scale, 10)
		b = append(b, '.')
		frac := strconv.FormatUint(u%scale+scale, 10)[1:] // p digits, leading zeros kept
		return append(b, strings.TrimRight(frac, "0")...)
	}
	q := u / scale
	if !d.BinarySI || q == 0 {
		return strconv.AppendUint(b, q, 10)
	}
	// The shortest of: the largest binary suffix that divides q, the largest decimal
	// one that does, and none; binary first on a tie, then decimal.
	best := strconv.AppendUint(nil, q, 10)
	for k := 6; k >= 1; k-- {
		if q%pow10(3*k) == 0 {
			if c := append(strconv.AppendUint(nil, q/pow10(3*k), 10), "kMGTPE"[k-1]); len(c) <= len(best) {
				best = c
			}
			break
		}
	}
	for k := 6; k >= 1; k-- {
		if q%(1<<(10*k)) == 0 {
			if c := append(strconv.AppendUint(nil, q>>(10*k), 10), "KMGTPE"[k-1], 'i'); len(c) <= len(best) {
				best = c
			}
			break
		}
	}
	return append(b, best...)
}
