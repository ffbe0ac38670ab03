package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/validate"
)

// consoleWatch collects what a page reports in the browser's console: exceptions,
// console.error and console.warn, and the browser's own errors (a blocked script, a
// resource that failed to load).
type consoleWatch struct {
	mu   sync.Mutex
	msgs []string
}

// watchConsole starts collecting the tab's console messages.
func (b *browser) watchConsole() *consoleWatch {
	b.t.Helper()
	w := &consoleWatch{}
	chromedp.ListenTarget(b.ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type != runtime.APITypeError && e.Type != runtime.APITypeWarning {
				return
			}
			msg = "console." + string(e.Type) + ":"
			for _, a := range e.Args {
				msg += " " + string(a.Value) + a.Description
			}
		case *log.EventEntryAdded:
			if e.Entry.Level != log.LevelError && e.Entry.Level != log.LevelWarning {
				return
			}
			msg = "browser " + string(e.Entry.Level) + ": " + e.Entry.Text + " " + e.Entry.URL
		default:
			return
		}
		w.mu.Lock()
		w.msgs = append(w.msgs, msg)
		w.mu.Unlock()
	})
	b.run("watch the console", runtime.Enable(), log.Enable())
	return w
}

// check fails the test on each message collected since the last check, but those of a
// page opened on purpose with a failing status (expected names its URL's ending).
func (w *consoleWatch) check(t *testing.T, where string, expected ...string) {
	t.Helper()
	w.mu.Lock()
	msgs := w.msgs
	w.msgs = nil
	w.mu.Unlock()
next:
	for _, m := range msgs {
		for _, e := range expected {
			if strings.Contains(m, "Failed to load resource") && strings.HasSuffix(strings.TrimSpace(m), e) {
				continue next
			}
		}
		t.Errorf("%s: the browser's console says %s", where, m)
	}
}

// lifecycleScene is a workspace with agents Alpha (published twice, on a scripted model,
// with a test and more runs than a page shows) and Bravo (no tests), and a number.
type lifecycleScene struct {
	alpha, bravo, number string
	runs                 []string // Alpha's runs, oldest first
	campaign             string   // Alpha's, with a page of recipients and one more
}

func newLifecycleScene(t *testing.T, b *browser) lifecycleScene {
	t.Helper()
	var s lifecycleScene
	s.alpha = createTrattoria(t, b)
	b.mustAPI(http.StatusOK, "PUT", "/api/v1/agents/"+s.alpha, map[string]any{"name": "Alpha",
		"analysis_config": map[string]any{"success_criterion": "A table was booked."}})
	for range 2 {
		b.mustAPI(http.StatusNoContent, "POST", "/api/v1/agents/"+s.alpha+"/publish", nil)
	}
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents/"+s.alpha+"/tests", map[string]any{"name": "books a table",
		"user": map[string]any{"script": []string{"A table for two"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "booked"}}})
	for range 21 { // one more than a page of the Tests tab (perPage)
		s.runs = append(s.runs, str(b.mustAPI(http.StatusAccepted, "POST", "/api/v1/agents/"+s.alpha+"/test-runs", map[string]any{})["id"]))
	}
	s.bravo = str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Bravo"})["id"])
	s.number = str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550160", "provider": "sip"})["id"])
	var recipients []any
	for i := range 21 {
		recipients = append(recipients, map[string]any{"phone_number": fmt.Sprintf("+1415555%04d", 1000+i)})
	}
	s.campaign = str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/campaigns", map[string]any{"name": "Autumn reminders", "agent_id": s.alpha,
		"number_id": s.number, "recipients": recipients, "max_concurrent": 1,
		"window": map[string]any{"days": data.Weekdays, "start": "09:00", "end": "18:00"},
		"retry":  map[string]any{"on": []string{"busy"}, "max_attempts": 1, "backoff_minutes": 5}})["id"])
	return s
}

