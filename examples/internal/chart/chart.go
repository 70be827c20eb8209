// Package chart draws the examples' charts with gonum/plot, in one style: SVG of 20 ×
// 11 cm, the legend in a column of its own right of the data so that it never covers a
// line, and tick labels that are round numbers ("0.3", not "0.30000000000000004").
package chart

import (
	"fmt"
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

// Chart size, and the margin kept free right of the data so that the last tick label
// of the x axis is not cut off.
const (
	width, height = 20 * vg.Centimeter, 11 * vg.Centimeter
	rightMargin   = 4 * vg.Millimeter
)

// Chart is a plot with its legend, which Save draws in a column of its own right of
// the data. Add lines to Plot and name them in Legend.
type Chart struct {
	// Plot is the data area, its axes and title.
	Plot *plot.Plot
	// Legend names the lines; it is drawn top left of its column.
	Legend plot.Legend
	// Palette colours the lines by name (a policy has its colour in every chart).
	Palette Palette
}

// New is a chart with a title, axis labels x and y, a grid, and RoundTicks on both
// axes.
func New(title, x, y string) *Chart {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Millimeter * 2
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Tick.Marker = RoundTicks{}
	p.Y.Tick.Marker = RoundTicks{}
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	return &Chart{Plot: p, Legend: l}
}

// AddLine adds series i's line through pts, named name in the legend, in the charts'
// line style: name's colour (c.Palette), the i-th dash pattern, 1.5 points wide.
func (c *Chart) AddLine(name string, i int, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = c.Palette.Color(name)
	l.Dashes = plotutil.Dashes(i)
	l.Width = vg.Points(1.5)
	c.Plot.Add(l)
	c.Legend.Add(name, l)
	return nil
}

// Save writes the chart to path as SVG: the plot on the left, the legend in a column
// on the right, aligned with the top of the data area.
// A chart the plotting library cannot draw (it panics) is an error naming path, and
// no file is written.
func (c *Chart) Save(path string) error {
	svg := vgsvg.New(width, height)
	err := Guard(func() {
		dc := draw.New(svg)
		// The legend's width as measured with the chart's font, with room to spare
		// for a viewer that substitutes a wider one.
		lr := c.Legend.Rectangle(dc)
		legendW := (lr.Max.X-lr.Min.X)*1.3 + 5*vg.Millimeter
		c.Plot.Draw(draw.Crop(dc, 0, -legendW-rightMargin, 0, 0))
		title := c.Plot.Title.TextStyle.Rectangle(c.Plot.Title.Text).Size().Y + c.Plot.Title.Padding
		c.Legend.Draw(draw.Crop(dc, width-legendW+2*vg.Millimeter, 0, 0, -title-vg.Millimeter))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteSVG(path, svg)
}

// Guard calls fn and returns a panic of the plotting library in it as an error
// (gonum/plot panics on data it cannot draw, such as a log axis reaching 0), so that
// a chart the program did not foresee ends the program with a message, not a stack
// trace.
func Guard(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot draw the chart: %v", r)
		}
	}()
	fn()
	return nil
}

// LogRange makes axis a's range one that a log scale can draw, once the data is
// added: a single value v (every point at the same x or y) becomes [v/10, 10v], and no
// data at all [1, 10]. (gonum/plot widens a single value to [v-1, v+1], which reaches 0
// or below for v <= 1, and panics on a log scale.) A range of positive values wider
// than one point is left as it is.
func LogRange(a *plot.Axis) {
	switch {
	case a.Min > a.Max: // no data: the axis's initial +Inf, -Inf
		a.Min, a.Max = 1, 10
	case a.Min == a.Max && a.Min > 0 && !math.IsInf(a.Min, 0):
		a.Min, a.Max = a.Min/10, a.Max*10
	}
}

// WriteSVG writes the drawn canvas svg to the file at path.
func WriteSVG(path string, svg *vgsvg.Canvas) error {
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

// maxTicks bounds the ticks of one axis (about 5 labels with 4 minor ticks between
// each, where the floating-point grid allows).
const maxTicks = 64

// RoundTicks mark an axis at multiples of a round step (1, 2 or 5 × 10^k, chosen for
// about five labels), with minor ticks between, and label each with as many decimals
// as the step needs: "0.3", not "0.30000000000000004"; "250", not "250.00".
type RoundTicks struct{}

// Ticks returns the ticks of [lo, hi]: at most maxTicks+1, and for a range too narrow,
// too wide or not finite, one labelled tick at lo.
func (RoundTicks) Ticks(lo, hi float64) []plot.Tick {
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

// LogTicks mark a log axis at 1, 2 and 5 × 10^k, labelled, with the other whole
// multiples of 10^k as minor ticks. (plot.LogTicks labels the powers of ten only.)
type LogTicks struct{}

// Ticks returns the ticks of [lo, hi], stopping at the first decade that ends with
// maxTicks or more; none unless 0 < lo <= hi and hi is finite.
func (LogTicks) Ticks(lo, hi float64) []plot.Tick {
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

// FractionTicks mark a [0, 1] axis every 0.1, labelled every 0.2.
var FractionTicks = plot.ConstantTicks{
	{Value: 0, Label: "0"}, {Value: 0.1}, {Value: 0.2, Label: "0.2"}, {Value: 0.3},
	{Value: 0.4, Label: "0.4"}, {Value: 0.5}, {Value: 0.6, Label: "0.6"}, {Value: 0.7},
	{Value: 0.8, Label: "0.8"}, {Value: 0.9}, {Value: 1, Label: "1"},
}
