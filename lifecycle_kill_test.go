package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/voiceapi/voiceapi/data"
	"github.com/voiceapi/voiceapi/internal/llmtest"
)

// TestLifecycleSurvivesKill builds the real binary and makes one acknowledged write of each
// life-cycle feature no other kill test covers: a rollout agent published, republished,
// rolled back, given a rollout and its weights changed; a call started on it through a
// number with variables, then ended (the rollout's figures); an agent given an analysis
// schema (auto) and a test, published, talked to and the conversation ended into its call
// and that call's analysis job; a
// knowledge base given a text source; a webhook; a member's role lowered, another member
// removed; an API key revoked. The server is SIGKILLed right after the last answer and
// started again on the same data (bbolt, or PostgreSQL with VOICEAPI_TEST_BACKEND=postgres):
// every effect is there exactly, the events it told are in the audit log and reach the
// webhook's outbox, and the revoked key, the lowered member and the removed one are still
// refused. docs/reliability.md says how each check was seen to fail without its write.
func TestLifecycleSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it")
	}
	tmp := t.TempDir()
	bin := voiceapiBinary(t)
	model := llmtest.New(t, data.LLMInternal)
	model.Respond(func(r llmtest.Request) llmtest.Reply {
		if r.ResponseSchema != nil { // the call's analysis
			return llmtest.JSON(`{"outcome":"booked"}`)
		}
		return llmtest.Text("Noted: " + r.LastUserText())
	})

	dataDir := filepath.Join(tmp, "data")
	flags := []string{"--allow-private-urls", "--rate-limit", "0"}
	srv, stdout := startServer(t, bin, dataDir, flags...)
	api := killAPI{hc: &http.Client{Timeout: 20 * time.Second}, token: bootstrapToken(t, stdout)}
	start := time.Now()
	acked := lifecycleWrites(t, api, srv.url, model.LLMConfig())
	// No graceful anything: SIGKILL right after the last acknowledgement.
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.cmd.Wait()
	t.Logf("acknowledged writes made in %v", time.Since(start).Round(time.Millisecond))

	srv, _ = startServer(t, bin, dataDir, flags...)
	acked.check(t, api, srv.url)
	srv.cmd.Process.Signal(syscall.SIGTERM)
	srv.cmd.Wait()
}

// lifeAcked is what the writes were answered, to be found again after the kill.
type lifeAcked struct {
	workspace, rolloutAgent, talkAgent string
	callID, caller                     string
	callVersion                        float64
	testID, conversationID, convCallID string
	convItems                          int
	kbID, sourceID, webhookID          string
	devID, devToken, goneID, goneToken string
	revokedKey                         string
}

