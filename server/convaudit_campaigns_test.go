package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// Conventions §25: "POST /api/v1/dial-tasks/claim ... leases due tasks ... with the
// call-start answer of §23 for each"; §23: "429 concurrency_limit ... when the
// workspace's concurrent_calls (subscription) ... is reached". docs/campaigns.md: "the
// workspace's concurrent_calls ...: at a limit the claim stops leasing". The claim's
// calls count against the limit a call start meets, and the other way round.
func TestConvAuditClaimHoldsTheWorkspaceConcurrency(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	e.setLimits(map[string]int64{data.LimitConcurrentCalls: 3})
	answer(t, e.start(inbound("+15550001111", nil)))
	e.create(e.campaignBody([]string{"+14155550101", "+14155550102", "+14155550103", "+14155550104"}, nil))
	first := e.claim(10)
	if len(first) != 2 {
		t.Fatalf("claimed %d tasks beside one open call under concurrent_calls 3, want 2", len(first))
	}
	if r := e.start(inbound("+15550002222", nil)); r.Status != 429 || r.Code() != data.ECONCURRENCY {
		t.Fatalf("a call start beside the claim's calls: %d %s", r.Status, r.Body)
	}
	if more := e.claim(10); len(more) != 0 {
		t.Fatalf("claimed %d more at the workspace's limit", len(more))
	}
	e.end(first[0], "ended", "user_hangup")
	if next := e.claim(10); len(next) != 1 {
		t.Fatalf("after one call ended: %d tasks, want 1", len(next))
	}
}

// Conventions §23: "403 quota_exceeded when the month's call minutes are used up";
// docs/campaigns.md, of a claim: "the month's minutes ...: at a limit the claim stops
// leasing", and a claim "gives back the tasks whose lease ran out". With the minutes
// used up a claim leases nothing and is no error: it still gives back a lease that ran
// out (its call fails dial_lease_expired, its attempt waits), so the campaign's counts
// stay true. The campaign, which cannot dial until the limit is raised, pauses itself
// (pause_reason call_minutes_used_up, docs/campaigns.md); resumed once the limit is
// raised, the attempt is dialed again.
func TestConvAuditClaimAtTheMonthsMinutes(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101", "+14155550102"}, nil))
	r := e.Do("POST", "/api/v1/dial-tasks/claim", e.runtime, map[string]any{"max": 1, "lease_seconds": 10})
	testkit.Expect(t, r, 200)
	leased := r.Data()["tasks"].([]any)[0].(map[string]any)
	// Another call uses the month's two minutes; the leased call never starts.
	e.setLimits(map[string]int64{data.LimitCallMinutes: 2})
	testkit.Expect(t, e.Do("POST", "/api/v1/calls", e.runtime, map[string]any{"agent_id": e.agent, "direction": "web", "status": "ended",
		"started_at": "2026-03-02T09:00:00Z", "duration_ms": 120000}), 201)
	if r := e.start(inbound("+15550001111", nil)); r.Status != 403 || r.Code() != data.EQUOTA {
		t.Fatalf("a call start with the minutes used up: %d %s", r.Status, r.Body)
	}
	e.advance(11 * time.Second)
	if got := e.claim(10); len(got) != 0 {
		t.Fatalf("claimed %d tasks with the month's minutes used up", len(got))
	}
	call := e.Do("GET", "/api/v1/calls/"+leased["call"].(map[string]any)["id"].(string), e.Owner.Token, nil).Data()
	if call["status"] != "failed" || call["disconnection_reason"] != "dial_lease_expired" {
		t.Fatalf("the expired lease's call: %v %v", call["status"], call["disconnection_reason"])
	}
	if c := e.counts(id); c["in_progress"] != float64(0) || c["pending"] != float64(2) {
		t.Fatalf("counts with the lease given back: %v, want 2 pending, none in progress", c)
	}
	got := e.Do("GET", "/api/v1/campaigns/"+id, e.Owner.Token, nil).Data()
	if got["status"] != "paused" || got["pause_reason"] != data.PauseCallMinutesUsedUp {
		t.Fatalf("the campaign with the minutes used up: %v, pause_reason %v; want paused for %s", got["status"], got["pause_reason"], data.PauseCallMinutesUsedUp)
	}
	if r := e.Do("POST", "/api/v1/campaigns/"+id+"/resume", e.Owner.Token, nil); r.Status != 409 || !strings.Contains(string(r.Body), "call_minutes_per_month") {
		t.Fatalf("a resume with the minutes still used up: %d %s; want 409 saying why", r.Status, r.Body)
	}
	e.setLimits(map[string]int64{data.LimitCallMinutes: 100})
	testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/resume", e.Owner.Token, nil), 200)
	if got := toNumbers(e.claim(10)); len(got) != 2 || got[leased["to_number"].(string)]["attempt"] != float64(1) {
		t.Fatalf("after the limit was raised: %v, want both, the given-back one as attempt 1", got)
	}
}

