package cluster_test

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain/cluster"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// The properties drive a State with random events from a math/rand.Rand seeded by a
// gopter-generated int64, so that a failing case is reproducible from its seed alone;
// gopter's own seed is fresh on every run and logged when a property fails.

// schema is the standard six-dimension schema: cpu, memory, disk-io, net-io, disk,
// gpu; cpu, disk-io and net-io are compressible.
var schema = resource.Standard()

// tup builds a tuple of the standard schema from amounts in slot order.
func tup(a ...int64) resource.Tuple { return schema.MustTuple(a...) }

func params(t *testing.T) *gopter.TestParameters {
	p := gopter.DefaultTestParameters()
	seed := time.Now().UnixNano()
	p.SetSeed(seed)
	p.MinSuccessfulTests = 200
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gopter seed %d (set it in params to replay)", seed)
		}
	})
	return p
}

// seeds generates the per-case seed; shrinking a seed only yields an unrelated case.
func seeds() gopter.Gen { return gen.Int64().WithShrinker(gopter.NoShrinker) }

var levels = []fairness.Level{fairness.NodeLocal, fairness.RackLocal, fairness.OffSwitch}

// probes are the instants at which fingerprints and models read free amounts.
var probes = []time.Duration{0, 250 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, time.Hour}

// fingerprint is everything an observer of the state can see that Reserve followed by
// Unreserve must restore: timelines, the free index, counts, task states, fairness
// entries, demand classes (as multisets) and the pending index's answers.
func fingerprint(s *cluster.State, tasks []*cluster.TaskInfo) string {
	var b strings.Builder
	for n := range s.Nodes() {
		fmt.Fprintf(&b, "node %s tasks=%d reservations=%d\n", n.ID(), n.NumTasks(), n.Timeline().Reservations())
		for _, seg := range n.Timeline().AppendSegments(nil, 0, time.Hour) {
			fmt.Fprintf(&b, "  [%v,%v) %v\n", seg.Start, seg.End, seg.Free)
		}
		for _, at := range probes {
			fmt.Fprintf(&b, "  free@%v %v\n", at, n.Timeline().FreeAt(at))
		}
		for _, t := range n.Tasks() {
			fmt.Fprintf(&b, "  holds %s\n", t.ID())
		}
	}
	b.WriteString("byFree:")
	s.ByFree(math.MinInt64, func(n *cluster.NodeInfo) bool {
		b.WriteString(" " + n.ID())
		return true
	})
	b.WriteString("\ncounts:")
	for st := cluster.Pending; st <= cluster.Booked; st++ {
		fmt.Fprintf(&b, " %v=%d", st, s.Count(st))
	}
	b.WriteString("\n")
	for _, t := range tasks {
		node := "-"
		if t.Node() != nil {
			node = t.Node().ID()
		}
		_, backup := s.Task(cluster.BackupID(t.ID()))
		fmt.Fprintf(&b, "task %s %v on %s backup=%v usage=%v\n", t.ID(), t.State(), node, backup, t.Usage())
	}
	for i := 0; i < s.JobSlots(); i++ {
		j := s.JobAt(i)
		if j == nil {
			continue
		}
		e, err := s.JobEntry(j.ID())
		fmt.Fprintf(&b, "job %s running=%d pending=%d usage=%v demand=%v err=%v numRunning=%d\n",
			j.ID(), e.Running, e.Pending, e.Usage, e.Demand, err, j.NumRunning())
		fmt.Fprintf(&b, "  classes %s\n", classMultiset(j.Classes()))
		for n := range s.Nodes() {
			for _, l := range levels {
				t, got, ok := s.FirstPending(j, n, l)
				id := "-"
				if ok {
					id = t.ID()
				}
				fmt.Fprintf(&b, "  first(%s,%v)=%s@%v,%v", n.ID(), l, id, got, ok)
			}
			best, ok := s.BestLocality(j, n)
			fmt.Fprintf(&b, " best=%v,%v\n", best, ok)
		}
	}
	var all []cluster.Class
	for c := range s.Classes() {
		all = append(all, *c)
	}
	fmt.Fprintf(&b, "classes %d %s\n", s.NumClasses(), classMultiset(all))
	return b.String()
}

// classMultiset renders classes as a sorted list of ID=N, independent of their order.
func classMultiset(cs []cluster.Class) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%+v=%d", c.ID, c.N))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// diff names the first line where two fingerprints differ.
func diff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n  before: %s\n  after:  %s", i+1, x, y)
		}
	}
	return ""
}

// world is a random cluster: its state and the handles a test drives it with.
type world struct {
	r     *rand.Rand
	s     *cluster.State
	nodes []*cluster.NodeInfo
	jobs  []*cluster.JobInfo
	tasks []*cluster.TaskInfo
	next  int
	clock time.Duration
	// nodes removed (their views are foreign to the state now), and the next node's
	// serial
	gone     []*cluster.NodeInfo
	nextNode int
	// specs are the tasks as submitted (copies: the callers' slices are scribbled on
	// after Submit, which must have copied them)
	specs map[string]cluster.TaskSpec
}

var (
	logics = []string{"map", "reduce", "sort"}
	racks  = []string{"", "r0", "r1"}
)

