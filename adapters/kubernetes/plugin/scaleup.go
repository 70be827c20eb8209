package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// This file runs the library's scale-up rounds for mixed workloads (docs/methods.md
// §11; finegrain.Scheduler.ScaleUp) and carries their actions out on the pods: every
// ScaleUpArgs.Interval, the latency-sensitive pods that will miss their objective are
// found from their progress (mixed.go), batch pods that hold more than they use, or
// that may be preempted, are shrunk, stragglers grown, and shrunk pods given back what
// they lost once there is room — each change a resize of the pod's containers through
// the pods/resize subresource (resize.go), never an eviction.
//
// What Kubernetes cannot do is not done, and said: when the API server does not serve
// pods/resize, the node or the pod cannot be resized in place, the API refuses the
// resize, or the action is a move (Kubernetes has no live migration, and the plugin
// does not evict or recreate a pod to move it), the pod is left as it is, an Event on
// it, a log line and a metric say that the planned action was not carried out and why,
// and the library's books are set back (finegrain.Scheduler.UndoScale) so that they
// hold what the pod does.
//
// Locking: a round holds scaler.round, and never p.mu, while it calls the API; it
// reads the pods' records under p.mu first. scaler.mu guards the discovery answer and
// the resizes awaiting the kubelet, and is taken last (under p.mu, by endPod and the
// informer's handlers): nothing is called while it is held.

// ScaleUpArgs configure the scale-up rounds (Args.ScaleUp):
//
//	scaleUp:
//	  interval: 30s              # how often a round runs
//	  expectedUtilisation: 0.8   # T2: a batch pod below this share of what it holds is redundant
//	  preemptibleShare: 0.5      # how much of a batch pod's CPU preemption may take
//	  idleOnly: false            # true: grow stragglers out of idle room alone
type ScaleUpArgs struct {
	// Interval is how often a round runs, at least 1s. Default 30s. Progress must be
	// reported at least as often for the straggler test to see a pod slow down.
	Interval *metav1.Duration `json:"interval,omitempty"`
	// ExpectedUtilisation is U_ECRU (finegrain.ScaleUpConfig.ExpectedUtilisation), on
	// CPU (memory is never reclaimed), in [0, 1]: a batch pod whose measured peak (the MetricsAPI
	// sampler's running reports) is below this share of what it holds is redundant,
	// and may be shrunk down to what that peak uses at this share. 0 never reclaims.
	// Default 0.8.
	ExpectedUtilisation *float64 `json:"expectedUtilisation,omitempty"`
	// PreemptibleShare is how much of a batch pod's CPU, as it was before any round
	// shrank it, preemption may take, in (0, 1]. Default 0.5: a shrunk pod runs at no
	// less than half its speed.
	PreemptibleShare *float64 `json:"preemptibleShare,omitempty"`
	// IdleOnly grows stragglers out of idle room alone: no batch pod is shrunk.
	IdleOnly bool `json:"idleOnly,omitempty"`
}

// The defaults and bounds of ScaleUpArgs.
const (
	defaultScaleUpInterval = 30 * time.Second
	minScaleUpInterval     = time.Second
)

// withDefaults fills the fields left unset.
func (u ScaleUpArgs) withDefaults() ScaleUpArgs {
	if u.Interval == nil {
		u.Interval = &metav1.Duration{Duration: defaultScaleUpInterval}
	}
	if u.ExpectedUtilisation == nil {
		x := finegrain.DefaultExpectedUtilisation
		u.ExpectedUtilisation = &x
	}
	if u.PreemptibleShare == nil {
		x := finegrain.DefaultPreemptibleShare
		u.PreemptibleShare = &x
	}
	return u
}

// validate checks u (defaults filled in), each error under path.
func (u ScaleUpArgs) validate(path *field.Path) field.ErrorList {
	u = u.withDefaults()
	var errs field.ErrorList
	if d := u.Interval.Duration; d < minScaleUpInterval {
		errs = append(errs, field.Invalid(path.Child("interval"), d.String(), "must be at least "+minScaleUpInterval.String()))
	}
	if x := *u.ExpectedUtilisation; !(x >= 0 && x <= 1) {
		errs = append(errs, field.Invalid(path.Child("expectedUtilisation"), x, "must be in [0, 1]"))
	}
	if x := *u.PreemptibleShare; !(x > 0 && x <= 1) {
		errs = append(errs, field.Invalid(path.Child("preemptibleShare"), x, "must be in (0, 1]"))
	}
	return errs
}