// signInAsMember adds a new account to the owner's workspace and signs the browser in as it.
func (b *browser) signInAsMember(email, role string, modules, agentIDs []string) {
	b.t.Helper()
	u := b.env.NewUser(email, false)
	body := map[string]any{"id": u.ID, "role": role, "agent_ids": agentIDs}
	if modules != nil {
		body["modules"] = modules
	}
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/workspaces/"+b.env.Owner.WorkspaceID+"/users", body)
	b.run("sign out", chromedp.Click(`form.signout button`, chromedp.ByQuery), chromedp.WaitVisible("#email", chromedp.ByQuery))
	b.signIn(u.Email, u.Password, b.env.Owner.WorkspaceID)
}

// TestLifecycleAudit walks the life-cycle pages as the owner, a reader and a developer
// limited to one agent and two modules, on one server, with the browser's console
// watched throughout:
//   - the Tests tab pages its runs (older and newer, the back button and a reload);
//   - a refused rollout shows each fault beside its field and keeps what was typed;
//   - a reader is not offered a test editor it could not save, sees an existing test and
//     the agent with every field disabled, and is not told by an empty list to create
//     what it cannot;
//   - a developer without the analytics module is not offered the analysis page, and one
//     without the phone_numbers module still starts a campaign (the number by its id).
func TestLifecycleAudit(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	s := newLifecycleScene(t, b)
	watch := b.watchConsole()
	b.signIn(e.Owner.Email, e.Owner.Password, "")

	b.checkRunPages(t, s)
	watch.check(t, "the Tests tab")
	b.checkRecipientPages(t, s)
	watch.check(t, "the campaign's page")
	b.checkTestEditorBounds(t, s)
	watch.check(t, "the test editor")
	b.checkRefusedRollout(t, s)
	watch.check(t, "the rollout page", "/rollout")
	b.checkAnalysisUnjudged(t, s)
	watch.check(t, "the analysis page")

	b.signInAsMember("reader@example.com", data.RoleMember, nil, []string{})
	b.checkReaderTests(t, s)
	watch.check(t, "the reader's pages", "/tests/new")

	b.signInAsMember("limited@example.com", data.RoleDeveloper, []string{data.ModuleAgents, data.ModuleCallHistory}, []string{s.alpha})
	b.checkLimitedDeveloper(t, s)
	watch.check(t, "the limited developer's pages")
}

