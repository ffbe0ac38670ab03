package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// A replay under an Idempotency-Key makes the record-level checks its first request
// made: a member whose agent_ids no longer hold the agent gets 404 on the retry of a
// conversation's start and of a call's registration, not the answer kept under the key.
func TestReplayRechecksTheAgent(t *testing.T) {
	e := newConvEnv(t, nil)
	ws := e.Owner.WorkspaceID
	agent := e.createAgent(t, map[string]any{"name": "Front desk"})
	other := e.createAgent(t, map[string]any{"name": "Other"})
	dev := e.Member("dev@example.com", ws, data.RoleDeveloper, nil, []string{agent})
	for _, c := range []struct {
		name, path string
		body       map[string]any
	}{
		{"a conversation's start", "/api/v1/agents/" + agent + "/conversations", map[string]any{"version": "draft"}},
		{"a call's registration", "/api/v1/calls", map[string]any{"agent_id": agent, "direction": "web", "status": "ended",
			"transcript": []any{map[string]any{"role": "user", "content": "the private words"}}}},
	} {
		key := "k-" + c.name
		first := e.Do("POST", c.path, dev.Token, c.body, "Idempotency-Key", key)
		testkit.Expect(t, first, 201)
		again := e.Do("POST", c.path, dev.Token, c.body, "Idempotency-Key", key)
		testkit.Expect(t, again, 201)
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: the retry while allowed was not replayed: %v", c.name, again.Header)
		}
		testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, e.tok, map[string]any{"agent_ids": []string{other}}), 200)
		r := e.Do("POST", c.path, dev.Token, c.body, "Idempotency-Key", key)
		testkit.Expect(t, r, 404)
		if r.Header.Get("Idempotent-Replayed") != "" || strings.Contains(string(r.Body), first.Data()["id"].(string)) {
			t.Errorf("%s: a member no longer allowed the agent got the kept answer: %s", c.name, r.Body)
		}
		testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+dev.ID, e.tok, map[string]any{"agent_ids": []string{agent}}), 200)
	}
}

// The analysis routes' replays check the call and the agent again the same way.
func TestAnalysisReplayRechecksTheAgent(t *testing.T) {
	e := newAnalysisEnv(t)
	ws := e.Owner.WorkspaceID
	other := e.createAgent(e.Owner.Token, map[string]any{"name": "Other"})["id"].(string)
	u := e.newUser("dev@example.com", false)
	expect(t, e.do("POST", "/api/v1/workspaces/"+ws+"/users", e.Owner.Token, map[string]any{"id": u.ID, "role": data.RoleDeveloper, "agent_ids": []string{e.agent}}), 201)
	devToken := e.tokenIn(u, ws)
	call := e.do("POST", "/api/v1/calls", e.Owner.Token, e.callBody(map[string]any{"outcome": "booked"}))
	expect(t, call, 201)
	now := time.Now().UTC()
	rangeBody := map[string]any{"from": now.Add(-time.Hour).Format(time.RFC3339), "to": now.Add(time.Hour).Format(time.RFC3339)}
	for _, c := range []struct {
		name, path string
		body       any
	}{
		{"a call's analysis", "/api/v1/calls/" + call.Data()["id"].(string) + "/analyze", nil},
		{"a backfill", "/api/v1/agents/" + e.agent + "/analysis/backfill", rangeBody},
	} {
		key := "k-" + c.name
		expect(t, e.do("POST", c.path, devToken, c.body, "Idempotency-Key", key), 202)
		if r := e.do("POST", c.path, devToken, c.body, "Idempotency-Key", key); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: the retry while allowed was not replayed: %d %v", c.name, r.Status, r.Header)
		}
		expect(t, e.do("PUT", "/api/v1/workspaces/"+ws+"/users/"+u.ID, e.Owner.Token, map[string]any{"agent_ids": []string{other}}), 200)
		r := e.do("POST", c.path, devToken, c.body, "Idempotency-Key", key)
		expect(t, r, 404)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: a member no longer allowed the agent got the kept answer: %s", c.name, r.Body)
		}
		expect(t, e.do("PUT", "/api/v1/workspaces/"+ws+"/users/"+u.ID, e.Owner.Token, map[string]any{"agent_ids": []string{e.agent}}), 200)
	}
}

// A campaign's create, in JSON and as an upload, re-checks its agent on a replay too.
func TestCampaignReplayRechecksTheAgent(t *testing.T) {
	e := newCampaignEnv(t, time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC))
	other := e.Do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Other"})
	testkit.Expect(t, other, 201)
	dev := e.Member("dev@example.com", e.ws, data.RoleDeveloper, nil, []string{e.agent})
	upload, ct := multipartBody(t, part{name: "campaign", content: []byte(e.settingsJSON())},
		part{name: "file", filename: "list.csv", content: []byte("phone_number\n+14155550101\n")})
	for _, c := range []struct {
		name    string
		body    any
		headers []string
	}{
		{"in JSON", e.campaignBody([]string{"+14155550101"}, nil), nil},
		{"as an upload", upload, []string{"Content-Type", ct}},
	} {
		post := func() *testkit.Response {
			return e.Do("POST", "/api/v1/campaigns", dev.Token, c.body, append([]string{"Idempotency-Key", "k-" + c.name}, c.headers...)...)
		}
		testkit.Expect(t, post(), 201)
		if r := post(); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: the retry while allowed: %d %v", c.name, r.Status, r.Header)
		}
		testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.ws+"/users/"+dev.ID, e.Owner.Token, map[string]any{"agent_ids": []string{other.Data()["id"].(string)}}), 200)
		r := post()
		testkit.Expect(t, r, 404)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: a member no longer allowed the agent got the kept answer: %s", c.name, r.Body)
		}
		testkit.Expect(t, e.Do("PUT", "/api/v1/workspaces/"+e.ws+"/users/"+dev.ID, e.Owner.Token, map[string]any{"agent_ids": []string{e.agent}}), 200)
	}
}