// config is the library's configuration of the rounds for u (defaults filled in):
// U_ECRU on CPU only — memory is never reclaimed: a pod using more memory than it
// requests is the kubelet's first eviction under memory pressure, and the method is
// kill-free — and the planner without moves, which Kubernetes cannot make without
// restarting the pod.
func (u ScaleUpArgs) config() finegrain.ScaleUpConfig {
	return finegrain.ScaleUpConfig{
		ExpectedUtilisation: resource.Uniform(resource.Mask(1<<cpuSlot), *u.ExpectedUtilisation),
		PreemptibleShare:    *u.PreemptibleShare,
		IdleOnly:            u.IdleOnly,
		Planner:             []speculate.PlannerOption{speculate.WithMoves(false)},
	}
}

// The reasons of the Events recorded on a pod a round changed, or planned to change;
// the Event's action is the round's (Expand, Reclaim, Preempt, Restore, Move), its
// note says what and why. Events of one reason and action on a pod are counted as a
// series of the first (the events API's deduplication); the log has each.
const (
	// ResizedReason: the pod was resized in place through pods/resize.
	ResizedReason = "FineGrainResized"
	// ResizeUnsupportedReason: a round planned to resize the pod (or move it) and the
	// cluster, its node or the pod cannot; finegrain's books were set back.
	ResizeUnsupportedReason = "FineGrainResizeUnsupported"
	// ResizeFailedReason: the API refused the resize, or failed; the books were set
	// back.
	ResizeFailedReason = "FineGrainResizeFailed"
	// ResizeInfeasibleReason: the kubelet found a resize infeasible; the pod's
	// resources were written back and the books set back.
	ResizeInfeasibleReason = "FineGrainResizeInfeasible"
)

// eventReasons are the Events' reasons by result.
var eventReasons = map[string]string{
	resizeDone:        ResizedReason,
	resizeUnsupported: ResizeUnsupportedReason,
	resizeFailed:      ResizeFailedReason,
	resizeInfeasible:  ResizeInfeasibleReason,
}

// The results of finegrain_scale_actions_total.
const (
	resizeDone        = "resized"
	resizeUnsupported = "unsupported"
	resizeFailed      = "failed"
	resizeInfeasible  = "infeasible"
)

const (
	// resizeRecheck is how long the API server's answer to whether it serves
	// pods/resize is kept before discovery is asked again.
	resizeRecheck = 10 * time.Minute
	// infeasibleBackoff is how long a pod whose resize the kubelet found infeasible
	// is not resized again: the next rounds are likely to plan the same.
	infeasibleBackoff = 5 * time.Minute
	// resizeTimeout bounds the API calls of one action.
	resizeTimeout = 10 * time.Second
	// fieldManager names the plugin as the writer of the resources it resizes.
	fieldManager = "finegrain-scheduler"
	// moveUnsupported is why a move is never carried out.
	moveUnsupported = "Kubernetes cannot move a running pod to another node (there is no live migration), and finegrain does not evict or recreate a pod to move it"
)

// scaler is the plugin's scale-up machinery (Args.ScaleUp).
type scaler struct {
	interval time.Duration
	started  atomic.Bool
	round    sync.Mutex // one round at a time; held while calling the API

	mu        sync.Mutex
	checked   bool          // the API server was asked whether it serves pods/resize
	checkedAt time.Duration // when, in the plugin's time
	served    bool
	why       string                    // why not, when not
	down      bool                      // the last discovery failed: logged once, until it answers
	pending   map[string]*pendingResize // resizes the kubelet has not carried out yet, by task ID
	backoff   map[string]time.Duration  // by task ID: when a pod whose resize was infeasible may be resized again
	said      map[string]string         // by task ID: the last reason logged at level 0
}

func newScaler(a *ScaleUpArgs) *scaler {
	if a == nil {
		return nil
	}
	return &scaler{interval: a.Interval.Duration, pending: map[string]*pendingResize{}, backoff: map[string]time.Duration{}, said: map[string]string{}}
}

// pendingResize is a resize made through pods/resize that the kubelet has not carried
// out yet (the pod's container statuses do not report it).
type pendingResize struct {
	action     finegrain.ScaleAction
	pod        v1.ObjectReference
	changes    []containerResize
	infeasible string // the kubelet's message once it found the resize infeasible
}

