package predict

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// ProgressSample is a task's progress (in [0, 1]) measured at a time.
type ProgressSample struct {
	At       time.Duration
	Progress float64
}

// StragglerVerdict is the outcome of the straggler test (docs/methods.md §11, S1–S4) and
// the figures it rests on.
type StragglerVerdict struct {
	// Straggler is the verdict.
	Straggler bool
	// V1 and V2 are the progress speeds (progress per second) over the older and the
	// newer pair of the four most recent samples.
	V1, V2 float64
	// Finish is the predicted finishing time T = (1 − p4)/v2 + t4: t4 when p4 is 1,
	// stage.Forever when the task does not advance (v2 ≤ 0). Saturates at Forever.
	Finish time.Duration
	// Runtime is the predicted run time, Finish − start, compared with T_SLO.
	Runtime time.Duration
}

// DetectStraggler is the patent's straggler test for a latency-sensitive task
// (docs/methods.md §11, S1–S4). From the four most recent samples (p1..p4 at
// t1 < t2 < t3 < t4):
//
//	v1 = (p2 − p1)/(t2 − t1),  v2 = (p4 − p3)/(t4 − t3),  T = (1 − p4)/v2 + t4
//
// S2: if v2 > v1 the task is speeding up and is not a straggler; S3: otherwise it is a
// straggler unless it is predicted to finish within T_SLO. Speeds equal up to
// floating-point rounding (a relative 1e-9) count as equal, so a steady task is not
// taken for one speeding up because (0.4 − 0.3) rounds above (0.2 − 0.1).
//
// Reading: the patent defines T_SLO as the longest task run time that still meets the
// service-level objective, with times measured from the task's start. Our times are
// offsets from the embedder's epoch, so the test compares the predicted run time
// T − start with slo; with start = 0 this is the printed T < T_SLO.
//
// samples must hold at least four samples in strictly increasing time order, each
// progress in [0, 1], none before start; only the last four are used. Progress may
// fall (a restarted phase): a non-positive v2 predicts no finish. slo must be positive.
func DetectStraggler(samples []ProgressSample, start, slo time.Duration) (StragglerVerdict, error) {
	var v StragglerVerdict
	if len(samples) < 4 {
		return v, fieldErr("progress samples", len(samples), ErrNoSamples)
	}
	if slo <= 0 {
		return v, fieldErr("T_SLO", slo, ErrBadDuration)
	}
	for i, s := range samples {
		if !(s.Progress >= 0 && s.Progress <= 1) {
			return v, fieldErr(fmt.Sprintf("samples[%d].Progress", i), s.Progress, ErrBadProgress)
		}
		if i == 0 && s.At < start {
			return v, fieldErr("samples[0].At", s.At, ErrBadTime)
		}
		if i > 0 && (s.At <= samples[i-1].At || s.At-samples[i-1].At <= 0) {
			return v, fieldErr(fmt.Sprintf("samples[%d].At", i), s.At, ErrUnsorted)
		}
	}
	s := samples[len(samples)-4:]
	v.V1 = (s[1].Progress - s[0].Progress) / (s[1].At - s[0].At).Seconds()
	v.V2 = (s[3].Progress - s[2].Progress) / (s[3].At - s[2].At).Seconds()
	t4 := s[3].At
	switch {
	case s[3].Progress >= 1:
		v.Finish = t4
	case v.V2 <= 0:
		v.Finish = stage.Forever
	default:
		left := stage.Seconds((1 - s[3].Progress) / v.V2)
		if t4 > stage.Forever-left {
			v.Finish = stage.Forever
		} else {
			v.Finish = t4 + left
		}
	}
	v.Runtime = v.Finish - start
	if v.Finish == stage.Forever || v.Runtime < 0 { // forever, or the difference overflowed
		v.Runtime = stage.Forever
	}
	switch {
	case v.V2 > v.V1+speedTolerance*max(math.Abs(v.V1), math.Abs(v.V2)): // S2
		v.Straggler = false
	case v.Runtime < slo: // S3
		v.Straggler = false
	default:
		v.Straggler = true
	}
	return v, nil
}

// speedTolerance is the relative difference below which two speeds count as equal.
const speedTolerance = 1e-9

// Redundancy is the outcome of the resource-redundant test (docs/methods.md §11, T1–T2)
// for a batch task, per dimension.
type Redundancy struct {
	// Peak is the per-dimension maximum usage over the samples, max(Ri).
	Peak resource.Tuple
	// Utilisation is Uc = Peak/Allocated per dimension (T1); 0 where nothing is
	// allocated.
	Utilisation resource.Vector
	// Redundant holds the dimensions with Uc < U_ECRU (T2) and a positive allocation.
	Redundant resource.Mask
	// Reclaimable is Rr, the amount that can be taken back on each redundant dimension
	// (zero elsewhere): Allocated − ⌈Peak/U_ECRU⌉, which leaves the task an allocation
	// its peak uses at exactly the expected utilisation (see DetectRedundant).
	Reclaimable resource.Tuple
}

// IsRedundant reports whether the task is over-allocated on some dimension.
func (r Redundancy) IsRedundant() bool { return r.Redundant != 0 }

