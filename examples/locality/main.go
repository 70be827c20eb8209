// Command locality replays the PRRL thesis' Table 4.1 example (§4.2.3.2; docs/methods.md
// §10) and shows, side by side, where four placement policies put three tasks and how
// much data locality each gets:
//
//   - direct (FIFO) scheduling: the free slot goes to the highest-priority job with a
//     task waiting, local or not;
//   - delay scheduling (Alg. 2.1) with the thesis' waits W1 = 5 s, W2 = 20 s;
//   - delay scheduling with small waits, W1 = 1 s, W2 = 2 s;
//   - pre-release list placement (Alg. 4.1/4.2, speculate.FairPlacer), which has no
//     waits to tune.
//
// Direct and delay scheduling are the library's own: a fairness.Tree ordered by
// fairness.FIFO, a fairness.Pending locality index and a fairness.Delay (direct
// scheduling is fairness.Delay with both waits 0, "no delay at all"). The pre-release
// list placement is speculate.FairPlacer, given the state as a speculate.FairState.
//
// The scenario (the thesis' words, with the timings of package speculate's known-answer
// test, which the thesis leaves open): one FIFO queue; Job1, Job2 and Job3 have their
// input on Slot1, Slot2 and Slot3; priority Job1 > Job2 > Job3. Each slot is on a node
// of its own in a rack of its own. Slot3 is free at 0 s and asks for work; Slot2 frees
// at 5 s and Slot1 at 10 s (the order of the thesis' walk-through and table; its
// set-up sentence says Slot3, Slot1, Slot2 — docs/methods.md §10 adopts the former). A
// task computes for 60 s on any slot; a task whose data is elsewhere must first fetch its
// 128 MiB block across racks at 5 MiB/s (25.6 s), the thesis' simulated network.
//
// How to read the output. The first table has one row per slot, in the order the slots
// ask for work, and one column per policy: the job the slot runs, its locality, and
// "@t" — when the task can start computing (the slot's free time plus the transfer
// time; it ends 60 s later). The rows under it count the node-local tasks (the thesis'
// "locality ratio") and give the mean and the last of the three jobs' completion
// times. The traces after the table say why each policy decided as it did: which jobs
// delay scheduling let pass (and how long they had waited), and which busy slots the
// pre-release list promised to which job before giving the free slot away.
//
// What to expect (the thesis' Table 4.1): direct 1/3; delay 3/3 with the thesis' waits
// and 1/3 with small ones (Job1 has waited 5 s at Slot2's turn — past W1 + W2 = 3 s, so
// it takes Slot2 off-switch and leaves Slot1 to Job2); pre-release list Slot3→Job3,
// Slot2→Job2, Slot1→Job1, 3/3, without any wait to choose.
//
// Assumptions: no task finishes during the example (60 s tasks, the last slot frees at
// 10 s); each job has exactly one task; the pre-release list knows the time left of the
// tasks holding Slot1 and Slot2 exactly; delay scheduling's wait grows between
// heartbeats, which here are the three moments a slot frees.
//
// examples/thesis compares delay scheduling and the pre-release list on whole workloads
// in the library's simulator.
//
// The table fits 120 columns; -wide labels its summary rows as it once did, in the slot
// column alone (121 columns).
//
//	go run ./examples/locality
package main

