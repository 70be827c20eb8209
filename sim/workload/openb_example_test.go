package workload_test

import (
	"fmt"
	"strings"

	"github.com/finegrain/finegrain/sim/workload"
)

// Parse a few pods of an openb pod list (cluster-trace-gpu-v2023): a whole-GPU pod
// constrained to two V100 models, a pod sharing a fifth of a GPU, a CPU-only pod still
// pending.
func ExampleParseOpenBPods() {
	const csv = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0035,16000,32768,1,1000,V100M16|V100M32|V100M32,LS,Running,9967058,9968575,9967063
openb-pod-0022,4000,15258,1,220,,BE,Running,9679175,9973826,9679175
openb-pod-0040,8000,30517,0,0,,BE,Pending,100,200,
`
	pods, err := workload.ParseOpenBPods(strings.NewReader(csv), "pods.csv")
	if err != nil {
		panic(err)
	}
	for _, p := range pods {
		fmt.Printf("%s: %d milli-CPU, %d MiB, %d GPU × %d‰ (shares: %v), models %q, %s %s",
			p.Name, p.CPUMilli, p.MemoryMiB, p.NumGPU, p.GPUMilli, p.SharesGPU(), p.GPUSpec, p.QoS, p.Phase)
		if p.HasScheduled {
			fmt.Printf(", waited %v", p.Scheduled-p.Created)
		}
		fmt.Println()
	}

	// A broken rule is an error naming the file, line and column.
	_, err = workload.ParseOpenBPods(strings.NewReader("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,64,2,500\n"), "bad.csv")
	fmt.Println(err)
	// Output:
	// openb-pod-0035: 16000 milli-CPU, 32768 MiB, 1 GPU × 1000‰ (shares: false), models ["V100M16" "V100M32"], LS Running, waited 5s
	// openb-pod-0022: 4000 milli-CPU, 15258 MiB, 1 GPU × 220‰ (shares: true), models [], BE Running, waited 0s
	// openb-pod-0040: 8000 milli-CPU, 30517 MiB, 0 GPU × 0‰ (shares: false), models [], BE Pending
	// bad.csv:2:5: gpu_milli: invalid value: a pod with 2 GPUs takes them whole (1000): "500"
}

// An openb pod list as a workload: LS pods become latency-sensitive tasks, with an SLO
// of WithSLOFactor times their run time (the trace gives none); BE, Burstable and
// Guaranteed pods are batch.
func ExampleFromOpenB() {
	const csv = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
openb-pod-0035,16000,32768,1,1000,,LS,Succeeded,100,400,105
openb-pod-0022,4000,15258,1,220,,BE,Succeeded,160,1360,160
openb-pod-0041,8000,30517,0,0,,Burstable,Succeeded,200,260,201
`
	pods, err := workload.ParseOpenBPods(strings.NewReader(csv), "pods.csv")
	if err != nil {
		panic(err)
	}
	cl, err := workload.OpenBCluster("openb", []workload.OpenBNode{{Name: "n1", CPUMilli: 64000, MemoryMiB: 262144, GPUs: 2, Model: "T4"}})
	if err != nil {
		panic(err)
	}
	w, _, err := workload.FromOpenB("openb", pods, &cl, 1, workload.WithSLOFactor(2))
	if err != nil {
		panic(err)
	}
	for _, j := range w.Jobs {
		tk := j.Tasks[0]
		fmt.Printf("%s at %v: runs %v, latency-sensitive %v, SLO %v\n", tk.ID, j.Submit, tk.True.Duration(), tk.LatencySensitive, tk.SLO)
	}
	// Output:
	// openb-pod-0035 at 0s: runs 5m0s, latency-sensitive true, SLO 10m0s
	// openb-pod-0022 at 1m0s: runs 20m0s, latency-sensitive false, SLO 0s
	// openb-pod-0041 at 1m40s: runs 1m0s, latency-sensitive false, SLO 0s
}
