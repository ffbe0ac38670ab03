package console

import (
	"fmt"
	"math"
	"sort"
	"strconv"
)

// unitAxis is the axis of amounts that need not be whole (a rate, a cost), its ticks
// read with unit after them.
func unitAxis(unit string) func(float64) axis {
	return func(max float64) axis {
		step := niceStep(max / 4)
		return axis{top: step * math.Max(1, math.Ceil(max/step)), step: step, format: func(v float64) string {
			if v == 0 {
				return "0"
			}
			return strconv.FormatFloat(v, 'g', 3, 64) + unit
		}}
	}
}

// fieldCharts draws one analysis field: its calls per day, its distribution (enum and
// boolean values) or its mean per version (numbers), and its count per version.
func fieldCharts(name string, f map[string]any) []chart {
	series, _ := f["series"].([]any)
	labels := make([]string, len(series))
	counts := make([]float64, len(series))
	for i, p := range series {
		m, _ := p.(map[string]any)
		labels[i] = bucketLabel(str(m["start"]), "day")
		counts[i] = num(m["count"])
	}
	t1 := name + ": calls with a value per day"
	out := []chart{{Title: t1, SVG: stacked(t1, labels, []barSeries{{"calls", "#1d4ed8", counts}}, countAxis)}}
	if values, _ := f["values"].(map[string]any); len(values) > 0 {
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return num(values[keys[i]]) > num(values[keys[j]]) || num(values[keys[i]]) == num(values[keys[j]]) && keys[i] < keys[j]
		})
		vals := make([]float64, len(keys))
		for i, k := range keys {
			vals[i] = num(values[k])
		}
		t2 := name + ": distribution"
		out = append(out, chart{Title: t2, SVG: hbars(t2, keys, vals)})
	}
	versions, _ := f["versions"].([]any)
	var vlabels []string
	var vcounts, vmeans []float64
	for _, p := range versions {
		m, _ := p.(map[string]any)
		vlabels = append(vlabels, versionLabel(m["agent_version"]))
		vcounts = append(vcounts, num(m["count"]))
		if n, ok := m["number"].(map[string]any); ok {
			vmeans = append(vmeans, num(n["mean"]))
		}
	}
	if len(vlabels) > 0 {
		t3 := name + ": calls per version"
		out = append(out, chart{Title: t3, SVG: hbars(t3, vlabels, vcounts)})
	}
	if len(vmeans) == len(vlabels) && len(vmeans) > 0 {
		t4 := name + ": mean per version"
		out = append(out, chart{Title: t4, SVG: hbars(t4, vlabels, vmeans)})
	}
	return out
}

// successCharts draws the success rate (analysis.call_successful) per day and per
// version, from any field's figures.
func successCharts(f map[string]any) []chart {
	success, _ := f["success"].(map[string]any)
	series, _ := success["series"].([]any)
	labels := make([]string, len(series))
	rates := make([]float64, len(series))
	for i, p := range series {
		m, _ := p.(map[string]any)
		labels[i] = bucketLabel(str(m["start"]), "day")
		rates[i] = 100 * num(m["rate"])
	}
	t1 := "Success rate per day (%)"
	var out []chart
	if num(success["judged"]) > 0 {
		out = append(out, chart{Title: t1, SVG: stacked(t1, labels, []barSeries{{"successful", "#15803d", rates}}, unitAxis("%"))})
	} else { // days of zeros would read as calls that all failed
		out = append(out, chart{Title: t1, SVG: hbarsOr(t1, noneJudged, nil, nil, nil)})
	}
	versions, _ := f["versions"].([]any)
	var vlabels []string
	var vrates []float64
	for _, p := range versions {
		m, _ := p.(map[string]any)
		if num(m["judged"]) > 0 {
			vlabels = append(vlabels, versionLabel(m["agent_version"]))
			vrates = append(vrates, 100*num(m["rate"]))
		}
	}
	t2 := "Success rate per version (%)"
	rate := func(p float64) string { return shareOf(p / 100) }
	return append(out, chart{Title: t2, SVG: hbarsOr(t2, noneJudged, vlabels, vrates, rate)})
}

// noneJudged is what the success charts say when calls ended without one judged against
// the success criterion (not analyzed yet, or analyzed without one): the rate has
// nothing to count.
const noneJudged = "No call of this range was judged against the success criterion."

// costCharts draws what the agent's calls cost per day and per version, a chart pair per
// currency, in units of the currency.
func costCharts(a map[string]any) []chart {
	series, _ := a["series"].([]any)
	currencies := map[string]bool{}
	for _, p := range series {
		m, _ := p.(map[string]any)
		for c := range asMap(m["cost_micros"]) {
			currencies[c] = true
		}
	}
	var out []chart
	curs := make([]string, 0, len(currencies))
	for c := range currencies {
		curs = append(curs, c)
	}
	sort.Strings(curs)
	for _, cur := range curs {
		labels := make([]string, len(series))
		amounts := make([]float64, len(series))
		for i, p := range series {
			m, _ := p.(map[string]any)
			labels[i] = bucketLabel(str(m["start"]), "day")
			amounts[i] = num(asMap(m["cost_micros"])[cur]) / 1e6
		}
		t1 := fmt.Sprintf("Cost per day (%s)", cur)
		out = append(out, chart{Title: t1, SVG: stacked(t1, labels, []barSeries{{"cost", "#b45309", amounts}}, unitAxis(" "+cur))})
		var vlabels []string
		var vamounts []float64
		versions, _ := a["versions"].([]any)
		for _, p := range versions {
			m, _ := p.(map[string]any)
			if v := num(asMap(m["cost_micros"])[cur]); v > 0 {
				vlabels = append(vlabels, versionLabel(m["agent_version"]))
				vamounts = append(vamounts, v/1e6)
			}
		}
		t2 := fmt.Sprintf("Cost per version (%s)", cur)
		out = append(out, chart{Title: t2, SVG: hbars(t2, vlabels, vamounts)})
	}
	return out
}

func versionLabel(v any) string {
	if v == nil {
		return "no version"
	}
	return "version " + trimNum(num(v))
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
