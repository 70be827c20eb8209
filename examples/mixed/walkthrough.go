package main

// The walk-through (-walkthrough): the library's scale-up parts called by hand, in the
// order an embedder would, on one small cluster built by hand — 6 nodes of 16 cores and
// 64 GiB, each running a few batch tasks and latency-sensitive (LS) tasks:
//
//  1. predict.DetectStraggler on each LS task's last four progress samples (S1–S4):
//     speeds v1 and v2 over the older and the newer pair, predicted finish T;
//  2. speculate.ScaleUp for each straggler: the extra CPU that brings T within the SLO;
//  3. predict.DetectRedundant on each batch task's usage samples (T1–T2): Uc = peak
//     used / allocated against the expected utilisation U_ECRU, and the reclaimable
//     amount Rr;
//  4. speculate.Planner.Plan (steps 1–10) on the nodes, stragglers, two new LS tasks'
//     demand and the batch tasks; Planner.Apply applies the steps to the node totals
//     and checks that no non-compressible dimension (memory) goes over capacity;
//  5. later, when the LS tasks have finished, a second Plan with the shrunk batch tasks
//     (speculate.Shrunk) and no stragglers: the recovery plan.
//
// How to read it. The LS table gives each task's progress samples, v1 and v2
// (progress per second, in %), the predicted run time against T_SLO, the verdict and
// the extra CPU ScaleUp asks for. The batch table gives each task's allocation, peak
// use, Uc per dimension, what is reclaimable (Rr) and what may be preempted (Rp). The
// plan lists its steps in the order to apply them (reclaim, preempt, expand, move) with
// the amount and node(s); "for X" marks a reclaim or preemption made on straggler X's
// own node so it can expand in place. Then: the nodes before and after, each
// straggler's new allocation and its predicted run time at that allocation, the batch
// loss (what the plan took from batch tasks as a share of their allocation; reclaimed
// amounts were unused, preempted ones slow the batch task down), any preempted CPU that
// ends up idle (the planner sizes reclaim and preemption against R_M, a cluster-wide
// sum, before it knows which node each straggler will use), and the recovery plan.
//
// Assumptions (ours; the patent gives no numbers): a task's speed is proportional to
// its CPU allocation (ScaleUp's Reading — work conserved as under compression, eq. 4),
// so the predicted run time after scale-up is the remaining time at the old speed
// divided by the CPU growth; memory is not compressible, so it is never preempted
// (preempting it would kill, and the method is kill-free), only reclaimed where unused;
// a move keeps the task's progress (a container migration whose cost we ignore); the
// new LS tasks are placed first-fit after the plan; U_ECRU is 80% on both dimensions; a
// batch task may be preempted down to half its CPU, lower priority first. Usage samples
// are drawn from a seeded source, so the output is the same on every run.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/predict"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/speculate"
)

const (
	cpu = 0 // slot of the cpu dimension in schema
	mem = 1 // slot of the memory dimension

	gib = int64(1) << 30

	slo        = 120 * time.Second // T_SLO: the longest run time an LS task may take
	now        = 120 * time.Second // when the monitor decides
	samplePer  = 10 * time.Second  // LS progress is sampled this often
	expectedU  = 0.8               // U_ECRU, on cpu and memory
	preemptMax = 0.5               // a batch task may lose up to this share of its CPU
	recoveryAt = 300 * time.Second // when the LS tasks have all finished
)

// schema is cpu (milli-cores, compressible) and memory (bytes, not compressible).
var schema = resource.MustSchema(resource.CPU, resource.Memory)

// tuple makes a tuple of cores and GiB.
func tuple(cores float64, gibs int64) resource.Tuple {
	return schema.MustTuple(int64(cores*1000), gibs*gib)
}

// ft formats a tuple as "3.5c 12G".
func ft(t resource.Tuple) string {
	return fmt.Sprintf("%.2fc %dG", float64(t[cpu])/1000, t[mem]/gib)
}

