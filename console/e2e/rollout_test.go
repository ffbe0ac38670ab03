package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestRolloutPanel: the agent page shows where each variable gets its value, starts a
// rollout between two published versions, shows each variant's figures as calls end, and
// ends it; the editor saves default variables, a time zone and a concurrency bound.
func TestRolloutPanel(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	id := createCanaryDesk(t, b)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/agents/" + id)
	b.run("the panel loads", chromedp.WaitVisible(`[data-rollout-panel]`, chromedp.ByQuery))
	vars := b.text(`[data-rollout-panel] table`)
	for _, want := range []string{"{{current_time}}", "built-in", "{{customer_name}}", "default: there", "{{order_id}}", "needs a value"} {
		if !strings.Contains(vars, want) {
			t.Errorf("the variables table lacks %q: %s", want, vars)
		}
	}
	if p := b.text(`[data-rollout-panel]`); !strings.Contains(p, "version 2 takes every call") {
		t.Errorf("without a rollout: %s", p)
	}

	b.startRollout(t)
	endVariantCalls(t, b, id)
	b.checkRolloutFiguresAndEnd(t, id)
	b.checkEditorNewFields(t, id)
}

// createCanaryDesk creates an agent whose prompt uses a built-in variable, one with a
// default and one without, publishes it twice, and returns its id.
func createCanaryDesk(t *testing.T, b *browser) string {
	t.Helper()
	e := b.env
	a := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Canary desk",
		"prompt_config": map[string]any{"prompt": "Help {{customer_name}} with {{order_id}} at {{current_time}}.",
			"default_variables": map[string]any{"customer_name": "there"}}})
	if a.Status != 201 {
		t.Fatalf("agent: %d %s", a.Status, a.Body)
	}
	id := a.Data()["id"].(string)
	for range 2 {
		if r := e.Do(nil, "POST", "/api/v1/agents/"+id+"/publish", e.Owner.Token, nil); r.Status != 204 {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		}
	}
	return id
}

// startRollout checks a refused rollout shows the API's message, and a valid one the
// variants.
func (b *browser) startRollout(t *testing.T) {
	t.Helper()
	b.run("weights that do not sum to 100",
		chromedp.SendKeys(`#w-1`, "80", chromedp.ByQuery), chromedp.SendKeys(`#w-2`, "10", chromedp.ByQuery),
		chromedp.Click(`[data-rollout-form] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-rollout-form] .alert`, chromedp.ByQuery))
	if msg := b.text(`[data-rollout-form] .alert`); !strings.Contains(msg, "sum to 100") {
		t.Errorf("the refusal: %q", msg)
	}
	b.run("a valid rollout",
		chromedp.SetValue(`#w-1`, "80", chromedp.ByQuery), chromedp.SetValue(`#w-2`, "20", chromedp.ByQuery),
		chromedp.Click(`[data-rollout-form] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`[data-rollout-variants]`, chromedp.ByQuery))
	b.audit("agent-rollout")
}

// endVariantCalls starts six calls on the agent's number, each taking a variant, and
// ends them failed.
func endVariantCalls(t *testing.T, b *browser, id string) {
	t.Helper()
	e := b.env
	num := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550177", "provider": "sip", "inbound_agent_id": id})
	if num.Status != 201 {
		t.Fatalf("number: %d %s", num.Status, num.Body)
	}
	for i := range 6 {
		r := e.Do(nil, "POST", "/api/v1/calls/start", e.Owner.Token, map[string]any{"direction": "inbound", "to_number": "+14155550177",
			"from_number": fmt.Sprintf("+1555444%04d", i), "variables": map[string]any{"order_id": "A1"}})
		if r.Status != 201 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		call := r.Data()["call"].(map[string]any)["id"].(string)
		if u := e.Do(nil, "PUT", "/api/v1/calls/"+call, e.Owner.Token, map[string]any{"status": "failed"}); u.Status != 200 {
			t.Fatalf("end: %d %s", u.Status, u.Body)
		}
	}
}

// checkRolloutFiguresAndEnd checks each variant's figures follow its calls, then ends
// the rollout.
func (b *browser) checkRolloutFiguresAndEnd(t *testing.T, id string) {
	t.Helper()
	b.open("/agents/" + id)
	b.run("the figures", chromedp.WaitVisible(`[data-rollout-variants]`, chromedp.ByQuery))
	rows := b.text(`[data-rollout-variants] tbody`)
	if !strings.Contains(rows, "80%") || !strings.Contains(rows, "20%") || !strings.Contains(rows, "100.0%") {
		t.Errorf("variant rows: %s", rows)
	}
	// The panel is on the page before the click too: wait for what only the answer to
	// the end shows, or the next read can meet the page mid-navigation.
	b.run("end it", chromedp.Click(`form[action$="/rollout/end"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@data-rollout-panel][contains(., "version 2 takes every call")]`, chromedp.BySearch))
	if p := b.text(`[data-rollout-panel]`); !strings.Contains(p, "version 2 takes every call") {
		t.Errorf("after the end: %s", p)
	}
}

// checkEditorNewFields saves the editor's new fields (default variables, time zone, most
// concurrent calls) and checks a bad time zone is refused beside its field.
func (b *browser) checkEditorNewFields(t *testing.T, id string) {
	t.Helper()
	e := b.env
	b.run("edit", chromedp.SetValue(`textarea[data-key="default_variables"]`, `{"customer_name": "friend", "order_id": "none"}`, chromedp.ByQuery),
		chromedp.SetValue(`input[data-key="timezone"]`, "Europe/Paris", chromedp.ByQuery),
		chromedp.SetValue(`input[data-key="max_concurrent_calls"]`, "4", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`//*[@id="save-status"][text()="Saved."]`, chromedp.BySearch))
	got := e.Do(nil, "GET", "/api/v1/agents/"+id, e.Owner.Token, nil).Data()
	pc := got["prompt_config"].(map[string]any)
	if pc["timezone"] != "Europe/Paris" || pc["default_variables"].(map[string]any)["order_id"] != "none" || got["max_concurrent_calls"] != float64(4) {
		t.Errorf("saved: prompt_config %v, max_concurrent_calls %v", pc, got["max_concurrent_calls"])
	}
	b.run("a bad time zone", chromedp.SetValue(`input[data-key="timezone"]`, "Mars/Olympus", chromedp.ByQuery),
		chromedp.Click(`#agent-form .actions button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#save-errors`, chromedp.ByQuery))
	// The editor of issue 30 words a fault with its field's label.
	if msg := b.text(`.field:has(input[data-key="timezone"]) [data-err]`); !strings.Contains(msg, "Time zone of current_time") || !strings.Contains(msg, "Mars/Olympus") {
		t.Errorf("the time zone's error beside it: %q", msg)
	}
}