// startScaleUps starts the rounds, once, until ctx ends (activate: the replica that
// schedules).
func (p *Plugin) startScaleUps(ctx context.Context) {
	if p.scale == nil || p.scale.started.Swap(true) {
		return
	}
	p.logger.Info("scale-up rounds started", "interval", p.scale.interval, "moves", false)
	go p.scaleUps(ctx, p.ticks.NewTicker(p.scale.interval))
}

// scaleUps runs a round at every tick of t until ctx ends.
func (p *Plugin) scaleUps(ctx context.Context, t clock.Ticker) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			p.scaleRound(ctx)
		}
	}
}

// outcome is what became of one action of a round.
type outcome struct {
	action  finegrain.ScaleAction
	pod     *v1.ObjectReference // nil when the task is no pod of the plugin's
	changes []containerResize   // what was written, when it was
	result  string              // resizeDone, resizeUnsupported or resizeFailed
	why     string              // why it was not carried out
}

// scaleRound runs one round: it sets back the resizes the kubelet found infeasible,
// runs the library's round, carries each action out on its pod, in the round's order,
// and sets the books back for those it could not carry out, in the reverse order (a
// shrink's room may have gone to a grow of the same round). A grow on a node where a
// shrink of the round was not carried out is not carried out either: the room it was
// planned on was not freed.
func (p *Plugin) scaleRound(ctx context.Context) {
	s := p.scale
	s.round.Lock()
	defer s.round.Unlock()
	p.setBackInfeasible(ctx)
	round, err := p.sched.ScaleUp(p.now())
	if err != nil {
		p.logger.Error(err, "scale-up round")
		return
	}
	metricScaleRounds.WithLabelValues(p.profile).Inc()
	metricStragglers.WithLabelValues(p.profile).Add(float64(len(round.Stragglers)))
	for _, st := range round.Stragglers {
		p.logger.V(2).Info("straggler found", "task", st.Task, "due", st.Verdict.Finish, "extra", p.scheme.schema.Format(st.Extra))
	}
	for _, u := range round.Plan.Unserved {
		p.logger.V(2).Info("straggler not served: no room for its expansion", "task", u.Task, "node", u.Node, "extra", p.scheme.schema.Format(u.Extra))
	}
	for _, sk := range round.Skipped {
		p.logger.V(2).Info("scale-up step skipped", "task", sk.Task, "kind", sk.Kind, "err", sk.Err)
	}
	served, why := p.resizeServed() // every round, so that the metric and the log say it from the first
	if len(round.Actions) == 0 {
		return
	}
	outs := make([]outcome, len(round.Actions))
	unfreed := map[string]string{} // node → the pod whose shrink there was not carried out
	for i, a := range round.Actions {
		o := &outs[i]
		o.action, o.pod, o.result = a, p.podRef(a.Task), resizeUnsupported
		switch {
		case o.pod == nil:
			o.why = "the task is no pod of the plugin's"
		case a.Kind == speculate.Move:
			o.why = moveUnsupported
		case !served:
			o.why = why
		case growing(a.Kind) && unfreed[a.Node] != "":
			o.why = fmt.Sprintf("the room it was planned on was not freed: the shrink (or move) of pod %s on node %s was not carried out", unfreed[a.Node], a.Node)
		default:
			o.changes, o.result, o.why = p.resize(ctx, *o.pod, a)
		}
		if o.why != "" && o.pod != nil {
			switch {
			case !growing(a.Kind):
				unfreed[a.Node] = o.pod.Namespace + "/" + o.pod.Name
			case a.Kind == speculate.Move: // it frees its old node only once moved
				unfreed[a.From] = o.pod.Namespace + "/" + o.pod.Name
			}
		}
	}
	for i := len(outs) - 1; i >= 0; i-- {
		if o := &outs[i]; o.why != "" {
			p.undo(o.action, o.pod)
		}
	}
	for i := range outs {
		p.reportAction(outs[i])
	}
}

// undo sets the library's books back for action a, which was not carried out on pod.
func (p *Plugin) undo(a finegrain.ScaleAction, pod *v1.ObjectReference) {
	err := p.sched.UndoScale(a, p.now())
	if err == nil || errors.Is(err, finegrain.ErrState) || errors.Is(err, finegrain.ErrUnknownTask) {
		return // set back, or the pod ended meanwhile
	}
	kv := []any{"kind", a.Kind, "task", a.Task, "amount", p.scheme.schema.Format(a.Amount)}
	if pod != nil {
		kv = append(kv, "pod", klog.KRef(pod.Namespace, pod.Name))
	}
	p.logger.Error(err, "finegrain's books not set back after an action not carried out: they hold more or less than the pod until it ends", kv...)
}

