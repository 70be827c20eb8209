package match

import (
	"fmt"
	"math"
	"sync"
)

// QoSLen is the number of features in a QoS vector (docs/methods.md §12): CPU, memory,
// network, disk and price.
const QoSLen = 5

// The range of a QoS feature value (docs/methods.md §12).
const (
	// QoSMin is the smallest value: the least demand, or the least supply.
	QoSMin = 1.0
	// QoSMax is the largest value: the most demand, or the most supply.
	QoSMax = 10.0
)

// WeightTolerance is how far from 1 the sum of QoS weights may be (eq. 2).
const WeightTolerance = 1e-6

// Feature is one of the QoS features, the index into a QoS vector.
type Feature int

// The QoS features, in vector order (eq. 1, 3).
const (
	// FeatureCPU is CPU usage.
	FeatureCPU Feature = iota
	// FeatureMemory is memory usage.
	FeatureMemory
	// FeatureNetwork is network usage.
	FeatureNetwork
	// FeatureDisk is disk usage.
	FeatureDisk
	// FeaturePrice is price.
	FeaturePrice
)

var featureNames = [QoSLen]string{"cpu", "memory", "network", "disk", "price"}

// String returns the feature's name, e.g. "network".
func (f Feature) String() string {
	if f >= 0 && int(f) < QoSLen {
		return featureNames[f]
	}
	return fmt.Sprintf("Feature(%d)", int(f))
}

// QoSVector is a job's QoS demand Req (eq. 1) or a node's QoS supply Res (eq. 3): one
// value in [1, 10] per feature, 1 the least, 10 the most. Build one with NewQoSVector
// or check a literal with Validate.
type QoSVector [QoSLen]float64

// NewQoSVector returns the vector of the QoSLen values given, in feature order. It fails
// when there are not exactly QoSLen values or one is not a number in [1, 10].
func NewQoSVector(values ...float64) (QoSVector, error) {
	var v QoSVector
	if len(values) != QoSLen {
		return v, fieldErr("qos vector length", len(values), ErrBadVector)
	}
	copy(v[:], values)
	if err := v.Validate(); err != nil {
		return QoSVector{}, err
	}
	return v, nil
}

// Validate checks that every value is a number in [1, 10].
func (v QoSVector) Validate() error {
	for i, x := range v {
		if !(x >= QoSMin && x <= QoSMax) {
			return fieldErr(fmt.Sprintf("qos[%d] (%s)", i, Feature(i)), x, ErrBadVector)
		}
	}
	return nil
}

// Class returns the feature holding the rank-th largest value (rank 1 is the largest);
// ties go to the feature earlier in vector order. A node is classified by Class(1) and,
// when the sub-queue of that class is empty, by Class(2), Class(3), ... (docs/methods.md
// §12, steps 2–5). It fails unless 1 ≤ rank ≤ QoSLen.
func (v QoSVector) Class(rank int) (Feature, error) {
	if rank < 1 || rank > QoSLen {
		return -1, fieldErr("rank", rank, ErrBadRank)
	}
	return rankOf(v, rank), nil
}

