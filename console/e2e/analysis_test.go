package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAnalysisConfigAndCharts: declare an analysis field in the editor (a fault shown
// beside its field first), then read the agent's analysis page: the field's
// distribution, the success rate per day and per version, and the cost per day.
func TestAnalysisConfigAndCharts(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	tok := e.Owner.Token
	agent := e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": "Bookings"}).Data()["id"].(string)
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + agent)

	// An enum field without choices is refused, the message beside the field in the words
	// of its label.
	b.run("add field", chromedp.Click(`[data-list="fields"] > button[data-action="add"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-list="fields"] li input[data-key="name"]`, chromedp.ByQuery),
		chromedp.SendKeys(`[data-list="fields"] li input[data-key="name"]`, "outcome", chromedp.ByQuery),
		chromedp.SendKeys(`[data-list="fields"] li input[data-key="description"]`, "How the call ended", chromedp.ByQuery))
	b.setSelect(`[data-list="fields"] li select[data-key="type"]`, "enum")
	b.run("save", chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery), chromedp.WaitVisible(`#save-errors`, chromedp.ByQuery))
	if msg := b.text(`[data-list="fields"] li .field:has(> label > input[data-key="choices"]) [data-err]`); !strings.HasPrefix(msg, "Choices is required") {
		t.Errorf("the choices' error beside them: %q", msg)
	}
	b.run("fix", chromedp.SendKeys(`[data-list="fields"] li input[data-key="choices"]`, "booked, declined", chromedp.ByQuery),
		chromedp.SendKeys(`[data-obj="analysis_config"] input[data-key="success_criterion"]`, "A table was booked.", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	got := e.Do(nil, "GET", "/api/v1/agents/"+agent, tok, nil).Data()
	cfg := got["analysis_config"].(map[string]any)
	if f := cfg["fields"].([]any); len(f) != 1 || f[0].(map[string]any)["type"] != "enum" || len(f[0].(map[string]any)["choices"].([]any)) != 2 || cfg["success_criterion"] != "A table was booked." {
		t.Fatalf("stored analysis_config: %v", cfg)
	}
	b.audit("agent-analysis-config")
	b.publish(agent, "with analysis")

	// Calls as the runtime reports them: analyzed, with usage priced by the table.
	if r := e.Do(nil, "PUT", "/api/v1/price-table", tok, map[string]any{"currency": "USD", "prices": []any{
		map[string]any{"provider": "groq", "model": "*", "unit": "llm_input_1m_tokens", "price": "100"}}}); r.Status != http.StatusOK {
		t.Fatalf("price table: %d %s", r.Status, r.Body)
	}
	for _, a := range []map[string]any{
		{"outcome": "booked", "call_successful": true}, {"outcome": "booked", "call_successful": true}, {"outcome": "declined", "call_successful": false},
	} {
		r := e.Do(nil, "POST", "/api/v1/calls", tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended", "analysis": a,
			"usage": map[string]any{"llm": []any{map[string]any{"provider": "groq", "model": "llama-3.3-70b-versatile", "input_tokens": 5000}}}})
		if r.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
	}
	b.open("/agents/" + agent)
	b.run("to the analysis page", chromedp.Click(`a[href="/agents/`+agent+`/analysis"]`, chromedp.ByQuery),
		chromedp.WaitVisible("svg.chart rect", chromedp.ByQuery))
	main := b.text("main")
	for _, want := range []string{"outcome: distribution", "booked", "declined", "Success rate per day", "Success rate per version", "version 1", "Cost per day (USD)"} {
		if !strings.Contains(main, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	var titles []string
	b.eval("bar titles", `Array.from(document.querySelectorAll("svg.chart rect title")).map(t => t.textContent)`, &titles)
	joined := strings.Join(titles, "|")
	for _, want := range []string{"booked: 2", "declined: 1", "version 1: 66.7", "cost: 1.5 USD"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no bar %q among %v", want, titles)
		}
	}
	b.audit("agent-analysis")

	// A version the agent lacks, typed into the address: the filter's fault above the form
	// (a 422 on agent_version), not a page that says the agent is not found.
	b.open("/agents/" + agent + "/analysis?agent_version=9")
	if msg := b.text("main .alert"); !strings.Contains(msg, "The agent_version field must be a published version of the agent; version 9 is none.") {
		t.Errorf("the alert for an unknown version: %q", msg)
	}
}

// TestAnalysisNumberFigures: a number field's mean and percentiles read as figures, not
// as the sketch's sixteen digits (a p50 of 2.9742334234766927 was shown as such).
func TestAnalysisNumberFigures(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	tok := e.Owner.Token
	agent := e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": "Party sizes", "analysis_config": map[string]any{
		"fields": []any{map[string]any{"name": "party_size", "type": "number", "description": "Guests"}}}}).Data()["id"].(string)
	if r := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/publish", tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	for _, n := range []float64{3, 3, 3, 5} {
		if r := e.Do(nil, "POST", "/api/v1/calls", tok, map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
			"analysis": map[string]any{"party_size": n}}); r.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
	}
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + agent + "/analysis")
	var figures map[string]string
	b.eval("figures", `Object.fromEntries(Array.from(document.querySelectorAll("dl.totals > div")).map(d => [d.querySelector("dt").textContent, d.querySelector("dd").textContent]))`, &figures)
	// The sketch's middle of 3's bucket is 2.974…, within its 1%; shown to 3 digits.
	want := map[string]string{"Mean": "3.5", "p50": "2.97", "p90": "5"}
	for k, v := range want {
		if figures[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, figures[k], v, figures)
		}
	}
}