import (
	"fmt"
	"log"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

// The scenario.
const (
	taskTime = 60 * time.Second // a task's compute time on any slot
	numSlots = 3
)

// slotFree says when each slot frees and asks for work, in that order.
var slotFree = []struct {
	slot string
	at   time.Duration
}{{"Slot3", 0}, {"Slot2", 5 * time.Second}, {"Slot1", 10 * time.Second}}

// jobs are the queue's jobs, highest priority first, and where their data is.
var jobs = []struct {
	id       string
	priority int
	home     string // the slot holding the job's input block
}{{"Job1", 3, "Slot1"}, {"Job2", 2, "Slot2"}, {"Job3", 1, "Slot3"}}

// rackOf puts every slot on a node and in a rack of its own.
func rackOf(slot string) string { return "rack-" + slot }

// taskOf names a job's only task.
func taskOf(job string) string { return job + "/task" }

// Assignment is one slot's outcome under a policy.
type Assignment struct {
	Slot     string
	FreeAt   time.Duration
	Job      string
	Locality fairness.Level
	// Start is when the task can start computing: FreeAt + transfer time.
	Start time.Duration
	// Done is when it finishes: Start + taskTime.
	Done time.Duration
}

// Outcome is a policy's result on the example.
type Outcome struct {
	Name   string
	Assign []Assignment
	// Local is the number of node-local tasks.
	Local int
	// Trace explains the decisions, one line each.
	Trace []string
}

// Result is the assignments as the thesis writes them: "Slot3→Job3 Slot2→Job2 ...".
func (o Outcome) Result() string {
	parts := make([]string, len(o.Assign))
	for i, a := range o.Assign {
		parts[i] = a.Slot + "→" + a.Job
	}
	return strings.Join(parts, " ")
}

// world is the state of the example as it unfolds: which slots are busy until when,
// which job's task waits, and how many tasks each job runs.
type world struct {
	busyUntil map[string]time.Duration // slot → when it frees
	holder    map[string]string        // slot → task holding it
	waiting   map[string]bool          // job → its task still waits
	running   map[string]int
}

func newWorld() *world {
	w := &world{
		// At 0 s Slot1 and Slot2 are held by earlier work; Slot3 is free.
		busyUntil: map[string]time.Duration{"Slot1": 10 * time.Second, "Slot2": 5 * time.Second},
		holder:    map[string]string{"Slot1": "earlier/1", "Slot2": "earlier/2"},
		waiting:   map[string]bool{},
		running:   map[string]int{},
	}
	for _, j := range jobs {
		w.waiting[j.id] = true
	}
	return w
}

// locality is the truth of where a job's data is relative to a slot.
func locality(job, slot string) fairness.Level {
	for _, j := range jobs {
		if j.id != job {
			continue
		}
		switch {
		case j.home == slot:
			return fairness.NodeLocal
		case rackOf(j.home) == rackOf(slot):
			return fairness.RackLocal
		}
	}
	return fairness.OffSwitch
}

// policy decides which job a free slot runs at time now; it may append to trace.
type policy interface {
	pick(w *world, slot string, now time.Duration, trace *[]string) (job string, err error)
}

// run drives a policy through the example and returns its outcome.
func run(name string, p policy, transfer func(fairness.Level) time.Duration) (Outcome, error) {
	w := newWorld()
	out := Outcome{Name: name}
	for _, sf := range slotFree {
		delete(w.busyUntil, sf.slot)
		delete(w.holder, sf.slot)
		job, err := p.pick(w, sf.slot, sf.at, &out.Trace)
		if err != nil {
			return Outcome{}, fmt.Errorf("%s at %s: %w", name, sf.slot, err)
		}
		if job == "" {
			return Outcome{}, fmt.Errorf("%s: %s got no job", name, sf.slot)
		}
		loc := locality(job, sf.slot)
		start := sf.at + transfer(loc)
		out.Assign = append(out.Assign, Assignment{Slot: sf.slot, FreeAt: sf.at, Job: job, Locality: loc, Start: start, Done: start + taskTime})
		if loc == fairness.NodeLocal {
			out.Local++
		}
		w.waiting[job] = false
		w.running[job]++
		w.busyUntil[sf.slot] = start + taskTime
		w.holder[sf.slot] = taskOf(job)
	}
	return out, nil
}

// delayPolicy is direct or delay scheduling as the library does it: jobs offered the
// slot in fairness.FIFO order from a fairness.Tree, each job's best locality there from
// a fairness.Pending index, and fairness.Delay deciding whether the job takes the slot
// or passes it up.
type delayPolicy struct {
	tree    *fairness.Tree
	pending *fairness.Pending
	delay   *fairness.Delay
	one     resource.Tuple // what a task holds: one slot
}

func newDelayPolicy(opts ...fairness.DelayOption) (*delayPolicy, error) {
	schema := resource.MustSchema(resource.Dimension{Name: "slots", Unit: "slot"})
	one := schema.MustTuple(1)
	tree, err := fairness.NewTree(schema, schema.MustTuple(numSlots), fairness.WithPolicy(fairness.FIFO{}))
	if err != nil {
		return nil, err
	}
	pending := fairness.NewPending()
	for i, j := range jobs {
		if err := tree.AddJob("", j.id, fairness.Priority(j.priority), fairness.SubmittedAt(time.Duration(i)*time.Second)); err != nil {
			return nil, err
		}
		if err := tree.AddPending(j.id, 1, one); err != nil {
			return nil, err
		}
		loc := fairness.Location{Node: j.home, Rack: rackOf(j.home)}
		if err := pending.Add(fairness.PendingTask{ID: taskOf(j.id), Job: j.id, Locations: []fairness.Location{loc}}); err != nil {
			return nil, err
		}
	}
	delay, err := fairness.NewDelay(opts...)
	if err != nil {
		return nil, err
	}
	return &delayPolicy{tree: tree, pending: pending, delay: delay, one: one}, nil
}

func (p *delayPolicy) pick(_ *world, slot string, now time.Duration, trace *[]string) (string, error) {
	if err := p.delay.Heartbeat(now); err != nil {
		return "", err
	}
	var chosen, task string
	var walkErr error
	var notes []string
	p.tree.Walk(func(job string) bool {
		best, ok := p.pending.Best(job, slot, rackOf(slot))
		if !ok {
			return true
		}
		waited := p.delay.State(job).Wait
		level, take, err := p.delay.Offer(job, best)
		if err != nil {
			walkErr = err
			return false
		}
		if !take {
			notes = append(notes, fmt.Sprintf("%s passes (%s here, waited %s)", job, best, seconds(waited)))
			return true
		}
		id, _, ok := p.pending.First(job, slot, rackOf(slot), level)
		if !ok {
			return true
		}
		chosen, task = job, id
		notes = append(notes, fmt.Sprintf("%s takes it (%s, waited %s)", job, level, seconds(waited)))
		return false
	})
	if walkErr != nil {
		return "", walkErr
	}
	*trace = append(*trace, fmt.Sprintf("%s %s frees:\n      %s", seconds(now), slot, strings.Join(notes, "\n      ")))
	if chosen == "" {
		return "", nil
	}
	if err := p.pending.Remove(task); err != nil {
		return "", err
	}
	if err := p.tree.Start(chosen, p.one, p.one); err != nil {
		return "", err
	}
	return chosen, nil
}

// prrlPolicy is the pre-release list placement, speculate.FairPlacer.
type prrlPolicy struct{ placer *speculate.FairPlacer }

// state builds the speculate.FairState the placer reads from the world at time now.
func state(w *world, now time.Duration) speculate.FairState {
	st := speculate.FairState{Racks: map[string]string{}}
	for _, sf := range slotFree {
		st.Racks[sf.slot] = rackOf(sf.slot)
	}
	pool := speculate.Pool{ID: "default", Order: speculate.FIFOJobs}
	for i, j := range jobs {
		pj := speculate.PoolJob{
			ID: j.id, Priority: j.priority, Submitted: time.Duration(i) * time.Second,
			Running: w.running[j.id], TaskTime: speculate.NodeTimes{Default: taskTime},
		}
		if w.waiting[j.id] {
			pj.Pending = []speculate.PendingTask{{ID: taskOf(j.id), Locations: []speculate.Location{{Node: j.home, Rack: rackOf(j.home)}}}}
		}
		pool.Jobs = append(pool.Jobs, pj)
	}
	st.Pools = []speculate.Pool{pool}
	// Busy slots in slot order (map iteration is random; the output must not be).
	for k := numSlots; k >= 1; k-- {
		slot := fmt.Sprintf("Slot%d", k)
		if until, ok := w.busyUntil[slot]; ok {
			st.Busy = append(st.Busy, speculate.BusySlot{Task: w.holder[slot], Node: slot, TimeLeft: until - now})
		}
	}
	return st
}

func (p prrlPolicy) pick(w *world, slot string, now time.Duration, trace *[]string) (string, error) {
	pl, err := p.placer.Place(state(w, now), slot)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, pa := range pl.PreAssigned {
		notes = append(notes, fmt.Sprintf("%s promised %s (frees in %s, its task done %s from now)", pa.Job, pa.Slot.Node, seconds(pa.Slot.TimeLeft), seconds(pa.Finish)))
	}
	if pl.Assigned {
		notes = append(notes, fmt.Sprintf("%s runs here (%s, done %s from now)", pl.Job, pl.Locality, seconds(pl.Finish)))
	} else {
		notes = append(notes, "nothing runs here")
	}
	*trace = append(*trace, fmt.Sprintf("%s %s frees:\n      %s", seconds(now), slot, strings.Join(notes, "\n      ")))
	return pl.Job, nil
}

// outcomes runs the four policies on the example.
func outcomes() ([]Outcome, error) {
	placer, err := speculate.NewFairPlacer()
	if err != nil {
		return nil, err
	}
	direct, err := newDelayPolicy(fairness.WithWaits(0, 0))
	if err != nil {
		return nil, err
	}
	thesis, err := newDelayPolicy() // W1 = 5 s, W2 = 20 s
	if err != nil {
		return nil, err
	}
	small, err := newDelayPolicy(fairness.WithWaits(time.Second, 2*time.Second))
	if err != nil {
		return nil, err
	}
	w1, w2 := thesis.delay.Waits()
	s1, s2 := small.delay.Waits()
	runs := []struct {
		name string
		p    policy
	}{
		{"direct (FIFO)", direct},
		{fmt.Sprintf("delay W1=%v W2=%v", w1, w2), thesis},
		{fmt.Sprintf("delay W1=%v W2=%v", s1, s2), small},
		{"pre-release list", prrlPolicy{placer}},
	}
	var out []Outcome
	for _, r := range runs {
		o, err := run(r.name, r.p, placer.Transfer)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

const synopsis = `
Replays the PRRL thesis' Table 4.1 example: where direct (FIFO) scheduling, delay
scheduling with the thesis' waits and with small waits, and pre-release list placement
put three tasks, when each can start and how much data locality each gets.`

func main() {
	fs := cli.NewFlags("locality", synopsis)
	wide := fs.Bool("wide", false, "label the table's summary rows in the slot column alone (a table 121 characters wide), not across the first two columns to fit 120")
	if err := cli.Parse(fs, os.Args[1:]); err != nil {
		cli.Exit("locality", err)
	}
	log.SetFlags(0)
	outs, err := outcomes()
	if err != nil {
		log.Fatalf("locality: %v", err)
	}
	placer, _ := speculate.NewFairPlacer()
	fmt.Println("PRRL thesis Table 4.1: one FIFO queue, priority Job1 > Job2 > Job3; Job1's data on Slot1,")
	fmt.Println("Job2's on Slot2, Job3's on Slot3; each slot a node in a rack of its own.")
	fmt.Printf("A task computes %s; a non-local one first fetches its block across racks (%s).\n", seconds(taskTime), seconds(placer.Transfer(fairness.OffSwitch)))
	fmt.Println("Slot3 is free at 0s, Slot2 frees at 5s, Slot1 at 10s. Cells: job, locality, @ when it can start.")
	fmt.Println()

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	header := "slot\tfrees at"
	for _, o := range outs {
		header += "\t" + o.Name
	}
	fmt.Fprintln(tw, header)
	for i, sf := range slotFree {
		row := fmt.Sprintf("%s\t%s", sf.slot, seconds(sf.at))
		for _, o := range outs {
			a := o.Assign[i]
			row += fmt.Sprintf("\t%s %s @%s", a.Job, a.Locality, seconds(a.Start))
		}
		fmt.Fprintln(tw, row)
	}
	// The summary rows' labels: "jobs done: mean" in the slot column would widen it
	// past 120 columns in all; by default "mean" goes under "frees at" instead.
	mean, last := "jobs done: mean\t", "jobs done: last\t"
	if !*wide {
		mean, last = "jobs done:\tmean", "jobs done:\tlast"
	}
	row := "node-local\t"
	for _, o := range outs {
		row += fmt.Sprintf("\t%d/%d", o.Local, len(o.Assign))
	}
	fmt.Fprintln(tw, row)
	row = mean
	for _, o := range outs {
		var sum time.Duration
		for _, a := range o.Assign {
			sum += a.Done
		}
		row += "\t" + seconds(sum/time.Duration(len(o.Assign)))
	}
	fmt.Fprintln(tw, row)
	row = last
	for _, o := range outs {
		var last time.Duration
		for _, a := range o.Assign {
			last = max(last, a.Done)
		}
		row += "\t" + seconds(last)
	}
	fmt.Fprintln(tw, row)
	if err := tw.Flush(); err != nil {
		log.Fatalf("locality: %v", err)
	}

	fmt.Println()
	fmt.Println("Thesis Table 4.1: direct 1/3; delay 1/3 or 3/3 depending on W1/W2; pre-release list 3/3.")
	for _, o := range outs {
		fmt.Printf("\n%s: %s (%d/%d node-local)\n", o.Name, o.Result(), o.Local, len(o.Assign))
		for _, t := range o.Trace {
			fmt.Println("  " + t)
		}
	}
}
