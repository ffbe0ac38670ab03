package e2e

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 4: the card's average duration and the chart's for the same day divide
// by the same calls; the axis of whole numbers has whole ticks; the hourly view over 30
// days is drawn without hairlines.
func TestAnalyticsAgree(t *testing.T) {
	b := signedIn(t)
	agent := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Counts"})["id"].(string)
	// Today: one call of 3 minutes, one failed call with no duration.
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": "web", "status": "ended", "duration_ms": 180_000})
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": "web", "status": "failed"})

	b.open("/analytics")
	card := b.text(".totals div:last-child dd")
	var titles []string
	b.eval("average bars", `Array.from(document.querySelectorAll("figure")[1].querySelectorAll("rect title")).map(t => t.textContent)`, &titles)
	if len(titles) != 1 || !strings.HasSuffix(titles[0], ": "+card) {
		t.Errorf("the card's average is %q, the chart's bars say %q for the same calls", card, titles)
	}
	var ticks []string
	b.eval("ticks", `Array.from(document.querySelector("figure svg.chart-axis").querySelectorAll("text[text-anchor=end]")).map(t => t.textContent)`, &ticks)
	whole := regexp.MustCompile(`^\d+$`)
	for _, tk := range ticks {
		if !whole.MatchString(tk) {
			t.Errorf("the calls axis has the tick %q (ticks %v): calls are whole", tk, ticks)
		}
	}

	from := time.Now().UTC().AddDate(0, 0, -30).Format("2006-01-02")
	b.open("/analytics?interval=hour&from=" + from)
	var thinnest float64
	b.eval("bar widths", `Math.min(1e9, ...Array.from(document.querySelector("figure svg").querySelectorAll("rect")).map(r => r.width.baseVal.value))`, &thinnest)
	if thinnest < 2 {
		t.Errorf("30 days by the hour draws bars %.1f units wide: hairlines", thinnest)
	}
	b.run("chart drawn", chromedp.WaitVisible("figure svg", chromedp.ByQuery))
}