// podRef is the reference of the pod of task id, nil when the plugin holds none.
func (p *Plugin) podRef(id string) *v1.ObjectReference {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.pods[id]
	if r == nil {
		return nil
	}
	return &v1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: r.namespace, Name: r.name, UID: types.UID(r.uid)}
}

// resize carries action a out on pod through pods/resize: it reads the pod, checks
// that its node and the pod itself can be resized in place, works out its containers'
// new resources (resizeOf) and writes them, with the pod's resourceVersion as a
// precondition. It returns what it wrote, or why it did not and whether that is the
// cluster's lack of support (resizeUnsupported) or an API failure (resizeFailed).
func (p *Plugin) resize(ctx context.Context, ref v1.ObjectReference, a finegrain.ScaleAction) ([]containerResize, string, string) {
	ctx, cancel := context.WithTimeout(ctx, resizeTimeout)
	defer cancel()
	if p.resizePending(a.Task) {
		return nil, resizeUnsupported, "the pod's last resize has not been carried out by its kubelet yet"
	}
	if p.resizeBackoff(a.Task) > 0 {
		return nil, resizeUnsupported, fmt.Sprintf("the kubelet found the pod's last resize infeasible: it is not resized again for %v after that", infeasibleBackoff)
	}
	pods := p.handle.ClientSet().CoreV1().Pods(ref.Namespace)
	pod, err := pods.Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case err != nil:
		return nil, resizeFailed, "the pod could not be read: " + err.Error()
	case pod.UID != ref.UID:
		return nil, resizeFailed, "the pod is gone"
	}
	if why := p.nodeResizable(pod.Spec.NodeName); why != "" {
		return nil, resizeUnsupported, why
	}
	if why := podResizable(pod); why != "" {
		return nil, resizeUnsupported, why
	}
	changes, err := resizeOf(pod, a.Amount, growing(a.Kind), p.scheme)
	if err != nil {
		return nil, resizeUnsupported, "the pod cannot take it: " + err.Error()
	}
	data, err := resizePatch(pod.ResourceVersion, changes)
	if err != nil {
		return nil, resizeFailed, err.Error()
	}
	got, err := pods.Patch(ctx, ref.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}, ResizeSubresource)
	switch {
	case apierrors.IsForbidden(err):
		return nil, resizeFailed, "the scheduler may not patch pods/resize (RBAC: deploy/kube-scheduler.yaml's ClusterRole finegrain-scheduler-pod-resize grants it): " + err.Error()
	case apierrors.IsNotFound(err):
		p.recheckResize() // the API server may no longer serve it
		return nil, resizeFailed, "pods/resize answered not found: " + err.Error()
	case err != nil:
		return nil, resizeFailed, "the API server refused the resize: " + err.Error()
	}
	p.scale.mu.Lock()
	p.scale.pending[a.Task] = &pendingResize{action: a, pod: ref, changes: changes}
	p.scale.mu.Unlock()
	if req, err := p.scheme.tuple(podRequests(got), true); err == nil {
		p.mu.Lock()
		if r := p.pods[a.Task]; r != nil {
			r.request = req // a victim is held by its requests as they are now
		}
		p.mu.Unlock()
	}
	return changes, resizeDone, ""
}

// reportAction counts an action's outcome, records an Event on its pod and logs it:
// a resize at level 0; an action not carried out at level 0 the first time for a pod
// and a reason, at verbosity 2 after that (a round may plan the same every interval).
func (p *Plugin) reportAction(o outcome) {
	a := o.action
	metricScaleActions.WithLabelValues(p.profile, a.Kind.String(), o.result).Inc()
	amount := p.scheme.schema.Format(a.Amount)
	kv := []any{"kind", a.Kind, "task", a.Task, "node", a.Node, "amount", amount}
	if o.pod != nil {
		kv = append(kv, "pod", klog.KRef(o.pod.Namespace, o.pod.Name))
	}
	if o.why == "" {
		p.logger.Info("pod resized in place", append(kv, "change", describe(o.changes))...)
		p.podEvent(o.pod, v1.EventTypeNormal, ResizedReason, a.Kind, "%s by %s through pods/resize: %s", a.Kind, amount, describe(o.changes))
		p.scale.mu.Lock()
		delete(p.scale.said, a.Task)
		p.scale.mu.Unlock()
		return
	}
	p.scale.mu.Lock()
	first := p.scale.said[a.Task] != o.why
	if o.pod != nil {
		p.scale.said[a.Task] = o.why
	}
	p.scale.mu.Unlock()
	kv = append(kv, "result", o.result, "reason", o.why)
	if first {
		p.logger.Info("planned action not carried out; finegrain's books set back", kv...)
	} else {
		p.logger.V(2).Info("planned action not carried out; finegrain's books set back", kv...)
	}
	p.podEvent(o.pod, v1.EventTypeWarning, eventReasons[o.result], a.Kind, "planned %s by %s not carried out: %s; finegrain's books set back", a.Kind, amount, o.why)
}

