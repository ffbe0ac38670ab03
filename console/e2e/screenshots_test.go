package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// consolePage is one page of the console, opened by its path.
type consolePage struct {
	name, path string
}

// consolePages lists every page of the console on a seeded workspace; a new page adds
// its line here, so that the accessibility check and the screenshots cover it.
func consolePages(s seeded) []consolePage {
	tested := "/agents/" + s.Tested
	return []consolePage{
		{"home-seeded", "/"},
		{"agents", "/agents"},
		{"agent", "/agents/" + s.Agent},
		{"agent-delete", "/agents/" + s.Agent + "/delete"},
		{"versions", "/agents/" + s.Agent + "/versions"},
		{"diff", "/agents/" + s.Agent + "/diff?a=1&b=2"},
		{"restore", "/agents/" + s.Agent + "/versions/1/restore"},
		{"version-delete", "/agents/" + s.Agent + "/versions/1/delete"},
		{"analysis", "/agents/" + s.Agent + "/analysis"},
		{"rollout", "/agents/" + s.Agent + "/rollout"},
		{"tests", tested + "/tests"},
		{"test-new", tested + "/tests/new"},
		{"test-editor", tested + "/tests/" + s.Test},
		{"test-delete", tested + "/tests/" + s.Test + "/delete"},
		{"test-run", tested + "/test-runs/" + s.Run},
		{"knowledge-bases", "/knowledge-bases"},
		{"knowledge-base", "/knowledge-bases/" + s.KB + "?q=when+do+orders+ship"},
		{"source-delete", "/knowledge-bases/" + s.KB + "/sources/texts/" + s.TextSource + "/delete"},
		{"knowledge-base-delete", "/knowledge-bases/" + s.KB + "/delete"},
		{"numbers", "/numbers"},
		{"number", "/numbers/" + s.Number},
		{"number-delete", "/numbers/" + s.Number + "/delete"},
		{"calls", "/calls"},
		{"call", "/calls/" + s.Call},
		{"call-delete", "/calls/" + s.Call + "/delete"},
		{"campaigns", "/campaigns"},
		{"campaign", "/campaigns/" + s.Campaign},
		{"campaign-cancel", "/campaigns/" + s.Campaign + "/cancel"},
		{"suppressions", "/suppressions"},
		{"jobs", "/jobs"},
		{"job", "/jobs/" + s.Job},
		{"analytics", "/analytics"},
		{"webhooks", "/webhooks"},
		{"webhook", "/webhooks/" + s.Webhook},
		{"webhook-rotate", "/webhooks/" + s.Webhook + "/rotate"},
		{"webhook-delete", "/webhooks/" + s.Webhook + "/delete"},
		{"api-keys", "/api-keys"},
		{"api-key-revoke", "/api-keys/" + s.KeyID + "/revoke"},
		{"workspace", "/workspace"},
		{"privacy", "/workspace/privacy"},
		{"prices", "/workspace/prices"},
		{"audit", "/workspace/audit"},
		{"member-remove", "/workspace/members/" + s.Member + "/remove"},
		{"workspace-delete", "/workspace/delete"},
		{"account", "/account"},
		{"users", "/users"},
		{"user-delete", "/users/" + s.Member + "/delete"},
		{"not-found", "/no-such-page"},
		{"error", "/agents/agt_01JD6000000000000000000000"}, // the API's 404, on the error page
	}
}

// emptyPages are the lists of a new workspace: each says what it is for.
var emptyPages = []consolePage{
	{"agents-empty", "/agents"}, {"knowledge-bases-empty", "/knowledge-bases"}, {"numbers-empty", "/numbers"},
	{"calls-empty", "/calls"}, {"campaigns-empty", "/campaigns"}, {"suppressions-empty", "/suppressions"},
	{"analytics-empty", "/analytics"}, {"jobs-empty", "/jobs"}, {"webhooks-empty", "/webhooks"},
	{"api-keys-empty", "/api-keys"}, {"audit-empty", "/workspace/audit"},
}

