package predict

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Estimator predicts a task's demand profile from the tasks observed before it
// (docs/methods.md §2). It is the seam where other predictors plug in (sandbox runs,
// models, static analysis, history: FGM §2.2). Implementations must be safe for
// concurrent use: observations arrive asynchronously from many goroutines while the
// scheduler reads estimates.
type Estimator interface {
	// Estimate returns the predicted profile for a task of key k. false means the task
	// is unpredictable (no or too little history): Alg. 1 then allocates its requested
	// quantity.
	Estimate(k Key) (stage.Profile, bool)
	// Observe feeds what a task of key k was seen to use. A rejected observation
	// changes nothing.
	Observe(k Key, obs Observation) error
}

// Observation is what one task of a key was seen to do, in one of two forms: the usage
// series a node agent sampled (Series), which the estimator divides into stages itself,
// or a ready demand profile (Profile) with how much the task was compressed in each
// stage. Exactly one of Profile and Series is set.
type Observation struct {
	// Profile is the observed demand over time, stages laid end to end. Its schema must
	// equal the estimator's.
	Profile stage.Profile
	// Compression holds, for each stage of Profile, the compression ratio (eq. 1) the
	// task experienced on each dimension during that stage, in [0, 1], zero on
	// non-compressible dimensions. nil means the task was never compressed; otherwise
	// the length must equal Profile.Len(). Usage observed under compression understates
	// true demand, so a compressed stage counts for less (the eq. 8 Reading).
	Compression []resource.Vector
	// Series is the task's usage as sampled while it ran, with what is known of its
	// compression; SimilarTask divides it into stages with its Segmenter
	// (WithSegmenter). Leave Profile and Compression unset with it.
	Series Series
}

// Plausible reports whether o could have been observed on a node of the given
// capacity, in schema: an error wrapping resource.ErrSchemaMismatch for a profile of
// another schema, or ErrImplausible for a peak (of the profile, else of the series)
// beyond capacity — a demand no such node holds, which an estimator must not learn.
// It checks nothing else: the estimator validates the rest.
func (o *Observation) Plausible(schema *resource.Schema, capacity resource.Tuple) error {
	if o.Profile.Len() > 0 && !schema.Equal(o.Profile.Schema()) {
		return fmt.Errorf("observation of schema %v, not %v: %w", o.Profile.Schema(), schema, resource.ErrSchemaMismatch)
	}
	peak := o.Profile.Peak()
	if o.Profile.Len() == 0 {
		peak = o.Series.Peak()
	}
	if !capacity.Covers(peak) {
		return fmt.Errorf("observed peak %s exceeds the node's capacity %s: %w", schema.Format(peak), schema.Format(capacity), ErrImplausible)
	}
	return nil
}

// RunningObserver is an Estimator that also learns from tasks still running, so that a
// key is predictable before any task of it has finished: its first tasks often start
// together, and the scheduler would otherwise place every one of them on its request.
// SimilarTask is one.
type RunningObserver interface {
	// ObserveRunning feeds what a task of key k still running has been seen to use so
	// far, in the form Observe takes (the series sampled up to now, or the stages run
	// so far). A rejected observation changes nothing.
	ObserveRunning(k Key, obs Observation) error
}

// Redivider is an Estimator that divides its keys' stages again from their recent
// observations, off the scheduling path (docs/methods.md §2, "re-division"; FGM §3's
// periodic, asynchronous re-division). SimilarTask is one.
type Redivider interface {
	// Redivide re-divides every key observed since the last call whose recent
	// observations disagree with its current stages, and returns how many it changed.
	Redivide() int
}

// Resample says how an observation whose number of stages differs from the estimate's is
// mapped onto the estimate's stages.
type Resample uint8

const (
	// ResampleMean gives each estimate stage the time-weighted average (eq. 14) of the
	// observed demand over the same relative interval. It preserves the observation's
	// resource-time (the work the compression argument of eq. 3–4 conserves) and moves
	// continuously with the stage boundaries. The default.
	ResampleMean Resample = iota
	// ResamplePeak gives each estimate stage the per-dimension peak of the observed
	// stages overlapping its relative interval: never below the observation, but a
	// sliver of a neighbouring high stage sets the whole stage.
	ResamplePeak
)

// Defaults of SimilarTask. The paper's eq. 8 is lost, so no weight survives from it.
const (
	// DefaultBaseWeight is the base weight w of the iterative update (eq. 8 Reading):
	// an uncompressed observation moves the estimate 30% of the way towards it.
	DefaultBaseWeight = 0.3
	// DefaultMinObservations is how many observations make a key predictable.
	DefaultMinObservations = 1
	// DefaultMaxKeys caps the keys a SimilarTask remembers before it evicts the least
	// recently used.
	DefaultMaxKeys = 1 << 16
	// DefaultFamilyFactor is how far, as the larger input size over the smaller, a
	// family's size class may be from a key's and still predict it (WithFamily): with
	// the default power-of-two classes, the key's own class or the next one either
	// side, the durations scaled by the SizeScaler. On the simulator's replay of the
	// SWIM FB-2010 trace, factors from 1 to 16 all predicted 99.5–99.9% of the
	// placements, with mean job completions within 3% of each other; on its generated
	// workload, larger factors were a few per cent faster but predicted less memory
	// than the runs used for more of their time (29% at 4 against 22% at 2), and at
	// 1024 runs were killed for it. 2 borrows from the nearest classes only.
	DefaultFamilyFactor = 2
	// DefaultMinRunning is how long a running task must have been seen before it
	// predicts its key (WithRunning). A task seen briefly has often shown only its
	// start-up, which uses less than what follows: on the simulator's generated
	// workload (three stages, the first light) predicting from the first sample (3 s)
	// lengthened jobs in two of its four scenarios, while from 10 s it shortened them
	// in three and left the fourth within 0.4% (three seeds); on the Alibaba 2017
	// replay, where tasks run for minutes, 10 s keeps most of the gain of predicting at
	// once (mean job completion −41% in the cloud environment against −48%; −31%
	// against −33% dedicated; one seed) and 30 s less of it (−30%, −27%).
	DefaultMinRunning = 10 * time.Second
)

