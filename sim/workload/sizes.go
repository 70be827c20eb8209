package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/finegrain/finegrain/internal/field"
)

// Knot is one point of a quantile table: a fraction P of jobs have an input of at most
// Bytes.
type Knot struct {
	P     float64
	Bytes float64
}

// QuantileTable is a distribution of job input sizes given by its quantiles: knots
// (P, Bytes) from P = 0 (the smallest size) to P = 1 (the largest), with log-linear
// interpolation between them (log Bytes is linear in P), the natural scale for sizes
// spanning bytes to terabytes. It describes positive sizes only.
//
// A QuantileTable is immutable and safe for concurrent use. Build one with
// NewQuantileTable or FitQuantileTable; the zero QuantileTable has no knots and is not
// a distribution (WithInputSizes refuses it).
type QuantileTable struct {
	name  string
	knots []Knot
	logs  []float64 // ln Bytes per knot
}

// NewQuantileTable validates knots and returns them as a table. P must start at 0, end
// at 1 and strictly increase; Bytes must be at least 1, below 2⁶³ (an int64 byte
// count) and non-decreasing. The error names the knot.
func NewQuantileTable(name string, knots []Knot) (*QuantileTable, error) {
	if len(knots) < 2 {
		return nil, fieldErr("knots", len(knots), ErrEmpty)
	}
	q := &QuantileTable{name: name, knots: slices.Clone(knots), logs: make([]float64, len(knots))}
	for i, k := range knots {
		f := func(n string) string { return fmt.Sprintf("knots[%d].%s", i, n) }
		switch {
		case !field.Finite(k.P) || k.P < 0 || k.P > 1:
			return nil, fieldErr(f("P"), k.P, ErrInvalidValue)
		case i == 0 && k.P != 0:
			return nil, fieldErr(f("P"), fmt.Sprintf("%v, want 0 for the first knot", k.P), ErrInvalidValue)
		case i == len(knots)-1 && k.P != 1:
			return nil, fieldErr(f("P"), fmt.Sprintf("%v, want 1 for the last knot", k.P), ErrInvalidValue)
		case i > 0 && k.P <= knots[i-1].P:
			return nil, fieldErr(f("P"), fmt.Sprintf("%v, not above the previous %v", k.P, knots[i-1].P), ErrInvalidValue)
		case !field.Finite(k.Bytes) || k.Bytes < 1 || k.Bytes >= math.MaxInt64: // float64(MaxInt64) = 2⁶³
			return nil, fieldErr(f("Bytes"), k.Bytes, ErrInvalidValue)
		case i > 0 && k.Bytes < knots[i-1].Bytes:
			return nil, fieldErr(f("Bytes"), fmt.Sprintf("%v, below the previous %v", k.Bytes, knots[i-1].Bytes), ErrInvalidValue)
		}
		q.logs[i] = math.Log(k.Bytes)
	}
	return q, nil
}

func mustTable(name string, knots []Knot) *QuantileTable {
	q, err := NewQuantileTable(name, knots)
	if err != nil {
		panic(err)
	}
	return q
}

// FitQuantileTable fits a table to observed sizes: for each probability in ps (which
// must start at 0, end at 1 and increase), the empirical quantile of the positive sizes
// (zeros are left out) interpolated between order statistics on the log scale (the
// "type 7" estimator of log size), rounded to three significant digits and made
// non-decreasing. This is how FB2009 and FB2010 were fitted.
func FitQuantileTable(name string, sizes []int64, ps []float64) (*QuantileTable, error) {
	var pos []float64
	for _, s := range sizes {
		if s > 0 {
			pos = append(pos, float64(s))
		}
	}
	if len(pos) == 0 {
		return nil, fieldErr("sizes", "no positive size", ErrEmpty)
	}
	slices.Sort(pos)
	knots := make([]Knot, len(ps))
	n := float64(len(pos) - 1)
	for i, p := range ps {
		if !field.Finite(p) || p < 0 || p > 1 {
			return nil, fieldErr(fmt.Sprintf("ps[%d]", i), p, ErrInvalidValue)
		}
		h := n * p
		lo := int(math.Floor(h))
		hi := min(lo+1, len(pos)-1)
		a, b := math.Log(pos[lo]), math.Log(pos[hi])
		v := sig3(math.Exp(a + (h-float64(lo))*(b-a)))
		if i > 0 {
			v = max(v, knots[i-1].Bytes)
		}
		knots[i] = Knot{P: p, Bytes: v}
	}
	return NewQuantileTable(name, knots)
}