// TestScreenshots opens every page of the console, as an owner who administers the
// instance, first in an empty workspace and then in a seeded one: on each, axe-core
// finds no serious or critical violation at 1280 px wide, and at each of auditWidths
// nothing scrolls sideways and consistencyRules hold. With CONSOLE_SCREENSHOTS=DIR it
// saves every page at each width as DIR/<page>-<width>.png:
//
//	CONSOLE_SCREENSHOTS=/tmp/console go test ./console/e2e -run Screenshots
func TestScreenshots(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	b.open("/login")
	b.audit("login")
	b.signIn(e.Owner.Email, e.Owner.Password, "")
	// A new workspace: the first steps, and empty lists that say what they are for.
	b.run("first steps", chromedp.WaitVisible("ol.steps", chromedp.ByQuery))
	b.audit("home")
	for _, p := range emptyPages {
		b.open(p.path)
		b.audit(p.name)
		// Nothing to pick is no filter: not a bare box asking for an id nobody has.
		var idBoxes []string
		b.eval("id boxes", `Array.from(document.querySelectorAll('form.filters input[type="text"][name$="_id"]'), i => i.name)`, &idBoxes)
		if len(idBoxes) > 0 {
			t.Errorf("%s: the empty workspace's filters ask for ids: %v", p.name, idBoxes)
		}
		// Its button to the form folded above it opens the form.
		var opened string
		b.eval("empty state's button", `(a => { if (!a) return "none"; const d = document.querySelector(a.getAttribute("href"));
			return new Promise(r => { addEventListener("hashchange", () => r(d && d.open ? "open" : "closed"), {once: true}); a.click(); }); })(document.querySelector('.empty a.button[href^="#"]'))`, &opened)
		if opened == "closed" {
			t.Errorf("%s: the empty state's button leaves its form folded", p.name)
		}
		// Nor an export of nothing.
		var exports int
		b.eval("exports", `document.querySelectorAll("main a[download]").length`, &exports)
		if exports > 0 {
			t.Errorf("%s: an empty list offers %d exports", p.name, exports)
		}
	}

	s := seed(t, b)
	for _, p := range consolePages(s) {
		b.open(p.path)
		b.audit(p.name)
	}
	b.checkRelatedLinks(s)
	b.checkAgentTabs(s)
	// A campaign's progress reads alike on the list and on its page, its status a badge
	// as every list's.
	b.open("/campaigns")
	if row := b.text("main table tbody tr"); !strings.Contains(row, "0 of 5 done · 5 waiting · 0 calling") {
		t.Errorf("the campaigns list's row: %q", row)
	}
	var badges int
	b.eval("status badge", `document.querySelectorAll('main tbody td[data-label="Status"] .badge').length`, &badges)
	if badges != 1 {
		t.Errorf("the campaigns list shows %d status badges for 1 campaign", badges)
	}
	// A recipient not called yet says so in its Calls cell, as every empty cell does.
	b.open("/campaigns/" + s.Campaign)
	var calls []string
	b.eval("recipients' calls", `Array.from(document.querySelectorAll('td[data-label="Calls"]'), td => td.textContent.trim())`, &calls)
	for _, c := range calls {
		if c != "—" {
			t.Errorf("a recipient not called yet: its Calls cell reads %q", c)
			break
		}
	}
	// The calls list reads in the order it is in: the API's, newest received first, whose
	// time leads each row (it led with the start time, and the seeded calls, received in
	// the order 5 minutes, 3 hours, 26 and 50 hours after they started, read oldest first).
	b.open("/calls")
	var times []string
	b.eval("calls' first times", `Array.from(document.querySelectorAll("main table tbody tr td:first-child time"), t => t.getAttribute("datetime"))`, &times)
	if len(times) != 4 {
		t.Errorf("the calls list shows %d times in its first column, want 4", len(times))
	}
	for i := 1; i < len(times); i++ {
		if times[i] > times[i-1] {
			t.Errorf("the calls list's first column is not newest first: %v", times)
			break
		}
	}
	// Deleting the workspace names all it loses: its campaign among them.
	b.open("/workspace/delete")
	if lost := b.text(".confirm"); !strings.Contains(lost, "1 campaign") || !strings.Contains(lost, "suppression list") {
		t.Errorf("the workspace's deletion does not name its campaign and suppression list: %q", lost)
	}
	// The Tests tab's cells in sentence case like every other cell (the caller's read
	// "scripted, 1 turn").
	b.open("/agents/" + s.Tested + "/tests")
	var callers []string
	b.eval("callers", `Array.from(document.querySelectorAll('td[data-label="Caller"]'), td => td.textContent.trim())`, &callers)
	for _, c := range callers {
		if c == "" || strings.ToUpper(c[:1]) != c[:1] {
			t.Errorf("the Tests tab's caller cell reads %q: not in sentence case", c)
		}
	}
	if len(callers) == 0 {
		t.Error("the Tests tab shows no caller cell")
	}
	// The test editor's choices in words, not the API's codes (it offered "says" and
	// "not_says", "scripted: …").
	b.open("/agents/" + s.Tested + "/tests/" + s.Test)
	var choices []string
	b.eval("choices", `Array.from(document.querySelectorAll('select[name="c_type"] option, select[name="caller"] option'), o => o.textContent.trim())`, &choices)
	for _, c := range choices {
		if c == "" || strings.Contains(c, "_") || strings.ToUpper(c[:1]) != c[:1] {
			t.Errorf("the test editor offers %q: not in words", c)
		}
	}
	if len(choices) == 0 {
		t.Error("the test editor offers no criterion type")
	}

	// A form refused: each fault beside its field, on the page the form was on.
	b.open("/numbers")
	b.run("a bad number", chromedp.SetValue("#n-phone", "12345", chromedp.ByQuery))
	b.submit("#n-phone")
	b.run("refused", chromedp.WaitVisible(".alert", chromedp.ByQuery))
	b.audit("numbers-refused")

	// A member limited to one agent and two modules: a section not theirs is refused in
	// words, and an agent not theirs is not found.
	b.run("sign out", chromedp.Click(`form.signout button`, chromedp.ByQuery), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.signIn(s.MemberEmail, s.MemberPassword, e.Owner.WorkspaceID)
	for _, p := range []struct{ name, path, title string }{
		{"forbidden", "/numbers", "Not allowed"},
		{"agent-not-yours", "/agents/" + s.Tested, "Not found"},
	} {
		b.open(p.path)
		if h := b.text("h1"); h != p.title {
			t.Errorf("%s: the page's title is %q, want %q", p.path, h, p.title)
		}
		b.audit(p.name)
	}
	// Not offered what the API refuses such a member: adding an agent (here, or as the
	// first step of the home page).
	b.open("/agents")
	var offered int
	b.eval("create offered", `document.querySelectorAll('#new-agent').length`, &offered)
	if offered != 0 {
		t.Error("a member limited to one agent is offered to create agents")
	}
	b.open("/")
	if h := b.text("h1"); h == "Get started" {
		t.Error("a member limited to one agent is shown the first steps, which begin by creating an agent")
	}
	// A key holds at most its user's rights: the key form offers such a member only the
	// scopes that grant them something (it offered all 16), and says why the others are
	// missing.
	b.open("/api-keys")
	var keyForm struct {
		Scopes   []string
		Withheld string
	}
	var raw string
	b.eval("offered scopes", `JSON.stringify({Scopes: Array.from(document.querySelectorAll('#new-key input[name="scopes"]'), i => i.value),
		Withheld: (document.querySelector("[data-withheld-scopes]") || {textContent: ""}).textContent})`, &raw)
	json.Unmarshal([]byte(raw), &keyForm)
	for _, want := range []string{"agents:read", "agents:write", "call_history:read", "call_history:write", "calls:runtime"} {
		if !slices.Contains(keyForm.Scopes, want) {
			t.Errorf("the key form does not offer a developer holding its module %s: %v", want, keyForm.Scopes)
		}
	}
	for _, not := range []string{"knowledge_base:read", "phone_numbers:write", "analytics:read", "webhooks:read"} {
		if slices.Contains(keyForm.Scopes, not) {
			t.Errorf("the key form offers %s to a developer without its module or role: %v", not, keyForm.Scopes)
		}
	}
	if !strings.Contains(keyForm.Withheld, "Knowledge base: read") || !strings.Contains(keyForm.Withheld, "do not allow") {
		t.Errorf("the key form does not say which scopes it leaves out, and why: %q", keyForm.Withheld)
	}
	// What such a member is offered, to look at (no action the API would refuse).
	for _, p := range []consolePage{{"member-agents", "/agents"}, {"member-agent", "/agents/" + s.Agent}, {"member-calls", "/calls"},
		{"member-campaigns", "/campaigns"}, {"member-jobs", "/jobs"}, {"member-workspace", "/workspace"}, {"member-api-keys", "/api-keys"}} {
		b.open(p.path)
		b.audit(p.name)
	}
}

// checkAgentTabs: an agent's pages lead to one another by the same links, in the same
// words, each marking itself; they used to differ from page to page (the versions and
// tests pages had no way to the analysis or to Try it).
func (b *browser) checkAgentTabs(s seeded) {
	b.t.Helper()
	var first string
	for _, p := range []struct{ path, current string }{
		{"", "Configuration"}, {"/versions", "Versions and publishing"}, {"/tests", "Tests"}, {"/analysis", "Analysis and cost"},
	} {
		b.open("/agents/" + s.Agent + p.path)
		var tabs struct{ Links, Current string }
		var raw string
		b.eval("tabs", `(() => { const n = document.querySelector('nav[aria-label="This agent\'s pages"]');
			return JSON.stringify(n ? {Links: Array.from(n.querySelectorAll("a"), a => a.textContent.trim() + " " + a.getAttribute("href")).join(" | "),
				Current: Array.from(n.querySelectorAll('a[aria-current="page"]'), a => a.textContent.trim()).join(" | ")} : {}); })()`, &raw)
		json.Unmarshal([]byte(raw), &tabs)
		if first == "" {
			first = tabs.Links
		}
		if tabs.Links == "" || tabs.Links != first || tabs.Current != p.current {
			b.t.Errorf("/agents/…%s: the agent's pages read %q (%q marked), want %q with %q marked", p.path, tabs.Links, tabs.Current, first, p.current)
		}
	}
}

// checkRelatedLinks: each record's page links to the records it names, as a reader
// would follow them: a call to the agent's version it ran on, a campaign to its number,
// the jobs list to each job's agent, a diff to its agent by name.
func (b *browser) checkRelatedLinks(s seeded) {
	b.t.Helper()
	for _, c := range []struct{ page, sel, want string }{
		{"/calls/" + s.Call, `a[href="/agents/` + s.Agent + `/versions#v2"]`, "version 2"},
		{"/campaigns/" + s.Campaign, `a[href="/numbers/` + s.Number + `"]`, "+14155550123"},
		{"/jobs", `#jobs a[href="/agents/` + s.Tested + `"]`, "Trattoria"},
		{"/agents/" + s.Agent + "/diff?a=1&b=2", `.crumbs a[href="/agents/` + s.Agent + `"]`, "Front desk"},
	} {
		b.open(c.page)
		var got string
		b.eval("link on "+c.page, fmt.Sprintf(`(document.querySelector(%q) || {textContent: "no such link"}).textContent.trim()`, c.sel), &got)
		if got != c.want {
			b.t.Errorf("%s: the link %s reads %q, want %q", c.page, c.sel, got, c.want)
		}
	}
	// The version a call links to is the row its anchor names.
	b.open("/agents/" + s.Agent + "/versions")
	var row string
	b.eval("version row", `(document.getElementById("v2") || {textContent: ""}).textContent`, &row)
	if !strings.Contains(row, "Shorter answers") {
		b.t.Errorf("the versions page's #v2 row reads %q", row)
	}
}
