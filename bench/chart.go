package bench

import (
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Series is one named line or bar group of a chart.
type Series struct {
	Name string
	X, Y []float64
	// Color and Dash pick plotutil's colour and dash pattern where the chart
	// lets series share them (cdfChart); other charts colour by position.
	Color, Dash int
}

const chartW, chartH = 8 * vg.Inch, 4.5 * vg.Inch

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Tick.Marker = plainTicks{}
	return p
}

// plainTicks labels ticks without trailing zeros ("50000", "0.5").
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// lineChart plots each series as a line; ref, when not NaN, draws a dashed
// horizontal reference line labelled refName (the slot).
func lineChart(file, title, xlabel, ylabel string, series []Series, ref float64, refName string) Chart {
	return Chart{File: file, Title: title, render: func(path string) error {
		p := newPlot(title, xlabel, ylabel)
		for i, s := range series {
			if len(s.X) == 0 {
				continue
			}
			pts := make(plotter.XYs, len(s.X))
			for j := range s.X {
				pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(s.Name, l)
		}
		if !math.IsNaN(ref) {
			r := plotter.NewFunction(func(float64) float64 { return ref })
			r.Color = color.Gray{Y: 60}
			r.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			r.Width = vg.Points(1.5)
			p.Add(r)
			p.Legend.Add(refName, r)
			p.Y.Max = max(p.Y.Max, ref) * 1.3 // room above the reference for the legend
		}
		p.Y.Min = min(p.Y.Min, 0)
		return p.Save(chartW, chartH, path)
	}}
}

// barChart draws grouped bars: one group per label, one bar per series
// (series[i].Y[j] is series i's value for labels[j]).
func barChart(file, title, ylabel string, labels []string, series []Series) Chart {
	return Chart{File: file, Title: title, render: func(path string) error {
		p := newPlot(title, "", ylabel)
		n := max(len(series), 1)
		w := vg.Points(math.Min(40, 360/float64(n*max(len(labels), 1))))
		for i, s := range series {
			b, err := plotter.NewBarChart(plotter.Values(s.Y), w)
			if err != nil {
				return err
			}
			b.Color = plotutil.Color(i)
			b.LineStyle.Width = 0
			b.Offset = w * vg.Length(float64(i)-float64(n-1)/2)
			p.Add(b)
			p.Legend.Add(s.Name, b)
		}
		p.NominalX(labels...)
		p.Y.Min = 0
		p.Y.Max *= 1.2 // room for the legend
		p.Legend.Left = false
		return p.Save(chartW, chartH, path)
	}}
}

// cdfChart draws the cumulative distribution of each series' samples (Y),
// x on a log scale when the samples span more than two decades.
func cdfChart(file, title, xlabel string, series []Series) Chart {
	return Chart{File: file, Title: title, render: func(path string) error {
		p := newPlot(title, xlabel, "fraction of requests ≤ x")
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range series {
			if len(s.Y) == 0 {
				continue
			}
			v := slices.Clone(s.Y)
			slices.Sort(v)
			step := max(1, len(v)/400)
			var pts plotter.XYs
			for j := 0; j < len(v); j += step {
				pts = append(pts, plotter.XY{X: math.Max(v[j], 1e-3), Y: float64(j+1) / float64(len(v))})
			}
			pts = append(pts, plotter.XY{X: math.Max(v[len(v)-1], 1e-3), Y: 1})
			lo, hi = math.Min(lo, pts[0].X), math.Max(hi, pts[len(pts)-1].X)
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(s.Color)
			l.Dashes = plotutil.Dashes(s.Dash)
			l.Width = vg.Points(1.2)
			p.Add(l)
			p.Legend.Add(s.Name, l)
		}
		if hi/lo > 100 {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		}
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top, p.Legend.Left = false, false
		return p.Save(chartW, chartH, path)
	}}
}

// scatterChart plots points of each series, with the line y = x when diagonal is set.
func scatterChart(file, title, xlabel, ylabel string, series []Series, diagonal bool) Chart {
	return Chart{File: file, Title: title, render: func(path string) error {
		p := newPlot(title, xlabel, ylabel)
		hi := 0.0
		for i, s := range series {
			pts := make(plotter.XYs, len(s.X))
			for j := range s.X {
				pts[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
				hi = math.Max(hi, math.Max(s.X[j], s.Y[j]))
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			sc.Color = plotutil.Color(i)
			sc.Radius = vg.Points(1.5)
			p.Add(sc)
			p.Legend.Add(s.Name, sc)
		}
		if diagonal {
			d := plotter.NewFunction(func(x float64) float64 { return x })
			d.Color = color.Gray{Y: 60}
			d.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(d)
			p.Legend.Add("exact", d)
			p.X.Min, p.Y.Min = 0, 0
			p.X.Max, p.Y.Max = hi*1.05, hi*1.05
		}
		return p.Save(chartW, chartH, path)
	}}
}