// DetectRedundant is the patent's resource-redundant test for a batch task
// (docs/methods.md §11, T1–T2), per dimension: the actual utilisation Uc = max(Ri)/Ra of
// the usage samples Ri against the allocation Ra; the dimension is redundant when
// Uc < U_ECRU, the expected cluster utilisation (expected, a fraction in [0, 1] per
// dimension; 0 disables a dimension).
//
// Reading: the patent does not say how much to reclaim (its Rr). The library reclaims
// down to the allocation at which the observed peak would sit exactly at the expected
// utilisation: Rr = Ra − ⌈max(Ri)/U_ECRU⌉. This is positive (or, from rounding, zero)
// exactly on the redundant dimensions, never takes the allocation below the peak, and
// keeps the headroom the cluster's utilisation target implies, where reclaiming
// Ra − max(Ri) would leave the task none. Add your own margin if the peak seen so far
// may be exceeded.
//
// It fails on no samples, a negative or out-of-schema amount, or an expected utilisation
// outside [0, 1].
func DetectRedundant(schema *resource.Schema, usage []resource.Tuple, allocated resource.Tuple, expected resource.Vector) (Redundancy, error) {
	var r Redundancy
	if schema == nil {
		return r, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	if len(usage) == 0 {
		return r, fieldErr("usage samples", 0, ErrNoSamples)
	}
	if err := schema.Validate(allocated); err != nil {
		return r, wrapf(err, "allocated")
	}
	if err := schema.ValidateRatios(expected, 1, false); err != nil {
		return r, wrapf(err, "expected utilisation")
	}
	return redundancy(schema, usage, allocated, expected)
}

// RedundancyTest is the resource-redundant test of DetectRedundant for one schema and
// one expected utilisation, both checked once: for a caller that tests many tasks, a
// scale-up round every batch task of the cluster.
type RedundancyTest struct {
	schema   *resource.Schema
	expected resource.Vector
}

// NewRedundancyTest returns the resource-redundant test for amounts of schema against
// the expected utilisation expected (U_ECRU per dimension, in [0, 1]; 0 disables a
// dimension). It fails on a nil schema or an expected utilisation outside [0, 1].
func NewRedundancyTest(schema *resource.Schema, expected resource.Vector) (RedundancyTest, error) {
	if schema == nil {
		return RedundancyTest{}, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	if err := schema.ValidateRatios(expected, 1, false); err != nil {
		return RedundancyTest{}, wrapf(err, "expected utilisation")
	}
	return RedundancyTest{schema: schema, expected: expected}, nil
}

// Detect is DetectRedundant of the usage samples usage against the allocation
// allocated, with the test's schema and expected utilisation. It fails on no samples
// or a negative or out-of-schema amount.
func (t RedundancyTest) Detect(usage []resource.Tuple, allocated resource.Tuple) (Redundancy, error) {
	if len(usage) == 0 {
		return Redundancy{}, fieldErr("usage samples", 0, ErrNoSamples)
	}
	if err := t.schema.Validate(allocated); err != nil {
		return Redundancy{}, wrapf(err, "allocated")
	}
	return redundancy(t.schema, usage, allocated, t.expected)
}

// Reclaimable is Detect's Reclaimable (Rr) for a task whose usage samples peak at
// peak, against the allocation allocated: for a caller that keeps a task's peak
// rather than its samples, and wants Rr alone — a scale-up round, for every batch task
// of the cluster. It fails on a negative or out-of-schema amount.
func (t RedundancyTest) Reclaimable(peak, allocated resource.Tuple) (resource.Tuple, error) {
	var r resource.Tuple
	if err := t.schema.Validate(peak); err != nil {
		return r, wrapf(err, "peak")
	}
	if err := t.schema.Validate(allocated); err != nil {
		return r, wrapf(err, "allocated")
	}
	for d := 0; d < t.schema.Len(); d++ {
		_, _, r[d] = redundantOn(peak[d], allocated[d], t.expected[d])
	}
	return r, nil
}

// redundancy is T1–T2 on usage samples usage, whose amounts are not checked yet,
// against a valid allocation and expected utilisation: what DetectRedundant returns.
func redundancy(schema *resource.Schema, usage []resource.Tuple, allocated resource.Tuple, expected resource.Vector) (Redundancy, error) {
	var r Redundancy
	for i, u := range usage {
		if err := schema.Validate(u); err != nil {
			return Redundancy{}, wrapf(err, "usage[%d]", i)
		}
		r.Peak = r.Peak.Max(u)
	}
	for d := 0; d < schema.Len(); d++ {
		var redundant bool
		r.Utilisation[d], redundant, r.Reclaimable[d] = redundantOn(r.Peak[d], allocated[d], expected[d])
		if redundant {
			r.Redundant |= 1 << d
		}
	}
	return r, nil
}

// redundantOn is T1–T2 on one dimension: the utilisation Uc of a task that peaked at
// peak with allocated, whether it is below expected (U_ECRU), and then Rr — 0 where
// nothing is allocated.
func redundantOn(peak, allocated int64, expected float64) (utilisation float64, redundant bool, reclaimable int64) {
	if allocated == 0 {
		return 0, false, 0
	}
	utilisation = float64(peak) / float64(allocated)
	if !(utilisation < expected) {
		return utilisation, false, 0
	}
	if keep := math.Ceil(float64(peak) / expected); keep < float64(allocated) {
		reclaimable = max(allocated-int64(keep), 0)
	}
	return utilisation, true, reclaimable
}
