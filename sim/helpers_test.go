package sim

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim/workload"
	"github.com/finegrain/finegrain/stage"
)

const gib = workload.GiB

// tuple builds a tuple of workload.Schema(): cpu (milli-cores), memory (bytes), disk-io,
// net-io (bytes/s).
func tuple(cpu, mem, disk, net int64) resource.Tuple {
	return workload.Schema().MustTuple(cpu, mem, disk, net)
}

// oneStage is a one-stage true profile.
func oneStage(d time.Duration, demand resource.Tuple) stage.Profile {
	return stage.MustProfile(workload.Schema(), stage.Stage{Duration: d, Demand: demand})
}

// handJob is a job of map tasks with the given true profiles and one request for all.
func handJob(id, queue string, submit time.Duration, request resource.Tuple, profiles ...stage.Profile) workload.Job {
	j := workload.Job{ID: id, Queue: queue, Submit: submit, App: "hand", Logic: "hand-" + id}
	for i, p := range profiles {
		j.Tasks = append(j.Tasks, workload.Task{ID: id + "/m" + string(rune('0'+i)), Kind: workload.Map, True: p, Request: request})
	}
	return j
}

// oneNode is a cluster of one node of capacity c, speed 1.
func oneNode(c resource.Tuple) workload.Cluster {
	return workload.Cluster{Name: "one", Nodes: []workload.NodeSpec{{ID: "n0", Rack: "r0", Capacity: c, Speed: 1}},
		IntraRackBandwidth: 100 << 20, CrossRackBandwidth: 10 << 20}
}

// smallFGM is a small paper-like workload and the FGM cluster.
func smallFGM(t testing.TB, seed uint64, scale float64, opts ...workload.Option) (workload.Workload, workload.Cluster) {
	t.Helper()
	w, err := workload.FGM(rand.New(rand.NewPCG(seed, 7)), append([]workload.Option{workload.WithScale(scale)}, opts...)...)
	require.NoError(t, err)
	cl, err := workload.FGMCluster()
	require.NoError(t, err)
	return w, cl
}

// csvOf writes every CSV of a result into one buffer, for byte comparisons.
func csvOf(t testing.TB, r *Result) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteSummaryCSV(&b, true, r))
	require.NoError(t, r.WriteJobsCSV(&b, true))
	require.NoError(t, r.WriteSamplesCSV(&b, true))
	require.NoError(t, r.WriteTasksCSV(&b, true))
	require.NoError(t, r.WriteEvictionsCSV(&b, true))
	return b.Bytes()
}

func nan() float64 { return math.NaN() }
