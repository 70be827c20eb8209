package workload_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/finegrain/finegrain/sim/workload"
)

// fuzzParseError fails t unless err is a *ParseError wrapping one of the parsers'
// sentinels and naming the input "fuzz".
func fuzzParseError(t *testing.T, err error) {
	t.Helper()
	if !parseSentinel(err) || !strings.HasPrefix(err.Error(), "fuzz:") {
		t.Fatalf("unexpected error %T %v", err, err)
	}
	var pe *workload.ParseError
	if errors.As(err, &pe) && (pe.Line < 0 || pe.Column < 0) {
		t.Fatalf("bad position in %v", err)
	}
}

// FuzzParseAlibaba2017 checks that the batch_task parser never panics, fails only with
// a *ParseError naming the input, returns only rows within the documented ranges that
// parse back the same when written out again, and that FromAlibaba2017 turns them into
// a valid workload whose true peaks stay within the requests, or refuses them (no
// usable row, too large).
func FuzzParseAlibaba2017(f *testing.F) {
	f.Add(aliHeader + "6459,6524,3,4,15740,Terminated,50,0.007956928\r\n6457,6533,3,5,1,Terminated,50,0.004395206\r\n")
	f.Add("6036,6046,4,7,393,Waiting,,\n-1078,2738,9741,63357,224,Terminated,100,0.005404706\n")
	f.Add("1,2,3,4,5,Terminated,50,0.5\n1,2,3,4,5,Terminated,50,0.5\n")
	f.Add("1,2,3,4,5,Failed,-50,NaN\n")
	f.Add("5,5,1,1,0,Terminated,0,1\n\n")
	f.Add("\uFEFFa,b,c,d,e,f,g,h\r\n-0,+7, 1 ,\t2,3, Running ,1,1e-3\n")
	f.Fuzz(func(t *testing.T, data string) {
		rows, err := workload.ParseAlibaba2017(strings.NewReader(data), "fuzz")
		if err != nil {
			fuzzParseError(t, err)
			return
		}
		type key struct{ job, task int64 }
		seen := map[key]bool{}
		var b strings.Builder
		for i, r := range rows {
			if r.Job < 0 || r.Task < 0 || seen[key{r.Job, r.Task}] || r.Instances < 0 || r.Instances > math.MaxInt32 ||
				(r.HasCPU && r.CPU < 0) || (!r.HasCPU && r.CPU != 0) || (r.HasMemory && !(r.Memory >= 0 && r.Memory <= 1)) ||
				(!r.HasMemory && r.Memory != 0) || r.Create%1e9 != 0 || r.End%1e9 != 0 || (i > 0 && r.Line <= rows[i-1].Line) {
				t.Fatalf("invalid row %+v", r)
			}
			seen[key{r.Job, r.Task}] = true
			cpu, mem := "", ""
			if r.HasCPU {
				cpu = strconv.FormatInt(r.CPU, 10)
			}
			if r.HasMemory {
				mem = strconv.FormatFloat(r.Memory, 'g', -1, 64)
			}
			fmt.Fprintf(&b, "%d,%d,%d,%d,%d,%s,%s,%s\n", r.Create/1e9, r.End/1e9, r.Job, r.Task, r.Instances, r.Status, cpu, mem)
		}
		again, err := workload.ParseAlibaba2017(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("written rows do not parse back: %v\n%s", err, b.String())
		}
		for i := range again {
			again[i].Line = rows[i].Line
		}
		if !reflect.DeepEqual(rows, again) {
			t.Fatalf("round trip: %+v != %+v", again, rows)
		}
		w, st, err := workload.FromAlibaba2017("fuzz", rows, rng(1), workload.WithMaxTasks(2000), workload.WithScale(0.1))
		if st.Rows != len(rows) {
			t.Fatalf("stats %+v for %d rows", st, len(rows))
		}
		if errors.Is(err, workload.ErrTooLarge) || errors.Is(err, workload.ErrEmpty) && st.Used == 0 {
			return
		}
		if err != nil {
			t.Fatalf("FromAlibaba2017: %v", err)
		}
		if err := w.Validate(); err != nil {
			t.Fatalf("FromAlibaba2017 built an invalid workload: %v", err)
		}
		if st.Used+st.Skipped() != st.Rows || st.Tasks != w.NumTasks() {
			t.Fatalf("stats %+v do not add up (%d tasks)", st, w.NumTasks())
		}
		for _, j := range w.Jobs {
			for _, tk := range j.Tasks {
				if !tk.Request.Covers(tk.True.Peak()) {
					t.Fatalf("%s: true peak %v above request %v", tk.ID, tk.True.Peak(), tk.Request)
				}
			}
		}
	})
}

