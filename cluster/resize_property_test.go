package cluster_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// holding is one reservation the resize model says a node holds: profile p from start.
type holding struct {
	node  string
	start time.Duration
	p     stage.Profile
}

// resizeModel is what the state should hold, kept apart from it: each placed task's
// reservation, and each held change's new one.
type resizeModel struct {
	placed  map[*cluster.TaskInfo]holding
	changes map[*cluster.TaskInfo]holding
	kinds   map[*cluster.TaskInfo]cluster.ChangeKind
}

// forget drops everything task t holds in the model.
func (m *resizeModel) forget(t *cluster.TaskInfo) {
	delete(m.placed, t)
	delete(m.changes, t)
	delete(m.kinds, t)
}

// check compares the state with the model: every node's free amounts at the probes
// are its capacity less what the model holds there; every job's fairness usage and
// running count are the model's; every task is where the model says, on one node at
// most, and no task is lost.
func (m *resizeModel) check(w *world) string {
	s := w.s
	for n := range s.Nodes() {
		for _, at := range probes {
			want := n.Capacity()
			add := func(h holding) {
				if h.node == n.ID() && at >= h.start && at-h.start < h.p.Duration() {
					want = want.Sub(h.p.At(at - h.start))
				}
			}
			for t, h := range m.placed {
				if m.kinds[t] != cluster.Resizing { // set aside while the resize is held
					add(h)
				}
			}
			for _, h := range m.changes {
				add(h)
			}
			if got := n.Timeline().FreeAt(at); got != want {
				return fmt.Sprintf("node %s free at %v: %v, the model says %v", n.ID(), at, got, want)
			}
		}
	}
	for _, j := range w.jobs {
		var usage resource.Tuple
		running := 0
		for t, h := range m.placed {
			if t.Job() == j.ID() {
				usage, running = usage.Add(h.p.Peak()), running+1
			}
		}
		for t, h := range m.changes {
			if t.Job() != j.ID() {
				continue
			}
			if m.kinds[t] == cluster.Resizing { // the new reservation counts instead of the old
				usage = usage.Sub(m.placed[t].p.Peak())
				running--
			}
			usage, running = usage.Add(h.p.Peak()), running+1
		}
		e, err := s.JobEntry(j.ID())
		if err != nil {
			return err.Error()
		}
		if e.Usage != usage || e.Running != running {
			return fmt.Sprintf("job %s: fairness counts %d running holding %v, the model %d holding %v", j.ID(), e.Running, e.Usage, running, usage)
		}
	}
	states := 0
	for st := cluster.Pending; st <= cluster.Booked; st++ {
		states += s.Count(st)
	}
	if states != len(w.tasks) {
		return fmt.Sprintf("%d tasks counted in some state, %d submitted", states, len(w.tasks))
	}
	for _, t := range w.tasks {
		h, placed := m.placed[t]
		kind, to := t.Change()
		switch {
		case placed != (t.Node() != nil):
			return fmt.Sprintf("task %s %v: on %v, the model placed %v", t.ID(), t.State(), t.Node(), placed)
		case kind != m.kinds[t]:
			return fmt.Sprintf("task %s holds change %v, the model %v", t.ID(), kind, m.kinds[t])
		case kind != cluster.NoChange && to.ID() != m.changes[t].node:
			return fmt.Sprintf("task %s's change is on %s, the model's on %s", t.ID(), to.ID(), m.changes[t].node)
		case placed && t.Node().ID() != h.node:
			return fmt.Sprintf("task %s on %s, the model on %s", t.ID(), t.Node().ID(), h.node)
		}
		on := 0
		for n := range s.Nodes() {
			if slices.Contains(n.Tasks(), t) {
				on++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[placed]; on != want {
			return fmt.Sprintf("task %s is held by %d nodes, want %d", t.ID(), on, want)
		}
	}
	return ""
}

// changeFingerprint is fingerprint with every task's held change.
func changeFingerprint(s *cluster.State, tasks []*cluster.TaskInfo) string {
	var b strings.Builder
	b.WriteString(fingerprint(s, tasks))
	for _, t := range tasks {
		k, to := t.Change()
		id := "-"
		if to != nil {
			id = to.ID()
		}
		fmt.Fprintf(&b, "change %s %v %s plan@%v\n", t.ID(), k, id, t.PlanStart())
	}
	return b.String()
}

// newHold is a random profile to resize t to or move it with: its request scaled by
// 0–2 (a shrink, a grow or the same), held for a while or until it ends; now and then
// one no node can hold.
func (w *world) newHold(t *cluster.TaskInfo) stage.Profile {
	r := w.r
	var d resource.Tuple
	for k, v := range t.Request() {
		d[k] = v * int64(r.Intn(3))
	}
	if r.Intn(8) == 0 {
		d = tup(1, 9, 0, 0, 0, 0)
	}
	dur := stage.Forever
	if r.Intn(2) == 0 {
		dur = time.Duration(1+r.Intn(4)) * time.Second
	}
	p, _ := stage.Constant(schema, d, dur)
	return p
}

// TestPropertyResizeAndMove: random sequences of resizes and moves, committed and
// reverted, among the rest of the life cycle (finishes, evictions, preemptions,
// cancellations, nodes leaving, the clock advancing): after every step each node's
// free amounts are its capacity less what a model of the reservations holds, fairness
// counts what the model holds, no task is lost or on two nodes, and a refused step
// changes nothing at all.
func TestPropertyResizeAndMove(t *testing.T) {
	changes, refused := 0, 0
	props := gopter.NewProperties(params(t))
	props.Property("resizes and moves keep the state exact; a refused one changes nothing", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		w, err := newWorld(r)
		if err != nil {
			return fmt.Sprintf("seed %d: build: %v", seed, err)
		}
		s := w.s
		m := &resizeModel{placed: map[*cluster.TaskInfo]holding{}, changes: map[*cluster.TaskInfo]holding{}, kinds: map[*cluster.TaskInfo]cluster.ChangeKind{}}
		running := func() *cluster.TaskInfo {
			var rs []*cluster.TaskInfo
			for _, t := range w.tasks {
				if t.State() == cluster.Running {
					rs = append(rs, t)
				}
			}
			if len(rs) == 0 {
				return nil
			}
			return rs[r.Intn(len(rs))]
		}
		live := func() *cluster.NodeInfo {
			var ns []*cluster.NodeInfo
			for n := range s.Nodes() {
				ns = append(ns, n)
			}
			slices.SortFunc(ns, func(a, b *cluster.NodeInfo) int { return strings.Compare(a.ID(), b.ID()) })
			return ns[r.Intn(len(ns))]
		}
		for step := 0; step < 60; step++ {
			before := changeFingerprint(s, w.tasks)
			var ev string
			var err error
			switch k := r.Intn(16); {
			case k < 4: // place a pending task and run it
				var pend []*cluster.TaskInfo
				for _, t := range w.tasks {
					if t.State() == cluster.Pending {
						pend = append(pend, t)
					}
				}
				if len(pend) == 0 {
					continue
				}
				t, n := pend[r.Intn(len(pend))], live()
				res := w.reservation(t)
				res.Start = s.Clock()
				ev = "reserve " + t.ID()
				if err = s.Reserve(t, n, res); err == nil {
					m.placed[t] = holding{n.ID(), res.Start, res.Hold}
					if e := s.Commit(t); e != nil {
						return fmt.Sprintf("seed %d step %d: commit %s: %v", seed, step, t.ID(), e)
					}
				}
			case k < 7:
				t := running()
				if t == nil {
					continue
				}
				res := cluster.Reservation{Start: s.Clock(), Hold: w.newHold(t), Predicted: r.Intn(2) == 0}
				switch r.Intn(6) {
				case 0:
					res.Allowance = tup(int64(r.Intn(3)), 0, int64(r.Intn(3)), 0, 0, 0)
				case 1:
					res.Allowance = tup(0, 1, 0, 0, 0, 0) // memory is not compressible: refused
				case 2:
					res.Start = s.Clock() + time.Second // not now: refused
				}
				if r.Intn(2) == 0 {
					ev = "resize " + t.ID()
					if err = s.Resize(t, res); err == nil {
						m.changes[t], m.kinds[t] = holding{t.Node().ID(), res.Start, res.Hold}, cluster.Resizing
					}
				} else {
					n := live()
					ev = "move " + t.ID() + " to " + n.ID()
					if err = s.Migrate(t, n, res); err == nil {
						m.changes[t], m.kinds[t] = holding{n.ID(), res.Start, res.Hold}, cluster.Migrating
					}
				}
				if err == nil {
					changes++
				}
			case k < 9:
				t := running()
				if t == nil {
					continue
				}
				ev = "commit the change of " + t.ID()
				if err = s.CommitChange(t); err == nil {
					m.placed[t] = m.changes[t]
					delete(m.changes, t)
					delete(m.kinds, t)
				}
			case k < 10:
				t := running()
				if t == nil {
					continue
				}
				ev = "revert the change of " + t.ID()
				if err = s.RevertChange(t); err == nil {
					delete(m.changes, t)
					delete(m.kinds, t)
				}
			case k < 13:
				t := running()
				if t == nil {
					continue
				}
				switch r.Intn(6) {
				case 0:
					ev, err = "finish "+t.ID(), s.Finish(t, s.Clock())
				case 1:
					ev, err = "evict "+t.ID(), s.Evict(t)
				case 2:
					ev, err = "preempt "+t.ID(), s.Preempt(t)
				case 3:
					ev, err = "cancel "+t.ID(), s.Cancel(t, s.Clock())
				case 4:
					ev, err = "withdraw "+t.ID(), s.Withdraw(t)
				case 5:
					ev, err = "fail "+t.ID(), s.Fail(t)
				}
				if err == nil {
					m.forget(t)
				}
			case k < 14: // what a changing task may not do
				t := running()
				if t == nil {
					continue
				}
				ev = "suspend or back up " + t.ID()
				if err = s.Suspend(t); err == nil {
					if e := s.Resume(t); e != nil {
						return fmt.Sprintf("seed %d step %d: resume %s: %v", seed, step, t.ID(), e)
					}
				}
				if k, _ := t.Change(); k != cluster.NoChange && err == nil {
					return fmt.Sprintf("seed %d step %d: %s suspended while it holds a change", seed, step, t.ID())
				}
				if k, _ := t.Change(); k != cluster.NoChange {
					if _, e := s.ReserveBackup(t, live(), cluster.Reservation{Start: s.Clock(), Hold: t.RequestProfile(schema)}); e == nil {
						return fmt.Sprintf("seed %d step %d: %s backed up while it holds a change", seed, step, t.ID())
					}
				}
			case k < 15:
				if s.NumNodes() < 2 {
					continue
				}
				n := live()
				ev = "remove " + n.ID()
				_, err = s.RemoveNode(n.ID())
				if err == nil {
					for t, h := range m.placed {
						if h.node == n.ID() {
							m.forget(t)
						}
					}
					for t, h := range m.changes {
						if h.node == n.ID() {
							delete(m.changes, t)
							delete(m.kinds, t)
						}
					}
					id := fmt.Sprintf("n%d", w.nextNode)
					w.nextNode++
					if e := s.AddNode(cluster.NodeSpec{ID: id, Capacity: tup(8, 8, 8, 8, 8, 1)}); e != nil {
						return fmt.Sprintf("seed %d step %d: add %s: %v", seed, step, id, e)
					}
				}
			default:
				w.clock += time.Duration(r.Intn(3)) * 500 * time.Millisecond
				ev = fmt.Sprint("advance to ", w.clock)
				s.Advance(w.clock)
			}
			if err != nil {
				refused++
				if after := changeFingerprint(s, w.tasks); after != before {
					return fmt.Sprintf("seed %d step %d: refused %s (%v) changed the state: %s", seed, step, ev, err, diff(before, after))
				}
			}
			if msg := m.check(w); msg != "" {
				return fmt.Sprintf("seed %d step %d after %s: %s", seed, step, ev, msg)
			}
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
	if changes == 0 || refused == 0 {
		t.Fatalf("the walks made %d changes and had %d steps refused: both must happen", changes, refused)
	}
}

// TestPropertyChangeNowIsResizeThenCommit: two states built alike go through the same
// random steps — placements, finishes, the clock advancing, and changes: on one made
// with ChangeNow, on the other with Resize or Migrate followed by CommitChange. After
// every step the two agree on everything an observer sees (changeFingerprint), on each
// task's plan and its start, on each node's version and on the queues' version; a
// change one refuses the other refuses with the same error. Versions are compared by
// whether they moved: how many updates a change takes is bookkeeping, not behaviour.
func TestPropertyChangeNowIsResizeThenCommit(t *testing.T) {
	changes := 0
	props := gopter.NewProperties(params(t))
	props.Property("ChangeNow is Resize or Migrate, then CommitChange", prop.ForAll(func(seed int64) string {
		var ws [2]*world
		for i := range ws {
			w, err := newWorld(rand.New(rand.NewSource(seed)))
			if err != nil {
				return fmt.Sprintf("build: %v", err)
			}
			ws[i] = w
		}
		r := rand.New(rand.NewSource(seed + 1))
		// last holds each world's versions at its last look: a look says which moved,
		// not by how much (how many updates a change takes is bookkeeping).
		var last [2]map[string]uint64
		seen := func(i int) string {
			w := ws[i]
			if last[i] == nil {
				last[i] = map[string]uint64{}
			}
			moved := func(key string, v uint64) bool {
				m := last[i][key] != v
				last[i][key] = v
				return m
			}
			var b strings.Builder
			b.WriteString(changeFingerprint(w.s, w.tasks))
			for n := range w.s.Nodes() {
				fmt.Fprintf(&b, "node %s moved %t timeline version %d\n", n.ID(), moved("node "+n.ID(), n.Version()), n.Timeline().Version())
			}
			for _, t := range w.tasks {
				fmt.Fprintf(&b, "task %s plan %v from %v planned %v\n", t.ID(), t.Plan(), t.PlanStart(), t.Planned())
			}
			fmt.Fprintf(&b, "queues moved %t\n", moved("queues", w.s.QueuesVersion()))
			return b.String()
		}
		for step := 0; step < 60; step++ {
			// Both worlds pick by index in the same order: the same draws pick the
			// same task and node in each.
			k, pr := r.Intn(10), r.Int63()
			var errs [2]error
			for i, w := range ws {
				rr := rand.New(rand.NewSource(pr))
				w.r = rr
				s := w.s
				switch {
				case k < 3:
					t := pickState(w, cluster.Pending, rr)
					if t == nil {
						continue
					}
					res := w.reservation(t)
					res.Start = s.Clock()
					if errs[i] = s.Reserve(t, w.nodes[rr.Intn(len(w.nodes))], res); errs[i] == nil {
						errs[i] = s.Commit(t)
					}
				case k < 8:
					t := pickState(w, cluster.Running, rr)
					if t == nil {
						continue
					}
					res := cluster.Reservation{Start: s.Clock(), Hold: w.newHold(t), Predicted: rr.Intn(2) == 0}
					if rr.Intn(4) == 0 {
						res.Allowance = tup(int64(rr.Intn(3)), 0, 0, 0, 0, 0)
					}
					var to *cluster.NodeInfo
					if rr.Intn(2) == 0 {
						to = w.nodes[rr.Intn(len(w.nodes))]
					}
					switch {
					case i == 0:
						errs[i] = s.ChangeNow(t, to, res)
					case to == nil:
						if errs[i] = s.Resize(t, res); errs[i] == nil {
							errs[i] = s.CommitChange(t)
						}
					default:
						if errs[i] = s.Migrate(t, to, res); errs[i] == nil {
							errs[i] = s.CommitChange(t)
						}
					}
					if i == 0 && errs[i] == nil {
						changes++
					}
				case k < 9:
					if t := pickState(w, cluster.Running, rr); t != nil {
						errs[i] = s.Finish(t, s.Clock())
					}
				default:
					w.clock += time.Duration(rr.Intn(3)) * 500 * time.Millisecond
					s.Advance(w.clock)
				}
			}
			if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
				return fmt.Sprintf("step %d: ChangeNow says %v, the two calls %v", step, errs[0], errs[1])
			}
			if a, b := seen(0), seen(1); a != b {
				return fmt.Sprintf("step %d: the states differ: %s", step, diff(b, a))
			}
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
	if changes == 0 {
		t.Fatal("no change was made: the property checked nothing")
	}
}

// pickState is a random task of w in state st, drawn from r; nil when there is none.
func pickState(w *world, st cluster.TaskState, r *rand.Rand) *cluster.TaskInfo {
	var ts []*cluster.TaskInfo
	for _, t := range w.tasks {
		if t.State() == st {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return ts[r.Intn(len(ts))]
}