// newWorld builds 2–4 nodes, one or two queues, 2–4 jobs and their pending tasks.
func newWorld(r *rand.Rand) (*world, error) {
	s, err := cluster.New(schema)
	if err != nil {
		return nil, err
	}
	w := &world{r: r, s: s, specs: map[string]cluster.TaskSpec{}}
	for i, nn := 0, 2+r.Intn(3); i < nn; i++ {
		spec := cluster.NodeSpec{ID: fmt.Sprintf("n%d", i), Rack: racks[r.Intn(len(racks))], Capacity: tup(8, 8, 8, 8, 8, int64(r.Intn(3)))}
		if err := s.AddNode(spec); err != nil {
			return nil, err
		}
		n, _ := s.Node(spec.ID)
		w.nodes = append(w.nodes, n)
		w.nextNode++
	}
	queues := []string{""}
	if r.Intn(2) == 0 {
		if err := s.AddQueue("", "q1", fairness.Weight(float64(1+r.Intn(2)))); err != nil {
			return nil, err
		}
		queues = append(queues, "q1")
	}
	for i, nj := 0, 2+r.Intn(3); i < nj; i++ {
		spec := cluster.JobSpec{ID: fmt.Sprintf("j%d", i), Queue: queues[r.Intn(len(queues))], Weight: float64(r.Intn(3)), Priority: r.Intn(2), Submitted: time.Duration(r.Intn(3)) * time.Second,
			MaxDisrupted: r.Intn(3)}
		if err := s.AddJob(spec); err != nil {
			return nil, err
		}
		j, _ := s.Job(spec.ID)
		w.jobs = append(w.jobs, j)
	}
	for _, j := range w.jobs {
		for k, nt := 0, 1+r.Intn(4); k < nt; k++ {
			if _, err := w.submit(j); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

// randSpec is a random task of job j: a random request (half the time one of two
// common ones), sometimes a declared
// two-stage profile, sometimes input replicas (possibly on a node the state does not
// hold).
func (w *world) randSpec(j *cluster.JobInfo) cluster.TaskSpec {
	r := w.r
	spec := cluster.TaskSpec{
		ID:             fmt.Sprintf("t%02d", w.next),
		Job:            j.ID(),
		Key:            predict.Key{Logic: logics[r.Intn(len(logics))], InputSize: int64(r.Intn(2)) * 100},
		Request:        tup(int64(r.Intn(5)), int64(r.Intn(5)), int64(r.Intn(3)), int64(r.Intn(3)), int64(r.Intn(3)), int64(r.Intn(4)/3)),
		Priority:       r.Intn(2),
		Submitted:      time.Duration(r.Intn(3)) * time.Second,
		NonPreemptible: r.Intn(6) == 0,
	}
	w.next++
	if r.Intn(2) == 0 {
		// One of two common requests: tasks of a job then share a demand record and,
		// alike in key and failures, a demand class (State.pendingClass).
		spec.Request = tup(int64(1+r.Intn(2)), 2, 1, 0, 0, 0)
	}
	if r.Intn(2) == 0 {
		spec.Duration = time.Duration(1+r.Intn(4)) * time.Second
	}
	if r.Intn(3) == 0 {
		st := make([]stage.Stage, 2)
		for i := range st {
			st[i] = stage.Stage{Duration: time.Duration(1+r.Intn(3)) * time.Second, Demand: tup(int64(r.Intn(5)), int64(r.Intn(5)), int64(r.Intn(3)), int64(r.Intn(3)), int64(r.Intn(3)), 0)}
		}
		spec.Profile = stage.MustProfile(schema, st...)
	}
	for k := r.Intn(3); k > 0; k-- {
		if r.Intn(5) == 0 {
			spec.Inputs = append(spec.Inputs, "ghost")
		} else {
			spec.Inputs = append(spec.Inputs, w.nodes[r.Intn(len(w.nodes))].ID())
		}
	}
	return spec
}

func (w *world) submit(j *cluster.JobInfo) (*cluster.TaskInfo, error) {
	spec := w.randSpec(j)
	if err := w.s.Submit(spec); err != nil {
		return nil, err
	}
	kept := spec
	kept.Inputs = slices.Clone(spec.Inputs)
	w.specs[spec.ID] = kept
	for i := range spec.Inputs {
		spec.Inputs[i] = "scribbled"
	}
	t, _ := w.s.Task(spec.ID)
	w.tasks = append(w.tasks, t)
	return t, nil
}

// reservation builds what a placement of t would hold: its declared profile, else its
// request for its duration; from the clock or a little later; with no allowance or a
// small one on compressible dimensions only. One in eight is too big for any node.
func (w *world) reservation(t *cluster.TaskInfo) cluster.Reservation {
	r := w.r
	res := cluster.Reservation{Start: w.clock + time.Duration(r.Intn(3))*500*time.Millisecond, Predicted: r.Intn(2) == 0}
	if p := t.Declared(); p.Len() > 0 {
		res.Hold = p
	} else {
		res.Hold = t.RequestProfile(schema)
	}
	if r.Intn(2) == 0 {
		res.Allowance = tup(int64(r.Intn(3)), 0, int64(r.Intn(3)), int64(r.Intn(2)), 0, 0)
	}
	if r.Intn(8) == 0 {
		res.Hold, _ = stage.Constant(schema, tup(1, 9, 0, 0, 0, 0), time.Second)
	}
	return res
}

func (w *world) node() *cluster.NodeInfo { return w.nodes[w.r.Intn(len(w.nodes))] }

// TestPropertyReserveUnreserveRestores: Reserve then Unreserve restores everything
// exactly.
func TestPropertyReserveUnreserveRestores(t *testing.T) {
	reserved := 0
	props := gopter.NewProperties(params(t))
	props.Property("Reserve then Unreserve restores everything exactly", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		w, err := newWorld(r)
		if err != nil {
			return fmt.Sprintf("seed %d: build: %v", seed, err)
		}
		s := w.s
		// Place some tasks first, and back some of the running ones up.
		for _, tk := range w.tasks {
			if r.Intn(3) != 0 {
				continue
			}
			if s.Reserve(tk, w.node(), w.reservation(tk)) != nil {
				continue
			}
			if r.Intn(4) == 0 {
				continue // left reserved
			}
			if err := s.Commit(tk); err != nil {
				return fmt.Sprintf("seed %d: commit %s: %v", seed, tk.ID(), err)
			}
			if n := w.node(); r.Intn(3) == 0 && n != tk.Node() {
				if b, err := s.ReserveBackup(tk, n, w.reservation(tk)); err == nil && r.Intn(2) == 0 {
					if err := s.Commit(b); err != nil {
						return fmt.Sprintf("seed %d: commit backup %s: %v", seed, b.ID(), err)
					}
				}
			}
		}
		var pending []*cluster.TaskInfo
		for _, tk := range w.tasks {
			if tk.State() == cluster.Pending {
				pending = append(pending, tk)
			}
		}
		if len(pending) == 0 {
			return ""
		}
		tk, n := pending[r.Intn(len(pending))], w.node()
		before := fingerprint(s, w.tasks)
		if err := s.Reserve(tk, n, w.reservation(tk)); err != nil {
			if d := diff(before, fingerprint(s, w.tasks)); d != "" {
				return fmt.Sprintf("seed %d: refused Reserve of %s on %s (%v) changed the state: %s", seed, tk.ID(), n.ID(), err, d)
			}
			return ""
		}
		reserved++
		if tk.State() != cluster.Reserved || tk.Node() != n {
			return fmt.Sprintf("seed %d: after Reserve %s is %v on %v", seed, tk.ID(), tk.State(), tk.Node())
		}
		if err := s.Unreserve(tk); err != nil {
			return fmt.Sprintf("seed %d: Unreserve %s: %v", seed, tk.ID(), err)
		}
		if d := diff(before, fingerprint(s, w.tasks)); d != "" {
			return fmt.Sprintf("seed %d: Reserve+Unreserve of %s on %s did not restore the state: %s", seed, tk.ID(), n.ID(), d)
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
	t.Logf("%d cases reserved and unreserved a task", reserved)
	if reserved < 50 {
		t.Errorf("only %d of the cases reserved anything: the property is nearly vacuous", reserved)
	}
}

// TestFingerprintSeesReserve: without Unreserve, the fingerprint of the property above
// differs, for every kind of task it may pick (so the property is not vacuous).
func TestFingerprintSeesReserve(t *testing.T) {
	checked := 0
	for seed := int64(0); seed < 50; seed++ {
		r := rand.New(rand.NewSource(seed))
		w, err := newWorld(r)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		tk, n := w.tasks[0], w.nodes[0]
		res := w.reservation(tk)
		res.Allowance = resource.Tuple{}
		if tk.Declared().Len() > 0 {
			res.Hold = tk.Declared()
		} else {
			res.Hold = tk.RequestProfile(schema)
		}
		before := fingerprint(w.s, w.tasks)
		if err := w.s.Reserve(tk, n, res); err != nil {
			continue // the node's gpu is too small for this one
		}
		checked++
		after := fingerprint(w.s, w.tasks)
		if before == after {
			t.Fatalf("seed %d: Reserve of %s left the fingerprint unchanged", seed, tk.ID())
		}
		if err := w.s.Unreserve(tk); err != nil {
			t.Fatal(err)
		}
		if d := diff(before, fingerprint(w.s, w.tasks)); d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
	}
	if checked < 25 {
		t.Fatalf("only %d of 50 worlds could reserve their first task", checked)
	}
}

// attempt is a placement the model expects: a task's, or its backup's.
type attempt struct {
	node  *cluster.NodeInfo
	start time.Duration
	hold  stage.Profile
	state cluster.TaskState // Reserved, Running or Booked
}

// mtask is the model of one submitted task.
type mtask struct {
	t        *cluster.TaskInfo
	state    cluster.TaskState
	place    *attempt
	backup   *attempt
	b        *cluster.TaskInfo // the backup attempt while it exists
	failedOn []string
	// disrupted: preempted and not run again nor cancelled since
	disrupted bool
}

type model struct {
	w     *world
	tasks []*mtask
	stale []*cluster.TaskInfo // dropped backup attempts: the state must not know them
}

// event draws an event kind for TestPropertyLifeCycle, preferring (three draws) one
// that some task fits, so that deep states (running backups) are reached.
func (m *model) event(r *rand.Rand) int {
	k := r.Intn(numEvents)
	for try := 0; try < 3 && !slices.ContainsFunc(m.tasks, func(mt *mtask) bool { return fitsEvent(mt, k) }); try++ {
		k = r.Intn(numEvents)
	}
	return k
}

// pick chooses the target of event kind k: three times in four a task the event fits,
// when there is one, else any task.
func (m *model) pick(r *rand.Rand, k int) *mtask {
	if r.Intn(4) != 0 {
		var cands []*mtask
		for _, mt := range m.tasks {
			if fitsEvent(mt, k) {
				cands = append(cands, mt)
			}
		}
		if len(cands) > 0 {
			return cands[r.Intn(len(cands))]
		}
	}
	return m.tasks[r.Intn(len(m.tasks))]
}

// fitsEvent reports whether event kind k (see TestPropertyLifeCycle) fits task mt.
func fitsEvent(mt *mtask, k int) bool {
	switch {
	case k < 4:
		return mt.state == cluster.Pending
	case k < 8:
		return mt.state == cluster.Reserved
	case k < 12:
		return mt.state == cluster.Running
	case k < 13:
		return mt.state == cluster.Pending || mt.state == cluster.Reserved || mt.state == cluster.Running || mt.state == cluster.Booked
	case k < 16:
		return mt.state == cluster.Running && mt.backup == nil
	case k < 22:
		return mt.backup != nil
	}
	return true
}

func (m *model) add(t *cluster.TaskInfo) {
	m.tasks = append(m.tasks, &mtask{t: t, state: cluster.Pending})
}

// check compares the state with the model; "" when they agree.
func (m *model) check() string {
	s := m.w.s
	var counts [cluster.Booked + 1]int
	type jobWant struct {
		pending, placed, running int
		usage, demand            resource.Tuple
		classes                  map[string]int
	}
	jobs := map[string]*jobWant{}
	for _, j := range m.w.jobs {
		jobs[j.ID()] = &jobWant{classes: map[string]int{}}
	}
	onNode := map[*cluster.NodeInfo][]*attempt{}
	held := map[*cluster.NodeInfo][]string{}
	for _, mt := range m.tasks {
		t := mt.t
		counts[mt.state]++
		if t.State() != mt.state {
			return fmt.Sprintf("task %s is %v, model says %v", t.ID(), t.State(), mt.state)
		}
		if t.Disrupted() != mt.disrupted {
			return fmt.Sprintf("task %s disrupted %v, model says %v", t.ID(), t.Disrupted(), mt.disrupted)
		}
		if got, ok := s.Task(t.ID()); !ok || got != t {
			return fmt.Sprintf("task %s: Task lookup %v %v", t.ID(), got, ok)
		}
		jw := jobs[t.Job()]
		var wantNode *cluster.NodeInfo
		switch mt.state {
		case cluster.Pending:
			jw.pending++
			jw.demand = jw.demand.Add(t.Request())
			jw.classes[fmt.Sprintf("%+v", classOf(t))]++
		case cluster.Reserved, cluster.Running, cluster.Booked:
			jw.placed++
			jw.usage = jw.usage.Add(mt.place.hold.Peak())
			if mt.state == cluster.Running {
				jw.running++
			}
			wantNode = mt.place.node
			onNode[wantNode] = append(onNode[wantNode], mt.place)
			held[wantNode] = append(held[wantNode], t.ID())
			if t.Usage() != mt.place.hold.Peak() {
				return fmt.Sprintf("task %s usage %v, want %v", t.ID(), t.Usage(), mt.place.hold.Peak())
			}
		}
		if t.Node() != wantNode {
			return fmt.Sprintf("task %s on %v, model says %v", t.ID(), t.Node(), wantNode)
		}
		if msg := m.checkRecord(t, m.w.specs[t.ID()], mt.place); msg != "" {
			return msg
		}
		if !slices.Equal(t.FailedOn(), mt.failedOn) {
			return fmt.Sprintf("task %s failed on %v, model says %v", t.ID(), t.FailedOn(), mt.failedOn)
		}
		b, ok := s.Task(cluster.BackupID(t.ID()))
		if ok != (mt.backup != nil) || t.Backup() != mt.b || (ok && b != mt.b) {
			return fmt.Sprintf("task %s: backup %v (%v), model says %v", t.ID(), b, ok, mt.backup)
		}
		if mt.backup != nil {
			if b.State() != mt.backup.state || b.Node() != mt.backup.node || b.BackupOf() != t {
				return fmt.Sprintf("backup of %s is %v on %v of %v, model says %v on %s", t.ID(), b.State(), b.Node(), b.BackupOf(), mt.backup.state, mt.backup.node.ID())
			}
			spec := m.w.specs[t.ID()]
			spec.ID = b.ID()
			if msg := m.checkRecord(b, spec, mt.backup); msg != "" {
				return msg
			}
			if len(b.FailedOn()) > 0 {
				return fmt.Sprintf("backup %s failed on %v: that is its task's", b.ID(), b.FailedOn())
			}
			jw.placed++
			jw.usage = jw.usage.Add(mt.backup.hold.Peak())
			onNode[mt.backup.node] = append(onNode[mt.backup.node], mt.backup)
			held[mt.backup.node] = append(held[mt.backup.node], b.ID())
		}
	}
	for _, b := range m.stale {
		if got, ok := s.Task(b.ID()); ok && got == b {
			return fmt.Sprintf("dropped backup %s is still known", b.ID())
		}
	}
	total := 0
	for st := cluster.Pending; st <= cluster.Booked; st++ {
		total += s.Count(st)
		if s.Count(st) != counts[st] {
			return fmt.Sprintf("Count(%v) = %d, model says %d", st, s.Count(st), counts[st])
		}
	}
	if total != len(m.tasks) {
		return fmt.Sprintf("counts sum to %d, %d tasks submitted", total, len(m.tasks))
	}
	if msg := m.checkNodes(onNode, held); msg != "" {
		return msg
	}
	// Fairness entries, running sets and demand classes.
	clusterClasses := map[cluster.ClassID]int{}
	slotOf := map[cluster.ClassID][2]uint64{}
	busy := map[string]bool{}
	for j := range s.BusyJobs() {
		if busy[j.ID()] {
			return fmt.Sprintf("BusyJobs yields job %s twice", j.ID())
		}
		busy[j.ID()] = true
	}
	for _, j := range m.w.jobs {
		jw := jobs[j.ID()]
		e, err := s.JobEntry(j.ID())
		if err != nil {
			return err.Error()
		}
		if e.Pending != jw.pending || e.Running != jw.placed || e.Usage != jw.usage || e.Demand != jw.demand {
			return fmt.Sprintf("job %s entry running=%d pending=%d usage=%v demand=%v; model running=%d pending=%d usage=%v demand=%v",
				j.ID(), e.Running, e.Pending, e.Usage, e.Demand, jw.placed, jw.pending, jw.usage, jw.demand)
		}
		if j.Disrupted() != m.disrupted(j.ID()) {
			return fmt.Sprintf("job %s: %d disrupted, model says %d", j.ID(), j.Disrupted(), m.disrupted(j.ID()))
		}
		if j.NumRunning() != jw.running || busy[j.ID()] != (jw.running > 0) {
			return fmt.Sprintf("job %s: %d running (busy %v), model says %d", j.ID(), j.NumRunning(), busy[j.ID()], jw.running)
		}
		// The running list, by ID and through IsRunning, is the model's running tasks.
		var running []string
		for _, mt := range m.tasks {
			if mt.state == cluster.Running && mt.t.Job() == j.ID() {
				running = append(running, mt.t.ID())
			}
			if got, want := j.IsRunning(mt.t.ID()), mt.state == cluster.Running && mt.t.Job() == j.ID(); got != want {
				return fmt.Sprintf("job %s: IsRunning(%s) = %v, model says %v (%v)", j.ID(), mt.t.ID(), got, want, mt.state)
			}
		}
		slices.Sort(running)
		var listed []string
		for _, t := range j.Running() {
			listed = append(listed, t.ID())
		}
		if !slices.Equal(listed, running) {
			return fmt.Sprintf("job %s: Running %v, model %v", j.ID(), listed, running)
		}
		got := map[string]int{}
		sum := 0
		for _, c := range j.Classes() {
			if c.N <= 0 {
				return fmt.Sprintf("job %s holds class %+v with N=%d", j.ID(), c.ID, c.N)
			}
			got[fmt.Sprintf("%+v", c.ID)] += c.N
			sum += c.N
			clusterClasses[c.ID] += c.N
			if prev, ok := slotOf[c.ID]; ok && prev != [2]uint64{uint64(c.Slot), c.Serial} {
				return fmt.Sprintf("class %+v has slot/serial %v in one job, %d/%d in job %s", c.ID, prev, c.Slot, c.Serial, j.ID())
			}
			slotOf[c.ID] = [2]uint64{uint64(c.Slot), c.Serial}
		}
		if sum != jw.pending || fmt.Sprint(got) != fmt.Sprint(jw.classes) {
			return fmt.Sprintf("job %s classes %v (sum %d), model %v (%d pending)", j.ID(), got, sum, jw.classes, jw.pending)
		}
		// Every pending task is in the locality index exactly once, at the level
		// Locality gives.
		want := map[string]bool{}
		for _, mt := range m.tasks {
			if mt.state == cluster.Pending && mt.t.Job() == j.ID() {
				want[mt.t.ID()] = true
			}
		}
		for _, n := range m.w.nodes {
			seen := map[string]bool{}
			var bad string
			s.AscendPending(j, n, fairness.OffSwitch, func(t *cluster.TaskInfo, l fairness.Level) bool {
				switch {
				case seen[t.ID()] || !want[t.ID()]:
					bad = fmt.Sprintf("job %s on %s: AscendPending visits %s (seen %v, pending %v)", j.ID(), n.ID(), t.ID(), seen[t.ID()], want[t.ID()])
				case l != s.Locality(t, n):
					bad = fmt.Sprintf("job %s on %s: %s at level %v, Locality says %v", j.ID(), n.ID(), t.ID(), l, s.Locality(t, n))
				}
				seen[t.ID()] = true
				return bad == ""
			})
			if bad != "" {
				return bad
			}
			if len(seen) != len(want) {
				return fmt.Sprintf("job %s on %s: AscendPending visits %d tasks, %d pending", j.ID(), n.ID(), len(seen), len(want))
			}
		}
	}
	if s.NumClasses() != len(clusterClasses) {
		return fmt.Sprintf("NumClasses %d, the jobs hold %d", s.NumClasses(), len(clusterClasses))
	}
	slots := map[int]bool{}
	for c := range s.Classes() {
		if slots[c.Slot] {
			return fmt.Sprintf("two classes with pending tasks share slot %d", c.Slot)
		}
		slots[c.Slot] = true
		if clusterClasses[c.ID] != c.N || s.ClassPending(c.ID) != c.N || slotOf[c.ID] != [2]uint64{uint64(c.Slot), c.Serial} || c.Slot >= s.ClassSlots() {
			return fmt.Sprintf("cluster class %+v N=%d slot=%d serial=%d; jobs hold %d, slot/serial %v", c.ID, c.N, c.Slot, c.Serial, clusterClasses[c.ID], slotOf[c.ID])
		}
	}
	return ""
}

// checkRecord compares what task (or backup attempt) t reads back with spec, as
// submitted, and with its placement a, nil when it is not placed: the record is split
// (what a pending task needs, a placement taken at Reserve and given back, shared
// demands, rare fields apart), and every accessor must read as one record would.
func (m *model) checkRecord(t *cluster.TaskInfo, spec cluster.TaskSpec, a *attempt) string {
	switch got := t.Spec(); {
	case !reflect.DeepEqual(got, spec):
		return fmt.Sprintf("task %s: Spec %+v, submitted %+v", t.ID(), got, spec)
	case t.Request() != spec.Request || t.Key() != spec.Key || !reflect.DeepEqual(t.Declared(), spec.Profile) || !reflect.DeepEqual(t.GPU(), spec.GPU):
		return fmt.Sprintf("task %s: request %v, key %v, declared %v, GPU %v; submitted %+v", t.ID(), t.Request(), t.Key(), t.Declared(), t.GPU(), spec)
	case t.NeedsGPU() != !spec.GPU.IsZero():
		return fmt.Sprintf("task %s: NeedsGPU %v, GPU %v submitted", t.ID(), t.NeedsGPU(), spec.GPU)
	case t.Preemptible() != (t.BackupOf() == nil && !spec.NonPreemptible):
		return fmt.Sprintf("task %s: preemptible %v", t.ID(), t.Preemptible())
	case a == nil && (t.Plan().Len() > 0 || t.Planned() != 0 || !t.Usage().IsZero() || !t.Devices().IsZero() || t.Backup() != nil || t.BackupOf() != nil):
		return fmt.Sprintf("task %s, not placed: plan %v (%v), usage %v, devices %v, backup %v of %v", t.ID(), t.Plan(), t.Planned(), t.Usage(), t.Devices(), t.Backup(), t.BackupOf())
	case a != nil && !reflect.DeepEqual(t.Plan(), a.hold):
		return fmt.Sprintf("task %s: plan %v, reserved %v", t.ID(), t.Plan(), a.hold)
	}
	return ""
}

// checkNodes compares every node's timeline with its capacity minus the model's
// attempts on it, and the free index with the nodes' free amounts at the clock.
func (m *model) checkNodes(onNode map[*cluster.NodeInfo][]*attempt, held map[*cluster.NodeInfo][]string) string {
	s := m.w.s
	nonComp := schema.NonCompressible()
	for _, n := range m.w.nodes {
		tl := n.Timeline()
		for _, seg := range tl.AppendSegments(nil, 0, time.Hour) {
			for k := 0; k < schema.Len(); k++ {
				if nonComp.Has(k) && seg.Free[k] < 0 {
					return fmt.Sprintf("node %s over-reserved %s in [%v,%v): free %v", n.ID(), schema.DimName(k), seg.Start, seg.End, seg.Free)
				}
			}
		}
		for at := time.Duration(0); at <= s.Clock()+16*time.Second; at += 250 * time.Millisecond {
			want := n.Capacity()
			for _, a := range onNode[n] {
				if at >= a.start {
					want = want.Sub(a.hold.At(at - a.start))
				}
			}
			if got := tl.FreeAt(at); got != want {
				return fmt.Sprintf("node %s free at %v is %v, model says %v", n.ID(), at, got, want)
			}
		}
		slices.Sort(held[n])
		var ids []string
		for _, t := range n.Tasks() {
			ids = append(ids, t.ID())
		}
		if !slices.Equal(ids, held[n]) || n.NumTasks() != len(held[n]) || tl.Reservations() != len(held[n]) {
			return fmt.Sprintf("node %s holds %v (%d reservations), model says %v", n.ID(), ids, tl.Reservations(), held[n])
		}
	}
	// Every Advance of the property refreshes the index, so it is exact: roomiest
	// first at the clock, ties by ID.
	var order []*cluster.NodeInfo
	s.ByFree(math.MinInt64, func(n *cluster.NodeInfo) bool {
		order = append(order, n)
		return true
	})
	var total resource.Tuple
	for _, n := range m.w.nodes {
		total = total.Add(n.Capacity())
		if got, ok := s.Node(n.ID()); !ok || got != n {
			return fmt.Sprintf("node %s: lookup %v %v", n.ID(), got, ok)
		}
	}
	if s.NumNodes() != len(m.w.nodes) || s.Capacity() != total {
		return fmt.Sprintf("%d nodes of capacity %v, model says %d of %v", s.NumNodes(), s.Capacity(), len(m.w.nodes), total)
	}
	if len(order) != len(m.w.nodes) || slices.ContainsFunc(order, func(n *cluster.NodeInfo) bool { return !slices.Contains(m.w.nodes, n) }) {
		return fmt.Sprintf("ByFree visits %d nodes of %d, or one the state does not hold", len(order), len(m.w.nodes))
	}
	d := s.IndexDim()
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		fa, fb := a.Timeline().FreeAt(s.Clock())[d], b.Timeline().FreeAt(s.Clock())[d]
		if fa < fb || (fa == fb && a.ID() > b.ID()) {
			return fmt.Sprintf("ByFree visits %s (free %d) before %s (free %d)", a.ID(), fa, b.ID(), fb)
		}
	}
	return ""
}

// classOf is a task's demand class as classes.go defines it, computed independently.
func classOf(t *cluster.TaskInfo) cluster.ClassID {
	if p := t.Declared(); p.Len() > 0 {
		return cluster.ClassID{Key: t.Key(), Declared: true, First: p.Stage(0).Demand.Only(schema.NonCompressible()), Failures: uint8(t.Failures())}
	}
	return cluster.ClassID{Key: t.Key(), Request: t.Request(), Duration: t.Spec().Duration, Failures: uint8(t.Failures())}
}

// fits reports whether reservation res fits node n's timeline now.
func fits(n *cluster.NodeInfo, res cluster.Reservation) bool {
	return n.Timeline().Check(res.Start, res.Hold, res.Allowance) == nil
}

// release drops mt's placement and backup in the model; a dropped backup attempt
// becomes stale.
// disrupted counts job's tasks the model has preempted and not placed again.
func (m *model) disrupted(job string) int {
	n := 0
	for _, mt := range m.tasks {
		if mt.disrupted && mt.t.Job() == job {
			n++
		}
	}
	return n
}

func (m *model) release(mt *mtask, to cluster.TaskState) {
	if mt.b != nil {
		m.stale = append(m.stale, mt.b)
	}
	mt.place, mt.backup, mt.b, mt.state = nil, nil, nil, to
}

// lifeCycle drives one case of TestPropertyLifeCycle.
type lifeCycle struct {
	*model
	r    *rand.Rand
	done []string // the events applied since the last check
	// what the run did, to check it did enough
	applied, refused, backupOps, backupsWon, backupsFailed, walks, removals, additions *int
}

// Event kinds, drawn by model.event, each up to the (exclusive) bound given: Reserve
// (4), Commit (7), Unreserve (8), Evict (9), Fail (10), Finish (12), Cancel (13),
// ReserveBackup (16), an event on a backup attempt (22), Submit (23), Advance (24); then
// the three below.
const (
	evWalk    = 24 // a Walk making 1–3 of the other events inside it
	evRemove  = 25 // RemoveNode
	evAdd     = 26 // AddNode
	numEvents = 27
)

// step makes one event of kind k, checks the outcome the model predicts and, when the
// state refused the event, that it changed nothing. It returns "" or what went wrong.
func (lc *lifeCycle) step(k int) string {
	m, r, w := lc.model, lc.r, lc.w
	s := w.s
	mt := m.pick(r, k)
	if k >= numEvents {
		panic(fmt.Sprintf("event kind %d", k))
	}
	tk := mt.t
	before := fingerprint(s, w.tasks)
	var what string
	var err error
	ok := false // the model's prediction: the event succeeds
	switch {
	case k < 4:
		n, res := w.node(), w.reservation(tk)
		if len(w.gone) > 0 && r.Intn(10) == 0 {
			n = w.gone[r.Intn(len(w.gone))] // a removed node: unknown
		}
		what = fmt.Sprintf("Reserve %s (%v) on %s", tk.ID(), mt.state, n.ID())
		ok = mt.state == cluster.Pending && slices.Contains(w.nodes, n) && fits(n, res)
		if err = s.Reserve(tk, n, res); err == nil {
			mt.state, mt.place = cluster.Reserved, &attempt{node: n, start: res.Start, hold: res.Hold, state: cluster.Reserved}
		}
	case k < 7:
		what = fmt.Sprintf("Commit %s (%v)", tk.ID(), mt.state)
		ok = mt.state == cluster.Reserved
		if err = s.Commit(tk); err == nil {
			st := cluster.Running
			if mt.place.start > w.clock {
				st = cluster.Booked // a future start waits for the clock
			}
			mt.state, mt.place.state = st, st
			mt.disrupted = mt.disrupted && st == cluster.Booked // it ends when the task runs
		}
	case k < 8:
		what = fmt.Sprintf("Unreserve %s (%v)", tk.ID(), mt.state)
		ok = mt.state == cluster.Reserved
		if err = s.Unreserve(tk); err == nil {
			m.release(mt, cluster.Pending)
		}
	case k < 9 && r.Intn(2) == 0:
		j, _ := s.Job(tk.Job())
		budget := j.Spec().MaxDisrupted == 0 || m.disrupted(tk.Job())+1 <= j.Spec().MaxDisrupted
		what = fmt.Sprintf("Preempt %s (%v, non-preemptible %v, budget %v)", tk.ID(), mt.state, tk.Spec().NonPreemptible, budget)
		ok = mt.state == cluster.Running && !tk.Spec().NonPreemptible && budget
		if err = s.Preempt(tk); err == nil {
			m.release(mt, cluster.Pending)
			mt.disrupted = true
		}
	case k < 9:
		what = fmt.Sprintf("Evict %s (%v)", tk.ID(), mt.state)
		ok = mt.state == cluster.Running
		if err = s.Evict(tk); err == nil {
			m.release(mt, cluster.Pending)
		}
	case k < 10:
		what = fmt.Sprintf("Fail %s (%v)", tk.ID(), mt.state)
		ok = mt.state == cluster.Running
		if err = s.Fail(tk); err == nil {
			m.release(mt, cluster.Pending)
		}
	case k < 12:
		at := w.clock + time.Duration(r.Intn(3))*time.Second
		if mt.place != nil {
			if r.Intn(4) == 0 && mt.place.start > 0 {
				at = mt.place.start - 1 // before its start: refused
			} else {
				at = max(at, mt.place.start)
			}
		}
		what = fmt.Sprintf("Finish %s (%v) at %v", tk.ID(), mt.state, at)
		ok = mt.state == cluster.Running && at >= mt.place.start
		if err = s.Finish(tk, at); err == nil {
			m.release(mt, cluster.Finished)
		}
	case k < 13:
		what = fmt.Sprintf("Cancel %s (%v)", tk.ID(), mt.state)
		ok = mt.state == cluster.Pending || mt.state == cluster.Reserved || mt.state == cluster.Running || mt.state == cluster.Booked
		if err = s.Cancel(tk, 0); err == nil {
			m.release(mt, cluster.Cancelled)
			mt.disrupted = false
		}
	case k < 16:
		n, res := w.node(), w.reservation(tk)
		for n == tk.Node() && len(w.nodes) > 1 && r.Intn(4) != 0 {
			n = w.node()
		}
		what = fmt.Sprintf("ReserveBackup %s (%v, backed up %v) on %s", tk.ID(), mt.state, mt.backup != nil, n.ID())
		ok = mt.state == cluster.Running && mt.backup == nil && n != mt.place.node && fits(n, res)
		var b *cluster.TaskInfo
		if b, err = s.ReserveBackup(tk, n, res); err == nil {
			if b == nil || b.ID() != cluster.BackupID(tk.ID()) || b.State() != cluster.Reserved {
				return fmt.Sprintf("%s returned %v", what, b)
			}
			mt.b, mt.backup = b, &attempt{node: n, start: res.Start, hold: res.Hold, state: cluster.Reserved}
		}
	case k < 22:
		b, bs := mt.b, cluster.TaskState(0)
		if mt.backup != nil {
			bs = mt.backup.state
		} else if len(m.stale) > 0 && r.Intn(2) == 0 {
			b = m.stale[r.Intn(len(m.stale))] // a dropped attempt: unknown
		}
		if b == nil {
			return ""
		}
		var drop bool
		op := r.Intn(6)
		switch {
		case bs == cluster.Reserved && r.Intn(2) == 0:
			op = 0 // commit it, so that running backups are common
		case bs == cluster.Running && r.Intn(2) == 0:
			op = 2 + r.Intn(4) // end it
		}
		switch op {
		case 0:
			what = fmt.Sprintf("Commit backup %s (%v)", b.ID(), bs)
			ok = bs == cluster.Reserved
			if err = s.Commit(b); err == nil {
				mt.backup.state = cluster.Running
			}
		case 1:
			what = fmt.Sprintf("Unreserve backup %s (%v)", b.ID(), bs)
			ok = bs == cluster.Reserved
			err, drop = s.Unreserve(b), true
		case 2:
			what = fmt.Sprintf("Evict backup %s (%v)", b.ID(), bs)
			ok = bs == cluster.Running
			err, drop = s.Evict(b), true
		case 3:
			what = fmt.Sprintf("Fail backup %s (%v)", b.ID(), bs)
			ok = bs == cluster.Running
			if err, drop = s.Fail(b), true; err == nil {
				mt.failedOn = append(mt.failedOn, mt.backup.node.ID())
				*lc.backupsFailed++
			}
		case 4:
			what = fmt.Sprintf("Cancel backup %s (%v)", b.ID(), bs)
			ok = bs == cluster.Reserved || bs == cluster.Running
			err, drop = s.Cancel(b, 0), true
		case 5:
			at := w.clock + time.Duration(r.Intn(3))*time.Second
			if mt.backup != nil {
				at = max(at, mt.backup.start)
			}
			what = fmt.Sprintf("Finish backup %s (%v) at %v", b.ID(), bs, at)
			ok = bs == cluster.Running
			if err = s.Finish(b, at); err == nil {
				m.release(mt, cluster.Finished)
				*lc.backupsWon++
			}
		}
		if drop && err == nil {
			mt.backup, mt.b = nil, nil
			m.stale = append(m.stale, b)
		}
		if err == nil {
			*lc.backupOps++
		}
	case k < 23:
		j := w.jobs[r.Intn(len(w.jobs))]
		nt, err := w.submit(j)
		if err != nil {
			return fmt.Sprintf("Submit: %v", err)
		}
		m.add(nt)
		what, ok = "Submit "+nt.ID(), true
	case k < evWalk:
		w.clock += time.Duration(1+r.Intn(2)) * time.Second
		s.Advance(w.clock)
		for _, mt := range m.tasks {
			if mt.state == cluster.Booked && mt.place.start <= w.clock {
				mt.state, mt.place.state, mt.disrupted = cluster.Running, cluster.Running, false
			}
		}
		what, ok = fmt.Sprintf("Advance to %v", w.clock), true
	case k == evWalk:
		// Events inside a walk change the fairness tree when it ends: check the model
		// after the walk only.
		var msg string
		lc.done = append(lc.done, "Walk:")
		s.Walk(func(*cluster.JobInfo) bool {
			*lc.walks++
			for i := 1 + r.Intn(3); i > 0 && msg == ""; i-- {
				k := m.event(r)
				for k >= evWalk {
					k = m.event(r)
				}
				if msg = lc.step(k); msg != "" {
					msg = "inside a Walk: " + msg
				}
			}
			return false
		})
		return msg
	case k == evRemove:
		id := "nope"
		var n *cluster.NodeInfo
		if len(w.nodes) > 1 && r.Intn(4) != 0 {
			n = w.nodes[r.Intn(len(w.nodes))]
			id = n.ID()
		}
		what, ok = "RemoveNode "+id, n != nil
		var ids []string
		if ids, err = s.RemoveNode(id); err == nil && n != nil {
			want := m.removeNode(n)
			if !slices.Equal(ids, want) {
				return fmt.Sprintf("%s returned %v, model says %v", what, ids, want)
			}
			*lc.removals++
		}
	default: // evAdd
		spec := cluster.NodeSpec{ID: fmt.Sprintf("n%d", w.nextNode), Rack: racks[r.Intn(len(racks))], Capacity: tup(8, 8, 8, 8, 8, int64(r.Intn(3)))}
		switch {
		case r.Intn(4) == 0:
			spec.ID = w.nodes[r.Intn(len(w.nodes))].ID() // a duplicate
		case len(w.gone) > 0 && r.Intn(2) == 0:
			spec.ID = w.gone[r.Intn(len(w.gone))].ID() // a removed node's ID: a new node
		default:
			w.nextNode++
		}
		what = "AddNode " + spec.ID
		ok = !slices.ContainsFunc(w.nodes, func(n *cluster.NodeInfo) bool { return n.ID() == spec.ID })
		if err = s.AddNode(spec); err == nil {
			n, _ := s.Node(spec.ID)
			w.nodes = append(w.nodes, n)
			*lc.additions++
		}
	}
	if (err == nil) != ok {
		return fmt.Sprintf("%s: error %v, the model expected success=%v", what, err, ok)
	}
	if err != nil {
		*lc.refused++
		if d := diff(before, fingerprint(s, w.tasks)); d != "" {
			return fmt.Sprintf("refused %s (%v) changed the state: %s", what, err, d)
		}
		return ""
	}
	*lc.applied++
	lc.done = append(lc.done, what)
	return ""
}

// removeNode applies RemoveNode(n) to the model and returns the IDs of the running
// tasks it returns to pending, in ID order.
func (m *model) removeNode(n *cluster.NodeInfo) []string {
	w := m.w
	var ids []string
	for _, mt := range m.tasks {
		if mt.backup != nil && mt.backup.node == n {
			mt.failedOn = append(mt.failedOn, n.ID())
			m.stale = append(m.stale, mt.b)
			mt.backup, mt.b = nil, nil
		}
	}
	for _, mt := range m.tasks {
		if mt.place != nil && mt.place.node == n {
			if mt.state == cluster.Running || mt.state == cluster.Booked {
				ids = append(ids, mt.t.ID())
			}
			m.release(mt, cluster.Pending)
		}
	}
	slices.Sort(ids)
	w.nodes = slices.DeleteFunc(w.nodes, func(x *cluster.NodeInfo) bool { return x == n })
	w.gone = append(w.gone, n)
	return ids
}

// TestPropertyLifeCycle: a random mix of reserve/commit/unreserve/evict/fail/finish/
// cancel/backup events, with nodes joining and leaving and events made inside Walks,
// never loses a task and never over-reserves a non-compressible dimension, and every
// refused event changes nothing.
func TestPropertyLifeCycle(t *testing.T) {
	var applied, refused, backupOps, backupsWon, backupsFailed, walks, removals, additions int
	props := gopter.NewProperties(params(t))
	props.Property("a random mix of life-cycle events never loses a task nor over-reserves", prop.ForAll(func(seed int64) string {
		r := rand.New(rand.NewSource(seed))
		w, err := newWorld(r)
		if err != nil {
			return fmt.Sprintf("seed %d: build: %v", seed, err)
		}
		m := &model{w: w}
		for _, tk := range w.tasks {
			m.add(tk)
		}
		if msg := m.check(); msg != "" {
			return fmt.Sprintf("seed %d: initial state: %s", seed, msg)
		}
		lc := &lifeCycle{model: m, r: r, applied: &applied, refused: &refused, backupOps: &backupOps, backupsWon: &backupsWon, backupsFailed: &backupsFailed, walks: &walks, removals: &removals, additions: &additions}
		for ev, nev := 0, 20+r.Intn(21); ev < nev; ev++ {
			lc.done = lc.done[:0]
			if msg := lc.step(m.event(r)); msg != "" {
				return fmt.Sprintf("seed %d: event %d: %s", seed, ev, msg)
			}
			if msg := m.check(); msg != "" {
				return fmt.Sprintf("seed %d: event %d: after %v: %s", seed, ev, lc.done, msg)
			}
		}
		return ""
	}, seeds()))
	props.TestingRun(t)
	t.Logf("%d events applied, %d refused; %d events on backups (%d won, %d failed); %d walks, %d nodes removed, %d added",
		applied, refused, backupOps, backupsWon, backupsFailed, walks, removals, additions)
	if applied < 1000 || refused < 500 || backupOps < 10 || walks < 10 || removals < 10 || additions < 10 {
		t.Errorf("%d events applied and %d refused, %d on backups, %d walks, %d nodes removed and %d added: too few to mean much",
			applied, refused, backupOps, walks, removals, additions)
	}
}
