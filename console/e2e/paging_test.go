package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestListPages walks lists of more than a page (the console shows 20) older, then
// newer, on one server with the browser's console watched: the newer page is the first
// one again, a filter stays on both links (the older page holds only what it matches),
// and a reload and the back button keep the page. Calls filtered by agent and
// direction, jobs filtered by kind, the audit log filtered by type, and API keys. Then
// the Tests tab's runs read in words, not as ids.
func TestListPages(t *testing.T) {
	var svc *service.Services
	b := newBrowserWith(t, func(s *service.Services) { svc = s })
	watch := b.watchConsole()
	alpha := str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Alpha"})["id"])
	bravo := str(b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents", map[string]any{"name": "Bravo"})["id"])
	// 21 inbound calls of Alpha, with calls of Bravo and an outbound one of Alpha among
	// them: unfiltered, the older page would hold more than the one left.
	now := time.Now().UTC()
	for i := range 27 {
		agent, direction := alpha, "inbound"
		switch i % 8 {
		case 3:
			agent = bravo
		case 6:
			direction = "outbound"
		}
		b.mustAPI(http.StatusCreated, "POST", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": direction,
			"from_number": fmt.Sprintf("+1415555%04d", 2000+i), "to_number": "+14155550100", "status": "ended",
			"started_at": now.Add(-time.Duration(30-i) * time.Minute).Format(time.RFC3339), "ended_at": now.Format(time.RFC3339)})
	}
	queueJobs(t, b, svc, alpha, 21)
	for i := range 21 {
		b.mustAPI(http.StatusCreated, "POST", "/api/v1/api-keys", map[string]any{"name": fmt.Sprintf("key %02d", i)})
	}
	b.signIn(b.env.Owner.Email, b.env.Owner.Password, b.env.Owner.WorkspaceID)

	b.walkPages(t, "/calls", "calls", url.Values{"agent_id": {alpha}, "direction": {"inbound"}}, 1)
	watch.check(t, "the calls' pages")
	b.walkPages(t, "/jobs", "jobs", url.Values{"kind": {service.JobKindAnalyzeCall}}, 1)
	watch.check(t, "the jobs' pages")
	b.walkPages(t, "/workspace/audit", "events", url.Values{"type": {data.EventCallRegistered}}, 7)
	watch.check(t, "the audit log's pages")
	b.walkPages(t, "/api-keys", "keys", nil, -1)
	watch.check(t, "the API keys' pages")
	b.checkRunLabels(t)
	watch.check(t, "the Tests tab's runs")
}

// checkRunLabels runs an agent's test on version 1 and on the draft, and reads the two
// runs on the Tests tab: when (a time element, the link to the run), version or draft,
// status, counts and who started it, in words; the run's id only in data-run-id and the
// link's title.
func (b *browser) checkRunLabels(t *testing.T) {
	id := createTrattoria(t, b)
	b.mustAPI(http.StatusCreated, "POST", "/api/v1/agents/"+id+"/tests", map[string]any{"name": "books a table",
		"user": map[string]any{"script": []string{"A table for two"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "booked"}}})
	b.mustAPI(http.StatusNoContent, "POST", "/api/v1/agents/"+id+"/publish", nil)
	runs := map[string]string{} // id → what it ran on, as the row says it
	runs[str(b.mustAPI(http.StatusAccepted, "POST", "/api/v1/agents/"+id+"/test-runs", map[string]any{"version": 1})["id"])] = "Version 1"
	runs[str(b.mustAPI(http.StatusAccepted, "POST", "/api/v1/agents/"+id+"/test-runs", map[string]any{})["id"])] = "Draft"
	for rid := range runs {
		for deadline := time.Now().Add(time.Minute); ; {
			if data.TestRunFinished(str(b.mustAPI(http.StatusOK, "GET", "/api/v1/agents/"+id+"/test-runs/"+rid, nil)["status"])) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s did not finish", rid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	b.open("/agents/" + id + "/tests")
	var rows []struct{ ID, Text, Title string }
	b.eval("run rows", `Array.from(document.querySelectorAll('section[aria-labelledby="runs-h"] tbody tr'), tr => ({ID: tr.dataset.runId ?? "",
		Text: tr.innerText, Title: tr.querySelector("a time") ? tr.querySelector("a").title : ""}))`, &rows)
	if len(rows) != len(runs) {
		t.Fatalf("the runs' rows: %+v, want %d", rows, len(runs))
	}
	for _, r := range rows {
		of, ok := runs[r.ID]
		if !ok {
			t.Errorf("a row of run %q, not one of %v", r.ID, runs)
			continue
		}
		for _, want := range []string{of, "Passed", "1 passed, 0 failed, of 1", b.env.Owner.Email[:strings.Index(b.env.Owner.Email, "@")]} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("run %s's row %q does not say %q", r.ID, r.Text, want)
			}
		}
		if strings.Contains(r.Text, r.ID) || !strings.Contains(r.Title, r.ID) {
			t.Errorf("run %s's row %q (link title %q): its id shows, or its link is not a time titled with it", r.ID, r.Text, r.Title)
		}
	}
}