// nodeCap is every node's capacity.
var nodeCap = tuple(16, 64)

// lsTask is a latency-sensitive task: where it runs, what it holds, when it started
// and its progress at the four most recent samples (now − 30 s … now).
type lsTask struct {
	id, node string
	alloc    resource.Tuple
	start    time.Duration
	progress [4]float64
}

var lsTasks = []lsTask{
	{"ls-a", "node1", tuple(2, 4), 40 * time.Second, [4]float64{0.40, 0.47, 0.51, 0.55}}, // slowing
	{"ls-b", "node2", tuple(2, 4), 50 * time.Second, [4]float64{0.45, 0.51, 0.56, 0.60}}, // slowing
	{"ls-c", "node2", tuple(2, 4), 60 * time.Second, [4]float64{0.30, 0.40, 0.50, 0.60}}, // steady, on time
	{"ls-d", "node3", tuple(4, 8), 40 * time.Second, [4]float64{0.52, 0.59, 0.65, 0.70}}, // slowing
	{"ls-e", "node4", tuple(2, 4), 50 * time.Second, [4]float64{0.30, 0.34, 0.40, 0.48}}, // speeding up
	{"ls-f", "node5", tuple(2, 4), 70 * time.Second, [4]float64{0.25, 0.30, 0.34, 0.37}}, // slowing
	{"ls-g", "node6", tuple(2, 4), 80 * time.Second, [4]float64{0.20, 0.30, 0.40, 0.50}}, // steady, on time
}

// newLS are the demands of newly arrived LS tasks (R_NE includes them).
var newLS = []resource.Tuple{tuple(2, 4), tuple(2, 4)}

// batchTask is a batch task: its allocation, how much of it its peak uses (the samples
// are drawn below that), and its preemption priority (lower first).
type batchTask struct {
	id, node   string
	alloc      resource.Tuple
	peakCPU    float64 // peak use as a share of the allocation
	peakMem    float64
	priority   int
	preemptive bool // may be preempted at all
}

var batchTasks = []batchTask{
	{"etl-1", "node1", tuple(6, 24), 0.95, 0.90, 1, true},
	{"etl-2", "node1", tuple(6, 24), 0.40, 0.50, 1, true}, // over-allocated
	{"ml-1", "node2", tuple(6, 24), 0.97, 0.92, 2, false},
	{"ml-2", "node2", tuple(6, 16), 0.96, 0.90, 2, false},
	{"etl-3", "node3", tuple(6, 24), 0.92, 0.85, 1, true},
	{"backfill-1", "node3", tuple(6, 24), 0.98, 0.88, 0, true},
	{"etl-4", "node4", tuple(4, 16), 0.35, 0.45, 1, true}, // over-allocated
	{"report-1", "node4", tuple(10, 32), 0.94, 0.90, 1, true},
	{"backfill-2", "node5", tuple(8, 32), 0.97, 0.90, 0, true},
	{"etl-5", "node5", tuple(4, 16), 0.85, 0.88, 1, true},
	{"ml-3", "node6", tuple(8, 32), 0.95, 0.90, 2, false},
}

var nodeIDs = []string{"node1", "node2", "node3", "node4", "node5", "node6"}

// straggler is an LS task's verdict and the expansion it needs.
type straggler struct {
	task    lsTask
	verdict predict.StragglerVerdict
	extra   resource.Tuple
}

// outcome is what the walk-through found, for the test.
type outcome struct {
	stragglers, served int
	// taken is what the scale-up plan took from batch tasks; owed what recovery did
	// not give back.
	taken, owed resource.Tuple
}

// walkthroughTo runs the walk-through, writing its report to w; a failed write is its
// error.
func walkthroughTo(w io.Writer) (outcome, error) {
	out := output.NewWriter(w)
	o, err := walkthrough(out)
	if err == nil {
		err = out.Err()
	}
	return o, err
}