type estConfig struct {
	weight   float64
	minObs   int
	maxKeys  int
	bucket   Bucketing
	nearest  float64 // max size factor; 0 = off
	scaler   SizeScaler
	resample Resample
	seg      *Segmenter
	history  int // observations a key's history holds; 0 = none
	buckets  int
	envelope [2]float64    // q on non-compressible, compressible dimensions; 0 = off
	family   float64       // max size factor of a family's class; 0 = no family learning
	famSizes Bucketing     // a family's size classes; nil: LogBuckets(2)
	running  time.Duration // least span of a running task's report that predicts its key
	noRun    bool          // running tasks predict nothing (WithoutRunning)
}

// EstimatorOption configures NewSimilarTask.
type EstimatorOption func(*estConfig) error

// WithBaseWeight sets the base weight w of the iterative update, in (0, 1]: 1 replaces
// the estimate with every uncompressed observation, small values smooth more.
func WithBaseWeight(w float64) EstimatorOption {
	return func(c *estConfig) error {
		if !(w > 0 && w <= 1) {
			return fieldErr("base weight", w, ErrInvalidOption)
		}
		c.weight = w
		return nil
	}
}

// WithMinObservations sets how many observations a key needs before Estimate answers
// for it (Alg. 1's unpredictable(t) below that); n ≥ 1.
func WithMinObservations(n int) EstimatorOption {
	return func(c *estConfig) error {
		if n < 1 {
			return fieldErr("minimum observations", n, ErrInvalidOption)
		}
		c.minObs = n
		return nil
	}
}

// WithMaxKeys caps the number of keys remembered; n ≥ 1. Observing a new key when the cap
// is reached evicts the least recently used key (by Estimate hits and observations).
func WithMaxKeys(n int) EstimatorOption {
	return func(c *estConfig) error {
		if n < 1 {
			return fieldErr("maximum keys", n, ErrInvalidOption)
		}
		c.maxKeys = n
		return nil
	}
}

// WithSizeBuckets learns one profile per bucket of input sizes instead of per exact size
// (see Key for the trade-off). b must not be nil.
func WithSizeBuckets(b Bucketing) EstimatorOption {
	return func(c *estConfig) error {
		if b == nil {
			return fieldErr("size bucketing", "nil", ErrInvalidOption)
		}
		c.bucket = b
		return nil
	}
}

// WithNearestSize lets Estimate answer for a size it has no profile for by scaling the
// profile of the nearest predictable size of the same logic, provided the larger of the
// two sizes is at most maxFactor times the smaller (sizes below 1 count as 1); maxFactor
// must be a finite number ≥ 1. Nearness is by ratio; on a tie the larger known size is
// used. See Key for the trade-off.
func WithNearestSize(maxFactor float64) EstimatorOption {
	return func(c *estConfig) error {
		if !(maxFactor >= 1) || math.IsInf(maxFactor, 1) {
			return fieldErr("nearest size factor", maxFactor, ErrInvalidOption)
		}
		c.nearest = maxFactor
		return nil
	}
}

// WithSizeScaler sets how WithNearestSize scales a profile between sizes; the default is
// ScaleDurations. s must not be nil.
func WithSizeScaler(s SizeScaler) EstimatorOption {
	return func(c *estConfig) error {
		if s == nil {
			return fieldErr("size scaler", "nil", ErrInvalidOption)
		}
		c.scaler = s
		return nil
	}
}

// WithFamily sets how a key without an estimate of its own (nor, with WithNearestSize,
// a nearby size's) is predicted from its family (Key.Family; see Key for the
// trade-off). Every observation of a key that names a family also teaches the family,
// in the class of its input size (WithFamilyBuckets: powers of two by default), by the
// same iterative update, history and envelope as a key. A key is then predicted from
// its size class's estimate, or else from the nearest learned class whose canonical
// size is within maxFactor of its class's (the larger over the smaller; on a tie the
// larger), the durations scaled by the SizeScaler from that class's size to the key's
// class's. maxFactor must be 0, which turns family learning off, or a finite number
// ≥ 1; 1 uses the key's own class only. The default is DefaultFamilyFactor. Keys
// without a Family are learned and predicted as without this option.
func WithFamily(maxFactor float64) EstimatorOption {
	return func(c *estConfig) error {
		if !(maxFactor == 0 || maxFactor >= 1) || math.IsInf(maxFactor, 1) {
			return fieldErr("family size factor", maxFactor, ErrInvalidOption)
		}
		c.family = maxFactor
		return nil
	}
}

// WithFamilyBuckets sets the input-size classes a family is learned in (WithFamily);
// the default is LogBuckets(2). b must not be nil.
func WithFamilyBuckets(b Bucketing) EstimatorOption {
	return func(c *estConfig) error {
		if b == nil {
			return fieldErr("family size bucketing", "nil", ErrInvalidOption)
		}
		c.famSizes = b
		return nil
	}
}

// WithRunning sets how long a running task must have been seen (its series' span,
// from its first sample to Series.End; or its profile's duration) before what it used
// so far predicts its key (SimilarTask.ObserveRunning); minSpan ≥ 0, default
// DefaultMinRunning (any report).
func WithRunning(minSpan time.Duration) EstimatorOption {
	return func(c *estConfig) error {
		if minSpan < 0 {
			return fieldErr("running task span", minSpan, ErrInvalidOption)
		}
		c.running, c.noRun = minSpan, false
		return nil
	}
}

// WithoutRunning makes SimilarTask.ObserveRunning learn nothing: a key is predicted only
// once a task of it (or, with WithFamily, of its family) has finished.
func WithoutRunning() EstimatorOption {
	return func(c *estConfig) error {
		c.noRun = true
		return nil
	}
}

// WithResample sets how observations with a different number of stages are merged; the
// default is ResampleMean.
func WithResample(r Resample) EstimatorOption {
	return func(c *estConfig) error {
		if r != ResampleMean && r != ResamplePeak {
			return fieldErr("resample", r, ErrInvalidOption)
		}
		c.resample = r
		return nil
	}
}

