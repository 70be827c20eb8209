package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
	kjson "sigs.k8s.io/json"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The annotations and labels the plugin reads on a pod.
const (
	// StagesAnnotation declares the pod's stage profile: a JSON list of stages, each
	// a duration and the resources used for it, in Kubernetes quantities:
	//
	//	finegrain.io/stages: '[{"duration":"30s","cpu":"2","memory":"6Gi"},
	//	                       {"duration":"2m","cpu":"500m","memory":"1Gi"}]'
	//
	// A declared profile is used as it is, before any estimate. A duration of "0"
	// (or none) in the last stage means that stage lasts until the pod ends.
	StagesAnnotation = "finegrain.io/stages"
	// ObservedStagesAnnotation is where AnnotationUsage reads what a finished pod used,
	// in the StagesAnnotation format; a metrics pipeline or the pod itself writes it.
	ObservedStagesAnnotation = "finegrain.io/observed-stages"
	// GangLabel names the gang a pod belongs to (with MinMemberLabel): no pod of the
	// gang is bound until MinMember of them can be (Permit), as in the coscheduling
	// plugin's PodGroup.
	GangLabel = "finegrain.io/gang"
	// MinMemberLabel is a gang's size, a positive integer.
	MinMemberLabel = "finegrain.io/min-member"
)

// Stage is one stage of a pod's demand or observed usage: for Duration, the pod uses
// Resources. Duration 0 in the last stage means until the pod ends.
type Stage struct {
	Duration  time.Duration
	Resources v1.ResourceList
}

// ParseStages reads a stage list in the StagesAnnotation format. It fails, naming the
// stage and the field, on malformed JSON, an empty list, a stage that is not an
// object or names a field twice, a missing, negative, unreadable or too long
// duration, an open-ended stage before the last, and a quantity that is unreadable or
// negative.
func ParseStages(text string) ([]Stage, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("not a JSON list of stages: %w", err)
	}
	if len(raw) == 0 {
		return nil, errors.New("no stages")
	}
	out := make([]Stage, len(raw))
	for i, r := range raw {
		m, err := stageFields(r)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", i, err)
		}
		st, err := parseStage(m, i == len(raw)-1)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", i, err)
		}
		out[i] = st
	}
	return out, nil
}

// stageFields reads one stage's object (null: no fields), refusing a field given
// twice, which encoding/json would resolve silently by keeping the last. The strict
// decoder is sigs.k8s.io/json's, as for the plugin's arguments (decodeArgs).
func stageFields(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	strict, err := kjson.UnmarshalStrict(raw, &m, kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if len(strict) > 0 {
		return nil, utilerrors.NewAggregate(strict)
	}
	return m, nil
}

func parseStage(m map[string]json.RawMessage, last bool) (Stage, error) {
	st := Stage{Resources: v1.ResourceList{}}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names) // errors name the same field whatever the map order
	for _, k := range names {
		s, err := scalar(m[k])
		if err != nil {
			return Stage{}, fmt.Errorf("%q: %w", k, err)
		}
		if k == "duration" {
			if st.Duration, err = parseDuration(s); err != nil {
				return Stage{}, fmt.Errorf("%q: %w", k, err)
			}
			continue
		}
		q, err := apiresource.ParseQuantity(s)
		if err != nil {
			return Stage{}, fmt.Errorf("%q: %w", k, err)
		}
		if q.Sign() < 0 {
			return Stage{}, fmt.Errorf("%q: negative quantity %s", k, s)
		}
		st.Resources[v1.ResourceName(k)] = q
	}
	if st.Duration == 0 && !last {
		return Stage{}, errors.New(`"duration": only the last stage may be open-ended (0 or none)`)
	}
	return st, nil
}

// scalar reads a JSON string or number as text.
func scalar(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", errors.New("want a string or a number")
	}
	return n.String(), nil
}

