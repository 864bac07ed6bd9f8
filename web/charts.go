package web

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The dashboard's charts are drawn here as inline SVG (no script, so the
// page keeps its strict CSP): each has a title and a description for
// screen readers and the table of its numbers behind it.

// chart is one drawn chart with its text alternative and its table.
type chart struct {
	ID, Title, Desc string
	SVG             template.HTML
	Head            []string
	Rows            [][]string
	// Legend names each line or stack with its CSS class.
	Legend []legendItem
	Empty  string // set when there is nothing to draw: what to do next
}

type legendItem struct{ Name, Class string }

// line is one drawn series: a value per x.
type line struct {
	Name, Class string
	Values      []float64
}

const (
	chartW, chartH       = 640.0, 220.0
	padL, padR, padT, pB = 48.0, 12.0, 12.0, 28.0
)

func esc(s string) string { return template.HTMLEscapeString(s) }

// fmtNum renders a value for axes and tables.
func fmtNum(v float64) string {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return strconv.FormatInt(int64(v), 10)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// frame draws the axes: a y scale to max with three gridlines, and x
// labels at a few of the times.
func frame(b *strings.Builder, xs []time.Time, max float64, layout, unit string) {
	plotH := chartH - padT - pB
	for i := 0; i <= 3; i++ {
		v := max * float64(i) / 3
		y := padT + plotH - plotH*float64(i)/3
		fmt.Fprintf(b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, padL, y, chartW-padR, y)
		fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, padL-6, y+4, esc(fmtNum(v)+unit))
	}
	n := len(xs)
	if n == 0 {
		return
	}
	for _, i := range []int{0, n / 2, n - 1} {
		x := xAt(i, n)
		anchor := "middle"
		if i == 0 {
			anchor = "start"
		} else if i == n-1 {
			anchor = "end"
		}
		fmt.Fprintf(b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, x, chartH-8, anchor, esc(xs[i].UTC().Format(layout)))
	}
}

func xAt(i, n int) float64 {
	if n <= 1 {
		return padL
	}
	return padL + (chartW-padL-padR)*float64(i)/float64(n-1)
}

func svgOpen(b *strings.Builder, id, title, desc string) {
	fmt.Fprintf(b, `<svg class="chart-svg" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="%s-title %s-desc" preserveAspectRatio="xMidYMid meet">`, chartW, chartH, id, id)
	fmt.Fprintf(b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(title), id, esc(desc))
}

// lineChart draws lines over times xs.
func lineChart(id, title, desc, layout, unit string, xs []time.Time, lines []line) chart {
	c := chart{ID: id, Title: title, Desc: desc, Head: []string{"Time (UTC)"}}
	max := 0.0
	for _, l := range lines {
		c.Head = append(c.Head, l.Name)
		c.Legend = append(c.Legend, legendItem{l.Name, l.Class})
		for _, v := range l.Values {
			max = math.Max(max, v)
		}
	}
	max = niceMax(max)
	var b strings.Builder
	svgOpen(&b, id, title, desc)
	frame(&b, xs, max, layout, unit)
	plotH := chartH - padT - pB
	for _, l := range lines {
		var pts []string
		for i, v := range l.Values {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", xAt(i, len(xs)), padT+plotH-plotH*v/max))
		}
		fmt.Fprintf(&b, `<polyline class="line %s" points="%s"/>`, l.Class, strings.Join(pts, " "))
		if len(l.Values) <= 60 { // few points: mark each, so a single one shows
			for i, v := range l.Values {
				fmt.Fprintf(&b, `<circle class="dot %s" cx="%.1f" cy="%.1f" r="3"/>`, l.Class, xAt(i, len(xs)), padT+plotH-plotH*v/max)
			}
		}
	}
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String())
	for i, x := range xs {
		row := []string{x.UTC().Format("2006-01-02 15:04")}
		nonzero := false
		for _, l := range lines {
			row = append(row, fmtNum(l.Values[i]))
			nonzero = nonzero || l.Values[i] != 0
		}
		if nonzero { // the table lists the buckets that have something
			c.Rows = append(c.Rows, row)
		}
	}
	return c
}