// WithSegmenter sets how a usage series (Observation.Series) is divided into stages;
// the default is NewSegmenter() with its defaults. sg must not be nil.
func WithSegmenter(sg *Segmenter) EstimatorOption {
	return func(c *estConfig) error {
		if sg == nil {
			return fieldErr("segmenter", "nil", ErrInvalidOption)
		}
		c.seg = sg
		return nil
	}
}

// WithHistory sets each key's history: the last observations of it kept (0 ≤
// observations ≤ 256), each summarised on buckets equal slices of its duration (2 ≤
// buckets ≤ 1024). The history is what Redivide divides stages from and what the
// envelope (WithEnvelope) is taken over. observations = 0 keeps none: stages are never
// re-divided and there is no envelope. The defaults are DefaultHistory and
// DefaultBuckets.
func WithHistory(observations, buckets int) EstimatorOption {
	return func(c *estConfig) error {
		if observations < 0 || observations > maxHistory {
			return fieldErr("history observations", observations, ErrInvalidOption)
		}
		if buckets < 2 || buckets > maxBuckets {
			return fieldErr("history buckets", buckets, ErrInvalidOption)
		}
		c.history, c.buckets = observations, buckets
		return nil
	}
}

// WithEnvelope sets the floor under each stage's estimated demand (docs/methods.md §2,
// "envelope"): on a dimension, the estimate of a stage is at least the q-quantile of
// what the key's recent observations (WithHistory) used during that stage — q = 1 their
// peak, q = 0.9 a level that at most a tenth of their time in the stage exceeded; 0
// turns the floor off. nonCompressible applies to the dimensions a task is killed for
// overrunning (memory), compressible to the others (CPU, bandwidth), each in [0, 1].
// The default, (1, 0), never predicts less memory than a recent observation of the
// stage used, and leaves CPU to the iterative update.
func WithEnvelope(nonCompressible, compressible float64) EstimatorOption {
	return func(c *estConfig) error {
		if !(nonCompressible >= 0 && nonCompressible <= 1) {
			return fieldErr("envelope quantile, non-compressible", nonCompressible, ErrInvalidOption)
		}
		if !(compressible >= 0 && compressible <= 1) {
			return fieldErr("envelope quantile, compressible", compressible, ErrInvalidOption)
		}
		c.envelope = [2]float64{nonCompressible, compressible}
		return nil
	}
}

// SimilarTask is the default Estimator: it learns, per similarity key (Def. 3), a
// profile of stages whose durations and demands are updated iteratively from each
// observation (docs/methods.md §2, the eq. 8 Reading):
//
//	est ← (1 − w') × est + w' × obs,   w' = w × (1 − rcObs)
//
// per stage and per dimension, durations included, where w is the base weight and rcObs
// the largest compression ratio (over compressible dimensions) the observed task
// experienced in that stage. The first observation of a key initialises its estimate. A
// stage observed under full compression (rcObs = 1) changes nothing; the update is a
// convex combination, so every value stays between the old estimate and the
// observation. The state is kept in floating point and rounded when the profile is
// built, so small weights do not stall on integer rounding.
//
// Stage alignment (a Reading of ours: the paper does not say how observations of
// differing stage counts combine). When the observation has as many stages as the
// estimate, stage i updates stage i: durations are learned stage by stage and
// boundaries move. Otherwise the estimate keeps its stages and the observation is
// resampled onto them by relative time — estimate stage i covers the fraction [a, b)
// of the estimate's total duration; it is updated from the observation over the same
// fraction of the observation's total, with duration (b − a) × total, demand by the
// Resample rule, and rcObs the largest ratio of the observed stages overlapping it.
//
// Measured usage (docs/methods.md §2, "learning from measured usage"). An observation
// may be the usage series a node agent sampled (Observation.Series); it is divided into
// stages by the configured Segmenter (WithSegmenter) and learned as above. Every
// observation also joins the key's history (WithHistory: the last 8, each summarised
// on 32 buckets of normalised time), from which Redivide — called periodically, or by
// RunRedivision in the background — divides the key's stages again when the data
// disagree with the estimate's division, so the number of stages and their boundaries
// follow the data. On the non-compressible dimensions each stage's estimate is kept at
// or above the peak its recent observations used in it (WithEnvelope), since a task
// given less memory than it uses is killed.
//
// Memory is bounded by WithMaxKeys and WithHistory: a key holds at most the
// segmenter's cap of stages and a history of fixed size (about 9 KiB with the defaults
// and four dimensions), whatever the length of the series; past the key cap, the least
// recently used key is evicted. The LRU order is exact: a use stamps the entry with a tick of a shared
// counter (skipped when the entry already holds the latest tick), and eviction pops a
// min-heap of stamps, re-placing entries whose stamp moved since they were placed.
//
// SimilarTask is safe for concurrent use. Reads take no lock: keys live in a sync.Map
// and each key's current profile in an atomic pointer, so Estimate on a key it knows
// allocates nothing and returns a shared immutable Profile. Writers (Observe, Forget,
// eviction) serialise on a mutex. An Estimate racing with an Observe of the same key
// sees the profile before or after it, never a mix. A caller that asks for the same
// keys again and again keeps a Ref to each (SimilarTask.Ref), which reads the key's
// entry without hashing the key.
type SimilarTask struct {
	schema *resource.Schema
	cfg    estConfig

	entries sync.Map // mapKey of the canonical Key → *entry; written only under mu
	clock   atomic.Uint64
	inserts atomic.Uint64 // entries inserted so far: a Ref's cue to look a key up again

	mu    sync.RWMutex       // serialises writers; read-held by the nearest-size path
	count int                // number of entries
	sizes map[string][]int64 // logic → sorted canonical sizes; only with WithNearestSize
	lru   []*entry           // min-heap on entry.stamp
	dirty []*entry           // entries observed since the last Redivide

	// fam learns the families (WithFamily): an estimator of its own whose logics are
	// families and whose sizes are classes, with the nearest class for nearest size;
	// nil when family learning is off. Its lock is taken under mu only by Checkpoint
	// and Restore (mu first); mu is never taken under it.
	fam *SimilarTask
}

