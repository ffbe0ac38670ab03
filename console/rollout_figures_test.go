package console

import (
	"strings"
	"testing"
)

// TestRolloutFiguresGrouped: the rollout panel's counts read as every other page's
// (count: "12,345"), not as bare integers ("12345"); its rates to one decimal, never
// rounded to 100% or 0% when some calls are not so (9,999 of 10,000 read "100.0%", and
// 1 of 20,000 "0.0%": now ">99.9%" and "<0.1%").
func TestRolloutFiguresGrouped(t *testing.T) {
	h := New(Options{})
	var b strings.Builder
	v := variantRows(map[string]any{"variants": []any{
		map[string]any{"version": 2.0, "weight": 50.0, "calls": 12345.0, "failed": 1234.0, "analyzed": 10000.0, "successful": 9999.0},
		map[string]any{"version": 1.0, "weight": 50.0, "calls": 20000.0, "failed": 1.0, "analyzed": 3.0, "successful": 3.0}}})
	if err := h.pages["rollout"].ExecuteTemplate(&b, "panel", rolloutPanel{AgentID: "agt_1", Live: 2,
		Rollout: map[string]any{"started_at": "2026-11-30T10:00:00Z"}, Variants: v}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-label="Finished calls">12,345<`, `data-label="Failed">1,234<`, `data-label="Analyzed">10,000<`,
		`data-label="Successful">9,999<`, `data-label="Failed rate">10.0%<`, `data-label="Success rate">&gt;99.9%<`,
		`data-label="Failed rate">&lt;0.1%<`, `data-label="Success rate">100.0%<`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the panel has no %s", want)
		}
	}
}
