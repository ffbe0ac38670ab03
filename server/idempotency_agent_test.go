package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/testkit"
)

// narrowTo sets member's agent_ids in ws to agents, as the owner does.
func narrowTo(t *testing.T, s *testkit.Server, ws string, member *testkit.Account, agents ...string) {
	t.Helper()
	testkit.Expect(t, s.Do("PUT", "/api/v1/workspaces/"+ws+"/users/"+member.ID, s.Owner.Token, map[string]any{"agent_ids": agents}), 200)
}

// The retry of a call's start under its Idempotency-Key is replayed (the agent's
// configuration, its credential in clear) to a member who may still see the agent the
// call was routed to, whether the number's routing chose it or the body named it; a
// member whose agent_ids no longer hold it gets 404 and nothing of the answer.
func TestCallStartReplayRechecksTheAgent(t *testing.T) {
	e := newStartEnv(t)
	other := e.publishedAgent("Sales")
	dev := e.Member("dev@example.com", e.ws, data.RoleDeveloper, nil, []string{e.agent})
	for _, c := range []struct {
		name string
		body map[string]any
	}{
		{"through the number's routing", inbound("+15551230000", nil)},
		{"with the body's agent_id", map[string]any{"direction": "outbound", "to_number": "+15559990000", "agent_id": e.agent}},
	} {
		post := func() *testkit.Response {
			return e.Do("POST", "/api/v1/calls/start", dev.Token, c.body, "Idempotency-Key", "k-"+c.name)
		}
		call, _, _ := answer(t, post())
		again := post()
		if _, agent, _ := answer(t, again); again.Header.Get("Idempotent-Replayed") != "true" || group(agent, "llm_config")["api_key"] != startKey {
			t.Fatalf("%s: the retry while allowed: %v %s", c.name, again.Header, again.Body)
		}
		narrowTo(t, e.Server, e.ws, dev, other)
		r := post()
		testkit.Expect(t, r, 404)
		if r.Header.Get("Idempotent-Replayed") != "" || strings.Contains(string(r.Body), startKey) || strings.Contains(string(r.Body), call["id"].(string)) {
			t.Errorf("%s: a member no longer allowed the agent got the kept answer: %s", c.name, r.Body)
		}
		narrowTo(t, e.Server, e.ws, dev, e.agent)
		if r := post(); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("%s: the retry once allowed again: %d %v", c.name, r.Status, r.Header)
		}
	}
	if n := e.callCount(); n != 2 {
		t.Errorf("%d calls, want one per start", n)
	}
}

// The claim a call's start commits with its call carries the agent too: a retry after a
// crash that lost the answer is checked as a replay is (404 for a member narrowed since,
// not the call the claim keeps), and answered from the claim for one still allowed.
func TestCallStartClaimRechecksTheAgent(t *testing.T) {
	e := newStartEnv(t)
	other := e.publishedAgent("Sales")
	dev := e.Member("dev@example.com", e.ws, data.RoleDeveloper, nil, []string{e.agent})
	path, body := "/api/v1/calls/start", `{"direction":"inbound","to_number":"`+startNumber+`","from_number":"+15551230000"}`
	to, caller := startNumber, "+15551230000"
	crashedRequest(t, e.Server, dev.Token, "POST", path, body, func(ctx context.Context) error {
		_, err := e.Svc.CallStart.StartCall(ctx, data.CallStart{Direction: data.DirectionInbound, ToNumber: &to, FromNumber: &caller})
		return err
	})
	narrowTo(t, e.Server, e.ws, dev, other)
	r := e.Do("POST", path, dev.Token, body, "Idempotency-Key", "k-"+path)
	testkit.Expect(t, r, 404)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("a member no longer allowed the agent got the claim's answer: %s", r.Body)
	}
	narrowTo(t, e.Server, e.ws, dev, e.agent)
	r = e.Do("POST", path, dev.Token, body, "Idempotency-Key", "k-"+path)
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the retry while allowed: %d %v %s", r.Status, r.Header, r.Body)
	}
	if n := e.callCount(); n != 1 {
		t.Errorf("%d calls, want the one the crashed request made", n)
	}
}

