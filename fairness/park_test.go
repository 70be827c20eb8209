package fairness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A parked entry answers nothing, comes back as if it had been deleted and inserted
// anew, and is gone for good once deleted: random sequences of insert, park, insert
// again and delete, against a Pending of the pending tasks alone (the model), which
// every read must equal. Few jobs and tasks, so that jobs empty out (their parked
// entries then refiled) and tasks start out of order.
func TestPendingIndexParkProperties(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("reads equal the model's through parks, returns and deletes; "+
		"a drained index holds no place", prop.ForAll(parkScript, scripts(120)))
	props.TestingRun(t)
}

// FuzzPendingIndexPark is TestPendingIndexParkProperties on fuzzed scripts.
func FuzzPendingIndexPark(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 3, 3, 1, 0, 3, 3, 2, 3, 3, 1, 3, 3, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &script{}
		for _, b := range data {
			s.xs = append(s.xs, uint32(b))
		}
		if msg := parkScript(s); msg != "" {
			t.Fatal(msg)
		}
	})
}

// parkNodes are the places of parkScript's tasks.
var parkNodes = []Location{{"n0", "r0"}, {"n1", "r0"}, {"n2", "r1"}, {"n3", "r1"}, {"n4", ""}}

// parkScript runs script s on a PendingIndex and its model, and returns what went
// wrong ("" for nothing).
func parkScript(s *script) string {
	nodes := parkNodes
	model, idx := NewPending(), NewPendingIndex[*ownedTask]()
	tasks := map[string]*ownedTask{} // pending or parked
	specs := map[string]PendingTask{}
	for !s.done() {
		id := fmt.Sprint("t", s.next(12))
		o := tasks[id]
		switch {
		case o == nil:
			task := PendingTask{ID: id, Job: fmt.Sprint("j", s.next(3)), Priority: s.next(2), Submitted: time.Duration(s.next(3))}
			for range s.next(4) {
				task.Locations = append(task.Locations, nodes[s.next(len(nodes))])
			}
			o = &ownedTask{entry: PendingEntry[*ownedTask]{ID: task.ID, Job: task.Job, Priority: task.Priority, Submitted: task.Submitted}}
			o.entry.Owner = o
			for _, l := range task.Locations {
				o.entry.Nodes = append(o.entry.Nodes, l.Node)
				o.entry.Racks = append(o.entry.Racks, l.Rack)
			}
			if err := idx.Insert(&o.entry); err != nil {
				return "insert: " + err.Error()
			}
			if err := model.Add(task); err != nil {
				return "model add: " + err.Error()
			}
			tasks[id], specs[id] = o, task
		case o.entry.Parked():
			if s.next(3) == 0 { // it ends
				if err := idx.Delete(&o.entry); err != nil || o.entry.Parked() || o.entry.Indexed() {
					return fmt.Sprintf("delete parked %s: %v", id, err)
				}
				if idx.Delete(&o.entry) == nil || idx.Park(&o.entry) == nil {
					return "deleted or parked a deleted " + id
				}
				delete(tasks, id)
				continue
			}
			if idx.Park(&o.entry) == nil {
				return "parked " + id + " twice"
			}
			if err := idx.Insert(&o.entry); err != nil || !o.entry.Indexed() || o.entry.Parked() {
				return fmt.Sprintf("insert parked %s: %v", id, err)
			}
			if idx.Insert(&o.entry) == nil {
				return "inserted " + id + " twice"
			}
			if err := model.Add(specs[id]); err != nil {
				return "model add: " + err.Error()
			}
		default: // pending: it starts, or is cancelled
			if err := model.Remove(id); err != nil {
				return "model remove: " + err.Error()
			}
			if s.next(4) == 0 {
				if err := idx.Delete(&o.entry); err != nil || o.entry.Indexed() || o.entry.Parked() {
					return fmt.Sprintf("delete %s: %v", id, err)
				}
				delete(tasks, id)
				continue
			}
			if err := idx.Park(&o.entry); err != nil || o.entry.Indexed() || !o.entry.Parked() {
				return fmt.Sprintf("park %s: %v", id, err)
			}
		}
		if msg := checkSlots(idx); msg != "" {
			return msg
		}
		if msg := sameReads(idx, model, nodes); msg != "" {
			return msg
		}
	}
	parked := 0
	for _, o := range tasks {
		if o.entry.Parked() {
			parked++
		}
	}
	if idx.Parked() != parked || idx.Len() != len(tasks)-parked {
		return fmt.Sprintf("parked %d, pending %d; want %d, %d", idx.Parked(), idx.Len(), parked, len(tasks)-parked)
	}
	// Every task ends: nothing is left, parked or not.
	for _, o := range tasks {
		if err := idx.Delete(&o.entry); err != nil {
			return "drain: " + err.Error()
		}
	}
	if idx.Len() != 0 || idx.Parked() != 0 || len(idx.jobs) != 0 || len(idx.byNode.m) != 0 || len(idx.byRack.m) != 0 {
		return fmt.Sprintf("drained index holds %d pending, %d parked, %d jobs, %d nodes, %d racks",
			idx.Len(), idx.Parked(), len(idx.jobs), len(idx.byNode.m), len(idx.byRack.m))
	}
	return ""
}

