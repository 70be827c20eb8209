package policy

import (
	"fmt"
	"math"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// ModeSource tells the compression manager each server's mode. *Adjuster implements
// it.
type ModeSource interface {
	Mode(server string) NodeMode
}

// DefaultPenalty is the default contention penalty p of eq. 5/6: the extra slowdown
// compression causes beyond the ideal 1/(1 − rc). The paper measures but does not
// print it; 5% is our choice. With p = 0 eq. 6 never forbids compression while the new
// task demands anything.
const DefaultPenalty = 0.05

// Compression is FGM's compression manager (docs/methods.md §1, §6): for every server,
// time segment and compressible dimension, the largest compression ratio allowed when a
// task stage is placed there — Alg. 2's rc. It implements match.Allowance.
//
// Reading of eq. 6's weights per segment: the work done on a dimension over a segment
// is the amount used times the segment's length, and the length cancels, so
// wRunning is what the tasks already there demand (capacity − free, at least 0 and at
// most MaxInt64) and wNew what the new stage demands. The ratio is then eq. 7 under
// the Reading of docs/methods.md §1, clamp(eq. 6 bound, 0, limitation), with
// resource.CompressionBound and resource.MaxCompression; it is zero on
// non-compressible dimensions, where the new stage demands nothing, and on every
// dimension of a server whose mode is not FineGrained.
//
// A Compression is immutable after construction and safe for concurrent use (its
// ModeSource must be too).
type Compression struct {
	schema  *resource.Schema
	modes   ModeSource
	limit   resource.Vector
	penalty float64
}

// CompressionOption configures a Compression.
type CompressionOption func(*Compression) error

// WithLimit sets the limitation of eq. 7 — the largest compression ratio — on every
// compressible dimension (default resource.DefaultCompressionLimit, 10%). It must be
// in [0, 1).
func WithLimit(x float64) CompressionOption {
	return func(c *Compression) error {
		if !(x >= 0 && x < 1) {
			return settingErr("compression limit", x, resource.ErrInvalidRatio)
		}
		c.limit = resource.Uniform(c.schema.Compressible(), x)
		return nil
	}
}

// WithDimLimit sets the limitation of eq. 7 on one compressible dimension, by name
// (re-measure per resource when the environment changes). It must be in [0, 1).
func WithDimLimit(dim string, x float64) CompressionOption {
	return func(c *Compression) error {
		k, ok := c.schema.Index(dim)
		switch {
		case !ok:
			return settingErr("compression limit of "+dim, x, resource.ErrUnknownDimension)
		case !c.schema.Compressible().Has(k):
			return settingErr("compression limit of "+dim, x, resource.ErrNotCompressible)
		case !(x >= 0 && x < 1):
			return settingErr("compression limit of "+dim, x, resource.ErrInvalidRatio)
		}
		c.limit[k] = x
		return nil
	}
}

// WithPenalty sets the contention penalty p of eq. 5/6 (default DefaultPenalty). It
// must be finite and ≥ 0.
func WithPenalty(p float64) CompressionOption {
	return func(c *Compression) error {
		if !(p >= 0) || math.IsInf(p, 1) {
			return settingErr("contention penalty", p, ErrInvalidValue)
		}
		c.penalty = p
		return nil
	}
}

// NewCompression returns the compression manager for servers of schema whose modes
// modes reports; a nil modes treats every server as FineGrained. It fails on a nil
// schema or an invalid option.
func NewCompression(schema *resource.Schema, modes ModeSource, opts ...CompressionOption) (*Compression, error) {
	if schema == nil {
		return nil, settingErr("schema", "nil", resource.ErrSchemaMismatch)
	}
	c := &Compression{
		schema:  schema,
		modes:   modes,
		limit:   resource.Uniform(schema.Compressible(), resource.DefaultCompressionLimit),
		penalty: DefaultPenalty,
	}
	for i, o := range opts {
		if o == nil {
			return nil, settingErr(fmt.Sprintf("option %d", i), "nil", ErrInvalidValue)
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Limit returns the limitation per dimension (zero on non-compressible ones).
func (c *Compression) Limit() resource.Vector { return c.limit }

// Penalty returns the contention penalty p.
func (c *Compression) Penalty() float64 { return c.penalty }

// Ratio is eq. 6/7 for dimension k of the schema, whatever the server's mode: the
// compression ratio allowed when a stage demanding demand joins tasks demanding
// running. It is in [0, Limit()[k]], and 0 on a non-compressible dimension or
// when demand ≤ 0.
func (c *Compression) Ratio(k int, running, demand int64) float64 {
	if !c.schema.Compressible().Has(k) || demand <= 0 {
		return 0
	}
	bound, err := resource.CompressionBound(float64(demand), float64(max(running, 0)), c.penalty)
	if err != nil {
		return 0
	}
	rc, err := resource.MaxCompression(bound, c.limit[k])
	if err != nil {
		return 0
	}
	return rc
}

// Allowed implements match.Allowance: the ratios of Ratio for the segment and demand
// of q, or zero on every dimension when the server's mode forbids compression.
func (c *Compression) Allowed(q match.AllowanceQuery) resource.Vector {
	var v resource.Vector
	if c.modes != nil && !c.modes.Mode(q.Server).Compressible() {
		return v
	}
	for k := 0; k < c.schema.Len(); k++ {
		// What the tasks there demand, capacity − free, saturating: a segment overdrawn
		// below capacity − MaxInt64 (a resumed reservation can leave one) is as loaded
		// as any can be, not wrapped round to an idle one. (Free below zero makes the
		// difference larger than the capacity; one that is not has wrapped round.)
		running := q.Capacity[k] - q.Segment.Free[k]
		if q.Segment.Free[k] < 0 && running < q.Capacity[k] {
			running = math.MaxInt64
		}
		v[k] = c.Ratio(k, running, q.Demand[k])
	}
	return v
}

// MonotoneInFree implements match.MonotoneAllowance: Allowed answers on each
// dimension from the server's mode and that dimension's capacity, free amount and
// demand alone (Ratio, with the penalty and limitation), and the ratio never falls as
// the free amount grows. wRunning = capacity − free, saturating, never rises as free
// grows; the eq. 6 bound (wNew − p × wRunning)/(wRunning + wNew) does not fall as
// wRunning falls (its numerator does not fall, and while it is ≥ 0 its denominator
// falls; while it is < 0 the ratio is 0), each floating-point step rounding
// monotonically; and eq. 7's clamp keeps the order. A fine-grained match then settles
// each stage by its least free amount (match.FineGrained).
func (c *Compression) MonotoneInFree() bool { return true }

// Server returns the match.Server view of server id over its timeline, with this
// compression manager as its allowance.
func (c *Compression) Server(id string, tl *stage.Timeline) match.Server {
	return match.Server{ID: id, Timeline: tl, Allowance: c}
}
