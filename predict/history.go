package predict

import (
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Defaults of a key's history (SimilarTask, WithHistory).
const (
	// DefaultHistory is how many recent observations a key's history holds.
	DefaultHistory = 8
	// DefaultBuckets is how many equal slices of normalised time each observation is
	// summarised into: stage boundaries found by re-division are multiples of 1/32 of
	// the task's duration.
	DefaultBuckets = 32
	// maxBuckets bounds WithHistory's bucket count.
	maxBuckets = 1024
	// maxHistory bounds WithHistory's observation count.
	maxHistory = 256
)

// history is a key's bounded summary of its most recent observations (docs/methods.md
// §2, "re-division"): each observation — a series or a profile — laid on normalised time
// [0, 1) and cut into b equal buckets, each bucket keeping the peak usage seen in it on
// every dimension and the largest compression over the compressible dimensions. It
// holds at most k observations, the oldest replaced first, so its size is fixed when the
// key is first observed, whatever the length of the series: k × b × dims int64 peaks,
// k × b float32 ratios and k × (dims + 1) eight-byte totals — with the defaults and
// four dimensions, about 9 KiB a key. (A history restored from a checkpoint holds only
// the observations it was given, and takes its full size when it is next added to.)
type history struct {
	k, b, dims int
	n, head    int // observations held; index of the oldest

	peak  []int64   // [obs][bucket][dim]
	rc    []float32 // [obs][bucket]
	rcObs []float64 // [obs]: the observation's largest compression
	count []int32   // [obs]: the number of stages the observation was divided into
}

// piece is a span of an observation with constant usage: a sample, or a stage.
type piece struct {
	dur   float64 // nanoseconds, > 0
	usage resource.Tuple
	rc    float64 // largest compression ratio over the compressible dimensions
}

func newHistory(k, b, dims int) *history {
	return &history{
		k: k, b: b, dims: dims,
		peak:  make([]int64, k*b*dims),
		rc:    make([]float32, k*b),
		rcObs: make([]float64, k),
		count: make([]int32, k),
	}
}

// restoredHistory is a history of k observations of b buckets that holds room for its
// n observations only (n ≤ k), in slots 0 to n − 1, oldest first: what Restore
// allocates, in proportion to what the checkpoint holds. add grows it to its full size.
func restoredHistory(k, b, dims, n int) *history {
	h := newHistory(n, b, dims)
	h.k, h.n = k, n
	return h
}

// grow gives a restored history (see restoredHistory) its full size, keeping its
// observations in their slots: while it is not full its oldest observation is in slot
// 0 (head moves only once it is full), so slot i keeps the i-th oldest.
func (h *history) grow() {
	full := newHistory(h.k, h.b, h.dims)
	copy(full.peak, h.peak)
	copy(full.rc, h.rc)
	copy(full.rcObs, h.rcObs)
	copy(full.count, h.count)
	full.n, full.head = h.n, h.head
	*h = *full
}

// add lays an observation's pieces on the history's buckets, with the number of stages
// it was divided into, replacing the oldest observation when the history is full.
func (h *history) add(ps []piece, stages int) {
	if len(h.count) < h.k {
		h.grow() // restored with room for its observations only
	}
	slot := (h.head + h.n) % h.k
	if h.n == h.k {
		slot = h.head
		h.head = (h.head + 1) % h.k
	} else {
		h.n++
	}
	peak := h.peak[slot*h.b*h.dims : (slot+1)*h.b*h.dims]
	rc := h.rc[slot*h.b : (slot+1)*h.b]
	clear(peak)
	clear(rc)
	h.rcObs[slot] = 0
	h.count[slot] = int32(min(stages, math.MaxInt32))
	var total float64
	for _, p := range ps {
		total += p.dur
	}
	width := total / float64(h.b)
	// A piece marks the buckets it overlaps by more than rounding: one ending on a
	// bucket's edge must not mark the next bucket.
	const eps = 1e-9
	var t float64
	for _, p := range ps {
		lo := int(math.Floor(t/width + eps))
		t += p.dur
		hi := int(math.Ceil(t/width-eps)) - 1
		lo, hi = min(max(lo, 0), h.b-1), min(max(hi, lo), h.b-1)
		h.rcObs[slot] = max(h.rcObs[slot], p.rc)
		for j := lo; j <= hi; j++ {
			rc[j] = max(rc[j], float32(p.rc))
			cell := peak[j*h.dims : (j+1)*h.dims]
			for d := 0; d < h.dims; d++ {
				cell[d] = max(cell[d], p.usage[d])
			}
		}
	}
}

// slot is the slot of the i-th held observation, oldest first.
func (h *history) slot(i int) int { return (h.head + i) % h.k }

// othersMostly reports whether most held observations were divided into a number of
// stages other than n.
func (h *history) othersMostly(n int) bool {
	other := 0
	for i := 0; i < h.n; i++ {
		if int(h.count[h.slot(i)]) != n {
			other++
		}
	}
	return 2*other > h.n
}

// span returns the buckets [lo, hi) wholly inside the relative interval [a, b), lo ≥ hi
// when none is (a stage thinner than two buckets may hold none: a bucket astride its
// boundary also holds its neighbour's usage).
func (h *history) span(a, b float64) (int, int) {
	const eps = 1e-9
	lo := int(math.Ceil(a*float64(h.b) - eps))
	hi := int(math.Floor(b*float64(h.b) + eps))
	return max(lo, 0), min(hi, h.b)
}

// stagePeak is observation slot's per-dimension peak over buckets [lo, hi), and its
// largest compression there.
func (h *history) stagePeak(slot, lo, hi int) (resource.Vector, float64) {
	var v resource.Vector
	var rc float64
	for j := lo; j < hi; j++ {
		cell := h.peak[(slot*h.b+j)*h.dims:]
		for d := 0; d < h.dims; d++ {
			v[d] = max(v[d], float64(cell[d]))
		}
		rc = max(rc, float64(h.rc[slot*h.b+j]))
	}
	return v, rc
}

// update is the eq. 8 Reading over the held observations' peaks in buckets [lo, hi),
// oldest first: the first observation's, then each next weighing w × (1 − its
// compression there).
func (h *history) update(w float64, lo, hi int) resource.Vector {
	var est resource.Vector
	for i := 0; i < h.n; i++ {
		peak, rc := h.stagePeak(h.slot(i), lo, hi)
		if i == 0 {
			est = peak
			continue
		}
		wi := w * (1 - rc)
		for d := 0; d < h.dims; d++ {
			est[d] = (1-wi)*est[d] + wi*peak[d]
		}
	}
	return est
}

// envelope is, on dimension d, the q-quantile of the cells (observation × bucket) of
// buckets [lo, hi): the smallest amount that at least q of the cells do not exceed,
// every cell weighing the same. q = 1 is their peak.
func (h *history) envelope(d, lo, hi int, q float64, scratch []int64) (int64, []int64) {
	if q >= 1 {
		var v int64
		for i := 0; i < h.n; i++ {
			for j, slot := lo, h.slot(i); j < hi; j++ {
				v = max(v, h.peak[(slot*h.b+j)*h.dims+d])
			}
		}
		return v, scratch
	}
	vals := scratch[:0]
	for i := 0; i < h.n; i++ {
		for j, slot := lo, h.slot(i); j < hi; j++ {
			vals = append(vals, h.peak[(slot*h.b+j)*h.dims+d])
		}
	}
	if len(vals) == 0 {
		return 0, vals
	}
	slices.Sort(vals)
	k := int(math.Ceil(q*float64(len(vals)))) - 1
	return vals[min(max(k, 0), len(vals)-1)], vals
}

// level is the eq. 8 Reading applied bucket by bucket (update): what re-division
// divides.
func (h *history) level(w float64) []resource.Vector {
	out := make([]resource.Vector, h.b)
	for j := range out {
		out[j] = h.update(w, j, j+1)
	}
	return out
}

// bucketSamples turns a level curve into a series of b samples spanning total
// nanoseconds, for the Segmenter.
func bucketSamples(level []resource.Vector, total float64) ([]Sample, time.Duration) {
	total = min(total, float64(stage.Forever/2)) // saturated profiles: keep the times in range
	width := max(time.Duration(total/float64(len(level))), 1)
	out := make([]Sample, len(level))
	for j, v := range level {
		out[j].At = time.Duration(j) * width
		for d := range v {
			out[j].Usage[d] = amountOf(v[d])
		}
	}
	return out, width
}