// podEvent records an Event on pod (nil: none) about an action of kind k.
func (p *Plugin) podEvent(pod *v1.ObjectReference, typ, reason string, k speculate.StepKind, note string, args ...any) {
	if pod == nil || p.handle == nil || p.handle.EventRecorder() == nil {
		return
	}
	action := k.String()
	action = strings.ToUpper(action[:1]) + action[1:]
	p.handle.EventRecorder().Eventf(pod, nil, typ, reason, action, note, args...)
}

// resizeServed reports whether the API server serves pods/resize, from discovery (the
// core group's resources), asked at most once every resizeRecheck; and why not, when
// it does not. A discovery that fails is asked again at the next round.
func (p *Plugin) resizeServed() (bool, string) {
	s := p.scale
	now := p.now()
	s.mu.Lock()
	if s.checked && now-s.checkedAt < resizeRecheck {
		defer s.mu.Unlock()
		return s.served, s.why
	}
	was, known := s.served, s.checked
	s.mu.Unlock()
	served, why, err := p.discoverResize()
	s.mu.Lock()
	s.served, s.why = served, why
	s.checked, s.checkedAt = err == nil, now
	wasDown := s.down
	s.down = err != nil
	s.mu.Unlock()
	switch {
	case err != nil && !wasDown:
		p.logger.Error(err, "API discovery failed: no pod is resized until it answers; logged once")
		return false, why
	case err != nil:
		return false, why
	case served:
		metricResizeServed.WithLabelValues(p.profile).Set(1)
	default:
		metricResizeServed.WithLabelValues(p.profile).Set(0)
	}
	if !known || was != served {
		if served {
			p.logger.Info("the API server serves pods/resize: scale-up rounds resize pods in place")
		} else {
			p.logger.Info("in-place pod resize not available: scale-up rounds plan, and nothing is carried out", "reason", why)
		}
	}
	return served, why
}

// discoverResize asks the API server's discovery whether it serves pods/resize with
// patch.
func (p *Plugin) discoverResize() (bool, string, error) {
	if p.handle == nil || p.handle.ClientSet() == nil {
		return false, "the plugin has no API client", nil
	}
	list, err := p.handle.ClientSet().Discovery().ServerResourcesForGroupVersion("v1")
	switch {
	case apierrors.IsNotFound(err):
		return false, "the API server's discovery lists no core v1 resources", nil
	case err != nil:
		return false, "API discovery failed: " + err.Error(), err
	}
	name := "pods/" + ResizeSubresource
	for _, r := range list.APIResources {
		if r.Name == name {
			if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, "patch") {
				return false, "the API server serves pods/resize without patch", nil
			}
			return true, "", nil
		}
	}
	return false, "the API server does not serve pods/resize (in-place pod resize: Kubernetes v1.33 or later, feature gate InPlacePodVerticalScaling)", nil
}

// recheckResize makes the next round ask discovery again.
func (p *Plugin) recheckResize() {
	p.scale.mu.Lock()
	p.scale.checked = false
	p.scale.mu.Unlock()
}

// nodeResizable says why node name cannot resize pods in place ("" when it can or
// that is not known), from the scheduler's node informer.
func (p *Plugin) nodeResizable(name string) string {
	if p.handle == nil || p.handle.SharedInformerFactory() == nil {
		return ""
	}
	n, err := p.handle.SharedInformerFactory().Core().V1().Nodes().Lister().Get(name)
	if err != nil {
		return ""
	}
	return nodeResizable(n)
}

// resizePending reports whether task id has a resize its kubelet has not carried out.
func (p *Plugin) resizePending(id string) bool {
	p.scale.mu.Lock()
	defer p.scale.mu.Unlock()
	_, ok := p.scale.pending[id]
	return ok
}

