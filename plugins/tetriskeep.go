package plugins

import (
	"slices"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/framework"
	"github.com/finegrain/finegrain/resource"
)

// The jobs that may compete, as Tetris keeps them from choice to choice in a
// heartbeat instead of walking the fairness order for each choice: after a start only
// the started job's entry in the fairness tree changes, which re-keys the job and its
// queues (cluster.Resettle moves them), and only what let a job through the JobFilter
// plugins can stop doing so (DemandClasses.stillLets), which the need heaps tell.

// tetrisJob is a job that may compete, as the pass keeps it in the fairness order.
type tetrisJob struct {
	job *cluster.JobInfo
	idx int // job.Index()
}

// tetrisIndex is the job index of e, for cluster.Resettle.
func tetrisIndex(e tetrisJob) int { return e.idx }

// tetrisLet is what let a kept job through DemandClasses, by job index, and the number
// its items in the need heaps carry: an item of another number is of an earlier let.
type tetrisLet struct {
	let classLet
	seq uint32
}

// needItem is one dimension of what let a kept job through DemandClasses: the job is
// to be looked at again once less than need is free there.
type needItem struct {
	need int64
	idx  int32  // the job's index
	seq  uint32 // the let it is of (tetrisLet.seq)
}

// needHeap is a max-heap of needItems by need: the kept jobs whose need on one
// dimension is no longer free are at its top.
type needHeap []needItem

