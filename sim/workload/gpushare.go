package workload

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/stage"
)

// OpenBRack is the rack of every node of OpenBCluster: the trace gives none, and its
// pods read no input, so locality plays no part.
const OpenBRack = "openb"

// OpenBCluster turns an openb node list (ParseOpenBNodes) into a simulated cluster: a
// node per row, with the row's CPUs and memory (no disk or network bandwidth: the
// trace's pods use none), its GPUs as devices of its model (finegrain.Node.GPU), speed
// 1, all in rack OpenBRack. It fails on an empty list, a duplicate or empty name, a
// GPU count out of range, or a MemoryMiB that is negative or whose bytes do not fit an
// int64 (above 2⁴³ − 1, as ParseOpenBNodes refuses).
func OpenBCluster(name string, nodes []OpenBNode) (Cluster, error) {
	if len(nodes) == 0 {
		return Cluster{}, fieldErr("nodes", 0, ErrEmpty)
	}
	if name == "" {
		name = "openb"
	}
	cl := Cluster{Name: name, Nodes: make([]NodeSpec, len(nodes)), IntraRackBandwidth: 125_000_000, CrossRackBandwidth: 125_000_000}
	for i, n := range nodes {
		mem, err := memoryBytes(fmt.Sprintf("nodes[%d](%s).MemoryMiB", i, n.Name), n.MemoryMiB)
		if err != nil {
			return Cluster{}, err
		}
		var c resource.Tuple
		c[SlotCPU], c[SlotMemory] = n.CPUMilli, mem
		cl.Nodes[i] = NodeSpec{ID: n.Name, Rack: OpenBRack, Capacity: c, Speed: 1, GPU: gpu.Spec{Model: n.Model, Count: n.GPUs}}
	}
	if err := cl.Validate(); err != nil {
		return Cluster{}, err
	}
	return cl, nil
}

// memoryBytes is an openb memory_mib in bytes, refused (naming field) when it is
// negative or its bytes do not fit an int64, as the openb parsers refuse it.
func memoryBytes(field string, mib int64) (int64, error) {
	if mib < 0 || mib > maxMiB {
		return 0, fieldErr(field, mib, ErrInvalidValue)
	}
	return mib * MiB, nil
}

// OpenBStats counts what FromOpenB did with the pods.
type OpenBStats struct {
	// Used counts the pods that became tasks.
	Used int
	// Untimed counts the pods skipped for want of a creation or deletion time (the
	// multigpu20 list has no times; pending pods have no deletion in some lists).
	Untimed int
	// Unplaceable counts the pods skipped because no node of the cluster holds them
	// even empty: their CPUs, memory or GPU devices (count or model) exceed every
	// node's.
	Unplaceable int
}

// OpenBTask is pod p as a task of the openb cluster's schema: its CPUs and memory as
// Request, its GPU demand (count, share, models), a true profile that uses the request
// throughout for d (at least MinStageDuration): the trace has requests and times only,
// and its class: latency-sensitive when the pod is (OpenBPod.LatencySensitive), with an
// SLO of DefaultSLOFactor times that profile's duration (FromOpenB's WithSLOFactor sets
// another factor), batch otherwise. It fails on a nil p, an invalid GPU demand or request, or a MemoryMiB
// that is negative or whose bytes do not fit an int64 (above 2⁴³ − 1, as
// ParseOpenBPods refuses).
func OpenBTask(p *OpenBPod, d time.Duration) (Task, error) {
	if p == nil {
		return Task{}, fieldErr("pod", "nil", ErrInvalidValue)
	}
	mem, err := memoryBytes("pod "+p.Name+".MemoryMiB", p.MemoryMiB)
	if err != nil {
		return Task{}, err
	}
	var req resource.Tuple
	req[SlotCPU], req[SlotMemory] = p.CPUMilli, mem
	dem := gpu.Demand{Count: p.NumGPU, Milli: p.GPUMilli, Models: slices.Clone(p.GPUSpec)}
	if err := dem.Validate(); err != nil {
		return Task{}, fieldErr("pod "+p.Name+".GPU", dem, fmt.Errorf("%w: %w", ErrInvalidValue, err))
	}
	if err := schema.Validate(req); err != nil {
		return Task{}, fieldErr("pod "+p.Name+".Request", schema.Format(req), err)
	}
	tp, err := stage.NewProfile(schema, stage.Stage{Duration: max(d, MinStageDuration), Demand: req})
	if err != nil {
		return Task{}, fieldErr("pod "+p.Name, d, err)
	}
	t := Task{ID: p.Name, Kind: Map, True: tp, Request: req, GPU: dem}
	if p.LatencySensitive() {
		t.LatencySensitive, t.SLO = true, sloFor(&t, DefaultSLOFactor)
	}
	return t, nil
}

