package console

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"
)

// chart is one server-rendered SVG chart with a text alternative.
type chart struct {
	Title string
	SVG   template.HTML
}

// Chart geometry, in SVG user units; the SVG scales to its container.
const (
	chartW, chartH         = 720, 260
	padL, padR, padT, padB = 64, 12, 12, 40
	// maxBars is the most buckets drawn as bars: beyond it (30 days by the hour) a bar
	// would be a hairline, so the series is drawn as stacked areas.
	maxBars = 62
	// hbarW is the width of a chart of horizontal bars, hbarLabel the most characters of
	// its labels shown.
	hbarW, hbarLabel = 440, 20
)

// barSeries is one stacked segment of a chart.
type barSeries struct {
	name, color string
	values      []float64
}

// axis is a y axis: its top and the value between two ticks, and how a value reads.
type axis struct {
	top, step float64
	format    func(float64) string
	// exact reads a bar's value in its title, where format is too round (nil: format).
	exact func(float64) string
}

// analyticsCharts draws the analytics page's charts from GET /api/v1/analytics/calls.
// The average duration per bucket is the API's, which divides by the calls that have a
// duration, as the totals' average does: the card and the chart agree.
func analyticsCharts(a map[string]any, interval string) []chart {
	series, _ := a["series"].([]any)
	labels := make([]string, len(series))
	ended := make([]float64, len(series))
	failed := make([]float64, len(series))
	other := make([]float64, len(series))
	avg := make([]float64, len(series))
	for i, p := range series {
		m, _ := p.(map[string]any)
		start, _ := m["start"].(string)
		labels[i] = bucketLabel(start, interval)
		calls, e, f := num(m["calls"]), num(m["ended"]), num(m["failed"])
		ended[i], failed[i], other[i] = e, f, math.Max(0, calls-e-f)
		avg[i] = num(m["average_duration_ms"])
	}
	per := "day"
	if interval == "hour" {
		per = "hour"
	}
	t1, t2, t3 := "Calls per "+per+": ended, failed and other", "Average duration per "+per, "How calls ended"
	out := []chart{
		{Title: t1, SVG: stacked(t1, labels, []barSeries{{"Ended", "#15803d", ended}, {"Failed", "#b91c1c", failed}, {"Other", "#64748b", other}}, countAxis)},
		{Title: t2, SVG: stacked(t2, labels, []barSeries{{"Average duration", "#1d4ed8", avg}}, durationAxis)},
	}
	reasons, _ := a["disconnection_reasons"].(map[string]any)
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return num(reasons[keys[i]]) > num(reasons[keys[j]]) || num(reasons[keys[i]]) == num(reasons[keys[j]]) && keys[i] < keys[j]
	})
	names := make([]string, len(keys))
	vals := make([]float64, len(keys))
	for i, k := range keys {
		names[i], vals[i] = label(k), num(reasons[k])
	}
	out = append(out, chart{Title: t3, SVG: hbars(t3, names, vals)})
	return out
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func bucketLabel(start, interval string) string {
	t, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		return start
	}
	if interval == "hour" {
		return t.Format("Jan 2 15h")
	}
	return t.Format("Jan 2")
}

// countAxis is the axis of whole numbers (calls): its ticks are whole numbers too, so
// that a maximum of 2 draws 0, 1, 2 and never 0.5.
func countAxis(max float64) axis {
	step := niceStep(max / 4)
	if step < 1 {
		step = 1
	}
	return axis{top: step * math.Max(1, math.Ceil(max/step)), step: step, format: trimNum}
}

// durationAxis is the axis of milliseconds, with ticks on round seconds or minutes and
// read as durations ("1 min 30 s").
func durationAxis(max float64) axis {
	step := 1000.0
	for _, s := range []float64{1e3, 2e3, 5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3, 3600e3} {
		step = s
		if s*4 >= max {
			break
		}
	}
	return axis{top: step * math.Max(1, math.Ceil(max/step)), step: step, format: axisDuration, exact: func(v float64) string {
		if v == 0 {
			return "0"
		}
		return duration(v)
	}}
}

// axisDuration is a tick's duration in one unit ("1.5 min", not "1 min 30 s"): the axis
// is padL wide, and a longer label was cut off at its left edge.
func axisDuration(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 60e3:
		return trimNum(ms/1e3) + " s"
	case ms < 3600e3:
		return trimNum(ms/60e3) + " min"
	}
	return trimNum(ms/3600e3) + " h"
}

// niceStep rounds a step up to 1, 2 or 5 times a power of ten.
func niceStep(m float64) float64 {
	if m <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(m)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*p >= m {
			return f * p
		}
	}
	return 10 * p
}

