package console

import (
	"encoding/json"
	"html/template"
	"strings"
	"testing"
)

// TestSharesNeverRoundToAllOrNone: every share the console shows (a campaign's progress,
// a test's pass rate, a version's success rate, a rollout's rates) reads as share
// writes it: 3 recipients done of 500 were "0%", a pass rate whole percents (2 repeats
// of 3 "67%", and 0.995 "100%"), and 9,996 calls of 10,000 "100.0" on a version's bar.
func TestSharesNeverRoundToAllOrNone(t *testing.T) {
	campaign := func(pending, total float64) string {
		var record map[string]any
		b, _ := json.Marshal(map[string]any{"counts": map[string]any{"total": total, "pending": pending, "in_progress": 0, "suppressed": 0},
			"import": map[string]any{"suppressed": 0}})
		json.Unmarshal(b, &record)
		return tally(record).Share()
	}
	passRate := func(rate float64) string {
		return viewOfRun(map[string]any{"results": []any{map[string]any{"name": "t", "pass_rate": rate}}}).Tests[0].PassRate
	}
	versionRate := func(rate float64) string {
		charts := successCharts(map[string]any{"versions": []any{map[string]any{"agent_version": 1.0, "judged": 10000.0, "rate": rate}}})
		return string(charts[len(charts)-1].SVG)
	}
	for _, c := range []struct{ name, got, want string }{
		{"campaign of none", campaign(0, 0), ""},
		{"campaign 3 of 500", campaign(497, 500), "0.6%"},
		{"campaign 1 of 5,000", campaign(4999, 5000), "<0.1%"},
		{"campaign 4,999 of 5,000", campaign(1, 5000), ">99.9%"},
		{"campaign all", campaign(0, 500), "100.0%"},
		{"campaign none done", campaign(500, 500), "0.0%"},
		{"pass rate 2 of 3", passRate(2.0 / 3), "66.7%"},
		{"pass rate 999 of 1,000", passRate(0.999), "99.9%"},
		{"pass rate 9,999 of 10,000", passRate(0.9999), ">99.9%"},
		{"pass rate 1 of 10,000", passRate(0.0001), "<0.1%"},
		{"pass rate all", passRate(1), "100.0%"},
		{"pass rate none", passRate(0), "0.0%"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		rate float64
		want string
	}{{0.9996, ">99.9%"}, {0.0004, "<0.1%"}, {0.5, "50.0%"}, {1, "100.0%"}} {
		if svg := versionRate(c.rate); !strings.Contains(svg, ">"+template.HTMLEscapeString(c.want)+"</text>") {
			t.Errorf("success rate %v: the bar reads no %s in %s", c.rate, c.want, svg)
		}
	}
}