// rankOf returns the feature of the rank-th largest value, ties by index.
func rankOf(v [QoSLen]float64, rank int) Feature {
	var order [QoSLen]Feature
	for i := range order {
		order[i] = Feature(i)
	}
	// Insertion sort, descending by value, stable on index.
	for i := 1; i < QoSLen; i++ {
		for j := i; j > 0 && v[order[j]] > v[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return order[rank-1]
}

// Weights are a user's preference weights over the QoS features, k in eq. 2: each a
// number ≥ 0, summing to 1 (within WeightTolerance). Build them with NewWeights or
// check a literal with Validate.
type Weights [QoSLen]float64

// NewWeights returns the weights of the QoSLen values given, in feature order. It fails
// when there are not exactly QoSLen values, one is negative or not a number, or they do
// not sum to 1 within WeightTolerance.
func NewWeights(k ...float64) (Weights, error) {
	var w Weights
	if len(k) != QoSLen {
		return w, fieldErr("weights length", len(k), ErrBadWeights)
	}
	copy(w[:], k)
	if err := w.Validate(); err != nil {
		return Weights{}, err
	}
	return w, nil
}

// Validate checks that every weight is a finite number ≥ 0 and that they sum to 1
// within WeightTolerance (eq. 2).
func (w Weights) Validate() error {
	sum := 0.0
	for i, x := range w {
		if !(x >= 0) || math.IsInf(x, 1) {
			return fieldErr(fmt.Sprintf("weights[%d] (%s)", i, Feature(i)), x, ErrBadWeights)
		}
		sum += x
	}
	if math.Abs(sum-1) > WeightTolerance {
		return fieldErr("sum of weights", sum, ErrBadWeights)
	}
	return nil
}

// Class is the job's class, the feature of its largest weight (ties to the earlier
// feature): jobs wait in the sub-queue of their class (docs/methods.md §12).
func (w Weights) Class() Feature { return rankOf(w, 1) }

// Value is eq. 4, how well a node's QoS supply res matches a job's demand req under
// the job's weights k: Σ res_i/req_i × k_i. Values above 1 mean the node offers more
// than the job asks for, weighted by what the job cares about. Inputs are assumed
// valid (see Validate).
func Value(req, res QoSVector, k Weights) float64 {
	v := 0.0
	for i := range req {
		v += res[i] / req[i] * k[i]
	}
	return v
}

// Hard is the hard QoS of docs/methods.md §12: memory and disk in bytes, what a job
// actually needs or what a node has remaining.
type Hard struct {
	Memory, Disk int64
}

// Validate checks that neither amount is negative.
func (h Hard) Validate() error {
	switch {
	case h.Memory < 0:
		return fieldErr("hard memory", h.Memory, ErrBadHard)
	case h.Disk < 0:
		return fieldErr("hard disk", h.Disk, ErrBadHard)
	}
	return nil
}

// MustValue is eq. 5, must_value = (mem_res − mem_task) × (disk_res − disk_task),
// computed in float64 (byte products overflow int64), and whether the hard QoS is met.
// Reading (docs/methods.md §12): as printed, two negative differences would give a
// positive product; the hard QoS is met only when both differences are ≥ 0 and the
// product is > 0, i.e. both hard resources fit with some room. When it is not met the
// returned value is min(product, 0), so that must_value ≤ 0 exactly when the hard QoS
// fails.
func MustValue(need, remaining Hard) (float64, bool) {
	dm := float64(remaining.Memory) - float64(need.Memory)
	dd := float64(remaining.Disk) - float64(need.Disk)
	v := dm * dd
	if dm >= 0 && dd >= 0 && v > 0 {
		return v, true
	}
	return min(v, 0), false
}

// FinalValue is eq. 6: priority when the hard QoS is not met (must_value ≤ 0), value +
// priority otherwise. It grows with priority.
func FinalValue(value float64, met bool, priority int) float64 {
	if !met {
		return float64(priority)
	}
	return value + float64(priority)
}

// QoSJob is a job as QoS-vector matching sees it: its demand vector, the user's
// weights and the hard QoS it needs.
type QoSJob struct {
	// ID names the job; the aging priority is kept per ID.
	ID string
	// Req is the job's QoS demand (eq. 1).
	Req QoSVector
	// Weights are the user's preferences (eq. 2); the largest is the job's class.
	Weights Weights
	// Need is the memory and disk the job actually needs.
	Need Hard
}

// Validate checks the job's vectors and hard QoS.
func (j QoSJob) Validate() error {
	if err := j.Req.Validate(); err != nil {
		return fmt.Errorf("job %q: %w", j.ID, err)
	}
	if err := j.Weights.Validate(); err != nil {
		return fmt.Errorf("job %q: %w", j.ID, err)
	}
	if err := j.Need.Validate(); err != nil {
		return fmt.Errorf("job %q: %w", j.ID, err)
	}
	return nil
}

// QoSNode is a node as its heartbeat describes it to QoS-vector matching.
type QoSNode struct {
	// Res is the node's QoS supply (eq. 3).
	Res QoSVector
	// Remaining is the memory and disk the node has left.
	Remaining Hard
}

// Validate checks the node's vector and hard QoS.
func (n QoSNode) Validate() error {
	if err := n.Res.Validate(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	if err := n.Remaining.Validate(); err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return nil
}

// Aging keeps the anti-starvation priorities of docs/methods.md §12: every job starts at
// priority 0, and each time a job is evaluated against a node whose hard QoS it does not
// meet (must_value ≤ 0) its priority rises by one, so that it eventually outranks
// well-matched jobs on a node that can hold it. The zero value is ready to use; an
// Aging is safe for concurrent use.
type Aging struct {
	mu   sync.Mutex
	prio map[string]int
}

// Priority returns the job's current priority (0 for a job never seen).
func (a *Aging) Priority(job string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prio[job]
}

// Forget drops a job's priority (when the job is done).
func (a *Aging) Forget(job string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.prio, job)
}

// Evaluate returns the job's final value on the node (eq. 6, with its current
// priority) and whether the hard QoS is met; when it is not, the job's priority rises
// by one afterwards. It fails, changing nothing, on an invalid job or node.
func (a *Aging) Evaluate(j QoSJob, n QoSNode) (final float64, met bool, err error) {
	if err := j.Validate(); err != nil {
		return 0, false, err
	}
	if err := n.Validate(); err != nil {
		return 0, false, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	final, met = a.evaluate(j, n)
	return final, met, nil
}

func (a *Aging) evaluate(j QoSJob, n QoSNode) (float64, bool) {
	_, met := MustValue(j.Need, n.Remaining)
	p := a.prio[j.ID]
	final := FinalValue(Value(j.Req, n.Res, j.Weights), met, p)
	if !met {
		if a.prio == nil {
			a.prio = make(map[string]int)
		}
		a.prio[j.ID] = p + 1
	}
	return final, met
}

// Pick is docs/methods.md §12 steps 4–6 within one queue: jobs wait in sub-queues by
// class (their largest weight); the node is classified by its largest feature, and when
// that sub-queue is empty by its 2nd largest, 3rd, and so on; in the chosen sub-queue
// every job is evaluated (raising the priority of those whose hard QoS the node does not
// meet) and the job with the best final value among those that meet it is picked, the
// earliest in jobs on ties. It returns the picked job's index in jobs, or -1 when no
// job of the chosen sub-queue meets the hard QoS (or jobs is empty). Reading: the
// fallback to the next class happens only for an empty sub-queue, as printed.
//
// It fails, changing no priority, on an invalid node or job or a duplicate job ID.
func (a *Aging) Pick(n QoSNode, jobs []QoSJob) (int, error) {
	if err := n.Validate(); err != nil {
		return -1, err
	}
	seen := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		if err := j.Validate(); err != nil {
			return -1, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		if seen[j.ID] {
			return -1, fieldErr(fmt.Sprintf("jobs[%d] ID", i), j.ID, ErrDuplicate)
		}
		seen[j.ID] = true
	}
	if len(jobs) == 0 {
		return -1, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for rank := 1; rank <= QoSLen; rank++ {
		class := rankOf(n.Res, rank)
		best, bestV, found := -1, 0.0, false
		for i, j := range jobs {
			if j.Weights.Class() != class {
				continue
			}
			found = true
			v, met := a.evaluate(j, n)
			if met && (best < 0 || v > bestV) {
				best, bestV = i, v
			}
		}
		if found {
			return best, nil
		}
	}
	return -1, nil
}
