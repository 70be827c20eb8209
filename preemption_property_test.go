package finegrain_test

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/finegrain/finegrain"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

// TestPreemptionGangBookingInvariants drives schedulers with priority and guarantee
// preemption, gang jobs and future reservations (each on or off at random) through
// random events in pull and push mode, and checks after every event that:
//   - every task the scheduler runs or has booked was handed to the embedder (an
//     Assignment, Permitted), and every eviction was reported: the tasks the
//     embedder believes placed are exactly the scheduler's Running and Booked ones;
//   - an evicted task was placed, is reported once, and is pending again (or, gone
//     through the cycle again, placed anew and reported so);
//   - every submitted task is in exactly one state and the counts add up;
//   - memory (not compressible) is never reserved beyond a node's capacity, at any
//     instant from now on;
//   - a gang that has not gathered (or has lost all its running tasks to evictions
//     and failures since) runs none of its tasks, or enough to bring its running and
//     finished tasks to MinMember;
//
// and, at the end, that once running tasks finish, rounds of heartbeats place every
// task that fits an empty node, gangs included when none of the case's gangs is one
// that can never gather (two gangs never deadlock).
func TestPreemptionGangBookingInvariants(t *testing.T) {
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 150
	// The seed is fresh on every run; gopter prints it when a property fails (replay
	// with params.SetSeed(seed)).
	props := gopter.NewProperties(params)
	props.Property("placements and evictions reported, one state each, memory never over-reserved, gangs whole, no deadlock", prop.ForAll(func(seed int64) string {
		return runPreemptionEvents(seed, 150)
	}, gen.Int64().WithShrinker(gopter.NoShrinker)))
	props.TestingRun(t)
	st := preemptionStats
	t.Logf("%d evictions, %d bookings, %d gangs gathered; gang liveness checked in %d cases", st.evictions, st.booked, st.gathered, st.gangLiveness)
	if st.evictions < 50 || st.booked < 50 || st.gathered < 50 || st.gangLiveness < 20 {
		t.Errorf("%d evictions, %d bookings, %d gangs gathered, gang liveness checked in %d cases: too few to mean much",
			st.evictions, st.booked, st.gathered, st.gangLiveness)
	}
}

// preemptionRegressions are per-case seeds of runPreemptionEvents that once exposed a
// fault, replayed on every run.
var preemptionRegressions = []int64{
	// A task placed by the locality pass was evicted by the preemption pass of the
	// same heartbeat (fixed: it is withdrawn, not started and stopped).
	1487163450504100733,
	// Two gangs that never fit beside each other gathered in turn for ever and kept a
	// plain task off the cluster (fixed: rollbacks back off exponentially).
	7435264100326661177,
	// A gang gathered member by member only while the first member it tried on a node
	// fitted there (fixed: it looks past members that do not fit).
	424733651916832281,
	// A gang member was booked alone at a future start (fixed: members of a gang
	// still gathering are not booked).
	-1489793125238081183,
	// A gathering gang's member evicted a gathered gang, then could not gather: the
	// two took turns for ever (fixed: members of a gang still gathering do not
	// preempt).
	9099404777057019252,
	// A task preempted and restarted in a heartbeat freed its job's budget for another
	// eviction in the same heartbeat (fixed: it counts as down until reported).
	-4220338215290305345,
	// A gang's waiting members moved to their start one by one, and the second did not
	// fit beside the first: the gang started partly (fixed: they move together or not
	// at all, cluster.State.MoveStarts).
	1702723061775653048,
	// A task raised after failures beyond the 2 GiB nodes set its queue's packing-bound
	// floor there, and the richer queue started nothing on them while gangs held the 4 GiB
	// one (fixed: a refused task a node cannot hold empty sets no floor on it).
	8307781363059893963,
	// A task raised beyond the 3 GiB node held the richer queue off it while the 5 GiB
	// node was busy with gangs (fixed: likewise).
	-3406861129286266405,
	// A task raised beyond the 2 GiB node held the richer queue off it while the 4 GiB
	// node was busy with gangs (fixed: likewise).
	3283275610147837475,
	// Gangs too large in CPU for the two nodes together began one after another at
	// every rollback and kept a plain task off the cluster (fixed: after a rollback,
	// each node's next cycle that would begin a gang goes to other work).
	5007380582045388592,
	// Likewise, with gangs too large in memory for the two nodes (fixed: likewise).
	2408046150997852644,
	// Likewise, with gangs that fit the two nodes' total but no packing on them
	// (fixed: likewise).
	-5672954232215969176,
}

