package predict

import (
	"fmt"
	"math"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/stage"
)

// Phases describes how a task's progress splits over its phases (docs/methods.md §8,
// eq. 3.1): a task in phase K that has processed M of the N units of that phase has
// progress
//
//	(w_0 + … + w_{K−1} + w_K × M/N) / (w_0 + … + w_last)
//
// MapPhases (one phase) gives eq. 3.1's map progress M/N; ReducePhases (shuffle, sort,
// reduce, equal weights) gives its reduce progress (K + M/N)/3. Other weights describe
// other task shapes — e.g. Hadoop weighs a map with reducers as map 2/3, sort 1/3. A
// Phases value is immutable and safe for concurrent use.
type Phases struct {
	cum []float64 // cum[i] = w_0 + … + w_{i−1}; len = phases + 1
}

// NewPhases returns the phases with the given relative weights, each a finite number
// > 0; there must be at least one.
func NewPhases(weights ...float64) (Phases, error) {
	if len(weights) == 0 {
		return Phases{}, fieldErr("phase weights", "none", ErrInvalidOption)
	}
	cum := make([]float64, len(weights)+1)
	for i, w := range weights {
		if !(w > 0) || !field.Finite(w) {
			return Phases{}, fieldErr(fmt.Sprintf("phase weight[%d]", i), w, ErrInvalidOption)
		}
		cum[i+1] = cum[i] + w
	}
	if !field.Finite(cum[len(weights)]) {
		return Phases{}, fieldErr("phase weights", "sum overflows", ErrInvalidOption)
	}
	return Phases{cum: cum}, nil
}

// MapPhases is eq. 3.1 for a map task: one phase, progress M/N.
func MapPhases() Phases { return Phases{cum: []float64{0, 1}} }

// ReducePhases is eq. 3.1 for a reduce task: shuffle, sort and reduce (K = 0, 1, 2) with
// a third of the progress each, progress (K + M/N)/3.
func ReducePhases() Phases { return Phases{cum: []float64{0, 1, 2, 3}} }

// Len is the number of phases.
func (p Phases) Len() int { return max(len(p.cum)-1, 0) }

// Progress is eq. 3.1: the progress, in [0, 1], of a task in phase (0-based) that has
// done done of the total units of that phase (bytes read, records, keys). It fails
// unless 0 ≤ phase < Len(), total > 0 and 0 ≤ done ≤ total.
func (p Phases) Progress(phase int, done, total int64) (float64, error) {
	if phase < 0 || phase >= p.Len() {
		return 0, fieldErr("phase", phase, ErrBadProgress)
	}
	if total <= 0 {
		return 0, fieldErr("total", total, ErrBadProgress)
	}
	if done < 0 || done > total {
		return 0, fieldErr("done", fmt.Sprintf("%d of %d", done, total), ErrBadProgress)
	}
	w := p.cum[phase+1] - p.cum[phase]
	pr := (p.cum[phase] + w*(float64(done)/float64(total))) / p.cum[len(p.cum)-1]
	return min(pr, 1), nil
}

// MapProgress is eq. 3.1 for a map task that has read m of its n input units: m/n.
func MapProgress(m, n int64) (float64, error) { return MapPhases().Progress(0, m, n) }

// ReduceProgress is eq. 3.1 for a reduce task in phase k (0 shuffle, 1 sort, 2 reduce)
// that has processed m of the n units of that phase: (k + m/n)/3.
func ReduceProgress(k int, m, n int64) (float64, error) {
	return ReducePhases().Progress(k, m, n)
}

// ProgressRate is eq. 3.2: progress per second of running time, progress / Trun. It
// fails unless progress is in [0, 1] and running > 0.
func ProgressRate(progress float64, running time.Duration) (float64, error) {
	if err := checkProgress("progress", progress); err != nil {
		return 0, err
	}
	if running <= 0 {
		return 0, fieldErr("running time", running, ErrBadDuration)
	}
	return progress / running.Seconds(), nil
}

// TimeLeft is eq. 3.4: the time a task at progress, advancing at rate (progress per
// second), needs to finish, (1 − progress) / rate. A finished task (progress 1) needs
// 0; a task that does not advance (rate 0) needs stage.Forever. The result saturates at
// stage.Forever. It fails unless progress is in [0, 1] and rate is a finite value ≥ 0.
func TimeLeft(progress, rate float64) (time.Duration, error) {
	if err := checkProgress("progress", progress); err != nil {
		return 0, err
	}
	if !field.Finite(rate) || rate < 0 {
		return 0, fieldErr("progress rate", rate, ErrInvalidValue)
	}
	return timeLeft(progress, rate), nil
}

func timeLeft(progress, rate float64) time.Duration {
	if progress >= 1 {
		return 0
	}
	if rate <= 0 {
		return stage.Forever
	}
	return stage.Seconds((1 - progress) / rate)
}

func checkProgress(field string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return fieldErr(field, p, ErrBadProgress)
	}
	return nil
}

// DefaultSlowTaskThreshold is LATE's slowTaskThreshold (PRRL thesis, Table 3.2).
const DefaultSlowTaskThreshold = 1.0

// RateStats summarises the progress rates (progress per second) of a set of finished
// tasks: their number, mean and standard deviation.
type RateStats struct {
	// N is the number of tasks.
	N int
	// Mean is the mean rate, 0 when N is 0.
	Mean float64
	// Std is the population standard deviation of the rates (Σ(r − mean)²/N)^½, as
	// Hadoop's DataStatistics computes it; 0 when N < 2.
	Std float64
}

// IsSlowTask is eq. 3.3 (LATE's eq. 2.3): a running task advancing at rate is slow when
//
//	mean(finished) − rate > std(finished) × threshold.
//
// With no finished task there is nothing to compare with, and no task is slow.
func IsSlowTask(rate float64, finished RateStats, threshold float64) bool {
	if finished.N == 0 {
		return false
	}
	return finished.Mean-rate > finished.Std*threshold
}

// rateAcc accumulates RateStats with Welford's method.
type rateAcc struct {
	n        int
	mean, m2 float64
}

func (a *rateAcc) add(x float64) {
	a.n++
	d := x - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (x - a.mean)
}

func (a rateAcc) stats() RateStats {
	s := RateStats{N: a.n, Mean: a.mean}
	if a.n > 1 {
		s.Std = math.Sqrt(max(a.m2, 0) / float64(a.n))
	}
	return s
}
