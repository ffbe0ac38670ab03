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
	padL, padR, padT, padB = 48, 12, 12, 40
)

// barSeries is one stacked segment of a bar chart.
type barSeries struct {
	name, color string
	values      []float64
}

// analyticsCharts draws the analytics page's charts from GET /api/v1/analytics/calls.
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
		if calls > 0 {
			avg[i] = num(m["total_duration_ms"]) / calls / 1000
		}
	}
	per := "day"
	if interval == "hour" {
		per = "hour"
	}
	t1, t2, t3 := "Calls per "+per+": ended and failed", "Average duration per "+per+" (seconds)", "Disconnection reasons"
	out := []chart{
		{Title: t1, SVG: bars(t1, labels, []barSeries{{"ended", "#15803d", ended}, {"failed", "#b91c1c", failed}, {"other", "#64748b", other}}, "calls")},
		{Title: t2, SVG: bars(t2, labels, []barSeries{{"average duration", "#1d4ed8", avg}}, "s")},
	}
	reasons, _ := a["disconnection_reasons"].(map[string]any)
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return num(reasons[keys[i]]) > num(reasons[keys[j]]) || num(reasons[keys[i]]) == num(reasons[keys[j]]) && keys[i] < keys[j]
	})
	vals := make([]float64, len(keys))
	for i, k := range keys {
		vals[i] = num(reasons[k])
	}
	out = append(out, chart{Title: t3, SVG: hbars(t3, keys, vals)})
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
		return t.Format("02 15h")
	}
	return t.Format("Jan 02")
}

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten, for the axis.
func niceMax(m float64) float64 {
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

// bars draws stacked vertical bars with a y axis, labels and a legend.
func bars(title string, labels []string, ss []barSeries, unit string) template.HTML {
	var b strings.Builder
	max := 0.0
	for i := range labels {
		sum := 0.0
		for _, s := range ss {
			sum += s.values[i]
		}
		max = math.Max(max, sum)
	}
	top := niceMax(max)
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" class="chart" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH+24, template.HTMLEscapeString(title))
	plotH := float64(chartH - padT - padB)
	for i := 0; i <= 4; i++ {
		y := float64(padT) + plotH*float64(i)/4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d5dbe1"/>`, padL, chartW-padR, y, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" font-size="12" fill="#374151">%s</text>`, padL-6, y+4, trimNum(top*float64(4-i)/4))
	}
	n := len(labels)
	if n > 0 {
		slot := float64(chartW-padL-padR) / float64(n)
		w := math.Max(1, slot*0.7)
		every := int(math.Ceil(float64(n) / 12)) // at most about 12 labels
		for i, l := range labels {
			x := float64(padL) + slot*float64(i) + (slot-w)/2
			y := float64(padT) + plotH
			for _, s := range ss {
				h := plotH * s.values[i] / top
				if h > 0 {
					y -= h
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s %s</title></rect>`,
						x, y, w, h, s.color, template.HTMLEscapeString(l), s.name, trimNum(s.values[i]), unit)
				}
			}
			if i%every == 0 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="12" fill="#374151">%s</text>`, x+w/2, chartH-padB+16, template.HTMLEscapeString(l))
			}
		}
	}
	x := padL
	for _, s := range ss {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d" font-size="13" fill="#111827">%s</text>`,
			x, chartH+6, s.color, x+16, chartH+16, s.name)
		x += 40 + 8*len(s.name)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// hbars draws one horizontal bar per label, with its count.
func hbars(title string, labels []string, values []float64) template.HTML {
	var b strings.Builder
	rowH := 26
	h := padT + rowH*len(labels) + 8
	if len(labels) == 0 {
		h = 40
	}
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" role="img" aria-label="%s" class="chart" xmlns="http://www.w3.org/2000/svg">`, chartW, h, template.HTMLEscapeString(title))
	if len(labels) == 0 {
		b.WriteString(`<text x="8" y="24" font-size="14" fill="#374151">No disconnections in this range.</text></svg>`)
		return template.HTML(b.String())
	}
	max := 0.0
	for _, v := range values {
		max = math.Max(max, v)
	}
	labelW := 220.0
	for i, l := range labels {
		y := padT + rowH*i
		w := (float64(chartW) - labelW - 60) * values[i] / math.Max(max, 1)
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="end" font-size="13" fill="#111827">%s</text>`, labelW-8, y+15, template.HTMLEscapeString(l))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%d" width="%.1f" height="18" fill="#7c3aed"><title>%s: %s</title></rect>`, labelW, y+2, math.Max(w, 1), template.HTMLEscapeString(l), trimNum(values[i]))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="13" fill="#111827">%s</text>`, labelW+math.Max(w, 1)+6, y+15, trimNum(values[i]))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func trimNum(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}
