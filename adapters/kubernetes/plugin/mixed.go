package plugin

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/finegrain/finegrain"
)

// This file reads what the mixed-workload method (docs/methods.md §11) needs of a
// pod: its class — latency-sensitive or batch — and its service-level objective, when
// it is submitted, and its progress while it runs, which the straggler test of the
// scale-up rounds (scaleup.go) reads.

// The annotations and the label of the mixed-workload method.
const (
	// ClassAnnotation is the pod's task class: "latency-sensitive" (or "LS") for a
	// service or a request-serving pod with an objective, "batch" (or "BE") for work
	// that may be shrunk, never killed, to make room for it; any case. Without it the
	// class is KoordinatorQoSLabel's, else batch.
	ClassAnnotation = "finegrain.io/class"
	// SLOAnnotation is a latency-sensitive pod's objective: the longest run time,
	// from its start (its binding), that still meets it — a duration ("30s", "5m")
	// or a number of seconds. Only a latency-sensitive pod may have one; one without
	// it is never found a straggler.
	SLOAnnotation = "finegrain.io/slo"
	// ProgressAnnotation is how far a running pod has got, a number in [0, 1] ("0.42")
	// that the pod, a sidecar or its controller writes and raises as it goes; the
	// plugin reports it to the library (Scheduler.Progress) when it sees it change.
	// The straggler test needs four reports of a latency-sensitive pod: without them
	// no straggler is ever found.
	ProgressAnnotation = "finegrain.io/progress"
	// KoordinatorQoSLabel is Koordinator's QoS class of a pod (koordinator.sh/qosClass):
	// LSE, LSR and LS make it latency-sensitive, BE and SYSTEM batch. Read only when
	// ClassAnnotation is not set.
	KoordinatorQoSLabel = "koordinator.sh/qosClass"
)

// ParseClass reads a ClassAnnotation value: "latency-sensitive" or "LS", "batch" or
// "BE", in any case (finegrain.ParseTaskClass), surrounding blanks ignored.
func ParseClass(text string) (finegrain.TaskClass, error) {
	return finegrain.ParseTaskClass(strings.TrimSpace(text))
}

// ParseSLO reads an SLOAnnotation value: a positive duration ("30s", "1m30s") or a
// positive number of seconds ("45", "0.5").
func ParseSLO(text string) (time.Duration, error) {
	d, err := parseDuration(strings.TrimSpace(text))
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("an objective of %s: want a positive duration", text)
	}
	return d, nil
}

// ParseProgress reads a ProgressAnnotation value: a number in [0, 1], surrounding
// blanks ignored. A percentage is refused rather than guessed at ("42%": write 0.42).
func ParseProgress(text string) (float64, error) {
	x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		return 0, fmt.Errorf("want a number in [0, 1], such as 0.42: %w", err)
	}
	if math.IsNaN(x) || x < 0 || x > 1 {
		return 0, fmt.Errorf("progress %s is outside [0, 1]", text)
	}
	return x, nil
}

// koordinatorClasses maps KoordinatorQoSLabel's values onto the task classes.
var koordinatorClasses = map[string]finegrain.TaskClass{
	"LSE":    finegrain.LatencySensitive,
	"LSR":    finegrain.LatencySensitive,
	"LS":     finegrain.LatencySensitive,
	"BE":     finegrain.Batch,
	"SYSTEM": finegrain.Batch,
}

// classOf is the pod's task class and objective: ClassAnnotation, else
// KoordinatorQoSLabel (a value Koordinator does not define is left to Koordinator's
// own checks, and the pod is batch), else batch; SLOAnnotation. A malformed
// annotation, or an objective on a batch pod, is an error naming the annotation: the
// pod is then refused, as a malformed StagesAnnotation is.
func classOf(pod *v1.Pod) (finegrain.TaskClass, time.Duration, error) {
	class := finegrain.Batch
	if text, ok := pod.Annotations[ClassAnnotation]; ok {
		c, err := ParseClass(text)
		if err != nil {
			return 0, 0, fmt.Errorf("annotation %s: %w", ClassAnnotation, err)
		}
		class = c
	} else if c, ok := koordinatorClasses[pod.Labels[KoordinatorQoSLabel]]; ok {
		class = c
	}
	text, ok := pod.Annotations[SLOAnnotation]
	if !ok {
		return class, 0, nil
	}
	slo, err := ParseSLO(text)
	if err != nil {
		return 0, 0, fmt.Errorf("annotation %s: %w", SLOAnnotation, err)
	}
	if class != finegrain.LatencySensitive {
		return 0, 0, fmt.Errorf("annotation %s: an objective on a batch pod: set %s: latency-sensitive (or Koordinator's %s: LS)", SLOAnnotation, ClassAnnotation, KoordinatorQoSLabel)
	}
	return class, slo, nil
}

// followProgress reports a running pod's ProgressAnnotation to the library when its
// value changed since the last report, at the plugin's time now (when the plugin sees
// the pod's update). A value it cannot read, or that the library refuses (progress
// going down), is logged once for the pod, with an Event on it, and not reported.
func (p *Plugin) followProgress(pod *v1.Pod) {
	text, ok := pod.Annotations[ProgressAnnotation]
	if !ok {
		return
	}
	id := taskID(pod)
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.pods[id]
	if r == nil || r.node == "" || r.progress == text {
		return // not ours, not yet running, or nothing new
	}
	r.progress = text
	x, err := ParseProgress(text)
	if err == nil {
		if err = p.sched.Progress(id, x, p.now()); errors.Is(err, finegrain.ErrState) || errors.Is(err, finegrain.ErrUnknownTask) {
			return // it ended meanwhile
		}
	}
	if err == nil || r.progressWarned {
		if err != nil {
			p.logger.V(2).Info("progress not reported", "pod", klog.KObj(pod), "err", err)
		}
		return
	}
	r.progressWarned = true
	p.logger.Error(err, "progress not reported; further refusals for the pod are logged at verbosity 2", "pod", klog.KObj(pod), "annotation", ProgressAnnotation, "value", text)
	if p.handle != nil && p.handle.EventRecorder() != nil {
		p.handle.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, BadProgressReason, "ReportProgress",
			"%s=%q not reported: %v", ProgressAnnotation, text, err)
	}
}

// BadProgressReason is the reason of the Event recorded on a pod whose
// ProgressAnnotation could not be reported.
const BadProgressReason = "FineGrainBadProgress"
