package resource

// Vector holds a real number per dimension: shares, time-weighted averages (eq. 14) and
// compression ratios (eq. 1, 7). Like Tuple it is a comparable value whose arithmetic
// allocates nothing.
type Vector [MaxDims]float64

// Max returns the largest element.
func (v Vector) Max() float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

// MaxOver returns the largest element among the slots in m, or 0 when m is empty.
func (v Vector) MaxOver(m Mask) float64 {
	r := 0.0
	first := true
	for i, x := range v {
		if m.Has(i) && (first || x > r) {
			r, first = x, false
		}
	}
	return r
}

// Round returns the tuple of v's elements rounded to the nearest integer as
// Tuple.Scale rounds.
func (v Vector) Round() Tuple {
	var t Tuple
	for i, x := range v {
		t[i] = roundSat(x)
	}
	return t
}

// Uniform returns the vector holding x in the slots of m and zero elsewhere, e.g.
// Uniform(schema.Compressible(), 0.1) for "10% compression on every compressible
// dimension".
func Uniform(m Mask, x float64) Vector {
	var v Vector
	for i := range v {
		if m.Has(i) {
			v[i] = x
		}
	}
	return v
}

// Float returns t as a Vector.
func (t Tuple) Float() Vector {
	var v Vector
	for i, x := range t {
		v[i] = float64(x)
	}
	return v
}
