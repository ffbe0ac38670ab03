package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
)

// TestNumbersCallsAnalytics: bind a number to agents, open a call's transcript, see the
// analytics charts.
func TestNumbersCallsAnalytics(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	tok := e.Owner.Token
	agent := e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": "Reception"}).Data()["id"].(string)
	other := e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": "Sales"}).Data()["id"].(string)
	b.signIn(e.Owner.Email, e.Owner.Password, "")

	// Add a number bound inbound to Reception.
	b.open("/numbers")
	b.run("add number", chromedp.Click("details.create summary", chromedp.ByQuery),
		chromedp.WaitVisible("#n-phone", chromedp.ByQuery),
		chromedp.SendKeys("#n-phone", "+14155550123", chromedp.ByQuery),
		chromedp.SendKeys("#n-nick", "Main line", chromedp.ByQuery))
	b.setSelect("#n-in", agent)
	b.run("submit", chromedp.Click(`details.create button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	b.audit("numbers")
	// Bind the outbound agent on the number's page.
	b.run("open number", chromedp.Click(`//a[text()="+14155550123"]`, chromedp.BySearch), chromedp.WaitVisible("#n-out", chromedp.ByQuery))
	b.audit("number")
	b.setSelect("#n-out", other)
	b.run("save", chromedp.Click(`form.grid-form button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	list := e.Do(nil, "GET", "/api/v1/numbers", tok, nil)
	if !strings.Contains(string(list.Body), `"inbound_agent_id":"`+agent+`"`) || !strings.Contains(string(list.Body), `"outbound_agent_id":"`+other+`"`) {
		t.Fatalf("bindings not stored: %s", list.Body)
	}

	// A finished call with a transcript, as the voice runtime registers it.
	now := time.Now().UTC().Truncate(time.Second)
	call := e.Do(nil, "POST", "/api/v1/calls", tok, map[string]any{
		"agent_id": agent, "direction": "inbound", "from_number": "+14155550999", "to_number": "+14155550123",
		"status": "ended", "started_at": now.Add(-2 * time.Minute).Format(time.RFC3339), "ended_at": now.Format(time.RFC3339),
		"duration_ms": 120000, "disconnection_reason": "user_hangup",
		"transcript": []map[string]any{
			{"role": "agent", "content": "Hello, reception speaking.", "start_ms": 0},
			{"role": "user", "content": "I would like to book a table.", "start_ms": 2500},
		},
		"analysis": map[string]any{"sentiment": "positive"}, "variables": map[string]any{"party_size": 4},
	})
	if call.Status != http.StatusCreated {
		t.Fatalf("register call: %d %s", call.Status, call.Body)
	}
	failed := e.Do(nil, "POST", "/api/v1/calls", tok, map[string]any{"agent_id": agent, "direction": "outbound", "status": "failed", "from_number": "+14155550123", "to_number": "+14155550777",
		"started_at": now.Add(-time.Minute).Format(time.RFC3339), "ended_at": now.Format(time.RFC3339), "disconnection_reason": "dial_failed"})
	if failed.Status != http.StatusCreated {
		t.Fatalf("register failed call: %d %s", failed.Status, failed.Body)
	}
	id := call.Data()["id"].(string)
	b.open("/calls")
	b.audit("calls")
	b.setSelect("#c-status", "ended")
	// The filtered page is the one whose status picker the server rendered as "ended".
	b.run("filter", chromedp.Click(`form.filters button`, chromedp.ByQuery),
		chromedp.WaitReady(`//select[@id="c-status"]/option[@selected][@value="ended"]`, chromedp.BySearch),
		chromedp.WaitVisible(`a[href="/calls/`+id+`"]`, chromedp.ByQuery))
	if body := b.text("tbody"); strings.Contains(strings.ToLower(body), "failed") {
		t.Errorf("the status filter kept a failed call: %q", body)
	}
	b.run("open call", chromedp.Click(`a[href="/calls/`+id+`"]`, chromedp.ByQuery), chromedp.WaitVisible("ol.transcript li.user", chromedp.ByQuery))
	if s := b.text("ol.transcript li.user p"); s != "I would like to book a table." {
		t.Errorf("transcript user turn %q", s)
	}
	if s := b.text("main"); !strings.Contains(s, "positive") || !strings.Contains(s, "party_size") {
		t.Errorf("analysis or variables missing: %q", s)
	}
	// The call's page shows when it was received, as the list it is opened from leads with
	// it, through the same time element (docs/dashboard.md's Calls row).
	received, err := time.Parse(time.RFC3339Nano, call.Data()["created_at"].(string))
	if err != nil {
		t.Fatalf("created_at: %v", err)
	}
	var shown string
	b.eval("received", `(() => { const dt = [...document.querySelectorAll('dl.facts dt')].find(d => d.textContent === 'Received');
		const el = dt && dt.nextElementSibling.querySelector('time[data-when]'); return el ? el.getAttribute('datetime') : ''; })()`, &shown)
	if want := received.UTC().Format(time.RFC3339); shown != want {
		t.Errorf("the call's page shows received %q, want %q", shown, want)
	}
	b.audit("call")

	// Analytics: a chart with bars for today's calls, and the reasons.
	b.open("/analytics")
	b.run("chart", chromedp.WaitVisible("svg.chart rect", chromedp.ByQuery))
	if s := b.text("main"); !strings.Contains(s, "User hangup") || !strings.Contains(s, "Dial failed") {
		t.Errorf("disconnection reasons missing: %q", s)
	}
	var bars int
	b.eval("bars", `document.querySelectorAll("figure rect[fill='#15803d'], figure rect[fill='#b91c1c']").length`, &bars)
	if bars < 3 { // ended and failed bars, and their legend swatches
		t.Errorf("%d ended/failed shapes in the charts", bars)
	}
	b.audit("analytics")
}

// TestAPIKeysAndModules: create an API key and use it, revoke it and see 401; a member
// with one module sees only that module, and the server refuses the others.
func TestAPIKeysAndModules(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/api-keys")
	b.run("create key", chromedp.SendKeys("#key-name", "ci", chromedp.ByQuery),
		chromedp.Click(`form[action="/api-keys"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#secret-0", chromedp.ByQuery))
	var token string
	b.run("token", chromedp.Value("#secret-0", &token, chromedp.ByQuery))
	b.audit("api-keys")
	if res := e.Do(nil, "GET", "/api/v1/user", token, nil); res.Status != http.StatusOK {
		t.Fatalf("the new key: %d %s", res.Status, res.Body)
	}
	b.open("/api-keys")
	b.run("revoke", chromedp.Click(`a[aria-label="Revoke ci"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.confirm button.danger`, chromedp.ByQuery),
		chromedp.Click(`.confirm button.danger`, chromedp.ByQuery), chromedp.WaitVisible(".notice", chromedp.ByQuery))
	if res := e.Do(nil, "GET", "/api/v1/user", token, nil); res.Status != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d, want 401", res.Status)
	}

	// A member holding only call_history, added on the workspace page.
	carol := e.NewUser("carol@example.com", false)
	b.open("/workspace")
	b.run("add member", chromedp.Click(`//summary[text()="Add a member"]`, chromedp.BySearch),
		chromedp.WaitVisible("#new-member", chromedp.ByQuery),
		chromedp.SendKeys("#new-member", carol.Email, chromedp.ByQuery),
		chromedp.Click(`form[action="/workspace/members"] input[value="call_history"]`, chromedp.ByQuery),
		chromedp.Click(`form[action="/workspace/members"] button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible(".notice", chromedp.ByQuery))
	m := e.Do(nil, "GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users/"+carol.ID, e.Owner.Token, nil)
	if m.Status != http.StatusOK || !strings.Contains(string(m.Body), `"modules":["call_history"]`) {
		t.Fatalf("member as stored: %d %s", m.Status, m.Body)
	}
	b.audit("workspace")
	// The owner cannot leave their personal workspace: the API's refusal is shown.
	b.run("remove owner", chromedp.Click(`//summary[text()="Change owner"]`, chromedp.BySearch),
		chromedp.Click(`//a[starts-with(text(), "Remove owner")]`, chromedp.BySearch),
		chromedp.WaitVisible(`.confirm button.danger`, chromedp.ByQuery),
		chromedp.Click(`.confirm button.danger`, chromedp.ByQuery),
		chromedp.WaitVisible(".alert", chromedp.ByQuery))
	if s := b.text(".alert"); !strings.Contains(s, "cannot be removed") {
		t.Errorf("refusal message: %q", s)
	}
	b.open("/workspace/audit")
	b.run("audit", chromedp.WaitVisible(`//td/code[text()="`+data.EventWorkspaceUserAdded+`"]`, chromedp.BySearch))
	b.audit("audit")
	b.run("sign out", chromedp.Click(`form.signout button`, chromedp.ByQuery), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.signIn(carol.Email, carol.Password, e.Owner.WorkspaceID)
	var nav string
	b.run("nav", chromedp.Text(`nav[aria-label="Sections"]`, &nav, chromedp.ByQuery))
	if !strings.Contains(nav, "Calls") || strings.Contains(nav, "Agents") || strings.Contains(nav, "Numbers") || strings.Contains(nav, "Analytics") {
		t.Errorf("a call_history member's sections: %q", nav)
	}
	// Not offered, and still refused: the agents page answers 403.
	b.open("/agents")
	if s := b.text(".alert"); !strings.Contains(s, "Agents module") { // the module in words, as the nav names it
		t.Errorf("the agents page for a member without the module: %q", s)
	}
	b.open("/calls")
	b.run("calls page", chromedp.WaitVisible(`//h1[text()="Calls"]`, chromedp.BySearch))
}
