package finegrain

import (
	"log/slog"
	"reflect"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/plugins"
	"github.com/finegrain/finegrain/policy"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// Option configures a Scheduler. The defaults are FGM's: prediction from similar tasks,
// fine-grained stage matching with at most 10% compression, the eq. 15 deadline check,
// the Alg. 3 adjuster, DRF ordering with the fair packing bound (DefaultPackingBound),
// and locality waits by the clock with W1 = 5 s and W2 = 20 s
// (PullLocalityClock) whose node-locality waits last only while a node holding the
// input has room (WithLocalityWaitForRoom).
//
// The options by concern, one file each:
//
//	prediction     WithPrediction, WithEstimator, WithHoldUntilFinished,
//	               WithFailureEscalation
//	matching       WithCompressionLimit, WithContentionPenalty, WithMatcherFor, WithQoS
//	node policy    WithAdjuster, WithConformityWindow, WithConformityIdleThreshold,
//	               WithExternalLoadForecast, WithExternalLoadNetting
//	pull mode      WithOrdering, WithPullStrategy (PullLocalityClock,
//	               PullDelayScheduling, PullFairnessOrder, PullTetris,
//	               PullPreReleaseList, PullQoSVector), WithPackingBound,
//	               WithLocalityWaitForRoom, WithMaxPerHeartbeat, WithSpeculation
//	push mode      WithScorer, WithGPUScorer, WithCandidates, WithFutureStart,
//	               WithBooking
//	disruption     WithPreemption, WithGangTimeout
//	plugin list    WithPlugin, WithPluginBefore, WithoutPlugin
//	runtime        WithUnresolvableAccepted, WithClockSkew, WithRetention, WithLogger,
//	               WithSkipDetails
//
// Options apply in order. An option that sets a value keeps the later one when given
// twice; WithAdjuster's options, WithMatcherFor's modes and the plugin-list edits add
// up. A feature is
// switched off by its own option with its zero value: false for a switch
// (WithPrediction(false), WithFutureStart(false)), nil for a plugged-in part
// (WithQoS(nil), WithGPUScorer(nil), WithSpeculation(nil)), the zero config
// (WithPreemption(PreemptionConfig{})), 0 for a cap (WithMaxPerHeartbeat(0)), +Inf for
// a bound (WithPackingBound(math.Inf(1))); pull mode without locality waits is
// WithPullStrategy(PullFairnessOrder()). WithoutPlugin removes a plugin from the list,
// whatever switched it on.
type Option func(*config) error

// config is what the options set, by concern as the options are grouped.
type config struct {
	// prediction
	predict   bool
	estimator predict.Estimator
	holdTail  bool
	escalate  bool

	// matching
	limit    float64
	penalty  float64
	matchers map[policy.NodeMode]match.Matcher
	qos      match.QoSCheck
	qosOff   bool // WithQoS(nil)

	// node policy
	adjust     []policy.Option
	window     int
	ihConform  *resource.Vector // nil: 0.1 on every dimension of the schema
	loadWindow time.Duration
	loadQ      float64
	netting    bool

	// pull mode
	ordering    fairness.Policy
	pull        PullStrategy
	packBound   *float64 // nil: by the ordering (packingBound)
	waitForRoom bool
	maxPerBeat  int
	speculator  speculate.Speculator

	// push mode
	scorer      match.Scorer
	gpuScorer   gpu.DeviceScorer
	candidates  int
	futureStart bool
	bookAfter   time.Duration
	bookPull    bool

	// disruption
	preemption  *plugins.PreemptionConfig
	gangTimeout time.Duration
	scaleUp     ScaleUpConfig

	// plugin list
	edits []pluginEdit // WithPlugin, WithPluginBefore, WithoutPlugin, in order

	// runtime
	acceptUnres bool
	skew        time.Duration
	retention   cluster.Retention
	logger      *slog.Logger
	skipDetails int
}

// defaults is the configuration before the options: FGM's (Option).
func defaults() config {
	return config{
		predict:     true,
		holdTail:    true,
		escalate:    true,
		limit:       resource.DefaultCompressionLimit,
		penalty:     policy.DefaultPenalty,
		window:      5,
		netting:     true,
		ordering:    fairness.DRF{},
		pull:        PullLocalityClock(fairness.DefaultW1, fairness.DefaultW2),
		waitForRoom: true,
		scorer:      match.LeastAllocated{},
		candidates:  16,
		gangTimeout: DefaultGangTimeout,
		skew:        DefaultClockSkew,
		retention:   DefaultRetention,
		skipDetails: framework.DefaultSkipDetails,
	}
}

// isNil reports whether v, an implementation of one of the interfaces the options
// take, is nil or a nil pointer (or map, slice, function, channel) in an interface:
// such a value would pass a plain nil check and fail at its first use.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return r.IsNil()
	}
	return false
}
