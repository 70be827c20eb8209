package plugin

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
)

// This file is fairness across queues (Args.Queues): every pod is a job of its own in
// a queue — its namespace, or the value of a label — that the library's fairness tree
// keeps with a weight, a min and a max share; Sorting.Less orders the scheduler's
// queue of pending pods by their queues' standings (the poorer queue first) and
// PreFilter refuses a pod whose queue holds its max share.

// QueueArgs configure fairness across queues (Args.Queues):
//
//	queues:
//	  policy: DRF          # DRF (default), Fair or Capacity
//	  by: namespace        # or label:<key>, e.g. label:example.com/team
//	  weights: {team-a: 2, team-b: 1}
//	  minShare: {team-a: 0.25}
//	  maxShare: {team-b: 0.5}
//
// Min and max shares are in the policy's unit: for DRF and Capacity a dominant share
// of the cluster's allocatable capacity, in (0, 1]; for Fair a number of running
// pods. A queue not named gets weight 1, no min share and no max share.
type QueueArgs struct {
	// Policy orders the queues, as the library's fairness package defines it: DRF
	// (weighted dominant resource fairness; the default), Fair (running pods divided
	// by weight, queues below their min share first) or Capacity (used over
	// guaranteed — the min share — lowest first; weights are not used).
	Policy string `json:"policy,omitempty"`
	// By is what a pod's queue is: "namespace" (the default), or "label:KEY", the
	// value of the pod's label KEY (DefaultQueue without it).
	By string `json:"by,omitempty"`
	// DefaultQueue is the queue of a pod without the label By names; only with
	// label:KEY. Default "default".
	DefaultQueue string `json:"defaultQueue,omitempty"`
	// Weights are the queues' weights, positive (default 1).
	Weights map[string]float64 `json:"weights,omitempty"`
	// MinShare are the queues' min shares (default none): a queue below its min
	// share goes before the queues that are not (DRF, Fair); Capacity's guarantee.
	MinShare map[string]float64 `json:"minShare,omitempty"`
	// MaxShare are the queues' max shares (default none): a pod that would take its
	// queue beyond its max is not placed until the queue holds less.
	MaxShare map[string]float64 `json:"maxShare,omitempty"`
}

// The values of QueueArgs.Policy and QueueArgs.By.
const (
	QueuePolicyDRF      = "DRF"
	QueuePolicyFair     = "Fair"
	QueuePolicyCapacity = "Capacity"
	QueueByNamespace    = "namespace"
	// QueueByLabelPrefix starts QueueArgs.By for a label: "label:example.com/team".
	QueueByLabelPrefix = "label:"
	// DefaultQueueName is QueueArgs.DefaultQueue's default.
	DefaultQueueName = "default"
)

var queuePolicies = map[string]fairness.Policy{
	QueuePolicyDRF:      fairness.DRF{},
	QueuePolicyFair:     fairness.Fair{},
	QueuePolicyCapacity: fairness.Capacity{},
}

// withDefaults fills the fields left unset.
func (q QueueArgs) withDefaults() QueueArgs {
	if q.Policy == "" {
		q.Policy = QueuePolicyDRF
	}
	if q.By == "" {
		q.By = QueueByNamespace
	}
	if q.DefaultQueue == "" && strings.HasPrefix(q.By, QueueByLabelPrefix) {
		q.DefaultQueue = DefaultQueueName
	}
	return q
}

// label is the key of the label By names; "" for namespaces.
func (q QueueArgs) label() string { return strings.TrimPrefix(q.By, QueueByLabelPrefix) }

