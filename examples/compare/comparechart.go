package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/finegrain/finegrain/examples/internal/chart"
	"github.com/finegrain/finegrain/sim"
)

// The side-by-side chart's size: two panels and a legend column.
const (
	compareWidth, compareHeight = 34 * vg.Centimeter, 12 * vg.Centimeter
)

// relMetrics are the bar groups of the side-by-side chart: a policy's value divided by
// the reference's.
var relMetrics = []struct {
	label string
	value func(row) float64
}{
	{"makespan", func(r row) float64 { return r.makespan }},
	{"JCT mean", func(r row) float64 { return r.jct }},
	{"JCT p95", func(r row) float64 { return r.p95 }},
}

// cdfPoints is the empirical CDF of the finished jobs' completion times over results
// (every seed's jobs pooled), as the fraction of all jobs so that a run stopped by its
// time limit does not reach 1; nil when no job finished.
func cdfPoints(results []*sim.Result) plotter.XYs {
	var xs []float64
	jobs := 0
	for _, r := range results {
		jobs += len(r.Jobs)
		for _, j := range r.Jobs {
			if j.Finished {
				xs = append(xs, max(0.1, j.Completion().Seconds()))
			}
		}
	}
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	pts := make(plotter.XYs, len(xs))
	for k, x := range xs {
		pts[k] = plotter.XY{X: x, Y: float64(k+1) / float64(jobs)}
	}
	return pts
}

