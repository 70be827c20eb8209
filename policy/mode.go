package policy

import (
	"fmt"
	"math"
	"strings"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
)

// NodeMode is a server's scheduling policy, Pa in Alg. 1, set by the adjuster (Alg. 3). The
// zero value is FineGrained, the mode of a server whose predictions conform.
type NodeMode uint8

const (
	// ModeFineGrained: stage matching (Alg. 2) with compression allowed (eq. 7).
	ModeFineGrained NodeMode = iota
	// ModeFineGrainedNoCompression: stage matching with compression forbidden (rc = 0).
	ModeFineGrainedNoCompression
	// ModeCoarseGrained: the coarse match, peak demand against minimum free (Ax < Mx).
	ModeCoarseGrained
	// ModeStopAllocation: the server accepts no task (isUnschedulable in Alg. 1).
	ModeStopAllocation
)

var modeNames = [...]string{"FineGrained", "FineGrainedNoCompression", "CoarseGrained", "StopAllocation"}

// String returns the mode's name, e.g. "CoarseGrained".
func (m NodeMode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ParseMode reads a mode's name as String writes it, ignoring case and surrounding
// space.
func ParseMode(s string) (NodeMode, error) {
	t := strings.TrimSpace(s)
	for i, name := range modeNames {
		if strings.EqualFold(t, name) {
			return NodeMode(i), nil
		}
	}
	return 0, settingErr("mode", s, ErrUnknownMode)
}

// Valid reports whether m is one of the four modes.
func (m NodeMode) Valid() bool { return int(m) < len(modeNames) }

// Schedulable reports whether a server in this mode accepts tasks (every mode but
// StopAllocation).
func (m NodeMode) Schedulable() bool { return m.Valid() && m != ModeStopAllocation }

// Compressible reports whether a server in this mode may compress (FineGrained only).
func (m NodeMode) Compressible() bool { return m == ModeFineGrained }

// Matcher returns the matcher of Alg. 1 for a server in this mode: fine-grained for
// both fine-grained modes (the compression manager grants no compression in
// FineGrainedNoCompression), coarse-grained for CoarseGrained, and a matcher that
// refuses everything for StopAllocation or an invalid mode. Unpredictable tasks use
// match.RequestQuantity in every schedulable mode.
func (m NodeMode) Matcher() match.Matcher {
	switch m {
	case ModeFineGrained, ModeFineGrainedNoCompression:
		return match.FineGrained{}
	case ModeCoarseGrained:
		return match.CoarseGrained{}
	}
	return match.RefuseAll{}
}

// Thresholds are Alg. 3's conformity thresholds: a server whose reduced average
// conformity (see Reduction) exceeds StopAllocation stops allocating, else exceeding
// CoarseGrained matches coarsely, else exceeding FineGrained matches by stages without
// compression, else matches by stages with compression. They must be finite, ≥ 0 and
// strictly ordered: StopAllocation > CoarseGrained > FineGrained (Th_sa > Th_cg > Th_fg).
type Thresholds struct {
	StopAllocation, CoarseGrained, FineGrained float64
}

// DefaultThresholds are the library's defaults for the default Reduction (the worst
// resource's root-mean-square under-prediction as a fraction of its capacity): stop at
// 20%, coarse at 10%, no compression at 5%. The paper gives no values; these are our
// choice (a Reading), to be tuned like the compression limit.
var DefaultThresholds = Thresholds{StopAllocation: 0.20, CoarseGrained: 0.10, FineGrained: 0.05}

// Validate checks that the thresholds are finite, ≥ 0 and ordered Th_sa > Th_cg > Th_fg.
func (t Thresholds) Validate() error {
	for _, x := range [...]struct {
		name string
		v    float64
	}{{"Th_sa", t.StopAllocation}, {"Th_cg", t.CoarseGrained}, {"Th_fg", t.FineGrained}} {
		if !(x.v >= 0) || math.IsInf(x.v, 1) {
			return settingErr(x.name, x.v, ErrInvalidValue)
		}
	}
	if !(t.StopAllocation > t.CoarseGrained) {
		return settingErr("Th_sa > Th_cg", fmt.Sprintf("%v ≤ %v", t.StopAllocation, t.CoarseGrained), ErrThresholdOrder)
	}
	if !(t.CoarseGrained > t.FineGrained) {
		return settingErr("Th_cg > Th_fg", fmt.Sprintf("%v ≤ %v", t.CoarseGrained, t.FineGrained), ErrThresholdOrder)
	}
	return nil
}

// Mode is Alg. 3's decision for a server whose reduced average conformity is score:
// the comparisons are strict, as printed (a score equal to a threshold stays in the
// milder mode).
func (t Thresholds) Mode(score float64) NodeMode {
	switch {
	case score > t.StopAllocation:
		return ModeStopAllocation
	case score > t.CoarseGrained:
		return ModeCoarseGrained
	case score > t.FineGrained:
		return ModeFineGrainedNoCompression
	}
	return ModeFineGrained
}

// DefaultIdleThreshold is the default Ih of Alg. 1 line 1 on every dimension: a server
// with less than 5% of some resource idle is not worth a scheduling pass. The paper
// gives no value; this is our choice.
const DefaultIdleThreshold = 0.05

// BelowIdle is the idle test of Alg. 1 line 1, I < Ih × N in the sense of eq. 13: it
// reports whether the server's idle amount (eq. 14's time-weighted average of its free
// resources) is below the idle threshold ih (a fraction per dimension) of its
// capacity on ANY dimension, in which case the server is skipped. Ih × N is rounded
// to the nearest unit.
func BelowIdle(idle, capacity resource.Tuple, ih resource.Vector) bool {
	return idle.AnyLess(capacity.ScaleEach(ih))
}
