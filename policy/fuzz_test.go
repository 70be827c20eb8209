package policy_test

import (
	"errors"
	"math"
	"testing"

	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/resource"
)

// FuzzParseMode checks that ParseMode never panics, that what it accepts formats back
// to the same mode, and that every error wraps ErrUnknownMode.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"FineGrained", "stopallocation", " CoarseGrained ", "", "Mode(7)", "fine"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := policy.ParseMode(s)
		if err != nil {
			if !errors.Is(err, policy.ErrUnknownMode) {
				t.Fatalf("ParseMode(%q): %v", s, err)
			}
			return
		}
		back, err := policy.ParseMode(m.String())
		if !m.Valid() || err != nil || back != m {
			t.Fatalf("ParseMode(%q) = %v; round trip %v, %v", s, m, back, err)
		}
	})
}

// FuzzThresholds checks that Validate accepts exactly finite, non-negative, strictly
// ordered thresholds, that NewAdjuster agrees, and that Mode grows with the score.
func FuzzThresholds(f *testing.F) {
	f.Add(0.2, 0.1, 0.05, 0.07)
	f.Add(0.1, 0.1, 0.05, 0.1)
	f.Add(math.NaN(), 0.1, 0.0, 1.0)
	f.Add(1.0, 0.5, -0.1, 0.0)
	f.Fuzz(func(t *testing.T, sa, cg, fg, score float64) {
		th := policy.Thresholds{StopAllocation: sa, CoarseGrained: cg, FineGrained: fg}
		err := th.Validate()
		finite := func(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }
		want := finite(sa) && finite(cg) && finite(fg) && sa > cg && cg > fg
		if want != (err == nil) {
			t.Fatalf("%+v: Validate = %v", th, err)
		}
		_, aerr := policy.NewAdjuster(schema, newConformity(), policy.WithThresholds(th))
		if (err == nil) != (aerr == nil) {
			t.Fatalf("%+v: Validate %v but NewAdjuster %v", th, err, aerr)
		}
		if err != nil {
			if !errors.Is(err, policy.ErrInvalidValue) && !errors.Is(err, policy.ErrThresholdOrder) {
				t.Fatalf("%+v: %v", th, err)
			}
			return
		}
		if score == score && th.Mode(score) > th.Mode(score+math.Abs(score)+1) {
			t.Fatalf("%+v: mode not monotone at %v", th, score)
		}
	})
}

// FuzzNewCompression checks that NewCompression accepts exactly valid limits and
// penalties and that the ratios it then allows stay within the limits.
func FuzzNewCompression(f *testing.F) {
	f.Add(0.1, 0.05, "cpu", 0.2, int64(1000), int64(500))
	f.Add(1.0, 0.0, "memory", 0.1, int64(0), int64(0))
	f.Add(0.1, -1.0, "gpu", 0.1, int64(-5), int64(7))
	f.Fuzz(func(t *testing.T, limit, penalty float64, dim string, dimLimit float64, running, demand int64) {
		c, err := policy.NewCompression(schema, nil, policy.WithLimit(limit), policy.WithPenalty(penalty), policy.WithDimLimit(dim, dimLimit))
		k, known := schema.Index(dim)
		valid := limit >= 0 && limit < 1 && penalty >= 0 && !math.IsInf(penalty, 1) &&
			known && schema.Compressible().Has(k) && dimLimit >= 0 && dimLimit < 1
		if valid != (err == nil) {
			t.Fatalf("limit %v penalty %v %s=%v: %v", limit, penalty, dim, dimLimit, err)
		}
		if err != nil {
			var se *policy.SettingError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a SettingError", err)
			}
			return
		}
		for k := 0; k < resource.MaxDims; k++ {
			if rc := c.Ratio(k, running, demand); !(rc >= 0 && rc <= c.Limit()[k]) {
				t.Fatalf("Ratio(%d, %d, %d) = %v outside [0, %v]", k, running, demand, rc, c.Limit()[k])
			}
		}
	})
}