// lifecycleWrites makes the acknowledged writes (each must answer 2xx) and returns what
// they answered. The revocation of an API key comes last: the kill follows its answer.
func lifecycleWrites(t *testing.T, api killAPI, url string, lc data.LLMConfig) *lifeAcked {
	t.Helper()
	a := &lifeAcked{caller: "+15551230000"}
	a.workspace = api.data(t, url, "GET", "/api/v1/user", nil)["current_workspace_id"].(string)
	// The webhook first: every later event must reach its outbox.
	a.webhookID = api.data(t, url, "POST", "/api/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"*"}})["id"].(string)

	// Publish, republish, roll back to version 1, then a rollout whose weights change.
	a.rolloutAgent = api.data(t, url, "POST", "/api/v1/agents", map[string]any{"name": "Front desk"})["id"].(string)
	agentPath := "/api/v1/agents/" + a.rolloutAgent
	api.data(t, url, "POST", agentPath+"/publish", map[string]any{})
	api.data(t, url, "PUT", agentPath, map[string]any{"name": "Front desk 2"})
	api.data(t, url, "POST", agentPath+"/publish", map[string]any{})
	api.data(t, url, "POST", agentPath+"/versions/1/restore", nil)
	api.data(t, url, "PUT", agentPath+"/rollout", map[string]any{"variants": []any{
		map[string]any{"version": 1, "weight": 70}, map[string]any{"version": 2, "weight": 30}}})
	api.data(t, url, "PUT", agentPath+"/rollout", map[string]any{"variants": []any{
		map[string]any{"version": 1, "weight": 20}, map[string]any{"version": 2, "weight": 80}}})

	// A call started through a number with variables, then ended: the rollout counts it.
	api.data(t, url, "POST", "/api/v1/numbers", map[string]any{"phone_number": "+14155550123", "provider": "twilio",
		"inbound_agent_id": a.rolloutAgent, "variables": map[string]any{"region": "north"}})
	started := lifeStart(t, api, url, a.caller)
	a.callID = started["call"].(map[string]any)["id"].(string)
	a.callVersion = started["call"].(map[string]any)["agent_version"].(float64)
	api.data(t, url, "PUT", "/api/v1/calls/"+a.callID, map[string]any{"status": "ended", "disconnection_reason": "user_hangup"})

	// An agent of the model stand-in: analysis schema, a test, published, talked to.
	llm, _ := json.Marshal(lc)
	var llmConfig map[string]any
	json.Unmarshal(llm, &llmConfig)
	a.talkAgent = api.data(t, url, "POST", "/api/v1/agents", map[string]any{"name": "Kitchen", "llm_config": llmConfig,
		"prompt_config": map[string]any{"first_speaker": "user"}})["id"].(string)
	talkPath := "/api/v1/agents/" + a.talkAgent
	api.data(t, url, "PUT", talkPath, map[string]any{"analysis_config": map[string]any{"fields": []any{map[string]any{
		"name": "outcome", "type": "enum", "description": "What the caller got.", "choices": []string{"booked", "declined"}}}, "auto": true}})
	a.testID = api.data(t, url, "POST", talkPath+"/tests", map[string]any{"name": "greets", "user": map[string]any{"script": []string{"hello"}},
		"criteria": []any{map[string]any{"type": "says", "pattern": "Noted"}}})["id"].(string)
	api.data(t, url, "POST", talkPath+"/publish", map[string]any{})
	a.conversationID = api.data(t, url, "POST", talkPath+"/conversations", map[string]any{})["id"].(string)
	for _, text := range []string{"a table for two", "at eight"} {
		turn := api.data(t, url, "POST", "/api/v1/conversations/"+a.conversationID+"/messages", map[string]any{"content": text})
		a.convItems += len(turn["items"].([]any))
	}
	a.convCallID = api.data(t, url, "POST", "/api/v1/conversations/"+a.conversationID+"/end", nil)["id"].(string)

	// A knowledge base and a text source, its chunks indexed in the answer's write.
	a.kbID = api.data(t, url, "POST", "/api/v1/knowledge-bases", map[string]any{"name": "Hours"})["id"].(string)
	kb := api.data(t, url, "POST", "/api/v1/knowledge-bases/"+a.kbID+"/sources/add", map[string]any{
		"texts": []any{map[string]any{"title": "Opening", "content": "The kitchen opens at nine and closes at midnight."}}})
	a.sourceID = kb["texts"].([]any)[0].(map[string]any)["id"].(string)

	// Two members: one lowered from developer to member, one removed.
	a.devID, a.devToken = lifeMember(t, api, url, a.workspace, "dev")
	a.goneID, a.goneToken = lifeMember(t, api, url, a.workspace, "gone")
	members := "/api/v1/workspaces/" + a.workspace + "/users/"
	api.data(t, url, "PUT", members+a.devID, map[string]any{"role": "member"})
	lifeNoContent(t, api, url, members+a.goneID)

	// Last: an API key made and revoked; the kill follows this answer.
	status, body := killTestDo(t, api.hc, "POST", url+"/api/v1/api-keys", api.token, map[string]any{"name": "ci"})
	var key struct {
		Data  struct{ ID int64 }
		Token string
	}
	if json.Unmarshal(body, &key); status != 201 || key.Token == "" {
		t.Fatalf("api key: %d %s", status, body)
	}
	a.revokedKey = key.Token
	lifeNoContent(t, api, url, fmt.Sprintf("/api/v1/api-keys/%d", key.Data.ID))
	return a
}

// lifeStart starts an inbound call to the rollout's number from caller.
func lifeStart(t *testing.T, api killAPI, url, caller string) map[string]any {
	t.Helper()
	return api.data(t, url, "POST", "/api/v1/calls/start", map[string]any{"direction": "inbound", "to_number": "+14155550123",
		"from_number": caller, "variables": map[string]any{"customer_name": "Ada"}})
}

// lifeMember makes a user, adds them to workspace as a developer and logs them in there;
// it returns the user's id and token.
func lifeMember(t *testing.T, api killAPI, url, workspace, name string) (string, string) {
	t.Helper()
	email, password := name+"@example.com", "password-"+name+"-long"
	id := api.data(t, url, "POST", "/api/v1/users", map[string]any{"name": name, "email": email, "password": password})["id"].(string)
	api.data(t, url, "POST", "/api/v1/workspaces/"+workspace+"/users", map[string]any{"id": id, "role": "developer"})
	status, body := killTestDo(t, api.hc, "POST", url+"/api/v1/auth/login", "", map[string]any{"email": email, "password": password, "workspace_id": workspace})
	var login struct{ Token string }
	if json.Unmarshal(body, &login); status != 200 || login.Token == "" {
		t.Fatalf("login of %s: %d %s", name, status, body)
	}
	return id, login.Token
}

// lifeNoContent sends a DELETE that must answer 204.
func lifeNoContent(t *testing.T, api killAPI, url, path string) {
	t.Helper()
	if status, body := killTestDo(t, api.hc, "DELETE", url+path, api.token, nil); status != 204 {
		t.Fatalf("DELETE %s: %d %s", path, status, body)
	}
}

// check finds every acknowledged effect on the restarted server at url.
func (a *lifeAcked) check(t *testing.T, api killAPI, url string) {
	t.Helper()
	get := func(path string) map[string]any { return lifeGet(t, api, url, path) }
	if ag := get("/api/v1/agents/" + a.rolloutAgent); ag["name"] != "Front desk" || ag["status"] != "published" || ag["published_version"] != 1.0 {
		t.Errorf("rollout agent after the kill: name %v, %v, published_version %v; want version 1 restored (its name too)", ag["name"], ag["status"], ag["published_version"])
	}
	r := get("/api/v1/agents/" + a.rolloutAgent + "/rollout")
	var weights []float64
	var counted float64
	variants, _ := r["variants"].([]any)
	for _, v := range variants {
		v := v.(map[string]any)
		weights = append(weights, v["weight"].(float64))
		if v["version"] == a.callVersion {
			counted = v["calls"].(float64)
		}
	}
	if !slices.Equal(weights, []float64{20, 80}) || counted != 1 {
		t.Errorf("rollout after the kill: weights %v, ended calls of version %v counted %v; want [20 80] and 1", weights, a.callVersion, counted)
	}
	c := get("/api/v1/calls/" + a.callID)
	if vars, _ := c["variables"].(map[string]any); c["status"] != "ended" || c["agent_version"] != a.callVersion || vars["customer_name"] != "Ada" {
		t.Errorf("started call after the kill: %v, version %v, variables %v", c["status"], c["agent_version"], c["variables"])
	}
	// Sticky: the same caller gets the same version from the rollout as it stands.
	if again, _ := lifeStart(t, api, url, a.caller)["call"].(map[string]any); again["agent_version"] != a.callVersion {
		t.Errorf("the caller moved from version %v to %v across the kill", a.callVersion, again["agent_version"])
	}

	ag := get("/api/v1/agents/" + a.talkAgent)
	analysis, _ := ag["analysis_config"].(map[string]any)
	fields, _ := analysis["fields"].([]any)
	if ag["published_version"] != 1.0 || len(fields) != 1 || fields[0].(map[string]any)["name"] != "outcome" || analysis["auto"] != true {
		t.Errorf("talking agent after the kill: published_version %v, analysis fields %v", ag["published_version"], fields)
	}
	if test := get("/api/v1/agents/" + a.talkAgent + "/tests/" + a.testID); test["name"] != "greets" {
		t.Errorf("agent test after the kill: %v", test)
	}
	conv := get("/api/v1/conversations/" + a.conversationID)
	if msgs, _ := conv["messages"].([]any); conv["status"] != "ended" || len(msgs) != a.convItems || a.convItems != 4 {
		t.Errorf("conversation after the kill: %v with %d messages; %d items were answered (want 4)", conv["status"], len(msgs), a.convItems)
	}
	vc := get("/api/v1/calls/" + a.convCallID)
	if tr, _ := vc["transcript"].([]any); vc["direction"] != "web" || vc["status"] != "ended" || len(tr) != 4 || vc["disconnection_reason"] != "user_ended" {
		t.Errorf("the conversation's call after the kill: %v %v, %v, transcript %v", vc["direction"], vc["status"], vc["disconnection_reason"], tr)
	}
	// The end queued the call's analysis (auto) in its own write.
	status, body := killTestDo(t, api.hc, "GET", url+"/api/v1/jobs?kind=analysis.call&agent_id="+a.talkAgent, api.token, nil)
	var jobs struct{ Data []any }
	if json.Unmarshal(body, &jobs); status != 200 || len(jobs.Data) != 1 {
		t.Errorf("analysis jobs of the conversation's call after the kill: %d %.300s; want one", status, body)
	}

	if texts, _ := get("/api/v1/knowledge-bases/" + a.kbID)["texts"].([]any); len(texts) != 1 || texts[0].(map[string]any)["id"] != a.sourceID {
		t.Errorf("knowledge base sources after the kill: %v", texts)
	}
	status, body = killTestDo(t, api.hc, "POST", url+"/api/v1/knowledge-bases/"+a.kbID+"/query", api.token, map[string]any{"query": "when does the kitchen open"})
	var found struct {
		Data []struct {
			SourceID string `json:"source_id"`
		}
	}
	if json.Unmarshal(body, &found); status != 200 || len(found.Data) != 1 || found.Data[0].SourceID != a.sourceID {
		t.Errorf("knowledge query after the kill: %d %s", status, body)
	}

	members := "/api/v1/workspaces/" + a.workspace + "/users/"
	if m := get(members + a.devID); m["role"] != "member" {
		t.Errorf("lowered member after the kill: role %v", m["role"])
	}
	if status, body := killTestDo(t, api.hc, "GET", url+members+a.goneID, api.token, nil); status != 404 {
		t.Errorf("removed member after the kill: %d %s", status, body)
	}
	lifeRefused(t, api, url, "lowered member's write", a.devToken, "POST", "/api/v1/agents", map[string]any{"name": "x"}, 403)
	lifeRefused(t, api, url, "removed member's token (revoked with the removal)", a.goneToken, "GET", "/api/v1/agents", nil, 401)
	lifeRefused(t, api, url, "revoked key", a.revokedKey, "GET", "/api/v1/agents", nil, 401)

	a.checkEvents(t, api, url)
}

// lifeGet reads path, which must answer 200, and returns its data object (empty when
// not: the checks after it then report what is missing).
func lifeGet(t *testing.T, api killAPI, url, path string) map[string]any {
	t.Helper()
	status, body := killTestDo(t, api.hc, "GET", url+path, api.token, nil)
	var env struct{ Data map[string]any }
	if json.Unmarshal(body, &env); status != 200 || env.Data == nil {
		t.Errorf("GET %s after the kill: %d %s", path, status, body)
		return map[string]any{}
	}
	return env.Data
}

// lifeRefused checks that token's request is refused with one of want.
func lifeRefused(t *testing.T, api killAPI, url, who, token, method, path string, body any, want ...int) {
	t.Helper()
	if status, out := killTestDo(t, api.hc, method, url+path, token, body); !slices.Contains(want, status) {
		t.Errorf("%s after the kill: %s %s answered %d %.200s; want one of %v", who, method, path, status, out, want)
	}
}

// lifeEvents are the events of the acknowledged writes, each expected once in the audit
// log, and in the webhook's deliveries (the outbox kept across the kill).
var lifeEvents = []string{"webhook.created", "agent.published", "agent.restored", "number.created", "call.registered",
	"call.ended", "knowledge_base.created", "member.added", "member.updated", "member.removed",
	"api_key.created", "api_key.revoked"}

// checkEvents finds each write's event in the audit log and, within 15 s, a delivery of
// it to the webhook (the outbox's fan-out runs after the restart).
func (a *lifeAcked) checkEvents(t *testing.T, api killAPI, url string) {
	t.Helper()
	types := func(path, field string) map[string]bool {
		status, body := killTestDo(t, api.hc, "GET", url+path, api.token, nil)
		if status != 200 {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		var list struct{ Data []map[string]any }
		json.Unmarshal(body, &list)
		seen := map[string]bool{}
		for _, e := range list.Data {
			seen[e[field].(string)] = true
		}
		return seen
	}
	audit := types("/api/v1/audit-log?per_page=100", "type")
	for _, e := range lifeEvents {
		if !audit[e] {
			t.Errorf("event %s not in the audit log after the kill", e)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		delivered := types("/api/v1/webhooks/"+a.webhookID+"/deliveries?per_page=100", "event_type")
		var missing []string
		for _, e := range lifeEvents[1:] { // not its own creation
			if !delivered[e] {
				missing = append(missing, e)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("events with no delivery to the webhook 15 s after the restart: %v", missing)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