// snapshot is what readers see of an entry: replaced whole, never modified.
type snapshot struct {
	profile stage.Profile
	n       int // observations so far
}

type entry struct {
	// snap is the estimate readers see. An entry made by ObserveRunning before any
	// observation of a finished task (dur nil) holds its open-ended estimate with n 0.
	snap atomic.Pointer[snapshot]
	used atomic.Uint64 // last use, a tick of SimilarTask.clock
	gone atomic.Bool   // evicted or forgotten: a Ref to it looks its key up again

	// Guarded by SimilarTask.mu.
	key   Key               // canonical
	dur   []float64         // per stage, nanoseconds
	dem   []resource.Vector // per stage
	hist  *history          // nil without WithHistory
	dirty bool              // observed since the last re-division
	span  time.Duration     // span of the running task's report the entry holds (dur nil)
	stamp uint64            // the used value the heap is ordered by (≤ used)
	index int               // position in SimilarTask.lru
}

// mapKey is what entries are found by: a canonical key's Logic and InputSize (its
// Family is always empty), without the empty string, which would cost a hash.
type mapKey struct {
	logic string
	size  int64
}

func (s *SimilarTask) load(k Key) *entry { return s.find(k.Logic, k.InputSize) }

// find is the entry of the canonical key of logic and size, nil for none.
func (s *SimilarTask) find(logic string, size int64) *entry {
	if v, ok := s.entries.Load(mapKey{logic, size}); ok {
		return v.(*entry)
	}
	return nil
}

// touch marks e as the most recently used entry.
func (s *SimilarTask) touch(e *entry) {
	if e.used.Load() != s.clock.Load() { // otherwise e already holds the latest tick
		e.used.Store(s.clock.Add(1))
	}
}

