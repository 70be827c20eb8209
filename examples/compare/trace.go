package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/finegrain/finegrain/examples/internal/cli"
	"github.com/finegrain/finegrain/sim/workload"
)

// Trace kinds for -trace KIND:PATH.
const (
	traceSWIM    = "swim"        // PATH: a SWIM workload file (workload.LoadSWIM)
	traceAlibaba = "alibaba2017" // PATH: cluster-trace-v2017 batch_task (workload.LoadAlibaba2017)
	traceOpenB   = "openb"       // NODES,PODS: cluster-trace-gpu-v2023 node and pod lists
)

// trace is a real workload to replay instead of the generated one.
type trace struct {
	kind, name string
	swim       []workload.SWIMJob
	batch      []workload.Alibaba2017Task
	nodes      []workload.OpenBNode
	pods       []workload.OpenBPod
}

// parseTrace splits a -trace value into its kind and paths.
func parseTrace(v string) (kind string, paths []string, err error) {
	kind, rest, ok := strings.Cut(v, ":")
	if !ok || rest == "" {
		return "", nil, cli.Usagef("-trace %q: want KIND:PATH (swim:PATH, alibaba2017:PATH or openb:NODES,PODS)", v)
	}
	switch kind {
	case traceSWIM, traceAlibaba:
		return kind, []string{rest}, nil
	case traceOpenB:
		nodes, pods, ok := strings.Cut(rest, ",")
		if !ok || nodes == "" || pods == "" || strings.Contains(pods, ",") {
			return "", nil, cli.Usagef("-trace %q: openb wants the node list and the pod list, openb:NODES,PODS", v)
		}
		return kind, []string{nodes, pods}, nil
	}
	return "", nil, cli.Usagef("-trace %q: unknown kind %q (want swim, alibaba2017 or openb)", v, kind)
}

// loadTrace reads the trace's files.
func loadTrace(kind string, paths []string) (*trace, error) {
	last := paths[len(paths)-1]
	t := &trace{kind: kind, name: kind + "-" + strings.TrimSuffix(filepath.Base(last), filepath.Ext(last))}
	var err error
	switch kind {
	case traceSWIM:
		t.name = "swim-" + strings.TrimSuffix(filepath.Base(last), filepath.Ext(last))
		t.swim, err = workload.LoadSWIM(paths[0])
	case traceAlibaba:
		t.batch, err = workload.LoadAlibaba2017(paths[0])
	case traceOpenB:
		t.name = "openb-" + strings.TrimPrefix(strings.TrimSuffix(filepath.Base(last), filepath.Ext(last)), "openb_pod_list_")
		if t.nodes, err = workload.LoadOpenBNodes(paths[0]); err == nil {
			t.pods, err = workload.LoadOpenBPods(paths[1])
		}
	}
	return t, err
}

// defaultScale is the -scale a trace gets when none is given: SWIM's byte counts
// times 0.1; Alibaba 2017's instance counts times 0.01 (its sample has about five
// million instances); the openb pods' times times 0.001 (150 days in 3.6 hours).
func defaultScale(kind string) float64 {
	switch kind {
	case traceSWIM:
		return 0.1
	case traceAlibaba:
		return 0.01
	case traceOpenB:
		return 0.001
	}
	return 1
}

// cluster is the cluster the trace runs on: the openb trace's own nodes, or the FGM
// paper's cluster, of its 23 nodes unless nodes > 0.
func (t *trace) cluster(nodes int) (workload.Cluster, error) {
	if t != nil && t.kind == traceOpenB {
		return workload.OpenBCluster("openb", t.nodes)
	}
	if nodes > 0 {
		return workload.FGMCluster(workload.WithNodesPerRack(nodes))
	}
	return workload.FGMCluster()
}

// workload builds the trace's workload for seed r at scale.
func (t *trace) workload(r *rand.Rand, scale float64, cl *workload.Cluster) (*workload.Workload, error) {
	var w workload.Workload
	var err error
	switch t.kind {
	case traceSWIM:
		w, err = workload.FromSWIM(strings.TrimPrefix(t.name, "swim-"), t.swim, r, workload.WithScale(scale))
	case traceAlibaba:
		w, _, err = workload.FromAlibaba2017(t.name, t.batch, r, workload.WithScale(scale))
	case traceOpenB:
		w, _, err = workload.FromOpenB(t.name, t.pods, cl, scale)
	default:
		err = fmt.Errorf("trace kind %q", t.kind)
	}
	return &w, err
}

// replayable reports whether the trace can be replayed over time: an openb pod list
// without creation and deletion times (multigpu20) cannot.
func (t *trace) replayable() bool {
	if t.kind != traceOpenB {
		return true
	}
	for i := range t.pods {
		if p := &t.pods[i]; p.HasCreated && p.HasDeleted {
			return true
		}
	}
	return false
}
