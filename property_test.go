package finegrain_test

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
	"github.com/finegrain/finegrain/stage"
)

// TestNoTaskLost drives the scheduler with random event sequences — submissions,
// heartbeats, push placements, progress, finishes with observations, failures,
// cancellations, external load, node removals and additions — and checks after every
// event that:
//   - each submitted task is in exactly the state the events imply, and the counts
//     add up;
//   - each node's free resources, at every instant from now on, are exactly its
//     capacity minus what its placed tasks and backups hold (as their assignments
//     say) and the external load it holds; so no reservation outlives its task, and
//     memory (not compressible) is never reserved beyond capacity;
//
// and, at the end (liveness), that once the external load is cleared and running
// tasks finish, every pending task whose request fits some node is placed within a
// few rounds of heartbeats.
func TestNoTaskLost(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 200
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with params.SetSeed(seed)).
	props := gopter.NewProperties(params)
	props.Property("every task in exactly one state; free = capacity − holds; pending tasks that fit are placed", prop.ForAll(func(seed int64) string {
		return runEvents(seed, 120, true)
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
}

// noTaskLostRegressions are per-case seeds of runEvents (not gopter seeds) that once
// exposed a fault, kept so that every run replays them: each was the first case the
// property found against an injected fault (see the comments), so a change that
// brings one back fails here even when the fresh seeds miss it.
var noTaskLostRegressions = []struct {
	seed    int64
	declare bool
}{
	// A job whose first pending task fits no node kept its other tasks off every node
	// (fixed: the pass looks past tasks known to fit no node).
	{-113615300684860387, false},
	// The job's other tasks were only looked for at its best locality, where none was
	// (fixed: at any locality, as delay scheduling allows).
	{1903044795921622358, false},
	// A job always had a node-local task that fitted no node, so its delay-scheduling
	// wait never grew and its off-switch tasks never ran (fixed: such a task is an
	// offer passed up).
	{-3959834283405026895, false},
	// A declared task that fits no node kept the declared tasks of its class — same
	// key and first stage, a smaller second — pending (fixed: a declared task is
	// judged by its own profile, not by its class).
	{-8022334366134559667, true},
	// Injected: Finish left the task's reservation on its node.
	{-3572834242299416266, false},
	// Injected: a failed task was made pending without returning to the pending index.
	{3020413704547257368, false},
}

func TestNoTaskLostRegressions(t *testing.T) {
	for _, c := range noTaskLostRegressions {
		t.Run(fmt.Sprint(c.seed), func(t *testing.T) {
			if msg := runEvents(c.seed, 120, c.declare); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

// placement is what the model expects a node to hold for a placed task or backup.
type placement struct {
	node  string
	start time.Duration
	hold  stage.Profile
}

// holdOf is what an assignment holds on its node: its profile, and for a predicted
// profile that ends, the last stage's memory held until the task finishes (the
// scheduler's default hold-until-finished).
func holdOf(a finegrain.Assignment) stage.Profile {
	p := a.Profile
	if !a.Predicted || p.Duration() == stage.Forever {
		return p
	}
	tail := p.Stage(p.Len() - 1).Demand.Only(schema.NonCompressible())
	if tail.IsZero() {
		return p
	}
	return stage.MustProfile(schema, append(p.Stages(), stage.Stage{Duration: stage.Forever, Demand: tail})...)
}

// external is the load a node holds that the scheduler did not place.
type external struct {
	held resource.Tuple
	from time.Duration
}

// runEvents runs one case of TestNoTaskLost from its seed; with declare, some tasks
// declare two-stage profiles (drawn from a second stream, so that the cases of the
// regression set, run without, stay what they were), a few of them too big for every
// node from their second stage on.
func runEvents(seed int64, steps int, declare bool) string {
	r := rand.New(rand.NewSource(seed))
	rd := rand.New(rand.NewSource(seed ^ 0x5eed))
	opts := []finegrain.Option{}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	}
	if r.Intn(3) == 0 {
		opts = append(opts, finegrain.WithPrediction(false))
	}
	if r.Intn(3) == 0 {
		opts = append(opts, finegrain.WithFutureStart(true))
	}
	if r.Intn(4) == 0 {
		placer, err := speculate.NewFairPlacer()
		if err != nil {
			return err.Error()
		}
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullPreReleaseList(placer)))
	}
	if r.Intn(3) == 0 {
		late, err := speculate.NewLATE(speculate.WithMinRuntime(0))
		if err != nil {
			return err.Error()
		}
		opts = append(opts, finegrain.WithSpeculation(late))
	}
	// Tasks no node can hold are kept, so that the passes must look past them.
	s, err := finegrain.New(schema, append(opts, finegrain.WithUnresolvableAccepted(true))...)
	if err != nil {
		return err.Error()
	}
	var nodes []string
	capacity := map[string]resource.Tuple{}
	addNode := func(i int) {
		id := fmt.Sprintf("n%d", i)
		c := schema.MustTuple(int64(2000+r.Intn(4)*1000), int64(2+r.Intn(6))*gib)
		if s.AddNode(finegrain.Node{ID: id, Rack: fmt.Sprintf("r%d", i%2), Capacity: c}) == nil {
			nodes = append(nodes, id)
			capacity[id] = c
		}
	}
	for i := 0; i < 3; i++ {
		addNode(i)
	}
	for j := 0; j < 3; j++ {
		if err := s.SubmitJob(finegrain.Job{ID: fmt.Sprintf("j%d", j), Submitted: time.Duration(j)}); err != nil {
			return err.Error()
		}
	}
	want := map[string]finegrain.TaskState{}
	backups := map[string]string{}    // running backup → its task
	backupNode := map[string]string{} // running backup → its node
	placed := map[string]placement{}  // placed task or running backup → what it holds
	loads := map[string]external{}    // node → its external load
	dropBackupOf := func(id string) {
		for b, of := range backups {
			if of == id {
				delete(backups, b)
				delete(backupNode, b)
				delete(placed, b)
			}
		}
	}
	var ids []string
	requests := map[string]resource.Tuple{} // task → its request, or its declared profile's peak
	starts := map[string]time.Duration{}    // placed task or backup → its reservation's start
	now := time.Duration(0)
	byState := func(st finegrain.TaskState) []string {
		var out []string
		for _, id := range ids {
			if want[id] == st {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(list []string) string { return list[r.Intn(len(list))] }
	clock := time.Duration(0) // the time of the scheduler's latest event
	for step := 0; step < steps; step++ {
		now += time.Duration(r.Intn(3000)) * time.Millisecond
		switch op := r.Intn(10); {
		case op < 3:
			id := fmt.Sprintf("t%d", len(ids))
			task := finegrain.Task{ID: id, Job: fmt.Sprintf("j%d", r.Intn(3)), Submitted: now,
				Request: schema.MustTuple(int64(500+r.Intn(3)*500), int64(1+r.Intn(3))*gib/2)}
			if r.Intn(2) == 0 {
				task.Key = predict.Key{Logic: fmt.Sprintf("app%d", r.Intn(2)), InputSize: 1}
			}
			if r.Intn(3) == 0 {
				task.Duration = time.Duration(1+r.Intn(20)) * time.Second
			}
			if r.Intn(2) == 0 && len(nodes) > 0 {
				task.Inputs = []string{pick(nodes)}
			}
			if r.Intn(10) == 0 {
				task.Request = schema.MustTuple(1000, 16*gib) // fits no node
			}
			if declare && rd.Intn(4) == 0 {
				second := schema.MustTuple(int64(rd.Intn(1500)), int64(1+rd.Intn(3))*gib/2)
				if rd.Intn(4) == 0 {
					second[1] = 16 * gib // fits no node
				}
				task.Profile = stage.MustProfile(schema,
					stage.Stage{Duration: time.Duration(1+rd.Intn(5)) * time.Second, Demand: schema.MustTuple(500, gib/2)},
					stage.Stage{Duration: time.Duration(1+rd.Intn(5)) * time.Second, Demand: second})
			}
			if err := s.Submit(task); err != nil {
				return "submit: " + err.Error()
			}
			ids = append(ids, id)
			want[id] = finegrain.Pending
			requests[id] = task.Request
			if task.Profile.Len() > 0 {
				requests[id] = task.Profile.Peak() // a declared profile is placed as declared
			}
		case op < 5 && len(nodes) > 0:
			d, err := s.Heartbeat(pick(nodes), now)
			if err != nil {
				return "heartbeat: " + err.Error()
			}
			clock = now
			for _, a := range d.Assignments {
				if a.BackupOf != "" {
					if want[a.BackupOf] != finegrain.Running || a.Task != finegrain.BackupID(a.BackupOf) {
						return "backup of a task that is not running: " + a.Task
					}
					if _, dup := backups[a.Task]; dup {
						return "second backup of " + a.BackupOf
					}
					backups[a.Task], backupNode[a.Task] = a.BackupOf, a.Node
					starts[a.Task] = a.Start
					placed[a.Task] = placement{a.Node, a.Start, holdOf(a)}
					continue
				}
				if want[a.Task] != finegrain.Pending {
					return "heartbeat started a task that was not pending: " + a.Task
				}
				want[a.Task] = finegrain.Running
				starts[a.Task] = a.Start
				placed[a.Task] = placement{a.Node, a.Start, holdOf(a)}
			}
		case op < 6 && r.Intn(3) == 0:
			if run := byState(finegrain.Running); len(run) > 0 {
				// Progress of a task placed with a future start may come before it;
				// only reports the scheduler rejects as out of order are allowed to fail.
				id := pick(run)
				err := s.Progress(id, r.Float64(), now)
				booked := errors.Is(err, finegrain.ErrState) && starts[id] > now // its start is to come
				if err != nil && !booked && !errors.Is(err, predict.ErrBadProgress) && !errors.Is(err, predict.ErrBadTime) {
					return "progress: " + err.Error()
				}
				if err == nil {
					clock = now
				}
			}
		case op < 6:
			if p := byState(finegrain.Pending); len(p) > 0 {
				id := pick(p)
				clock = now // a placement's time counts, placed or not
				if a, err := s.Place(id, now); err == nil {
					want[id] = finegrain.Running
					starts[id] = a.Start
					placed[id] = placement{a.Node, a.Start, holdOf(a)}
					if a.Task != id {
						return "placed the wrong task"
					}
				}
			}
		case op < 8:
			if run := byState(finegrain.Running); len(run) > 0 {
				id := pick(run)
				for b, of := range backups {
					if of == id && r.Intn(2) == 0 {
						id = b // the backup finishes first
					}
				}
				var obs *predict.Observation
				if r.Intn(2) == 0 {
					obs = &predict.Observation{Profile: stage.MustProfile(schema,
						stage.Stage{Duration: time.Duration(1+r.Intn(10)) * time.Second, Demand: schema.MustTuple(int64(r.Intn(2000)), int64(r.Intn(3))*gib/2)})}
				}
				// The task may have been placed with a future start: finish no earlier,
				// and time moves on to then (it never goes back).
				now = max(now, starts[id])
				err := s.Finished(id, now, obs)
				if err != nil {
					return "finish: " + err.Error()
				}
				clock = now
				if of, ok := backups[id]; ok {
					id = of
				}
				dropBackupOf(id)
				delete(placed, id)
				want[id] = finegrain.Finished
			}
		case op < 9:
			if run := byState(finegrain.Running); len(run) > 0 && r.Intn(2) == 0 {
				id := pick(run)
				for b, of := range backups {
					if of == id && r.Intn(2) == 0 {
						if err := s.Failed(b, now); err != nil {
							return "backup fail: " + err.Error()
						}
						clock = now
						delete(backups, b)
						delete(backupNode, b)
						delete(placed, b)
						id = ""
					}
				}
				if id == "" {
					break
				}
				now = max(now, starts[id]) // a booked task fails once it has started
				if err := s.Failed(id, now); err != nil {
					return "fail: " + err.Error()
				}
				clock = now
				dropBackupOf(id)
				delete(placed, id)
				want[id] = finegrain.Pending
			} else if len(ids) > 0 {
				id := pick(ids)
				err := s.Cancel(id, now)
				switch want[id] {
				case finegrain.Pending, finegrain.Running:
					if err != nil {
						return "cancel: " + err.Error()
					}
					clock = now
					dropBackupOf(id)
					delete(placed, id)
					want[id] = finegrain.Cancelled
				default:
					if err == nil {
						return "cancel of a finished task succeeded"
					}
				}
			}
		default:
			if len(nodes) > 0 && r.Intn(3) == 1 {
				load := schema.MustTuple(int64(r.Intn(3000)), int64(r.Intn(4))*gib)
				id := pick(nodes)
				held, err := s.SetExternalLoad(id, now, load)
				if err != nil || !load.Covers(held) {
					return fmt.Sprintf("external load %v held %v: %v", load, held, err)
				}
				clock = now
				loads[id] = external{held, now}
			}
			if len(nodes) > 1 && r.Intn(3) == 0 {
				i := r.Intn(len(nodes))
				requeued, err := s.RemoveNode(nodes[i], now)
				if err != nil {
					return "remove: " + err.Error()
				}
				clock = now
				for _, id := range requeued {
					if want[id] != finegrain.Running {
						return "requeued a task that was not running"
					}
					dropBackupOf(id)
					delete(placed, id)
					want[id] = finegrain.Pending
				}
				for b, n := range backupNode {
					if n == nodes[i] {
						delete(backups, b)
						delete(backupNode, b)
						delete(placed, b)
					}
				}
				delete(loads, nodes[i])
				nodes = append(nodes[:i], nodes[i+1:]...)
				addNode(100 + step)
			}
		}
		if msg := checkState(s, ids, want, starts, clock); msg != "" {
			return fmt.Sprintf("step %d: %s", step, msg)
		}
		if msg := checkFree(s, now, nodes, capacity, placed, loads); msg != "" {
			return fmt.Sprintf("step %d: %s", step, msg)
		}
		for _, id := range ids {
			st, ok := s.TaskState(finegrain.BackupID(id))
			if _, running := backups[finegrain.BackupID(id)]; running != (ok && st == finegrain.Running) {
				return fmt.Sprintf("step %d: backup of %s is %v (known %v), want running %v", step, id, st, ok, running)
			}
		}
	}

	// Liveness: with the external load gone and every running task finished, rounds of
	// heartbeats (each followed by the finish of what it started) place every pending
	// task whose request (or declared profile's peak) fits some node.
	for _, id := range nodes {
		if _, err := s.SetExternalLoad(id, now, resource.Tuple{}); err != nil {
			return "clear external load: " + err.Error()
		}
	}
	finishAll := func() string {
		for _, id := range byState(finegrain.Running) {
			now = max(now, starts[id])
			if err := s.Finished(id, now, nil); err != nil {
				return fmt.Sprintf("drain: finish %s: %v", id, err)
			}
			want[id] = finegrain.Finished
		}
		return ""
	}
	if msg := finishAll(); msg != "" {
		return msg
	}
	for round := 0; round < 10 && len(byState(finegrain.Pending)) > 0; round++ {
		now += 30 * time.Second // past any locality wait
		for _, id := range nodes {
			d, err := s.Heartbeat(id, now)
			if err != nil {
				return "drain: heartbeat: " + err.Error()
			}
			for _, a := range d.Assignments {
				if a.BackupOf == "" {
					want[a.Task], starts[a.Task] = finegrain.Running, a.Start
				}
			}
		}
		if msg := finishAll(); msg != "" {
			return msg
		}
	}
	for _, id := range byState(finegrain.Pending) {
		req := requests[id]
		for _, n := range nodes {
			if capacity[n].Covers(req) {
				return fmt.Sprintf("liveness: task %s (request %v) still pending after 10 rounds; node %s (capacity %v) fits it", id, req, n, capacity[n])
			}
		}
	}
	return checkState(s, ids, want, starts, now)
}

// checkFree compares every node's free resources, from now on, with its capacity
// minus what the model says it holds: its placements and its external load.
func checkFree(s *finegrain.Scheduler, now time.Duration, nodes []string, capacity map[string]resource.Tuple, placed map[string]placement, loads map[string]external) string {
	for _, id := range nodes {
		probes := []time.Duration{now, now + time.Second, now + 10*time.Second, now + time.Minute, now + time.Hour}
		for _, p := range placed {
			if p.node != id {
				continue
			}
			for i := 0; i < p.hold.Len(); i++ {
				if at := p.start + p.hold.Offset(i); at >= now && at < stage.Forever {
					probes = append(probes, at, at-1)
				}
			}
		}
		for _, at := range probes {
			if at < now {
				continue
			}
			want := capacity[id]
			for _, p := range placed {
				if p.node == id && at >= p.start {
					want = want.Sub(p.hold.At(at - p.start))
				}
			}
			if l, ok := loads[id]; ok && at >= l.from {
				want = want.Sub(l.held)
			}
			got, err := s.NodeFree(id, at)
			if err != nil {
				return err.Error()
			}
			if got != want {
				return fmt.Sprintf("node %s free at %v is %v; capacity minus holds is %v", id, at, got, want)
			}
			if got[1] < 0 {
				return fmt.Sprintf("node %s: memory over-reserved at %v: %v", id, at, got)
			}
		}
	}
	return ""
}

// checkState compares every task's state with the model's; a task the model has
// placed (Running) is Booked while its start is after clock, the time of the
// scheduler's latest event.
func checkState(s *finegrain.Scheduler, ids []string, want map[string]finegrain.TaskState, starts map[string]time.Duration, clock time.Duration) string {
	var n [finegrain.Booked + 1]int
	for _, id := range ids {
		w := want[id]
		if w == finegrain.Running && starts[id] > clock {
			w = finegrain.Booked
		}
		got, ok := s.TaskState(id)
		if !ok || got != w {
			return fmt.Sprintf("task %s is %v, want %v", id, got, w)
		}
		n[got]++
	}
	p, r, f, c := s.Counts()
	b := s.Count(finegrain.Booked)
	if p != n[finegrain.Pending] || r != n[finegrain.Running] || f != n[finegrain.Finished] || c != n[finegrain.Cancelled] || b != n[finegrain.Booked] || p+r+f+c+b != len(ids) {
		return fmt.Sprintf("counts %d/%d/%d/%d/%d disagree with %v", p, r, f, c, b, n)
	}
	return ""
}