// Conventions §25: "POST /api/v1/campaigns/{id}/pause|resume|cancel; ... events
// campaign.started|paused|completed" (docs/campaigns.md adds campaign.resumed and
// campaign.canceled, "each with the campaign as data"). Each move records its event
// once, with the campaign as it stands after the move; a move the status refuses (409)
// records nothing.
func TestConvAuditCampaignMovesAreEvents(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody([]string{"+14155550101", "+14155550102"}, nil))
	for _, m := range []struct{ verb, status string }{{"pause", "paused"}, {"pause", ""}, {"resume", "running"}, {"resume", ""},
		{"cancel", "canceled"}, {"cancel", ""}, {"pause", ""}, {"resume", ""}} {
		want := 200
		if m.status == "" {
			want = 409
		}
		testkit.Expect(t, e.Do("POST", "/api/v1/campaigns/"+id+"/"+m.verb, e.Owner.Token, nil), want)
	}
	for typ, status := range map[string]string{data.EventCampaignPaused: "paused", data.EventCampaignResumed: "running", data.EventCampaignCanceled: "canceled"} {
		r := e.Do("GET", "/api/v1/audit-log?type="+typ, e.Owner.Token, nil)
		testkit.Expect(t, r, 200)
		if l := r.List(); len(l) != 1 {
			t.Errorf("%s recorded %d times, want once", typ, len(l))
		} else if d := l[0].(map[string]any)["data"].(map[string]any); d["id"] != id || d["status"] != status {
			t.Errorf("%s data: id %v status %v, want %s %s", typ, d["id"], d["status"], id, status)
		}
	}
}

// Conventions §25: a claim leases each task "with the call-start answer of §23"; §23: "a
// caller (from_number, else the call id) always gets the same variant while the rollout
// stands" (for an outbound call the party is the number called: docs/runtime.md). A
// campaign's calls split across a standing rollout's variants, each call registered on
// its variant's version, and a recipient's retry runs the variant its first attempt ran.
func TestConvAuditClaimFollowsTheRollout(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	e.twoVersions()
	e.rollout(map[string]any{"variants": variants(50, 50)})
	phones := make([]string, 40)
	for i := range phones {
		phones[i] = fmt.Sprintf("+1415555%04d", 1000+i)
	}
	e.create(e.campaignBody(phones, map[string]any{"max_concurrent": 100,
		"retry": map[string]any{"on": []string{"busy"}, "max_attempts": 2, "backoff_minutes": 1}}))
	first, split := map[string]any{}, map[any]int{}
	for _, task := range e.claim(40) {
		v := task["variant"].(map[string]any)["version"]
		if task["call"].(map[string]any)["agent_version"] != v || task["agent"].(map[string]any)["version"] != v {
			t.Errorf("%s: variant %v, call on version %v, configuration of version %v", task["to_number"], v,
				task["call"].(map[string]any)["agent_version"], task["agent"].(map[string]any)["version"])
		}
		first[task["to_number"].(string)] = v
		split[v]++
		e.end(task, "failed", "busy")
	}
	if len(first) != 40 || split[1.0] == 0 || split[2.0] == 0 {
		t.Fatalf("40 recipients under a 50/50 rollout: %d tasks split %v", len(first), split)
	}
	e.advance(2 * time.Minute)
	retries := e.claim(40)
	for _, task := range retries {
		if v := task["variant"].(map[string]any)["version"]; v != first[task["to_number"].(string)] {
			t.Errorf("%s: retried on version %v, first attempt on %v", task["to_number"], v, first[task["to_number"].(string)])
		}
	}
	if len(retries) != 40 {
		t.Errorf("%d retries, want 40", len(retries))
	}
}