// validate checks q (defaults filled in), each error under path.
func (q QueueArgs) validate(path *field.Path) field.ErrorList {
	q = q.withDefaults()
	var errs field.ErrorList
	if _, ok := queuePolicies[q.Policy]; !ok {
		errs = append(errs, field.NotSupported(path.Child("policy"), q.Policy, sortedKeys(queuePolicies)))
	}
	// A queue's name is a namespace's or a label value's.
	name := validation.IsDNS1123Label
	switch {
	case q.By == QueueByNamespace:
		if q.DefaultQueue != "" {
			errs = append(errs, field.Invalid(path.Child("defaultQueue"), q.DefaultQueue, "only with by: label:KEY; every pod has a namespace"))
		}
	case strings.HasPrefix(q.By, QueueByLabelPrefix):
		for _, msg := range validation.IsQualifiedName(q.label()) {
			errs = append(errs, field.Invalid(path.Child("by"), q.By, msg))
		}
		name = func(v string) []string {
			if v == "" {
				return []string{"a queue's name must not be empty"}
			}
			return validation.IsValidLabelValue(v)
		}
		for _, msg := range name(q.DefaultQueue) {
			errs = append(errs, field.Invalid(path.Child("defaultQueue"), q.DefaultQueue, msg))
		}
	default:
		errs = append(errs, field.Invalid(path.Child("by"), q.By, `must be "namespace" or "label:KEY"`))
	}
	names := func(p *field.Path, m map[string]float64) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			for _, msg := range name(k) {
				errs = append(errs, field.Invalid(p.Key(k), k, "queue name: "+msg))
			}
		}
	}
	fraction := q.Policy != QueuePolicyFair // DRF and Capacity: a dominant share
	share := func(p *field.Path, m map[string]float64, zero bool) {
		names(p, m)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (v == 0 && !zero):
				want := "must be positive and finite (omit the queue for none)"
				if zero {
					want = "must be non-negative and finite"
				}
				errs = append(errs, field.Invalid(p.Key(k), v, want))
			case fraction && v > 1:
				errs = append(errs, field.Invalid(p.Key(k), v, q.Policy+" shares are fractions of the cluster, in [0, 1]"))
			}
		}
	}
	names(path.Child("weights"), q.Weights)
	for _, k := range slices.Sorted(maps.Keys(q.Weights)) {
		if w := q.Weights[k]; !(w > 0) || math.IsInf(w, 1) {
			errs = append(errs, field.Invalid(path.Child("weights").Key(k), w, "must be positive and finite"))
		}
	}
	if q.Policy == QueuePolicyCapacity && len(q.Weights) > 0 {
		errs = append(errs, field.Invalid(path.Child("weights"), len(q.Weights), "Capacity does not use weights (set minShare, the guarantee)"))
	}
	share(path.Child("minShare"), q.MinShare, true)
	share(path.Child("maxShare"), q.MaxShare, false)
	for _, k := range slices.Sorted(maps.Keys(q.MinShare)) {
		if mx, ok := q.MaxShare[k]; ok && q.MinShare[k] > mx {
			errs = append(errs, field.Invalid(path.Child("minShare").Key(k), q.MinShare[k], fmt.Sprintf("must not exceed maxShare[%s] (%v)", k, mx)))
		}
	}
	return errs
}

// queueBook keeps the pods' queues in the library's Scheduler, and their standings
// for Less: each read from the library when it is first asked for after the
// library's QueuesVersion moved, and kept until it moves again.
type queueBook struct {
	args  QueueArgs // checked, defaults filled in
	label string    // by label: its key; "" by namespace
	sched *finegrain.Scheduler

	adding sync.Mutex      // adding queues
	added  map[string]bool // the queues added to the Scheduler, under adding

	mu    sync.Mutex // held only to look up and store in known
	known map[string]knownStanding

	releases atomic.Uint64 // rooms freed (giveway.go)
	// By pod task ID, under the plugin's mu (giveway.go): the rooms freed when its
	// last cycle began, and when it last gave way.
	cycles, gaveWay map[string]uint64
}

// knownStanding is a queue's standing as read at a QueuesVersion.
type knownStanding struct {
	version uint64
	queueStanding
}

// queueStanding is what Less and PreFilter read of a queue.
type queueStanding struct {
	key   fairness.OrderKey
	atMax bool
	used  float64 // in the policy's unit
	max   float64
}

func newQueueBook(a *QueueArgs, sched *finegrain.Scheduler) *queueBook {
	if a == nil {
		return nil
	}
	args := a.withDefaults()
	b := &queueBook{args: args, sched: sched, added: map[string]bool{}, known: map[string]knownStanding{},
		cycles: map[string]uint64{}, gaveWay: map[string]uint64{}}
	if args.By != QueueByNamespace {
		b.label = args.label()
	}
	return b
}

// queueOf is pod's queue: its namespace, or its label's value (the default queue
// without it).
func (b *queueBook) queueOf(pod *v1.Pod) string {
	if b.label == "" {
		return pod.Namespace
	}
	if v := pod.Labels[b.label]; v != "" {
		return v
	}
	return b.args.DefaultQueue
}

// ensure adds queue q to the Scheduler, with its weight and shares, once.
func (b *queueBook) ensure(q string) error {
	b.adding.Lock()
	defer b.adding.Unlock()
	if b.added[q] {
		return nil
	}
	opts := []fairness.Option{}
	if w, ok := b.args.Weights[q]; ok {
		opts = append(opts, fairness.Weight(w))
	}
	if m, ok := b.args.MinShare[q]; ok {
		opts = append(opts, fairness.MinShare(m))
	}
	if m, ok := b.args.MaxShare[q]; ok {
		opts = append(opts, fairness.MaxShare(m))
	}
	if err := b.sched.AddQueue("", q, opts...); err != nil && !errors.Is(err, finegrain.ErrDuplicate) {
		return fmt.Errorf("queue %q: %w", q, err)
	}
	b.added[q] = true
	return nil
}

