package fairness

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
)

// Kind says which level of the three-level model of docs/methods.md §10 an Entry sits at.
type Kind uint8

// The three levels: a queue (a pool) holds queues and jobs, a job holds tasks.
const (
	KindQueue Kind = iota
	KindJob
	KindTask
)

// String names the kind: "queue", "job" or "task".
func (k Kind) String() string {
	switch k {
	case KindQueue:
		return "queue"
	case KindJob:
		return "job"
	case KindTask:
		return "task"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Share is how much of its parent an entity is entitled to: its weight against its
// siblings, the min share it is offered first while below it, and the max share past
// which it is offered nothing (a cap, or a Capacity queue's elastic maximum).
//
// Min and Max are in the unit of the Policy that orders the entity among its siblings
// (see Policy.Measure): running tasks for FIFO and Fair (the thesis's slots,
// docs/methods.md §10), the dominant share of the cluster's capacity (a fraction in
// [0, 1]) for DRF and Capacity. For Capacity, Min is the queue's guaranteed capacity and
// Max its maximum capacity, both fractions of the whole cluster.
type Share struct {
	// Weight is the entity's weight among its siblings; it must be positive and finite.
	// Twice the weight means twice the fair share.
	Weight float64
	// Min is the min share (Capacity: the guaranteed capacity); 0 means none. It must be
	// finite and non-negative.
	Min float64
	// Max is the max share (Capacity: the maximum capacity); 0 or +Inf means none. It
	// must be non-negative and not below Min.
	Max float64
}

// DefaultShare is the share of an entity configured with nothing: weight 1, no min
// share, no max share.
func DefaultShare() Share { return Share{Weight: 1} }

// HasMax reports whether s caps its entity.
func (s Share) HasMax() bool { return s.Max > 0 && !math.IsInf(s.Max, 1) }

// Validate checks s: a positive finite weight, a finite non-negative min, a non-negative
// max (0 or +Inf for none), and min ≤ max when there is a max.
func (s Share) Validate() error {
	if err := s.validate(); err != nil {
		return within("share", err)
	}
	return nil
}

func (s Share) validate() error {
	switch {
	case !(s.Weight > 0) || math.IsInf(s.Weight, 1):
		return fieldErr("weight", s.Weight, ErrInvalidWeight)
	case !(s.Min >= 0) || math.IsInf(s.Min, 1):
		return fieldErr("min share", s.Min, ErrInvalidShare)
	case !(s.Max >= 0):
		return fieldErr("max share", s.Max, ErrInvalidShare)
	case s.HasMax() && s.Min > s.Max:
		return fieldErr("min share", fmt.Sprintf("%v > max %v", s.Min, s.Max), ErrMinAboveMax)
	}
	return nil
}

// Entry is what a policy sees of one entity competing for the next offer: a queue, a job
// or a task. For a queue, the counts and tuples are the sums over everything below it.
// The Tree keeps them up to date; Sort takes them as given.
type Entry struct {
	// ID names the entity; it is unique among its siblings and the last tie-break.
	ID string
	// Kind is the entity's level.
	Kind Kind
	// Priority orders FIFO: higher goes first.
	Priority int
	// Submitted is when the entity arrived, as an offset from the caller's epoch;
	// earlier goes first among equals.
	Submitted time.Duration
	// Share is the entity's weight, min and max share.
	Share Share
	// Running is the number of tasks running (for PRRL, plus those pre-assigned).
	Running int
	// Pending is the number of tasks waiting to start.
	Pending int
	// Usage is the resources held by the running tasks.
	Usage resource.Tuple
	// Demand is the resources the pending tasks ask for.
	Demand resource.Tuple
}

func (e *Entry) validate(schema *resource.Schema) error {
	if e.ID == "" {
		return fieldErr("ID", e.ID, ErrInvalidID)
	}
	if e.Kind > KindTask {
		return fieldErr("kind", e.Kind, ErrInvalidKind)
	}
	if err := e.Share.validate(); err != nil {
		return err
	}
	if e.Running < 0 {
		return fieldErr("running", e.Running, ErrInvalidCount)
	}
	if e.Pending < 0 {
		return fieldErr("pending", e.Pending, ErrInvalidCount)
	}
	if err := schema.Validate(e.Usage); err != nil {
		return fieldErr("usage", e.Usage, err)
	}
	if err := schema.Validate(e.Demand); err != nil {
		return fieldErr("demand", e.Demand, err)
	}
	return nil
}

// OrderKey is an entity's place in a policy's order: keys compare element by element,
// the smaller goes first. Entities with equal keys go by submission time, then by ID.
// Policies never put NaN in a key.
type OrderKey [4]float64

// Compare returns −1, 0 or +1 as k sorts before, with or after o. Keys hold no NaN.
func (k OrderKey) Compare(o OrderKey) int {
	for i := range k {
		switch {
		case k[i] < o[i]:
			return -1
		case k[i] > o[i]:
			return 1
		}
	}
	return 0
}

// Policy is the ordering seam: it decides which queue, job or task is offered resources
// first (docs/methods.md §3, Alg. 1 line 4, "sort(Ts, Pf)"; the fair and FIFO rules of
// §10). The Tree asks a queue's policy to order that queue's children; Sort orders a flat
// list. Implementations must be deterministic, safe for concurrent use and cheap: the
// Tree calls them on every allocation.
type Policy interface {
	// Measure is how much e holds and how much it wants (holds plus pending), in the
	// policy's unit: the unit of e.Share.Min and e.Share.Max. capacity is the cluster's
	// total.
	Measure(e *Entry, capacity resource.Tuple) (used, demand float64)
	// Key is e's place in the order; smaller keys are offered resources first.
	Key(e *Entry, capacity resource.Tuple) OrderKey
}

// fifoKey is FIFO's rule (docs/methods.md §10): highest priority, then (by the common
// tie-breaks) earliest submission, then ID.
func fifoKey(e *Entry) OrderKey { return OrderKey{-float64(e.Priority)} }

func taskMeasure(e *Entry) (float64, float64) {
	return float64(e.Running), float64(e.Running) + float64(e.Pending)
}

func dominantMeasure(e *Entry, capacity resource.Tuple) (float64, float64) {
	return e.Usage.DominantShare(capacity), e.Usage.Add(e.Demand).DominantShare(capacity)
}

// minTier returns whether an entity holding used of an effective min share
// min(Min, demand) is below it (docs/methods.md §10: minShare = min(configured, demand)),
// and its ratio used/minShare.
func minTier(used, demand float64, s Share) (bool, float64) {
	m := min(s.Min, demand)
	if used < m {
		return true, used / m
	}
	return false, 0
}

// FIFO orders by priority (higher first), then submission time, then ID: the FIFO rule
// of docs/methods.md §10 and Hadoop's FIFO scheduler. Its unit for min and max shares is
// running tasks; it ignores weights and min shares.
type FIFO struct{}

// Measure counts running tasks and running plus pending tasks.
func (FIFO) Measure(e *Entry, _ resource.Tuple) (float64, float64) { return taskMeasure(e) }

// Key is ⟨−priority⟩.
func (FIFO) Key(e *Entry, _ resource.Tuple) OrderKey { return fifoKey(e) }

// Fair is the fair rule of docs/methods.md §10 (PRRL thesis §2.4.2, Hadoop's Fair
// Scheduler), counted in running tasks: entities below their min share come first, lowest
// running/minShare first, where minShare = min(configured min share, demand in tasks);
// then the rest, lowest running/weight first; ties go by submission time, then ID.
// Tasks are ordered FIFO. Use WaterFill for the fair shares themselves.
//
// For PRRL (docs/methods.md §10) the caller counts pre-assigned slots as running.
type Fair struct{}

// Measure counts running tasks and running plus pending tasks.
func (Fair) Measure(e *Entry, _ resource.Tuple) (float64, float64) { return taskMeasure(e) }

// Key is ⟨0, running/minShare⟩ below the min share, else ⟨1, running/weight⟩.
func (Fair) Key(e *Entry, _ resource.Tuple) OrderKey {
	if e.Kind == KindTask {
		return fifoKey(e)
	}
	used, demand := taskMeasure(e)
	if needy, r := minTier(used, demand, e.Share); needy {
		return OrderKey{0, r}
	}
	return OrderKey{1, used / e.Share.Weight}
}

// DRF is weighted dominant resource fairness (Ghodsi et al., NSDI 2011; FGM's default
// fairness policy, docs/methods.md §3): lowest dominant share of the cluster's capacity
// divided by weight first; ties go by the next-largest share divided by weight, then
// submission time, then ID. Applied at every level of a Tree it is hierarchical DRF,
// every share taken against the whole cluster.
//
// Reading: the papers give DRF no min share; like Hadoop YARN's DRF comparator we offer
// entities below min(min share, dominant share of usage plus demand) first, lowest
// used/minShare first. With no min shares set this is plain weighted DRF. Tasks are
// ordered FIFO.
type DRF struct{}

// Measure is the dominant share of the usage, and of usage plus pending demand.
func (DRF) Measure(e *Entry, capacity resource.Tuple) (float64, float64) {
	return dominantMeasure(e, capacity)
}

// Key is ⟨0, used/minShare, second/weight⟩ below the min share, else ⟨1,
// dominant/weight, second/weight⟩, where second is the next-largest share.
func (DRF) Key(e *Entry, capacity resource.Tuple) OrderKey {
	if e.Kind == KindTask {
		return fifoKey(e)
	}
	var first, second float64
	for _, s := range e.Usage.Shares(capacity) {
		if s > first {
			first, second = s, first
		} else if s > second {
			second = s
		}
	}
	w := e.Share.Weight
	if e.Share.Min > 0 {
		demand := e.Usage.Add(e.Demand).DominantShare(capacity)
		if needy, r := minTier(first, demand, e.Share); needy {
			return OrderKey{0, r, second / w}
		}
	}
	return OrderKey{1, first / w, second / w}
}

// Capacity is the capacity scheduler's rule (Hadoop's CapacityScheduler; one of FGM's
// baselines, docs/methods.md §7): each queue is guaranteed Share.Min of the cluster and
// may grow elastically into idle capacity up to Share.Max (both fractions of the whole
// cluster, measured as dominant shares); the queue with the lowest used/guaranteed goes
// first, queues without a guarantee after every queue with one (lowest use first). Jobs
// and tasks inside a queue go FIFO. Weights are not used.
type Capacity struct{}

// Measure is the dominant share of the usage, and of usage plus pending demand.
func (Capacity) Measure(e *Entry, capacity resource.Tuple) (float64, float64) {
	return dominantMeasure(e, capacity)
}

// Key is ⟨0, used/guaranteed⟩ for a queue with a guarantee, ⟨1, used⟩ for one without,
// and FIFO's key for jobs and tasks.
func (Capacity) Key(e *Entry, capacity resource.Tuple) OrderKey {
	if e.Kind != KindQueue {
		return fifoKey(e)
	}
	used := e.Usage.DominantShare(capacity)
	if g := e.Share.Min; g > 0 {
		return OrderKey{0, used / g}
	}
	return OrderKey{1, used}
}

// Sort orders entries in place as policy p would offer them resources, with capacity
// the cluster's total: by key, then submission time, then ID — a total order, so the
// result does not depend on the input order. It fails, leaving entries as they were, on a nil policy, an invalid
// capacity or entry (empty or duplicate ID, bad share, negative count or amount).
func Sort(schema *resource.Schema, p Policy, capacity resource.Tuple, entries []Entry) error {
	if schema == nil {
		return fmt.Errorf("fairness: nil schema: %w", resource.ErrSchemaMismatch)
	}
	if p == nil {
		return fmt.Errorf("fairness: %w", ErrNilPolicy)
	}
	if err := schema.Validate(capacity); err != nil {
		return fieldErr("capacity", capacity, err)
	}
	seen := make(map[string]struct{}, len(entries))
	for i := range entries {
		e := &entries[i]
		err := e.validate(schema)
		if _, dup := seen[e.ID]; err == nil && dup {
			err = fieldErr("ID", e.ID, ErrDuplicate)
		}
		if err != nil {
			return within(fmt.Sprintf("entry %d (%s %q)", i, e.Kind, e.ID), err)
		}
		seen[e.ID] = struct{}{}
	}
	// Sort a permutation rather than the entries: an Entry is a few hundred bytes.
	keys := make([]OrderKey, len(entries))
	perm := make([]int, len(entries))
	for i := range entries {
		keys[i], perm[i] = p.Key(&entries[i], capacity), i
	}
	// IDs are unique, so the order is total and an unstable sort is deterministic.
	slices.SortFunc(perm, func(a, b int) int { return compareEntries(keys[a], &entries[a], keys[b], &entries[b]) })
	sorted := make([]Entry, len(entries))
	for i, j := range perm {
		sorted[i] = entries[j]
	}
	copy(entries, sorted)
	return nil
}

// compareEntries is the total order behind every policy: key, then submission time,
// then ID.
func compareEntries(ka OrderKey, a *Entry, kb OrderKey, b *Entry) int {
	if c := ka.Compare(kb); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Submitted, b.Submitted); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