// A bare claim (a backfill's: its answer is not kept with the claim) of an agent the
// member no longer sees is 404, as its first request would be now, rather than the 409
// that tells the request was carried out; a member still allowed gets that 409.
func TestBareClaimRechecksTheAgent(t *testing.T) {
	e := newStartEnv(t)
	r := e.Do("POST", "/api/v1/agents", e.Owner.Token, map[string]any{"name": "Bookings", "analysis_config": analysisGroup()})
	testkit.Expect(t, r, 201)
	agent := r.Data()["id"].(string)
	dev := e.Member("dev@example.com", e.ws, data.RoleDeveloper, nil, []string{agent})
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	path, body := "/api/v1/agents/"+agent+"/analysis/backfill", `{"from":"2026-01-01T00:00:00Z","to":"2026-01-02T00:00:00Z"}`
	crashedRequestAnswering(t, e.Server, 202, dev.Token, "POST", path, body, func(ctx context.Context) error {
		_, err := e.Svc.Analysis.BackfillAnalysis(ctx, agent, data.AnalysisBackfill{From: data.NewTime(from), To: data.NewTime(to)})
		return err
	})
	retry := func() *testkit.Response { return e.Do("POST", path, dev.Token, body, "Idempotency-Key", "k-"+path) }
	if r := retry(); r.Status != 409 || !strings.Contains(r.JSON()["message"].(string), "carried out") {
		t.Fatalf("the retry while allowed: %d %s", r.Status, r.Body)
	}
	narrowTo(t, e.Server, e.ws, dev, e.agent)
	testkit.Expect(t, retry(), 404)
}

// A response kept by the release before agents were kept with responses carries none:
// on a route that re-checked its record then, the replay still re-checks it (the
// route's legacyRecheck), so a member narrowed since gets 404.
func TestLegacyReplayStillRechecks(t *testing.T) {
	e := newStartEnv(t)
	other := e.publishedAgent("Sales")
	dev := e.Member("dev@example.com", e.ws, data.RoleDeveloper, nil, []string{e.agent})
	path, body := "/api/v1/agents/"+e.agent+"/conversations", `{"version":"draft"}`
	sum := sha256.Sum256([]byte("POST " + path + "\n" + body))
	tokenID := tokenIDOf(t, dev.Token)
	kept := &data.IdempotentResponse{RequestHash: hex.EncodeToString(sum[:]), Status: 201,
		Header: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"data":{"id":"conv_kept"}}` + "\n")}
	if err := e.Svc.Idempotency.SaveIdempotentResponse(context.Background(), tokenID, "old", kept); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("POST", path, dev.Token, body, "Idempotency-Key", "old"); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the legacy replay while allowed: %d %v %s", r.Status, r.Header, r.Body)
	}
	narrowTo(t, e.Server, e.ws, dev, other)
	r := e.Do("POST", path, dev.Token, body, "Idempotency-Key", "old")
	testkit.Expect(t, r, 404)
	if strings.Contains(string(r.Body), "conv_kept") {
		t.Errorf("a member no longer allowed the agent got the legacy answer: %s", r.Body)
	}
}

// A call start's answer kept by the previous release carries no agent, and the start
// may not name one (the number's routing chose it): the replay re-checks the agent the
// kept answer shows (the configuration's, or the call's in a claim kept after a crash),
// so a member narrowed since gets 404 rather than what was kept.
func TestLegacyCallStartReplayRechecksTheAgent(t *testing.T) {
	e := newStartEnv(t)
	other := e.publishedAgent("Sales")
	dev := e.Member("dev@example.com", e.ws, data.RoleDeveloper, nil, []string{e.agent})
	path := "/api/v1/calls/start"
	to, caller := startNumber, "+15551230000"
	body := `{"direction":"inbound","to_number":"` + to + `","from_number":"` + caller + `"}`
	ctx := context.Background()
	tokenID := tokenIDOf(t, dev.Token)
	for _, c := range []struct {
		name, key string
		start     func()
	}{
		{"the answer", "k-answer", func() { answer(t, e.Do("POST", path, dev.Token, body, "Idempotency-Key", "k-answer")) }},
		{"a claim kept with the call", "k-" + path, func() {
			crashedRequest(t, e.Server, dev.Token, "POST", path, body, func(ctx context.Context) error {
				_, err := e.Svc.CallStart.StartCall(ctx, data.CallStart{Direction: data.DirectionInbound, ToNumber: &to, FromNumber: &caller})
				return err
			})
		}},
	} {
		c.start()
		// As the previous release kept it: the same answer, without the agent.
		kept, err := e.Svc.Idempotency.IdempotentResponse(ctx, tokenID, c.key)
		if err != nil || kept == nil || kept.AgentID != e.agent {
			t.Fatalf("%s: kept %+v, %v", c.name, kept, err)
		}
		kept.AgentID = ""
		if err := e.Svc.Idempotency.SaveIdempotentResponse(ctx, tokenID, c.key, kept); err != nil {
			t.Fatal(err)
		}
		post := func() *testkit.Response { return e.Do("POST", path, dev.Token, body, "Idempotency-Key", c.key) }
		if r := post(); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: the legacy replay while allowed: %d %v", c.name, r.Status, r.Header)
		}
		narrowTo(t, e.Server, e.ws, dev, other)
		r := post()
		testkit.Expect(t, r, 404)
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: a member no longer allowed the agent got the legacy answer: %s", c.name, r.Body)
		}
		narrowTo(t, e.Server, e.ws, dev, e.agent)
	}
}
