package framework

import (
	"sync"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/match"
)

// This file is the probes of a snapshot: a host scheduler's cycle asks Filter and
// Score of one task on many nodes, concurrently, as kube-scheduler asks them of its
// NodeInfo snapshot. What depends on the task alone — its demand and the PreFilter
// plugins' verdict — is worked out once (NewTaskProbe, under the owner's lock); the nodes
// are views (cluster.NodeInfo.View) that the state's changes do not reach, so Filter
// and Score on them take no lock at all.

// ViewSafe marks a plugin that answers a TaskProbe on views exactly as Framework.Filter
// and Framework.Score answer on the live state, for the same state:
//
//   - as a PreFilter plugin, its verdict does not depend on the attempt's Node or
//     Level: a TaskProbe asks it once per task, with no node (as push mode does), while
//     the state is held still;
//   - as a Filter or Score plugin, it reads only the attempt — its Task (a view:
//     cluster.TaskInfo.View), Demand, Start, Level, Result and Node (a view:
//     cluster.NodeInfo.View, whose tasks are DeadlineTasks and NumTasks, not Tasks) —
//     and parts of its own or of others that are safe for concurrent use (a
//     policy.Adjuster's modes): never the cycle's State, which other goroutines change
//     meanwhile.
//
// The Demand plugin needs no mark: it runs once, while the state is held still. A
// framework with a PreFilter, Filter or Score plugin that is not ViewSafe answers
// probes on the live state instead (TaskProbe.OnViews is false), which its owner must then
// hold still.
type ViewSafe interface {
	Plugin
	// ViewSafe promises what the interface's documentation says.
	ViewSafe()
}

// OnViews reports whether every PreFilter, Filter and Score plugin is ViewSafe, so
// that TaskProbe answers on views without the state held still.
func (f *Framework) OnViews() bool { return f.onViews }

// viewSafe reports whether every plugin of list is ViewSafe.
func viewSafe[T Plugin](list []T) bool {
	for _, p := range list {
		if _, ok := any(p).(ViewSafe); !ok {
			return false
		}
	}
	return true
}

// TaskProbe is pending task t's probes at one start, prepared once for many nodes
// (NewTaskProbe): its demand and the PreFilter plugins' verdict, and a view of the task.
// Filter and Score then answer for a node as Framework.Filter and Framework.Score
// would have when the probe was prepared, on a view of the node taken then
// (cluster.NodeInfo.View) — concurrently with each other and with the state's
// changes, without a lock, when OnViews. A TaskProbe does not change once prepared.
type TaskProbe struct {
	fw      *Framework
	base    Attempt // the task (a view), its demand and the start; no node
	pre     Status  // the PreFilter plugins' verdict
	gen     uint64
	inputs  []fairness.Location // the task's inputs and their nodes' racks, for Level
	onViews bool
}

// NewTaskProbe prepares the probes of pending task t from start: the demand step and the
// PreFilter plugins, once, with no node (as in push mode). The state must be held
// still while it runs (its owner's read lock).
func (f *Framework) NewTaskProbe(t *cluster.TaskInfo, start time.Duration) *TaskProbe {
	c := &Cycle{fw: f, mode: Probe, now: start, gen: f.gen}
	p := &TaskProbe{fw: f, gen: f.gen, onViews: f.onViews}
	c.prepare(&p.base, t, nil, start, fairness.NodeLocal, false)
	p.pre = c.preFilter(&p.base)
	p.base.Task = t.View()
	p.inputs = f.state.Locations(t)
	return p
}

// OnViews reports whether the probe answers on views without a lock (every PreFilter,
// Filter and Score plugin is ViewSafe). When it is false, Filter and Score read the
// state through the plugins: pass the state's own nodes and hold the state still.
func (p *TaskProbe) OnViews() bool { return p.onViews }

// Task is the view of the probed task (cluster.TaskInfo.View) taken when the probe was
// prepared.
func (p *TaskProbe) Task() *cluster.TaskInfo { return p.base.Task }

// Start is the start the probe asks about.
func (p *TaskProbe) Start() time.Duration { return p.base.Start }

// Demand is the task's demand, worked out when the probe was prepared.
func (p *TaskProbe) Demand() TaskDemand { return p.base.Demand }

// PreFilter is the PreFilter plugins' verdict on the task, given when the probe was
// prepared.
func (p *TaskProbe) PreFilter() Status { return p.pre }

