package cluster

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// A white-box random walk over the whole life cycle — the events the
// model test drives and those it does not (Withdraw, MoveStarts, Suspend/Resume,
// Started, Booked starts, cancelling reserved and booked tasks, backups won/failed,
// nodes leaving and coming back with another rack, resizes and moves committed or
// reverted) — checking after every event that placement records are never shared nor
// referenced once given back, that the reservation a placed task (or its held change)
// keeps is the one its timeline holds, that the pending
// index holds exactly the pending tasks with the racks their inputs are in now, and
// that shared demands still read as submitted.
func TestPlacementAndIndexInvariants(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 30
	}
	// Fresh seeds every run; a failure names its seed, to replay with placementWalk.
	base := time.Now().UnixNano()
	for i := range int64(seeds) {
		if msg := placementWalk(base + i); msg != "" {
			t.Fatalf("seed %d: %s", base+i, msg)
		}
	}
}

func placementWalk(seed int64) string {
	r := rand.New(rand.NewSource(seed))
	schema := resource.Standard()
	tup := func(a ...int64) resource.Tuple { return schema.MustTuple(a...) }
	s, err := New(schema)
	if err != nil {
		return err.Error()
	}
	racks := []string{"", "r0", "r1"}
	nodeIDs := []string{"n0", "n1", "n2", "n3"}
	for _, id := range nodeIDs[:3] {
		if err := s.AddNode(NodeSpec{ID: id, Rack: racks[r.Intn(3)], Capacity: tup(8, 8, 8, 8, 8)}); err != nil {
			return err.Error()
		}
	}
	for _, j := range []string{"a", "b"} {
		if err := s.AddJob(JobSpec{ID: j}); err != nil {
			return err.Error()
		}
	}
	submitted := map[string]submittedDemand{}
	var all []*TaskInfo
	next := 0
	now := time.Duration(0)
	pick := func() *TaskInfo {
		if len(all) == 0 {
			return nil
		}
		return all[r.Intn(len(all))]
	}
	node := func() *NodeInfo {
		ids := make([]string, 0, len(s.nodes))
		for id := range s.nodes {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return nil
		}
		slices.Sort(ids)
		return s.nodes[ids[r.Intn(len(ids))]]
	}
	res := func(t *TaskInfo, start time.Duration) Reservation {
		return Reservation{Start: start, Hold: t.RequestProfile(schema)}
	}
	for step := 0; step < 400; step++ {
		var ev string
		switch k := r.Intn(23); {
		case k < 3:
			var specs []TaskSpec
			for i := 0; i < 1+r.Intn(3); i++ {
				id := fmt.Sprintf("t%d", next)
				next++
				sp := TaskSpec{ID: id, Job: []string{"a", "b"}[r.Intn(2)], Request: tup(1+int64(r.Intn(2)), 1), Duration: time.Duration(r.Intn(2)) * time.Second}
				for range r.Intn(3) {
					sp.Inputs = append(sp.Inputs, nodeIDs[r.Intn(len(nodeIDs))])
				}
				specs = append(specs, sp)
			}
			if r.Intn(5) == 0 { // a batch refused half-way changes nothing
				specs = append(specs, TaskSpec{ID: "bad", Job: "nope"})
			}
			ev = fmt.Sprintf("submit %d", len(specs))
			if s.Submit(specs...) == nil {
				for _, sp := range specs {
					t := s.tasks[sp.ID]
					all = append(all, t)
					submitted[sp.ID] = submittedDemand{sp.Request, sp.Duration}
				}
			}
		case k < 6:
			t, n := pick(), node()
			if t != nil && n != nil {
				start := now
				if r.Intn(4) == 0 {
					start += time.Second
				}
				ev = "reserve " + t.ID()
				_ = s.Reserve(t, n, res(t, start))
			}
		case k < 8:
			if t := pick(); t != nil {
				ev = "commit " + t.ID()
				_ = s.Commit(t)
			}
		case k < 9:
			if t := pick(); t != nil {
				ev = "unreserve " + t.ID()
				_ = s.Unreserve(t)
			}
		case k < 10:
			if t := pick(); t != nil {
				switch r.Intn(5) {
				case 0:
					ev = "evict " + t.ID()
					_ = s.Evict(t)
				case 1:
					ev = "preempt " + t.ID()
					_ = s.Preempt(t)
				case 2:
					ev = "withdraw " + t.ID()
					_ = s.Withdraw(t)
				case 3:
					ev = "fail " + t.ID()
					_ = s.Fail(t)
				case 4:
					ev = "started " + t.ID()
					_ = s.Started(t, now)
				}
			}
		case k < 11:
			if t := pick(); t != nil {
				ev = "finish " + t.ID()
				_ = s.Finish(t, now+time.Second)
			}
		case k < 12:
			if t := pick(); t != nil {
				ev = "cancel " + t.ID()
				_ = s.Cancel(t, now)
			}
		case k < 14:
			t, n := pick(), node()
			if t != nil && n != nil {
				ev = "backup " + t.ID()
				if b, err := s.ReserveBackup(t, n, res(t, now)); err == nil {
					all = append(all, b)
					switch r.Intn(6) {
					case 0:
						_ = s.Commit(b)
					case 1:
						_ = s.Unreserve(b)
					case 2:
						_ = s.Commit(b)
						_ = s.Finish(b, now+time.Second)
					case 3:
						_ = s.Commit(b)
						_ = s.Fail(b)
					case 4:
						_ = s.Cancel(b, now)
					}
				}
			}
		case k < 15:
			if t := pick(); t != nil && t.state == Reserved {
				ev = "move " + t.ID()
				_ = s.MoveStarts(Move{Task: t, Start: now + time.Duration(r.Intn(3))*time.Second})
			}
		case k < 16:
			if t := pick(); t != nil {
				ev = "suspend/resume " + t.ID()
				if s.Suspend(t) == nil {
					if err := s.Resume(t); err != nil {
						return fmt.Sprintf("step %d %s: resume: %v", step, ev, err)
					}
				}
			}
		case k < 17:
			if n := node(); n != nil && len(s.nodes) > 1 {
				ev = "remove " + n.ID()
				_, _ = s.RemoveNode(n.ID())
			}
		case k < 18:
			id := nodeIDs[r.Intn(len(nodeIDs))]
			ev = "add " + id
			_ = s.AddNode(NodeSpec{ID: id, Rack: racks[r.Intn(3)], Capacity: tup(8, 8, 8, 8, 8)})
		case k < 21:
			if t := pick(); t != nil {
				// A resize or a move, committed or reverted.
				rr := Reservation{Start: s.Clock(), Hold: stage.MustProfile(schema, stage.Stage{Duration: stage.Forever, Demand: tup(1+int64(r.Intn(2)), 1)})}
				var err error
				if n := node(); r.Intn(2) == 0 && n != nil {
					ev = "migrate " + t.ID() + " to " + n.ID()
					err = s.Migrate(t, n, rr)
				} else {
					ev = "resize " + t.ID()
					err = s.Resize(t, rr)
				}
				if err == nil && r.Intn(3) > 0 {
					_ = s.CommitChange(t)
				} else if err == nil && r.Intn(2) == 0 {
					_ = s.RevertChange(t)
				}
			}
		default:
			now += time.Duration(r.Intn(3)) * 500 * time.Millisecond
			ev = fmt.Sprint("advance ", now)
			s.Advance(now)
		}
		if msg := checkPlacements(s, all, submitted); msg != "" {
			return fmt.Sprintf("step %d after %q: %s", step, ev, msg)
		}
	}
	return ""
}

