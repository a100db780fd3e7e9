package web

import (
	"math"
	"strconv"
)

// Charts are drawn on the server as SVG elements in the page: no script,
// no inline style (the policy forbids it); colors come from the
// stylesheet's classes, so they follow the color scheme.

// chart is a stacked bar chart in a viewBox of Width x Height.
type chart struct {
	Width, Height float64
	Bars          []chartBar
	Ticks         []tick // y axis
	Labels        []tick // x axis
	Legend        []legend
	Empty         bool
}

type chartBar struct {
	X, W  float64
	Title string // the bar's period and total, shown on hover
	URL   string // where the bar links ("": nowhere)
	Segs  []seg
}

type seg struct {
	X, W  float64
	Y, H  float64
	Class string
	Title string
}

type tick struct {
	X, Y  float64
	Label string
}

type legend struct {
	Class, Label string
}

// Chart geometry.
const (
	chartW, chartH = 720.0, 200.0
	padLeft        = 56.0
	padBottom      = 22.0
	padTop         = 8.0
	seriesColors   = 8 // classes s0..s7; series past them share s7
)

// stacked draws one bar per category, stacked by series: value(i, j) is
// series j's share of category i. format renders an amount for labels.
func stacked(categories, series []string, value func(i, j int) float64, format func(float64) string) chart {
	c := chart{Width: chartW, Height: chartH}
	totals := make([]float64, len(categories))
	top := 0.0
	for i := range categories {
		for j := range series {
			totals[i] += value(i, j)
		}
		top = max(top, totals[i])
	}
	for j, name := range series {
		c.Legend = append(c.Legend, legend{Class: seriesClass(j), Label: name})
	}
	if top <= 0 || len(categories) == 0 {
		c.Empty = true
		return c
	}
	top = niceCeil(top)
	plotH := chartH - padBottom - padTop
	step := (chartW - padLeft) / float64(len(categories))
	for k := 0; k <= 4; k++ {
		v := top * float64(k) / 4
		c.Ticks = append(c.Ticks, tick{X: padLeft - 6, Y: padTop + plotH - plotH*float64(k)/4, Label: format(v)})
	}
	every := int(math.Ceil(float64(len(categories)) / 8)) // at most 8 labels fit at 375 px
	for i, cat := range categories {
		b := chartBar{X: padLeft + float64(i)*step + step*0.15, W: step * 0.7, Title: cat + ": " + format(totals[i])}
		y := padTop + plotH
		for j, name := range series {
			v := value(i, j)
			if v <= 0 {
				continue
			}
			h := plotH * v / top
			y -= h
			b.Segs = append(b.Segs, seg{X: b.X, W: b.W, Y: y, H: h, Class: seriesClass(j), Title: cat + " · " + name + ": " + format(v)})
		}
		c.Bars = append(c.Bars, b)
		if i%every == 0 {
			c.Labels = append(c.Labels, tick{X: b.X + b.W/2, Y: chartH - 6, Label: cat})
		}
	}
	return c
}

func seriesClass(j int) string { return "s" + strconv.Itoa(min(j, seriesColors-1)) }

// niceCeil rounds x up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// meter is a horizontal bar of a share in [0, 1], as a percentage width.
type meter struct {
	Pct   float64
	Class string
}

func newMeter(share float64, class string) meter {
	return meter{Pct: math.Round(math.Max(0, math.Min(1, share))*1000) / 10, Class: class}
}

// hbarChart is one horizontal bar per row, of a share in [0, 1]: the
// row's label on its left, its value on its right; a row with a URL links
// there (an SVG link: no script).
type hbarChart struct {
	Width, Height float64
	Rows          []hbar
}

type hbar struct {
	Y, TextY, W          float64 // the bar's top, its middle, its width
	Label, Value, Title  string
	URL                  string
	LabelX, BarX, ValueX float64
	TrackW, H            float64
}

// hbar geometry: the labels' column, the bars', the values'.
const (
	hbarRow     = 24.0
	hbarH       = 14.0
	hbarLabelW  = 170.0
	hbarValueW  = 60.0
	hbarMaxRows = 40
)

// rateBar is what hbars draws of a row.
type rateBar struct {
	Label, Title, URL string
	Share             float64
	Value             string
}

// hbars draws rows (at most hbarMaxRows of them) as horizontal bars.
func hbars(rows []rateBar) hbarChart {
	rows = rows[:min(len(rows), hbarMaxRows)]
	c := hbarChart{Width: chartW, Height: hbarRow*float64(len(rows)) + padTop}
	track := chartW - hbarLabelW - hbarValueW
	for i, r := range rows {
		y := padTop + hbarRow*float64(i)
		c.Rows = append(c.Rows, hbar{Y: y, TextY: y + hbarH/2, W: math.Round(track*math.Max(0, math.Min(1, r.Share))*10) / 10,
			Label: r.Label, Value: r.Value, Title: r.Title, URL: r.URL,
			LabelX: hbarLabelW - 8, BarX: hbarLabelW, ValueX: hbarLabelW + track + 6, TrackW: track, H: hbarH})
	}
	return c
}
