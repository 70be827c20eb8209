package main

import (
	"image/color"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/finegrain/finegrain/sim"
)

const chartW, chartH = 18 * vg.Centimeter, 11 * vg.Centimeter

// newPlot is a plot with the title and axis labels, legend at the top left.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Tick.Marker = plainTicks{}
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	return p
}

// plainTicks are plot.DefaultTicks with labels in the shortest form ("250", not
// "250.00").
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', -1, 64)
		}
	}
	return ts
}

// cdfChart draws the empirical CDF of job completion times, one line per policy, on a
// log time axis (the Facebook sizes span seconds to hours).
func cdfChart(path, title string, results []*sim.Result) error {
	p := newPlot(title, "job completion time (s, log scale)", "fraction of jobs")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	for i, r := range results {
		var xs []float64
		for _, j := range r.Jobs {
			if j.Finished {
				xs = append(xs, max(0.1, j.Completion().Seconds()))
			}
		}
		if len(xs) == 0 {
			continue
		}
		sort.Float64s(xs)
		pts := make(plotter.XYs, len(xs))
		for k, x := range xs {
			pts[k] = plotter.XY{X: x, Y: float64(k+1) / float64(len(xs))}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(r.Policy, l)
	}
	p.Y.Min, p.Y.Max = 0, 1
	return p.Save(chartW, chartH, path)
}

// utilChart draws one dimension's used (solid) and allocated (dashed) fraction of the
// cluster over time, one colour per policy.
func utilChart(path, title string, slot int, results []*sim.Result) error {
	p := newPlot(title, "time (s)", "fraction of the cluster")
	for i, r := range results {
		used := make(plotter.XYs, len(r.Samples))
		alloc := make(plotter.XYs, len(r.Samples))
		for k, s := range r.Samples {
			used[k] = plotter.XY{X: s.At.Seconds(), Y: s.Used[slot]}
			alloc[k] = plotter.XY{X: s.At.Seconds(), Y: s.Allocated[slot]}
		}
		if len(used) == 0 {
			continue
		}
		lu, err := plotter.NewLine(used)
		if err != nil {
			return err
		}
		la, err := plotter.NewLine(alloc)
		if err != nil {
			return err
		}
		lu.Color, la.Color = plotutil.Color(i), plotutil.Color(i)
		lu.Width, la.Width = vg.Points(1.2), vg.Points(0.8)
		la.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
		p.Add(lu, la)
		p.Legend.Add(r.Policy, lu)
	}
	p.Y.Min = 0
	p.Legend.Left = false
	return p.Save(chartW, chartH, path)
}

// gainChart draws FGM's gain (%) against the data volume, one line per baseline.
func gainChart(path, title string, lines map[string][][2]float64) error {
	p := newPlot(title, "total input (GiB)", "gain in mean job completion (%)")
	var names []string
	for n := range lines {
		names = append(names, n)
	}
	// Baselines in the order of sim.Baselines.
	order := map[string]int{}
	for i, b := range sim.Baselines() {
		order[b.Name] = i
	}
	slices.SortFunc(names, func(a, b string) int { return order[a] - order[b] })
	for i, n := range names {
		pts := make(plotter.XYs, len(lines[n]))
		for k, xy := range lines[n] {
			pts[k] = plotter.XY{X: xy[0], Y: xy[1]}
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, s.Color = plotutil.Color(i), plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		p.Add(l, s)
		p.Legend.Add(n, l, s)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Color = color.Gray{Y: 128}
	zero.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	p.Add(zero)
	return p.Save(chartW, chartH, path)
}
