package finegrain

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/match"
)

// Snapshot is one pending task's scheduling question frozen at one moment, for a host
// scheduler's cycle that asks Filter and Score of many nodes at once — kube-scheduler
// asks them of a NodeInfo snapshot it takes once per cycle, from 16 goroutines.
// Scheduler.Snapshot works out once what depends on the task alone (its demand, the
// PreFilter plugins' verdict, a view of the task) and takes the nodes as they are
// then: read-only views (cluster.NodeInfo.View: a copy of each node's timeline, GPU
// devices and external load) that the Scheduler's later changes do not reach. Filter
// and Score then answer from the snapshot without the Scheduler's lock, concurrently
// with each other and with every other call: a Reserve or a Commit on another
// goroutine neither waits for them nor makes them wait.
//
// Their answers are exactly those Scheduler.Filter and Scheduler.Score gave for the
// task, the node and the time when the snapshot was taken (TestSnapshotEquivalence).
// The nodes' modes are read when asked, from the policy adjuster, as the live calls
// read them. A Score that follows the snapshot's own Filter of the same node — as
// kube-scheduler scores the nodes its Filter passed — reads the score that Filter
// worked out when the task passed (framework.Verdict), with the mode it read, instead
// of filtering again.
//
// A snapshot may be stale by the time it is read: another task reserved on a node
// since, a node removed or added. That is safe: Reserve is the authority. It checks
// the task against the node as it is, under the Scheduler's lock, and refuses a
// placement that no longer fits (a *PlacementError, the task still pending), so a
// stale snapshot costs at most a refused Reserve — the host scheduler tries the pod
// again — never a wrong placement. A node added since the snapshot is unknown to it
// (ErrUnknownNode): ask Scheduler.Filter for that one, or take a new snapshot.
//
// With a PreFilter, Filter or Score plugin that is not framework.ViewSafe (one added
// with WithPlugin, unless it says it is), Filter and Score answer as Scheduler.Filter
// and Scheduler.Score do at the snapshot's time, under the read lock, on the nodes as
// they are when asked (OnViews reports which).
//
// A Snapshot does not change once taken and is safe for concurrent use.
type Snapshot struct {
	s     *Scheduler
	id    string
	at    time.Duration
	probe *framework.TaskProbe
	nodes *viewTable // nil unless probe.OnViews()
}

// Snapshot takes a snapshot of pending task id's question at time at (Snapshot): the
// work of Filter and Score that depends on the task alone, done once, and a view of
// every node. It fails as Filter does for an invalid time, an unknown task or one that
// is not pending. Bringing the node views up to date costs a copy of each node changed
// since the last snapshot, not of every node: a cycle after one placement copies one
// or two nodes' timelines.
func (s *Scheduler) Snapshot(id string, at time.Duration) (*Snapshot, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.asked("snapshot of task", id, at)
	if err != nil {
		return nil, err
	}
	sn := &Snapshot{s: s, id: id, at: at, probe: s.fw.NewTaskProbe(t, at)}
	if sn.probe.OnViews() {
		sn.nodes = s.views.current(s.state)
	}
	return sn, nil
}

// Task is the ID of the task the snapshot is of.
func (sn *Snapshot) Task() string { return sn.id }

// At is the time the snapshot asks about.
func (sn *Snapshot) At() time.Duration { return sn.at }

// OnViews reports whether Filter and Score answer from the snapshot's views without a
// lock (every PreFilter, Filter and Score plugin is framework.ViewSafe, as the
// built-in ones are), rather than on the live state under the read lock.
func (sn *Snapshot) OnViews() bool { return sn.probe.OnViews() }

// Filter is Scheduler.Filter for the snapshot's task on node nodeID at the snapshot's
// time, as it answered when the snapshot was taken: whether the task passes there,
// and if not why, with the match verdict. It fails with ErrUnknownNode for a node the
// snapshot does not hold.
func (sn *Snapshot) Filter(nodeID string) (Status, match.Result, error) {
	if sn.nodes == nil {
		return sn.s.Filter(sn.id, nodeID, sn.at)
	}
	v, err := sn.node(nodeID)
	if err != nil {
		return Status{}, match.Result{}, err
	}
	st, r := sn.probe.FilterKept(v.n, &v.verdict)
	return st, r, nil
}

// Score is Scheduler.Score for the snapshot's task on node nodeID at the snapshot's
// time, as it answered when the snapshot was taken: 0, and the status saying why, when
// the task does not pass there. After the snapshot's Filter of the node it reuses
// that Filter's findings (the stage match is not run twice). It fails with
// ErrUnknownNode for a node the snapshot does not hold.
func (sn *Snapshot) Score(nodeID string) (float64, Status, error) {
	if sn.nodes == nil {
		return sn.s.Score(sn.id, nodeID, sn.at)
	}
	v, err := sn.node(nodeID)
	if err != nil {
		return 0, Status{}, err
	}
	x, st := sn.probe.ScoreKept(v.n, &v.verdict)
	return x, st, nil
}

// node is the snapshot's view of node id.
func (sn *Snapshot) node(id string) (*nodeView, error) {
	if n := sn.nodes.get(id); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("finegrain: probe of task %q: node %q: %w", sn.id, id, ErrUnknownNode)
}

