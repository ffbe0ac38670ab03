package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/service"
)

// TestCampaignPage: a CSV with a bad line is refused naming the line; a good one starts a
// campaign whose page shows its progress as a bar and counts, which follow the calls as
// they end, then pause and cancel (confirmed); the finished campaign, and only it, has a
// Delete, which confirms, deletes it with its recipients and leads back to the list, its
// call kept.
func TestCampaignPage(t *testing.T) {
	b := newBrowser(t)
	e := b.env
	a := e.Do(nil, "POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Reminder desk",
		"prompt_config": map[string]any{"prompt": "Remind {{customer_name}}."}})
	if a.Status != 201 {
		t.Fatalf("agent: %d %s", a.Status, a.Body)
	}
	agent := a.Data()["id"].(string)
	if r := e.Do(nil, "POST", "/api/v1/agents/"+agent+"/publish", e.Owner.Token, nil); r.Status != 204 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	n := e.Do(nil, "POST", "/api/v1/numbers", e.Owner.Token, map[string]any{"phone_number": "+14155550190", "provider": "sip"})
	if n.Status != 201 {
		t.Fatalf("number: %d %s", n.Status, n.Body)
	}
	dir := t.TempDir()
	bad, good := filepath.Join(dir, "bad.csv"), filepath.Join(dir, "good.csv")
	os.WriteFile(bad, []byte("phone_number,customer_name\n+14155550101,Ada\nnot a number,Bo\n"), 0o600)
	os.WriteFile(good, []byte("phone_number,customer_name\n+14155550101,Ada\n+14155550102,Bo\n+14155550103,Cy\n"), 0o600)

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/campaigns")
	fill := func(csv string) {
		b.clickText("Start a campaign")
		b.run("settings", chromedp.WaitVisible("#c-name", chromedp.ByQuery), chromedp.SetValue("#c-name", "March reminders", chromedp.ByQuery),
			chromedp.SetValue("#c-tz", "UTC", chromedp.ByQuery), chromedp.SetValue("#c-start", "00:00", chromedp.ByQuery),
			chromedp.SetValue("#c-end", "23:59", chromedp.ByQuery))
		b.run("every day", chromedp.Evaluate(`document.querySelectorAll('#c-days input').forEach(i => i.checked = true), true`, nil))
		b.setSelect("#c-agent", agent)
		b.setSelect("#c-number", n.Data()["id"].(string))
		b.run("file", chromedp.SetUploadFiles("#c-file", []string{csv}, chromedp.ByQuery))
		b.submit("#c-file")
	}
	fill(bad)
	b.waitText("Line 3")
	if msg := b.text(".alert"); !strings.Contains(msg, "not a number") {
		t.Errorf("the refusal does not name the row: %q", msg)
	}
	if got := b.listCount("/api/v1/campaigns", "", ""); got != 0 {
		t.Fatalf("a refused upload stored %d campaigns", got)
	}
	fill(good)
	b.waitText("created with 3 recipients")
	b.run("progress", chromedp.WaitVisible("#campaign-bar", chromedp.ByQuery))
	if s := b.text("#campaign-done"); !strings.Contains(s, "0 of 3 done") {
		t.Errorf("before any call: %q", s)
	}
	b.audit("campaign")

	// A runtime dials one recipient; its call ends; the page follows without a reload.
	claim := b.mustAPI(200, "POST", "/api/v1/dial-tasks/claim", map[string]any{"max": 1})
	task := claim["tasks"].([]any)[0].(map[string]any)
	call := task["call"].(map[string]any)["id"].(string)
	b.mustAPI(200, "PUT", "/api/v1/calls/"+call, map[string]any{"status": "ended", "disconnection_reason": "user_hangup"})
	b.run("the bar follows", chromedp.WaitVisible(`//p[@id="campaign-done"][contains(., "1 of 3 done")]`, chromedp.BySearch))
	if s := b.text("#campaign-counts"); !strings.Contains(s, "Completed: Answered") {
		t.Errorf("counts: %q", s)
	}

	if n := b.count("#campaign-delete"); n != 0 {
		t.Errorf("a running campaign offers %d Delete links", n)
	}
	b.followText("Pause")
	b.waitText("Campaign paused.")
	if s := b.text("#campaign-status"); s != "Paused" {
		t.Errorf("status after pause: %q", s)
	}
	b.followText("Cancel campaign")
	b.waitText("2 recipients waiting to be called are never called.")
	b.followText("Cancel campaign")
	b.waitText("Campaign canceled.")
	if s := b.text("#campaign-counts"); !strings.Contains(s, "Canceled") {
		t.Errorf("counts after cancel: %q", s)
	}

	b.followText("Delete campaign")
	b.waitText("The campaign and its 3 recipients, with their numbers, variables and attempts.")
	b.waitText("The calls it made, in the call history.")
	b.followText("Delete campaign")
	b.waitText("Campaign deleted.")
	if got := b.text("h1"); got != "Campaigns" {
		t.Errorf("after the delete the page is %q, want the list", got)
	}
	if got := b.listCount("/api/v1/campaigns", "", ""); got != 0 {
		t.Errorf("%d campaigns after the delete", got)
	}
	b.mustAPI(200, "GET", "/api/v1/calls/"+call, nil)
}