// FuzzParseOpenBNodes checks that the openb node parser never panics, fails only with a
// *ParseError naming the input, and returns only nodes within the documented ranges
// that parse back the same when written out again.
func FuzzParseOpenBNodes(f *testing.F) {
	f.Add(openBNodeHead + "openb-node-0000,32000,262144,0,\nopenb-node-0229,96000,786432,8,V100M32\n")
	f.Add("model,gpu,sn,memory_mib,cpu_milli,x\r\nT4,1,a,1,1,\r\n,0,b,0,0,y\r\n")
	f.Add(openBNodeHead + "a,1,1,0,T4\n")
	f.Add(openBNodeHead + "a,1,1,65,T4\na,1,1,1,T4\n")
	f.Add("sn,cpu_milli\nx,1\n")
	f.Fuzz(func(t *testing.T, data string) {
		nodes, err := workload.ParseOpenBNodes(strings.NewReader(data), "fuzz")
		if err != nil {
			fuzzParseError(t, err)
			return
		}
		seen := map[string]bool{}
		var b strings.Builder
		b.WriteString(openBNodeHead)
		for i, n := range nodes {
			if n.Name == "" || seen[n.Name] || n.CPUMilli < 0 || n.MemoryMiB < 0 || n.MemoryMiB > math.MaxInt64>>20 ||
				n.GPUs < 0 || n.GPUs > workload.OpenBMaxGPUs || (n.GPUs == 0 && n.Model != "") || (i > 0 && n.Line <= nodes[i-1].Line) {
				t.Fatalf("invalid node %+v", n)
			}
			seen[n.Name] = true
			fmt.Fprintf(&b, "%s,%d,%d,%d,%s\n", n.Name, n.CPUMilli, n.MemoryMiB, n.GPUs, n.Model)
		}
		again, err := workload.ParseOpenBNodes(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("written nodes do not parse back: %v\n%s", err, b.String())
		}
		for i := range again {
			again[i].Line = nodes[i].Line
		}
		if !reflect.DeepEqual(nodes, again) {
			t.Fatalf("round trip: %+v != %+v", again, nodes)
		}
	})
}

// FuzzParseOpenBPods checks that the openb pod parser never panics, fails only with a
// *ParseError naming the input, and returns only pods that satisfy the documented
// rules (GPU count and share, models, time order) and parse back the same when written
// out again.
func FuzzParseOpenBPods(f *testing.F) {
	f.Add(openBPodHead + "openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497\n" +
		"openb-pod-0035,16000,32768,1,1000,V100M16|V100M32|V100M32,LS,Running,9967058,9968575,9967063\n" +
		"openb-pod-0040,8000,30517,0,0,,BE,Pending,100,200,\n")
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nopenb-pod-0000,12000,16384,1,1000\nopenb-pod-0001,6000,12288,1,460\n")
	f.Add(openBPodHead + "p,1,1,2,500,,BE,Running,1,2,1\n")
	f.Add(openBPodHead + "p,1,1,0,0,T4,BE,Running,5,4,\n")
	f.Add("scheduled_time,name,num_gpu,gpu_milli,memory_mib,cpu_milli\r\n,p,1,1,0,0\r\n1.5,q,1,999,1,1\r\n")
	f.Fuzz(func(t *testing.T, data string) {
		pods, err := workload.ParseOpenBPods(strings.NewReader(data), "fuzz")
		if err != nil {
			fuzzParseError(t, err)
			return
		}
		seen := map[string]bool{}
		var b strings.Builder
		created := pods[0].HasCreated
		b.WriteString("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,deletion_time,scheduled_time")
		if created {
			b.WriteString(",creation_time")
		}
		b.WriteString("\n")
		for i, p := range pods {
			spec := map[string]bool{}
			for _, m := range p.GPUSpec {
				if m == "" || spec[m] || strings.ContainsAny(m, "|,\n") {
					t.Fatalf("bad GPU spec %q in %+v", p.GPUSpec, p)
				}
				spec[m] = true
			}
			if p.Name == "" || seen[p.Name] || p.CPUMilli < 0 || p.MemoryMiB < 0 || p.MemoryMiB > math.MaxInt64>>20 ||
				p.NumGPU < 0 || p.NumGPU > workload.OpenBMaxGPUs || p.GPUMilli < 0 || p.GPUMilli > 1000 ||
				(p.NumGPU == 0) != (p.GPUMilli == 0) || (p.NumGPU > 1 && p.GPUMilli != 1000) ||
				(p.GPUSpec != nil && (len(p.GPUSpec) == 0 || p.NumGPU == 0)) ||
				p.HasCreated != created || p.Created < 0 || p.Deleted < 0 || p.Scheduled < 0 ||
				(p.HasCreated && p.HasScheduled && p.Scheduled < p.Created) || (p.HasCreated && p.HasDeleted && p.Deleted < p.Created) ||
				(p.HasScheduled && p.HasDeleted && p.Deleted < p.Scheduled) ||
				(!p.HasCreated && p.Created != 0) || (!p.HasDeleted && p.Deleted != 0) || (!p.HasScheduled && p.Scheduled != 0) ||
				(i > 0 && p.Line <= pods[i-1].Line) || p.SharesGPU() != (p.NumGPU == 1 && p.GPUMilli < 1000) ||
				p.TotalGPUMilli() != int64(p.NumGPU)*p.GPUMilli {
				t.Fatalf("invalid pod %+v", p)
			}
			seen[p.Name] = true
			opt := func(has bool, d time.Duration) string {
				if !has {
					return ""
				}
				return secs(d)
			}
			fmt.Fprintf(&b, "%s,%d,%d,%d,%d,%s,%s,%s,%s,%s", p.Name, p.CPUMilli, p.MemoryMiB, p.NumGPU, p.GPUMilli,
				strings.Join(p.GPUSpec, "|"), p.QoS, p.Phase, opt(p.HasDeleted, p.Deleted), opt(p.HasScheduled, p.Scheduled))
			if created {
				b.WriteString("," + secs(p.Created))
			}
			b.WriteString("\n")
		}
		again, err := workload.ParseOpenBPods(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("written pods do not parse back: %v\n%s", err, b.String())
		}
		for i := range again {
			again[i].Line = pods[i].Line
		}
		if !reflect.DeepEqual(pods, again) {
			t.Fatalf("round trip: %+v != %+v", again, pods)
		}
	})
}