// Conventions §23, which a claim's tasks answer with (§25): "credentials in clear (this
// response only, never logged)". A claimed task's configuration holds the agent's key in
// clear, filled with the recipient's variables; the task's call, the campaign's
// recipients, the audit log (every event: what webhooks and the event stream carry) and
// the server's log do not hold it.
func TestConvAuditClaimShowsTheCredentialOnlyInItsAnswer(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	id := e.create(e.campaignBody(nil, map[string]any{"recipients": []any{
		map[string]any{"phone_number": "+14155550101", "variables": map[string]any{"customer_name": "Ada"}}}}))
	tasks := e.claim(1)
	if len(tasks) != 1 {
		t.Fatalf("claimed %d tasks", len(tasks))
	}
	llmCfg := group(tasks[0]["agent"].(map[string]any), "llm_config")
	if llmCfg["api_key"] != startKey || group(tasks[0]["agent"].(map[string]any), "prompt_config")["welcome_message"] != "Hello Ada!" {
		t.Fatalf("the task's configuration: api_key %v, welcome %v", llmCfg["api_key"], group(tasks[0]["agent"].(map[string]any), "prompt_config")["welcome_message"])
	}
	call := e.Do("GET", "/api/v1/calls/"+tasks[0]["call"].(map[string]any)["id"].(string), e.Owner.Token, nil)
	recipients := e.Do("GET", "/api/v1/campaigns/"+id+"/recipients", e.Owner.Token, nil)
	audit := e.Do("GET", "/api/v1/audit-log?per_page=100", e.Owner.Token, nil)
	for where, r := range map[string]*testkit.Response{"the call": call, "the recipients": recipients, "the audit log": audit} {
		if testkit.Expect(t, r, 200); strings.Contains(string(r.Body), startKey) {
			t.Errorf("%s holds the credential in clear", where)
		}
	}
	if strings.Contains(e.Logs.String(), startKey) {
		t.Error("the server's log holds the credential in clear")
	}
}

// Conventions §2: "Every failing field of the request is reported at once, never only the
// first"; §25: a campaign names its agent_id and number_id (the caller id). A campaign
// whose agent or number is not of the workspace (or whose agent is unpublished) and that
// breaks other rules too is told every fault in one 422, and nothing is stored.
func TestConvAuditCampaignReportsItsReferencesWithOtherFaults(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	r := e.Do("POST", "/api/v1/agents", e.Owner.Token, startAgentBody("Draft"))
	testkit.Expect(t, r, 201)
	draft := r.Data()["id"].(string)
	for _, c := range []struct {
		name   string
		change map[string]any
		fields []string
	}{
		{"an unknown agent and number", map[string]any{"max_concurrent": 0, "agent_id": "agt_01JD6ZZZZZZZZZZZZZZZZZZZZZ", "number_id": "num_01JD6ZZZZZZZZZZZZZZZZZZZZZ"},
			[]string{"max_concurrent", "agent_id", "number_id"}},
		{"an unpublished agent", map[string]any{"agent_id": draft, "window": map[string]any{"days": []string{"mon"}, "start": "10:00", "end": "09:00"},
			"recipients": []any{map[string]any{"phone_number": "12"}}}, []string{"agent_id", "window.end", "recipients.0.phone_number"}},
		{"a missing agent", map[string]any{"agent_id": nil, "name": ""}, []string{"agent_id", "name"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := e.campaignBody([]string{"+14155550101"}, c.change)
			if c.change["agent_id"] == nil {
				delete(body, "agent_id")
			}
			testkit.ExpectFields(t, e.Do("POST", "/api/v1/campaigns", e.Owner.Token, body), c.fields...)
		})
	}
	if n := len(e.Do("GET", "/api/v1/campaigns", e.Owner.Token, nil).List()); n != 0 {
		t.Fatalf("%d campaigns stored from refused requests", n)
	}
}
