package speculate

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/finegrain/finegrain/predict"
)

// PRRL is the pre-release resource list speculator (docs/methods.md §9; PRRL thesis §3.2,
// Alg. 3.1). LATE backs up the slowest task on whichever free resource asks first; PRRL
// asks whether a faster resource is about to free up that would finish the slow task
// sooner, and if so keeps the slow task for it.
//
// When a free resource on a node asks a job for work:
//
//  1. a job with unstarted tasks runs one of those (Alg. 3.1 line 2);
//  2. the slow-task list holds LATE's candidates (see LATE: slow by eq. 3.3, run longer
//     than the minimum runtime, no backup running, not failed on this node), sorted by
//     time left (eq. 3.4), largest first; its size is N. N = 0: nothing;
//  3. the pre-release resource list holds the busy slots — one per running task of the
//     job, plus Request.Busy — on which a backup would finish sooner than on the free
//     resource: 1/rate(node) + timeLeft (eq. 3.6) < 1/rate(requesting node) (eq. 3.5),
//     where rate(node) is the mean progress rate of the job's tasks finished on the
//     node; sorted by that finish time, with the free resource appended last. Its size
//     is M. M > N: nothing — every slow task has a faster resource coming;
//  4. otherwise slowTask[M] (1-based: the M-th slowest task, which the M-th fastest
//     resource — the free one — should take) is backed up if its time left exceeds the
//     backup's finish time on the free resource; otherwise nothing.
//
// Speculate counts M and picks slowTask[M] by selection rather than sorting, so one
// decision costs O(n) expected in the number of running tasks, as the thesis states;
// Lists builds the sorted lists themselves, for inspection. With no faster resource
// about to free up (M = 1) PRRL backs up what LATE backs up, the task with the largest
// time left, provided the backup would finish first.
//
// Readings: Alg. 3.1 is silent on LATE's speculative cap; PRRL keeps it (eq. 2.2), as it
// was built into Hadoop 0.21's LATE code. It does not apply LATE's slow-node test
// (eq. 2.1): a slow node gets nothing because faster resources fill the list (M > N),
// which is the test PRRL replaces it with. A node that finished none of the job's tasks
// runs at the mean rate of all finished tasks. Equal finish times are not "faster": a
// busy slot is on the list only when strictly faster than the free resource.
//
// A PRRL is immutable and safe for concurrent use.
type PRRL struct {
	cfg config
}

// NewPRRL returns a PRRL speculator with Hadoop's LATE defaults (speculativeCap 0.1,
// slowTaskThreshold 1.0, minimum runtime 60 s) changed by opts. It fails on an invalid
// option. WithSlowNodeThreshold is accepted and validated but not used.
func NewPRRL(opts ...Option) (*PRRL, error) {
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	return &PRRL{cfg: cfg}, nil
}

// slowEntry is one slow task in the working list.
type slowEntry struct {
	timeLeft time.Duration
	task     string
	idx      int
}

// slowerFirst orders slow tasks by time left, largest first, then by task ID.
func slowerFirst(a, b slowEntry) int {
	if c := cmp.Compare(b.timeLeft, a.timeLeft); c != 0 {
		return c
	}
	return cmp.Compare(a.task, b.task)
}