// nodeView is a node's view (cluster.NodeInfo.View) in a viewTable, with the verdict
// of the latest Filter on it — the score it worked out — which the Score of the same
// snapshot that follows reads rather than filtering again (framework.Verdict):
// kube-scheduler scores, in each cycle, the nodes its Filter passed. Held by value in the table's chunks, the verdict
// beside the view's pointer, so that a Filter reaches both in one or two cache lines.
// A chunk copied for a new table starts with no verdicts: its snapshots' probes are
// new ones.
type nodeView struct {
	n       *cluster.NodeInfo
	verdict framework.Verdict
}

// viewBlock is a chunk of a viewTable.
type viewBlock [viewChunk]nodeView

// copied is a new chunk with the views of b (nil: none) and no verdicts.
func (b *viewBlock) copied() *viewBlock {
	c := new(viewBlock)
	if b != nil {
		for i := range b {
			c[i].n = b[i].n
		}
	}
	return c
}

// viewChunk is how many node views a chunk of a viewTable holds: a snapshot after a
// change copies the chunks that changed, not the table.
const viewChunk = 64

// viewTable is the node views of the snapshots taken between two changes of the
// nodes: by node index, in chunks, and the index of each node's ID. It never changes
// once published: a refresh copies the chunks it changes and, when nodes came or went,
// the small map of recent ones (recent), folding it into a new ids now and then, so
// that a refresh after a node joined costs a copy of the recent ones, not of every ID.
type viewTable struct {
	chunks []*viewBlock
	ids    map[string]int // node ID → index, but for the IDs in recent
	recent map[string]int // IDs added (their index) or removed (-1) since ids was built
}

// index is node id's index, false for a node the table does not hold.
func (t *viewTable) index(id string) (int, bool) {
	if len(t.recent) > 0 {
		if i, ok := t.recent[id]; ok {
			return i, i >= 0
		}
	}
	i, ok := t.ids[id]
	return i, ok
}

// get is the view of node id, nil for none.
func (t *viewTable) get(id string) *nodeView {
	i, ok := t.index(id)
	if !ok {
		return nil
	}
	if v := &t.chunks[i/viewChunk][i%viewChunk]; v.n != nil {
		return v
	}
	return nil
}

// foldRecent is how many recent IDs a table keeps, at least, before folding them into
// a new ids: a fold copies every ID, so it comes after a sixteenth as many changes.
const foldRecent = 64

// foldCalm is how many refreshes in a row with no node come or gone fold the recent
// IDs into a new ids whatever their number: a lookup then costs one map access, not
// two. A fold copies every ID, so it comes at most once every foldCalm snapshots, each
// of which saves a map access for every node it is asked of.
const foldCalm = 16

// nodeViews keeps the latest viewTable and brings it up to date for the next
// snapshot.
type nodeViews struct {
	mu   sync.Mutex // one refresh at a time; snapshots are taken under the read lock
	cur  *viewTable
	calm int // refreshes since a node came or went
}

// current brings the views of the nodes of st changed since the last call up to date
// (cluster.State.TakeTouched) and returns the table. st is held still (the Scheduler's
// read lock, at least).
func (v *nodeViews) current(st *cluster.State) *viewTable {
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.cur
	if cur == nil {
		cur = &viewTable{}
	}
	var next *viewTable
	var owned []bool // chunks of next already copied from cur's
	idsOwned := false
	chunk := func(c int) *viewBlock {
		for c >= len(next.chunks) {
			next.chunks, owned = append(next.chunks, nil), append(owned, false)
		}
		if !owned[c] {
			next.chunks[c], owned[c] = next.chunks[c].copied(), true
		}
		return next.chunks[c]
	}
	setID := func(id string, i int) { // i < 0: removed
		if !idsOwned {
			next.recent, idsOwned = maps.Clone(next.recent), true
			if next.recent == nil {
				next.recent = map[string]int{}
			}
		}
		next.recent[id] = i
	}
	fresh := func() { // every node follows: start from none
		next, owned = &viewTable{}, nil
	}
	st.TakeTouched(fresh, func(n *cluster.NodeInfo, held bool) {
		if next == nil {
			next = &viewTable{chunks: slices.Clone(cur.chunks), ids: cur.ids, recent: cur.recent}
			owned = make([]bool, len(next.chunks))
		}
		i, id := n.Index(), n.ID()
		j, known := next.index(id)
		if held {
			chunk(i / viewChunk)[i%viewChunk].n = n.View()
			if !known || j != i {
				setID(id, i)
			}
			return
		}
		// Removed: its view goes, unless its ID already names another index (a node
		// added under it since, whose change comes later in the list and sets it).
		if known && j == i {
			chunk(i / viewChunk)[i%viewChunk].n = nil
			setID(id, -1)
		}
	})
	if idsOwned {
		v.calm = 0
	} else {
		v.calm++
	}
	if next == nil && len(cur.recent) > 0 && v.calm >= foldCalm {
		next = &viewTable{chunks: cur.chunks, ids: cur.ids, recent: cur.recent}
	}
	if next != nil {
		if len(next.recent) > max(foldRecent, len(next.ids)/16) || len(next.recent) > 0 && v.calm >= foldCalm {
			next.ids, next.recent = folded(next.ids, next.recent), nil
		}
		cur = next
	}
	v.cur = cur
	return cur
}

// folded is ids with the changes of recent made, a new map.
func folded(ids, recent map[string]int) map[string]int {
	c := make(map[string]int, len(ids)+len(recent))
	for k, v := range ids {
		c[k] = v
	}
	for k, v := range recent {
		if v < 0 {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}
