package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestCampaignPage: a CSV with a bad line is refused naming the line; a good one starts a
// campaign whose page shows its progress as a bar and counts, which follow the calls as
// they end, then pause and cancel (confirmed).
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
}
