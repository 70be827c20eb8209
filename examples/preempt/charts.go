package main

import (
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The chart is drawn as examples/compare draws its charts: gonum/plot to SVG, the
// legend in a column of its own right of the data so that it never covers a line,
// round tick labels.

// Chart size, and the margin kept free right of the data so that the last tick label
// of the x axis is not cut off.
const (
	chartW, chartH = 20 * vg.Centimeter, 11 * vg.Centimeter
	rightMargin    = 4 * vg.Millimeter
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
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Millimeter * 2
	p.X.Label.Text = "job completion time (s, log scale)"
	p.Y.Label.Text = "fraction of jobs finished"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Tick.Marker = fractionTicks
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
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
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		line.Width = vg.Points(1.5)
		p.Add(line)
		legend.Add(l.name, line)
	}
	p.Y.Min, p.Y.Max = 0, 1
	return save(p, legend, path)
}

// save writes the plot as SVG: the plot on the left, the legend in a column on the
// right, aligned with the top of the data area.
func save(p *plot.Plot, legend plot.Legend, path string) error {
	svg := vgsvg.New(chartW, chartH)
	dc := draw.New(svg)
	// The legend's width as measured with the chart's font, with room to spare for a
	// viewer that substitutes a wider one.
	lr := legend.Rectangle(dc)
	legendW := (lr.Max.X-lr.Min.X)*1.3 + 5*vg.Millimeter
	p.Draw(draw.Crop(dc, 0, -legendW-rightMargin, 0, 0))
	title := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	legend.Draw(draw.Crop(dc, chartW-legendW+2*vg.Millimeter, 0, 0, -title-vg.Millimeter))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := svg.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// logTicks mark a log axis at 1, 2 and 5 × 10^k, labelled, with the other whole
// multiples of 10^k as minor ticks.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ts []plot.Tick
	for p := math.Pow10(int(math.Floor(math.Log10(lo)))); p <= hi && len(ts) < maxTicks; p *= 10 {
		for m := 1.0; m < 10; m++ {
			v := m * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// maxTicks bounds the ticks of one axis.
const maxTicks = 64

// fractionTicks mark a [0, 1] axis every 0.2.
var fractionTicks = plot.ConstantTicks{
	{Value: 0, Label: "0"}, {Value: 0.1}, {Value: 0.2, Label: "0.2"}, {Value: 0.3},
	{Value: 0.4, Label: "0.4"}, {Value: 0.5}, {Value: 0.6, Label: "0.6"}, {Value: 0.7},
	{Value: 0.8, Label: "0.8"}, {Value: 0.9}, {Value: 1, Label: "1"},
}