// walkthrough runs the walk-through, writing its report to out.
func walkthrough(out io.Writer) (outcome, error) {
	r := rand.New(rand.NewPCG(2, 11))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	flush := func() error { return tw.Flush() }

	fmt.Fprintf(out, "Mixed workload on %d nodes of %s each; now = %s; T_SLO = %s for every latency-sensitive (LS) task.\n\n", len(nodeIDs), ft(nodeCap), secs(now), secs(slo))

	// 1–2. Stragglers among the LS tasks, and what they need.
	fmt.Fprintln(out, "Latency-sensitive tasks (predict.DetectStraggler on the last four samples; extra CPU by speculate.ScaleUp)")
	fmt.Fprintln(tw, "task\tnode\talloc\tstart\tprogress at 90/100/110/120s\tv1 %/s\tv2 %/s\tpredicted run\tverdict\textra")
	var stragglers []straggler
	for _, t := range lsTasks {
		samples := make([]predict.ProgressSample, len(t.progress))
		for i, p := range t.progress {
			samples[i] = predict.ProgressSample{At: now - time.Duration(len(t.progress)-1-i)*samplePer, Progress: p}
		}
		v, err := predict.DetectStraggler(samples, t.start, slo)
		if err != nil {
			return outcome{}, fmt.Errorf("%s: %w", t.id, err)
		}
		verdict, extra := "on time", "-"
		switch {
		case v.V2 > v.V1:
			verdict = "speeding up"
		case v.Straggler:
			verdict = "STRAGGLER"
			x, err := speculate.ScaleUp(schema, v, now, t.start, slo, t.alloc)
			if err != nil {
				return outcome{}, fmt.Errorf("%s: %w", t.id, err)
			}
			stragglers = append(stragglers, straggler{task: t, verdict: v, extra: x})
			extra = "+" + ft(x)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f %.2f %.2f %.2f\t%.2f\t%.2f\t%.0fs\t%s\t%s\n", t.id, t.node, ft(t.alloc), secs(t.start),
			t.progress[0], t.progress[1], t.progress[2], t.progress[3], 100*v.V1, 100*v.V2, v.Runtime.Seconds(), verdict, extra)
	}
	if err := flush(); err != nil {
		return outcome{}, err
	}
	var newDemand resource.Tuple
	var newNames []string
	for i, t := range newLS {
		newDemand = newDemand.Add(t)
		newNames = append(newNames, fmt.Sprintf("ls-new%d %s", i+1, ft(t)))
	}
	fmt.Fprintf(out, "new latency-sensitive tasks arriving: %s\n\n", strings.Join(newNames, ", "))

	// 3. Redundant batch tasks, and what may be taken from each.
	fmt.Fprintf(out, "Batch tasks (predict.DetectRedundant, U_ECRU = %.0f%%; preemptible: up to %.0f%% of CPU, never memory)\n", 100*expectedU, 100*preemptMax)
	fmt.Fprintln(tw, "task\tnode\tprio\talloc\tpeak used\tUc cpu\tUc mem\treclaimable Rr\tpreemptible Rp")
	var batch []speculate.BatchTask
	var batchAlloc resource.Tuple
	for _, b := range batchTasks {
		usage := make([]resource.Tuple, 12)
		for i := range usage {
			f := 0.75 + 0.25*r.Float64()
			usage[i] = schema.MustTuple(int64(float64(b.alloc[cpu])*b.peakCPU*f), int64(float64(b.alloc[mem])*b.peakMem*f))
		}
		red, err := predict.DetectRedundant(schema, usage, b.alloc, resource.Vector{expectedU, expectedU})
		if err != nil {
			return outcome{}, fmt.Errorf("%s: %w", b.id, err)
		}
		var rp resource.Tuple
		if b.preemptive {
			// Preempt only CPU, down to preemptMax of the allocation, beyond what is reclaimed.
			rp[cpu] = max(0, int64(float64(b.alloc[cpu])*preemptMax)-red.Reclaimable[cpu])
		}
		batch = append(batch, speculate.BatchTask{Task: b.id, Node: b.node, Allocated: b.alloc, Reclaimable: red.Reclaimable, Preemptible: rp, Priority: b.priority})
		batchAlloc = batchAlloc.Add(b.alloc)
		rr, rps := "-", "-"
		if red.IsRedundant() {
			rr = ft(red.Reclaimable)
		}
		if !rp.IsZero() {
			rps = ft(rp)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.0f%%\t%.0f%%\t%s\t%s\n", b.id, b.node, b.priority, ft(b.alloc), ft(red.Peak),
			100*red.Utilisation[cpu], 100*red.Utilisation[mem], rr, rps)
	}
	if err := flush(); err != nil {
		return outcome{}, err
	}
	fmt.Fprintln(out)

	// The nodes: what their tasks hold.
	alloc := map[string]resource.Tuple{} // task → allocation, kept up to date as steps apply
	where := map[string]string{}         // task → node
	for _, t := range lsTasks {
		alloc[t.id], where[t.id] = t.alloc, t.node
	}
	for _, b := range batchTasks {
		alloc[b.id], where[b.id] = b.alloc, b.node
	}
	nodes := nodesFrom(alloc, where)

	// 4. The plan.
	planner, err := speculate.NewPlanner(schema)
	if err != nil {
		return outcome{}, err
	}
	in := speculate.PlanInput{Nodes: nodes, NewDemand: newDemand, Batch: batch}
	for _, s := range stragglers {
		in.Stragglers = append(in.Stragglers, speculate.Straggler{Task: s.task.id, Node: s.task.node, Allocated: s.task.alloc, Extra: s.extra})
	}
	plan, err := planner.Plan(in)
	if err != nil {
		return outcome{}, err
	}
	after, err := planner.Apply(nodes, plan.Steps)
	if err != nil {
		return outcome{}, err
	}
	fmt.Fprintln(out, "Scale-up plan (speculate.Planner.Plan)")
	if plan.Idle.Covers(plan.Need) {
		fmt.Fprintf(out, "R_IDLE %s covers R_NE %s (stragglers' extra + new tasks): nothing to take from batch tasks\n", ft(plan.Idle), ft(plan.Need))
	} else {
		fmt.Fprintf(out, "R_IDLE %s does not cover R_NE %s (stragglers' extra + new tasks): reclaim first, then preempt\n", ft(plan.Idle), ft(plan.Need))
	}
	if err := printSteps(tw, plan.Steps); err != nil {
		return outcome{}, err
	}
	fmt.Fprintf(out, "reclaimed %s + preempted %s → R_M = %s covers R_NE: %v; unserved stragglers: %d\n\n",
		ft(plan.Reclaimed), ft(plan.Preempted), ft(plan.Available), plan.Covered(), len(plan.Unserved))

	// Carry the steps out on the tasks, as an embedder resizing containers would.
	for _, st := range plan.Steps {
		switch st.Kind {
		case speculate.Reclaim, speculate.Preempt:
			alloc[st.Task] = alloc[st.Task].Sub(st.Amount)
		case speculate.Expand, speculate.Restore:
			alloc[st.Task] = alloc[st.Task].Add(st.Amount)
		case speculate.Move:
			alloc[st.Task], where[st.Task] = st.Amount, st.Node
		}
	}
	if err := sameTotals(nodesFrom(alloc, where), after); err != nil {
		return outcome{}, err
	}
	// The new LS tasks go to the first node with room for each.
	var placed []string
	for k, t := range newLS {
		id := fmt.Sprintf("ls-new%d", k+1)
		for i, n := range after {
			if n.Capacity.Sub(n.Allocated).Covers(t) {
				after[i].Allocated = n.Allocated.Add(t)
				alloc[id], where[id] = t, n.ID
				placed = append(placed, id+" on "+n.ID)
				break
			}
		}
		if where[id] == "" {
			placed = append(placed, id+" on no node: it fits on none (R_M is a cluster-wide sum)")
		}
	}
	fmt.Fprintf(out, "Nodes: allocated and free before → after the plan and placing %s (first fit)\n", strings.Join(placed, ", "))
	fmt.Fprintln(tw, "node\tbefore\tfree\tafter\tfree\tmemory within capacity")
	for i, n := range nodes {
		a := after[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", n.ID, ft(n.Allocated), ft(n.Capacity.Sub(n.Allocated)), ft(a.Allocated),
			ft(a.Capacity.Sub(a.Allocated)), a.Allocated[mem] <= a.Capacity[mem])
	}
	if err := flush(); err != nil {
		return outcome{}, err
	}
	fmt.Fprintln(out)

	// Every straggler served?
	fmt.Fprintln(out, "Stragglers after the plan (speed taken as proportional to CPU)")
	fmt.Fprintln(tw, "task\tnode\talloc\tpredicted run before\tafter\tT_SLO met")
	served := 0
	for _, s := range stragglers {
		t := s.task
		a := alloc[t.id]
		left := s.verdict.Finish - now
		newLeft := time.Duration(float64(left) * float64(t.alloc[cpu]) / float64(a[cpu]))
		runtime := now + newLeft - t.start
		ok := runtime <= slo && a[cpu] > t.alloc[cpu]
		if ok {
			served++
		}
		node := where[t.id]
		if node != t.node {
			node = t.node + "→" + node
		}
		fmt.Fprintf(tw, "%s\t%s\t%s→%s\t%.0fs\t%.0fs\t%v\n", t.id, node, ft(t.alloc), ft(a), s.verdict.Runtime.Seconds(), runtime.Seconds(), ok)
	}
	if err := flush(); err != nil {
		return outcome{}, err
	}
	fmt.Fprintf(out, "stragglers served: %d of %d\n\n", served, len(stragglers))

	// Batch loss.
	fmt.Fprintln(out, "Batch loss (taken from batch tasks, as a share of their allocation)")
	fmt.Fprintln(tw, "\tcpu\tmemory")
	loss := func(name string, t resource.Tuple) {
		fmt.Fprintf(tw, "%s\t%.2fc (%.1f%%)\t%dG (%.1f%%)\n", name, float64(t[cpu])/1000, 100*float64(t[cpu])/float64(batchAlloc[cpu]),
			t[mem]/gib, 100*float64(t[mem])/float64(batchAlloc[mem]))
	}
	fmt.Fprintf(tw, "batch allocation\t%.1fc\t%dG\n", float64(batchAlloc[cpu])/1000, batchAlloc[mem]/gib)
	loss("reclaimed (unused)", plan.Reclaimed)
	loss("preempted (slows batch)", plan.Preempted)
	loss("total", plan.Reclaimed.Add(plan.Preempted))
	if err := flush(); err != nil {
		return outcome{}, err
	}
	// R_M is a cluster-wide sum: a preemption may free room on a node that, once the
	// stragglers have expanded or moved, nobody uses. Report it rather than hide it.
	preemptedOn := map[string]resource.Tuple{}
	for _, st := range plan.Steps {
		if st.Kind == speculate.Preempt {
			preemptedOn[st.Node] = preemptedOn[st.Node].Add(st.Amount)
		}
	}
	var idle []string
	for _, n := range after {
		p := preemptedOn[n.ID]
		if x := min(p[cpu], max(0, n.Capacity[cpu]-n.Allocated[cpu])); x > 0 {
			idle = append(idle, fmt.Sprintf("%.2fc on %s", float64(x)/1000, n.ID))
		}
	}
	if len(idle) == 0 {
		fmt.Fprintln(out, "every preempted core is in use after the plan")
	} else {
		fmt.Fprintf(out, "preempted but left idle after the plan and placement: %s\n", strings.Join(idle, ", "))
	}
	if err := flush(); err != nil {
		return outcome{}, err
	}
	fmt.Fprintln(out)

	// 5. Recovery: at recoveryAt every LS task has finished and left its node.
	var shrunk []speculate.Shrunk
	byTask := map[string]int{}
	for _, st := range plan.Steps {
		if st.Kind != speculate.Reclaim && st.Kind != speculate.Preempt {
			continue
		}
		i, ok := byTask[st.Task]
		if !ok {
			i = len(shrunk)
			byTask[st.Task] = i
			shrunk = append(shrunk, speculate.Shrunk{Task: st.Task, Node: st.Node})
		}
		shrunk[i].Taken = shrunk[i].Taken.Add(st.Amount)
		shrunk[i].Preempted = shrunk[i].Preempted || st.Kind == speculate.Preempt
	}
	for id := range alloc {
		if strings.HasPrefix(id, "ls-") {
			delete(alloc, id)
			delete(where, id)
		}
	}
	nodes2 := nodesFrom(alloc, where)
	var batch2 []speculate.BatchTask
	for _, b := range batchTasks {
		batch2 = append(batch2, speculate.BatchTask{Task: b.id, Node: b.node, Allocated: alloc[b.id]})
	}
	rec, err := planner.Plan(speculate.PlanInput{Nodes: nodes2, Batch: batch2, Shrunk: shrunk})
	if err != nil {
		return outcome{}, err
	}
	if _, err := planner.Apply(nodes2, rec.Steps); err != nil {
		return outcome{}, err
	}
	fmt.Fprintf(out, "Recovery at %s: the LS tasks have finished; idle %s; the shrunk batch tasks get back what was taken\n", secs(recoveryAt), ft(rec.Idle))
	if err := printSteps(tw, rec.Steps); err != nil {
		return outcome{}, err
	}
	taken := plan.Reclaimed.Add(plan.Preempted)
	left := taken.Sub(rec.Restored)
	fmt.Fprintf(out, "restored %s of %s taken; still owed to batch tasks: %s\n", ft(rec.Restored), ft(taken), ft(left))
	return outcome{stragglers: len(stragglers), served: served, taken: taken, owed: left}, nil
}