// sig3 rounds x > 0 to three significant digits.
func sig3(x float64) float64 {
	e := math.Floor(math.Log10(x))
	m := math.Pow(10, e-2)
	return math.Round(x/m) * m
}

// Name identifies the table, e.g. "FB-2009".
func (q *QuantileTable) Name() string { return q.name }

// Knots returns a copy of the knots.
func (q *QuantileTable) Knots() []Knot { return slices.Clone(q.knots) }

// Min is the smallest size the table gives (its P = 0 knot).
func (q *QuantileTable) Min() float64 { return q.knots[0].Bytes }

// Max is the largest size the table gives (its P = 1 knot).
func (q *QuantileTable) Max() float64 { return q.knots[len(q.knots)-1].Bytes }

// Quantile returns the size below which a fraction p of jobs fall; p is clamped to
// [0, 1] (NaN counts as 0).
func (q *QuantileTable) Quantile(p float64) float64 {
	if !(p > 0) {
		return q.knots[0].Bytes
	}
	if p >= 1 {
		return q.Max()
	}
	// The first knot with P > p ends the segment containing p.
	i := sort.Search(len(q.knots), func(i int) bool { return q.knots[i].P > p })
	a, b := q.knots[i-1], q.knots[i]
	if a.Bytes == b.Bytes {
		return a.Bytes
	}
	f := (p - a.P) / (b.P - a.P)
	x := math.Exp(q.logs[i-1] + f*(q.logs[i]-q.logs[i-1]))
	return max(a.Bytes, min(b.Bytes, x)) // exp(log(x)) may miss x by an ulp

}

// CDF returns the fraction of jobs with an input of at most x bytes.
func (q *QuantileTable) CDF(x float64) float64 {
	switch {
	case !(x >= q.knots[0].Bytes): // also NaN
		return 0
	case x >= q.Max():
		return 1
	}
	// The last knot with Bytes ≤ x starts the segment containing x; the next one is
	// larger than x, so the segment is not flat.
	i := sort.Search(len(q.knots), func(i int) bool { return q.knots[i].Bytes > x }) - 1
	a, b := q.knots[i], q.knots[i+1]
	f := (math.Log(x) - q.logs[i]) / (q.logs[i+1] - q.logs[i])
	return a.P + f*(b.P-a.P)
}

// Sample draws one size in bytes (at least 1) from the table truncated to sizes of at
// most max bytes (max ≤ 0: no truncation), by inverting the CDF on [0, CDF(max)]: the
// shape below max is kept, nothing piles up at max.
func (q *QuantileTable) Sample(r *rand.Rand, max int64) int64 {
	top := 1.0
	if max > 0 {
		top = q.CDF(float64(max))
	}
	x := q.Quantile(r.Float64() * top)
	v := int64(math.Round(x))
	if v < 1 {
		v = 1
	}
	if max > 0 && v > max {
		v = max
	}
	return v
}

// Mean returns the mean size of the table truncated at max bytes (max ≤ 0: no
// truncation), by numeric integration of the quantile function.
func (q *QuantileTable) Mean(max int64) float64 {
	top := 1.0
	if max > 0 {
		top = q.CDF(float64(max))
	}
	const n = 100000
	var s float64
	for i := 0; i < n; i++ {
		s += q.Quantile((float64(i) + 0.5) / n * top)
	}
	return s / n
}

// KS returns the Kolmogorov–Smirnov distance between the table and the empirical
// distribution of the positive sizes: the largest vertical gap between the two CDFs,
// checked on both sides of every distinct observed size. 0 is a perfect fit; 1 is
// returned when there is no positive size.
func (q *QuantileTable) KS(sizes []int64) float64 {
	var pos []int64
	for _, s := range sizes {
		if s > 0 {
			pos = append(pos, s)
		}
	}
	if len(pos) == 0 {
		return 1
	}
	slices.Sort(pos)
	n := float64(len(pos))
	d := 0.0
	for j := 0; j < len(pos); {
		k := j
		for k < len(pos) && pos[k] == pos[j] {
			k++
		}
		x := float64(pos[j])
		at := q.CDF(x)
		before := q.CDF(math.Nextafter(x, 0))
		d = max(d, math.Abs(at-float64(k)/n), math.Abs(before-float64(j)/n))
		j = k
	}
	return d
}

