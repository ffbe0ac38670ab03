package e2e

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/console/internal/testenv"
)

// seeded names what seed made, for tests to open.
type seeded struct {
	Agent, Draft, KB, TextSource, URLSource, Number, Call, Webhook, Member string
	KeyID                                                                  string
	Workspace                                                              string // a second workspace the owner owns
	// Tested is an agent on a scripted model with a test (Test) and a finished run (Run).
	Tested, Test, Run string
	Campaign, Job     string
	// MemberEmail and MemberPassword sign in as Member: a developer limited to Agent,
	// with the agents and call history modules.
	MemberEmail, MemberPassword string
}

// seed fills the owner's workspace through the API as a team would after a few days: two
// agents (one published with a tool and a knowledge base), a knowledge base with a text
// and a URL, a number, calls over three days, a webhook with a delivery, a scoped key, a
// member, a tested agent with a finished test run, a campaign with recipients, the jobs
// these leave, and a second workspace.
func seed(t *testing.T, b *browser) seeded {
	t.Helper()
	e := b.env
	tok := e.Owner.Token
	must := func(res *testenv.Response, status int, what string) map[string]any {
		t.Helper()
		if res.Status != status {
			t.Fatalf("seed %s: %d %s", what, res.Status, res.Body)
		}
		return res.Data()
	}
	var s seeded
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Orders ship within two working days. Returns are free for 30 days."))
	}))
	t.Cleanup(site.Close)
	kb := must(e.Do(nil, "POST", "/api/v1/knowledge-bases", tok, map[string]any{"name": "Store policies",
		"texts": []map[string]string{{"title": "Opening hours", "content": "We are open from nine to five, Monday to Friday."}},
		"urls":  []string{site.URL + "/shipping"}}), http.StatusCreated, "knowledge base")
	s.KB = kb["id"].(string)
	s.TextSource = kb["texts"].([]any)[0].(map[string]any)["id"].(string)
	s.URLSource = kb["urls"].([]any)[0].(map[string]any)["id"].(string)
	s.Agent = must(e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": "Front desk",
		"call_config": map[string]any{"max_call_duration_ms": 3_600_000},
		"llm_config": map[string]any{"knowledge_base_ids": []string{s.KB}, "tools": []any{map[string]any{
			"name": "end_call", "type": "end_call", "description": "End the call when the caller is done."}}},
		"tts_config": map[string]any{"provider": "elevenlabs", "model": "eleven_flash_v2_5", "voice_id": "21m00Tcm4TlvDq8ikWAM"},
	}), http.StatusCreated, "agent")["id"].(string)
	must(e.Do(nil, "POST", "/api/v1/agents/"+s.Agent+"/publish", tok, map[string]any{"description": "First version"}), http.StatusNoContent, "publish")
	must(e.Do(nil, "PUT", "/api/v1/agents/"+s.Agent, tok, map[string]any{"prompt_config": map[string]any{"prompt": "You answer for the front desk of a small shop. Keep answers short."}}), http.StatusOK, "edit")
	must(e.Do(nil, "POST", "/api/v1/agents/"+s.Agent+"/publish", tok, map[string]any{"description": "Shorter answers"}), http.StatusNoContent, "publish")
	s.Draft = must(e.Do(nil, "POST", "/api/v1/agents", tok, map[string]any{"name": "Night line"}), http.StatusCreated, "draft")["id"].(string)
	s.Number = must(e.Do(nil, "POST", "/api/v1/numbers", tok, map[string]any{"phone_number": "+14155550123", "nickname": "Main line",
		"provider": "twilio", "inbound_agent_id": s.Agent}), http.StatusCreated, "number")["id"].(string)
	now := time.Now().UTC().Truncate(time.Second)
	for i, c := range []struct {
		status, reason string
		ms             int64
		ago            time.Duration
	}{
		{"ended", "user_hangup", 210_000, 5 * time.Minute}, {"ended", "agent_hangup", 95_000, 3 * time.Hour},
		{"failed", "dial_failed", 0, 26 * time.Hour}, {"ended", "user_hangup", 330_000, 50 * time.Hour},
	} {
		body := map[string]any{"agent_id": s.Agent, "number_id": s.Number, "direction": "inbound", "from_number": "+14155550999",
			"to_number": "+14155550123", "status": c.status, "disconnection_reason": c.reason,
			"started_at": now.Add(-c.ago).Format(time.RFC3339), "ended_at": now.Add(-c.ago + time.Duration(c.ms)*time.Millisecond).Format(time.RFC3339),
			"transcript": []map[string]any{{"role": "agent", "content": "Hello, front desk speaking.", "start_ms": 0},
				{"role": "user", "content": "Do you ship to Canada?", "start_ms": 2500},
				{"role": "agent", "content": "We do: orders ship within two working days.", "start_ms": 5200}},
			"analysis": map[string]any{"topic": "shipping"}, "variables": map[string]any{"customer": "Dana"}}
		if c.ms > 0 {
			body["duration_ms"] = c.ms
		}
		id := must(e.Do(nil, "POST", "/api/v1/calls", tok, body), http.StatusCreated, "call")["id"].(string)
		if i == 0 {
			s.Call = id
		}
	}
	s.Webhook = must(e.Do(nil, "POST", "/api/v1/webhooks", tok, map[string]any{"url": "https://hooks.example.com/voiceapi",
		"description": "Analytics sink", "events": []string{"call.ended", "call.analyzed", "agent.published"}}), http.StatusCreated, "webhook")["id"].(string)
	key := e.Do(nil, "POST", "/api/v1/api-keys", tok, map[string]any{"name": "voice runtime", "scopes": []string{"calls:runtime"}})
	s.KeyID = str(must(key, http.StatusCreated, "key")["id"])
	grace := e.NewUser("grace@example.com", false)
	must(e.Do(nil, "POST", "/api/v1/workspaces/"+e.Owner.WorkspaceID+"/users", tok, map[string]any{"id": grace.ID, "role": "developer",
		"modules": []string{"agents", "call_history"}, "agent_ids": []string{s.Agent}}), http.StatusCreated, "member")
	s.Member, s.MemberEmail, s.MemberPassword = grace.ID, grace.Email, grace.Password
	s.Workspace = must(e.Do(nil, "POST", "/api/v1/workspaces", tok, map[string]any{"name": "Staging"}), http.StatusCreated, "workspace")["id"].(string)

	s.Tested = createTrattoria(t, b)
	must(e.Do(nil, "POST", "/api/v1/agents/"+s.Tested+"/publish", tok, map[string]any{"description": "Opening menu"}), http.StatusNoContent, "publish")
	s.Test = str(must(e.Do(nil, "POST", "/api/v1/agents/"+s.Tested+"/tests", tok, map[string]any{"name": "books a table", "required_for_publish": true,
		"user": map[string]any{"script": []string{"A table for two, please"}}, "criteria": []any{map[string]any{"type": "says", "pattern": "booked"},
			map[string]any{"type": "tool_called", "name": "book"}}}), http.StatusCreated, "test")["id"])
	s.Run = str(must(e.Do(nil, "POST", "/api/v1/agents/"+s.Tested+"/test-runs", tok, map[string]any{}), http.StatusAccepted, "test run")["id"])
	for deadline := time.Now().Add(time.Minute); ; {
		run := must(e.Do(nil, "GET", "/api/v1/agents/"+s.Tested+"/test-runs/"+s.Run, tok, nil), http.StatusOK, "test run")
		if st := str(run["status"]); st != "queued" && st != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed: the test run did not end: %v", run)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var recipients []any
	for i, name := range []string{"Ada", "Bo", "Cy", "Dee", "Eli"} {
		recipients = append(recipients, map[string]any{"phone_number": "+1415555020" + strconv.Itoa(i), "variables": map[string]any{"customer": name}})
	}
	s.Campaign = str(must(e.Do(nil, "POST", "/api/v1/campaigns", tok, map[string]any{"name": "Spring reminders", "agent_id": s.Agent,
		"number_id": s.Number, "recipients": recipients, "max_concurrent": 2,
		"window": map[string]any{"days": []string{"mon", "tue", "wed", "thu", "fri"}, "start": "09:00", "end": "18:00"},
		"retry":  map[string]any{"on": []string{"busy", "no_answer"}, "max_attempts": 2, "backoff_minutes": 30}}), http.StatusCreated, "campaign")["id"])
	jobs := e.Do(nil, "GET", "/api/v1/jobs", tok, nil)
	if list, _ := jobs.JSON()["data"].([]any); len(list) > 0 {
		s.Job = str(list[0].(map[string]any)["id"])
	} else {
		t.Fatalf("seed: no jobs: %d %s", jobs.Status, jobs.Body)
	}
	return s
}

// str reads a decoded JSON string or number (an API key's id) as text.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