// FromOpenB turns an openb pod list (ParseOpenBPods) into a workload for cluster cl
// (OpenBCluster): a job per pod, in queue "default", submitted at the pod's creation
// time times timeScale, rebased so that the first arrives at 0, with one task
// (OpenBTask) that runs for its deletion time less its creation time, times
// timeScale. timeScale (in (0, 1]) compresses the trace: its pods span about 150 days,
// and 0.001 replays them in about 3.6 hours of simulated time. Pods without both times,
// and pods no node of cl holds even empty, are skipped and counted.
//
// A pod is latency-sensitive when its qos says so (OpenBPod.LatencySensitive: LS, the
// class Koordinator, the co-location scheduler of Alibaba's clusters, gives services),
// and batch otherwise: BE (best effort, Koordinator's class for batch work that fills
// what services leave), Burstable and Guaranteed (Kubernetes' QoS classes, which say
// how a pod's requests and limits protect it from eviction, not whether it serves
// requests), or none. The trace gives no SLO: a latency-sensitive task's is
// WithSLOFactor (DefaultSLOFactor, 1.5, by default) times its true run time — the
// pod's deletion less its creation, times timeScale, at least MinStageDuration — so
// that it meets its objective when the simulated cluster slows it down by at most that
// factor. WithSLOFactor is the only
// option it uses.
//
// It fails on an invalid timeScale or option, a nil or invalid cluster, on a pod with
// an empty name or one given before, a negative creation or deletion time, or an
// invalid request or GPU demand (see OpenBTask), or on no pod left.
func FromOpenB(name string, pods []OpenBPod, cl *Cluster, timeScale float64, opts ...Option) (Workload, OpenBStats, error) {
	var st OpenBStats
	if !(timeScale > 0 && timeScale <= 1) {
		return Workload{}, st, fieldErr("timeScale", timeScale, ErrInvalidOption)
	}
	c := defaults()
	if err := c.apply(opts); err != nil {
		return Workload{}, st, err
	}
	if err := cl.Validate(); err != nil { // a nil cl included
		return Workload{}, st, err
	}
	if name == "" {
		name = "openb"
	}
	type timed struct {
		p  *OpenBPod
		at time.Duration
		t  Task
	}
	var list []timed
	var first time.Duration // the earliest arrival, once found
	found := false
	seen := make(map[string]int, len(pods))
	for i := range pods {
		p := &pods[i]
		f := func(n string) string { return fmt.Sprintf("pods[%d](%s).%s", i, p.Name, n) }
		switch {
		case p.Name == "":
			return Workload{}, st, fieldErr(f("Name"), p.Name, ErrEmpty)
		case p.HasCreated && p.Created < 0:
			return Workload{}, st, fieldErr(f("Created"), p.Created, ErrInvalidValue)
		case p.HasDeleted && p.Deleted < 0:
			return Workload{}, st, fieldErr(f("Deleted"), p.Deleted, ErrInvalidValue)
		}
		if k, dup := seen[p.Name]; dup {
			return Workload{}, st, fieldErr(f("Name"), fmt.Sprintf("%s (also pods[%d])", p.Name, k), ErrDuplicateID)
		}
		seen[p.Name] = i
		if !p.HasCreated || !p.HasDeleted || p.Deleted < p.Created {
			st.Untimed++
			continue
		}
		t, err := OpenBTask(p, time.Duration(float64(p.Deleted-p.Created)*timeScale))
		if err != nil {
			return Workload{}, st, err
		}
		if !cl.Holds(&t) {
			st.Unplaceable++
			continue
		}
		if t.LatencySensitive {
			c.setLatencySensitive(&t)
		}
		at := time.Duration(float64(p.Created) * timeScale)
		list = append(list, timed{p, at, t})
		if !found || at < first {
			first, found = at, true
		}
	}
	if len(list) == 0 {
		return Workload{}, st, fieldErr("pods", fmt.Sprintf("%d untimed, %d unplaceable", st.Untimed, st.Unplaceable), ErrEmpty)
	}
	slices.SortStableFunc(list, func(a, b timed) int { return cmp.Compare(a.at, b.at) })
	w := Workload{Name: name, Jobs: make([]Job, 0, len(list))}
	for _, e := range list {
		app := "cpu"
		switch {
		case e.p.SharesGPU():
			app = "gpu-share"
		case e.p.NumGPU > 0:
			app = fmt.Sprintf("gpu-%d", e.p.NumGPU)
		}
		w.Jobs = append(w.Jobs, Job{ID: e.p.Name, Queue: "default", Submit: e.at - first, App: app, Logic: name + "/" + e.p.Name, Tasks: []Task{e.t}})
	}
	st.Used = len(w.Jobs)
	return w, st, nil
}
