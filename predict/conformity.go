package predict

import (
	"fmt"
	"sync"
	"time"

	"github.com/finegrain/finegrain/internal/field"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// Interval is one of the n segments eq. 16 splits a window T into: for Duration (ti),
// a server's resources were actually used at Actual (μi), predicted at Predicted (αi),
// and Idle (Ii) was left unused.
type Interval struct {
	Duration  time.Duration
	Actual    resource.Tuple
	Predicted resource.Tuple
	Idle      resource.Tuple
}

// Conformity is the prediction conformity F of Def. 4 (eq. 16), per resource, over the
// window made of intervals on a server of the given capacity (N), with the per-resource
// idle threshold (Th, a fraction of capacity in [0, 1]):
//
//	F = Σ((μi − αi)² × ti) / T   when μ > α and I < Th × N,   otherwise 0,
//
// where T = Σti and μ, α and I are the time-weighted averages (eq. 14, computed with
// stage.TimeAverage) of the actual, predicted and idle amounts over the window. F is only
// non-zero on a resource whose usage exceeded its prediction on a server short of idle
// resources: an over-prediction, or an under-prediction with plenty idle, does no harm,
// and the estimator is left to converge on its own (FGM §2.4).
//
// F is eq. 16 as printed, in squared base units of the dimension (millicores², bytes²):
// resources are not comparable raw, so a consumer that compares F with thresholds first
// reduces it, e.g. √F/N, the root-mean-square error as a share of capacity (the policy
// package's WorstShare does this). A dimension of zero capacity has F = 0.
//
// It fails, naming the interval, on an empty window, a non-positive duration, a negative
// or out-of-schema amount or capacity, or a threshold outside [0, 1].
func Conformity(schema *resource.Schema, capacity resource.Tuple, idleThreshold resource.Vector, window []Interval) (resource.Vector, error) {
	var f resource.Vector
	if schema == nil {
		return f, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	if err := schema.Validate(capacity); err != nil {
		return f, wrapf(err, "capacity")
	}
	if err := schema.ValidateRatios(idleThreshold, 1, false); err != nil {
		return f, wrapf(err, "idle threshold")
	}
	if len(window) == 0 {
		return f, fieldErr("window", 0, ErrNoSamples)
	}
	var mu, alpha, idle stage.TimeAverage
	var sq resource.Vector
	var total float64
	for i, iv := range window {
		if iv.Duration <= 0 {
			return resource.Vector{}, fieldErr(fmt.Sprintf("window[%d].Duration", i), iv.Duration, ErrBadDuration)
		}
		for _, x := range [...]struct {
			name string
			t    resource.Tuple
		}{{"Actual", iv.Actual}, {"Predicted", iv.Predicted}, {"Idle", iv.Idle}} {
			if err := schema.Validate(x.t); err != nil {
				return resource.Vector{}, wrapf(err, "window[%d].%s", i, x.name)
			}
		}
		mu.Add(iv.Actual, iv.Duration)
		alpha.Add(iv.Predicted, iv.Duration)
		idle.Add(iv.Idle, iv.Duration)
		t := float64(iv.Duration)
		total += t
		for d := 0; d < schema.Len(); d++ {
			diff := float64(iv.Actual[d]) - float64(iv.Predicted[d])
			sq[d] += diff * diff * t
		}
	}
	m, a, in := mu.Mean(), alpha.Mean(), idle.Mean()
	for d := 0; d < schema.Len(); d++ {
		if capacity[d] == 0 {
			continue
		}
		if m[d] > a[d] && in[d] < idleThreshold[d]*float64(capacity[d]) {
			f[d] = sq[d] / total
		}
	}
	return f, nil
}

// ConformityLog keeps, per server, the last k conformity vectors (eq. 16, one value per
// resource) and their mean: averageConformity(s) of the policy adjuster (Alg. 3), which
// consumes it through an interface with the Mean method. It is safe for concurrent use.
type ConformityLog struct {
	k  int
	mu sync.RWMutex
	m  map[string]*ring
}

type ring struct {
	vals []resource.Vector
	next int // where the next value goes once the ring is full
}

// NewConformityLog returns an empty log keeping the last k values per server; k ≥ 1.
func NewConformityLog(k int) (*ConformityLog, error) {
	if k < 1 {
		return nil, fieldErr("conformity window k", k, ErrInvalidOption)
	}
	return &ConformityLog{k: k, m: make(map[string]*ring)}, nil
}

// Window is k, the number of values kept per server.
func (l *ConformityLog) Window() int { return l.k }

// Record appends server's latest conformity vector, dropping the oldest beyond k. It
// fails, changing nothing, on an empty server ID or a value that is NaN, infinite or
// negative.
func (l *ConformityLog) Record(server string, f resource.Vector) error {
	if server == "" {
		return fieldErr("server", server, ErrEmptyID)
	}
	for d, x := range f {
		if !field.Finite(x) || x < 0 {
			return fieldErr(fmt.Sprintf("conformity[%d]", d), x, ErrInvalidValue)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.m[server]
	if r == nil {
		r = &ring{vals: make([]resource.Vector, 0, l.k)}
		l.m[server] = r
	}
	if len(r.vals) < l.k {
		r.vals = append(r.vals, f)
		return nil
	}
	r.vals[r.next] = f
	r.next = (r.next + 1) % l.k
	return nil
}

// Mean returns the per-resource mean of server's recorded values (the last k, or fewer
// if fewer were recorded), and false when nothing is recorded for it.
func (l *ConformityLog) Mean(server string) (resource.Vector, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r := l.m[server]
	if r == nil || len(r.vals) == 0 {
		return resource.Vector{}, false
	}
	var m resource.Vector
	for _, v := range r.vals {
		for d, x := range v {
			m[d] += x
		}
	}
	n := float64(len(r.vals))
	for d := range m {
		m[d] /= n
	}
	return m, true
}

// Len returns how many values are recorded for server (at most k).
func (l *ConformityLog) Len(server string) int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if r := l.m[server]; r != nil {
		return len(r.vals)
	}
	return 0
}

// Forget drops everything recorded for server (a server that left the cluster).
func (l *ConformityLog) Forget(server string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, server)
}
