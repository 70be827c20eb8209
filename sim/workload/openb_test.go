package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/sim/workload"
)

const (
	openBDir      = "alibaba/gpu-v2023/"
	openBNodeHead = "sn,cpu_milli,memory_mib,gpu,model\n"
	openBPodHead  = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
)

func TestParseOpenBNodes(t *testing.T) {
	in := "\uFEFFgpu, model ,sn,rack,cpu_milli,memory_mib\r\n" +
		"8,V100M32,openb-node-0229,r1,96000,786432\r\n" +
		"\r\n" +
		"0,,openb-node-0227,r1,32000,262144\r\n" +
		"2,,openb-node-0300,r2,64000,1\r\n"
	nodes, err := workload.ParseOpenBNodes(strings.NewReader(in), "nodes")
	require.NoError(t, err)
	assert.Equal(t, []workload.OpenBNode{
		{Name: "openb-node-0229", CPUMilli: 96000, MemoryMiB: 786432, GPUs: 8, Model: "V100M32", Line: 2},
		{Name: "openb-node-0227", CPUMilli: 32000, MemoryMiB: 262144, Line: 4},
		{Name: "openb-node-0300", CPUMilli: 64000, MemoryMiB: 1, GPUs: 2, Line: 5},
	}, nodes)
}

func TestParseOpenBNodesErrors(t *testing.T) {
	const ok = "n1,32000,262144,2,T4\n"
	for _, tc := range []struct {
		name, in  string
		want      error
		line, col int
		msg       string
	}{
		{"no header", ok, workload.ErrSyntax, 1, 0, `nodes:1: syntax error: no column "sn"`},
		{"header without model", "sn,cpu_milli,memory_mib,gpu\nn1,1,1,0\n", workload.ErrSyntax, 1, 0, `nodes:1: syntax error: no column "model"`},
		{"column twice", "sn,cpu_milli,memory_mib,gpu,model,GPU\n", workload.ErrSyntax, 1, 6, "nodes:1:6: gpu: syntax error: column given twice (first as column 4)"},
		{"too few fields", openBNodeHead + ok + "n2,1,1,0\n", workload.ErrSyntax, 3, 5, "nodes:3:5: model: syntax error: missing"},
		{"too many fields", openBNodeHead + "n2,1,1,0,,x\n", workload.ErrSyntax, 2, 6, "nodes:2:6: extra field:"},
		{"empty sn", openBNodeHead + ",1,1,0,\n", workload.ErrEmpty, 2, 1, "nodes:2:1: sn: empty"},
		{"duplicate sn", openBNodeHead + ok + "n0,1,1,0,\n" + ok, workload.ErrDuplicateID, 4, 1, "nodes:4:1: sn: duplicate ID (first on line 2)"},
		{"cpu not a number", openBNodeHead + "n1,32k,1,0,\n", workload.ErrSyntax, 2, 2, "nodes:2:2: cpu_milli: syntax error"},
		{"negative memory", openBNodeHead + "n1,1,-1,0,\n", workload.ErrInvalidValue, 2, 3, "nodes:2:3: memory_mib: invalid value: negative"},
		{"memory too large", openBNodeHead + "n1,1,99999999999999999999,0,\n", workload.ErrInvalidValue, 2, 3, "nodes:2:3:"},
		{"too many GPUs", openBNodeHead + "n1,1,1,65,A10\n", workload.ErrInvalidValue, 2, 4, "nodes:2:4: gpu: invalid value: more than 64"},
		{"fractional GPUs", openBNodeHead + "n1,1,1,0.5,A10\n", workload.ErrSyntax, 2, 4, "nodes:2:4:"},
		{"model without GPUs", openBNodeHead + "n1,1,1,0,A10\n", workload.ErrInvalidValue, 2, 5, "nodes:2:5: model: invalid value: a GPU model on a node without GPUs"},
		{"quoted", openBNodeHead + "\"n1\",1,1,0,\n", workload.ErrSyntax, 2, 1, "nodes:2:1: sn: syntax error: quoted fields are not supported"},
		{"empty", "", workload.ErrEmpty, 0, 0, "nodes:0: empty: no header and no nodes"},
		{"header only", openBNodeHead, workload.ErrEmpty, 1, 0, "nodes:1: empty: no nodes"},
		{"line too long", openBNodeHead + strings.Repeat("x", 1<<20+1), workload.ErrSyntax, 2, 0, "nodes:2: syntax error: line longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []workload.OpenBNode
			var err error
			require.NotPanics(t, func() { nodes, err = workload.ParseOpenBNodes(strings.NewReader(tc.in), "nodes") })
			require.Error(t, err)
			assert.Nil(t, nodes)
			assert.ErrorIs(t, err, tc.want)
			var pe *workload.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.line, pe.Line, "line")
			assert.Equal(t, tc.col, pe.Column, "column")
			assert.True(t, strings.HasPrefix(err.Error(), tc.msg), "message %q, want prefix %q", err.Error(), tc.msg)
		})
	}
}

