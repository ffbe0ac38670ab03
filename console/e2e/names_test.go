package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 30, point 5: pages name records instead of showing their ids: the agent on the
// numbers list, the calls list and a call's page; who acted in the audit log; the number
// filter of the calls list is a picker of numbers; retrieval names a chunk's source; and
// a member is added by email.
func TestNamesNotIDs(t *testing.T) {
	b := signedIn(t)
	e := b.env
	agent := b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Reception"})["id"].(string)
	num := b.mustAPI(http.StatusCreated, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550177", "nickname": "Front line",
		"provider": "twilio", "inbound_agent_id": agent})["id"].(string)
	call := b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": agent, "number_id": num, "direction": "inbound",
		"from_number": "+14155550999", "to_number": "+14155550177", "status": "ended", "duration_ms": 60_000})["id"].(string)
	kb := b.mustAPI(http.StatusCreated, "POST", "/api/v1/knowledge-bases", map[string]any{"name": "Hours",
		"texts": []map[string]string{{"title": "Opening hours", "content": "The shop opens at nine and closes at five."}}})["id"].(string)

	noID := func(page, where, name string) {
		t.Helper()
		if strings.Contains(where, agent) || !strings.Contains(where, name) {
			t.Errorf("%s shows %q, want the name %s and not the id", page, where, name)
		}
	}
	b.open("/numbers")
	noID("the numbers list", b.text("table tbody"), "Reception")
	b.open("/calls")
	noID("the calls list", b.text("table tbody"), "Reception")
	b.open("/calls/" + call)
	noID("the call's page", b.text("main"), "Reception")
	b.open("/workspace/audit")
	who := b.text("table tbody")
	if strings.Contains(who, e.Owner.ID) || !strings.Contains(who, "owner") {
		t.Errorf("the audit log's actors: %q, want the owner's name, not usr_…", who)
	}
	b.open("/calls")
	var options []string
	b.eval("number filter", `Array.from(document.querySelectorAll('select[name="number_id"] option')).map(o => o.textContent)`, &options)
	if !strings.Contains(strings.Join(options, "|"), "+14155550177") {
		t.Errorf("the calls' number filter offers %v, want a picker of the numbers", options)
	}
	b.open("/knowledge-bases/" + kb)
	b.run("retrieve", chromedp.SendKeys("#q-text", "when does the shop open", chromedp.ByQuery))
	b.submit("#q-text")
	if s := b.text("ol.chunks"); !strings.Contains(s, "Opening hours") {
		t.Errorf("retrieval results do not name their source: %q", s)
	}

	// Add a member by email.
	carol := e.NewUser("carol@example.com", false)
	b.open("/workspace")
	b.clickText("Add a member")
	b.run("email", chromedp.WaitVisible("#new-member", chromedp.ByQuery), chromedp.SendKeys("#new-member", carol.Email, chromedp.ByQuery))
	b.submit("#new-member")
	if res := b.api("GET", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users/"+carol.ID, nil); res.Status != http.StatusOK {
		t.Errorf("a member added by email: %d %s", res.Status, res.Body)
	}
}
