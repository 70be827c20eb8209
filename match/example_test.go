package match_test

import (
	"fmt"
	"time"

	"github.com/finegrain/finegrain/match"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// A server of 4 cores and 8 GiB runs a task using 3 cores for 2 s, then 1 core.
// A new task needs 1.2 cores for 1 s, then 2 cores for 2 s.
func Example() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	tl, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
	running := stage.MustProfile(s,
		stage.Stage{Duration: 2 * time.Second, Demand: s.MustTuple(3000, 2<<30)},
		stage.Stage{Duration: 2 * time.Second, Demand: s.MustTuple(1000, 2<<30)})
	_, _ = tl.Reserve(0, running, resource.Tuple{})

	task := stage.MustProfile(s,
		stage.Stage{Duration: time.Second, Demand: s.MustTuple(1200, 1<<30)},
		stage.Stage{Duration: 2 * time.Second, Demand: s.MustTuple(2000, 1<<30)})
	tenPercent, _ := match.UniformAllowance(s, resource.DefaultCompressionLimit)
	server := match.Server{ID: "n1", Timeline: tl, Allowance: tenPercent}

	fmt.Println("coarse at 0s:", match.CoarseGrained{}.Match(server, 0, task))
	fmt.Println("fine at 0s:  ", match.FineGrained{}.Match(server, 0, task))
	fmt.Println("fine at 1s:  ", match.FineGrained{}.Match(server, time.Second, task))
	r := match.FineGrained{}.Match(server, 2*time.Second, task)
	fmt.Println("fine at 2s:  ", r)
	_, err := tl.Reserve(2*time.Second, task, r.Allowance)
	fmt.Println("reserved:", err == nil)
	// Output:
	// coarse at 0s: stage 1 needs cpu=2 over [0s, 2s) but 1 is free (compression allowance 0, short by 1)
	// fine at 0s:   stage 1 needs cpu=2 over [1s, 2s) but 1 is free (compression allowance 400m, short by 600m)
	// fine at 1s:   fits by compressing cpu by 4.76%
	// fine at 2s:   fits
	// reserved: true
}

func ExampleFineGrained_Match() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	tl, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
	_, _ = tl.Reserve(0, stage.MustProfile(s, stage.Stage{Duration: time.Second, Demand: s.MustTuple(2000, 4<<30)}), resource.Tuple{})
	tenPercent, _ := match.UniformAllowance(s, 0.10)

	task := stage.MustProfile(s,
		stage.Stage{Duration: time.Second, Demand: s.MustTuple(2200, 2<<30)},
		stage.Stage{Duration: 3 * time.Second, Demand: s.MustTuple(3000, 3<<30)})
	r := match.FineGrained{}.Match(match.Server{Timeline: tl, Allowance: tenPercent}, 0, task)
	d, _ := match.ResultDuration(task, r) // eq. 15
	fmt.Println(r.Code, "allowance", s.Format(r.Allowance))
	fmt.Printf("stage 0 compressed %.4f, stage 1 %.4f; %v instead of %v\n", r.StageRatio(0), r.StageRatio(1), d, task.Duration())
	// Output:
	// FitCompressed allowance cpu=200m
	// stage 0 compressed 0.0476, stage 1 0.0000; 4.05s instead of 4s
}

func ExampleDeadlineCheck() {
	s := resource.MustSchema(resource.CPU)
	tl, _ := stage.NewTimeline(s, s.MustTuple(4000))
	old := match.Running{Work: match.Work{ID: "old",
		Profile:  stage.MustProfile(s, stage.Stage{Duration: 10 * time.Second, Demand: s.MustTuple(3000)}),
		Deadline: 10500 * time.Millisecond}}
	_, _ = tl.Reserve(0, old.Profile, resource.Tuple{})
	tenPercent, _ := match.UniformAllowance(s, 0.10)
	server := match.Server{ID: "n1", Timeline: tl, Allowance: tenPercent}
	check := match.DeadlineCheck{Running: func(string) []match.Running { return []match.Running{old} }}

	// Eq. 15 counts a stage at its largest compression: old's 10 s stage, compressed
	// by 400/4400 during the new task's 5 s, counts as 10/(1 − 400/4400) = 11 s.
	for _, cpu := range []int64{1000, 1200, 1400} {
		t := match.Work{ID: "new", Profile: stage.MustProfile(s, stage.Stage{Duration: 5 * time.Second, Demand: s.MustTuple(cpu)})}
		r := match.FineGrained{}.Match(server, 0, t.Profile)
		r = check.CheckQoS(server, 0, t, r)
		fmt.Println(cpu, r.Code, r.Late())
	}
	// Output:
	// 1000 Fit 0s
	// 1200 FitCompressed 0s
	// 1400 DeadlineMissed 500ms
}