// stacked draws the series stacked, as bars, or as areas when there are more buckets
// than maxBars, with a y axis, labels and a legend.
func stacked(title string, labels []string, ss []barSeries, scale func(float64) axis) template.HTML {
	var b strings.Builder
	max := 0.0
	for i := range labels {
		sum := 0.0
		for _, s := range ss {
			sum += s.values[i]
		}
		max = math.Max(max, sum)
	}
	ax := scale(max)
	// Two drawings side by side in one scroll box: the plot ("series": time runs left to
	// right, so a box too narrow for it shows its end first) and its y axis, which stays
	// in view on a phone while the plot scrolls beneath it (console.css). The box is
	// right to left, so the plot comes first and the axis lands on its left.
	var yAxis strings.Builder
	b.WriteString(`<div class="chart-scroll series-scroll" tabindex="0" role="group" aria-label="` + template.HTMLEscapeString(title) + `">`)
	fmt.Fprintf(&b, `<svg viewBox="%d 0 %d %d" role="img" aria-label="%s" class="chart series" xmlns="http://www.w3.org/2000/svg">`, padL, chartW-padL, chartH, template.HTMLEscapeString(title))
	fmt.Fprintf(&yAxis, `<svg viewBox="0 0 %d %d" aria-hidden="true" class="chart-axis" xmlns="http://www.w3.org/2000/svg">`, padL, chartH)
	plotH := float64(chartH - padT - padB)
	for v := 0.0; v <= ax.top+ax.step/2; v += ax.step {
		y := float64(padT) + plotH*(1-v/ax.top)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d5dbe1"/>`, padL, chartW-padR, y, y)
		fmt.Fprintf(&yAxis, `<text x="%d" y="%.1f" text-anchor="end" font-size="12" fill="#374151">%s</text>`, padL-6, y+4, ax.format(v))
	}
	n := len(labels)
	if n > 0 {
		slot := float64(chartW-padL-padR) / float64(n)
		if n > maxBars {
			areas(&b, slot, plotH, ax.top, ss)
		} else {
			bars(&b, labels, slot, plotH, ax, ss)
		}
		every := int(math.Ceil(float64(n) / 8)) // at most about 8 labels: they are wide
		for i := 0; i < n; i += every {
			x := float64(padL) + slot*(float64(i)+0.5)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="12" fill="#374151">%s</text>`, x, chartH-padB+16, template.HTMLEscapeString(labels[i]))
		}
	}
	b.WriteString(`</svg>`)
	b.WriteString(yAxis.String() + `</svg></div>`)
	// The legend is text under the box, in view however the plot is scrolled.
	b.WriteString(`<ul class="legend">`)
	for _, s := range ss {
		fmt.Fprintf(&b, `<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="%s"/></svg>%s</li>`, s.color, template.HTMLEscapeString(s.name))
	}
	b.WriteString(`</ul>`)
	return template.HTML(b.String())
}

// bars draws one stacked bar per bucket, each segment titled with its value.
func bars(b *strings.Builder, labels []string, slot, plotH float64, ax axis, ss []barSeries) {
	exact := ax.exact
	if exact == nil {
		exact = ax.format
	}
	w := math.Max(1, slot*0.7)
	for i, l := range labels {
		x := float64(padL) + slot*float64(i) + (slot-w)/2
		y := float64(padT) + plotH
		for _, s := range ss {
			h := plotH * s.values[i] / ax.top
			if h > 0 {
				y -= h
				fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
					x, y, w, h, s.color, template.HTMLEscapeString(l), s.name, exact(s.values[i]))
			}
		}
	}
}

// areas draws the series as stacked areas through the buckets' middles.
func areas(b *strings.Builder, slot, plotH, top float64, ss []barSeries) {
	n := len(ss[0].values)
	base := make([]float64, n) // the stack's height below the current series
	for _, s := range ss {
		var upper, lower []string
		for i := range n {
			x := float64(padL) + slot*(float64(i)+0.5)
			y0 := float64(padT) + plotH*(1-base[i]/top)
			base[i] += s.values[i]
			y1 := float64(padT) + plotH*(1-base[i]/top)
			upper = append(upper, fmt.Sprintf("%.1f,%.1f", x, y1))
			lower = append([]string{fmt.Sprintf("%.1f,%.1f", x, y0)}, lower...)
		}
		fmt.Fprintf(b, `<polygon class="area" points="%s %s" fill="%s"><title>%s</title></polygon>`,
			strings.Join(upper, " "), strings.Join(lower, " "), s.color, s.name)
	}
}

// hbars draws one horizontal bar per label, with its count.
func hbars(title string, labels []string, values []float64) template.HTML {
	return hbarsOr(title, "No call ended in this range.", labels, values, trimNum)
}

// hbarsOr is hbars saying empty, in words under the title, when there is no label, and
// each value as text shows it (trimNum for counts, a share's own form for rates).
// Drawn hbarW wide, a chart fits a phone's width with its text legible, so it never
// scrolls there; a label longer than hbarLabel characters is cut, whole in its title.
func hbarsOr(title, empty string, labels []string, values []float64, text func(float64) string) template.HTML {
	if len(labels) == 0 {
		return template.HTML(`<p class="muted">` + template.HTMLEscapeString(empty) + `</p>`)
	}
	var b strings.Builder
	rowH := 26
	h := padT + rowH*len(labels) + 8
	fmt.Fprintf(&b, `<div class="chart-scroll"><svg viewBox="0 0 %d %d" role="img" aria-label="%s" class="chart bars-h" xmlns="http://www.w3.org/2000/svg">`, hbarW, h, template.HTMLEscapeString(title))
	max := 0.0
	for _, v := range values {
		max = math.Max(max, v)
	}
	const labelW, valueW = 170.0, 56.0
	for i, l := range labels {
		y := padT + rowH*i
		w := (hbarW - labelW - valueW) * values[i] / math.Max(max, 1)
		shown := l
		if r := []rune(l); len(r) > hbarLabel {
			shown = string(r[:hbarLabel-1]) + "…"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="end" font-size="14" fill="#111827"><title>%s</title>%s</text>`, labelW-8, y+15, template.HTMLEscapeString(l), template.HTMLEscapeString(shown))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%d" width="%.1f" height="18" fill="#7c3aed"><title>%s: %s</title></rect>`, labelW, y+2, math.Max(w, 1), template.HTMLEscapeString(l), template.HTMLEscapeString(text(values[i])))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="14" fill="#111827">%s</text>`, labelW+math.Max(w, 1)+6, y+15, template.HTMLEscapeString(text(values[i])))
	}
	b.WriteString(`</svg></div>`)
	return template.HTML(b.String())
}

func trimNum(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}
