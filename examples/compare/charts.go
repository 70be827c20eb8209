package main

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/finegrain/finegrain/examples/internal/chart"
	"github.com/finegrain/finegrain/sim"
)

// cdfChart draws the empirical CDF of job completion times, one line per policy, on a
// log time axis (the Facebook sizes span seconds to hours). byPolicy holds each
// policy's results, every seed's jobs pooled into one distribution.
func cdfChart(path, title string, policies []string, byPolicy map[string][]*sim.Result) error {
	c := chart.New(title, "job completion time (s, log scale)", "fraction of jobs finished")
	c.Plot.X.Scale = plot.LogScale{}
	c.Plot.X.Tick.Marker = plot.LogTicks{Prec: -1}
	c.Plot.Y.Tick.Marker = chart.FractionTicks
	for i, name := range policies {
		pts := cdfPoints(byPolicy[name])
		if len(pts) == 0 {
			continue
		}
		if err := c.AddLine(name, i, pts); err != nil {
			return err
		}
	}
	chart.LogRange(&c.Plot.X) // no job finished, or all in the same time
	c.Plot.Y.Min, c.Plot.Y.Max = 0, 1
	return c.Save(path)
}

// utilChart draws one dimension's used (solid) and allocated (dashed) fraction of the
// cluster over time, each policy in its colour.
func utilChart(path, title string, slot int, results []*sim.Result) error {
	c := chart.New(title, "time (s)", "fraction of the cluster")
	c.Plot.Y.Tick.Marker = chart.FractionTicks
	for _, r := range results {
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
		lu.Color = c.Palette.Color(r.Policy)
		la.Color = lu.Color
		lu.Width, la.Width = vg.Points(1.2), vg.Points(0.8)
		la.Dashes = allocatedDashes
		c.Plot.Add(lu, la)
		c.Legend.Add(r.Policy, lu)
	}
	// The two line styles, in grey.
	gu, ga := &plotter.Line{LineStyle: plotter.DefaultLineStyle}, &plotter.Line{LineStyle: plotter.DefaultLineStyle}
	gu.Color, ga.Color = color.Gray{Y: 100}, color.Gray{Y: 100}
	ga.Dashes = allocatedDashes
	c.Legend.Add("used", gu)
	c.Legend.Add("allocated", ga)
	c.Plot.Y.Min, c.Plot.Y.Max = 0, 1
	return c.Save(path)
}

var allocatedDashes = []vg.Length{vg.Points(3), vg.Points(2)}

// gainChart draws FGM's gain (%) against the data volume, one line per baseline, in
// the order of names (those without points left out), each in its colour.
func gainChart(path, title string, names []string, lines map[string][][2]float64) error {
	c := chart.New(title, "total input (GiB)", "FGM's gain in mean job completion (%)")
	for i, n := range names {
		if len(lines[n]) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(lines[n]))
		for k, xy := range lines[n] {
			pts[k] = plotter.XY{X: xy[0], Y: xy[1]}
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color = c.Palette.Color(n)
		s.Color = l.Color
		s.Shape = plotutil.Shape(i)
		c.Plot.Add(l, s)
		c.Legend.Add(n, l, s)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Color = color.Gray{Y: 128}
	zero.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	c.Plot.Add(zero)
	c.Plot.Y.Min = min(c.Plot.Y.Min, 0) // the zero line is always in view
	return c.Save(path)
}

// lossChart draws, for a cloud scenario, each policy's mean job completion (y) against
// the share of the co-located applications' CPU demand it left unserved (x,
// sim.ColocatedLoss.Shortfall): one point per policy, means over the seeds (rows), in
// the policies' colours. The better trade is down and to the left. A
// policy with no finished job (mean 0) cannot be drawn on the log axis and is left out.
func lossChart(path, title string, rows []row) error {
	c := chart.New(title, "co-located applications' CPU demand not served (%)", "mean job completion (s, log scale)")
	c.Plot.Y.Scale = plot.LogScale{}
	c.Plot.Y.Tick.Marker = chart.LogTicks{}
	for i, r := range rows {
		if !(r.jct > 0) {
			continue
		}
		s, err := plotter.NewScatter(plotter.XYs{{X: 100 * r.coloCPU, Y: r.jct}})
		if err != nil {
			return err
		}
		s.Color, s.Shape, s.Radius = c.Palette.Color(r.policy), plotutil.Shape(i), vg.Points(4)
		c.Plot.Add(s)
		c.Legend.Add(r.policy, s)
	}
	// A margin around the points, and the loss axis from 0 (the policies cluster).
	c.Plot.X.Min = 0
	c.Plot.X.Max = max(c.Plot.X.Max*1.1, 1)
	chart.LogRange(&c.Plot.Y) // one point, or every policy at one value
	c.Plot.Y.Min, c.Plot.Y.Max = c.Plot.Y.Min/1.5, c.Plot.Y.Max*1.5
	return c.Save(path)
}