// Level is how close node n is to the task's input, as State.Locality answered when
// the probe was prepared.
func (p *TaskProbe) Level(n *cluster.NodeInfo) fairness.Level {
	if len(p.inputs) == 0 {
		return fairness.NodeLocal
	}
	level := fairness.OffSwitch
	for _, l := range p.inputs {
		if l.Node == n.ID() {
			return fairness.NodeLocal
		}
		if l.Rack != "" && l.Rack == n.Rack() {
			level = fairness.RackLocal
		}
	}
	return level
}

// probeScratch is a probe's cycle and attempt, which pass through the plugins'
// interfaces and so would be allocated anew for every node: pooled instead.
type probeScratch struct {
	c Cycle
	a Attempt
}

var probeScratches = sync.Pool{New: func() any { return new(probeScratch) }}

// attempt starts the probe's attempt on node n, in pooled scratch.
func (p *TaskProbe) attempt(n *cluster.NodeInfo) *probeScratch {
	s := probeScratches.Get().(*probeScratch)
	s.c = Cycle{fw: p.fw, mode: Probe, now: p.base.Start, gen: p.gen, node: n}
	s.a = p.base
	s.a.Node, s.a.Level = n, p.Level(n)
	return s
}

// release gives scratch s back to the pool as it is: the next attempt overwrites it
// whole, and the pool drops what it holds at the next garbage collections, so the
// references it keeps meanwhile (a node view, a task view) keep nothing alive for
// long. Clearing it here would cost as much as filling it.
func (s *probeScratch) release() {
	probeScratches.Put(s)
}

// Filter is Framework.Filter for the probe's task on node n — a view of a node when
// OnViews — as it answered when the probe was prepared: the PreFilter verdict, then the
// Filter plugins, with the match verdict.
func (p *TaskProbe) Filter(n *cluster.NodeInfo) (Status, match.Result) {
	return p.FilterKept(n, nil)
}

// Score is Framework.Score for the probe's task on node n (a view when OnViews): the
// total over the Score plugins, after Filter; 0 and the refusal when the task does not
// pass there.
func (p *TaskProbe) Score(n *cluster.NodeInfo) (float64, Status) {
	return p.ScoreKept(n, nil)
}

// Verdict keeps a TaskProbe's Filter of one node for the Score of the same node that
// follows it — a host scheduler such as kube-scheduler scores, in each cycle, the nodes
// its Filter passed — so that Score does not filter again. A Filter that passes runs
// the Score plugins there and then, on the attempt it has just matched, while the
// node's data are in the processor's cache, and keeps the total; the Score that follows
// reads it. The zero Verdict keeps nothing. A Verdict is safe for concurrent use:
// probes of different tasks may share one (the probes of one node); it keeps the
// latest Filter's, and a Score that does not find its own probe's there filters again.
type Verdict struct {
	mu    sync.Mutex
	probe *TaskProbe
	node  *cluster.NodeInfo
	score float64
}

// FilterKept is Filter, keeping the verdict in v (when not nil) for ScoreKept: when the
// task passes, the Score plugins run too, and v keeps their total.
func (p *TaskProbe) FilterKept(n *cluster.NodeInfo, v *Verdict) (Status, match.Result) {
	s := p.attempt(n)
	defer s.release()
	st := p.pre
	if st.OK() {
		st = s.c.Filter(&s.a)
	}
	if v != nil {
		if st.OK() {
			x := s.c.score(&s.a)
			v.mu.Lock()
			v.probe, v.node, v.score = p, n, x
			v.mu.Unlock()
		} else {
			v.mu.Lock()
			if v.probe == p && v.node == n {
				v.probe, v.node = nil, nil
			}
			v.mu.Unlock()
		}
	}
	return s.c.explained(st, &s.a), s.a.Result
}

// ScoreKept is Score, read from v (not nil) when it keeps the probe's own Filter of n,
// as FilterKept left it: the Score plugins' total on that Filter's attempt, with the
// node's mode that Filter read.
func (p *TaskProbe) ScoreKept(n *cluster.NodeInfo, v *Verdict) (float64, Status) {
	if v != nil {
		v.mu.Lock()
		if v.probe == p && v.node == n {
			x := v.score
			v.mu.Unlock()
			return x, Status{}
		}
		v.mu.Unlock()
	}
	s := p.attempt(n)
	defer s.release()
	st := p.pre
	if st.OK() {
		st = s.c.Filter(&s.a)
	}
	if !st.OK() {
		return 0, s.c.explained(st, &s.a)
	}
	return s.c.score(&s.a), Status{}
}