func TestParseOpenBPods(t *testing.T) {
	in := openBPodHead +
		"openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497\n" +
		"openb-pod-0022,4000,15258,1,220,,BE,Running,9679175,9973826,9679175\n" +
		"openb-pod-0035,16000,32768,1,1000, V100M16|V100M32|V100M32 ,LS,Running,9967058,9968575,9967063\n" +
		"openb-pod-0040,8000,30517,0,0,,BE,Pending,100,200,\n" +
		"openb-pod-0041,8000,30517,2,1000,|T4||A10|,LS,Running,1.5,2.5,2\n"
	pods, err := workload.ParseOpenBPods(strings.NewReader(in), "pods")
	require.NoError(t, err)
	s := time.Second
	assert.Equal(t, []workload.OpenBPod{
		{Name: "openb-pod-0017", CPUMilli: 88000, MemoryMiB: 327680, NumGPU: 8, GPUMilli: 1000, QoS: "Burstable", Phase: "Succeeded",
			Created: 9437497 * s, Deleted: 10769854 * s, Scheduled: 9437497 * s, HasCreated: true, HasDeleted: true, HasScheduled: true, Line: 2},
		{Name: "openb-pod-0022", CPUMilli: 4000, MemoryMiB: 15258, NumGPU: 1, GPUMilli: 220, QoS: "BE", Phase: "Running",
			Created: 9679175 * s, Deleted: 9973826 * s, Scheduled: 9679175 * s, HasCreated: true, HasDeleted: true, HasScheduled: true, Line: 3},
		{Name: "openb-pod-0035", CPUMilli: 16000, MemoryMiB: 32768, NumGPU: 1, GPUMilli: 1000, GPUSpec: []string{"V100M16", "V100M32"},
			QoS: "LS", Phase: "Running", Created: 9967058 * s, Deleted: 9968575 * s, Scheduled: 9967063 * s,
			HasCreated: true, HasDeleted: true, HasScheduled: true, Line: 4},
		{Name: "openb-pod-0040", CPUMilli: 8000, MemoryMiB: 30517, QoS: "BE", Phase: "Pending",
			Created: 100 * s, Deleted: 200 * s, HasCreated: true, HasDeleted: true, Line: 5},
		{Name: "openb-pod-0041", CPUMilli: 8000, MemoryMiB: 30517, NumGPU: 2, GPUMilli: 1000, GPUSpec: []string{"T4", "A10"},
			QoS: "LS", Phase: "Running", Created: 1500 * time.Millisecond, Deleted: 2500 * time.Millisecond, Scheduled: 2 * s,
			HasCreated: true, HasDeleted: true, HasScheduled: true, Line: 6},
	}, pods)
	assert.False(t, pods[0].SharesGPU())
	assert.True(t, pods[1].SharesGPU())
	assert.False(t, pods[3].SharesGPU())
	assert.Equal(t, int64(8000), pods[0].TotalGPUMilli())
	assert.Equal(t, int64(220), pods[1].TotalGPUMilli())

	// The multigpu layout: the five required columns only, in another order.
	pods, err = workload.ParseOpenBPods(strings.NewReader("num_gpu,gpu_milli,name,cpu_milli,memory_mib,extra\n2,1000,p1,1000,10,x\n"), "pods")
	require.NoError(t, err)
	assert.Equal(t, []workload.OpenBPod{{Name: "p1", CPUMilli: 1000, MemoryMiB: 10, NumGPU: 2, GPUMilli: 1000, Line: 2}}, pods)
}

