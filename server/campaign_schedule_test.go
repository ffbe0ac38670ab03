package server_test

import (
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Windows are judged on each recipient's own clock (default: the campaign's time zone),
// and across a daylight-saving change 09:00 stays 09:00: New York's window opens at
// 14:00 UTC before 8 March 2026 and at 13:00 UTC after it.
func TestCampaignWindowsAcrossTimeZonesAndDST(t *testing.T) {
	fri := time.Date(2026, 3, 6, 13, 59, 0, 0, time.UTC) // 08:59 in New York, 14:59 in Paris, 22:59 in Tokyo
	e := newCampaignEnv(t, fri)
	ny, paris, tokyo := "+14155550101", "+14155550102", "+14155550103"
	body := e.campaignBody(nil, map[string]any{
		"timezone": "America/New_York",
		"window":   map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "09:00", "end": "17:00"},
		"retry":    map[string]any{"on": []string{"no_answer"}, "max_attempts": 3, "backoff_minutes": 60},
		"recipients": []any{map[string]any{"phone_number": ny}, map[string]any{"phone_number": paris, "timezone": "Europe/Paris"},
			map[string]any{"phone_number": tokyo, "timezone": "Asia/Tokyo"}},
	})
	id := e.create(body)
	rs := e.recipients(id)
	for phone, want := range map[string]string{ny: "2026-03-06T14:00:00.000Z", paris: "2026-03-06T13:59:00.000Z", tokyo: "2026-03-09T00:00:00.000Z"} {
		if got := rs[phone]["next_at"]; got != want {
			t.Errorf("%s next_at %v, want %s", phone, got, want)
		}
	}
	first := toNumbers(e.claim(10))
	if len(first) != 1 || first[paris] == nil {
		t.Fatalf("at 13:59 UTC on a Friday: tasks for %v, want Paris only", keys(first))
	}
	e.set(time.Date(2026, 3, 6, 14, 0, 0, 0, time.UTC))
	second := toNumbers(e.claim(10))
	if len(second) != 1 || second[ny] == nil {
		t.Fatalf("at 09:00 in New York: tasks for %v, want New York", keys(second))
	}
	// No answer at 16:30 New York time: the backoff ends after the window closes, so the
	// retry waits for Monday's opening, after the change to daylight-saving time.
	e.set(time.Date(2026, 3, 6, 21, 30, 0, 0, time.UTC))
	e.end(second[ny], "failed", "no_answer")
	if got := e.recipients(id)[ny]["next_at"]; got != "2026-03-09T13:00:00.000Z" {
		t.Fatalf("New York's retry next_at %v, want Monday 09:00 EDT (13:00 UTC)", got)
	}
	e.set(time.Date(2026, 3, 9, 12, 59, 0, 0, time.UTC))
	if early := toNumbers(e.claim(10)); early[ny] != nil {
		t.Fatalf("New York dialed at 08:59 EDT")
	}
	e.set(time.Date(2026, 3, 9, 13, 0, 0, 0, time.UTC))
	if got := toNumbers(e.claim(10)); got[ny] == nil {
		t.Fatalf("New York not dialed at 09:00 EDT: %v", keys(got))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A number on the suppression list is skipped at import (counted), and a number added
// after the campaign started is never dialed: neither while pending nor as a retry.
func TestCampaignSuppressionAddedMidCampaign(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	listed, a, b, c := "+14155550100", "+14155550101", "+14155550102", "+14155550103"
	testkit.Expect(t, e.Do("POST", "/api/v1/suppressions", e.Owner.Token, map[string]any{"phone_number": listed}), 201)
	id := e.create(e.campaignBody([]string{listed, a, b, c, "(415) 555-0101"}, map[string]any{
		"retry": map[string]any{"on": []string{"no_answer"}, "max_attempts": 3, "backoff_minutes": 5}}))
	got := e.campaign(id)
	imp, counts := got["import"].(map[string]any), got["counts"].(map[string]any)
	if imp["rows"] != float64(5) || imp["duplicates"] != float64(1) || imp["suppressed"] != float64(1) ||
		counts["total"] != float64(3) || counts["suppressed"] != float64(1) {
		t.Fatalf("import %v counts %v: want 5 rows, (415) 555-0101 merged into +14155550101, the listed number skipped", imp, counts)
	}
	first := e.claim(1)
	if len(first) != 1 {
		t.Fatalf("claimed %d, want 1", len(first))
	}
	inProgress := first[0]["to_number"].(string)
	for _, p := range []string{a, b, c} { // every number joins the list now
		e.Do("POST", "/api/v1/suppressions", e.Owner.Token, map[string]any{"phone_number": p})
	}
	if more := e.claim(10); len(more) != 0 {
		t.Fatalf("dialed %v after they joined the suppression list", toNumbers(more))
	}
	e.end(first[0], "failed", "no_answer") // retried, but suppressed meanwhile
	e.advance(10 * time.Minute)
	if more := e.claim(10); len(more) != 0 {
		t.Fatalf("the retry of a suppressed number was dialed")
	}
	rs := e.recipients(id)
	for _, p := range []string{a, b, c} {
		if rs[p]["state"] != "suppressed" {
			t.Errorf("%s state %v, want suppressed", p, rs[p]["state"])
		}
	}
	if att := rs[inProgress]["attempts"].([]any); len(att) != 1 {
		t.Errorf("the suppressed number in progress kept %d attempts, want its one", len(att))
	}
	if got := e.campaign(id); got["status"] != "completed" || got["counts"].(map[string]any)["suppressed"] != float64(4) {
		t.Fatalf("campaign %v counts %v, want completed with 4 suppressed", got["status"], got["counts"])
	}
}

// A paused campaign leases nothing; resumed, it does again; canceled, its pending
// recipients are canceled and a call in progress is recorded without a retry.
func TestCampaignPauseResumeCancel(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101", "+14155550102", "+14155550103"}, map[string]any{
		"retry": map[string]any{"on": []string{"no_answer"}, "max_attempts": 3, "backoff_minutes": 1}}))
	r := e.Do("POST", "/api/v1/campaigns/"+id+"/pause", e.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	if r.Data()["status"] != "paused" {
		t.Fatalf("paused: %v", r.Data()["status"])
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/pause", e.Owner.Token, nil), 409)
	if got := e.claim(10); len(got) != 0 {
		t.Fatalf("a paused campaign leased %d tasks", len(got))
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/resume", e.Owner.Token, nil), 200)
	tasks := e.claim(1)
	if len(tasks) != 1 {
		t.Fatalf("resumed: %d tasks, want 1", len(tasks))
	}
	r = e.Do("POST", "/api/v1/campaigns/"+id+"/cancel", e.Owner.Token, nil)
	testkit.Expect(t, r, 200)
	if c := r.Data()["counts"].(map[string]any); r.Data()["status"] != "canceled" || c["canceled"] != float64(2) || c["in_progress"] != float64(1) {
		t.Fatalf("canceled: %v %v", r.Data()["status"], c)
	}
	if got := e.claim(10); len(got) != 0 {
		t.Fatalf("a canceled campaign leased %d tasks", len(got))
	}
	e.end(tasks[0], "failed", "no_answer")
	e.advance(5 * time.Minute)
	if got := e.claim(10); len(got) != 0 {
		t.Fatalf("a canceled campaign retried")
	}
	c := e.counts(id)
	if c["in_progress"] != float64(0) || c["canceled"] != float64(3) {
		t.Fatalf("counts after the last call: %v, want 3 canceled", c)
	}
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/resume", e.Owner.Token, nil), 409)
}

// A lease that ends before its call is reported started gives the attempt back: the
// call fails (dial_lease_expired) and the next claim dials the same attempt again. A call
// reported ongoing keeps its task for the call's length.
func TestCampaignLeaseExpiry(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101", "+14155550102"}, nil))
	r := e.Do("POST", "/api/v1/dial-tasks/claim", e.runtime, map[string]any{"max": 2, "lease_seconds": 10})
	testkit.Expect(t, r, 200)
	tasks := r.Data()["tasks"].([]any)
	if len(tasks) != 2 {
		t.Fatalf("claimed %d", len(tasks))
	}
	started := tasks[1].(map[string]any)
	testkit.Expect(t, e.Do("PUT", "/api/v1/calls/"+started["call"].(map[string]any)["id"].(string), e.runtime, map[string]any{"status": "ongoing"}), 204)
	e.advance(11 * time.Second)
	again := e.claim(10)
	if len(again) != 1 || again[0]["to_number"] != tasks[0].(map[string]any)["to_number"] || again[0]["attempt"] != float64(1) {
		t.Fatalf("after the lease: %v, want the unstarted task again as attempt 1", again)
	}
	lost := tasks[0].(map[string]any)["call"].(map[string]any)["id"].(string)
	call := e.Do("GET", "/api/v1/calls/"+lost, e.Owner.Token, nil).Data()
	if call["status"] != "failed" || call["disconnection_reason"] != "dial_lease_expired" {
		t.Fatalf("the expired lease's call: %v %v", call["status"], call["disconnection_reason"])
	}
	att := e.recipients(id)[tasks[0].(map[string]any)["to_number"].(string)]["attempts"].([]any)
	if len(att) != 2 || att[0].(map[string]any)["outcome"] != "lease_expired" {
		t.Fatalf("attempts: %v", att)
	}
}