// standing is queue q's standing now: the one kept, read at the library's current
// QueuesVersion, or a new read (under the library's read lock: one queue, a few
// hundred nanoseconds) when the version moved since. Between changes of the
// library's queues Less takes no lock but mu, held for a map lookup. A queue the
// library does not hold yet (no pod of it submitted) holds nothing: the zero
// standing, whose key is the least.
func (b *queueBook) standing(q string) queueStanding {
	version := b.sched.QueuesVersion() // before the read: a change meanwhile is read again next time
	b.mu.Lock()
	k, ok := b.known[q]
	b.mu.Unlock()
	if ok && k.version == version {
		return k.queueStanding
	}
	var st queueStanding
	if s, err := b.sched.Queue(q); err == nil {
		st = queueStanding{key: s.Key, atMax: s.AtMax, used: s.Used, max: s.Share.Max}
	}
	b.mu.Lock()
	b.known[q] = knownStanding{version: version, queueStanding: st}
	b.mu.Unlock()
	return st
}

// compare orders queues qa and qb: −1 when qa's pods go first, +1 when qb's, 0 when
// they stand alike. A queue at its max share goes after the others (its pods would
// be refused); otherwise the smaller key first.
func (b *queueBook) compare(qa, qb string) int {
	a, c := b.standing(qa), b.standing(qb)
	switch {
	case a.atMax && !c.atMax:
		return 1
	case c.atMax && !a.atMax:
		return -1
	}
	return a.key.Compare(c.key)
}

// Sorting is the plugin when Args.Queues is set: FineGrain, which also sorts the
// scheduler's queue of pending pods (fwk.QueueSortPlugin) by their queues' fairness.
// The factory returns it in place of a *Plugin. A profile that enables it disables
// PrioritySort at queueSort (the framework takes exactly one queue-sort plugin per
// profile, the same in every profile); see deploy/scheduler-config-queues.yaml.
type Sorting struct{ *Plugin }

var _ fwk.QueueSortPlugin = (*Sorting)(nil)

// Less orders two pods (or pod groups) of the scheduling queue: the one whose queue
// stands first under the policy — the poorer queue, by its weighted share — goes
// first; within a queue, or between queues that stand alike, as PrioritySort does:
// the higher priority, then the earlier timestamp.
//
// The scheduler's queue is a heap: a pod is placed as it is added or moved, by the
// standings of that moment. Pods wait in it when the cluster is full, and are moved
// back together when room is freed; that is when the order decides who gets the
// room, and it is taken afresh then.
func (s *Sorting) Less(a, b fwk.QueuedEntityInfo) bool {
	if book := s.queues; book != nil {
		pa, pb := entityPod(a), entityPod(b)
		if pa != nil && pb != nil {
			if qa, qb := book.queueOf(pa), book.queueOf(pb); qa != qb {
				if c := book.compare(qa, qb); c != 0 {
					return c < 0
				}
			}
		}
	}
	p1, p2 := a.GetPriority(), b.GetPriority()
	return p1 > p2 || (p1 == p2 && a.GetTimestamp().Before(b.GetTimestamp()))
}

// entityPod is the pod an entity of the scheduling queue stands for: the pod, or a
// pod group's first unscheduled pod (its pods share a namespace); nil for neither.
func entityPod(e fwk.QueuedEntityInfo) *v1.Pod {
	switch x := e.(type) {
	case interface{ GetPodInfo() fwk.PodInfo }:
		if pi := x.GetPodInfo(); pi != nil {
			return pi.GetPod()
		}
	case interface{ GetUnscheduledPods() []*v1.Pod }:
		if pods := x.GetUnscheduledPods(); len(pods) > 0 {
			return pods[0]
		}
	}
	return nil
}

// queueFor is the queue pod's job goes in — "" (the root) without Args.Queues —
// added to the Scheduler if it is new.
func (p *Plugin) queueFor(pod *v1.Pod) (string, error) {
	if p.queues == nil {
		return "", nil
	}
	q := p.queues.queueOf(pod)
	return q, p.queues.ensure(q)
}

// overMaxShare refuses pod when its queue holds its max share (Args.Queues), as the
// capacity-scheduling plugin's ElasticQuota refuses a pod beyond its max: Unschedulable,
// so that the pod is tried again when a pod ends and the queue holds less. A pod
// that would take its queue past its max is refused by the library's queue admission
// at Filter (finegrain: max share).
func (p *Plugin) overMaxShare(pod *v1.Pod) *fwk.Status {
	if p.queues == nil {
		return nil
	}
	q := p.queues.queueOf(pod)
	st := p.queues.standing(q)
	if !st.atMax {
		return nil
	}
	unit := "a dominant share of the cluster"
	if p.queues.args.Policy == QueuePolicyFair {
		unit = "running pods"
	}
	return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("finegrain: queue %s holds its max share (%.4g of %.4g, %s)", q, st.used, st.max, unit))
}