// resizeBackoff is how long task id, whose last resize the kubelet found infeasible,
// is not resized again; 0 when it may be.
func (p *Plugin) resizeBackoff(id string) time.Duration {
	now := p.now()
	p.scale.mu.Lock()
	defer p.scale.mu.Unlock()
	until, ok := p.scale.backoff[id]
	if !ok || now >= until {
		delete(p.scale.backoff, id)
		return 0
	}
	return until - now
}

// resizeVerdict follows the kubelet's verdict on a resize the plugin made of pod: the
// resize is done when the pod's container statuses report the resources written; one
// the kubelet found infeasible (the PodResizePending condition, reason Infeasible) is
// set back at the next round (setBackInfeasible), and the pod is not resized again for
// infeasibleBackoff. A Deferred one is left to the kubelet, which tries it again.
func (p *Plugin) resizeVerdict(pod *v1.Pod) {
	if p.scale == nil {
		return
	}
	id := taskID(pod)
	p.scale.mu.Lock()
	defer p.scale.mu.Unlock()
	pr := p.scale.pending[id]
	if pr == nil || pr.pod.UID != pod.UID {
		return
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodResizePending && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonInfeasible {
			pr.infeasible = c.Message
			if pr.infeasible == "" {
				pr.infeasible = "no message"
			}
			return
		}
	}
	if actuated(pod, pr.changes) {
		delete(p.scale.pending, id)
	}
}

// setBackInfeasible sets back the resizes the kubelet found infeasible: the books
// (UndoScale), and the pod's containers to what they were, so that the pod no longer
// asks for what it will not get.
func (p *Plugin) setBackInfeasible(ctx context.Context) {
	var back []*pendingResize
	now := p.now()
	p.scale.mu.Lock()
	for id, pr := range p.scale.pending {
		if pr.infeasible != "" {
			back = append(back, pr)
			delete(p.scale.pending, id)
			p.scale.backoff[id] = now + infeasibleBackoff
		}
	}
	p.scale.mu.Unlock()
	slices.SortFunc(back, func(a, b *pendingResize) int { return strings.Compare(a.action.Task, b.action.Task) })
	for _, pr := range back {
		p.undo(pr.action, &pr.pod)
		why := "the kubelet found the resize infeasible: " + pr.infeasible
		if err := p.writeBack(ctx, pr); err != nil {
			p.logger.Error(err, "a resize the kubelet found infeasible not written back on the pod", "pod", klog.KRef(pr.pod.Namespace, pr.pod.Name))
			why += "; the pod's resources could not be written back (" + err.Error() + ")"
		}
		p.reportAction(outcome{action: pr.action, pod: &pr.pod, result: resizeInfeasible, why: why})
	}
}

// writeBack writes pod pr's containers' resources back to what they were before pr.
func (p *Plugin) writeBack(ctx context.Context, pr *pendingResize) error {
	if p.handle == nil || p.handle.ClientSet() == nil {
		return errors.New("the plugin has no API client")
	}
	ctx, cancel := context.WithTimeout(ctx, resizeTimeout)
	defer cancel()
	data, err := resizePatch("", undone(pr.changes))
	if err != nil {
		return err
	}
	_, err = p.handle.ClientSet().CoreV1().Pods(pr.pod.Namespace).Patch(ctx, pr.pod.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}, ResizeSubresource)
	return err
}

// forgetScaling forgets what the rounds keep of task id, which ended.
func (p *Plugin) forgetScaling(id string) {
	if p.scale == nil {
		return
	}
	p.scale.mu.Lock()
	defer p.scale.mu.Unlock()
	delete(p.scale.pending, id)
	delete(p.scale.backoff, id)
	delete(p.scale.said, id)
}

// describe says what changes do, for events and logs: "container main: cpu requests
// 2 → 4667m, limits 4 → 6667m".
func describe(changes []containerResize) string {
	parts := make([]string, 0, len(changes))
	for _, cr := range changes {
		var res []string
		for _, r := range resizedResources {
			q, ok := cr.requests[r.name]
			if !ok {
				continue
			}
			old := "none"
			if o, ok := cr.oldRequests[r.name]; ok {
				old = o.String()
			}
			s := fmt.Sprintf("%s requests %s → %s", r.name, old, q.String())
			if l, ok := cr.limits[r.name]; ok {
				o := cr.oldLimits[r.name]
				s += fmt.Sprintf(", limits %s → %s", o.String(), l.String())
			}
			res = append(res, s)
		}
		parts = append(parts, fmt.Sprintf("container %s: %s", cr.name, strings.Join(res, "; ")))
	}
	return strings.Join(parts, "; ")
}