// sameReads compares every read of idx with model's.
func sameReads(idx *PendingIndex[*ownedTask], model *Pending, nodes []Location) string {
	if idx.Len() != model.Len() {
		return fmt.Sprintf("len %d, model %d", idx.Len(), model.Len())
	}
	type visit struct {
		id string
		l  Level
	}
	for _, job := range []string{"j0", "j1", "j2"} {
		if idx.JobLen(job) != model.JobLen(job) {
			return fmt.Sprintf("job %s: %d entries, model %d", job, idx.JobLen(job), model.JobLen(job))
		}
		var all []string
		idx.AscendJob(job, func(e *PendingEntry[*ownedTask]) bool {
			all = append(all, e.ID)
			return true
		})
		var wantAll []string
		model.Ascend(job, "", "", OffSwitch, func(id string, _ Level) bool {
			wantAll = append(wantAll, id)
			return true
		})
		slices.SortFunc(wantAll, func(a, b string) int {
			ta, _ := model.Task(a)
			tb, _ := model.Task(b)
			return taskOrder(entryOf(ta), entryOf(tb))
		})
		if !slices.Equal(all, wantAll) {
			return fmt.Sprintf("job %s: AscendJob %v, model %v", job, all, wantAll)
		}
		for _, at := range append(nodes, Location{"n9", "r1"}) {
			for worst := NodeLocal; worst <= OffSwitch; worst++ {
				var want, got []visit
				model.Ascend(job, at.Node, at.Rack, worst, func(id string, l Level) bool {
					want = append(want, visit{id, l})
					return true
				})
				idx.Ascend(job, at.Node, at.Rack, worst, func(e *PendingEntry[*ownedTask], l Level) bool {
					got = append(got, visit{e.ID, l})
					return true
				})
				if !slices.Equal(got, want) {
					return fmt.Sprintf("%s on %v up to %v: %v, model %v", job, at, worst, got, want)
				}
				e, l, ok := idx.First(job, at.Node, at.Rack, worst)
				if ok != (len(want) > 0) || (ok && (e.ID != want[0].id || l != want[0].l)) {
					return fmt.Sprintf("%s on %v up to %v: first %v %v %v, model %v", job, at, worst, e, l, ok, want)
				}
				var ref JobRef[*ownedTask]
				if e2, l2, ok2 := idx.FirstByRef(&ref, job, at.Node, at.Rack, worst); e2 != e || l2 != l || ok2 != ok {
					return fmt.Sprintf("%s on %v up to %v: FirstByRef differs from First", job, at, worst)
				}
				l, ok = idx.Best(job, at.Node, at.Rack)
				if wl, wok := model.Best(job, at.Node, at.Rack); l != wl || ok != wok {
					return fmt.Sprintf("%s on %v: best %v %v, model %v %v", job, at, l, ok, wl, wok)
				}
			}
		}
	}
	return ""
}

// Park and Delete of a parked entry refuse what the index does not hold; a parked entry
// is refused by another index.
func TestPendingIndexParkErrors(t *testing.T) {
	a, b := NewPendingIndex[struct{}](), NewPendingIndex[struct{}]()
	e := &PendingEntry[struct{}]{ID: "t", Job: "j", Nodes: []string{"n"}, Racks: []string{"r"}}
	keep := &PendingEntry[struct{}]{ID: "u", Job: "j", Nodes: []string{"n"}}
	require.NoError(t, a.Insert(e))
	require.NoError(t, a.Insert(keep))
	assert.ErrorIs(t, b.Park(e), ErrUnknownTask)
	require.NoError(t, a.Park(e))
	assert.ErrorIs(t, a.Park(e), ErrUnknownTask)
	assert.ErrorIs(t, b.Insert(e), ErrDuplicate)
	assert.ErrorIs(t, b.Delete(e), ErrUnknownTask)
	assert.ErrorIs(t, a.Park(nil), ErrUnknownTask)
	// An entry alike to a parked one is no duplicate; the parked one is, while it is
	// pending: refused, it stays parked.
	alike := &PendingEntry[struct{}]{ID: "t", Job: "j"}
	require.NoError(t, a.Insert(alike))
	assert.ErrorIs(t, a.Insert(e), ErrDuplicate)
	assert.True(t, e.Parked())
	require.NoError(t, a.Delete(alike))
	assert.Equal(t, 1, a.Parked())
	require.NoError(t, a.Delete(e))
	assert.False(t, e.Parked())
	assert.Equal(t, 0, a.Parked())
	require.NoError(t, b.Insert(e), "a deleted entry may go to another index")
}

