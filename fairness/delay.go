package fairness

import (
	"fmt"
	"math"
	"time"
)

// Level is a task's data locality on the node offering resources, from best to worst
// (docs/methods.md §10, Alg. 2.1's job.level).
type Level uint8

// The locality levels.
const (
	// NodeLocal: the task's input data is on the node.
	NodeLocal Level = iota
	// RackLocal: the data is on another node of the same rack.
	RackLocal
	// OffSwitch: the data is in another rack.
	OffSwitch
)

// String names the level: "node-local", "rack-local" or "off-switch".
func (l Level) String() string {
	switch l {
	case NodeLocal:
		return "node-local"
	case RackLocal:
		return "rack-local"
	case OffSwitch:
		return "off-switch"
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// The thesis's delay-scheduling waits (docs/methods.md §10, PRRL §4.3.1): up to W1 for a
// node-local task, then W2 more for a rack-local one. They exceed a block's transfer time
// within a rack (6.4 s) and across racks (25.6 s) in the thesis's setting only in sum;
// re-tune them to the cluster's bandwidth.
const (
	DefaultW1 = 5 * time.Second
	DefaultW2 = 20 * time.Second
)

// Delay is two-level delay scheduling (Zaharia et al., EuroSys 2010; docs/methods.md §10,
// PRRL thesis Alg. 2.1): when the job whose turn it is has no task local to the node
// offering resources, it passes the offer up and waits — up to W1 for a node-local task,
// then up to W2 more for a rack-local one — before it takes a worse one. Delay keeps
// Alg. 2.1's per-job state: level (the locality it last launched at), wait and skipped.
//
// Two variants: time-based (the default, W1 = 5 s and W2 = 20 s; wait is time), in which
// a job's wait grows at each Heartbeat by the time since the previous one if the job
// passed up an offer in between (Alg. 2.1 lines 2–7, as Hadoop's Fair Scheduler does);
// and skip-count (WithSkips; wait is the number of offers passed up, each counted as it
// happens, as in Zaharia's Alg. 1 and YARN's locality delays).
//
// Reading: Alg. 2.1 does not clear skipped when a job launches; we do, so a job that
// passes up an offer and then launches before the next heartbeat is not credited with
// wait it did not spend.
//
// A Delay has a single owner: it is not safe for concurrent use.
type Delay struct {
	skips   bool
	w1, w2  int64 // nanoseconds, or offers
	jobs    map[string]*jobWait
	lastJob string     // the job last looked up (lookup), when lastW is set
	lastW   *jobWait   // its state
	skipped []*jobWait // jobs that passed up an offer since the last heartbeat
	last    time.Duration
	beat    bool
}

type jobWait struct {
	level   Level
	wait    int64
	skipped bool
	id      string // the job's ID
	owner   *Delay // the Delay holding the state
	gone    bool   // forgotten: a WaitRef to it looks the job up again
}

// WaitRef remembers where a Delay keeps one job's state, for an owner that keeps a
// record per job anyway: AllowedByRef and OfferByRef answer as Allowed and Offer do,
// but look the job up by ID only when the reference holds nothing current — it is new
// (the zero WaitRef), was filled by another Delay or for another job, or the job was
// forgotten since. A heartbeat asks about job after job, each a lookup by ID
// otherwise. A WaitRef is not safe for concurrent use, nor is the Delay.
type WaitRef struct {
	w *jobWait
}

// JobWait is a snapshot of one job's delay-scheduling state.
type JobWait struct {
	// Level is the locality level the job last launched at (Alg. 2.1 job.level).
	Level Level
	// Wait is how long the job has waited (time-based variant).
	Wait time.Duration
	// Skips is how many offers the job has passed up (skip-count variant).
	Skips int64
	// Skipped reports whether the job passed up an offer since the last heartbeat.
	Skipped bool
}

// DelayOption configures a Delay.
type DelayOption func(*Delay) error

// WithWaits selects the time-based variant with the given waits: W1 for a node-local
// task, then W2 more for a rack-local one. Both must be non-negative; 0 and 0 is no
// delay at all (FIFO's direct scheduling).
func WithWaits(w1, w2 time.Duration) DelayOption {
	return func(d *Delay) error {
		if err := checkWaits(int64(w1), int64(w2), "W1", "W2", w1, w2); err != nil {
			return err
		}
		d.skips, d.w1, d.w2 = false, int64(w1), int64(w2)
		return nil
	}
}

// WithSkips selects the skip-count variant: a job takes a rack-local task after passing
// up d1 offers, an off-switch one after d2 more. Both must be non-negative. No source
// gives defaults; YARN's CapacityScheduler uses 40 for d1 (about a rack's node count).
func WithSkips(d1, d2 int) DelayOption {
	return func(d *Delay) error {
		if err := checkWaits(int64(d1), int64(d2), "D1", "D2", d1, d2); err != nil {
			return err
		}
		d.skips, d.w1, d.w2 = true, int64(d1), int64(d2)
		return nil
	}
}

func checkWaits(a, b int64, na, nb string, va, vb any) error {
	switch {
	case a < 0:
		return fieldErr(na, va, ErrInvalidWait)
	case b < 0:
		return fieldErr(nb, vb, ErrInvalidWait)
	case a > math.MaxInt64-b:
		return fieldErr(na+"+"+nb, fmt.Sprintf("%v + %v overflows", va, vb), ErrInvalidWait)
	}
	return nil
}

// NewDelay returns a delay scheduler with no job state, time-based with W1 = 5 s and
// W2 = 20 s unless an option says otherwise. It fails on a negative wait or skip count,
// or a nil option.
func NewDelay(opts ...DelayOption) (*Delay, error) {
	d := &Delay{w1: int64(DefaultW1), w2: int64(DefaultW2), jobs: make(map[string]*jobWait)}
	for i, o := range opts {
		if o == nil {
			return nil, fieldErr(fmt.Sprintf("delay options[%d]", i), "nil", ErrNilOption)
		}
		if err := o(d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// SkipCount reports whether d counts skipped offers rather than time.
func (d *Delay) SkipCount() bool { return d.skips }

// Waits returns W1 and W2 of the time-based variant (zero for the skip-count one).
func (d *Delay) Waits() (w1, w2 time.Duration) {
	if d.skips {
		return 0, 0
	}
	return time.Duration(d.w1), time.Duration(d.w2)
}

// Skips returns D1 and D2 of the skip-count variant (zero for the time-based one).
func (d *Delay) Skips() (d1, d2 int64) {
	if !d.skips {
		return 0, 0
	}
	return d.w1, d.w2
}

// Heartbeat starts a scheduling round at now (a node offering resources): every job that
// passed up an offer since the previous heartbeat has its wait grown by the time between
// the two (Alg. 2.1 lines 2–7; the first heartbeat credits nothing). In the skip-count
// variant it only records now. It fails, changing nothing, when now is before the
// previous heartbeat.
func (d *Delay) Heartbeat(now time.Duration) error {
	if d.beat && now < d.last {
		return fieldErr(fmt.Sprintf("heartbeat time (last %v)", d.last), now, ErrTimeBackwards)
	}
	var elapsed int64
	if d.beat && !d.skips {
		elapsed = int64(now - d.last)
	}
	for _, w := range d.skipped {
		if w.skipped {
			w.wait = satAdd(w.wait, elapsed)
			w.skipped = false
		}
	}
	clear(d.skipped)
	d.skipped = d.skipped[:0]
	d.last, d.beat = now, true
	return nil
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Offer is Alg. 2.1 lines 13–24 for one job whose turn it is on the node offering
// resources; best is the best locality any of the job's pending tasks has there (see
// Pending.Best). It returns the level to launch at and true — best itself — when
//
//   - best is NodeLocal;
//   - best is RackLocal and the job last launched rack-local or worse, or has waited W1;
//   - the job last launched off-switch, or rack-local and has waited W2, or node-local
//     and has waited W1 + W2;
//
// resetting the job's wait and setting its level (to OffSwitch in the third case, as
// Alg. 2.1 does). Otherwise the job passes the offer up: it is marked skipped (its wait
// grows at the next Heartbeat, or now by one in the skip-count variant) and Offer
// returns false. A job is known from its first offer. It fails on an invalid level,
// changing nothing.
func (d *Delay) Offer(job string, best Level) (Level, bool, error) {
	return d.OfferByRef(nil, job, best)
}

// OfferByRef is Offer for job, looked up through ref (WaitRef); a nil ref is none.
func (d *Delay) OfferByRef(ref *WaitRef, job string, best Level) (Level, bool, error) {
	if best > OffSwitch {
		return 0, false, fieldErr(fmt.Sprintf("job %q best locality", job), best, ErrInvalidLevel)
	}
	w := d.lookupRef(ref, job)
	if w == nil {
		w = &jobWait{id: job, owner: d}
		d.jobs[job] = w
		d.lastJob, d.lastW = job, w
		if ref != nil {
			ref.w = w
		}
	}
	switch {
	case best == NodeLocal:
		d.launch(w, NodeLocal)
		return NodeLocal, true, nil
	case best == RackLocal && (w.level >= RackLocal || w.wait >= d.w1):
		d.launch(w, RackLocal)
		return RackLocal, true, nil
	case w.level == OffSwitch || (w.level == RackLocal && w.wait >= d.w2) || (w.level == NodeLocal && w.wait >= d.w1+d.w2):
		d.launch(w, OffSwitch)
		return best, true, nil
	}
	if d.skips {
		w.wait = satAdd(w.wait, 1)
	}
	if !w.skipped {
		w.skipped = true
		d.skipped = append(d.skipped, w)
	}
	return 0, false, nil
}

func (d *Delay) launch(w *jobWait, l Level) {
	w.wait, w.level, w.skipped = 0, l, false
}

// Allowed returns the worst locality level a job may launch at on its next offer
// without passing it up: NodeLocal, RackLocal (it has waited W1, or last launched
// rack-local) or OffSwitch. A job never offered anything may launch node-local only,
// unless the waits are zero.
func (d *Delay) Allowed(job string) Level {
	return d.AllowedByRef(nil, job)
}

// AllowedByRef is Allowed for job, looked up through ref (WaitRef); a nil ref is none.
func (d *Delay) AllowedByRef(ref *WaitRef, job string) Level {
	w := d.lookupRef(ref, job)
	if w == nil {
		w = &jobWait{}
	}
	switch {
	case w.level == OffSwitch || (w.level == RackLocal && w.wait >= d.w2) || (w.level == NodeLocal && w.wait >= d.w1+d.w2):
		return OffSwitch
	case w.level >= RackLocal || w.wait >= d.w1:
		return RackLocal
	}
	return NodeLocal
}

// State returns a job's delay-scheduling state; a job never offered anything has the
// zero state.
func (d *Delay) State(job string) JobWait {
	w := d.jobs[job]
	if w == nil {
		return JobWait{}
	}
	s := JobWait{Level: w.level, Skipped: w.skipped}
	if d.skips {
		s.Skips = w.wait
	} else {
		s.Wait = time.Duration(w.wait)
	}
	return s
}

// Forget drops a job's state (the job finished or was cancelled).
func (d *Delay) Forget(job string) {
	if w := d.lookup(job); w != nil {
		w.skipped, w.gone = false, true
		delete(d.jobs, job)
		d.lastJob, d.lastW = "", nil
	}
}

// lookup returns a job's state, nil for none. The job last looked up is remembered: a
// pass asks what a job may launch at (Allowed) and then offers it the node (Offer).
func (d *Delay) lookup(job string) *jobWait {
	if d.lastW != nil && job == d.lastJob {
		return d.lastW
	}
	w := d.jobs[job]
	if w != nil {
		d.lastJob, d.lastW = job, w
	}
	return w
}

// lookupRef is lookup through ref (nil: none), which it fills.
func (d *Delay) lookupRef(ref *WaitRef, job string) *jobWait {
	if ref == nil {
		return d.lookup(job)
	}
	if w := ref.w; w != nil && w.owner == d && !w.gone && w.id == job {
		return w
	}
	w := d.lookup(job)
	ref.w = w
	return w
}

// Len is the number of jobs with state.
func (d *Delay) Len() int { return len(d.jobs) }