// push adds it.
func (h *needHeap) push(it needItem) {
	*h = append(*h, it)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].need >= s[i].need {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// pop removes the item of the largest need and returns it; h must not be empty.
func (h *needHeap) pop() needItem {
	s := *h
	top, last := s[0], len(s)-1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

// down sifts the item at i down to its place.
func (h needHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		if r := l + 1; r < len(h) && h[r].need > h[l].need {
			l = r
		}
		if h[i].need >= h[l].need {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// heapify makes h a heap, its items appended in any order.
func (h needHeap) heapify() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// walk takes the jobs that may compete afresh, in the fairness order: the first choice
// of a heartbeat, and each one after a change the kept jobs cannot follow (update).
func (t *Tetris) walk(c *framework.Cycle) {
	st := c.State()
	t.keep = !t.walkEach && t.keepable(c)
	t.jobs = t.jobs[:0]
	for k := range t.needs {
		t.needs[k] = t.needs[k][:0]
	}
	if n := st.JobSlots(); len(t.lets) < n {
		t.lets = append(t.lets, make([]tetrisLet, n-len(t.lets))...)
		t.marked = append(t.marked, make([]uint64, n-len(t.marked))...)
	}
	if t.classes != nil {
		t.refusals = t.classes.marks
	}
	t.bulk = true
	st.Walk(t.visit)
	t.bulk = false
	for k := range t.needs {
		t.needs[k].heapify()
	}
	t.gen, t.version = c.Gen(), st.QueuesVersion()
}

// keepable reports whether the JobFilter plugins' answers can be kept from choice to
// choice: there are none, or DemandClasses alone without FirstStageWindow
// (DemandClasses.stillLets), which is then t.classes.
func (t *Tetris) keepable(c *framework.Cycle) bool {
	t.classes = nil
	switch fs := c.JobFilters(); len(fs) {
	case 0:
		return true
	case 1:
		if d, ok := fs[0].(*DemandClasses); ok && d.stages == nil {
			t.classes = d
			return true
		}
	}
	return false
}

// collect is the walk's visit: it keeps the jobs that may compete.
func (t *Tetris) collect(j *cluster.JobInfo) bool {
	e := tetrisJob{job: j, idx: j.Index()}
	if t.admit(t.c, e) {
		t.jobs = append(t.jobs, e)
	}
	return true
}

// admit reports whether job e may compete, as the walk finds it: not passed over in
// this heartbeat, with pending tasks (passed over otherwise: its last pending task
// started in this heartbeat), and let through by the JobFilter plugins. It keeps what
// let the job through DemandClasses.
func (t *Tetris) admit(c *framework.Cycle, e tetrisJob) bool {
	j := e.job
	switch {
	case c.Skipped(j):
	case len(j.Classes()) == 0:
		c.SkipJob(j, framework.Skip{})
	case c.FilterJob(j):
		if t.classes != nil {
			t.setLet(c, e)
		}
		return true
	}
	return false
}

// setLet keeps what let job e through DemandClasses just now, and its items in the
// need heaps (appended during a walk, which heapifies them after).
func (t *Tetris) setLet(c *framework.Cycle, e tetrisJob) {
	let, ok := t.classes.letThrough(c, e.job)
	if !ok {
		t.keep = false // cannot happen without FirstStageWindow: walk afresh
		return
	}
	t.seq++
	t.lets[e.idx] = tetrisLet{let: let, seq: t.seq}
	if let.all {
		return
	}
	for k := range t.needs {
		if let.dims&(1<<k) == 0 {
			continue
		}
		it := needItem{need: let.need[k], idx: int32(e.idx), seq: t.seq}
		if t.bulk {
			t.needs[k] = append(t.needs[k], it)
		} else {
			t.needs[k].push(it)
		}
	}
}

// update brings the kept jobs up to date for another choice in the heartbeat, as a
// walk would now find them, and reports whether it could; otherwise the caller walks
// afresh. It can when the fairness tree changed for the job chosen last alone (its
// tasks started, or its gang members waited, rolled back or were allowed): the job
// and its queues' blocks move to their new places, and what left the walk is dropped
// (cluster.Resettle); the others keep their order. Then each job is looked at as the
// walk would (recheck).
func (t *Tetris) update(c *framework.Cycle) bool {
	if !t.keep || t.gen != c.Gen() || t.at < 0 {
		return false
	}
	st := c.State()
	tried := t.jobs[t.at].job
	ids, ok := st.JobsChanged(t.version, t.ids[:0])
	t.ids = ids
	if !ok {
		return false
	}
	for _, id := range ids {
		if id != tried.ID() {
			return false
		}
	}
	if len(ids) > 0 {
		t.jobs = cluster.Resettle(st, t.jobs, t.at, tetrisIndex)
	}
	t.version = st.QueuesVersion()
	t.recheck(c, tried)
	return true
}

// recheck drops from the kept jobs, in order, those the walk would now leave out, as
// it would: the job tried, when it was passed over, has no pending task left or the
// JobFilter plugins refuse it now; another job when DemandClasses refuses it now,
// asked only when what let it through may no longer do so — its class was refused
// since, or its need is no longer free (marked) — since the answer is otherwise the
// same and asking again changes nothing (DemandClasses.stillLets). Nothing else
// passes a job over: only this pass does, in this heartbeat.
func (t *Tetris) recheck(c *framework.Cycle, tried *cluster.JobInfo) {
	t.round++
	var free resource.Tuple
	marks := 0
	if t.classes != nil {
		free = c.Free()
		marks = t.markShort(free) + t.markRefused(c)
	}
	if marks == 0 { // the job tried alone is to be looked at again
		if i := t.find(tried); i >= 0 && !t.admit(c, t.jobs[i]) {
			t.drop(i)
		}
		return
	}
	kept := t.jobs[:0]
	for _, e := range t.jobs {
		again := e.job == tried ||
			t.marked[e.idx] == t.round && !t.classes.stillLets(c, &t.lets[e.idx].let, free)
		if again && !t.admit(c, e) {
			t.lets[e.idx].seq = 0 // its items in the need heaps are of no job kept
			continue
		}
		kept = append(kept, e)
	}
	clear(t.jobs[len(kept):])
	t.jobs = kept
}

// find is the index of job j among the kept jobs; −1 when it is not kept.
func (t *Tetris) find(j *cluster.JobInfo) int {
	for i := range t.jobs {
		if t.jobs[i].job == j {
			return i
		}
	}
	return -1
}

// drop takes the kept job at i out of the kept jobs.
func (t *Tetris) drop(i int) {
	t.lets[t.jobs[i].idx].seq = 0 // its items in the need heaps are of no job kept
	t.jobs = slices.Delete(t.jobs, i, i+1)
}

// markShort marks the kept jobs whose need on some dimension is more than is free
// there now, taking their items off the need heaps, and returns how many it marked.
func (t *Tetris) markShort(free resource.Tuple) int {
	marks := 0
	for k := range t.needs {
		h := &t.needs[k]
		for len(*h) > 0 && (*h)[0].need > free[k] {
			if it := h.pop(); t.lets[it.idx].seq == it.seq {
				t.marked[it.idx] = t.round
				marks++
			}
		}
	}
	return marks
}

// markRefused marks the kept jobs whose class DemandClasses was told was refused
// since they were let through, and returns how many it marked; it looks only when it
// was told of a refusal since the last look.
func (t *Tetris) markRefused(c *framework.Cycle) int {
	if t.classes.marks == t.refusals {
		return 0
	}
	t.refusals = t.classes.marks
	marks := 0
	for _, e := range t.jobs {
		if l := &t.lets[e.idx].let; !l.all && t.classes.refusedNow(c, l.slot, l.serial) {
			t.marked[e.idx] = t.round
			marks++
		}
	}
	return marks
}