// checkSlots checks every job slot of every node and rack of idx: it holds an item of
// the place, filed under the job's number, that comes before every pending entry of the
// job there, and a job with a pending entry there has a slot.
func checkSlots(idx *PendingIndex[*ownedTask]) string {
	for _, ps := range []*places[*ownedTask]{&idx.byNode, &idx.byRack} {
		for key, pl := range ps.m {
			if pl.items.Len() == 0 {
				return "an empty place is kept: " + key
			}
			type jobItems struct {
				items []*PendingEntry[*ownedTask]
				live  bool
			}
			byJob := map[uint64]*jobItems{}
			var c lcursor[*ownedTask]
			for c.seek(&pl.items, 0); ; c.next() {
				x, ok := c.item()
				if !ok {
					break
				}
				ji := byJob[x.job]
				if ji == nil {
					ji = &jobItems{}
					byJob[x.job] = ji
				}
				ji.items = append(ji.items, x.e)
				ji.live = ji.live || x.e.Indexed()
			}
			slots := 0
			for _, sl := range pl.first.slots {
				if sl.e == nil {
					continue
				}
				slots++
				ji := byJob[sl.job]
				at := -1
				if ji != nil {
					at = slices.Index(ji.items, sl.e)
				}
				if at < 0 {
					return fmt.Sprintf("%s: the slot of job %d holds %s, not an item of the job there", key, sl.job, sl.e.ID)
				}
				for _, e := range ji.items[:at] {
					if e.Indexed() {
						return fmt.Sprintf("%s: the slot of job %d holds %s, after pending %s", key, sl.job, sl.e.ID, e.ID)
					}
				}
			}
			if slots != pl.first.n {
				return fmt.Sprintf("%s: %d slots in use, counted %d", key, slots, pl.first.n)
			}
			for seq, ji := range byJob {
				if ji.live && pl.first.get(seq) == nil {
					return fmt.Sprintf("%s: job %d has pending entries but no slot", key, seq)
				}
			}
		}
	}
	return ""
}

// TestPendingIndexParkedAlike: an entry inserted while one alike to it (same job,
// priority, submission and ID) is parked shares the node's tree with it; deleting the
// parked one, wherever the tree holds it, leaves no item behind, and the pending ones
// are read as before. The sequences are random (fresh seeds, printed on failure): a
// third of 400 inserts parked, IDs recurring every 150.
func TestPendingIndexParkedAlike(t *testing.T) {
	props := gopter.NewProperties(params())
	props.Property("deleting parked entries that pending ones are alike to leaves the tables holding the pending ones",
		prop.ForAll(func(seed uint64) string {
			rng := rand.New(rand.NewPCG(seed, 3))
			idx := NewPendingIndex[*ownedTask]()
			var parked, pending []*ownedTask
			for range 400 {
				i := rng.IntN(150)
				o := &ownedTask{entry: PendingEntry[*ownedTask]{ID: fmt.Sprint("t", i), Job: "j", Submitted: time.Duration(i),
					Nodes: []string{"n0"}, Racks: []string{"r0"}}}
				o.entry.Owner = o
				if err := idx.Insert(&o.entry); err != nil {
					if !errors.Is(err, ErrDuplicate) {
						return "insert: " + err.Error()
					}
					continue // alike to a pending one
				}
				if rng.IntN(3) == 0 {
					if err := idx.Park(&o.entry); err != nil {
						return "park: " + err.Error()
					}
					parked = append(parked, o)
				} else {
					pending = append(pending, o)
				}
			}
			for _, o := range parked {
				if err := idx.Delete(&o.entry); err != nil {
					return "delete parked: " + err.Error()
				}
			}
			for _, pl := range []*place[*ownedTask]{idx.byNode.m["n0"], idx.byRack.m["r0"]} {
				n := 0
				if pl != nil {
					n = pl.items.Len()
				}
				if n != len(pending) {
					return fmt.Sprintf("a table holds %d items for %d pending entries", n, len(pending))
				}
			}
			n := 0
			idx.Ascend("j", "n0", "r0", OffSwitch, func(*PendingEntry[*ownedTask], Level) bool { n++; return true })
			if n != len(pending) {
				return fmt.Sprintf("read %d entries, %d pending", n, len(pending))
			}
			for _, o := range pending {
				if err := idx.Delete(&o.entry); err != nil {
					return "delete: " + err.Error()
				}
			}
			if len(idx.byNode.m)+len(idx.byRack.m) != 0 {
				return "tables left after every entry was deleted"
			}
			return ""
		}, seeds()))
	props.TestingRun(t)
}