// parseDuration reads a Go duration ("90s", "1m30s") or a number of seconds.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		q, qerr := apiresource.ParseQuantity(s)
		if qerr != nil {
			return 0, fmt.Errorf("want a duration such as 90s: %w", err)
		}
		if q.Sign() < 0 {
			return 0, fmt.Errorf("negative duration %s", s)
		}
		// float64(stage.Forever) is 2^63, one past the largest Duration: a number of
		// nanoseconds that reaches it does not convert (it came out negative).
		ns := q.AsApproximateFloat64() * float64(time.Second)
		if ns >= float64(stage.Forever) {
			return 0, fmt.Errorf("duration %s is too long", s)
		}
		d = time.Duration(ns)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", s)
	}
	return d, nil
}

// scheme is the pod resources the plugin schedules: CPU (compressible, in
// millicores), memory (bytes) and the extended resources the arguments name (whole
// units), all but CPU non-compressible.
type scheme struct {
	schema *resource.Schema
	names  []v1.ResourceName // by slot
}

func newScheme(extra []string) (*scheme, error) {
	dims := []resource.Dimension{resource.CPU, resource.Memory}
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}
	for _, e := range extra {
		dims = append(dims, resource.Dimension{Name: e, Unit: "unit"})
		names = append(names, v1.ResourceName(e))
	}
	schema, err := resource.NewSchema(dims...)
	if err != nil {
		return nil, err
	}
	return &scheme{schema: schema, names: names}, nil
}

// tuple converts a resource list into the schema's amounts. Resources the schema
// does not hold are ignored when lenient (a pod's requests may name resources other
// plugins look after) and refused otherwise (a stage annotation naming them is a
// mistake).
func (s *scheme) tuple(rl v1.ResourceList, lenient bool) (resource.Tuple, error) {
	var t resource.Tuple
	for name, q := range rl {
		i := s.slot(name)
		if i < 0 {
			if lenient {
				continue
			}
			return t, fmt.Errorf("unknown resource %q (known: %s)", name, s.known())
		}
		v, err := amount(q, i == 0)
		if err != nil {
			return t, fmt.Errorf("%q: %w", name, err)
		}
		t[i] = v
	}
	return t, s.schema.Validate(t)
}

// bestEffort is the request held for a pod that requests nothing of finegrain's
// resources (a BestEffort pod): kube-scheduler's own stand-in for such containers when
// it scores nodes (0.1 core, 200 MiB), rather than nothing at all — finegrain would
// refuse a task that says nothing of what it needs (finegrain.ErrNoDemand), and
// planning nothing would start any number of them on one node.
func (s *scheme) bestEffort() resource.Tuple {
	var t resource.Tuple
	if i := s.slot(v1.ResourceCPU); i >= 0 {
		t[i] = schedutil.DefaultMilliCPURequest
	}
	if i := s.slot(v1.ResourceMemory); i >= 0 {
		t[i] = schedutil.DefaultMemoryRequest
	}
	return t
}

func (s *scheme) slot(name v1.ResourceName) int {
	for i, n := range s.names {
		if n == name {
			return i
		}
	}
	return -1
}

func (s *scheme) known() string {
	out := make([]string, len(s.names))
	for i, n := range s.names {
		out[i] = string(n)
	}
	return strings.Join(out, ", ")
}

// amount is q in millis (CPU) or whole units, refusing negative amounts and amounts
// beyond what an int64 holds.
func amount(q apiresource.Quantity, milli bool) (int64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("negative quantity %s", q.String())
	}
	limit := int64(math.MaxInt64)
	if milli {
		limit /= 1000
	}
	if q.CmpInt64(limit) > 0 {
		return 0, fmt.Errorf("quantity %s is too large", q.String())
	}
	if milli {
		return q.MilliValue(), nil
	}
	return q.Value(), nil
}

// profile converts stages into a stage profile; an open-ended last stage lasts
// Forever.
func (s *scheme) profile(stages []Stage) (stage.Profile, error) {
	out := make([]stage.Stage, len(stages))
	for i, st := range stages {
		d, err := s.tuple(st.Resources, false)
		if err != nil {
			return stage.Profile{}, fmt.Errorf("stage %d: %w", i, err)
		}
		dur := st.Duration
		if dur == 0 {
			dur = stage.Forever
		}
		out[i] = stage.Stage{Duration: dur, Demand: d}
	}
	return stage.NewProfile(s.schema, out...)
}
