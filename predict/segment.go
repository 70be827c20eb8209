package predict

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Sample is one measurement of a task's (or server's) resource usage: from At until the
// next sample's At, the usage was Usage. Samples of a series may be irregularly spaced.
type Sample struct {
	// At is when the sample was taken, as an offset from the caller's epoch.
	At time.Duration
	// Usage is the amount used on every dimension, in the schema's base units.
	Usage resource.Tuple
}

// NewSamples builds a series from measurements taken as real numbers (for example
// averages computed from /proc counters): sample i is taken at at[i] and holds usage[i]
// rounded to the nearest integer amount. It fails, naming the sample, when the lengths
// differ, a time is not after the previous one, or an amount is NaN, infinite, negative
// or outside the schema.
func NewSamples(schema *resource.Schema, at []time.Duration, usage []resource.Vector) ([]Sample, error) {
	if schema == nil {
		return nil, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	if len(at) != len(usage) {
		return nil, fieldErr("usage", fmt.Sprintf("%d values for %d times", len(usage), len(at)), ErrStageCount)
	}
	out := make([]Sample, len(at))
	for i := range at {
		if i > 0 && at[i] <= at[i-1] {
			return nil, fieldErr(fmt.Sprintf("samples[%d].At", i), at[i], ErrUnsorted)
		}
		out[i].At = at[i]
		for d, x := range usage[i] {
			switch {
			case !field.Finite(x) || x < 0:
				return nil, fieldErr(fmt.Sprintf("samples[%d].Usage[%s]", i, schema.DimName(d)), x, ErrInvalidValue)
			case d >= schema.Len() && x != 0:
				return nil, wrapf(&resource.DimensionError{Dim: schema.DimName(d), Value: x, Err: resource.ErrOutsideSchema}, "samples[%d]", i)
			}
			out[i].Usage[d] = amountOf(x)
		}
	}
	return out, nil
}

// Defaults of the segmenter. The paper gives no values; these suit series of a few
// hundred samples such as a day at five-minute intervals.
const (
	// DefaultChangeThreshold: neighbouring stages whose demands differ by at most 20%
	// of the series' peak on every dimension are one stage.
	DefaultChangeThreshold = 0.2
	// DefaultMaxStages caps a profile at 8 stages (the fine-grained matcher's budget
	// is set for 8-stage tasks).
	DefaultMaxStages = 8
)

type segConfig struct {
	threshold float64
	minStage  time.Duration
	maxStages int
	quantile  float64 // 1 = peak
	last      time.Duration
}

// SegmentOption configures a Segmenter.
type SegmentOption func(*segConfig) error

// WithChangeThreshold sets the relative change that starts a new stage, in [0, 1]: two
// neighbouring stages stay apart when their demands differ on some dimension by more
// than threshold × the series' peak on that dimension. 0 splits on every change; 1
// merges everything the other limits allow.
func WithChangeThreshold(threshold float64) SegmentOption {
	return func(c *segConfig) error {
		if !(threshold >= 0 && threshold <= 1) {
			return fieldErr("change threshold", threshold, ErrInvalidOption)
		}
		c.threshold = threshold
		return nil
	}
}

// WithMinStage sets the shortest stage kept, d ≥ 0 (default 0: no minimum). A shorter
// stage is merged into the neighbour whose demand is closer; a profile shorter than d
// becomes one stage.
func WithMinStage(d time.Duration) SegmentOption {
	return func(c *segConfig) error {
		if d < 0 {
			return fieldErr("minimum stage length", d, ErrInvalidOption)
		}
		c.minStage = d
		return nil
	}
}

// WithMaxStages caps the number of stages, n ≥ 1 (default DefaultMaxStages).
func WithMaxStages(n int) SegmentOption {
	return func(c *segConfig) error {
		if n < 1 {
			return fieldErr("maximum stages", n, ErrInvalidOption)
		}
		c.maxStages = n
		return nil
	}
}

// WithPercentile sets a stage's demand to the time-weighted q-quantile of its samples on
// each dimension instead of the peak, q in (0, 1]; 1 is the peak (the default). A lower
// quantile ignores short spikes at the price of understating them.
func WithPercentile(q float64) SegmentOption {
	return func(c *segConfig) error {
		if !(q > 0 && q <= 1) {
			return fieldErr("percentile", q, ErrInvalidOption)
		}
		c.quantile = q
		return nil
	}
}

// WithLastDuration sets how long the last sample holds, d > 0. By default it holds as
// long as the interval before it; a series of one sample needs this option.
func WithLastDuration(d time.Duration) SegmentOption {
	return func(c *segConfig) error {
		if d <= 0 {
			return fieldErr("last sample duration", d, ErrInvalidOption)
		}
		c.last = d
		return nil
	}
}

// Segmenter turns a usage series into a demand profile (docs/methods.md §2, "execution
// stages" Reading): a new stage where the demand changes materially on any dimension,
// short stages merged, the number of stages capped, each stage's demand the per-dimension
// peak of its samples (or a percentile).
//
// The method is ours (the Reading in docs/methods.md §2 fixes only the criteria):
// bottom-up segmentation, i.e. agglomerative merging of neighbours. Every sample starts
// as a stage of its own, lasting until the next sample; then
//
//  1. change: the two neighbouring stages whose demands differ least (the largest
//     per-dimension difference, relative to the series' peak on that dimension) are
//     merged, again and again, while that difference is within the change threshold —
//     so what remains apart differs materially;
//  2. minimum length: the shortest stage under the minimum is merged into its closer
//     neighbour, until none is left (or one stage remains);
//  3. cap: while there are more stages than the cap, the neighbouring pair whose merge
//     adds the least reserved resource-time (the difference on each dimension times the
//     duration of the lower stage, relative to the peak) is merged.
//
// A merged stage's demand is recomputed from its samples, so with the peak rule it is the
// larger of the two and a profile never understates a sample. Equal candidates go to the
// merge of fewer samples, then to the earlier stage, so the result is deterministic.
// Cost: O(n log n) for n samples with the peak rule. The percentile rule keeps each
// stage's samples sorted and merges them like merge sort, O(stage length) per merge:
// O(n log n) when merges are balanced (the tie rule makes runs of equal samples merge as
// a balanced tree), O(n²) at worst.
//
// A Segmenter holds only its configuration: it is immutable and safe for concurrent use.
type Segmenter struct {
	cfg segConfig
}

// NewSegmenter returns a Segmenter with the given options. It fails on an invalid option.
func NewSegmenter(opts ...SegmentOption) (*Segmenter, error) {
	cfg := segConfig{threshold: DefaultChangeThreshold, maxStages: DefaultMaxStages, quantile: 1}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Segmenter{cfg: cfg}, nil
}

// Segment is NewSegmenter(opts...).Segment(schema, samples).
func Segment(schema *resource.Schema, samples []Sample, opts ...SegmentOption) (stage.Profile, error) {
	sg, err := NewSegmenter(opts...)
	if err != nil {
		return stage.Profile{}, err
	}
	return sg.Segment(schema, samples)
}

// Segment turns samples into a profile in schema. The profile starts at the first
// sample (offset 0 is samples[0].At) and lasts until the last sample's end, so stage
// At(s.At − samples[0].At) covers sample s. It fails, naming the sample, on an empty
// series, a single sample without WithLastDuration, times that do not strictly
// increase, a span too long to represent, or a usage that is negative or outside the
// schema.
func (sg *Segmenter) Segment(schema *resource.Schema, samples []Sample) (stage.Profile, error) {
	w, err := sg.divide(schema, samples, sg.cfg.last, 0)
	if err != nil {
		return stage.Profile{}, err
	}
	return w.profile(schema)
}

// divide validates samples (the last lasting last, or as long as the interval before it
// when last is 0) and runs the three phases of segmentation on them, with stages at
// least as long as the larger of the configured minimum and minStage.
func (sg *Segmenter) divide(schema *resource.Schema, samples []Sample, last, minStage time.Duration) (*work, error) {
	w, err := sg.newWork(schema, samples, last)
	if err != nil {
		return nil, err
	}
	w.byChange(sg.cfg.threshold)
	w.byLength(max(sg.cfg.minStage, minStage))
	w.byCap(sg.cfg.maxStages)
	return w, nil
}

// maxSamples is the longest series Segment accepts.
const maxSamples = math.MaxInt32

// work is the state of one segmentation: stages are runs of samples [lo, next[lo]),
// linked in time order and identified by their first sample.
type work struct {
	cfg     *segConfig
	samples []Sample
	dur     []time.Duration           // per sample
	inv     [resource.MaxDims]float64 // 1 / the series' peak per dimension, 0 when the peak is 0
	dims    int

	next, prev []int // per stage start; next of the last stage is n, prev of the first -1
	sdur       []time.Duration
	dem        []resource.Tuple
	ver        []uint32
	alive      []bool
	count      int

	sorted  [resource.MaxDims][]valueWeight // percentile rule: each stage's samples, sorted by value, per dimension
	scratch []valueWeight
	pairs   pairHeap
	lens    heap[lenItem]
}

type lenItem struct {
	dur   time.Duration
	start int
	ver   uint32
}

type valueWeight struct {
	v int64
	w time.Duration
}

type pairItem struct {
	key        float64
	size       int32 // samples in the merged stage
	left       int32 // the first sample of the left stage
	verL, verR uint32
}

func (sg *Segmenter) newWork(schema *resource.Schema, samples []Sample, last time.Duration) (*work, error) {
	if schema == nil {
		return nil, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	n := len(samples)
	if n == 0 {
		return nil, fieldErr("samples", 0, ErrNoSamples)
	}
	if n > maxSamples {
		return nil, fieldErr("samples", n, ErrTooManySamples)
	}
	if n == 1 && last == 0 {
		return nil, fieldErr("samples", "one sample and no WithLastDuration", ErrNoSamples)
	}
	w := &work{cfg: &sg.cfg, samples: samples, dims: schema.Len(), dur: make([]time.Duration, n)}
	var span time.Duration
	for i, s := range samples {
		if err := schema.Validate(s.Usage); err != nil {
			return nil, wrapf(err, "samples[%d].Usage", i)
		}
		if i+1 < n {
			d := samples[i+1].At - s.At
			if samples[i+1].At <= s.At {
				return nil, fieldErr(fmt.Sprintf("samples[%d].At", i+1), samples[i+1].At, ErrUnsorted)
			}
			if d <= 0 { // the difference overflowed
				return nil, fieldErr(fmt.Sprintf("samples[%d].At", i+1), samples[i+1].At, ErrBadDuration)
			}
			w.dur[i] = d
		}
		for d := 0; d < w.dims; d++ {
			w.inv[d] = max(w.inv[d], float64(s.Usage[d])) // the peak, inverted below
		}
	}
	for d := 0; d < w.dims; d++ {
		if w.inv[d] > 0 {
			w.inv[d] = 1 / w.inv[d]
		}
	}
	if last == 0 {
		last = w.dur[n-2]
	}
	w.dur[n-1] = last
	for _, d := range w.dur {
		if span > stage.Forever-d {
			return nil, fieldErr("samples", "span longer than the longest Duration", ErrBadDuration)
		}
		span += d
	}
	w.next, w.prev = make([]int, n), make([]int, n)
	w.sdur, w.dem = make([]time.Duration, n), make([]resource.Tuple, n)
	w.ver, w.alive = make([]uint32, n), make([]bool, n)
	for i := range samples {
		w.next[i], w.prev[i] = i+1, i-1
		w.sdur[i], w.dem[i], w.alive[i] = w.dur[i], samples[i].Usage, true
	}
	w.count = n
	if sg.cfg.quantile < 1 {
		for d := 0; d < w.dims; d++ {
			w.sorted[d] = make([]valueWeight, n)
			for i, s := range samples {
				w.sorted[d][i] = valueWeight{s.Usage[d], w.dur[i]}
			}
		}
	}
	return w, nil
}

// diff is the largest per-dimension difference between two demands, relative to the
// series' peak on that dimension (dimensions the series never uses are ignored).
func (w *work) diff(a, b int) float64 {
	m := 0.0
	for d := 0; d < w.dims; d++ {
		m = max(m, math.Abs(float64(w.dem[a][d])-float64(w.dem[b][d]))*w.inv[d])
	}
	return m
}

// capCost is the reserved resource-time a merge of a and b adds under the peak rule:
// per dimension, the difference times the lower stage's duration, relative to the peak.
func (w *work) capCost(a, b int) float64 {
	c := 0.0
	for d := 0; d < w.dims; d++ {
		x, y := float64(w.dem[a][d]), float64(w.dem[b][d])
		switch {
		case x < y:
			c += (y - x) * w.inv[d] * float64(w.sdur[a])
		case y < x:
			c += (x - y) * w.inv[d] * float64(w.sdur[b])
		}
	}
	return c
}

// merge joins stage b (the next of a) into a and recomputes a's demand.
func (w *work) merge(a int) {
	b := w.next[a]
	w.next[a] = w.next[b]
	if w.next[b] < len(w.samples) {
		w.prev[w.next[b]] = a
	}
	w.alive[b] = false
	w.sdur[a] += w.sdur[b]
	w.ver[a]++
	w.count--
	if w.cfg.quantile >= 1 {
		w.dem[a] = w.dem[a].Max(w.dem[b])
		return
	}
	w.dem[a] = w.quantile(a, b, w.next[a])
}

// quantile merges the sorted runs of two neighbouring stages, samples [lo, mid) and
// [mid, hi), on every dimension, and returns the merged stage's time-weighted
// q-quantile: per dimension, the smallest value v such that samples at most v hold for
// at least q of the stage's time. Keeping each stage's samples sorted in place (as merge
// sort does) makes a merge cost O(hi − lo) per dimension.
func (w *work) quantile(lo, mid, hi int) resource.Tuple {
	var t resource.Tuple
	want := w.cfg.quantile * float64(w.sdur[lo])
	for d := 0; d < w.dims; d++ {
		run := w.sorted[d]
		tmp := append(w.scratch[:0], run[lo:mid]...)
		i, j, k := 0, mid, lo
		for i < len(tmp) && j < hi {
			if run[j].v < tmp[i].v {
				run[k] = run[j]
				j++
			} else {
				run[k] = tmp[i]
				i++
			}
			k++
		}
		copy(run[k:], tmp[i:]) // what is left of run[mid:hi] is already in place
		w.scratch = tmp
		cum := 0.0
		t[d] = run[hi-1].v
		for _, x := range run[lo:hi] {
			cum += float64(x.w)
			if cum >= want {
				t[d] = x.v
				break
			}
		}
	}
	return t
}

// byChange is phase 1: merge the most similar neighbours while they differ by at most
// threshold.
func (w *work) byChange(threshold float64) {
	w.mergePairs(w.diff, func(key float64) bool { return key <= threshold })
}

// byCap is phase 3: merge the cheapest neighbours while there are too many stages.
func (w *work) byCap(maxStages int) {
	w.mergePairs(w.capCost, func(float64) bool { return w.count > maxStages })
}

// mergePairs repeatedly merges the alive neighbouring pair of least key (ties: earlier)
// while more(key) holds, using a heap of candidate pairs with lazy invalidation.
func (w *work) mergePairs(key func(a, b int) float64, more func(float64) bool) {
	n := len(w.samples)
	w.pairs = w.pairs[:0]
	for a := 0; a < n; a = w.next[a] {
		if b := w.next[a]; b < n {
			w.pairs = append(w.pairs, w.pair(key, a))
		}
	}
	w.pairs.init()
	for len(w.pairs) > 0 && w.count > 1 {
		p := w.pairs.pop()
		a := int(p.left)
		if !w.alive[a] || w.ver[a] != p.verL {
			continue
		}
		b := w.next[a]
		if b >= n || w.ver[b] != p.verR {
			continue
		}
		if !more(p.key) {
			return
		}
		w.merge(a)
		if pr := w.prev[a]; pr >= 0 {
			w.pairs.push(w.pair(key, pr))
		}
		if nx := w.next[a]; nx < n {
			w.pairs.push(w.pair(key, a))
		}
	}
}

// pairLess orders candidate merges by key; on a tie the merge of fewer samples comes
// first (equal neighbours then merge as a balanced tree rather than a chain, which keeps
// the percentile rule's merges cheap), then the earlier.
// pair is the candidate merge of stage a with the next one.
func (w *work) pair(key func(a, b int) float64, a int) pairItem {
	b := w.next[a]
	return pairItem{key: key(a, b), size: int32(w.next[b] - a), left: int32(a), verL: w.ver[a], verR: w.ver[b]}
}

func pairLess(x, y pairItem) bool {
	if x.key != y.key {
		return x.key < y.key
	}
	if x.size != y.size {
		return x.size < y.size
	}
	return x.left < y.left
}

// pairHeap is a binary min-heap of candidate merges (a specialised copy of heap, for
// the hot loop of segmentation).
type pairHeap []pairItem

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h pairHeap) down(i int) {
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && pairLess(h[c+1], h[c]) {
			c++
		}
		if !pairLess(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (h *pairHeap) push(x pairItem) {
	*h = append(*h, x)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !pairLess(q[i], q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *pairHeap) pop() pairItem {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	q.down(0)
	*h = q
	return top
}

// heap is a binary min-heap ordered by less.
type heap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *heap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *heap[T]) pop() T {
	it := h.items
	top := it[0]
	last := len(it) - 1
	it[0] = it[last]
	it = it[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(it) {
			break
		}
		if c+1 < len(it) && h.less(it[c+1], it[c]) {
			c++
		}
		if !h.less(it[c], it[i]) {
			break
		}
		it[i], it[c] = it[c], it[i]
		i = c
	}
	h.items = it
	return top
}

// byLength is phase 2: while the shortest stage is shorter than minStage, merge it into
// the neighbour whose demand is closer (the earlier one on a tie).
func (w *work) byLength(minStage time.Duration) {
	if minStage <= 0 {
		return
	}
	n := len(w.samples)
	w.lens.items = w.lens.items[:0]
	w.lens.less = func(x, y lenItem) bool {
		if x.dur != y.dur {
			return x.dur < y.dur
		}
		return x.start < y.start
	}
	for a := 0; a < n; a = w.next[a] {
		if w.sdur[a] < minStage {
			w.lens.push(lenItem{w.sdur[a], a, w.ver[a]})
		}
	}
	for len(w.lens.items) > 0 && w.count > 1 {
		it := w.lens.pop()
		s := it.start
		if !w.alive[s] || w.ver[s] != it.ver {
			continue
		}
		pr, nx := w.prev[s], w.next[s]
		into := s // merge the next stage into s
		if pr >= 0 && (nx >= n || w.diff(pr, s) <= w.diff(s, nx)) {
			into = pr // merge s into the previous stage
		}
		w.merge(into)
		if w.sdur[into] < minStage {
			w.lens.push(lenItem{w.sdur[into], into, w.ver[into]})
		}
	}
}

// profile lays the remaining stages end to end.
func (w *work) profile(schema *resource.Schema) (stage.Profile, error) {
	stages := make([]stage.Stage, 0, w.count)
	for a := 0; a < len(w.samples); a = w.next[a] {
		stages = append(stages, stage.Stage{Duration: w.sdur[a], Demand: w.dem[a]})
	}
	return stage.NewProfile(schema, stages...)
}