func TestPreemptionGangBookingRegressions(t *testing.T) {
	for _, seed := range preemptionRegressions {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if msg := runPreemptionEvents(seed, 150); msg != "" {
				t.Fatal(msg)
			}
		})
	}
}

// preemptionStats counts what the cases exercised, so that a run that exercised
// nothing fails.
var preemptionStats struct{ evictions, booked, gathered, gangLiveness int }

// gangJob is the model of a gang: it has gathered once MinMember of its tasks ran or
// finished together, and must gather again once it has lost every running task to
// evictions or failures (cluster.JobInfo.Gathered).
type gangJob struct {
	min      int
	members  []string
	gathered bool
	finished int // members finished: they count toward MinMember, as in Volcano
}

func runPreemptionEvents(seed int64, steps int) string {
	r := rand.New(rand.NewSource(seed))
	opts := []finegrain.Option{finegrain.WithGangTimeout(time.Duration(2+r.Intn(8)) * time.Second)}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithPullStrategy(finegrain.PullFairnessOrder()))
	}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithPrediction(false))
	}
	if r.Intn(3) == 0 {
		opts = append(opts, finegrain.WithOrdering(fairness.Capacity{}))
	}
	if k := r.Intn(4); k > 0 {
		opts = append(opts, finegrain.WithPreemption(finegrain.PreemptionConfig{Priority: k&1 != 0, Guarantees: k&2 != 0, ReclaimDelay: time.Duration(r.Intn(3)) * time.Second}))
	}
	if r.Intn(2) == 0 {
		opts = append(opts, finegrain.WithBooking(time.Duration(r.Intn(10))*time.Second))
	}
	s, err := finegrain.New(schema, opts...)
	if err != nil {
		return err.Error()
	}
	var nodes []string
	capacity := map[string]resource.Tuple{}
	for i := 0; i < 2+r.Intn(3); i++ {
		id := fmt.Sprintf("n%d", i)
		c := schema.MustTuple(int64(2000+r.Intn(3)*1000), int64(2+r.Intn(4))*gib)
		if err := s.AddNode(finegrain.Node{ID: id, Rack: fmt.Sprintf("r%d", i%2), Capacity: c}); err != nil {
			return err.Error()
		}
		nodes = append(nodes, id)
		capacity[id] = c
	}
	for _, q := range []string{"qa", "qb"} {
		if err := s.AddQueue("", q, fairness.MinShare(0.3)); err != nil {
			return err.Error()
		}
	}
	jobs := []string{"j0", "j1", "j2"}
	specs := map[string]finegrain.Job{} // every job, by ID
	for i, j := range jobs {
		spec := finegrain.Job{ID: j, Queue: []string{"qa", "qb"}[i%2], Priority: r.Intn(3), MaxDisrupted: r.Intn(3)}
		if err := s.SubmitJob(spec); err != nil {
			return err.Error()
		}
		specs[j] = spec
	}
	gangs := map[string]*gangJob{}

	var ids []string
	jobOf := map[string]string{}
	requests := map[string]resource.Tuple{}
	placed := map[string]bool{} // what the embedder believes runs or is booked
	down := map[string]bool{}   // evicted and not placed again
	nonPreemptible := map[string]bool{}
	ended := map[string]bool{}
	starts := map[string]time.Duration{}
	now := time.Duration(0)
	byPlaced := func() []string {
		var out []string
		for _, id := range ids {
			if placed[id] {
				out = append(out, id)
			}
		}
		return out
	}
	pick := func(list []string) string { return list[r.Intn(len(list))] }
	runningOf := func(job string) int {
		k := 0
		for _, id := range ids {
			if placed[id] && jobOf[id] == job {
				k++
			}
		}
		return k
	}

	// take records assignments and evictions from one event, evictions first (a task
	// evicted in a heartbeat may be booked again by a later pass of the same one).
	take := func(as []finegrain.Assignment, evs []finegrain.Eviction) string {
		var all []finegrain.Eviction
		all = append(all, evs...)
		for _, a := range as {
			all = append(all, a.Evicted...)
		}
		seen := map[string]bool{}
		for _, e := range all {
			if seen[e.Task] {
				return "eviction of " + e.Task + " reported twice"
			}
			seen[e.Task] = true
			if !placed[e.Task] {
				return "evicted " + e.Task + ", which was not placed"
			}
			victim, preemptor := specs[jobOf[e.Task]].Priority, specs[jobOf[e.For]].Priority
			switch {
			case nonPreemptible[e.Task]:
				return "evicted " + e.Task + ", which is non-preemptible"
			case e.Reason == finegrain.Preempted && victim >= preemptor:
				return fmt.Sprintf("%s (priority %d) preempted for %s (priority %d)", e.Task, victim, e.For, preemptor)
			case e.Reason == finegrain.Reclaimed && victim > preemptor:
				return fmt.Sprintf("%s (priority %d) reclaimed for %s (priority %d)", e.Task, victim, e.For, preemptor)
			case e.Reason != finegrain.Preempted && e.Reason != finegrain.Reclaimed:
				return fmt.Sprintf("eviction of %s with reason %v", e.Task, e.Reason)
			}
			placed[e.Task], down[e.Task] = false, true
			k := 0
			for id := range down {
				if down[id] && jobOf[id] == jobOf[e.Task] {
					k++
				}
			}
			if m := specs[jobOf[e.Task]].MaxDisrupted; m > 0 && k > m {
				return fmt.Sprintf("job %s has %d tasks evicted and not running again, MaxDisrupted %d", jobOf[e.Task], k, m)
			}
			preemptionStats.evictions++
			if g := gangs[jobOf[e.Task]]; g != nil && runningOf(jobOf[e.Task]) == 0 {
				g.gathered = false
			}
		}
		for _, a := range as {
			if a.BackupOf != "" {
				return "a backup without speculation: " + a.Task
			}
			if placed[a.Task] || ended[a.Task] {
				return "placed " + a.Task + ", which was placed or ended"
			}
			placed[a.Task], starts[a.Task], down[a.Task] = true, a.Start, false
			if a.Start > now {
				preemptionStats.booked++
			}
		}
		return ""
	}
	submit := func(job string, n int) string {
		var batch []finegrain.Task
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("t%d", len(ids)+i)
			batch = append(batch, finegrain.Task{ID: id, Job: job, Submitted: now, NonPreemptible: r.Intn(8) == 0,
				Request:  schema.MustTuple(int64(500+r.Intn(3)*500), int64(1+r.Intn(3))*gib/2),
				Duration: time.Duration(r.Intn(2)*(1+r.Intn(20))) * time.Second}) // held until finished, or for a known time
		}
		if err := s.Submit(batch...); err != nil {
			return "submit: " + err.Error()
		}
		for _, t := range batch {
			ids = append(ids, t.ID)
			jobOf[t.ID], requests[t.ID], nonPreemptible[t.ID] = job, t.Request, t.NonPreemptible
		}
		return ""
	}

	for step := 0; step < steps; step++ {
		now += time.Duration(r.Intn(2500)) * time.Millisecond
		var msg string
		switch op := r.Intn(12); {
		case op < 3:
			msg = submit(pick(jobs), 1)
		case op < 4:
			g := fmt.Sprintf("g%d", len(gangs))
			min := 2 + r.Intn(3)
			spec := finegrain.Job{ID: g, Queue: "qa", Priority: r.Intn(3), MinMember: min}
			if err := s.SubmitJob(spec); err != nil {
				return "gang job: " + err.Error()
			}
			specs[g] = spec
			first := len(ids)
			if msg = submit(g, min+r.Intn(2)); msg == "" {
				gangs[g] = &gangJob{min: min, members: slices.Clone(ids[first:])}
			}
		case op < 7:
			d, err := s.Heartbeat(pick(nodes), now)
			if err != nil {
				return "heartbeat: " + err.Error()
			}
			msg = take(d.Assignments, d.Evicted)
		case op < 8:
			var waiting []string
			for _, id := range ids {
				if st, _ := s.TaskState(id); st == finegrain.Pending {
					waiting = append(waiting, id)
				}
			}
			if len(waiting) == 0 {
				break
			}
			a, err := s.Place(pick(waiting), now)
			var pe *finegrain.PlacementError
			switch {
			case err == nil:
				msg = take(append([]finegrain.Assignment{a}, s.Permitted()...), nil)
			case errors.As(err, &pe):
				msg = take(s.Permitted(), pe.Evicted)
			default:
				return "place: " + err.Error()
			}
		case op < 10:
			if run := byPlaced(); len(run) > 0 {
				id := pick(run)
				now = max(now, starts[id])
				if err := s.Finished(id, now, nil); err != nil {
					return "finish: " + err.Error()
				}
				placed[id], ended[id] = false, true
				if g := gangs[jobOf[id]]; g != nil {
					g.finished++
				}
			}
		case op < 11:
			if run := byPlaced(); len(run) > 0 {
				id := pick(run)
				now = max(now, starts[id])
				if err := s.Failed(id, now); err != nil {
					return "fail: " + err.Error()
				}
				placed[id] = false
				if g := gangs[jobOf[id]]; g != nil && runningOf(jobOf[id]) == 0 {
					g.gathered = false
				}
			}
		default:
			if len(ids) > 0 {
				id := pick(ids)
				if ended[id] {
					break
				}
				if err := s.Cancel(id, now); err != nil {
					return "cancel: " + err.Error()
				}
				placed[id], ended[id], down[id] = false, true, false
			}
		}
		if msg != "" {
			return fmt.Sprintf("step %d: %s", step, msg)
		}
		if msg := checkPlacedStates(s, ids, placed, ended); msg != "" {
			return fmt.Sprintf("step %d: %s", step, msg)
		}
		if msg := checkMemory(s, now, nodes); msg != "" {
			return fmt.Sprintf("step %d: %s", step, msg)
		}
		for id, g := range gangs {
			switch k := runningOf(id); {
			case k > 0 && k+g.finished >= g.min:
				if !g.gathered {
					preemptionStats.gathered++
				}
				g.gathered = true
			case k > 0 && !g.gathered:
				return fmt.Sprintf("step %d: gang %s runs %d (and %d finished) of its MinMember %d before it gathered", step, id, k, g.finished, g.min)
			}
		}
	}

	// Liveness: finish what runs, then rounds of heartbeats (past any gang timeout,
	// backoff and locality wait), each followed by the finish of what it started.
	drain := func() string {
		for _, id := range byPlaced() {
			now = max(now, starts[id])
			if err := s.Finished(id, now, nil); err != nil {
				return "drain: finish: " + err.Error()
			}
			placed[id], ended[id] = false, true
			if g := gangs[jobOf[id]]; g != nil {
				g.finished++
			}
		}
		return ""
	}
	if msg := drain(); msg != "" {
		return msg
	}
	for round := 0; round < 100; round++ {
		now += 30 * time.Second
		for _, n := range nodes {
			d, err := s.Heartbeat(n, now)
			if err != nil {
				return "drain: heartbeat: " + err.Error()
			}
			if msg := take(d.Assignments, d.Evicted); msg != "" {
				return "drain: " + msg
			}
		}
		if msg := drain(); msg != "" {
			return msg
		}
	}
	// A gang that cannot gather is retried for ever, with a growing backoff, and one
	// gang gathers at a time: several such gangs can keep a gang that could gather
	// waiting for a long while (a known limit, in the README). Gang liveness is
	// checked when every gang of the case can gather.
	hopeless := false
	for _, g := range gangs {
		live := slices.DeleteFunc(slices.Clone(g.members), func(id string) bool { return ended[id] })
		if len(live) > 0 && len(live)+g.finished >= g.min && !gangFits(g, ended, requests, capacity, nodes) {
			hopeless = true
		}
	}
	if !hopeless && len(gangs) > 0 {
		preemptionStats.gangLiveness++
	}
	for _, id := range ids {
		if ended[id] {
			continue
		}
		st, _ := s.TaskState(id)
		fits := false
		for _, n := range nodes {
			fits = fits || capacity[n].Covers(requests[id])
		}
		if g := gangs[jobOf[id]]; g != nil {
			fits = fits && !hopeless && gangFits(g, ended, requests, capacity, nodes)
		}
		if fits {
			return fmt.Sprintf("liveness: task %s (job %s, request %v) is %v after the drain", id, jobOf[id], requests[id], st)
		}
	}
	return checkPlacedStates(s, ids, placed, ended)
}