type submittedDemand struct {
	req resource.Tuple
	dur time.Duration
}

func checkPlacements(s *State, all []*TaskInfo, submitted map[string]submittedDemand) string {
	owner := map[*placement]*TaskInfo{}
	spare := map[*placement]bool{}
	for _, p := range s.spare {
		if spare[p] {
			return "a record is twice in the spare list"
		}
		spare[p] = true
		if p.node != nil || p.handle != 0 || p.start != 0 || p.hold.Len() > 0 || p.plan.Len() > 0 || p.planned != 0 || !p.usage.IsZero() || !p.devices.IsZero() || p.backup != nil || p.backupOf != nil {
			return "a spare record is not cleared"
		}
	}
	pending, parked := 0, 0
	for _, t := range all {
		live := s.tasks[t.pe.ID] == t
		if t.held != live || (live && t.demand.owner != s) {
			return fmt.Sprintf("task %s: held %v, in the state's tasks %v", t.pe.ID, t.held, live)
		}
		placed := t.state == Reserved || t.state == Booked || t.state == Running
		if (t.run != nil) != (live && placed) {
			return fmt.Sprintf("task %s %v (held %v): run %p", t.pe.ID, t.state, live, t.run)
		}
		// A placed task keeps its place in the pending index (parked) until it is
		// pending again or ends, or until a node holding one of its inputs joins or
		// leaves (relocate: it is then out of the index, to be filed anew); nothing
		// else is parked there. A parked entry's racks are those its inputs are in,
		// which index takes them for.
		mayPark := live && placed && !strings.HasSuffix(t.pe.ID, BackupSuffix)
		if t.pe.Parked() && !mayPark || mayPark && t.pe.Indexed() {
			return fmt.Sprintf("task %s %v (held %v): parked %v, indexed %v", t.pe.ID, t.state, live, t.pe.Parked(), t.pe.Indexed())
		}
		if t.pe.Parked() {
			parked++
			if racks := s.racks(t.pe.Nodes); !slices.Equal(racks, t.pe.Racks) {
				return fmt.Sprintf("task %s parked with racks %q, its inputs are in %q", t.pe.ID, t.pe.Racks, racks)
			}
		}
		if t.run != nil {
			if o := owner[t.run]; o != nil {
				return fmt.Sprintf("tasks %s and %s share a placement record", o.pe.ID, t.pe.ID)
			}
			owner[t.run] = t
			if spare[t.run] {
				return fmt.Sprintf("task %s's placement record is in the spare list", t.pe.ID)
			}
			if t.run.node == nil || s.nodes[t.run.node.spec.ID] != t.run.node || t.run.node.tasks[t.pe.ID] != t {
				return fmt.Sprintf("task %s's node does not hold it", t.pe.ID)
			}
			// The reservation a placed task keeps is the one its node's timeline
			// holds under its handle; so is a held change's.
			if start, hold, ok := t.run.node.tl.Lookup(t.run.handle); !ok || start != t.run.start || !hold.Same(t.run.hold) {
				return fmt.Sprintf("task %s keeps reservation %v from %v, its timeline holds %v from %v (%v)", t.pe.ID, t.run.hold, t.run.start, hold, start, ok)
			}
			if c := t.run.change; c != nil {
				if start, hold, ok := c.node.tl.Lookup(c.handle); !ok || start != c.start || !hold.Same(c.hold) {
					return fmt.Sprintf("task %s's change keeps reservation %v from %v, its timeline holds %v from %v (%v)", t.pe.ID, c.hold, c.start, hold, start, ok)
				}
			}
			if b := t.run.backup; b != nil && (b.run == nil || b.run.backupOf != t || s.tasks[b.pe.ID] != b) {
				return fmt.Sprintf("task %s's backup link is stale", t.pe.ID)
			}
			if o := t.run.backupOf; o != nil && (o.run == nil || o.run.backup != t) {
				return fmt.Sprintf("backup %s's task link is stale", t.pe.ID)
			}
		}
		isBackup := strings.HasSuffix(t.pe.ID, BackupSuffix)
		if !isBackup {
			want := submitted[t.pe.ID]
			if t.Request() != want.req || t.Spec().Duration != want.dur {
				return fmt.Sprintf("task %s reads %v for %v, submitted %v for %v", t.pe.ID, t.Request(), t.Spec().Duration, want.req, want.dur)
			}
			if p := t.RequestProfile(s.schema); p.Peak() != want.req {
				return fmt.Sprintf("task %s's request profile peaks at %v, request %v", t.pe.ID, p.Peak(), want.req)
			}
		}
		if live && t.state == Pending {
			pending++
			if !t.pe.Indexed() {
				return fmt.Sprintf("pending task %s is not indexed", t.pe.ID)
			}
			if want := s.racks(t.pe.Nodes); !slices.Equal(want, t.pe.Racks) {
				return fmt.Sprintf("pending task %s indexed with racks %v, its inputs %v are in %v now", t.pe.ID, t.pe.Racks, t.pe.Nodes, want)
			}
			// The index finds it, at the level Locality gives, on every node.
			for _, n := range s.nodes {
				found := false
				s.AscendPending(s.jobs[t.pe.Job], n, fairness.OffSwitch, func(u *TaskInfo, l fairness.Level) bool {
					if u == t {
						found = true
						if l != s.Locality(t, n) {
							found = false
						}
						return false
					}
					return true
				})
				if !found {
					return fmt.Sprintf("pending task %s not found on %s at level %v", t.pe.ID, n.spec.ID, s.Locality(t, n))
				}
			}
		} else if t.pe.Indexed() {
			return fmt.Sprintf("task %s, %v, is still indexed", t.pe.ID, t.state)
		}
	}
	for p := range spare {
		if owner[p] != nil {
			return "a spare record is in use"
		}
	}
	if pending != s.pending.Len() || pending != s.count[Pending] {
		return fmt.Sprintf("%d pending tasks, index holds %d, count %d", pending, s.pending.Len(), s.count[Pending])
	}
	if parked != s.pending.Parked() {
		return fmt.Sprintf("%d parked tasks, index holds %d", parked, s.pending.Parked())
	}
	return ""
}
