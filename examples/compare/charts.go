package main

import (
	"image/color"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/finegrain/finegrain/sim"
)

// Chart size, and the margin kept free right of the data so that the last tick label
// of the x axis is not cut off.
const (
	chartW, chartH = 20 * vg.Centimeter, 11 * vg.Centimeter
	rightMargin    = 4 * vg.Millimeter
)

// chart is a plot with its legend, which is drawn in a column of its own right of the
// data so that it never covers a line.
type chart struct {
	p      *plot.Plot
	legend plot.Legend
}

// newChart is a chart with the title and axis labels and rounded tick labels.
func newChart(title, x, y string) *chart {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Millimeter * 2
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Tick.Marker = roundTicks{}
	p.Y.Tick.Marker = roundTicks{}
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	return &chart{p: p, legend: l}
}

// save writes the chart as SVG: the plot on the left, the legend in a column on the
// right, aligned with the top of the data area.
func (c *chart) save(path string) error {
	svg := vgsvg.New(chartW, chartH)
	dc := draw.New(svg)
	// The legend's width as measured with the chart's font, with room to spare for a
	// viewer that substitutes a wider one.
	lr := c.legend.Rectangle(dc)
	legendW := (lr.Max.X-lr.Min.X)*1.3 + 5*vg.Millimeter
	c.p.Draw(draw.Crop(dc, 0, -legendW-rightMargin, 0, 0))
	title := c.p.Title.TextStyle.Rectangle(c.p.Title.Text).Size().Y + c.p.Title.Padding
	c.legend.Draw(draw.Crop(dc, chartW-legendW+2*vg.Millimeter, 0, 0, -title-vg.Millimeter))
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

// roundTicks mark an axis at multiples of a round step (1, 2 or 5 × 10^k, chosen for
// about five labels), with minor ticks between, and label each with as many decimals
// as the step needs: "0.3", not "0.30000000000000004"; "250", not "250.00".
type roundTicks struct{}

func (roundTicks) Ticks(lo, hi float64) []plot.Tick {
	single := []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return single
	}
	step, minor := roundStep((hi - lo) / 5)
	first := math.Ceil(lo/minor-1e-9) * minor
	if !(minor > 0) || math.IsInf(first, 0) || math.IsNaN(first) {
		return single
	}
	n := math.Floor((hi-first)/minor + 1e-9)
	if !(n >= 0) || n > maxTicks {
		return single
	}
	format := func(v float64) string {
		if a := math.Abs(v); a >= 1e6 || (a > 0 && a < 1e-4) {
			return strconv.FormatFloat(v, 'g', 6, 64)
		}
		return strconv.FormatFloat(v, 'f', max(0, int(math.Ceil(-math.Log10(step)-1e-9))), 64)
	}
	ts := make([]plot.Tick, 0, int(n)+1)
	for k := 0; k <= int(n); k++ {
		v := first + float64(k)*minor
		if math.Abs(v) < minor*1e-9 {
			v = 0 // a sum that missed zero by a rounding error, and no "-0"
		}
		t := plot.Tick{Value: v}
		if q := v / step; math.Abs(q-math.Round(q)) < 1e-6 {
			t.Label = format(v)
		}
		ts = append(ts, t)
	}
	return ts
}

// maxTicks bounds the ticks of one axis (about 5 labels with 4 minor ticks between
// each, where the floating-point grid allows).
const maxTicks = 64

// roundStep is the smallest of 1, 2 and 5 × 10^k at least raw, and its minor step.
func roundStep(raw float64) (step, minor float64) {
	p := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []struct{ step, minor float64 }{{1, 0.2}, {2, 0.5}, {5, 1}, {10, 2}} {
		if m.step*p >= raw*(1-1e-9) {
			return m.step * p, m.minor * p
		}
	}
	return 10 * p, 2 * p
}

// fractionTicks mark a [0, 1] axis every 0.2.
var fractionTicks = plot.ConstantTicks{
	{Value: 0, Label: "0"}, {Value: 0.1}, {Value: 0.2, Label: "0.2"}, {Value: 0.3},
	{Value: 0.4, Label: "0.4"}, {Value: 0.5}, {Value: 0.6, Label: "0.6"}, {Value: 0.7},
	{Value: 0.8, Label: "0.8"}, {Value: 0.9}, {Value: 1, Label: "1"},
}

// cdfChart draws the empirical CDF of job completion times, one line per policy, on a
// log time axis (the Facebook sizes span seconds to hours). byPolicy holds each
// policy's results, every seed's jobs pooled into one distribution.
func cdfChart(path, title string, policies []string, byPolicy map[string][]*sim.Result) error {
	c := newChart(title, "job completion time (s, log scale)", "fraction of jobs finished")
	c.p.X.Scale = plot.LogScale{}
	c.p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	c.p.Y.Tick.Marker = fractionTicks
	for i, name := range policies {
		var xs []float64
		for _, r := range byPolicy[name] {
			for _, j := range r.Jobs {
				if j.Finished {
					xs = append(xs, max(0.1, j.Completion().Seconds()))
				}
			}
		}
		if len(xs) == 0 {
			continue
		}
		sort.Float64s(xs)
		// The fraction of all jobs, so that a run stopped by its time limit does not
		// reach 1.
		var jobs int
		for _, r := range byPolicy[name] {
			jobs += len(r.Jobs)
		}
		pts := make(plotter.XYs, len(xs))
		for k, x := range xs {
			pts[k] = plotter.XY{X: x, Y: float64(k+1) / float64(jobs)}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		c.p.Add(l)
		c.legend.Add(name, l)
	}
	c.p.Y.Min, c.p.Y.Max = 0, 1
	return c.save(path)
}

// utilChart draws one dimension's used (solid) and allocated (dashed) fraction of the
// cluster over time, one colour per policy.
func utilChart(path, title string, slot int, results []*sim.Result) error {
	c := newChart(title, "time (s)", "fraction of the cluster")
	c.p.Y.Tick.Marker = fractionTicks
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
		la.Dashes = allocatedDashes
		c.p.Add(lu, la)
		c.legend.Add(r.Policy, lu)
	}
	// The two line styles, in grey.
	gu, ga := &plotter.Line{LineStyle: plotter.DefaultLineStyle}, &plotter.Line{LineStyle: plotter.DefaultLineStyle}
	gu.Color, ga.Color = color.Gray{Y: 100}, color.Gray{Y: 100}
	ga.Dashes = allocatedDashes
	c.legend.Add("used", gu)
	c.legend.Add("allocated", ga)
	c.p.Y.Min, c.p.Y.Max = 0, 1
	return c.save(path)
}

var allocatedDashes = []vg.Length{vg.Points(3), vg.Points(2)}

// gainChart draws FGM's gain (%) against the data volume, one line per baseline.
func gainChart(path, title string, lines map[string][][2]float64) error {
	c := newChart(title, "total input (GiB)", "FGM's gain in mean job completion (%)")
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
		c.p.Add(l, s)
		c.legend.Add(n, l, s)
	}
	zero := plotter.NewFunction(func(float64) float64 { return 0 })
	zero.Color = color.Gray{Y: 128}
	zero.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
	c.p.Add(zero)
	c.p.Y.Min = min(c.p.Y.Min, 0) // the zero line is always in view
	return c.save(path)
}