// gangFits reports whether gang g surely gathers on the empty cluster: it has
// MinMember live members, and the nodes hold as many copies of its largest request
// (the per-dimension maximum) as it has live members. Then each node's heartbeat
// places members until that many are placed there, whatever order it tries them in.
// (A gang that fits only by a careful packing may not gather: the scheduler gathers
// greedily, member by member, node by node.)
func gangFits(g *gangJob, ended map[string]bool, requests map[string]resource.Tuple, capacity map[string]resource.Tuple, nodes []string) bool {
	live := slices.DeleteFunc(slices.Clone(g.members), func(id string) bool { return ended[id] })
	if len(live)+g.finished < g.min {
		return false
	}
	var largest resource.Tuple
	for _, id := range live {
		largest = largest.Max(requests[id])
	}
	copies := 0
	for _, n := range nodes {
		for free := capacity[n]; free.Covers(largest); free = free.Sub(largest) {
			copies++
		}
	}
	return copies >= len(live)
}

// checkPlacedStates checks that the tasks the embedder was told are placed are
// exactly the scheduler's Running and Booked ones, that ended tasks are Finished or
// Cancelled, and that the counts add up.
func checkPlacedStates(s *finegrain.Scheduler, ids []string, placed, ended map[string]bool) string {
	var n [finegrain.Booked + 1]int
	for _, id := range ids {
		st, ok := s.TaskState(id)
		if !ok {
			return "task " + id + " is lost"
		}
		n[st]++
		switch {
		case ended[id]:
			if st != finegrain.Finished && st != finegrain.Cancelled {
				return fmt.Sprintf("task %s ended but is %v", id, st)
			}
		case placed[id]:
			if st != finegrain.Running && st != finegrain.Booked {
				return fmt.Sprintf("task %s was placed but is %v", id, st)
			}
		default:
			if st != finegrain.Pending && st != finegrain.Reserved {
				return fmt.Sprintf("task %s is %v, and the embedder was not told (evicted or placed unreported)", id, st)
			}
		}
	}
	total := 0
	for st := finegrain.Pending; st <= finegrain.Booked; st++ {
		if s.Count(st) != n[st] {
			return fmt.Sprintf("Count(%v) = %d, %d tasks say so", st, s.Count(st), n[st])
		}
		total += n[st]
	}
	if total != len(ids) {
		return fmt.Sprintf("%d tasks in the states, %d submitted", total, len(ids))
	}
	return ""
}

// checkMemory checks that no node's memory is reserved beyond its capacity from now
// on.
func checkMemory(s *finegrain.Scheduler, now time.Duration, nodes []string) string {
	for _, n := range nodes {
		segs, err := s.FreeSegments(n, now, now+time.Hour)
		if err != nil {
			return err.Error()
		}
		for _, seg := range segs {
			if seg.Free[1] < 0 {
				return fmt.Sprintf("node %s: memory over-reserved over [%v, %v): %v", n, seg.Start, seg.End, seg.Free)
			}
		}
	}
	return ""
}
