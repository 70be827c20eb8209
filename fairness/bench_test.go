package fairness_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/finegrain/finegrain/fairness"
	"github.com/finegrain/finegrain/resource"
)

// The reference Scheduler's budget (the project's performance budget in the README): one
// pull heartbeat with 1,000 jobs and 100,000 pending tasks in ≤ 200 µs. These benchmarks
// build that scale: 10 queues of 100 jobs, 100 pending tasks a job, tasks of assorted
// shapes, 1,000 nodes in 25 racks, three replicas a task.
const (
	benchQueues   = 10
	benchJobs     = 1000
	benchTasks    = 100 // per job
	benchNodes    = 1000
	benchRacks    = 25
	benchReplicas = 3
)

var benchSchema = resource.Standard()

func benchCapacity() resource.Tuple {
	return benchSchema.MustTuple(benchNodes*32000, benchNodes*128<<30, benchNodes*1<<30, benchNodes*1<<30, benchNodes*4<<40, benchNodes*4)
}

func benchRequest(rng *rand.Rand) resource.Tuple {
	return benchSchema.MustTuple(int64(500+rng.IntN(4000)), int64(1+rng.IntN(16))<<30, int64(rng.IntN(100))<<20, int64(rng.IntN(100))<<20, 0, 0)
}

// Names are made once, as an orchestrator keeps its node and job names.
var (
	jobIDs    = names("job-", benchJobs)
	nodeNames = names("n", benchNodes)
	rackNames = names("r", benchRacks)
)

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(prefix, i)
	}
	return out
}

func jobID(j int) string { return jobIDs[j] }

func benchTree(b *testing.B, p fairness.Policy, pendingPerJob int) (*fairness.Tree, []resource.Tuple) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	tree, err := fairness.NewTree(benchSchema, benchCapacity(), fairness.WithPolicy(p))
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]resource.Tuple, benchJobs)
	for q := range benchQueues {
		if err := tree.AddQueue("", fmt.Sprint("q", q), fairness.Weight(float64(1+q%3))); err != nil {
			b.Fatal(err)
		}
	}
	for j := range benchJobs {
		id := jobID(j)
		if err := tree.AddJob(fmt.Sprint("q", j%benchQueues), id, fairness.SubmittedAt(time.Duration(j)), fairness.Priority(j%5)); err != nil {
			b.Fatal(err)
		}
		reqs[j] = benchRequest(rng)
		if err := tree.AddPending(id, pendingPerJob, reqs[j].Scale(float64(pendingPerJob))); err != nil {
			b.Fatal(err)
		}
		for range rng.IntN(20) { // some tasks already running
			if err := tree.Start(id, reqs[j], reqs[j]); err != nil {
				b.Fatal(err)
			}
		}
	}
	return tree, reqs
}

