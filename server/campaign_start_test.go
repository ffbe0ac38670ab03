package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A campaign with a start_at ahead is scheduled and leases nothing until then; the first
// claim after it starts it (campaign.started); max_concurrent bounds its calls in
// progress; its last call completes it (campaign.completed). Each move is an event.
func TestCampaignStartAtAndConcurrency(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101", "+14155550102", "+14155550103"}, map[string]any{
		"max_concurrent": 2, "start_at": "2026-03-02T12:00:00Z"}))
	if c := e.campaign(id); c["status"] != "scheduled" || c["started_at"] != nil {
		t.Fatalf("before start_at: %v", c["status"])
	}
	if got := e.claim(10); len(got) != 0 {
		t.Fatalf("%d tasks before start_at", len(got))
	}
	e.set(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
	first := e.claim(10)
	if len(first) != 2 {
		t.Fatalf("claimed %d, want max_concurrent 2", len(first))
	}
	if c := e.campaign(id); c["status"] != "running" {
		t.Fatalf("after start_at: %v", c["status"])
	}
	if more := e.claim(10); len(more) != 0 {
		t.Fatalf("claimed %d more with 2 calls in progress", len(more))
	}
	e.end(first[0], "ended", "user_hangup")
	third := e.claim(10)
	if len(third) != 1 {
		t.Fatalf("after one call ended: %d tasks, want 1", len(third))
	}
	e.end(first[1], "ended", "user_hangup")
	e.end(third[0], "ended", "user_hangup")
	if c := e.campaign(id); c["status"] != "completed" {
		t.Fatalf("after the last call: %v", c["status"])
	}
	for _, typ := range []string{"campaign.created", "campaign.started", "campaign.completed"} {
		r := e.Do("GET", "/api/v1/audit-log?type="+typ, e.Owner.Token, nil)
		testkit.Expect(t, r, 200)
		if n := len(r.List()); n != 1 {
			t.Errorf("%s: %d events, want 1", typ, n)
		}
	}
}
