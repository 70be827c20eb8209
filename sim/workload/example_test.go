package workload_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/finegrain/finegrain/sim/workload"
)

// Generate the paper-like offline workload at a quarter of its size, place its blocks
// on the FGM cluster, and look at one task: its similarity key, what it really uses
// and what its user declares.
func Example() {
	r := rand.New(rand.NewPCG(1, 2))
	w, err := workload.FGM(r, workload.WithScale(0.25))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d jobs, %d tasks, %d GiB in %d blocks\n", w.Name, len(w.Jobs), w.NumTasks(), w.TotalInput()>>30, len(w.Blocks))

	cl, _ := workload.FGMCluster()
	replicas, _ := workload.PlaceReplicas(&cl, w.Blocks, workload.DefaultReplication)

	s := workload.Schema()
	for _, j := range w.Jobs {
		if j.NumTasks(workload.Map) < 3 {
			continue
		}
		t := j.Tasks[0]
		fmt.Printf("job %s (%s, %s): %d maps, %d reduces\n", j.ID, j.App, j.Queue, j.NumTasks(workload.Map), j.NumTasks(workload.Reduce))
		fmt.Printf("key %+v\n", j.Key(&t))
		for i, name := range t.Kind.StageNames() {
			st := t.True.Stage(i)
			fmt.Printf("  %-7s %5.1fs %s\n", name, st.Duration.Seconds(), s.Format(st.Demand))
		}
		fmt.Printf("request %s\n", s.Format(t.Request))
		fmt.Printf("replicas on %s, %s, %s\n", cl.Nodes[replicas[t.Blocks[0]][0]].ID, cl.Nodes[replicas[t.Blocks[0]][1]].ID, cl.Nodes[replicas[t.Blocks[0]][2]].ID)
		break
	}
	// Output:
	// fgm-offline-FB-2009-100GiB: 224 jobs, 1290 tasks, 100 GiB in 1012 blocks
	// job job0002 (pagerank, queue1): 49 maps, 8 reduces
	// key {Logic:pagerank/map InputSize:134217728 Family:pagerank/map}
	//   read      2.8s cpu=287m,memory=1111224955,disk-io=47632564
	//   compute  16.4s cpu=1044m,memory=1030952325
	//   spill     4.5s cpu=606m,memory=1515606419,disk-io=38625260
	// request cpu=1700m,memory=2432Mi,disk-io=83Mi
	// replicas on node07, node08, node09
}

// The task model without jitter: a WordCount map task on a full block.
func ExampleAppClass_Profile() {
	wc := workload.WordCount()
	in := workload.DefaultBlockSize
	p, err := wc.Profile(workload.Map, in, in/4, workload.Jitter{})
	if err != nil {
		panic(err)
	}
	s := workload.Schema()
	for i, name := range workload.Map.StageNames() {
		fmt.Printf("%-7s %v {%s}\n", name, p.Stage(i).Duration, s.Format(p.Stage(i).Demand))
	}
	req, _ := workload.Overestimate(p.Peak(), 1.3, workload.DefaultRequestRounding())
	fmt.Printf("peak {%s}\nrequest at 1.3x {%s}\n", s.Format(p.Peak()), s.Format(req))
	// Output:
	// read    2.6s {cpu=300m,memory=768Mi,disk-io=51622203}
	// compute 25.6s {cpu=1,memory=768Mi}
	// spill   533.333333ms {cpu=500m,memory=1Gi,disk-io=60Mi}
	// peak {cpu=1,memory=1Gi,disk-io=60Mi}
	// request at 1.3x {cpu=1300m,memory=1408Mi,disk-io=78Mi}
}

// The PRRL thesis' setup: experiment 1 (small jobs) scaled to one job per queue on the
// heterogeneous 3-rack cluster.
func ExampleThesis() {
	mix, _ := workload.ThesisExperiment(1)
	w, err := workload.Thesis(rand.New(rand.NewPCG(7, 7)), mix, workload.WithScale(0.01))
	if err != nil {
		panic(err)
	}
	cl, _ := workload.ThesisCluster()
	replicas, _ := workload.PlaceReplicas(&cl, w.Blocks, workload.DefaultReplication)
	for _, j := range w.Jobs {
		fmt.Printf("%s %s %s: %d tasks of %v\n", j.ID, j.Queue, j.App, len(j.Tasks), j.Tasks[0].True.Duration())
	}
	rs := replicas[0]
	fmt.Println("block 0 on", cl.Nodes[rs[0]].ID, cl.Nodes[rs[1]].ID, cl.Nodes[rs[2]].ID)
	slow, fast := cl.Nodes[0], cl.Nodes[29]
	fmt.Printf("%s speed %.1f, %s speed %.1f\n", slow.ID, slow.Speed, fast.ID, fast.Speed)
	for _, n := range []int{0, 2, 60} { // a replica holder, its rack neighbour, another rack
		l, _ := cl.Locality(n, rs)
		fmt.Printf("task 0 on %s: %v, transfer %v\n", cl.Nodes[n].ID, l, cl.TransferTime(w.Blocks[0], l))
	}
	// Output:
	// job00000 queue1 small: 60 tasks of 1m0s
	// job00001 queue2 small: 60 tasks of 1m0s
	// job00002 queue3 small: 60 tasks of 1m0s
	// block 0 on rack1-node01 rack1-node02 rack2-node01
	// rack1-node01 speed 0.8, rack1-node30 speed 1.2
	// task 0 on rack1-node01: node-local, transfer 0s
	// task 0 on rack1-node03: rack-local, transfer 6.4s
	// task 0 on rack3-node01: off-switch, transfer 25.6s
}

// Read a SWIM trace and see how its jobs become tasks.
func ExampleParseSWIM() {
	trace := "job0\t9\t9\t1762\t0\t14347\n" +
		"job2\t20\t2\t53088744165\t1510005522\t5759777\n"
	jobs, err := workload.ParseSWIM(strings.NewReader(trace), "FB-2010.tsv")
	if err != nil {
		panic(err)
	}
	for _, j := range jobs {
		fmt.Printf("%s at %v: %d maps, %d reduces\n", j.ID, j.Submit, j.MapTasks(workload.DefaultBlockSize), j.ReduceTasks(workload.DefaultBytesPerReduce))
	}
	w, _ := workload.FromSWIM("FB-2010", jobs, rand.New(rand.NewPCG(1, 1)))
	fmt.Println(w.NumTasks(), "tasks;", w.Jobs[1].Logic)

	_, err = workload.ParseSWIM(strings.NewReader("job0\t9\t9\t17x2\t0\t1\n"), "bad.tsv")
	fmt.Println(err)
	// Output:
	// job0 at 9s: 1 maps, 0 reduces
	// job2 at 20s: 396 maps, 2 reduces
	// 399 tasks; FB-2010/job2
	// bad.tsv:1:4: input bytes: syntax error: not an integer: "17x2"
}

// A PlanetLab CPU series as background load: the fraction in force at any time.
func ExampleParsePlanetLab() {
	s, err := workload.ParsePlanetLab(strings.NewReader("24\n34\n29\n"), "vm")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Period(), s.At(0), s.At(7*60e9), s.At(16*60e9))
	// Output:
	// 15m0s 0.24 0.34 0.24
}