// NewSimilarTask returns an empty SimilarTask for profiles in schema. It fails on a nil
// schema or an invalid option.
func NewSimilarTask(schema *resource.Schema, opts ...EstimatorOption) (*SimilarTask, error) {
	if schema == nil {
		return nil, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	cfg := estConfig{
		weight:   DefaultBaseWeight,
		minObs:   DefaultMinObservations,
		maxKeys:  DefaultMaxKeys,
		scaler:   ScaleDurations,
		history:  DefaultHistory,
		buckets:  DefaultBuckets,
		envelope: [2]float64{1, 0},
		family:   DefaultFamilyFactor,
		running:  DefaultMinRunning,
	}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.seg == nil {
		cfg.seg, _ = NewSegmenter() // the defaults are valid
	}
	s := &SimilarTask{schema: schema, cfg: cfg}
	if cfg.nearest > 0 {
		s.sizes = make(map[string][]int64)
	}
	if cfg.family > 0 {
		fc := cfg
		fc.family, fc.bucket, fc.nearest = 0, cfg.famSizes, 0
		if fc.bucket == nil {
			fc.bucket, _ = LogBuckets(2) // valid
		}
		if cfg.family > 1 { // a factor of 1 finds no class but the key's own
			fc.nearest = cfg.family
		}
		s.fam = &SimilarTask{schema: schema, cfg: fc}
		if fc.nearest > 0 {
			s.fam.sizes = make(map[string][]int64)
		}
	}
	return s, nil
}

// Schema is the schema of the profiles the estimator learns and returns.
func (s *SimilarTask) Schema() *resource.Schema { return s.schema }

// canon is the key k is learned under: without its Family, its size mapped to its
// bucket (WithSizeBuckets).
func (s *SimilarTask) canon(k Key) Key {
	k.Family = ""
	if s.cfg.bucket != nil {
		k.InputSize = s.cfg.bucket(k.InputSize)
	}
	return k
}

// familyKey is the key of k's family and size class in s.fam (a family's size classes
// are its keys' sizes there); false when k names no family or family learning is off.
func (s *SimilarTask) familyKey(k Key) (Key, bool) {
	if s.fam == nil || k.Family == "" {
		return Key{}, false
	}
	return s.fam.canon(Key{Logic: k.Family, InputSize: k.InputSize}), true
}

// Estimate implements Estimator. A key is predictable once it has the configured number
// of observations; with WithNearestSize, an unpredictable key may be answered by scaling
// a nearby size's profile (that path takes a read lock and allocates); failing that, a
// key that names a Family is answered from the family's size class (as a key's own
// estimate is: without a lock or an allocation), or else from the nearest class within
// WithFamily's factor, scaled (a read lock and allocations again); failing that, a key
// that names no family (or any key, with family learning off) and that no finished
// task has taught is answered from a running task's report (ObserveRunning). An
// invalid key is unpredictable.
func (s *SimilarTask) Estimate(k Key) (stage.Profile, bool) {
	if k.Logic == "" || k.InputSize < 0 {
		return stage.Profile{}, false
	}
	size := k.InputSize
	if s.cfg.bucket != nil {
		size = s.cfg.bucket(size)
	}
	e := s.find(k.Logic, size)
	if p, ok := s.own(e); ok {
		return p, true
	}
	fk, _ := s.familyKey(k)
	return s.fallback(Key{Logic: k.Logic, InputSize: size}, e, fk)
}

// own is e's estimate (e nil: none), once predictable.
func (s *SimilarTask) own(e *entry) (stage.Profile, bool) {
	if e != nil {
		if sn := e.snap.Load(); sn.n >= s.cfg.minObs {
			s.touch(e)
			return sn.profile, true
		}
	}
	return stage.Profile{}, false
}

// estimate is Estimate for the canonical key ck, whose entry is e (nil when it has
// none), and family key fk (zero for none): e's profile once predictable, else the
// fallbacks.
func (s *SimilarTask) estimate(ck Key, e *entry, fk Key) (stage.Profile, bool) {
	if p, ok := s.own(e); ok {
		return p, true
	}
	return s.fallback(ck, e, fk)
}

// fallback is the estimate of the canonical key ck, whose entry e (nil when it has
// none) is not predictable, with family key fk (zero for none): the nearest size's
// when configured, else the family's, else (without a family) a running task's report.
func (s *SimilarTask) fallback(ck Key, e *entry, fk Key) (stage.Profile, bool) {
	if s.cfg.nearest > 0 {
		if p, ok := s.nearest(ck); ok {
			return p, true
		}
	}
	if fk.Logic != "" {
		if p, ok := s.fam.estimate(fk, s.fam.load(fk), Key{}); ok {
			return p, true
		}
	}
	if e != nil && fk.Logic == "" {
		// A key no finished task has taught yet, and no family: a running task's report.
		if sn := e.snap.Load(); sn.n == 0 && !s.cfg.noRun {
			s.touch(e)
			return sn.profile, true
		}
	}
	return stage.Profile{}, false
}

// nearest is the estimate of the canonical key ck scaled from the nearest predictable
// size of its logic (WithNearestSize); false when there is none.
func (s *SimilarTask) nearest(ck Key) (stage.Profile, bool) {
	s.mu.RLock()
	src := s.nearestLocked(ck)
	var from int64
	if src != nil {
		from = src.key.InputSize
	}
	s.mu.RUnlock()
	if src == nil {
		return stage.Profile{}, false
	}
	s.touch(src)
	return s.cfg.scaler(src.snap.Load().profile, from, ck.InputSize)
}

// nearestLocked finds the predictable entry of the same logic whose size is nearest to
// k's by ratio, within the configured factor. The caller holds s.mu.
func (s *SimilarTask) nearestLocked(k Key) *entry {
	sizes := s.sizes[k.Logic]
	i, _ := slices.BinarySearch(sizes, k.InputSize)
	ratio := func(a, b int64) float64 { return float64(max(a, b, 1)) / float64(max(min(a, b), 1)) }
	var best *entry
	bestR := math.Inf(1)
	// The larger side first, so that on a tie the larger size wins.
	for j := i; j < len(sizes); j++ {
		r := ratio(sizes[j], k.InputSize)
		if r > s.cfg.nearest {
			break
		}
		if e := s.load(Key{Logic: k.Logic, InputSize: sizes[j]}); e.snap.Load().n >= s.cfg.minObs {
			best, bestR = e, r
			break
		}
	}
	for j := i - 1; j >= 0; j-- {
		r := ratio(sizes[j], k.InputSize)
		if r > s.cfg.nearest || r >= bestR {
			break
		}
		if e := s.load(Key{Logic: k.Logic, InputSize: sizes[j]}); e.snap.Load().n >= s.cfg.minObs {
			best = e
			break
		}
	}
	return best
}

// Observe implements Estimator: it validates the observation — segmenting a series
// with the configured Segmenter first — and applies the iterative update (eq. 8
// Reading) to k's estimate, creating it (and evicting the least recently used key if
// the cap is reached) on k's first observation; the observation joins the key's
// history and the key is marked for re-division. When k names a Family (and family
// learning is on: WithFamily), the family's size class learns the same observation
// likewise, just after. It fails, changing nothing, on an
// invalid key; an observation with both or neither of a profile and a series; a
// profile of another schema; a series Segmenter.SegmentSeries refuses; or compression
// ratios of the wrong count, outside [0, 1], or on a non-compressible dimension.
func (s *SimilarTask) Observe(k Key, obs Observation) error {
	if err := k.validate(); err != nil {
		return err
	}
	obs, pieces, rc, err := s.validate(obs)
	if err != nil {
		return err
	}
	s.learn(s.canon(k), obs, pieces, rc)
	if fk, ok := s.familyKey(k); ok {
		s.fam.learn(fk, obs, pieces, rc)
	}
	return nil
}

// learn applies a validated observation (see validate) to the canonical key ck.
func (s *SimilarTask) learn(ck Key, obs Observation, pieces []piece, rc []float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.load(ck)
	if e == nil {
		e = newEntry(ck, obs.Profile)
		s.remember(e, pieces, obs.Profile.Len())
		s.insertLocked(e, s.publishable(e, obs.Profile.Stages(), 1))
		return
	}
	if e.dur == nil { // only a running task's report so far: the first observation
		e.init(obs.Profile)
		e.span = 0
		s.remember(e, pieces, obs.Profile.Len())
		e.snap.Store(s.publishable(e, obs.Profile.Stages(), 1))
		s.touch(e)
		return
	}
	odur, odem, orc := align(e.dur, obs.Profile, rc, s.cfg.resample)
	dur := make([]float64, len(e.dur))
	dem := make([]resource.Vector, len(e.dem))
	stages := make([]stage.Stage, len(e.dur))
	for i := range dur {
		w := s.cfg.weight * (1 - orc[i])
		dur[i] = (1-w)*e.dur[i] + w*odur[i]
		stages[i].Duration = durationOf(dur[i])
		for d := 0; d < s.schema.Len(); d++ {
			dem[i][d] = (1-w)*e.dem[i][d] + w*odem[i][d]
			stages[i].Demand[d] = amountOf(dem[i][d])
		}
	}
	e.dur, e.dem = dur, dem
	s.remember(e, pieces, obs.Profile.Len())
	e.snap.Store(s.publishable(e, stages, min(e.snap.Load().n+1, math.MaxInt32)))
	s.touch(e)
}

// remember adds an observation's pieces, divided into stages stages, to e's history and
// marks e for re-division. The caller holds s.mu for writing.
func (s *SimilarTask) remember(e *entry, pieces []piece, stages int) {
	if s.cfg.history == 0 {
		return
	}
	if e.hist == nil {
		e.hist = newHistory(s.cfg.history, s.cfg.buckets, s.schema.Len())
	}
	e.hist.add(pieces, stages)
	if !e.dirty {
		e.dirty = true
		if len(s.dirty) >= 2*s.count+16 {
			// Keys forgotten or evicted since the last Redivide leave the list, so it
			// stays bounded by the keys held even if Redivide is never called.
			s.dirty = slices.DeleteFunc(s.dirty, func(x *entry) bool { return x.gone.Load() })
		}
		s.dirty = append(s.dirty, e)
	}
}

// publishable is the snapshot readers see for e's estimate stages, raised to the
// envelope of e's history (WithEnvelope) on every stage. The caller holds s.mu.
func (s *SimilarTask) publishable(e *entry, stages []stage.Stage, n int) *snapshot {
	if h := e.hist; h != nil && (s.cfg.envelope[0] > 0 || s.cfg.envelope[1] > 0) {
		var total float64
		for _, st := range stages {
			total += float64(st.Duration)
		}
		comp := s.schema.Compressible()
		var scratch []int64
		var at float64
		for i := range stages {
			a := at / total
			at += float64(stages[i].Duration)
			lo, hi := h.span(a, at/total)
			if lo >= hi {
				continue // no bucket lies wholly in the stage
			}
			for d := 0; d < s.schema.Len(); d++ {
				q := s.cfg.envelope[0]
				if comp.Has(d) {
					q = s.cfg.envelope[1]
				}
				if q == 0 {
					continue
				}
				var floor int64
				floor, scratch = h.envelope(d, lo, hi, q, scratch)
				stages[i].Demand[d] = max(stages[i].Demand[d], floor)
			}
		}
	}
	p, err := stage.NewProfile(s.schema, stages...)
	if err != nil { // cannot happen: stages of a valid profile, amounts only raised
		panic(fmt.Sprintf("predict: estimate of %q: %v", e.key.Logic, err))
	}
	return &snapshot{profile: p, n: n}
}

// validate checks obs against the estimator's schema. It returns the observation as a
// profile (a series segmented), its pieces for the history, and the per-stage rcObs:
// the largest compression ratio over the compressible dimensions.
func (s *SimilarTask) validate(obs Observation) (Observation, []piece, []float64, error) {
	if obs.Series.Len() > 0 {
		if obs.Profile.Len() > 0 || obs.Compression != nil {
			return obs, nil, nil, fieldErr("observation", "both a profile and a series", ErrInvalidValue)
		}
		return s.fromSeries(obs.Series)
	}
	if obs.Series.Compression != nil || obs.Series.End != 0 {
		return obs, nil, nil, fieldErr("observation series", "compression or end without samples", ErrNoSamples)
	}
	p := obs.Profile
	if p.Len() == 0 {
		return obs, nil, nil, wrapf(stage.ErrEmptyProfile, "observation")
	}
	if !s.schema.Equal(p.Schema()) {
		return obs, nil, nil, fieldErr("observation schema", fmt.Sprintf("%v, the estimator's %v", p.Schema(), s.schema), resource.ErrSchemaMismatch)
	}
	rc := make([]float64, p.Len())
	if obs.Compression != nil {
		if len(obs.Compression) != p.Len() {
			return obs, nil, nil, fieldErr("observation compression stages", fmt.Sprintf("%d for %d stages", len(obs.Compression), p.Len()), ErrStageCount)
		}
		for i, v := range obs.Compression {
			if err := s.schema.ValidateRatios(v, 1, true); err != nil {
				return obs, nil, nil, wrapf(err, "observation compression[%d]", i)
			}
			rc[i] = v.MaxOver(s.schema.Compressible())
		}
	}
	var pieces []piece
	if s.cfg.history > 0 {
		pieces = make([]piece, p.Len())
		for i := range pieces {
			st := p.Stage(i)
			pieces[i] = piece{dur: float64(st.Duration), usage: st.Demand, rc: rc[i]}
		}
	}
	return obs, pieces, rc, nil
}

// fromSeries segments a series into the observation of a profile, with the series'
// samples, as long as the division took them to last, as the history's pieces.
func (s *SimilarTask) fromSeries(sr Series) (Observation, []piece, []float64, error) {
	d, err := s.cfg.seg.divideSeries(s.schema, sr)
	if err != nil {
		return Observation{}, nil, nil, wrapf(err, "observation series")
	}
	obs := Observation{Profile: d.profile, Compression: d.compression}
	rc := make([]float64, d.profile.Len())
	for i, v := range d.compression {
		rc[i] = v.MaxOver(s.schema.Compressible())
	}
	var pieces []piece
	if s.cfg.history > 0 {
		pieces = make([]piece, len(sr.Samples))
		for i, x := range sr.Samples {
			pieces[i] = piece{dur: float64(d.w.dur[i]), usage: x.Usage}
			if d.sampleRC != nil {
				pieces[i].rc = d.sampleRC[i]
			}
		}
	}
	return obs, pieces, rc, nil
}

func newEntry(k Key, p stage.Profile) *entry {
	e := &entry{key: k}
	e.init(p)
	return e
}

// init makes p, a first observation, e's estimate state.
func (e *entry) init(p stage.Profile) {
	e.dur, e.dem = make([]float64, p.Len()), make([]resource.Vector, p.Len())
	for i := range e.dur {
		st := p.Stage(i)
		e.dur[i] = float64(st.Duration)
		e.dem[i] = st.Demand.Float()
	}
}

// ObserveRunning implements RunningObserver: obs is what a task of key k has used so
// far, while it still runs — the series its node agent has sampled, Series.End being
// now, or the stages it has run — validated as Observe validates a finished task's.
// Until a task of k's key has finished (its first observation), the longest report
// of the key stands for it (unless WithoutRunning): Estimate answers, when neither the
// key's own estimate, nor a nearby size's (WithNearestSize), nor its family's
// (WithFamily) does, with the stages seen so far followed by an open-ended stage,
// lasting until stage.Forever, at the per-dimension peak seen so far. It says nothing
// of when the task ends or what it will use later: a scheduler holds such an estimate
// as it holds a request, until the task finishes (and should hold at least the
// request on non-compressible dimensions in the open stage, as the reference
// scheduler does), but it is what the task's siblings really use rather than what
// their user declared. The reported usage is not corrected for compression, and does
// not join the key's history.
//
// A key that names a Family, when the estimator learns families (WithFamily), learns
// from its family's finished tasks instead, and its reports are ignored: an open-ended
// estimate holds a task's peak until it ends, and the first sibling of any size to
// finish predicts the whole family (with the generated workloads of examples/compare,
// taking reports for such keys as well made FGM's prediction error 28.7% instead of
// 20.7% and changed nothing else beyond noise). A report is also ignored (nil) when
// its span (see WithRunning) is below the minimum, when the key has had a finished
// task, or when the key holds a report spanning as long. Reports create keys as Observe does (evicting the least recently used beyond
// the cap); Observations counts none of them. Dividing a report into stages costs
// what dividing a finished task's series does, so report a running task now and then
// — when its samples have doubled, say — rather than at every sample.
func (s *SimilarTask) ObserveRunning(k Key, obs Observation) error {
	if err := k.validate(); err != nil {
		return err
	}
	obs, _, _, err := s.validate(obs)
	if err != nil {
		return err
	}
	span := obs.Profile.Duration()
	if _, fam := s.familyKey(k); fam || s.cfg.noRun || span < s.cfg.running {
		return nil
	}
	ck := s.canon(k)
	if e := s.load(ck); e != nil && e.snap.Load().n > 0 {
		return nil // taught by a finished task: nothing to learn from a running one
	}
	prof := openEnded(obs.Profile)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := s.load(ck); {
	case e == nil:
		s.insertLocked(&entry{key: ck, span: span}, &snapshot{profile: prof})
	case e.dur != nil || span <= e.span:
		// A finished task taught it meanwhile, or a report as long stands.
	default:
		e.span = span
		e.snap.Store(&snapshot{profile: prof})
		s.touch(e)
	}
	return nil
}

// openEnded is the estimate a running task's stages p so far make: p's stages, then a
// stage lasting until stage.Forever at p's per-dimension peak (p's last stage merged
// into it if p has stage.MaxStages stages).
func openEnded(p stage.Profile) stage.Profile {
	stages := p.Stages()
	if len(stages) == stage.MaxStages {
		stages = stages[:len(stages)-1]
	}
	stages = append(stages, stage.Stage{Duration: stage.Forever, Demand: p.Peak()})
	q, err := stage.NewProfile(p.Schema(), stages...)
	if err != nil { // cannot happen: p's valid stages and its peak
		panic(fmt.Sprintf("predict: open-ended estimate: %v", err))
	}
	return q
}

// align returns the observation's per-stage durations, demands and rcObs on the
// estimate's stages (see SimilarTask: stage by stage when the counts agree, resampled by
// relative time otherwise).
func align(grid []float64, p stage.Profile, rc []float64, mode Resample) ([]float64, []resource.Vector, []float64) {
	m := len(grid)
	dur := make([]float64, m)
	dem := make([]resource.Vector, m)
	if p.Len() == m {
		for i := range dur {
			st := p.Stage(i)
			dur[i] = float64(st.Duration)
			dem[i] = st.Demand.Float()
		}
		return dur, dem, rc
	}
	k := p.Len()
	orc := make([]float64, m)
	// Relative boundaries of both partitions of [0, 1].
	eb := fractions(m, func(i int) float64 { return grid[i] })
	ob := fractions(k, func(j int) float64 { return float64(p.Stage(j).Duration) })
	var obsTotal float64
	for j := 0; j < k; j++ {
		obsTotal += float64(p.Stage(j).Duration)
	}
	use := func(i, j int, weight float64) {
		orc[i] = max(orc[i], rc[j])
		dm := p.Stage(j).Demand
		for d := range dem[i] {
			x := float64(dm[d])
			if mode == ResamplePeak {
				dem[i][d] = max(dem[i][d], x)
			} else {
				dem[i][d] += x * weight
			}
		}
	}
	j := 0
	for i := 0; i < m; i++ {
		a, b := eb[i], eb[i+1]
		dur[i] = (b - a) * obsTotal
		for j < k-1 && ob[j+1] <= a {
			j++
		}
		if !(b > a) { // a stage too thin to register as a fraction: take the demand at a
			use(i, j, 1)
			continue
		}
		for jj := j; jj < k && ob[jj] < b; jj++ {
			if lo, hi := max(a, ob[jj]), min(b, ob[jj+1]); hi > lo {
				use(i, jj, (hi-lo)/(b-a))
			}
		}
	}
	return dur, dem, orc
}

// fractions returns the n+1 boundaries, as fractions of the total, of n consecutive
// lengths given by length(i); the first is 0 and the last exactly 1.
func fractions(n int, length func(int) float64) []float64 {
	b := make([]float64, n+1)
	for i := 0; i < n; i++ {
		b[i+1] = b[i] + length(i)
	}
	total := b[n]
	for i := 1; i < n; i++ {
		b[i] /= total
	}
	b[n] = 1
	return b
}

// insertLocked adds a new entry with its first snapshot, evicting the least recently
// used one first if the cap is reached. The caller holds s.mu for writing.
func (s *SimilarTask) insertLocked(e *entry, first *snapshot) {
	e.snap.Store(first)
	if s.count >= s.cfg.maxKeys {
		s.evictLocked()
	}
	e.stamp = s.clock.Add(1)
	e.used.Store(e.stamp)
	s.entries.Store(mapKey{e.key.Logic, e.key.InputSize}, e)
	s.inserts.Add(1) // after the store: a Ref that reads the count first then finds e
	s.count++
	e.index = len(s.lru)
	s.lru = append(s.lru, e)
	s.up(e.index)
	if s.sizes != nil {
		sz := s.sizes[e.key.Logic]
		i, _ := slices.BinarySearch(sz, e.key.InputSize)
		s.sizes[e.key.Logic] = slices.Insert(sz, i, e.key.InputSize)
	}
}

// evictLocked removes the least recently used entry. Entries whose use stamp moved
// since they were placed in the heap are re-placed first, so the entry removed has the
// smallest current stamp of all.
func (s *SimilarTask) evictLocked() {
	for len(s.lru) > 0 {
		e := s.lru[0]
		if u := e.used.Load(); u != e.stamp {
			e.stamp = u
			s.down(0)
			continue
		}
		s.removeLocked(e)
		return
	}
}

func (s *SimilarTask) removeLocked(e *entry) {
	last := len(s.lru) - 1
	i := e.index
	if i != last {
		s.swap(i, last)
	}
	s.lru[last] = nil
	s.lru = s.lru[:last]
	if i != last {
		s.down(i)
		s.up(i)
	}
	s.entries.Delete(mapKey{e.key.Logic, e.key.InputSize})
	e.gone.Store(true)
	e.hist = nil // its memory goes now; the entry may wait in the dirty list a while
	s.count--
	if s.sizes != nil {
		sz := s.sizes[e.key.Logic]
		if j, ok := slices.BinarySearch(sz, e.key.InputSize); ok {
			sz = slices.Delete(sz, j, j+1)
		}
		if len(sz) == 0 {
			delete(s.sizes, e.key.Logic)
		} else {
			s.sizes[e.key.Logic] = sz
		}
	}
}

func (s *SimilarTask) swap(i, j int) {
	s.lru[i], s.lru[j] = s.lru[j], s.lru[i]
	s.lru[i].index, s.lru[j].index = i, j
}

func (s *SimilarTask) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if s.lru[p].stamp <= s.lru[i].stamp {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *SimilarTask) down(i int) {
	n := len(s.lru)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && s.lru[c+1].stamp < s.lru[c].stamp {
			c++
		}
		if s.lru[i].stamp <= s.lru[c].stamp {
			return
		}
		s.swap(i, c)
		i = c
	}
}

