package predict

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// MaxSeriesSamples is the longest usage series an estimator accepts: a task sampled every
// second for about twelve days. A longer series is refused (ErrTooManySamples) rather
// than segmented; resample it coarser first.
const MaxSeriesSamples = 1 << 20

// Series is what a node agent measured of one task while it ran: its usage samples,
// when the last one ended, and what is known of the compression the task experienced.
// It is the raw form of an observation (Observation.Series); the estimator divides it
// into stages itself (Segmenter.SegmentSeries).
//
// A node agent typically reads compressible usage (CPU time, I/O bytes) as averages over
// the interval since the previous sample, from cumulative counters (cgroup cpu.stat,
// /proc/<pid>/io), and non-compressible usage (memory) as the most held since the
// previous sample (cgroup v2 memory.peak reset at each reading, VmHWM) — a reading at
// the instant (memory.current, VmRSS) misses what rose and fell in between, and a task
// given less memory than it used is killed. Either way a sample holds from its At until
// the next sample's At; the spacing may be irregular.
type Series struct {
	// Samples are the measurements, At strictly increasing, at least one.
	Samples []Sample
	// End is when the last sample's interval ends, normally when the task finished; it
	// must be after the last sample's At. Zero means the last sample lasts as long as
	// the interval before it (a series of one sample then needs End).
	End time.Duration
	// Compression holds, for each sample, the compression ratio (eq. 1) the task
	// experienced over the sample's interval on each dimension, in [0, 1], zero on
	// non-compressible dimensions — for example the share of its CPU demand a CPU
	// quota throttled. nil means none is known (the task is taken as uncompressed);
	// otherwise its length must equal len(Samples).
	Compression []resource.Vector
}

// Len is the number of samples.
func (s Series) Len() int { return len(s.Samples) }

// Peak is the per-dimension largest usage of the series.
func (s Series) Peak() resource.Tuple {
	var p resource.Tuple
	for _, x := range s.Samples {
		p = p.Max(x.Usage)
	}
	return p
}

// last returns how long the last sample holds: End − its At, or 0 (the interval before
// it) when End is zero. It fails when End is not after the last sample.
func (s Series) last() (time.Duration, error) {
	if s.End == 0 || len(s.Samples) == 0 {
		return 0, nil
	}
	at := s.Samples[len(s.Samples)-1].At
	if s.End <= at {
		return 0, fieldErr("series end", s.End, fmt.Errorf("%w: not after the last sample at %v", ErrUnsorted, at))
	}
	return s.End - at, nil
}

// validateCompression checks the per-sample ratios against schema and returns each
// sample's largest ratio over the compressible dimensions (nil when none is known).
func (s Series) validateCompression(schema *resource.Schema) ([]float64, error) {
	if s.Compression == nil {
		return nil, nil
	}
	if len(s.Compression) != len(s.Samples) {
		return nil, fieldErr("series compression", fmt.Sprintf("%d ratios for %d samples", len(s.Compression), len(s.Samples)), ErrStageCount)
	}
	rc := make([]float64, len(s.Samples))
	for i, v := range s.Compression {
		if err := schema.ValidateRatios(v, 1, true); err != nil {
			return nil, wrapf(err, "series compression[%d]", i)
		}
		rc[i] = v.MaxOver(schema.Compressible())
	}
	return rc, nil
}

// SegmentSeries divides a usage series into stages, as Segment does its samples (the
// last sample lasting until the series' End), and returns with the profile the
// compression of each stage: per dimension, the largest ratio of the stage's samples
// (nil when the series carries none). The pair is an observation of a ready profile:
// Observation{Profile: p, Compression: rc}. It fails, changing nothing, on a series
// that is empty, longer than MaxSeriesSamples, out of time order, with an End not after
// its last sample, with usage outside schema, or with compression ratios of the wrong
// count, outside [0, 1] or on a non-compressible dimension.
func (sg *Segmenter) SegmentSeries(schema *resource.Schema, s Series) (stage.Profile, []resource.Vector, error) {
	d, err := sg.divideSeries(schema, s)
	return d.profile, d.compression, err
}

// divided is a series divided into stages: the profile and each stage's compression
// (SegmentSeries), the division's work (its samples and their durations) and each
// sample's largest compression ratio over the compressible dimensions (nil when the
// series carries none).
type divided struct {
	profile     stage.Profile
	compression []resource.Vector
	w           *work
	sampleRC    []float64
}

// divideSeries validates s and divides it into stages.
func (sg *Segmenter) divideSeries(schema *resource.Schema, s Series) (divided, error) {
	if schema == nil {
		return divided{}, fieldErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	if len(s.Samples) > MaxSeriesSamples {
		return divided{}, fieldErr("series samples", len(s.Samples), ErrTooManySamples)
	}
	last, err := s.last()
	if err != nil {
		return divided{}, err
	}
	sampleRC, err := s.validateCompression(schema)
	if err != nil {
		return divided{}, err
	}
	w, err := sg.divide(schema, s.Samples, last, 0)
	if err != nil {
		return divided{}, err
	}
	p, err := w.profile(schema)
	if err != nil {
		return divided{}, err
	}
	d := divided{profile: p, w: w, sampleRC: sampleRC}
	if s.Compression == nil {
		return d, nil
	}
	d.compression = make([]resource.Vector, 0, p.Len())
	for a := 0; a < len(s.Samples); a = w.next[a] {
		var v resource.Vector
		for i := a; i < w.next[a]; i++ {
			for k := 0; k < schema.Len(); k++ {
				v[k] = max(v[k], s.Compression[i][k])
			}
		}
		d.compression = append(d.compression, v)
	}
	return d, nil
}
