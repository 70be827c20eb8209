package finegrain

import (
	"fmt"
	"math"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/policy"
)

// Matching: how a task's profile is fitted to a node's timeline.

// WithCompressionLimit sets eq. 7's limitation, the largest compression ratio allowed on
// any compressible resource; 0 disables compression. Default resource.
// DefaultCompressionLimit (10%).
func WithCompressionLimit(x float64) Option {
	return func(c *config) error {
		if !(x >= 0 && x < 1) {
			return fmt.Errorf("finegrain: compression limit %v not in [0, 1): %w", x, ErrInvalid)
		}
		c.limit = x
		return nil
	}
}

// WithContentionPenalty sets eq. 5/6's contention penalty p; default
// policy.DefaultPenalty.
func WithContentionPenalty(p float64) Option {
	return func(c *config) error {
		if !(p >= 0) || math.IsInf(p, 1) {
			return fmt.Errorf("finegrain: contention penalty %v not a finite value ≥ 0: %w", p, ErrInvalid)
		}
		c.penalty = p
		return nil
	}
}

// WithMatcherFor replaces the matcher a node in mode uses for predictable tasks (by
// default match.FineGrained in both fine-grained modes and match.CoarseGrained in
// CoarseGrained). Unpredictable tasks are always matched by their request; a node in
// StopAllocation takes nothing.
func WithMatcherFor(mode policy.NodeMode, m match.Matcher) Option {
	return func(c *config) error {
		if isNil(m) || !mode.Schedulable() {
			return fmt.Errorf("finegrain: matcher for mode %v: %w", mode, ErrInvalid)
		}
		if c.matchers == nil {
			c.matchers = make(map[policy.NodeMode]match.Matcher)
		}
		c.matchers[mode] = m
		return nil
	}
}

// WithQoS replaces the QoS check a match that compresses must pass (Alg. 1 line 17;
// plugins.QoS) — by default the eq. 15 deadline check over the tasks on the node — by
// q; nil switches QoS checks off.
func WithQoS(q match.QoSCheck) Option {
	return func(c *config) error {
		if isNil(q) {
			c.qos, c.qosOff = nil, true
			return nil
		}
		c.qos, c.qosOff = q, false
		return nil
	}
}