// Redivide implements Redivider: for every key observed since the last call whose held
// observations were mostly divided into another number of stages than its estimate has
// (the data disagree with the estimate's stages), it divides the key's history
// (WithHistory) into stages again — the iterative update of eq. 8
// taken bucket by bucket over the held observations, divided by the Segmenter into
// stages of two buckets at least (one bucket astride a change holds both sides' peaks) — and,
// when that division disagrees with the estimate's (another number of stages, or a
// boundary more than one bucket away), rebuilds the estimate on it: the total duration
// kept, each new stage's demand the iterative update over the held observations of
// their peaks in it (each weighing w × (1 − its compression there)), raised to the
// envelope. Families (WithFamily) are re-divided likewise. It returns how many keys and
// families' size classes it rebuilt.
//
// Redivide runs off the scheduling path: it takes the writers' lock one key at a time,
// so observations go on between keys, and Estimate never waits for it — a reader sees
// a key's estimate before or after its re-division. Call it periodically (the FGM
// paper's information module re-divides periodically and asynchronously), or let
// RunRedivision do so.
func (s *SimilarTask) Redivide() int {
	s.mu.Lock()
	dirty := s.dirty
	s.dirty = nil
	s.mu.Unlock()
	changed := 0
	for _, e := range dirty {
		s.mu.Lock()
		if e.dirty && !e.gone.Load() {
			e.dirty = false
			if s.redivideLocked(e) {
				changed++
			}
		}
		s.mu.Unlock()
	}
	if s.fam != nil {
		changed += s.fam.Redivide()
	}
	return changed
}

