package stage

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/finegrain/finegrain/resource"
)

// Forever is the end of time: a stage, reservation or window that never ends ends here.
// Sums of times saturate at Forever instead of overflowing.
const Forever = time.Duration(math.MaxInt64)

// MaxStages is the most stages a profile may have. Matching, reserving and scoring walk
// every stage, so the bound keeps one decision's work bounded (a scheduler holds its
// lock while it decides); real profiles have a handful of stages, segmented usage
// series at most a few hundred.
const MaxStages = 4096

// Sentinel errors of this package; errors.Is matches them through the wrapping.
var (
	// ErrEmptyProfile reports a profile without stages.
	ErrEmptyProfile = errors.New("profile has no stages")
	// ErrTooManyStages reports a profile of more than MaxStages stages.
	ErrTooManyStages = errors.New("too many stages")
	// ErrBadDuration reports a stage of zero or negative length.
	ErrBadDuration = errors.New("stage duration must be positive")
	// ErrNoRoom reports a profile that does not fit a timeline; it arrives inside a
	// *FitError that says where.
	ErrNoRoom = errors.New("not enough free resources")
	// ErrUnknownReservation reports a handle the timeline does not hold: never
	// reserved, or already released.
	ErrUnknownReservation = errors.New("unknown reservation")
	// ErrBeforeOrigin reports a time before the timeline's origin, which it keeps no
	// state for (see Timeline.Trim).
	ErrBeforeOrigin = errors.New("time before the timeline's origin")
)

// Stage is one execution stage of a task: for Duration, the task demands Demand.
type Stage struct {
	Duration time.Duration
	Demand   resource.Tuple
}

// Profile is a task's demand over time (docs/methods.md §2, "execution stages"): stages
// laid end to end, the first starting when the task starts. A Profile is an immutable
// value; copies share storage safely. Build one with NewProfile or Constant; the zero
// Profile has no stages and is rejected wherever a demand is needed.
//
// A Profile is one pointer: passing, storing and copying one (in a reservation, an
// attempt, a cache) costs what a pointer does, whatever its stages.
type Profile struct {
	_ [0]func() // not comparable: Same says whether two profiles are one
	*profile
}

// profile is what a Profile points to: its stages, where each begins and its peak.
type profile struct {
	schema  *resource.Schema
	stages  []Stage
	offsets []time.Duration // offsets[i] = start of stage i from the task's start; len = len(stages)+1
	peak    resource.Tuple
	inline  [inlineOffsets]time.Duration // offsets' storage for a profile of few stages
}

// profileOfOne is a profile of one stage and its stage, allocated together.
type profileOfOne struct {
	profile
	stage [1]Stage
}

// inlineOffsets is how many offsets a profile keeps in its own allocation: a profile of
// one stage takes one allocation (itself with its stage), one of up to inlineOffsets−1
// stages two (itself and its stages), a longer one three.
const inlineOffsets = 9

// NewProfile validates the stages against schema and returns them as a profile. It fails
// when there are no stages, a stage's duration is not positive, or a demand is negative
// or outside the schema; the error names the stage. A stage of length Forever is an
// open-ended one (a service); the total duration saturates at Forever.
func NewProfile(schema *resource.Schema, stages ...Stage) (Profile, error) {
	if schema == nil {
		return Profile{}, fmt.Errorf("stage: nil schema: %w", resource.ErrSchemaMismatch)
	}
	if len(stages) == 0 {
		return Profile{}, fmt.Errorf("stage: %w", ErrEmptyProfile)
	}
	if len(stages) > MaxStages {
		return Profile{}, fmt.Errorf("stage: %d stages, at most %d: %w", len(stages), MaxStages, ErrTooManyStages)
	}
	var p Profile
	if len(stages) == 1 {
		// One stage (a constant request, a changed reservation's rest) is the common
		// case: the profile and its stage share one allocation.
		one := &profileOfOne{profile: profile{schema: schema}, stage: [1]Stage{stages[0]}}
		one.stages = one.stage[:]
		p.profile = &one.profile
	} else {
		p.profile = &profile{schema: schema, stages: append([]Stage(nil), stages...)}
	}
	if len(stages) < inlineOffsets {
		p.offsets = p.inline[:len(stages)+1]
	} else {
		p.offsets = make([]time.Duration, len(stages)+1)
	}
	for i, s := range stages {
		if s.Duration <= 0 {
			return Profile{}, fmt.Errorf("stage: stage %d: %w, got %v", i, ErrBadDuration, s.Duration)
		}
		if err := schema.Validate(s.Demand); err != nil {
			return Profile{}, fmt.Errorf("stage: stage %d: %w", i, err)
		}
		p.offsets[i+1] = AddSat(p.offsets[i], s.Duration)
		p.peak = p.peak.Max(s.Demand)
	}
	return p, nil
}

// MustProfile is NewProfile for stages known to be valid; it panics on error.
func MustProfile(schema *resource.Schema, stages ...Stage) Profile {
	p, err := NewProfile(schema, stages...)
	if err != nil {
		panic(err)
	}
	return p
}

// Constant returns the one-stage profile that demands demand for d: how a request-based
// scheduler sees every task (docs/methods.md §3, request quantity). Pass Forever for a
// task of unknown length.
func Constant(schema *resource.Schema, demand resource.Tuple, d time.Duration) (Profile, error) {
	return NewProfile(schema, Stage{Duration: d, Demand: demand})
}