// queueJobs queues n call analyses of agent, due in a day so that the server's runner
// leaves them be, and a url fetch the kind filter leaves out.
func queueJobs(t *testing.T, b *browser, svc *service.Services, agent string, n int) {
	t.Helper()
	later := time.Now().Add(24 * time.Hour)
	err := b.env.DB.Update(context.Background(), func(tx service.Tx) error {
		kinds := append([]string{service.JobKindFetchURL}, slices.Repeat([]string{service.JobKindAnalyzeCall}, n)...)
		for _, kind := range kinds {
			if _, err := svc.Jobs.Enqueue(tx, data.JobEnqueue{WorkspaceID: b.env.Owner.WorkspaceID, AgentID: agent, Kind: kind,
				Payload: []byte(`{}`), RunAt: later}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listRows names the rows of the page's first table: each by its first link, else by
// its event id (the audit log's rows).
func (b *browser) listRows() []string {
	b.t.Helper()
	var rows []string
	b.eval("rows", `Array.from(document.querySelectorAll("main table tbody tr"), tr => tr.querySelector("a")?.getAttribute("href") ?? tr.dataset.event)`, &rows)
	return rows
}

// walkPages opens path with the filters, takes its first page (20 rows), follows
// "Older <what>" to a page of other rows (older of them when it is not -1), reloads it,
// follows "Newer <what>" back to the first page's rows, and goes back to the older page
// with the browser's button. Every page's URL keeps the filters.
func (b *browser) walkPages(t *testing.T, path, what string, filters url.Values, older int) {
	t.Helper()
	page := path
	if len(filters) > 0 {
		page += "?" + filters.Encode()
	}
	keeps := func(where string) {
		t.Helper()
		var search string
		b.eval("the URL's query", `location.search`, &search)
		got, _ := url.ParseQuery(strings.TrimPrefix(search, "?"))
		for k := range filters {
			if got.Get(k) != filters.Get(k) {
				t.Errorf("%s %s: the URL's %s is %q, want %q (%s)", path, where, k, got.Get(k), filters.Get(k), search)
			}
		}
	}
	b.open(page)
	first := b.listRows()
	if len(first) != 20 {
		t.Fatalf("%s: the first page has %d rows, want 20: %v", page, len(first), first)
	}
	b.followText("Older " + what)
	keeps("older")
	rest := b.listRows()
	if len(rest) == 0 || (older >= 0 && len(rest) != older) || slices.ContainsFunc(rest, func(r string) bool { return slices.Contains(first, r) }) {
		t.Fatalf("%s: the older page: %v, want %d rows none of the first page's %v", page, rest, older, first)
	}
	b.run("reload", chromedp.Reload(), chromedp.WaitReady("#main", chromedp.ByQuery))
	if got := b.listRows(); !slices.Equal(got, rest) {
		t.Errorf("%s: the older page after a reload: %v, want %v", page, got, rest)
	}
	b.followText("Newer " + what)
	keeps("newer")
	if got := b.listRows(); !slices.Equal(got, first) {
		t.Errorf("%s: the newer page: %v, want the first page's %v", page, got, first)
	}
	// The browser may restore the page from its back-forward cache, without a load.
	b.run("the browser's back button", chromedp.Evaluate(`setTimeout(() => history.back(), 0), true`, nil))
	b.waitFor("the older page again", fmt.Sprintf(`document.readyState === "complete" && document.querySelectorAll("main table tbody tr").length === %d`, len(rest)))
	if got := b.listRows(); !slices.Equal(got, rest) {
		t.Errorf("%s: back: %v, want the older page's %v", page, got, rest)
	}
	keeps("after back")
}
