package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/finegrain/finegrain/examples/internal/chart"
	"github.com/finegrain/finegrain/examples/internal/output"
	"github.com/finegrain/finegrain/gpu"
	"github.com/finegrain/finegrain/resource"
	"github.com/finegrain/finegrain/sim"
	"github.com/finegrain/finegrain/sim/workload"
)

// The fill experiment's range and resolution, in shares of the cluster's GPU
// capacity, and the points the table shows.
const (
	fillUpTo = 1.3
	fillStep = 0.01
)

var fillColumns = []float64{0.8, 0.9, 1.0, 1.1, 1.2, 1.3}

// fill runs the ATC'23 study's headline experiment on the openb trace (sim.Fill): pods
// drawn from the trace arrive on the empty cluster until their GPU demand reaches 130%
// of its GPU capacity, placed by each GPU scorer, and the GPU left unallocated is
// recorded against the demand that arrived. It prints the unallocated share at a few
// points per scorer (mean over the seeds), writes fill.csv and
// fill-unallocated-gpu.svg, and compares FGD with the best baseline.
func fill(c *config, tr *trace, cl *workload.Cluster, out io.Writer) error {
	start := time.Now()
	pool, shapes := fillPool(tr.pods, cl)
	if len(pool) == 0 {
		return fmt.Errorf("fill: no pod of %s fits the cluster", tr.name)
	}
	cpu := resource.Mask(1 << workload.SlotCPU) // the study's shapes and fit test read CPU alone
	typical, err := gpu.TypicalShapes(shapes, cpu, c.coverage)
	if err != nil {
		return err
	}
	fgd, err := gpu.NewFGD(typical, cpu)
	if err != nil {
		return err
	}
	policies := []sim.Policy{
		sim.GPUSharing("BestFit", gpu.DeviceBestFit{}), sim.GPUSharing("DotProduct", gpu.DotProduct{}),
		sim.GPUSharing("Packing", gpu.Packing{}), sim.GPUSharing("FGD", fgd),
	}
	type job struct {
		p    sim.Policy
		seed uint64
		res  *sim.FillResult
		err  error
	}
	var jobs []*job
	for r := 0; r < c.runs; r++ {
		for _, p := range policies {
			jobs = append(jobs, &job{p: p, seed: c.seed + uint64(r)})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, c.workers)
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			j.res, j.err = sim.Fill(pool, cl, j.p, rand.New(rand.NewPCG(j.seed, 0xf111)), fillUpTo, fillStep)
		}()
	}
	wg.Wait()
	unalloc := map[string][]float64{} // policy → mean unallocated share at each step
	steps := int(math.Round(fillUpTo / fillStep))
	rows := [][]string{{"policy", "seed", "arrived", "allocated", "placed", "failed"}}
	for _, j := range jobs {
		if j.err != nil {
			return fmt.Errorf("fill %s seed %d: %w", j.p.Name, j.seed, j.err)
		}
		u := unalloc[j.p.Name]
		if u == nil {
			u = make([]float64, steps)
			unalloc[j.p.Name] = u
		}
		for k, pt := range j.res.Points {
			if k < steps {
				u[k] += (1 - pt.Allocated) / float64(c.runs)
			}
			rows = append(rows, []string{j.p.Name, strconv.FormatUint(j.seed, 10), f4(pt.Arrived), f4(pt.Allocated), strconv.Itoa(pt.Placed), strconv.Itoa(pt.Failed)})
		}
	}
	if err := output.WriteCSV(filepath.Join(c.out, "fill.csv"), rows); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== GPU fragmentation: %s on %d nodes, %d GPUs (ATC'23 fill experiment) ==\n", tr.name, len(cl.Nodes), cl.GPUCapacity()/gpu.Milli)
	fmt.Fprintf(out, "Pods drawn from the trace (%d usable) arrive until their GPU demand is %.0f%% of the GPU capacity;\n", len(pool), 100*fillUpTo)
	fmt.Fprintf(out, "unallocated GPU, %% of capacity, when the arrived demand reached (mean of %s; FGD over %d typical shapes):\n", plural(c.runs, "seed"), len(typical))
	tw := tabwriterFor(out)
	fmt.Fprint(tw, "policy\t")
	for _, x := range fillColumns {
		fmt.Fprintf(tw, "%.0f%%\t", 100*x)
	}
	fmt.Fprintln(tw)
	at := func(name string, x float64) float64 { return unalloc[name][int(math.Round(x/fillStep))-1] }
	for _, p := range policies {
		fmt.Fprintf(tw, "%s\t", p.Name)
		for _, x := range fillColumns {
			fmt.Fprintf(tw, "%.1f\t", 100*at(p.Name, x))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	best := policies[0].Name
	for _, p := range policies[:len(policies)-1] {
		if at(p.Name, fillUpTo) < at(best, fillUpTo) {
			best = p.Name
		}
	}
	b, f := at(best, fillUpTo), at("FGD", fillUpTo)
	fmt.Fprintf(out, "At %.0f%% arrived, FGD leaves %.1f%% of the GPUs unallocated, the best baseline (%s) %.1f%%", 100*fillUpTo, 100*f, best, 100*b)
	if b > 0 {
		fmt.Fprintf(out, ": %.0f%% %s", 100*math.Abs(1-f/b), map[bool]string{true: "less", false: "more"}[f <= b])
	}
	sep := " "
	if !c.wide {
		sep = "\n" // within 120 columns
	}
	fmt.Fprintln(out, sep+"(the paper: up to about half as much as the best baseline).")
	fmt.Fprintf(out, "(%s fill runs in %v)\n", strconv.Itoa(len(jobs)), time.Since(start).Round(100*time.Millisecond))
	return fillChart(filepath.Join(c.out, "fill-unallocated-gpu.svg"), tr.name, policies, unalloc)
}

// fillPool is the trace's pods that some node holds when empty (a pod asking for a GPU
// model the cluster lacks would fail everywhere), as tasks and shapes.
func fillPool(pods []workload.OpenBPod, cl *workload.Cluster) ([]workload.Task, []gpu.Shape) {
	var pool []workload.Task
	var shapes []gpu.Shape
	for i := range pods {
		t, err := workload.OpenBTask(&pods[i], time.Second)
		if err != nil || !cl.Holds(&t) {
			continue
		}
		pool = append(pool, t)
		shapes = append(shapes, gpu.Shape{Request: t.Request, GPU: t.GPU})
	}
	return pool, shapes
}

// fillChartFrom is where the chart's x axis starts: below it every scorer places
// every pod, and the lines coincide.
const fillChartFrom = 0.7

// fillChart draws the unallocated GPU against the arrived demand, a line per policy,
// from fillChartFrom of the capacity.
func fillChart(path, name string, policies []sim.Policy, unalloc map[string][]float64) error {
	ch := chart.New("GPU left unallocated as pods arrive ("+name+")", "arrived GPU demand (% of capacity)", "unallocated GPU (% of capacity)")
	for i, p := range policies {
		var pts plotter.XYs
		for k, v := range unalloc[p.Name] {
			if x := float64(k+1) * fillStep; x >= fillChartFrom-1e-9 {
				pts = append(pts, plotter.XY{X: 100 * x, Y: 100 * v})
			}
		}
		if err := ch.AddLine(p.Name, i, pts); err != nil {
			return err
		}
	}
	ch.Plot.Y.Min = 0
	return ch.Save(path)
}