// stackChart draws stacked bars of several series over times xs.
func stackChart(id, title, desc, layout string, xs []time.Time, stacks []line) chart {
	c := chart{ID: id, Title: title, Desc: desc, Head: []string{"Time (UTC)"}}
	max := 0.0
	for i := range xs {
		sum := 0.0
		for _, s := range stacks {
			sum += s.Values[i]
		}
		max = math.Max(max, sum)
	}
	max = niceMax(max)
	var b strings.Builder
	svgOpen(&b, id, title, desc)
	frame(&b, xs, max, layout, "")
	plotH := chartH - padT - pB
	n := len(xs)
	slot := (chartW - padL - padR) / float64(max1(n))
	for _, s := range stacks {
		c.Head = append(c.Head, s.Name)
		c.Legend = append(c.Legend, legendItem{s.Name, s.Class})
	}
	for i := range xs {
		y := padT + plotH
		for _, s := range stacks {
			v := s.Values[i]
			if v == 0 {
				continue
			}
			h := plotH * v / max
			y -= h
			x := padL + slot*float64(i) + slot*0.1
			if n > 1 {
				x = xAt(i, n) - slot*0.4
			}
			fmt.Fprintf(&b, `<rect class="bar %s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s %s: %s</title></rect>`,
				s.Class, x, y, slot*0.8, h, esc(xs[i].UTC().Format(layout)), esc(s.Name), fmtNum(v))
		}
		row := []string{xs[i].UTC().Format("2006-01-02 15:04")}
		nonzero := false
		for _, s := range stacks {
			row = append(row, fmtNum(s.Values[i]))
			nonzero = nonzero || s.Values[i] != 0
		}
		if nonzero {
			c.Rows = append(c.Rows, row)
		}
	}
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String())
	return c
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// barItem is one horizontal bar: a label, its value and a note.
type barItem struct {
	Label string
	Value float64
	// Rate, in 0..1, is drawn as a second, thinner bar (success rate).
	Rate float64
}

// barChart draws horizontal bars (executions) with a rate bar under each.
func barChart(id, title, desc string, items []barItem) chart {
	c := chart{ID: id, Title: title, Desc: desc, Head: []string{"Tool", "Executions", "Success rate"},
		Legend: []legendItem{{"executions", "s0"}, {"success rate", "ok"}}}
	max := 0.0
	for _, it := range items {
		max = math.Max(max, it.Value)
	}
	max = niceMax(max)
	rowH := 30.0
	h := padT + rowH*float64(len(items)) + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart-svg" viewBox="0 0 %.0f %.0f" role="img" aria-labelledby="%s-title %s-desc" preserveAspectRatio="xMidYMid meet">`, chartW, h, id, id)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(title), id, esc(desc))
	left, right := 200.0, 110.0
	w := chartW - left - right
	for i, it := range items {
		y := padT + rowH*float64(i)
		fmt.Fprintf(&b, `<text class="axis label" x="%.1f" y="%.1f" text-anchor="end">%s</text>`, left-8, y+13, esc(clipLabel(it.Label, 28)))
		fmt.Fprintf(&b, `<rect class="bar s0" x="%.1f" y="%.1f" width="%.1f" height="12"/>`, left, y+3, math.Max(1, w*it.Value/max))
		fmt.Fprintf(&b, `<rect class="bar ok" x="%.1f" y="%.1f" width="%.1f" height="5"/>`, left, y+17, math.Max(1, w*it.Rate))
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f">%s · %s%%</text>`, chartW-right+6, y+13, fmtNum(it.Value), strconv.FormatFloat(it.Rate*100, 'f', 0, 64))
		c.Rows = append(c.Rows, []string{it.Label, fmtNum(it.Value), strconv.FormatFloat(it.Rate*100, 'f', 1, 64) + "%"})
	}
	b.WriteString(`</svg>`)
	c.SVG = template.HTML(b.String())
	return c
}

func clipLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// buckets are the bucket starts from since to now, step apart.
func buckets(since, now time.Time, step time.Duration) []time.Time {
	var out []time.Time
	for t := since; !t.After(now); t = t.Add(step) {
		out = append(out, t)
	}
	return out
}

// seriesPoint is a point of GET /tools/admin/series.
type seriesPoint struct {
	Series           string
	At               time.Time
	Count, Sum, Mean float64
	P50, P95         float64
}

// valuesAt lays points of one series on xs (missing buckets are 0).
func valuesAt(xs []time.Time, pts []seriesPoint, series string, pick func(seriesPoint) float64) []float64 {
	idx := map[int64]int{}
	for i, x := range xs {
		idx[x.Unix()] = i
	}
	out := make([]float64, len(xs))
	for _, p := range pts {
		if p.Series != series {
			continue
		}
		if i, ok := idx[p.At.Unix()]; ok {
			out[i] = pick(p)
		}
	}
	return out
}

// seriesNames are the distinct series of pts, sorted.
func seriesNames(pts []seriesPoint) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pts {
		if !seen[p.Series] {
			seen[p.Series] = true
			out = append(out, p.Series)
		}
	}
	sort.Strings(out)
	return out
}
