package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestRecipientsAndRunsFilters: the campaign page's recipients table filters on a state
// (the select keeps it, the pages carry it), a state with none says so, and a
// hand-edited state is told beside the form; the Tests tab's runs filter on a status.
func TestRecipientsAndRunsFilters(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	agent := b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": "Reminder desk"})["id"].(string)
	b.mustAPI(204, "POST", "/api/v1/agents/"+agent+"/publish", nil)
	number := b.mustAPI(201, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550192", "provider": "sip"})["id"].(string)
	id := b.mustAPI(201, "POST", "/api/v1/campaigns", map[string]any{"name": "May reminders", "agent_id": agent, "number_id": number,
		"window":         map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"},
		"max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550101"}, map[string]any{"phone_number": "+14155550102"},
			map[string]any{"phone_number": "+14155550103"}}})["id"].(string)
	task := b.mustAPI(200, "POST", "/api/v1/dial-tasks/claim", map[string]any{"max": 1})["tasks"].([]any)[0].(map[string]any)
	b.mustAPI(200, "PUT", "/api/v1/calls/"+task["call"].(map[string]any)["id"].(string), map[string]any{"status": "ended", "disconnection_reason": "user_hangup"})
	answered := task["to_number"].(string)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/campaigns/" + id)
	rows := func() []string {
		var out []string
		b.eval("recipient rows", `[...document.querySelectorAll('#recipients ~ .table-wrap tbody tr td:first-child')].map(td => td.textContent.trim())`, &out)
		return out
	}
	if got := rows(); len(got) != 3 {
		t.Fatalf("unfiltered: %v, want 3 recipients", got)
	}
	b.setSelect("#r-state", "completed")
	b.submit("#r-state")
	if got := rows(); len(got) != 1 || got[0] != answered {
		t.Errorf("completed: %v, want %s", got, answered)
	}
	var kept string
	b.eval("the select", `document.querySelector('#r-state').value`, &kept)
	if kept != "completed" {
		t.Errorf("the select after filtering shows %q", kept)
	}
	b.setSelect("#r-state", "pending")
	b.submit("#r-state")
	if got := rows(); len(got) != 2 || slices.Contains(got, answered) {
		t.Errorf("pending: %v, want the two not called", got)
	}
	b.setSelect("#r-state", "exhausted")
	b.submit("#r-state")
	b.waitText("No recipient is in the state Exhausted.")
	b.open("/campaigns/" + id + "?state=failed")
	if msg := b.text(".alert"); !strings.Contains(msg, "must be one of: pending, in_progress") {
		t.Errorf("a hand-edited state: %q", msg)
	}
	b.audit("campaign-filtered")

	// The Tests tab: no run yet, so a filter on a status shows none.
	b.open("/agents/" + agent + "/tests?runs_status=failed")
	b.run("the runs filter", chromedp.WaitVisible("#runs-status", chromedp.ByQuery))
	var status string
	b.eval("the runs select", `document.querySelector('#runs-status').value`, &status)
	if status != "failed" {
		t.Errorf("the runs select shows %q, want failed", status)
	}
	b.waitText("No run is Failed on this page.")
	b.open("/agents/" + agent + "/tests?runs_status=bogus")
	if msg := b.text(".alert"); !strings.Contains(msg, "must be one of: queued, running, passed, failed, error") {
		t.Errorf("a hand-edited status: %q", msg)
	}
}
