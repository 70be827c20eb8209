package predict

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/finegrain/finegrain/resource"
)

// MaxLoadReports bounds the reports a LoadLog keeps per server, whatever its window: the
// oldest beyond it are dropped first.
const MaxLoadReports = 1024

// LoadLog forecasts, per server, the load that work the scheduler did not place —
// other applications sharing the server, the FGM paper's cloud — will put on it, from
// what the server's agent measured (FGM §3: node agents report idle resources, the
// information module predicts server availability). It keeps the reports of the last
// window and forecasts, per dimension, the q-quantile of the compressible dimensions'
// reports (CPU, bandwidth: what to plan room around) and the largest report of the
// non-compressible ones (memory: what must never be short). A window of 0 keeps the
// latest report alone, which is then the forecast.
//
// A LoadLog is not safe for concurrent use; the scheduler calls it under its lock.
type LoadLog struct {
	schema  *resource.Schema
	window  time.Duration
	q       float64
	servers map[string]*loadRing
	scratch []int64
}

type loadRing struct {
	at    []time.Duration
	loads []resource.Tuple
}

// NewLoadLog returns an empty log for schema forecasting from the reports of the last
// window (≥ 0; 0: the latest report alone) with quantile q in [0, 1] on the compressible
// dimensions (1: their largest report, 0.5: the median).
func NewLoadLog(schema *resource.Schema, window time.Duration, q float64) (*LoadLog, error) {
	switch {
	case schema == nil:
		return nil, fmt.Errorf("predict: load log: nil schema: %w", resource.ErrSchemaMismatch)
	case window < 0:
		return nil, fmt.Errorf("predict: load log: window %v is negative: %w", window, ErrInvalidOption)
	case !(q >= 0 && q <= 1):
		return nil, fmt.Errorf("predict: load log: quantile %v not in [0, 1]: %w", q, ErrInvalidOption)
	}
	return &LoadLog{schema: schema, window: window, q: q, servers: map[string]*loadRing{}}, nil
}

// Window and Quantile are the log's settings.
func (l *LoadLog) Window() time.Duration { return l.window }

// Quantile is the quantile forecast on the compressible dimensions.
func (l *LoadLog) Quantile() float64 { return l.q }

// Add records server's load measured at now and returns the forecast: from the reports
// since now − window, per dimension, the q-quantile (compressible) or the largest
// (non-compressible). It fails, recording nothing, on an invalid load (negative,
// outside the schema) or a time before the server's latest report.
func (l *LoadLog) Add(server string, now time.Duration, load resource.Tuple) (resource.Tuple, error) {
	if err := l.schema.Validate(load); err != nil {
		return resource.Tuple{}, fmt.Errorf("predict: load of %q: %w", server, err)
	}
	r := l.servers[server]
	if r == nil {
		r = &loadRing{}
		l.servers[server] = r
	}
	if n := len(r.at); n > 0 && now < r.at[n-1] {
		return resource.Tuple{}, fmt.Errorf("predict: load of %q at %v, before its report at %v: %w", server, now, r.at[n-1], ErrBadTime)
	}
	r.at, r.loads = append(r.at, now), append(r.loads, load)
	drop := 0
	for drop < len(r.at)-1 && (l.window == 0 || now-r.at[drop] > l.window || len(r.at)-drop > MaxLoadReports) {
		drop++
	}
	if drop > 0 {
		r.at = slices.Delete(r.at, 0, drop)
		r.loads = slices.Delete(r.loads, 0, drop)
	}
	return l.forecast(r), nil
}

// Forecast is server's forecast from the reports kept (as Add last returned); false
// when none was recorded.
func (l *LoadLog) Forecast(server string) (resource.Tuple, bool) {
	r := l.servers[server]
	if r == nil || len(r.loads) == 0 {
		return resource.Tuple{}, false
	}
	return l.forecast(r), true
}

func (l *LoadLog) forecast(r *loadRing) resource.Tuple {
	if len(r.loads) == 1 {
		return r.loads[0]
	}
	var out resource.Tuple
	comp := l.schema.Compressible()
	for k := 0; k < l.schema.Len(); k++ {
		l.scratch = l.scratch[:0]
		for _, ld := range r.loads {
			l.scratch = append(l.scratch, ld[k])
		}
		slices.Sort(l.scratch)
		q := 1.0
		if comp.Has(k) {
			q = l.q
		}
		// Nearest rank: the smallest value at or above a share q of the reports.
		i := int(math.Ceil(q*float64(len(l.scratch)))) - 1
		out[k] = l.scratch[max(0, min(len(l.scratch)-1, i))]
	}
	return out
}

// Forget drops everything recorded for server (a server that left the cluster).
func (l *LoadLog) Forget(server string) { delete(l.servers, server) }