// compareChart draws one scenario's policies side by side: on the left every policy's
// job-completion CDF (byPolicy: each policy's results, seeds pooled), on the right
// grouped bars of each policy's makespan, mean and p95 job completion divided by the
// reference policy's (rows: means over the seeds), on a log axis from 1, so that a bar
// up means the reference did better. Each policy in its colour (chart.Palette, the same
// in every chart), named once in a legend column on the right. title heads the whole
// chart.
func compareChart(path, title string, policies []string, byPolicy map[string][]*sim.Result, rows []row, ref string) error {
	var colors chart.Palette
	cdf := chart.New("Job completion CDF", "job completion time (s, log scale)", "fraction of jobs finished")
	cdf.Plot.X.Scale = plot.LogScale{}
	cdf.Plot.X.Tick.Marker = decadeTicks{}
	cdf.Plot.Y.Tick.Marker = chart.FractionTicks
	cdf.Plot.Y.Min, cdf.Plot.Y.Max = 0, 1
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Padding = vg.Points(2)
	for i, name := range policies {
		l, err := plotter.NewLine(cdfPoints(byPolicy[name]))
		if err != nil {
			// No job finished: the policy is named in the legend, without a line.
			l = &plotter.Line{}
		}
		l.Color, l.Dashes, l.Width = colors.Color(name), plotutil.Dashes(i), vg.Points(1.5)
		if len(l.XYs) > 0 {
			cdf.Plot.Add(l)
		}
		legend.Add(name, l)
	}
	chart.LogRange(&cdf.Plot.X) // no job finished, or all in the same time

	bars, err := relBars(policies, rows, ref, &colors)
	if err != nil {
		return err
	}

	svg := vgsvg.New(compareWidth, compareHeight)
	err = chart.Guard(func() {
		dc := draw.New(svg)
		head := text.Style{Font: font.From(plot.DefaultFont, 13), Color: color.Black, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
		headH := head.Rectangle(title).Size().Y + 5*vg.Millimeter
		dc.FillText(head, vg.Point{X: compareWidth / 2, Y: compareHeight - 2*vg.Millimeter}, title)
		body := draw.Crop(dc, 0, 0, 0, -headH)
		lr := legend.Rectangle(body)
		legendW := (lr.Max.X-lr.Min.X)*1.3 + 5*vg.Millimeter
		panelW := (compareWidth - legendW) / 2
		cdf.Plot.Draw(draw.Crop(body, 0, -(compareWidth - panelW), 0, 0))
		bars.Draw(draw.Crop(body, panelW+3*vg.Millimeter, -legendW-4*vg.Millimeter, 0, 0))
		titleH := cdf.Plot.Title.TextStyle.Rectangle(cdf.Plot.Title.Text).Size().Y + cdf.Plot.Title.Padding
		legend.Draw(draw.Crop(body, compareWidth-legendW+2*vg.Millimeter, 0, 0, -titleH-vg.Millimeter))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return chart.WriteSVG(path, svg)
}

// relBars is the right panel of compareChart: per metric, one bar per policy other
// than ref, from 1 to its value ÷ ref's, in its colour in colors. A ratio that is not
// finite and positive (a zero value) gets no bar.
func relBars(policies []string, rows []row, ref string, colors *chart.Palette) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Each policy ÷ " + ref + ", means over the seeds (above 1: " + ref + " better)"
	p.Title.Padding = 2 * vg.Millimeter
	p.Y.Label.Text = "policy ÷ " + ref + " (log scale)"
	p.Y.Scale = plot.LogScale{}
	g := plotter.NewGrid()
	g.Vertical.Color = nil
	p.Add(g)
	byName := map[string]row{}
	for _, r := range rows {
		byName[r.policy] = r
	}
	base, ok := byName[ref]
	var others []int // indexes into policies
	for i, n := range policies {
		if n != ref {
			others = append(others, i)
		}
	}
	var ticks []plot.Tick
	lo, hi := 1.0, 1.0
	slot := 0.8 / float64(max(1, len(others)))
	for m, metric := range relMetrics {
		ticks = append(ticks, plot.Tick{Value: float64(m), Label: metric.label})
		if !ok {
			continue
		}
		for k, i := range others {
			r, has := byName[policies[i]]
			v := metric.value(r) / metric.value(base)
			if !has || !(v > 0) || math.IsInf(v, 0) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
			x := float64(m) - 0.4 + (float64(k)+0.5)*slot
			p.Add(&ratioBar{x: x, width: slot * 0.85, y: v, color: colors.Color(policies[i])})
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, float64(len(relMetrics))-0.5
	p.Y.Min, p.Y.Max = lo/1.15, hi*1.15
	p.Y.Tick.Marker = ratioTicks{}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Color = color.Gray{Y: 60}
	one.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(one)
	return p, nil
}

// decadeTicks are chart.LogTicks, labelled at the powers of ten only when the axis
// spans more than three decades, so that the labels of a half-width panel do not run
// into each other.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := chart.LogTicks{}.Ticks(lo, hi)
	if hi/lo <= 1000 {
		return ts
	}
	for i, t := range ts {
		if e := math.Log10(t.Value); math.Abs(e-math.Round(e)) > 1e-9 {
			ts[i].Label = ""
		}
	}
	return ts
}

// ratioTicks label a log axis of ratios at round values, finer the narrower the range:
// the first of these mantissa sets that gives at most 8 labels in [lo, hi] (1 is
// always among them), else the powers of ten.
type ratioTicks struct{}

var ratioMantissas = [][]float64{
	{1, 1.1, 1.2, 1.3, 1.5, 1.7, 2, 2.5, 3, 4, 5, 6, 7, 8, 9},
	{1, 1.5, 2, 3, 5, 7},
	{1, 2, 5},
	{1},
}

// Ticks implements plot.Ticker.
func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ts []plot.Tick
	for _, ms := range ratioMantissas {
		ts = ts[:0]
		for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)) && len(ts) <= 8; k++ {
			for _, m := range ms {
				// Three significant digits: 0.7, not 0.7000000000000001.
				v, _ := strconv.ParseFloat(strconv.FormatFloat(m*math.Pow(10, k), 'g', 3, 64), 64)
				if v >= lo && v <= hi {
					ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
				}
			}
		}
		if len(ts) <= 8 {
			break
		}
	}
	return ts
}

// ratioBar is one bar from 1 to y, centred on x.
type ratioBar struct {
	x, width, y float64
	color       color.Color
}

// Plot implements plot.Plotter.
func (b *ratioBar) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0, x1 := trX(b.x-b.width/2), trX(b.x+b.width/2)
	y0, y1 := trY(1), trY(b.y)
	if y1 < y0 {
		y0, y1 = y1, y0
	}
	if y1-y0 < vg.Points(0.8) { // a tie: a visible sliver
		y0, y1 = y0-vg.Points(0.4), y0+vg.Points(0.4)
	}
	pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
	c.FillPolygon(b.color, c.ClipPolygonXY(pts))
}

// DataRange implements plot.DataRanger.
func (b *ratioBar) DataRange() (xmin, xmax, ymin, ymax float64) {
	return b.x - b.width/2, b.x + b.width/2, min(1, b.y), max(1, b.y)
}