// TestCampaignPausedByItselfSaysWhy: a campaign that paused itself (the month's call
// minutes used up) shows why on its page and what fixes it; a resume while the minutes
// are still used up is refused with the reason; once the limit is raised, Resume runs it
// again and the note goes.
func TestCampaignPausedByItselfSaysWhy(t *testing.T) {
	var svc *service.Services
	b := newBrowserWith(t, func(s *service.Services) { svc = s })
	e := b.env
	limit := func(minutes int64) {
		if _, err := svc.Subscriptions.SetSubscription(context.Background(), e.Owner.WorkspaceID,
			data.SubscriptionSet{Limits: map[string]int64{data.LimitCallMinutes: minutes}}); err != nil {
			t.Fatal(err)
		}
	}
	agent := b.mustAPI(201, "POST", "/api/v1/agents", map[string]any{"name": "Reminder desk"})["id"].(string)
	b.api("POST", "/api/v1/agents/"+agent+"/publish", nil)
	number := b.mustAPI(201, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550191", "provider": "sip"})["id"].(string)
	id := b.mustAPI(201, "POST", "/api/v1/campaigns", map[string]any{"name": "April reminders", "agent_id": agent, "number_id": number,
		"window":         map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, "start": "00:00", "end": "23:59"},
		"max_concurrent": 1, "recipients": []any{map[string]any{"phone_number": "+14155550101"}}})["id"].(string)
	limit(0)
	b.mustAPI(200, "POST", "/api/v1/dial-tasks/claim", map[string]any{"max": 1})

	b.signIn(e.Owner.Email, e.Owner.Password, "")
	b.open("/campaigns/" + id)
	if s := b.text("#campaign-status"); s != "Paused" {
		t.Errorf("status: %q, want Paused", s)
	}
	if s := b.text("#campaign-pause-reason"); !strings.Contains(s, "Call minutes used up") || !strings.Contains(s, "raise the limit") {
		t.Errorf("the pause's note: %q; want the reason and its fix", s)
	}
	b.audit("campaign-self-paused")
	b.followText("Resume")
	b.waitText("cannot be resumed yet")
	limit(100)
	b.open("/campaigns/" + id)
	b.followText("Resume")
	b.waitText("Campaign resumed.")
	var notes int
	b.eval("no note", `document.querySelectorAll("#campaign-pause-reason").length`, &notes)
	if s := b.text("#campaign-status"); s != "Running" || notes != 0 {
		t.Errorf("after the resume: %q with %d pause notes; want Running and none", s, notes)
	}
}