// Speculate implements Speculator (Alg. 3.1). It fails on the inputs LATE.Speculate
// fails on, and on a busy slot in req.Busy with an empty ID or a negative time left.
func (p *PRRL) Speculate(job Job, req Request) (Decision, error) {
	if err := checkRequest(job, req); err != nil {
		return Decision{}, err
	}
	if job.Unstarted > 0 {
		return Decision{Action: RunUnstarted, Reason: ReasonUnstarted}, nil
	}
	s := getScratch()
	defer putScratch(s)
	snap, err := load(job, req, s)
	if err != nil {
		return Decision{}, err
	}
	fin := snap.finished
	s.slow = s.slow[:0]
	for i := range snap.tasks {
		t := &snap.tasks[i]
		if p.cfg.candidate(job, req.Node, t, fin) {
			s.slow = append(s.slow, slowEntry{timeLeft: t.TimeLeft, task: t.Task, idx: i})
		}
	}
	n := len(s.slow)
	if n == 0 {
		return Decision{Reason: ReasonNoSlowTask}, nil
	}
	if p.cfg.atCap(snap.backups, len(snap.tasks)) {
		return Decision{Reason: ReasonAtCap, SlowTasks: n}, nil
	}
	rate, err := nodeRate(job.Tasks, req.Node, fin, s.rates)
	if err != nil {
		return Decision{}, err
	}
	free := backupFinish(rate, 0)
	m := 1
	for i := range snap.tasks {
		t := &snap.tasks[i]
		f, err := p.slotFinish(job.Tasks, t.Node, t.TimeLeft, fin, s.rates)
		if err != nil {
			return Decision{}, err
		}
		if f < free {
			m++
		}
	}
	for _, b := range req.Busy {
		f, err := p.slotFinish(job.Tasks, b.Node, b.TimeLeft, fin, s.rates)
		if err != nil {
			return Decision{}, err
		}
		if f < free {
			m++
		}
	}
	d := Decision{Finish: free, SlowTasks: n, Resources: m}
	if m > n {
		d.Reason = ReasonFasterResources
		return d, nil
	}
	nthElement(s.slow, m-1, slowerFirst)
	pick := s.slow[m-1]
	d.TimeLeft = pick.timeLeft
	if pick.timeLeft <= free {
		d.Reason = ReasonNotFaster
		return d, nil
	}
	d.Action, d.Reason, d.Task = Backup, ReasonBackup, pick.task
	return d, nil
}

func (p *PRRL) slotFinish(est predict.RuntimeEstimator, node string, wait time.Duration, fin predict.RateStats, rates map[string]float64) (time.Duration, error) {
	r, err := nodeRate(est, node, fin, rates)
	if err != nil {
		return 0, err
	}
	return backupFinish(r, wait), nil
}

// SlowTask is one entry of the slow-task list (docs/methods.md §9).
type SlowTask struct {
	// Task and Node identify the running task and where it runs.
	Task, Node string
	// TimeLeft is its time left (eq. 3.4).
	TimeLeft time.Duration
}

// Resource is one entry of the pre-release resource list (docs/methods.md §9).
type Resource struct {
	// Node is the node the resource is on.
	Node string
	// Task is the running task holding the slot; empty for the requesting free
	// resource.
	Task string
	// Wait is when the resource frees: the holding task's time left, 0 for the free
	// resource.
	Wait time.Duration
	// Finish is when a backup started there would finish: eq. 3.6 (eq. 3.5 for the
	// free resource).
	Finish time.Duration
}

// Lists are PRRL's two lists for one request.
type Lists struct {
	// Slow is the slow-task list, largest time left first (ties by task ID); N = len.
	Slow []SlowTask
	// Resources is the pre-release resource list, fastest first (ties by node, then
	// task), ending with the requesting free resource; M = len.
	Resources []Resource
}

// Lists builds the slow-task list and the pre-release resource list PRRL decides on
// for req (docs/methods.md §9, thesis §3.2.1–3.2.2), sorted, for inspection and
// explanation. It reads the same state Speculate reads and fails on the same inputs; it
// ignores Job.Unstarted and the speculative cap. SelectBackup on the result decides as
// Speculate does when the job has no unstarted task and is under the cap.
func (p *PRRL) Lists(job Job, req Request) (Lists, error) {
	if err := checkRequest(job, req); err != nil {
		return Lists{}, err
	}
	s := getScratch()
	defer putScratch(s)
	snap, err := load(job, req, s)
	if err != nil {
		return Lists{}, err
	}
	fin := snap.finished
	var out Lists
	for i := range snap.tasks {
		t := &snap.tasks[i]
		if p.cfg.candidate(job, req.Node, t, fin) {
			out.Slow = append(out.Slow, SlowTask{Task: t.Task, Node: t.Node, TimeLeft: t.TimeLeft})
		}
	}
	slices.SortFunc(out.Slow, func(a, b SlowTask) int {
		return slowerFirst(slowEntry{timeLeft: a.TimeLeft, task: a.Task}, slowEntry{timeLeft: b.TimeLeft, task: b.Task})
	})
	rate, err := nodeRate(job.Tasks, req.Node, fin, s.rates)
	if err != nil {
		return Lists{}, err
	}
	free := backupFinish(rate, 0)
	add := func(node, task string, wait time.Duration) error {
		f, err := p.slotFinish(job.Tasks, node, wait, fin, s.rates)
		if err != nil {
			return err
		}
		if f < free {
			out.Resources = append(out.Resources, Resource{Node: node, Task: task, Wait: wait, Finish: f})
		}
		return nil
	}
	for i := range snap.tasks {
		if err := add(snap.tasks[i].Node, snap.tasks[i].Task, snap.tasks[i].TimeLeft); err != nil {
			return Lists{}, err
		}
	}
	for _, b := range req.Busy {
		if err := add(b.Node, b.Task, b.TimeLeft); err != nil {
			return Lists{}, err
		}
	}
	slices.SortFunc(out.Resources, func(a, b Resource) int {
		if c := cmp.Compare(a.Finish, b.Finish); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Node, b.Node); c != 0 {
			return c
		}
		return cmp.Compare(a.Task, b.Task)
	})
	out.Resources = append(out.Resources, Resource{Node: req.Node, Finish: free})
	return out, nil
}

