package main

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/finegrain/finegrain/examples/internal/chart"
)

// cdfLine is one configuration's line: the completion times of its finished jobs
// (seconds, sorted) out of jobs in all.
type cdfLine struct {
	name string
	xs   []float64
	jobs int
}

// cdfChart draws the empirical CDF of job completion times, one line per
// configuration, on a log time axis (preemption moves them by an order of
// magnitude), and writes it as SVG to path. The fraction is of all the jobs, so a line
// that does not reach 1 has jobs that did not finish.
func cdfChart(path, title string, lines []cdfLine) error {
	c := chart.New(title, "job completion time (s, log scale)", "fraction of jobs finished")
	c.Plot.X.Scale = plot.LogScale{}
	c.Plot.X.Tick.Marker = chart.LogTicks{}
	c.Plot.Y.Tick.Marker = chart.FractionTicks
	for i, l := range lines {
		if len(l.xs) == 0 || l.jobs == 0 {
			continue
		}
		// A step function: the fraction rises at each completion.
		pts := make(plotter.XYs, 0, 2*len(l.xs))
		for k, x := range l.xs {
			x = max(x, 1) // the log axis starts at 1 s
			pts = append(pts, plotter.XY{X: x, Y: float64(k) / float64(l.jobs)}, plotter.XY{X: x, Y: float64(k+1) / float64(l.jobs)})
		}
		if err := c.AddLine(l.name, i, pts); err != nil {
			return err
		}
	}
	chart.LogRange(&c.Plot.X) // no high-priority job finished, or all within 1 s
	c.Plot.Y.Min, c.Plot.Y.Max = 0, 1
	return c.Save(path)
}