// Schema is the schema the profile's demands are written in.
func (p Profile) Schema() *resource.Schema {
	if p.profile == nil {
		return nil
	}
	return p.schema
}

// Len is the number of stages.
func (p Profile) Len() int {
	if p.profile == nil {
		return 0
	}
	return len(p.stages)
}

// Stage returns stage i, 0 ≤ i < Len(). An i outside that range is a programming
// error and panics, as a slice index does; the zero Profile has no stage.
func (p Profile) Stage(i int) Stage { return p.stageList()[i] }

// Offset returns when stage i starts, counted from the task's start, 0 ≤ i ≤ Len();
// Offset(Len()) is the total duration, Duration(). So the zero Profile's Offset(0) is 0.
// An i outside that range is a programming error and panics, as a slice index does.
func (p Profile) Offset(i int) time.Duration {
	if i == 0 {
		return 0 // every profile's first offset; the zero Profile stores none
	}
	if p.profile == nil {
		panic(fmt.Sprintf("stage: offset %d of the zero profile", i))
	}
	return p.offsets[i]
}

// Stages returns a copy of the stages.
func (p Profile) Stages() []Stage { return append([]Stage(nil), p.stageList()...) }

// Same reports whether p and q are one profile: copies of the same value, sharing its
// storage (a Profile is immutable, so such copies are equal). Equal profiles built
// apart are not Same; two zero Profiles are. It costs one comparison, so a cache of
// what is derived from a profile (a hold built from an estimate, say) can tell at once
// whether the profile it was built from is still the one in hand.
func (p Profile) Same(q Profile) bool {
	return p.profile == q.profile
}

// Duration is the total duration: the sum of the stages' (Forever if any is).
func (p Profile) Duration() time.Duration {
	if p.profile == nil {
		return 0
	}
	return p.offsets[len(p.stages)]
}

// Peak is the per-dimension maximum demand over all stages: what the coarse-grained
// matcher compares against (Mx in docs/methods.md §3).
func (p Profile) Peak() resource.Tuple {
	if p.profile == nil {
		return resource.Tuple{}
	}
	return p.peak
}

// At returns the demand at offset d from the task's start: that of the stage containing
// d, or zero outside [0, Duration()).
func (p Profile) At(d time.Duration) resource.Tuple {
	i := p.StageAt(d)
	if i < 0 {
		return resource.Tuple{}
	}
	return p.stages[i].Demand
}

// StageAt returns the index of the stage containing offset d, or -1 outside
// [0, Duration()).
func (p Profile) StageAt(d time.Duration) int {
	if d < 0 || d >= p.Duration() {
		return -1
	}
	// The first offset beyond d starts the stage after the one containing d.
	return sort.Search(len(p.stages), func(i int) bool { return p.offsets[i+1] > d })
}

// Stretch returns the profile with every stage's duration multiplied by f and the same
// demands: the task on a node f times slower (f > 1) or faster, or slowed by
// compression (f = resource.Slowdown's factor). Durations round to the nearest
// nanosecond, never below one, and saturate at Forever. f must be a finite number > 0.
func (p Profile) Stretch(f float64) (Profile, error) {
	if !(f > 0) || math.IsInf(f, 1) {
		return Profile{}, fmt.Errorf("stage: stretch factor %v not a finite number > 0: %w", f, ErrBadDuration)
	}
	if p.Len() == 0 {
		return Profile{}, fmt.Errorf("stage: %w", ErrEmptyProfile)
	}
	stages := p.Stages()
	for i := range stages {
		d := math.Round(float64(stages[i].Duration) * f)
		switch {
		case d >= float64(Forever):
			stages[i].Duration = Forever
		case d < 1:
			stages[i].Duration = 1
		default:
			stages[i].Duration = time.Duration(d)
		}
	}
	return NewProfile(p.Schema(), stages...)
}

// String formats the profile as "[dur demand, ...]" with demands in the schema's names.
func (p Profile) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range p.stageList() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%v {%s}", s.Duration, p.schema.Format(s.Demand))
	}
	b.WriteByte(']')
	return b.String()
}

// AddSat returns t + d for d ≥ 0, saturating at Forever instead of overflowing: the
// end of something that starts at t and lasts d.
func AddSat(t, d time.Duration) time.Duration {
	if t > Forever-d {
		return Forever
	}
	return t + d
}

// Seconds converts s seconds to a Duration, rounded to the nanosecond: 0 for s ≤ 0 or
// NaN, Forever for anything at or beyond it (an infinite time left, a rate of zero).
func Seconds(s float64) time.Duration {
	ns := s * 1e9
	switch {
	case !(ns > 0):
		return 0
	case ns >= float64(Forever):
		return Forever
	}
	return time.Duration(math.Round(ns))
}

// Demand is stage i's demand, p.Stage(i).Demand, without a copy of the whole stage. An
// i outside [0, Len()) panics, as for Stage.
func (p Profile) Demand(i int) resource.Tuple { return p.stageList()[i].Demand }

// stageList is the stages, nil for the zero Profile.
func (p Profile) stageList() []Stage {
	if p.profile == nil {
		return nil
	}
	return p.stages
}