// SelectBackup is the selection step of Alg. 3.1 (thesis §3.2.3) on lists already
// built: with N slow tasks (largest time left first) and M resources (fastest first,
// the requesting free one last), it backs up slowTask[M] on the free resource when
// N ≥ M and slowTask[M]'s time left exceeds resource[M]'s finish time, and decides
// nothing otherwise. It fails on an empty resource list or a negative time.
func SelectBackup(slow []SlowTask, resources []Resource) (Decision, error) {
	if len(resources) == 0 {
		return Decision{}, fieldErr("resources", "empty (the free resource must be last)", ErrInvalidValue)
	}
	for i, t := range slow {
		if t.TimeLeft < 0 {
			return Decision{}, fieldErr(fmt.Sprintf("slow[%d].TimeLeft", i), t.TimeLeft, ErrBadTime)
		}
	}
	for i, r := range resources {
		if r.Finish < 0 || r.Wait < 0 {
			return Decision{}, fieldErr(fmt.Sprintf("resources[%d]", i), fmt.Sprintf("wait %v, finish %v", r.Wait, r.Finish), ErrBadTime)
		}
	}
	n, m := len(slow), len(resources)
	d := Decision{Finish: resources[m-1].Finish, SlowTasks: n, Resources: m}
	switch {
	case n == 0:
		d.Reason = ReasonNoSlowTask
	case m > n:
		d.Reason = ReasonFasterResources
	case slow[m-1].TimeLeft <= resources[m-1].Finish:
		d.Reason, d.TimeLeft = ReasonNotFaster, slow[m-1].TimeLeft
	default:
		d.Action, d.Reason, d.Task, d.TimeLeft = Backup, ReasonBackup, slow[m-1].Task, slow[m-1].TimeLeft
	}
	return d, nil
}

// nthElement reorders a so that a[k] is the element a full sort by cmp would put there,
// with no greater element before it and no smaller one after: Hoare's selection with a
// median-of-three pivot and a three-way partition, O(n) expected; it falls back to
// sorting the remaining range after 2·log₂n rounds, so the worst case is O(n log n).
// cmp must be a total order.
func nthElement[T any](a []T, k int, cmp func(a, b T) int) {
	lo, hi := 0, len(a)
	budget := 2 * bits.Len(uint(len(a)))
	for hi-lo > 12 {
		if budget == 0 {
			slices.SortFunc(a[lo:hi], cmp)
			return
		}
		budget--
		mid := lo + (hi-lo)/2
		x, y, z := a[lo], a[mid], a[hi-1]
		if cmp(x, y) > 0 {
			x, y = y, x
		}
		if cmp(y, z) > 0 {
			y = z
			if cmp(x, y) > 0 {
				y = x
			}
		}
		pivot := y
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch c := cmp(a[i], pivot); {
			case c < 0:
				a[lt], a[i] = a[i], a[lt]
				lt++
				i++
			case c > 0:
				gt--
				a[i], a[gt] = a[gt], a[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return
		}
	}
	slices.SortFunc(a[lo:hi], cmp)
}

var _ Speculator = (*PRRL)(nil)