func ExampleChooseServer() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	var servers []match.Server
	for i, used := range []int64{3000, 1000, 2000} {
		tl, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
		_, _ = tl.Reserve(0, stage.MustProfile(s, stage.Stage{Duration: time.Minute, Demand: s.MustTuple(used, 1<<30)}), resource.Tuple{})
		servers = append(servers, match.Server{ID: fmt.Sprint("n", i), Timeline: tl})
	}
	task := match.Work{ID: "t", Profile: stage.MustProfile(s, stage.Stage{Duration: time.Second, Demand: s.MustTuple(1500, 1<<30)})}
	for _, sc := range []match.Scorer{match.MostAllocated{}, match.LeastAllocated{}} {
		p := match.ChooseServer(servers, 0, task, match.FineGrained{}, nil, sc)
		fmt.Printf("%T: %s (score %.3f)\n", sc, p.Server, p.Score)
	}
	// Output:
	// match.MostAllocated: n2 (score 0.562)
	// match.LeastAllocated: n1 (score 0.562)
}

func ExampleAging_Pick() {
	var aging match.Aging
	cpuJob := match.QoSJob{ID: "cpu-job", Req: match.QoSVector{8, 2, 2, 2, 5}, Weights: match.Weights{0.7, 0.1, 0.1, 0, 0.1}, Need: match.Hard{Memory: 1 << 30, Disk: 1 << 30}}
	memJob := match.QoSJob{ID: "mem-job", Req: match.QoSVector{2, 9, 2, 2, 5}, Weights: match.Weights{0.1, 0.7, 0.1, 0, 0.1}, Need: match.Hard{Memory: 64 << 30, Disk: 1 << 30}}
	jobs := []match.QoSJob{cpuJob, memJob}

	// A memory-rich node without enough memory left for mem-job: its sub-queue is
	// chosen, nothing fits, mem-job ages.
	node := match.QoSNode{Res: match.QoSVector{3, 9, 5, 5, 5}, Remaining: match.Hard{Memory: 32 << 30, Disk: 100 << 30}}
	i, _ := aging.Pick(node, jobs)
	fmt.Println("picked", i, "mem-job priority", aging.Priority("mem-job"))

	// A CPU-rich node: its class is cpu.
	node = match.QoSNode{Res: match.QoSVector{9, 4, 5, 5, 5}, Remaining: match.Hard{Memory: 128 << 30, Disk: 100 << 30}}
	i, _ = aging.Pick(node, jobs)
	fmt.Println("picked", jobs[i].ID)
	// Output:
	// picked -1 mem-job priority 1
	// picked cpu-job
}

func ExampleNewWeights() {
	_, err := match.NewWeights(0.5, 0.3, 0.1, 0.05, 0.1)
	fmt.Println(err)
	k, _ := match.NewWeights(0.5, 0.3, 0.1, 0.05, 0.05)
	fmt.Println(k.Class())
	// Output:
	// match: sum of weights = 1.05: invalid QoS weights
	// cpu
}

// headroom is a compression policy of one's own: up to 20% where at least a quarter of
// a dimension is free, none where less is. Its ratio on a dimension reads that
// dimension's free amount alone and never falls as that amount grows, so it may say it
// is a match.MonotoneAllowance; it counts the questions it is asked.
type headroom struct{ asked int }

func (h *headroom) Allowed(q match.AllowanceQuery) resource.Vector {
	h.asked++
	var v resource.Vector
	for k := range v {
		if q.Capacity[k] > 0 && q.Segment.Free[k] >= q.Capacity[k]/4 {
			v[k] = 0.20
		}
	}
	return v
}

func (*headroom) MonotoneInFree() bool { return true }

// A task of 8 stages, each wanting 3.5 of 4 cores for a second, on a server whose
// other work leaves 3 to 3.4 cores free, changing every quarter second: every stage
// is short of room all along, and each is settled by its least free amount, one
// question a stage, not one for each of the 32 pieces of timeline it is short on.
func ExampleMonotoneAllowance() {
	s := resource.MustSchema(resource.CPU, resource.Memory)
	tl, _ := stage.NewTimeline(s, s.MustTuple(4000, 8<<30))
	for i := 0; i < 32; i++ {
		busy := stage.MustProfile(s, stage.Stage{Duration: time.Second / 4, Demand: s.MustTuple(int64(600+100*(i%5)), 1<<30)})
		_, _ = tl.Reserve(time.Duration(i)*time.Second/4, busy, resource.Tuple{})
	}
	stages := make([]stage.Stage, 8)
	for i := range stages {
		stages[i] = stage.Stage{Duration: time.Second, Demand: s.MustTuple(3500, 1<<30)}
	}
	task := stage.MustProfile(s, stages...)

	h := &headroom{}
	r := match.FineGrained{}.Match(match.Server{ID: "n1", Timeline: tl, Allowance: h}, 0, task)
	fmt.Println(r)
	fmt.Println("questions asked:", h.asked)
	// Output:
	// fits by compressing cpu by 11.11%
	// questions asked: 8
}