// RunRedivision calls Redivide every period until ctx is done, and returns ctx's error.
// It is the background worker an embedder starts (go est.RunRedivision(ctx, time.Minute))
// and stops (cancel ctx); every must be positive.
func (s *SimilarTask) RunRedivision(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return fieldErr("re-division period", every, ErrInvalidOption)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			s.Redivide()
		}
	}
}

// redivideLocked re-divides e's stages from its history when they disagree (see
// Redivide) and reports whether it did. The caller holds s.mu for writing.
func (s *SimilarTask) redivideLocked(e *entry) bool {
	h := e.hist
	if h == nil || h.n == 0 || !h.othersMostly(len(e.dur)) {
		return false // the observations, divided one by one, agree with the estimate
	}
	var total float64
	for _, d := range e.dur {
		total += d
	}
	samples, width := bucketSamples(h.level(s.cfg.weight), total)
	// A stage of one bucket is a bucket astride a change, holding the peaks of both
	// sides: stages of the re-division span two buckets at least.
	w, err := s.cfg.seg.divide(s.schema, samples, width, 2*width)
	if err != nil { // cannot happen: b ≥ 2 ordered samples of valid amounts
		return false
	}
	var cuts []int // bucket index where each new stage starts, then b
	for a := 0; a < h.b; a = w.next[a] {
		cuts = append(cuts, a)
	}
	cuts = append(cuts, h.b)
	if !s.disagrees(e.dur, total, cuts, h.b) {
		return false
	}
	m := len(cuts) - 1
	dur := make([]float64, m)
	dem := make([]resource.Vector, m)
	stages := make([]stage.Stage, m)
	for j := 0; j < m; j++ {
		lo, hi := cuts[j], cuts[j+1]
		dur[j] = total * float64(hi-lo) / float64(h.b)
		dem[j] = h.update(s.cfg.weight, lo, hi)
		stages[j].Duration = durationOf(dur[j])
		for d := 0; d < s.schema.Len(); d++ {
			stages[j].Demand[d] = amountOf(dem[j][d])
		}
	}
	e.dur, e.dem = dur, dem
	e.snap.Store(s.publishable(e, stages, e.snap.Load().n))
	return true
}