// waitFor waits until the page's script cond is true, asking again while the browser
// navigates (an evaluation then fails).
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	for {
		var ok bool
		if err := chromedp.Run(b.ctx, chromedp.Evaluate(cond, &ok)); err == nil && ok {
			return
		}
		select {
		case <-b.ctx.Done():
			b.t.Fatalf("%s: %v", what, b.ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// runRows are the run ids the Tests tab lists (each row's data-run-id: a run is
// labelled in words).
func (b *browser) runRows() []string {
	b.t.Helper()
	var ids []string
	b.eval("run rows", `Array.from(document.querySelectorAll('section[aria-labelledby="runs-h"] tbody tr[data-run-id]'), tr => tr.dataset.runId)`, &ids)
	return ids
}

func (b *browser) checkRunPages(t *testing.T, s lifecycleScene) {
	newest := s.runs[len(s.runs)-1]
	b.open("/agents/" + s.alpha + "/tests")
	first := b.runRows()
	if len(first) != 20 || first[0] != newest {
		t.Fatalf("the first page of runs: %d rows from %v, want 20 from %s", len(first), first, newest)
	}
	var older bool
	b.eval("a link to older runs", `!!document.querySelector('section[aria-labelledby="runs-h"] a[rel="next"]')`, &older)
	if !older {
		t.Fatalf("no link to the runs older than the first %d", len(first))
	}
	b.followText("Older runs")
	if got := b.runRows(); len(got) != 1 || got[0] != s.runs[0] {
		t.Fatalf("the older runs: %v, want the oldest, %s", got, s.runs[0])
	}
	b.run("reload", chromedp.Reload(), chromedp.WaitReady("#main", chromedp.ByQuery))
	if got := b.runRows(); len(got) != 1 || got[0] != s.runs[0] {
		t.Errorf("the older runs after a reload: %v", got)
	}
	if got := b.text("#tests-list tbody"); !strings.Contains(got, "books a table") {
		t.Errorf("paging the runs lost the tests: %q", got)
	}
	b.followText("Newer runs")
	if got := b.runRows(); strings.Join(got, ",") != strings.Join(first, ",") {
		t.Errorf("back to the newer runs: %v, want %v", got, first)
	}
	// The browser may restore the page from its back-forward cache, without a load.
	b.run("the browser's back button", chromedp.Evaluate(`setTimeout(() => history.back(), 0), true`, nil))
	b.waitFor("the older runs again", `document.readyState === "complete" && document.querySelectorAll('section[aria-labelledby="runs-h"] tbody tr').length === 1`)
	if got := b.runRows(); len(got) != 1 || got[0] != s.runs[0] {
		t.Errorf("back: %v, want the oldest run", got)
	}
	b.audit("tests-runs-older")
}

// checkRecipientPages walks a campaign's recipients older and newer: a page of 20 and
// the one left.
func (b *browser) checkRecipientPages(t *testing.T, s lifecycleScene) {
	rows := func() []string {
		var numbers []string
		b.eval("recipient rows", `Array.from(document.querySelectorAll("main table tbody tr td:first-child"), td => td.textContent)`, &numbers)
		return numbers
	}
	b.open("/campaigns/" + s.campaign)
	first := rows()
	if len(first) != 20 {
		t.Fatalf("the first page of recipients: %v", first)
	}
	b.followText("Older recipients")
	if got := rows(); len(got) != 1 || slices.Contains(first, got[0]) {
		t.Fatalf("the older recipients: %v", got)
	}
	b.followText("Newer recipients")
	if got := rows(); strings.Join(got, ",") != strings.Join(first, ",") {
		t.Errorf("back to the newer recipients: %v, want %v", got, first)
	}
}

// checkTestEditorBounds: the test editor's number fields take validate's bounds at the
// edge and refuse one past it before the form is sent.
func (b *browser) checkTestEditorBounds(t *testing.T, s lifecycleScene) {
	b.open("/agents/" + s.alpha + "/tests/new")
	b.run("a mock row", chromedp.Click(`[data-add-row="mocks"]`, chromedp.ByQuery))
	for _, c := range []struct {
		field string
		value int
		valid bool
	}{
		{"max_turns", validate.MinTestMaxTurns, true}, {"max_turns", validate.MinTestMaxTurns - 1, false},
		{"max_turns", validate.MaxTestMaxTurns, true}, {"max_turns", validate.MaxTestMaxTurns + 1, false},
		{"repeat", validate.MinTestRepeat, true}, {"repeat", validate.MinTestRepeat - 1, false},
		{"repeat", validate.MaxTestRepeat, true}, {"repeat", validate.MaxTestRepeat + 1, false},
		{"mock_status", validate.MinMockStatus, true}, {"mock_status", validate.MinMockStatus - 1, false},
		{"mock_status", validate.MaxMockStatus, true}, {"mock_status", validate.MaxMockStatus + 1, false},
	} {
		var valid bool
		b.eval(c.field, fmt.Sprintf(`(e => (e.value = "%d", e.checkValidity()))(document.querySelector('#test-form [name="%s"]'))`, c.value, c.field), &valid)
		if valid != c.valid {
			t.Errorf("the editor's %s of %d: valid %v, want %v", c.field, c.value, valid, c.valid)
		}
	}
}

// checkAnalysisUnjudged: a call of the agent ended today, never analyzed; the success
// rate per day and per version say there is nothing judged, not that no call ended nor
// draw empty days.
func (b *browser) checkAnalysisUnjudged(t *testing.T, s lifecycleScene) {
	now := time.Now().UTC()
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": s.alpha, "direction": "inbound",
		"from_number": "+14155550999", "to_number": "+14155550160", "status": "ended", "disconnection_reason": "user_hangup",
		"started_at": now.Add(-time.Minute).Format(time.RFC3339), "ended_at": now.Format(time.RFC3339)})
	b.open("/agents/" + s.alpha + "/analysis")
	for _, chart := range []string{"Success rate per day (%)", "Success rate per version (%)"} {
		var msg string
		b.eval(chart, fmt.Sprintf(`Array.from(document.querySelectorAll("figure.chart-box")).find(f => f.querySelector("figcaption").textContent === %q)?.textContent ?? ""`, chart), &msg)
		if !strings.Contains(msg, "judged") {
			t.Errorf("with a call ended and none analyzed, the chart %q says %q", chart, msg)
		}
	}
}

func (b *browser) checkRefusedRollout(t *testing.T, s lifecycleScene) {
	before := b.api("GET", "/api/v1/agents/"+s.alpha+"/rollout", nil)
	b.open("/agents/" + s.alpha + "/rollout")
	if crumbs := b.text(".crumbs"); !strings.Contains(crumbs, "Alpha") {
		t.Errorf("the rollout page's crumbs do not name the agent: %q", crumbs)
	}
	b.run("weights that do not sum to 100, and a rollback without its threshold",
		chromedp.SendKeys(`#w-1`, "70", chromedp.ByQuery), chromedp.SendKeys(`#w-2`, "20", chromedp.ByQuery))
	b.setSelect("#rb-metric", data.RolloutMetrics[0])
	b.run("min calls", chromedp.SendKeys(`#rb-min`, "12", chromedp.ByQuery))
	b.submit("#w-1")
	var msg string
	b.eval("the weights' fault", `document.querySelector("#w-all-err")?.textContent ?? ""`, &msg)
	if !strings.Contains(msg, "sum to 100") {
		t.Errorf("the weights' fault beside them: %q", msg)
	}
	var kept string
	b.eval("the form as typed", `["#w-1", "#w-2", "#rb-metric", "#rb-min"].map(s => document.querySelector(s).value).join(",")`, &kept)
	if want := "70,20," + data.RolloutMetrics[0] + ",12"; kept != want {
		t.Errorf("the refused form shows %q, want what was typed, %q", kept, want)
	}
	if after := b.api("GET", "/api/v1/agents/"+s.alpha+"/rollout", nil); after.Status != before.Status || string(after.Body) != string(before.Body) {
		t.Errorf("a refused rollout changed it: %d %s", after.Status, after.Body)
	}
	b.audit("rollout-refused")
	// Published twice: the page says since when a rollout stands in words, not as stored.
	b.mustAPI(http.StatusOK, "PUT", "/api/v1/agents/"+s.alpha+"/rollout", map[string]any{"variants": []any{
		map[string]any{"version": 1, "weight": 50}, map[string]any{"version": 2, "weight": 50}}})
	b.open("/agents/" + s.alpha + "/rollout")
	if p := b.text("[data-rollout-panel]"); !strings.Contains(p, "Since ") || strings.Contains(p, "Z:") {
		t.Errorf("the rollout's start reads as stored: %q", p)
	}
	b.mustAPI(http.StatusNoContent, "DELETE", "/api/v1/agents/"+s.alpha+"/rollout", nil)
}

func (b *browser) checkReaderTests(t *testing.T, s lifecycleScene) {
	b.open("/agents/" + s.bravo + "/tests")
	b.waitText("No tests yet.")
	var offered bool
	b.eval("a link to the editor", `!!document.querySelector('#main a[href$="/tests/new"]')`, &offered)
	if offered {
		t.Error("a reader is offered to write a test")
	}
	b.open("/agents/" + s.bravo + "/tests/new")
	var form bool
	b.eval("the editor", `!!document.querySelector("#test-form")`, &form)
	if form {
		t.Error("a reader is shown the test editor")
	}
	if msg := b.text("main"); !strings.Contains(msg, "role (member)") {
		t.Errorf("the reader's refusal: %q", msg)
	}
	// An existing test and the agent itself: a reader sees every field, none editable,
	// and is told why.
	b.open("/agents/" + s.alpha + "/tests")
	b.follow("open the test", chromedp.Click(`//a[text()="books a table"]`, chromedp.BySearch))
	for _, form := range []string{"#test-form", "#agent-form"} {
		if form == "#agent-form" {
			b.open("/agents/" + s.alpha)
		}
		var fields struct {
			All      int
			Editable []string
			Save     bool
			Told     bool
		}
		var found string
		b.eval("the fields of "+form, fmt.Sprintf(`(f => JSON.stringify({All: f.querySelectorAll("input:not([type=hidden]), select, textarea").length,
			Editable: Array.from(f.querySelectorAll("input:not([type=hidden]), select, textarea")).filter(e => !e.matches(":disabled") && !e.readOnly).map(e => e.name || e.dataset.key),
			Save: !!f.querySelector('button[type="submit"]'), Told: !!document.querySelector("[data-read-only]")}))(document.querySelector(%q))`, form), &found)
		json.Unmarshal([]byte(found), &fields)
		if fields.All == 0 || len(fields.Editable) > 0 || fields.Save || !fields.Told {
			t.Errorf("a reader's %s: %d fields, editable %v, a save button %v, told it is read-only %v", form, fields.All, fields.Editable, fields.Save, fields.Told)
		}
	}
	// The workspace has no knowledge base: the empty list does not ask the reader to
	// create one (TestListEmptyStatesFitTheRole checks every list page).
	b.open("/knowledge-bases")
	if msg := b.text(".empty"); strings.Contains(msg, "Create one") || !strings.Contains(msg, "Your role lets you") {
		t.Errorf("the reader's empty list of knowledge bases: %q", msg)
	}
}

func (b *browser) checkLimitedDeveloper(t *testing.T, s lifecycleScene) {
	b.open("/agents/" + s.alpha)
	var links []string
	b.eval("the agent's links", `Array.from(document.querySelectorAll(".inline-actions a"), a => a.getAttribute("href"))`, &links)
	for _, l := range links {
		if strings.HasSuffix(l, "/analysis") {
			t.Errorf("a developer without the analytics module is offered %s", l)
		}
	}
	b.open("/campaigns")
	if got := b.text("main"); strings.Contains(got, "Bravo") {
		t.Errorf("the campaigns page names Bravo: %q", got)
	}
	csv := filepath.Join(t.TempDir(), "recipients.csv")
	os.WriteFile(csv, []byte("phone_number\n+14155550161\n"), 0o600)
	b.clickText("Start a campaign")
	var options int
	b.eval("the calling number's field", `document.querySelector("#c-number").tagName === "SELECT" ? document.querySelectorAll("#c-number option[value]:not([value=''])").length : -1`, &options)
	if options == 0 {
		t.Fatal("the calling number is a choice of no number: a user without the phone_numbers module cannot start a campaign")
	}
	b.run("settings", chromedp.WaitVisible("#c-name", chromedp.ByQuery), chromedp.SendKeys("#c-name", "Limited reminders", chromedp.ByQuery),
		chromedp.SendKeys("#c-number", s.number, chromedp.ByQuery),
		chromedp.SetUploadFiles("#c-file", []string{csv}, chromedp.ByQuery))
	b.setSelect("#c-agent", s.alpha)
	b.submit("#c-file")
	b.waitText("created with 1 recipient")
	if got := b.listCount("/api/v1/campaigns", "name", "Limited reminders"); got != 1 {
		t.Errorf("%d campaigns named Limited reminders", got)
	}
}
