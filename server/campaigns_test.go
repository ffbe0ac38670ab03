package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A campaign's recipients are each dialed once a task; each call's end decides: answered
// completes, a retried outcome comes back after the backoff until max_attempts, then the
// recipient is exhausted; an outcome not retried completes with it. The campaign
// completes when no recipient is left.
func TestCampaignRetriesByOutcome(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	phones := []string{"+14155550101", "+14155550102", "+14155550103", "+14155550104", "+14155550105", "+14155550106"}
	id := e.create(e.campaignBody(phones, map[string]any{"retry": map[string]any{
		"on": []string{"no_answer", "busy", "voicemail", "failed"}, "max_attempts": 2, "backoff_minutes": 30}}))
	if c := e.campaign(id); c["status"] != "running" {
		t.Fatalf("a campaign with no start_at: status %v, want running", c["status"])
	}
	tasks := toNumbers(e.claim(10))
	if len(tasks) != 6 {
		t.Fatalf("claimed %d tasks, want 6", len(tasks))
	}
	if again := e.claim(10); len(again) != 0 {
		t.Fatalf("a second claim leased %d tasks already leased", len(again))
	}
	outcomes := []struct{ status, reason, outcome string }{
		{"ended", "user_hangup", "answered"},
		{"failed", "no_answer", "no_answer"},
		{"failed", "busy", "busy"},
		{"ended", "voicemail", "voicemail"},
		{"failed", "error_llm", "failed"},
		{"ended", "machine_detected", "voicemail"},
	}
	for i, o := range outcomes {
		e.end(tasks[phones[i]], o.status, o.reason)
	}
	c := e.counts(id)
	if c["pending"] != float64(5) || c["completed"].(map[string]any)["answered"] != float64(1) {
		t.Fatalf("counts after the first attempts: %v, want 5 pending and 1 answered", c)
	}
	e.advance(29 * time.Minute)
	if early := e.claim(10); len(early) != 0 {
		t.Fatalf("%d tasks leased before the backoff", len(early))
	}
	e.advance(time.Minute)
	retries := toNumbers(e.claim(10))
	if len(retries) != 5 || retries[phones[0]] != nil {
		t.Fatalf("retries: %d tasks (answered one among them: %v), want the 5 not answered", len(retries), retries[phones[0]] != nil)
	}
	for _, p := range phones[1:] {
		if retries[p]["attempt"] != float64(2) {
			t.Errorf("%s: attempt %v, want 2", p, retries[p]["attempt"])
		}
		e.end(retries[p], "failed", "no_answer")
	}
	c = e.counts(id)
	if c["exhausted"] != float64(5) || c["pending"] != float64(0) || c["in_progress"] != float64(0) {
		t.Fatalf("counts after the second attempts: %v, want 5 exhausted", c)
	}
	if got := e.campaign(id); got["status"] != "completed" || got["finished_at"] == nil {
		t.Fatalf("the campaign after its last attempt: %v, want completed", got["status"])
	}
	rs := e.recipients(id)
	first := rs[phones[2]]["attempts"].([]any)
	if len(first) != 2 || first[0].(map[string]any)["outcome"] != "busy" || first[0].(map[string]any)["call_id"] == nil {
		t.Fatalf("the busy recipient's attempts: %v", first)
	}
	if rs[phones[0]]["state"] != "completed" || rs[phones[0]]["outcome"] != "answered" {
		t.Fatalf("the answered recipient: %v", rs[phones[0]])
	}
}

// Outcomes not in retry.on complete the recipient at once.
func TestCampaignOutcomeNotRetried(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101"}, map[string]any{"retry": map[string]any{
		"on": []string{"busy"}, "max_attempts": 3, "backoff_minutes": 1}}))
	task := e.claim(1)
	e.end(task[0], "failed", "no_answer")
	c := e.counts(id)
	if c["completed"].(map[string]any)["no_answer"] != float64(1) {
		t.Fatalf("counts: %v, want one completed no_answer", c)
	}
	testkit.Expect(t, e.Do("GET", "/api/v1/campaigns/"+id, e.Owner.Token, nil), 200)
}

// TestCampaignCompletedCountsAnObject: before any recipient completes, counts.completed is
// {} (no outcome yet), not null, in every answer that shows a campaign: a client reads
// counts.completed[outcome] without a null check, as docs/campaigns.md shows it.
func TestCampaignCompletedCountsAnObject(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := e.Do("POST", "/api/v1/campaigns", e.Owner.Token, e.campaignBody([]string{"+14155550101"}, nil))
	testkit.Expect(t, r, 201)
	id := r.Data()["id"].(string)
	list := e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil)
	testkit.Expect(t, list, 200)
	var listed struct{ Data []map[string]any }
	if err := json.Unmarshal(list.Body, &listed); err != nil || len(listed.Data) != 1 {
		t.Fatalf("the list: %v %s", err, list.Body)
	}
	for where, c := range map[string]map[string]any{"create": r.Data(), "show": e.campaign(id), "list": listed.Data[0]} {
		counts, _ := c["counts"].(map[string]any)
		if done, ok := counts["completed"].(map[string]any); !ok || len(done) != 0 {
			t.Errorf("%s: counts.completed %#v, want {}", where, counts["completed"])
		}
	}
}