func TestParseOpenBPodsErrors(t *testing.T) {
	const ok = "p1,4000,15258,1,220,,BE,Running,10,20,10\n"
	for _, tc := range []struct {
		name, in  string
		want      error
		line, col int
		msg       string
	}{
		{"no header", ok, workload.ErrSyntax, 1, 0, `pods:1: syntax error: no column "name"`},
		{"header without gpu_milli", "name,cpu_milli,memory_mib,num_gpu\n", workload.ErrSyntax, 1, 0, `pods:1: syntax error: no column "gpu_milli"`},
		{"column twice", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,qos,qos\n", workload.ErrSyntax, 1, 7, "pods:1:7: qos: syntax error: column given twice"},
		{"too few fields", openBPodHead + ok + "p2,1,1,0,0\n", workload.ErrSyntax, 3, 6, "pods:3:6: gpu_spec: syntax error: missing"},
		{"too many fields", openBPodHead + "p2,1,1,0,0,,BE,Running,1,2,1,9\n", workload.ErrSyntax, 2, 12, "pods:2:12: extra field:"},
		{"empty name", openBPodHead + ",1,1,0,0,,BE,Running,1,2,1\n", workload.ErrEmpty, 2, 1, "pods:2:1: name: empty"},
		{"duplicate name", openBPodHead + ok + ok, workload.ErrDuplicateID, 3, 1, "pods:3:1: name: duplicate ID (first on line 2)"},
		{"negative cpu", openBPodHead + "p1,-1,1,0,0,,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 2, "pods:2:2: cpu_milli: invalid value: negative"},
		{"memory not a number", openBPodHead + "p1,1,1Gi,0,0,,BE,Running,1,2,1\n", workload.ErrSyntax, 2, 3, "pods:2:3: memory_mib: syntax error"},
		{"too many GPUs", openBPodHead + "p1,1,1,65,1000,,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 4, "pods:2:4: num_gpu: invalid value: more than 64"},
		{"gpu_milli above 1000", openBPodHead + "p1,1,1,1,1001,,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 5, "pods:2:5: gpu_milli: invalid value: more than 1000"},
		{"share without GPU", openBPodHead + "p1,1,1,0,500,,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 5, "pods:2:5: gpu_milli: invalid value: a share of a GPU for a pod without GPUs"},
		{"GPU without share", openBPodHead + "p1,1,1,1,0,,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 5, "pods:2:5: gpu_milli: invalid value: no share of its 1 GPU(s)"},
		{"shared multi-GPU", openBPodHead + "p1,1,1,2,500,,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 5, "pods:2:5: gpu_milli: invalid value: a pod with 2 GPUs takes them whole (1000)"},
		{"spec without GPU", openBPodHead + "p1,1,1,0,0,T4,BE,Running,1,2,1\n", workload.ErrInvalidValue, 2, 6, "pods:2:6: gpu_spec: invalid value: GPU models for a pod without GPUs"},
		{"no creation time", openBPodHead + "p1,1,1,0,0,,BE,Pending,,2,\n", workload.ErrSyntax, 2, 9, "pods:2:9: creation_time: syntax error: missing"},
		{"negative creation time", openBPodHead + "p1,1,1,0,0,,BE,Running,-1,2,1\n", workload.ErrInvalidValue, 2, 9, "pods:2:9: creation_time: invalid value: negative"},
		{"deletion not a number", openBPodHead + "p1,1,1,0,0,,BE,Running,1,x,1\n", workload.ErrSyntax, 2, 10, "pods:2:10: deletion_time: syntax error"},
		{"deletion NaN", openBPodHead + "p1,1,1,0,0,,BE,Running,1,NaN,1\n", workload.ErrSyntax, 2, 10, "pods:2:10:"},
		{"scheduled infinite", openBPodHead + "p1,1,1,0,0,,BE,Running,1,2,inf\n", workload.ErrInvalidValue, 2, 11, "pods:2:11: scheduled_time: invalid value: too large"},
		{"scheduled before creation", openBPodHead + "p1,1,1,0,0,,BE,Running,5,9,4\n", workload.ErrInvalidValue, 2, 11, "pods:2:11: scheduled_time: invalid value: before the creation (5s)"},
		{"deleted before creation", openBPodHead + "p1,1,1,0,0,,BE,Pending,5,4,\n", workload.ErrInvalidValue, 2, 10, "pods:2:10: deletion_time: invalid value: before the creation (5s)"},
		{"deleted before scheduling", openBPodHead + "p1,1,1,0,0,,BE,Running,5,6,7\n", workload.ErrInvalidValue, 2, 10, "pods:2:10: deletion_time: invalid value: before the scheduling (7s)"},
		{"quoted", openBPodHead + "p1,1,1,1,1000,\"T4,A10\",BE,Running,1,2,1\n", workload.ErrSyntax, 2, 6, "pods:2:6: gpu_spec: syntax error: quoted fields are not supported"},
		{"empty", "\n\n", workload.ErrEmpty, 2, 0, "pods:2: empty: no header and no pods"},
		{"header only", openBPodHead + "\n", workload.ErrEmpty, 2, 0, "pods:2: empty: no pods"},
		{"line too long", openBPodHead + ok + strings.Repeat(",", 1<<20+1), workload.ErrSyntax, 3, 0, "pods:3: syntax error: line longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pods []workload.OpenBPod
			var err error
			require.NotPanics(t, func() { pods, err = workload.ParseOpenBPods(strings.NewReader(tc.in), "pods") })
			require.Error(t, err)
			assert.Nil(t, pods)
			assert.ErrorIs(t, err, tc.want)
			var pe *workload.ParseError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.line, pe.Line, "line")
			assert.Equal(t, tc.col, pe.Column, "column")
			assert.True(t, strings.HasPrefix(err.Error(), tc.msg), "message %q, want prefix %q", err.Error(), tc.msg)
		})
	}
}

// TestRealOpenBNodes loads both node lists of the shared openb data and checks the
// facts measured on them.
func TestRealOpenBNodes(t *testing.T) {
	for _, tc := range []struct {
		file           string
		nodes, cpuOnly int
		gpus           int
		models         map[string]int
	}{
		{"openb_node_list_all_node.csv", 1523, 310, 6212,
			map[string]int{"": 310, "G2": 549, "T4": 404, "P100": 134, "V100M16": 55, "G3": 39, "V100M32": 30, "A10": 2}},
		{"openb_node_list_gpu_node.csv", 1213, 0, 6212,
			map[string]int{"G2": 549, "T4": 404, "P100": 134, "V100M16": 55, "G3": 39, "V100M32": 30, "A10": 2}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			nodes, err := workload.LoadOpenBNodes(dataFile(t, openBDir+tc.file))
			require.NoError(t, err)
			require.Len(t, nodes, tc.nodes)
			models := map[string]int{}
			cpuOnly, gpus := 0, 0
			for i, n := range nodes {
				require.Equal(t, i+2, n.Line)
				models[n.Model]++
				gpus += n.GPUs
				if n.GPUs == 0 {
					cpuOnly++
				}
			}
			assert.Equal(t, tc.cpuOnly, cpuOnly)
			assert.Equal(t, tc.gpus, gpus)
			assert.Equal(t, tc.models, models)
		})
	}
}

// TestRealOpenBPods loads the four pod lists of the shared openb data and checks the
// facts measured on them: pod counts, CPU-only pods, GPU-sharing pods, pods with a GPU
// model constraint, pending pods (no scheduled_time).
func TestRealOpenBPods(t *testing.T) {
	for _, tc := range []struct {
		file                                 string
		pods, cpuOnly, shared, spec, pending int
		multi                                int // pods with more than one GPU
		times                                bool
	}{
		{"openb_pod_list_cpu050.csv", 7439, 375, 3078, 0, 878, 75, true},
		{"openb_pod_list_gpushare40.csv", 8152, 1088, 4001, 0, 981, 62, true},
		{"openb_pod_list_gpuspec10.csv", 8152, 1088, 3078, 732, 897, 75, true},
		{"openb_pod_list_multigpu20.csv", 8324, 1088, 3078, 0, 0, 247, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			pods, err := workload.LoadOpenBPods(dataFile(t, openBDir+tc.file))
			require.NoError(t, err)
			require.Len(t, pods, tc.pods)
			var cpuOnly, shared, spec, pending, multi, twice int
			for i, p := range pods {
				require.Equal(t, i+2, p.Line)
				require.Equal(t, tc.times, p.HasCreated, p.Name)
				require.Equal(t, tc.times, p.HasDeleted, p.Name)
				switch {
				case p.NumGPU == 0:
					cpuOnly++
				case p.SharesGPU():
					shared++
				case p.NumGPU > 1:
					multi++
				}
				if p.GPUSpec != nil {
					spec++
				}
				if len(p.GPUSpec) == 2 && p.GPUSpec[0] == "V100M16" && p.GPUSpec[1] == "V100M32" {
					twice++
				}
				if tc.times && !p.HasScheduled {
					pending++
					require.Equal(t, "Pending", p.Phase, p.Name)
				}
			}
			assert.Equal(t, tc.cpuOnly, cpuOnly, "CPU-only pods")
			assert.Equal(t, tc.shared, shared, "GPU-sharing pods")
			assert.Equal(t, tc.spec, spec, "pods with a GPU model constraint")
			assert.Equal(t, tc.pending, pending, "pods never scheduled")
			assert.Equal(t, tc.multi, multi, "multi-GPU pods")
			gpuPods := tc.pods - tc.cpuOnly
			t.Logf("%s: %d pods, %.1f%% CPU-only, %.1f%% of GPU pods share a GPU, %.1f%% constrain the model",
				tc.file, len(pods), 100*float64(cpuOnly)/float64(len(pods)), 100*float64(shared)/float64(gpuPods), 100*float64(spec)/float64(gpuPods))
			switch tc.file {
			case "openb_pod_list_cpu050.csv":
				assert.Equal(t, 5, percent(cpuOnly, len(pods)), "the README's 5% CPU-only")
			case "openb_pod_list_gpushare40.csv":
				assert.Equal(t, 57, percent(shared, gpuPods), "the README's 57% of GPU pods sharing")
			case "openb_pod_list_gpuspec10.csv":
				assert.Equal(t, 10, percent(spec, gpuPods), "the README's 10% of GPU pods constraining the model")
				assert.Equal(t, 55+6, twice, "the 55 rows of V100M16|V100M32 and the 6 of V100M16|V100M32|V100M32, deduplicated")
			}
		})
	}
}

func percent(n, of int) int { return int(100*float64(n)/float64(of) + 0.5) }