// FitProbabilities are the knot probabilities of FB2009 and FB2010: every 2.5%, plus
// 99%, 99.5% and 99.9% for the tail that holds most of the bytes.
func FitProbabilities() []float64 {
	ps := make([]float64, 0, 44)
	for i := 0; i <= 39; i++ {
		ps = append(ps, float64(i)*0.025)
	}
	return append(ps, 0.99, 0.995, 0.999, 1)
}

func knots(ps []float64, bytes ...float64) []Knot {
	k := make([]Knot, len(ps))
	for i := range ps {
		k[i] = Knot{P: ps[i], Bytes: bytes[i]}
	}
	return k
}

// FB2009 returns the input-size distribution of Facebook's 2009 Hadoop workload: the
// one the FGM paper sized its jobs by (FGM §4.1 cites the delay-scheduling paper of
// Zaharia et al., which describes Facebook's October 2009 trace).
//
// Fitted with FitQuantileTable(FitProbabilities()) to the map-input column of SWIM's
// FB-2009_samples_24_times_1hr_0.tsv (5,894 jobs; the 86 with zero input, 1.46%, are
// left out). Fit quality: Kolmogorov–Smirnov distance 0.022 to those 5,808 sizes; the
// mean size below 64 GiB (what FGM draws from by default) is 1.19 GB in the table and in
// the trace; the untruncated mean is 5.6 GB against the trace's 4.6 GB (log-linear
// interpolation over the top 0.1% overweights the last few jobs). The shape: half the
// jobs read under 21 KB, 80% under 6 MB, 5% over 8 GB, the largest 7.6 TB; most bytes
// are in the tail. Log-normal mixtures fitted by EM to the same data reached only KS
// 0.056–0.066 with 3 to 5 components (the trace has spikes at a few exact sizes), so the
// table is embedded instead.
func FB2009() *QuantileTable { return fb2009 }

var fb2009 = mustTable("FB-2009", knots(FitProbabilities(),
	25, 62, 62, 62, 88, 96, 104, 176, 250, 395,
	880, 2370, 3490, 4530, 4950, 5060, 5110, 7700, 10400, 15800,
	20700, 22700, 30000, 37000, 44400, 49200, 51200, 51800, 52800, 64400,
	341000, 1.3e6, 5.71e6, 1.47e7, 4.61e7, 1.31e8, 6.37e8, 2.22e9, 8.17e9, 3.23e10,
	8.24e10, 1.32e11, 4.95e11, 7.55e12))

// FB2010 returns the input-size distribution of Facebook's 2010 Hadoop workload.
//
// Fitted with FitQuantileTable(FitProbabilities()) to the map-input column of SWIM's
// FB-2010_samples_24_times_1hr_0.tsv (24,442 jobs; the 418 with zero input, 1.71%, are
// left out). Fit quality: Kolmogorov–Smirnov distance 0.019 to those 24,024 sizes
// (median 12 MB, p90 32 GB, p99 1.1 TB, max 11.7 TB); mean size below 64 GiB 2.70 GB
// against the trace's 2.82 GB, untruncated 49 GB against 45 GB. Log-normal mixtures
// fitted by EM reached KS 0.033 (2 components) to 0.015 (6 components, 17 parameters);
// the table is used for both traces alike.
func FB2010() *QuantileTable { return fb2010 }

var fb2010 = mustTable("FB-2010", knots(FitProbabilities(),
	1, 1, 302, 404, 602, 870, 1760, 4230, 10400, 14400,
	24900, 48400, 99000, 177000, 358000, 652000, 1.16e6, 2.22e6, 4.23e6, 6.65e6,
	1.22e7, 1.7e7, 2.66e7, 3.9e7, 7.42e7, 9.47e7, 1.81e8, 3.21e8, 6.51e8, 1.08e9,
	1.95e9, 2.8e9, 3.28e9, 3.53e9, 6.45e9, 1.17e10, 3.23e10, 6.19e10, 1.35e11, 3.67e11,
	1.13e12, 2.41e12, 4.08e12, 1.17e13))