// nodesFrom sums the tasks' allocations per node, in node order.
func nodesFrom(alloc map[string]resource.Tuple, where map[string]string) []speculate.Node {
	tasks := make([]string, 0, len(alloc))
	for id := range alloc {
		tasks = append(tasks, id)
	}
	slices.Sort(tasks)
	nodes := make([]speculate.Node, len(nodeIDs))
	for i, id := range nodeIDs {
		nodes[i] = speculate.Node{ID: id, Capacity: nodeCap}
		for _, t := range tasks {
			if where[t] == id {
				nodes[i].Allocated = nodes[i].Allocated.Add(alloc[t])
			}
		}
	}
	return nodes
}

// sameTotals checks that the per-task bookkeeping agrees with Planner.Apply's totals.
func sameTotals(a, b []speculate.Node) error {
	for i := range a {
		if a[i].Allocated != b[i].Allocated {
			return fmt.Errorf("%s: tasks hold %s, Apply says %s", a[i].ID, ft(a[i].Allocated), ft(b[i].Allocated))
		}
	}
	return nil
}

func printSteps(tw *tabwriter.Writer, steps []speculate.Step) error {
	fmt.Fprintln(tw, "#\tstep\ttask\tnode\tamount\tnote")
	for i, st := range steps {
		node, note := st.Node, ""
		switch st.Kind {
		case speculate.Move:
			node = st.From + "→" + st.Node
			note = "frees " + ft(st.Released) + " on " + st.From
		case speculate.Reclaim, speculate.Preempt:
			if st.For != "" {
				note = "for " + st.For + " on its node"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, st.Kind, st.Task, node, ft(st.Amount), note)
	}
	return tw.Flush()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.0fs", d.Seconds()) }