// BenchmarkTreeNextStart is one scheduling decision at scale: pick the next job in
// hierarchical order and start one of its tasks (re-keying the job and its queue).
func BenchmarkTreeNextStart(b *testing.B) {
	for _, p := range []fairness.Policy{fairness.DRF{}, fairness.Fair{}, fairness.FIFO{}, fairness.Capacity{}} {
		b.Run(fmt.Sprintf("%T", p)[9:], func(b *testing.B) {
			tree, reqs := benchTree(b, p, benchTasks+b.N/benchJobs+1)
			idx := map[string]int{}
			for j := range benchJobs {
				idx[jobID(j)] = j
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				job, ok := tree.Next()
				if !ok {
					b.Fatal("no job")
				}
				r := reqs[idx[job]]
				if err := tree.Start(job, r, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTreeScale shows how a decision (Next + Start under DRF) grows with the number
// of jobs, spread over 10 queues: O(log n).
func BenchmarkTreeScale(b *testing.B) {
	for _, jobs := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(jobs, "-jobs"), func(b *testing.B) {
			task := benchSchema.MustTuple(1000, 2<<30)
			tree, err := fairness.NewTree(benchSchema, benchCapacity())
			if err != nil {
				b.Fatal(err)
			}
			for q := range benchQueues {
				if err := tree.AddQueue("", fmt.Sprint("q", q)); err != nil {
					b.Fatal(err)
				}
			}
			per := b.N/jobs + 2
			for j := range jobs {
				id := fmt.Sprint("job-", j)
				if err := tree.AddJob(fmt.Sprint("q", j%benchQueues), id, fairness.SubmittedAt(time.Duration(j))); err != nil {
					b.Fatal(err)
				}
				if err := tree.AddPending(id, per, task.Scale(float64(per))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				job, _ := tree.Next()
				if err := tree.Start(job, task, task); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTreeCycle is a steady state: pick and start a task, and let the task started
// 1,000 decisions earlier finish (release) and its job submit another, so the tree
// neither grows nor drains.
func BenchmarkTreeCycle(b *testing.B) {
	tree, reqs := benchTree(b, fairness.DRF{}, benchTasks)
	idx := map[string]int{}
	for j := range benchJobs {
		idx[jobID(j)] = j
	}
	var ring [1000]int
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		job, ok := tree.Next()
		if !ok {
			b.Fatal("no job")
		}
		j := idx[job]
		if err := tree.Start(job, reqs[j], reqs[j]); err != nil {
			b.Fatal(err)
		}
		slot := &ring[i%len(ring)]
		if i >= len(ring) {
			old := *slot
			if err := tree.Release(jobID(old), reqs[old]); err != nil {
				b.Fatal(err)
			}
			if err := tree.AddPending(jobID(old), 1, reqs[old]); err != nil {
				b.Fatal(err)
			}
		}
		*slot = j
	}
}

// BenchmarkTreeWalk visits all 1,000 eligible jobs in order: the worst case of a
// heartbeat in which every job passes the offer up.
func BenchmarkTreeWalk(b *testing.B) {
	tree, _ := benchTree(b, fairness.DRF{}, benchTasks)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		n := 0
		tree.Walk(func(string) bool { n++; return true })
		if n != benchJobs {
			b.Fatal(n)
		}
	}
}

type benchCluster struct {
	tree    *fairness.Tree
	pending *fairness.Pending
	delay   *fairness.Delay
	reqs    []resource.Tuple
	idx     map[string]int
	rng     *rand.Rand
	seq     int
}

func (c *benchCluster) addTask(j int) error {
	c.seq++
	locs := make([]fairness.Location, benchReplicas)
	for i := range locs {
		n := c.rng.IntN(benchNodes)
		locs[i] = fairness.Location{Node: nodeNames[n], Rack: rackNames[n%benchRacks]}
	}
	return c.pending.Add(fairness.PendingTask{ID: fmt.Sprint("t", c.seq), Job: jobID(j), Submitted: time.Duration(c.seq), Locations: locs})
}

func newBenchCluster(b *testing.B) *benchCluster {
	tree, reqs := benchTree(b, fairness.DRF{}, benchTasks)
	d, err := fairness.NewDelay()
	if err != nil {
		b.Fatal(err)
	}
	c := &benchCluster{tree: tree, pending: fairness.NewPending(), delay: d, reqs: reqs, idx: map[string]int{}, rng: rand.New(rand.NewPCG(3, 4))}
	for j := range benchJobs {
		c.idx[jobID(j)] = j
		for range benchTasks {
			if err := c.addTask(j); err != nil {
				b.Fatal(err)
			}
		}
	}
	return c
}

// BenchmarkHeartbeat is the fairness part of one pull heartbeat (Alg. 1 lines 4–6 with
// Alg. 2.1) at 1,000 jobs / 100,000 pending tasks: a node offers, the jobs are walked in
// hierarchical DRF order, each asked for its best locality there and whether delay
// scheduling lets it take it, and the first that does starts its task. To stay in a
// steady state the task is then resubmitted (a fresh pending task of the same job) and
// the job's oldest running task finishes. Heartbeats come 10 ms apart from random nodes.
func BenchmarkHeartbeat(b *testing.B) {
	c := newBenchCluster(b)
	now := time.Duration(0)
	walked, placed := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now += 10 * time.Millisecond
		n := c.rng.IntN(benchNodes)
		node, rack := nodeNames[n], rackNames[n%benchRacks]
		if err := c.delay.Heartbeat(now); err != nil {
			b.Fatal(err)
		}
		var job, task string
		c.tree.Walk(func(j string) bool {
			walked++
			best, ok := c.pending.Best(j, node, rack)
			if !ok {
				return true
			}
			l, launch, _ := c.delay.Offer(j, best)
			if !launch {
				return true
			}
			job = j
			task, _, _ = c.pending.First(j, node, rack, l)
			return false
		})
		if job == "" {
			continue
		}
		placed++
		j := c.idx[job]
		if err := c.pending.Remove(task); err != nil {
			b.Fatal(err)
		}
		if err := c.tree.Start(job, c.reqs[j], c.reqs[j]); err != nil {
			b.Fatal(err)
		}
		// steady state: the job's task finishes and another is submitted
		if err := c.tree.Release(job, c.reqs[j]); err != nil {
			b.Fatal(err)
		}
		if err := c.tree.AddPending(job, 1, c.reqs[j]); err != nil {
			b.Fatal(err)
		}
		if err := c.addTask(j); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(walked)/float64(b.N), "jobs-walked/op")
	b.ReportMetric(float64(placed)/float64(b.N), "placed/op")
}

// BenchmarkMemory reports the heap a Tree keeps per job and a Pending per task, at the
// heartbeat benchmark's scale. It measures once, whatever b.N.
func BenchmarkMemory(b *testing.B) {
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	tree, _ := benchTree(b, fairness.DRF{}, benchTasks)
	mid := heap()
	c := newBenchCluster(b)
	after := heap()
	runtime.KeepAlive(tree)
	runtime.KeepAlive(c)
	perJob := float64(mid-before) / benchJobs
	b.ReportMetric(perJob, "B/job(tree)")
	// newBenchCluster holds a second tree of the same size and the Pending index.
	b.ReportMetric((float64(after-mid)-perJob*benchJobs)/(benchJobs*benchTasks), "B/task(pending)")
	for range b.N {
	}
}

func BenchmarkPendingAddRemove(b *testing.B) {
	c := newBenchCluster(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := i % benchJobs
		if err := c.addTask(j); err != nil {
			b.Fatal(err)
		}
		id, _, ok := c.pending.First(jobID(j), "n0", "r0", fairness.OffSwitch)
		if !ok {
			b.Fatal("empty")
		}
		if err := c.pending.Remove(id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPendingBest(b *testing.B) {
	c := newBenchCluster(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		c.pending.Best(jobID(i%benchJobs), "n17", "r17")
	}
}

func BenchmarkDelayOffer(b *testing.B) {
	d, _ := fairness.NewDelay()
	jobs := make([]string, benchJobs)
	for j := range jobs {
		jobs[j] = jobID(j)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%benchJobs == 0 {
			_ = d.Heartbeat(time.Duration(i) * time.Millisecond)
		}
		_, _, _ = d.Offer(jobs[i%benchJobs], fairness.Level(i%3))
	}
}

func BenchmarkSort1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	es := make([]fairness.Entry, benchJobs)
	for i := range es {
		es[i] = fairness.Entry{ID: jobID(i), Kind: fairness.KindJob, Share: fairness.DefaultShare(), Running: rng.IntN(50),
			Usage: benchRequest(rng).Scale(float64(rng.IntN(50)))}
	}
	work := make([]fairness.Entry, len(es))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		copy(work, es)
		if err := fairness.Sort(benchSchema, fairness.DRF{}, benchCapacity(), work); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWaterFill1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	claims := make([]fairness.Claim, benchJobs)
	for i := range claims {
		claims[i] = fairness.Claim{Weight: float64(1 + rng.IntN(4)), Min: float64(rng.IntN(3)), Demand: float64(rng.IntN(200))}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := fairness.WaterFill(20000, claims); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJain1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float64, benchJobs)
	for i := range x {
		x[i] = rng.Float64()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := fairness.Jain(x); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProgressiveFilling(b *testing.B) {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	users := make([]fairness.User, 100)
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range users {
		users[i] = fairness.User{Task: s.MustTuple(int64(1+rng.IntN(8)), int64(1+rng.IntN(8))), Weight: float64(1 + rng.IntN(3))}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := fairness.ProgressiveFilling(s, s.MustTuple(10000, 10000), users); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPendingLookup is what a heartbeat asks the pending index of each job it
// walks, by the locality the job's first task has on the node (n17 in r17): Best, First
// at the job's best locality, and Ascend through up to four tasks at rack level, as
// delay scheduling looks for a node with room for a waiting job's tasks. "node" walks
// the jobs with a task on n17, "rack" those with none there but some in r17, and
// "off-switch" asks of every job for n17 in a rack without tasks.
func BenchmarkPendingLookup(b *testing.B) {
	c := newBenchCluster(b)
	const node, rack, noRack = "n17", "r17", "r-none"
	var onNode, inRack, all []string
	for j := range benchJobs {
		all = append(all, jobID(j))
		switch l, _ := c.pending.Best(jobID(j), node, rack); l {
		case fairness.NodeLocal:
			onNode = append(onNode, jobID(j))
		case fairness.RackLocal:
			inRack = append(inRack, jobID(j))
		}
	}
	cases := []struct {
		name string
		jobs []string
		rack string
	}{{"node", onNode, rack}, {"rack", inRack, rack}, {"off-switch", all, noRack}}
	for _, tc := range cases {
		if len(tc.jobs) == 0 {
			b.Fatalf("no job for %s", tc.name)
		}
		b.Run("Best/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				c.pending.Best(tc.jobs[i%len(tc.jobs)], node, tc.rack)
			}
		})
		b.Run("First/"+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				if _, _, ok := c.pending.First(tc.jobs[i%len(tc.jobs)], node, tc.rack, fairness.OffSwitch); !ok {
					b.Fatal("no task")
				}
			}
		})
	}
	b.Run("Ascend4/rack", func(b *testing.B) {
		seen := 0
		visit := func(string, fairness.Level) bool {
			seen++
			return seen%4 != 0
		}
		b.ReportAllocs()
		for i := range b.N {
			c.pending.Ascend(inRack[i%len(inRack)], node, rack, fairness.RackLocal, visit)
		}
	})
}