// disagrees reports whether the estimate's stage durations dur (summing to total) and
// the division at bucket cuts (of b buckets) differ in their number of stages or in a
// boundary by more than one bucket.
func (s *SimilarTask) disagrees(dur []float64, total float64, cuts []int, b int) bool {
	if len(cuts)-1 != len(dur) {
		return true
	}
	var at float64
	for j := 0; j+1 < len(dur); j++ {
		at += dur[j]
		if math.Abs(at/total-float64(cuts[j+1])/float64(b)) > 1/float64(b) {
			return true
		}
	}
	return false
}

// Forget drops everything learned for k's key (its bucket, with WithSizeBuckets) and
// reports whether there was anything. What k's family learned from it stays: a
// family learns from many keys. An invalid key is never known.
func (s *SimilarTask) Forget(k Key) bool {
	if k.validate() != nil {
		return false
	}
	ck := s.canon(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.load(ck)
	if e == nil {
		return false
	}
	s.removeLocked(e)
	return true
}

// Observations returns how many observations k's key has had (0 when unknown or
// evicted). It does not count as a use for eviction.
func (s *SimilarTask) Observations(k Key) int {
	if k.validate() != nil {
		return 0
	}
	if e := s.load(s.canon(k)); e != nil {
		return e.snap.Load().n
	}
	return 0
}

// Len is the number of keys remembered (families' size classes not counted).
func (s *SimilarTask) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.count
}
